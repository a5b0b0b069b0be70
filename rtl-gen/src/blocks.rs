//! Reusable datapath blocks, written as generator functions that add logic to a
//! [`ModuleBuilder`]: mode decoding ([`Modes`]), unpack ([`unpack`]), leading-zero count +
//! normalize ([`lzc_normalize`]), and THE ONE rounder ([`round`]: RoundToPrecision →
//! Saturate → Encode with exception flags, bit-exact to `golden::project`).
//!
//! Every unit is built by chaining these blocks. The
//! rounder's interface ([`RoundIn`] → [`RoundOut`]) is the hardware twin of
//! `golden::Exact` → `golden::project`: a class, a sign, the exponent of the most significant
//! bit, a normalized significand and a sticky bit.

use crate::ast::{all, any, concat, mask, sbits, ubits, Expr, ModuleBuilder};
use crate::{RoundingSel, SaturationSel};
use golden::{Format, Rounding, Saturation, Specials, Tininess};
use iface::{
    index_bits, width_mask, DETERMINISTIC_ROUNDINGS, ROUNDING_ENCODING, SATURATION_ENCODING,
};

/// Index of a rounding mode in [`crate::manifest::ROUNDING_ENCODING`] (looked up by the
/// mode's name, so the list in `iface` is the only statement of the order).
pub fn rounding_index(r: Rounding) -> usize {
    ROUNDING_ENCODING
        .iter()
        .position(|n| *n == r.name())
        .unwrap_or(0)
}

/// Index of a saturation mode in [`crate::manifest::SATURATION_ENCODING`].
pub fn saturation_index(s: Saturation) -> usize {
    SATURATION_ENCODING
        .iter()
        .position(|n| *n == s.name())
        .unwrap_or(0)
}

/// The rounding mode selected by the value `v` of an `rm_i` port of a core generated with
/// `sr_bits` random bits: the index into [`crate::manifest::ROUNDING_ENCODING`]; encodings
/// that the core does not support (9…15, and 6…8 when `sr_bits == 0`) select `rne`.
pub fn rounding_from_port(v: u64, sr_bits: u32) -> Rounding {
    let n = u8::try_from(sr_bits).unwrap_or(0);
    usize::try_from(v)
        .ok()
        .and_then(|i| ROUNDING_ENCODING.get(i))
        .and_then(|name| Rounding::parse(name, n).ok())
        .unwrap_or(Rounding::Rne)
}

/// The saturation mode selected by the value of a `sat_i` port (index into
/// [`crate::manifest::SATURATION_ENCODING`]; the port is
/// `index_bits(SATURATION_ENCODING.len())` = 2 bits wide, every value is valid).
pub fn saturation_from_port(v: u64) -> Saturation {
    let i = (v & width_mask(index_bits(SATURATION_ENCODING.len()))) as usize;
    SATURATION_ENCODING
        .get(i)
        .and_then(|name| Saturation::parse(name).ok())
        .unwrap_or(Saturation::SatFinite)
}

/// Width of the `rm_i` port: 3 bits without stochastic modes, 4 with.
pub fn rm_port_width(sr_bits: u32) -> u32 {
    if sr_bits > 0 {
        index_bits(ROUNDING_ENCODING.len())
    } else {
        index_bits(DETERMINISTIC_ROUNDINGS)
    }
}

/// One-hot mode predicates: constants when the mode is fixed at generation (so the logic
/// folds away), decoded from `rm_i` / `sat_i` when it is chosen at run time.
#[derive(Clone, Debug)]
pub struct Modes {
    /// `rm[i]` = "rounding mode is `ROUNDING_ENCODING[i]`".
    pub rm: Vec<Expr>,
    /// `sat[i]` = "saturation mode is `SATURATION_ENCODING[i]`".
    pub sat: Vec<Expr>,
    /// Random bits (`rnd_i`), present when a stochastic mode is possible.
    pub rnd: Option<Expr>,
    /// Number of random bits (0 when no stochastic mode is possible).
    pub sr_bits: u32,
    /// Tininess detection for the underflow flag.
    pub tininess: Tininess,
    /// Code written for NaN into NaN-less formats.
    pub nonan_code: u32,
    /// Round-to-odd on overflow under satnone: ±∞ (P3109 §4.7.5) or the largest finite value.
    pub rto_overflow: golden::RtoOverflow,
}

impl Modes {
    #[allow(clippy::too_many_arguments)]
    /// Builds the predicates. `rm_port`/`sat_port` must be given exactly when the mode is
    /// dynamic; `rnd` when `sr_bits > 0`.
    pub fn new(
        b: &mut ModuleBuilder,
        rounding: RoundingSel,
        saturation: SaturationSel,
        sr_bits: u32,
        rm_port: Option<Expr>,
        sat_port: Option<Expr>,
        rnd: Option<Expr>,
        tininess: Tininess,
        nonan_code: u32,
    ) -> Modes {
        let rm: Vec<Expr> = match (rounding, rm_port) {
            (RoundingSel::Fixed(r), _) => (0..ROUNDING_ENCODING.len())
                .map(|i| Expr::bit_c(i == rounding_index(r)))
                .collect(),
            (RoundingSel::Dynamic, Some(p)) => {
                let mut v: Vec<Expr> = vec![Expr::bit_c(false); ROUNDING_ENCODING.len()];
                let last = if sr_bits > 0 {
                    ROUNDING_ENCODING.len() - 1
                } else {
                    DETERMINISTIC_ROUNDINGS - 1
                };
                for (i, slot) in v.iter_mut().enumerate().take(last + 1).skip(1) {
                    let nm = format!("rm_is_{}", ROUNDING_ENCODING[i]);
                    *slot = b.wire(&nm, p.eq_c(i as u128));
                }
                let others = any(&v[1..]);
                v[0] = b.wire(&format!("rm_is_{}", ROUNDING_ENCODING[0]), others.not());
                v
            }
            (RoundingSel::Dynamic, None) => vec![Expr::bit_c(false); ROUNDING_ENCODING.len()],
        };
        let sat: Vec<Expr> = match (saturation, sat_port) {
            (SaturationSel::Fixed(s), _) => (0..SATURATION_ENCODING.len())
                .map(|i| Expr::bit_c(i == saturation_index(s)))
                .collect(),
            (SaturationSel::Dynamic, Some(p)) => (0..SATURATION_ENCODING.len())
                .map(|i| {
                    let nm = format!("sat_is_{}", SATURATION_ENCODING[i].replace('-', "_"));
                    b.wire(&nm, p.eq_c(i as u128))
                })
                .collect(),
            (SaturationSel::Dynamic, None) => vec![Expr::bit_c(false); SATURATION_ENCODING.len()],
        };
        Modes {
            rm,
            sat,
            rnd,
            sr_bits,
            tininess,
            nonan_code,
            rto_overflow: golden::RtoOverflow::P3109,
        }
    }

    fn r(&self, m: Rounding) -> Expr {
        self.rm[rounding_index(m)].clone()
    }
    fn s(&self, m: Saturation) -> Expr {
        self.sat[saturation_index(m)].clone()
    }
    fn stochastic(&self) -> Expr {
        any(&self.rm[DETERMINISTIC_ROUNDINGS..])
    }
}

/// A code split into class, sign, exponent and normalized significand.
#[derive(Clone, Debug)]
pub struct Unpacked {
    /// NaN.
    pub nan: Expr,
    /// ±∞.
    pub inf: Expr,
    /// ±0.
    pub zero: Expr,
    /// Nonzero with biased exponent 0.
    pub sub: Expr,
    /// Sign bit (0 for unsigned formats; as in the code for NaN).
    pub sign: Expr,
    /// Two's complement exponent of the most significant significand bit (finite nonzero).
    pub exp: Expr,
    /// Range of `exp` over all codes.
    pub exp_range: (i64, i64),
    /// `P`-bit significand, MSB = 1 for finite nonzero values (when normalized).
    pub sig: Expr,
    /// Signaling NaN of an external IEEE format (binary32/16, bfloat16).
    pub snan: Expr,
}

/// Leading-zero count and normalize of `x` (logarithmic shifter): returns `(count, x << count)`;
/// for `x ≠ 0` the MSB of the result is 1.
pub fn lzc_normalize(b: &mut ModuleBuilder, x: &Expr, name: &str) -> (Expr, Expr) {
    let w = x.width;
    if w <= 1 {
        return (Expr::c(0, 1), x.clone());
    }
    let steps = ubits((w - 1) as u128); // shifts 2^(steps-1) … 1
    let mut cur = x.clone();
    let mut bits = Vec::new();
    for j in (0..steps).rev() {
        let sh = 1u32 << j;
        if sh >= w {
            bits.push(Expr::bit_c(false));
            continue;
        }
        let z = b.wire(&format!("{name}_z{sh}"), cur.slice(w - 1, w - sh).eq_c(0));
        let shifted = concat(&[cur.slice(w - 1 - sh, 0), Expr::c(0, sh)]);
        cur = b.wire(&format!("{name}_n{sh}"), Expr::mux(&z, &shifted, &cur));
        bits.push(z);
    }
    (concat(&bits), cur)
}

/// Leading-zero count and normalize of `x` with the count formed by a tree beside the data
/// (not from the partly shifted value, as in [`lzc_normalize`]): returns `(count, x << count)`,
/// the same values as [`lzc_normalize`] for every `x` (for `x = 0` the count is all ones).
///
/// `x`, padded with zeros below to 2^S bits, is split in pairs, then quadruples, …: a chunk
/// of 2^(j+1) bits is all-zero when both halves are, and its count is
/// `hi zero ? {1, count(lo)} : {0, count(hi)}` (one 2:1 mux level per tree level, the zero
/// flags in parallel), so the count bits arrive after about S + 2 levels and the shift
/// `x << count` follows; the serial form needs a zero detect after each shift step.
pub fn lzc_normalize_tree(b: &mut ModuleBuilder, x: &Expr, name: &str) -> (Expr, Expr) {
    let w = x.width;
    if w <= 2 {
        return lzc_normalize(b, x, name);
    }
    let steps = ubits((w - 1) as u128);
    let pw = 1u32 << steps;
    let xp = if pw > w {
        concat(&[x.clone(), Expr::c(0, pw - w)])
    } else {
        x.clone()
    };
    // Level 1: pairs (MSB first in the wire: chunk n-1 … chunk 0 from the top of x).
    let n1 = pw / 2;
    let mut zero: Vec<Expr> = (0..n1)
        .map(|i| xp.slice(2 * i + 1, 2 * i).eq_c(0))
        .collect();
    let mut count: Vec<Expr> = (0..n1).map(|i| xp.bit(2 * i + 1).not()).collect();
    let mut zw = b.wire(&format!("{name}_t1_z"), concat_rev(&zero));
    let mut cw = b.wire_note(
        &format!("{name}_t1_c"),
        concat_rev(&count),
        "leading zeros of each pair",
    );
    zero = (0..n1).map(|i| zw.bit(i)).collect();
    count = (0..n1).map(|i| cw.bit(i)).collect();
    for j in 2..=steps {
        let n = pw >> j;
        let cwid = j - 1;
        let zs: Vec<Expr> = (0..n)
            .map(|i| zero[2 * i as usize + 1].and(&zero[2 * i as usize]))
            .collect();
        let cs: Vec<Expr> = (0..n)
            .map(|i| {
                let k = 2 * i as usize;
                let (hz, hc, lc) = (&zero[k + 1], &count[k + 1], &count[k]);
                Expr::mux(
                    hz,
                    &concat(&[Expr::c(1, 1), lc.clone()]),
                    &concat(&[Expr::c(0, 1), hc.clone()]),
                )
            })
            .collect();
        zw = b.wire(&format!("{name}_t{j}_z"), concat_rev(&zs));
        cw = b.wire_note(
            &format!("{name}_t{j}_c"),
            concat_rev(&cs),
            &format!("leading zeros of each {}-bit chunk", 1u32 << j),
        );
        zero = (0..n).map(|i| zw.bit(i)).collect();
        count = (0..n)
            .map(|i| cw.slice((i + 1) * (cwid + 1) - 1, i * (cwid + 1)))
            .collect();
    }
    let lz = count[0].clone();
    let norm = x.shl(&lz);
    (lz, norm)
}

/// Concatenation of `v` with `v[0]` as the least significant part.
fn concat_rev(v: &[Expr]) -> Expr {
    let r: Vec<Expr> = v.iter().rev().cloned().collect();
    concat(&r)
}

/// Leading-zero count of `x` (width ≥ 3) as a tree: zero flags and counts of 2-, 4-, 8-…
/// bit blocks, one wire per level (`<name>_z<size>`, `<name>_c<size>`); a block's count is
/// `{1, low half's}` when its high half is zero, else `{0, high half's}`. `⌈log2 width⌉`
/// bits; `x = 0` counts `width`.
pub fn lzc_tree(b: &mut ModuleBuilder, x: &Expr, name: &str) -> Expr {
    let w = x.width;
    let steps = ubits((w - 1) as u128);
    let p = 1u32 << steps;
    // Below the LSB: a one (the count of x = 0 is w), then zeros; constant blocks fold.
    let padded = if p > w {
        let mut parts = vec![x.clone(), Expr::c(1, 1)];
        if p > w + 1 {
            parts.push(Expr::c(0, p - w - 1));
        }
        concat(&parts)
    } else {
        x.clone()
    };
    // Level 1: blocks of 2 bits {hi, lo}: zero = ~(hi | lo), count = ~hi.
    let n2 = p / 2;
    let zs: Vec<Expr> = (0..n2)
        .rev()
        .map(|j| padded.slice(2 * j + 1, 2 * j).eq_c(0))
        .collect();
    let cs: Vec<Expr> = (0..n2).rev().map(|j| padded.bit(2 * j + 1).not()).collect();
    let mut z = b.wire(&format!("{name}_z2"), concat(&zs));
    let mut c = b.wire(&format!("{name}_c2"), concat(&cs));
    let mut cw = 1u32; // count bits per block
    let mut blocks = n2;
    while blocks > 1 {
        let nb = blocks / 2;
        let size = p / nb;
        let (mut nz, mut nc) = (Vec::new(), Vec::new());
        for j in (0..nb).rev() {
            let (zh, zl) = (z.bit(2 * j + 1), z.bit(2 * j));
            let ch = c.slice((2 * j + 2) * cw - 1, (2 * j + 1) * cw);
            let cl = c.slice((2 * j + 1) * cw - 1, 2 * j * cw);
            nz.push(zh.and(&zl));
            nc.push(concat(&[zh.clone(), Expr::mux(&zh, &cl, &ch)]));
        }
        z = b.wire(&format!("{name}_z{size}"), concat(&nz));
        c = b.wire(&format!("{name}_c{size}"), concat(&nc));
        cw += 1;
        blocks = nb;
    }
    c
}

/// `x << count`, the largest shift first (wires `<name>_n<shift>`): with [`lzc_tree`] a
/// normalize whose shift by 32 starts after a 32-bit zero test and each later shift waits
/// only for its own count bit (in [`lzc_normalize`] each waits for the previous shift).
pub fn shl_by_count(b: &mut ModuleBuilder, x: &Expr, count: &Expr, name: &str) -> Expr {
    let w = x.width;
    let mut cur = x.clone();
    for k in (0..count.width).rev() {
        let sh = 1u32 << k;
        let shifted = if sh >= w {
            Expr::c(0, w)
        } else {
            concat(&[cur.slice(w - 1 - sh, 0), Expr::c(0, sh)])
        };
        cur = b.wire(
            &format!("{name}_n{sh}"),
            Expr::mux(&count.bit(k), &shifted, &cur),
        );
    }
    cur
}

/// Alignment shifter with sticky: `(x >> amount, OR of the bits shifted out)`, `amount`
/// unsigned and at most `max_amount` (larger shifts are clamped to the width of `x`, which
/// moves every bit into the sticky). Implemented as `{x, 0…0} >> amount` on twice the width
/// of `x`, so the shifted-out bits are the low half.
pub fn shift_right_sticky(
    b: &mut ModuleBuilder,
    x: &Expr,
    amount: &Expr,
    max_amount: u128,
    name: &str,
) -> (Expr, Expr) {
    let w = x.width;
    let amt = if max_amount > w as u128 {
        let sw = ubits(w as u128).max(1);
        let big = amount.gt(&Expr::c(w as u128, amount.width));
        let low = if amount.width > sw {
            amount.slice(sw - 1, 0)
        } else {
            amount.zext(sw)
        };
        b.wire(
            &format!("{name}_amt"),
            Expr::mux(&big, &Expr::c(w as u128, sw), &low),
        )
    } else {
        amount.clone()
    };
    let y = b.wire_note(
        name,
        concat(&[x.clone(), Expr::c(0, w)]).shr(&amt),
        "{shifted | shifted out}",
    );
    (y.slice(2 * w - 1, w), y.slice(w - 1, 0).red_or())
}

/// Name of a special code of `f` as a `localparam`: `E4M3_NAN`, `BINARY32_POS_INF`, … (the
/// value follows from the format alone, so one name has one value in any module).
pub fn const_name(f: &Format, what: &str) -> String {
    format!("{}_{what}", f.ident().to_ascii_uppercase())
}

/// Splits `code` of format `f` into its parts (P3109 §4.7.2 / the families of docs/semantics.md).
/// With `normalize`, subnormals are normalized exactly (leading-zero count); without, they
/// get the exponent `−bias` and the significand `{1, T}` — callers use that only when every
/// subnormal input lies so far below the result format that only "tiny and nonzero" matters.
pub fn unpack(
    b: &mut ModuleBuilder,
    f: &Format,
    code: &Expr,
    normalize: bool,
    prefix: &str,
) -> Unpacked {
    let k = f.k;
    let man = f.man_bits();
    let eb = f.exp_bits();
    let mb = f.mag_bits();
    let subn = f.has_subnormals();
    let sign = if f.signed {
        b.wire(&format!("{prefix}_sign"), code.bit(k - 1))
    } else {
        Expr::bit_c(false)
    };
    let mag = code.slice(mb - 1, 0);
    let ef = b.wire(&format!("{prefix}_exp_field"), code.slice(mb - 1, man));
    let tf = if man > 0 {
        Some(b.wire(&format!("{prefix}_man_field"), code.slice(man - 1, 0)))
    } else {
        None
    };
    let t_zero = tf.as_ref().map(|t| t.eq_c(0)).unwrap_or(Expr::bit_c(true));
    let e_zero = ef.eq_c(0);
    let nan_code = f.nan_code().unwrap_or(0) as u128;
    let nan_c = Expr::named(&const_name(f, "NAN"), nan_code, k);
    let (nan, inf) = match f.specials {
        Specials::Ieee => {
            let ones = b.wire(&format!("{prefix}_exp_ones"), ef.red_and());
            (ones.and(&t_zero.not()), ones.and(&t_zero))
        }
        Specials::Fn => (mag.red_and(), Expr::bit_c(false)),
        Specials::Fnuz | Specials::P3109Finite | Specials::E8m0 => {
            (code.eq(&nan_c), Expr::bit_c(false))
        }
        Specials::P3109Extended => {
            let inf = if f.signed {
                mag.red_and()
            } else {
                code.eq(&Expr::named(&const_name(f, "POS_INF"), mask(k) - 1, k))
            };
            (code.eq(&nan_c), inf)
        }
        Specials::NoNan => (Expr::bit_c(false), Expr::bit_c(false)),
    };
    let nan = b.wire(&format!("{prefix}_is_nan"), nan);
    let inf = b.wire(&format!("{prefix}_is_inf"), inf);
    let (zero, sub) = if subn {
        let ez = b.wire(&format!("{prefix}_exp_zero"), e_zero);
        let zero = ez.and(&t_zero).and(&nan.not());
        let sub = ez.and(&t_zero.not());
        (zero, sub)
    } else {
        (Expr::bit_c(false), Expr::bit_c(false))
    };
    let zero = b.wire(&format!("{prefix}_is_zero"), zero);
    let sub = b.wire(&format!("{prefix}_is_sub"), sub);
    let bias = f.bias as i64;
    let emin = f.emin() as i64;
    let ehi = ((1i64 << eb) - 1) - bias;
    let exact_sub = normalize && subn && man > 0;
    let elo = if exact_sub { emin - man as i64 } else { -bias };
    let ew = sbits(elo.min(-bias), ehi.max(-bias)).max(ubits((1u128 << eb) - 1) + 1);
    let e_norm = ef.zext(ew).sub(&Expr::named_i(
        &const_name(f, "BIAS"),
        bias,
        ew,
        &format!("exponent bias of {}: e = exponent field - bias", f.name()),
    ));
    let snan = if f.specials == Specials::Ieee && k >= 16 {
        match &tf {
            Some(t) => nan.and(&t.bit(man - 1).not()),
            None => Expr::bit_c(false),
        }
    } else {
        Expr::bit_c(false)
    };
    let (exp, sig) = match (&tf, exact_sub) {
        (Some(t), true) => {
            b.comment_owned(vec![format!(
                "{prefix}: subnormals are normalized: leading-zero count of the trailing significand"
            )]);
            let (lz, norm) = lzc_normalize(b, t, &format!("{prefix}_lz"));
            let lz = b.wire(&format!("{prefix}_lzc"), lz);
            let emin_m1 = Expr::named_i(
                &const_name(f, "EMIN_M1"),
                emin - 1,
                ew,
                &format!(
                    "emin - 1 of {}: a subnormal's exponent is this minus its leading zeros",
                    f.name()
                ),
            );
            let e_sub = emin_m1.sub(&lz.zext(ew));
            let exp = Expr::mux(&sub, &e_sub, &e_norm);
            let sig = Expr::mux(
                &sub,
                &concat(&[norm, Expr::c(0, 1)]),
                &concat(&[Expr::c(1, 1), t.clone()]),
            );
            (exp, sig)
        }
        (Some(t), false) => (e_norm, concat(&[Expr::c(1, 1), t.clone()])),
        (None, _) => (e_norm, Expr::c(1, 1)),
    };
    let exp = b.wire_note(
        &format!("{prefix}_exp"),
        exp,
        "exponent of the MSB (two's complement)",
    );
    let sig = b.wire_note(
        &format!("{prefix}_sig"),
        sig,
        "significand, MSB = hidden bit",
    );
    Unpacked {
        nan,
        inf,
        zero,
        sub,
        sign,
        exp,
        exp_range: (elo, ehi),
        sig,
        snan,
    }
}

/// Input of the one rounder: the hardware form of `golden::Exact`.
///
/// For a finite nonzero value (`nan`, `inf`, `zero` all 0) the magnitude is
/// `sig · 2^(exp − (W−1))` (W = width of `sig`, MSB of `sig` = 1) plus, when `sticky` is set,
/// something strictly between 0 and one unit of the last bit of `sig`. `exp` is a two's
/// complement vector whose values lie in `exp_range`; `invalid` is ORed into the invalid flag
/// (signaling-NaN operand, 0·∞ …). A producer that sets `sticky` must supply at least
/// `P + sr_bits + 2` significand bits.
#[derive(Clone, Debug)]
pub struct RoundIn {
    /// NaN.
    pub nan: Expr,
    /// ±∞.
    pub inf: Expr,
    /// ±0.
    pub zero: Expr,
    /// Sign (1 = negative).
    pub sign: Expr,
    /// Exponent of the MSB of `sig` (two's complement; must be a named signal).
    pub exp: Expr,
    /// Inclusive range of `exp` values that can occur.
    pub exp_range: (i64, i64),
    /// Normalized significand (must be a named signal).
    pub sig: Expr,
    /// Nonzero bits below `sig`.
    pub sticky: Expr,
    /// Extra invalid-operation flag.
    pub invalid: Expr,
    /// When `Some(t)`: the exponent is `exp + t` (`t` one bit, e.g. a product's
    /// normalization carry), left to the rounder so that a narrow exponent's decision tables
    /// absorb the increment instead of waiting for an adder.
    pub exp_inc: Option<Expr>,
    /// Flush-to-zero of subnormal results (`golden::flush_result`, `mul --ftz`): a result
    /// that would be a subnormal code becomes ±0 with underflow and inexact. For signed
    /// formats the rounder then has no denormalization shifter at all (see
    /// `Rounder::flush`); unsigned formats flush the encoded result.
    pub ftz: bool,
    /// Added to `exp`: the exponent is `exp + exp_offset (+ exp_inc)`. A biased sum (e.g.
    /// the operands' biased exponent fields, `exp_offset = −(bias_x + bias_y)`) saves the
    /// adders that remove the biases: the decision tables and the exponent field's adders
    /// fold the offset into their constants. `exp_range` is the range of `exp + exp_offset`.
    pub exp_offset: i64,
}

/// Most selector bits (`exp`, plus the increment bit) for which the rounder decides tininess,
/// the denormalization shift and overflow by decision tables over the exponent instead of
/// comparators and a subtraction: up to 2^8 entries map to two or three levels of LUT4s, where the
/// arithmetic form is a carry chain after the exponent's own adder. (Multi-bit results such
/// as the biased exponent field stay adders: as tables they cost more LUTs than they save.)
pub const EXP_TABLE_BITS: u32 = 8;

/// Output of the one rounder.
#[derive(Clone, Debug)]
pub struct RoundOut {
    /// Result code (K bits).
    pub code: Expr,
    /// `{invalid, overflow, underflow, inexact}` (4 bits).
    pub flags: Expr,
}

/// Round-away decision for the discarded fraction `frac` (`g` bits, most significant first)
/// with `st` = anything below it, `odd` = LSB of the truncated code.
#[allow(clippy::too_many_arguments)]
fn decide(
    b: &mut ModuleBuilder,
    m: &Modes,
    sign: &Expr,
    odd: &Expr,
    frac: &Expr,
    st: &Expr,
    name: &str,
    what: &str,
) -> Expr {
    let g = frac.width;
    let r = frac.msb();
    let rest = if g >= 2 {
        frac.slice(g - 2, 0).red_or().or(st)
    } else {
        st.clone()
    };
    let rest = b.wire(&format!("{name}_rest"), rest);
    // Decision table of the modes this core can select.
    let table = [
        ("rne", "round & (rest | odd)"),
        ("rna", "round"),
        ("rtp", "(round | rest) & ~sign"),
        ("rtn", "(round | rest) & sign"),
        ("rtz", "0"),
        ("rto", "(round | rest) & ~odd"),
        ("sra", "carry(frac[N:1] + rnd)"),
        ("srb", "carry(frac[N:1] + rnd + frac[0])"),
        (
            "src",
            "carry(frac[N:1] + rnd + (frac[0] & (rest | frac[1])))",
        ),
    ];
    let mut lines = vec![format!("{name}: round-away decision {what}")];
    lines.push(
        "  (round = fraction MSB, rest = lower fraction bits | sticky, odd = code LSB)".into(),
    );
    for (i, (mode, rule)) in table.iter().enumerate() {
        if !m.rm[i].is_const(0) && (i < 6 || m.sr_bits > 0) {
            lines.push(format!("  {mode:<4} away = {rule}"));
        }
    }
    b.comment_owned(lines);
    let nz = r.or(&rest);
    let mut terms = vec![
        m.r(Rounding::Rne).and(&r).and(&rest.or(odd)),
        m.r(Rounding::Rna).and(&r),
        m.r(Rounding::Rtp).and(&nz).and(&sign.not()),
        m.r(Rounding::Rtn).and(&nz).and(sign),
        m.r(Rounding::Rto).and(&nz).and(&odd.not()),
    ];
    let n = m.sr_bits;
    if n > 0 && !m.stochastic().is_const(0) {
        if let Some(rnd) = &m.rnd {
            // g = n + 1: top n bits of the fraction, then one more bit; st below.
            let top = frac.slice(g - 1, g - n);
            let lo = frac.bit(g - n - 1);
            let cin = any(&[
                m.r(Rounding::Srb(0)).and(&lo),
                m.r(Rounding::Src(0)).and(&lo).and(&st.or(&top.bit(0))),
            ]);
            let cin = b.wire(&format!("{name}_sr_cin"), cin);
            let sum = top.zext(n + 1).add(&rnd.zext(n + 1)).add(&cin.zext(n + 1));
            let sum = b.wire_note(
                &format!("{name}_sr_sum"),
                sum,
                "stochastic: top bits of the fraction + random bits (+ cin); carry = away",
            );
            terms.push(m.stochastic().and(&sum.bit(n)));
        }
    }
    b.wire(&format!("{name}_away"), any(&terms))
}

/// Number of fraction bits (below the P kept bits) the rounder examines explicitly: 1 (the
/// round bit) for deterministic modes, `sr_bits + 1` when a stochastic mode is possible.
pub fn guard_bits(m: &Modes) -> u32 {
    if m.sr_bits > 0 && !m.stochastic().is_const(0) {
        m.sr_bits + 1
    } else {
        1
    }
}

/// The exponent selector of a narrow exponent: `{exp_inc, exp}` (or `exp`), its exponent
/// width, and whether the increment bit is present.
struct ExpSel {
    sel: Expr,
    ew: u32,
    /// The exponent bits are two's complement (else unsigned).
    signed: bool,
    inc: bool,
    /// Added to the selector's exponent ([`RoundIn::exp_offset`]).
    offset: i64,
    range: (i64, i64),
}

impl ExpSel {
    /// The exponent value that selector value `v` stands for.
    fn value(&self, v: u128) -> i64 {
        let raw = (v & mask(self.ew)) as i64;
        let e = if self.signed && raw >> (self.ew - 1) & 1 == 1 {
            raw - (1i64 << self.ew)
        } else {
            raw
        };
        let inc = if self.inc {
            (v >> self.ew) as i64 & 1
        } else {
            0
        };
        e + inc + self.offset
    }

    /// A decision table `name = f(e)` (`width` bits) over the exponent: one arm per selector
    /// value whose result differs from the most common one, which is the default; selector
    /// values outside the exponent's range take the default (they never occur).
    fn table(
        &self,
        b: &mut ModuleBuilder,
        name: &str,
        width: u32,
        note: &str,
        f: impl Fn(i64) -> i64,
    ) -> Expr {
        let n = 1u128 << self.sel.width;
        let vals: Vec<Option<u128>> = (0..n)
            .map(|v| {
                let e = self.value(v);
                (self.range.0..=self.range.1)
                    .contains(&e)
                    .then(|| f(e) as u128 & mask(width))
            })
            .collect();
        let mut counts = std::collections::BTreeMap::new();
        for v in vals.iter().flatten() {
            *counts.entry(*v).or_insert(0u32) += 1;
        }
        let default = counts
            .iter()
            .max_by_key(|(v, c)| (**c, std::cmp::Reverse(**v)))
            .map_or(0, |(v, _)| *v);
        let arms = vals
            .iter()
            .enumerate()
            .filter_map(|(v, x)| match x {
                Some(x) if *x != default => Some((v as u128, Expr::c(*x, width))),
                _ => None,
            })
            .collect();
        b.wire_note(
            name,
            Expr::case(&self.sel, arms, &Expr::c(default, width)),
            note,
        )
    }
}

/// THE ONE rounder: projects `x` to `f` (RoundToPrecision → Saturate → Encode) with the
/// exception flags of `golden::project`, bit for bit. It is a sequence of named sub-blocks,
/// each the hardware form of one step of the golden model's `project_finite` /
/// `project_to` (golden/src/round.rs), printed under its own comment heading:
///
/// | sub-block | golden step |
/// |---|---|
/// | `Rounder::window` | the value `sig · 2^e`, cut to P + G bits and a sticky bit |
/// | `Rounder::exponent` | `e`, tininess `e < emin` (decision tables for narrow exponents) |
/// | `Rounder::denormalize` | the quantum `q = max(e, emin) − (P − 1)`: shift right by `emin − e` |
/// | `Rounder::round_to_precision` | `decide` + `s = ⌊S̃⌋ + away`, the magnitude code |
/// | `Rounder::underflow` | "tiny and inexact" (before or after rounding) |
/// | `Rounder::overflow` | `mag > max` |
/// | `Rounder::saturate_encode` | the saturation table, negative values into unsigned formats, zeros |
/// | `Rounder::select` | NaN / ±∞ / ±0 operands (`nan`, `saturate_inf`, `encode_zero`) and the flags |
///
/// Datapath (W = width of `x.sig`, G = [`guard_bits`], L = P + G):
/// ```text
///   sig[W-1 .. W-L]  →  win[L-1:0]          sig[W-L-1:0] | sticky → st0
///   tiny (e < emin, formats with subnormals): {win, L'b0} >> min(emin − e, L)
///   y = [ s_t : P bits | frac : G bits | shifted-out → sticky ]
///   mag_t = {e + bias (0 when tiny), s_t[P-2:0]}    (code of the truncated magnitude)
///   mag   = mag_t + away                           (carries propagate into the exponent)
/// ```
/// Every signal of the rounder is named `round_*` (the random input of stochastic rounding
/// is `rnd_i`; the prefixes do not meet).
pub fn round(b: &mut ModuleBuilder, f: &Format, m: &Modes, x: &RoundIn) -> RoundOut {
    let mut r = Rounder::new(f, m, x);
    let (win, st0) = r.window(b);
    let tiny = r.exponent(b);
    let (s_t, frac, st) = r.denormalize(b, &win, &st0, &tiny);
    let q = r.round_to_precision(b, &s_t, &frac, &st, &tiny);
    let flush = r.flush(b, &win, &st0, &tiny);
    let uf = r.underflow(b, &win, &st0, &tiny, &q.inexact, flush.as_ref());
    let (ovf, mag_neg) = r.overflow(b, &win, &q);
    let fin = r.saturate_encode(b, &q, &ovf, &mag_neg, &uf, flush.as_ref());
    let out = r.select(b, fin);
    if x.ftz && !r.fast_ftz() && f.man_bits() > 0 && f.has_subnormals() {
        flush_subnormal_code(b, f, out)
    } else {
        out
    }
}

/// `--ftz` on an encoded result: a subnormal code (biased exponent field 0, trailing field
/// not 0) becomes zero (the sign kept when the format has −0) with underflow and inexact
/// (`golden::flush_result`). Used for unsigned formats, where a negative tiny value's
/// result depends on its subnormal rounding.
fn flush_subnormal_code(b: &mut ModuleBuilder, fr: &Format, out: RoundOut) -> RoundOut {
    let m = fr.man_bits();
    let e = fr.exp_bits();
    b.comment_owned(vec![
        "ftz: subnormal result -> zero, flags |= {underflow, inexact}".to_string(),
        format!(
            "  subnormal = code[{}:{}] == 0 && code[{}:0] != 0",
            m + e - 1,
            m,
            m - 1
        ),
    ]);
    let code = b.wire("ftz_r_rounded", out.code);
    let sub = code
        .slice(m + e - 1, m)
        .eq_c(0)
        .and(&code.slice(m - 1, 0).eq_c(0).not());
    let sub = b.wire("ftz_r_sub", sub);
    let zero = if fr.has_neg_zero() {
        concat(&[code.msb(), Expr::c(0, fr.k - 1)])
    } else {
        Expr::c(0, fr.k)
    };
    RoundOut {
        code: b.wire("ftz_r_code", Expr::mux(&sub, &zero, &code)),
        flags: b.wire(
            "ftz_r_flags",
            out.flags.or(&concat(&[Expr::c(0, 2), sub.clone(), sub])),
        ),
    }
}

/// What `Rounder::flush` decides for a tiny value under `ftz`.
struct Flush {
    /// The value rounds (at the subnormal quantum) up to the smallest normal, which is kept.
    keep_min: Expr,
    /// Tininess after rounding still holds for a kept smallest normal (rounding at precision
    /// P with an unbounded exponent does not carry to 2^emin).
    min_tiny: Expr,
}

/// Prefix of every signal the rounder names.
const RP: &str = "round";

/// The rounder's shared context: the result format, the modes, the input and the quantities
/// every sub-block reads (derived once).
struct Rounder<'a> {
    f: &'a Format,
    m: &'a Modes,
    x: &'a RoundIn,
    p: u32,
    man: u32,
    g: u32,
    l: u32,
    emin: i64,
    bias: i64,
    subn: bool,
    /// Internal two's complement width of exponent arithmetic.
    iw: u32,
    /// The exponent `e` (set by `Rounder::exponent`).
    e: Expr,
    /// A narrow exponent's table selector (set by `Rounder::exponent`).
    narrow: Option<ExpSel>,
    /// Tininess `e < emin` (set by `Rounder::exponent`).
    tiny: Expr,
}

/// What `Rounder::round_to_precision` produces.
struct Rounded {
    /// Code of the rounded magnitude.
    mag: Expr,
    /// Round away from zero at the result's quantum.
    away: Expr,
    /// Any discarded bit is nonzero.
    inexact: Expr,
}

/// What `Rounder::saturate_encode` produces for `Rounder::select`.
struct Finite {
    /// Code of a finite nonzero (or rounded-to-zero) operand.
    code: Expr,
    /// Its flags: invalid, overflow, underflow, inexact.
    inv: Expr,
    ov: Expr,
    uf: Expr,
    ix: Expr,
    /// Codes shared with the special-operand selection.
    nan_c: Expr,
    inf_c: Expr,
    maxf: Expr,
    zcode: Expr,
}

impl<'a> Rounder<'a> {
    fn new(f: &'a Format, m: &'a Modes, x: &'a RoundIn) -> Rounder<'a> {
        let p = f.p;
        let g = guard_bits(m);
        let l = p + g;
        let emin = f.emin() as i64;
        let bias = f.bias as i64;
        let (elo, ehi) = x.exp_range;
        let iw = sbits(
            elo.min(emin - ehi).min(elo + bias).min(-(l as i64)),
            (ehi + bias + 1).max(emin - elo).max(l as i64 + 1).max(ehi),
        )
        .max(f.exp_bits() + 2)
        .max(x.exp.width)
        .max({
            // the offset's constants (`exp + offset + bias + 2` at most) fit too
            let c = x.exp_offset.abs() + bias.abs() + 2;
            sbits(-c, c)
        });
        Rounder {
            f,
            m,
            x,
            p,
            man: p - 1,
            g,
            l,
            emin,
            bias,
            subn: f.has_subnormals(),
            iw,
            e: Expr::c(0, 1),
            narrow: None,
            tiny: Expr::bit_c(false),
        }
    }

    fn name(what: &str) -> String {
        format!("{RP}_{what}")
    }

    /// The rounding window: the top L = P + G bits of the significand and a sticky bit for
    /// everything below, with the layout drawn at the concrete widths.
    fn window(&self, b: &mut ModuleBuilder) -> (Expr, Expr) {
        let (f, p, g, l) = (self.f, self.p, self.g, self.l);
        let w = self.x.sig.width;
        let bits = |h: u32, lo: u32| {
            if h == lo {
                format!("[{h}]")
            } else {
                format!("[{h}:{lo}]")
            }
        };
        let frac_desc = if g == 1 {
            "round bit".to_string()
        } else {
            format!("round bit + {} random-compare bits", g - 1)
        };
        let mut lines = vec![
            format!(
                "Rounder: RoundToPrecision -> Saturate -> Encode into {} (P = {p}, emin = {}, emax = {})",
                f.name(),
                self.emin,
                f.emax()
            ),
            format!("Window: {l} bits = {p} kept + {g} fraction; everything below is sticky"),
            format!(
                "  significand {}{} -> {RP}_win{} = [ kept {} | fraction {} ]  ({frac_desc})",
                bits(w - 1, w.saturating_sub(l)),
                if l > w {
                    format!(" and {} zero bits", l - w)
                } else {
                    String::new()
                },
                bits(l - 1, 0),
                bits(l - 1, g),
                bits(g - 1, 0)
            ),
        ];
        lines.push(if l < w {
            format!(
                "  significand {} | input sticky -> {RP}_st0",
                bits(w - l - 1, 0)
            )
        } else {
            format!("  input sticky -> {RP}_st0")
        });
        b.comment_owned(lines);
        let (win, st0) = if l <= w {
            let below = if l < w {
                self.x.sig.slice(w - l - 1, 0).red_or()
            } else {
                Expr::bit_c(false)
            };
            (self.x.sig.slice(w - 1, w - l), below.or(&self.x.sticky))
        } else {
            (
                concat(&[self.x.sig.clone(), Expr::c(0, l - w)]),
                self.x.sticky.clone(),
            )
        };
        (
            b.wire(&Self::name("win"), win),
            b.wire(&Self::name("st0"), st0),
        )
    }

    /// The exponent `e = exp (+ exp_inc)` and tininess `e < emin`; for a narrow exponent the
    /// selector of the decision tables the later blocks use.
    fn exponent(&mut self, b: &mut ModuleBuilder) -> Expr {
        let (x, iw, emin) = (self.x, self.iw, self.emin);
        let (elo, ehi) = x.exp_range;
        let base = x
            .exp
            .sext(iw)
            .add(&self.named("EXP_OFFSET", x.exp_offset, "e = exp + offset"));
        self.e = b.wire(
            &Self::name("e"),
            match &x.exp_inc {
                Some(t) => base.add(&t.zext(iw)),
                None => base,
            },
        );
        let inc_bits = x.exp_inc.is_some() as u32;
        // A nonnegative exponent (`{1'b0, field}`, e.g. a biased field) selects by its
        // value bits alone.
        let (sel_exp, signed) = match &x.exp.node {
            crate::ast::Node::Concat(parts) if parts.len() >= 2 && parts[0].is_const(0) => {
                (concat(&parts[1..]), false)
            }
            _ => (x.exp.clone(), true),
        };
        self.narrow = (sel_exp.width + inc_bits <= EXP_TABLE_BITS).then(|| ExpSel {
            sel: match &x.exp_inc {
                Some(t) => concat(&[t.clone(), sel_exp.clone()]),
                None => sel_exp.clone(),
            },
            ew: sel_exp.width,
            signed,
            inc: x.exp_inc.is_some(),
            offset: x.exp_offset,
            range: (elo, ehi),
        });
        if let Some(t) = &self.narrow {
            b.comment_owned(vec![format!(
                "Exponent decisions: tables over {{{}}} (e = {}), {} entries each",
                if t.inc { "exp_inc, exp" } else { "exp" },
                if t.inc { "exp + exp_inc" } else { "exp" },
                1u32 << t.sel.width
            )]);
        }
        self.tiny = match (&self.narrow, elo < emin) {
            (_, false) => Expr::bit_c(false),
            (Some(t), true) => {
                t.table(b, &Self::name("tiny"), 1, "e < emin", |v| (v < emin) as i64)
            }
            (None, true) => b.wire_note(
                &Self::name("tiny"),
                self.e.slt(&self.named("EMIN", emin, "emin: tiny below it")),
                "e < emin",
            ),
        };
        self.tiny.clone()
    }

    /// Whether a tiny value is denormalized (the format has subnormals and values below
    /// 2^emin occur).
    fn may_den(&self) -> bool {
        self.subn && self.x.exp_range.0 < self.emin && !self.fast_ftz()
    }

    /// `e + bias + j`: the biased exponent field (`j` = 0) or the next one (`j` = 1). For a
    /// narrow exponent it is formed from the input exponent directly, not from the `e` wire:
    /// `exp + (offset + bias + j)`, and with an increment bit `t` both
    /// `exp + (offset + bias + j + 1)` and that, selected by `t` — one adder beside the
    /// decision tables instead of a chain of two or three.
    fn e_plus(&self, j: i64) -> Expr {
        let plus = |j: i64| {
            if j == 0 {
                String::new()
            } else {
                format!("_P{j}")
            }
        };
        let plus_text = |j: i64| {
            if j == 0 {
                String::new()
            } else {
                format!(" + {j}")
            }
        };
        let bias = self.bias;
        if self.narrow.is_none() {
            let what = format!(
                "bias{}: exponent field{} = e + this",
                plus_text(j),
                plus_text(j)
            );
            return self
                .e
                .add(&self.named(&format!("BIAS{}", plus(j)), bias + j, &what));
        }
        let base = self.x.exp.sext(self.iw);
        let at = |j: i64| {
            let what = format!(
                "offset + bias{}: exponent field{} = exp + this",
                plus_text(j),
                plus_text(j)
            );
            let name = format!("FIELD_OFFSET{}", plus(j));
            base.add(&self.named(&name, self.x.exp_offset + bias + j, &what))
        };
        match &self.x.exp_inc {
            Some(t) => Expr::mux(t, &at(j + 1), &at(j)),
            None => at(j),
        }
    }

    /// A signed constant of the rounder's exponent arithmetic (`iw` bits) as a named
    /// `localparam` `ROUND_<what>` with its value and meaning in a comment.
    fn named(&self, what: &str, value: i64, meaning: &str) -> Expr {
        Expr::named_i(
            &format!("{}_{what}", RP.to_ascii_uppercase()),
            value,
            self.iw,
            &format!("{meaning} ({})", self.f.name()),
        )
    }

    /// `ftz` without a denormalization shifter: signed formats with subnormals and a
    /// trailing field, when values below 2^emin occur.
    fn fast_ftz(&self) -> bool {
        self.x.ftz && self.f.signed && self.subn && self.man > 0 && self.x.exp_range.0 < self.emin
    }

    /// Rounding the window at precision P with an unbounded exponent carries into the next
    /// binade (all P kept bits ones and rounded away): for e = emin − 1 that reaches 2^emin,
    /// so the value is not tiny after rounding.
    fn carries_at_p(&self, b: &mut ModuleBuilder, win: &Expr, st0: &Expr) -> Expr {
        let (p, g, l) = (self.p, self.g, self.l);
        let odd_u = if p > 1 {
            win.bit(l - p)
        } else {
            Expr::bit_c(false)
        };
        let away_u = decide(
            b,
            self.m,
            &self.x.sign,
            &odd_u,
            &win.slice(g - 1, 0),
            st0,
            &Self::name("u"),
            "at precision P, unbounded exponent (tininess after rounding)",
        );
        win.slice(l - 1, l - p).red_and().and(&away_u)
    }

    /// Flush-to-zero of tiny values (`fast_ftz`): every value below 2^emin becomes ±0
    /// except one that its subnormal rounding carries up to 2^emin. Only e = emin − 1 can:
    /// its subnormal rounding is the window shifted right by one place (kept bits
    /// {0, win[L-1:L-P+1]}, fraction win[G:1], sticky win[0] | st0), and it reaches 2^emin
    /// when those trailing bits are all ones and the mode rounds away.
    fn flush(&self, b: &mut ModuleBuilder, win: &Expr, st0: &Expr, tiny: &Expr) -> Option<Flush> {
        if !self.fast_ftz() {
            return None;
        }
        let (p, g, l, emin) = (self.p, self.g, self.l, self.emin);
        b.comment_owned(vec![
            "Flush to zero (ftz): a tiny value is +-0, unless e = emin - 1 and its subnormal"
                .to_string(),
            format!(
                "  rounding (window >> 1: trailing {RP}_win[{}:{}], fraction {RP}_win[{g}:1]) \
                 carries to the smallest normal",
                l - 1,
                l - p + 1
            ),
        ]);
        let away1 = decide(
            b,
            self.m,
            &self.x.sign,
            &win.bit(l - p + 1),
            &win.slice(g, 1),
            &win.bit(0).or(st0),
            &Self::name("ftz"),
            "at the subnormal quantum for e = emin - 1",
        );
        let at = match &self.narrow {
            Some(t) => t.table(b, &Self::name("e_is_emin_m1"), 1, "e == emin - 1", |v| {
                (v == emin - 1) as i64
            }),
            None => self.e.eq(&self.named("EMIN_M1", emin - 1, "emin - 1")),
        };
        let keep_min = b.wire(
            &Self::name("ftz_keep_min"),
            tiny.and(&at)
                .and(&win.slice(l - 1, l - p + 1).red_and())
                .and(&away1),
        );
        // Rounding at precision P (unbounded exponent) carries 2^(emin-1)·1.1…1 to 2^emin.
        let min_tiny = match self.m.tininess {
            Tininess::AfterRounding => self.carries_at_p(b, win, st0).not(),
            Tininess::BeforeRounding => Expr::bit_c(true),
        };
        Some(Flush { keep_min, min_tiny })
    }

    /// Denormalization: the quantum of a tiny value is 2^(emin − P + 1), so its window
    /// shifts right by `emin − e` (clamped to L; the shifted-out bits join the sticky bit).
    /// Returns the kept P bits, the G fraction bits and the sticky bit.
    fn denormalize(
        &self,
        b: &mut ModuleBuilder,
        win: &Expr,
        st0: &Expr,
        tiny: &Expr,
    ) -> (Expr, Expr, Expr) {
        let (p, g, l, emin) = (self.p, self.g, self.l, self.emin);
        let (s_t, frac, st) = if self.may_den() {
            b.comment_owned(vec![format!(
                "Denormalize: a tiny value (e < emin) is rounded at 2^(emin - {}): \
                 {RP}_win >> min(emin - e, {l}), shifted-out bits are sticky",
                p - 1
            )]);
            let sw = ubits(l as u128);
            if let Some(t) = &self.narrow {
                // The shift amount emin - e is needed exactly only below L; there its low
                // sw bits depend on the selector's low bits alone (a 1-level function), so the
                // shifter starts right away, beside the tables that say tiny and "all out".
                let inc_lo = |v: u128| -> (i64, i64) {
                    let raw = (v & mask(sw)) as i64;
                    let inc = if t.inc { (v >> sw) as i64 & 1 } else { 0 };
                    (raw, inc)
                };
                // Measured on ECP5: a win for an input field selector (project: 187 -> 224
                // MHz at 2 stages, more cells), a loss behind mul's exponent adder (142 -> 133),
                // so only unsigned (field) selectors take it.
                let lo_sel = if t.ew >= sw && !t.signed {
                    let raw_lo = t.sel.slice(sw - 1, 0);
                    if t.inc {
                        Some(concat(&[t.sel.msb(), raw_lo]))
                    } else {
                        Some(raw_lo)
                    }
                } else {
                    None
                };
                if let Some(lo_sel) = lo_sel {
                    let c = emin - t.offset;
                    let arms: Vec<(u128, Expr)> = (0..1u128 << lo_sel.width)
                        .filter_map(|v| {
                            let (raw, inc) = inc_lo(v);
                            let a = (c - raw - inc).rem_euclid(1 << sw) as u128;
                            (a != 0).then(|| (v, Expr::c(a, sw)))
                        })
                        .collect();
                    let amt_lo = b.wire_note(
                        &Self::name("shamt_lo"),
                        Expr::case(&lo_sel, arms, &Expr::c(0, sw)),
                        "low bits of emin - e (exact when 0 < emin - e < L)",
                    );
                    let all = t.table(
                        b,
                        &Self::name("den_all"),
                        1,
                        "emin - e >= L: the whole window shifts out",
                        |v| (v <= emin - l as i64) as i64,
                    );
                    let x2 = concat(&[win.clone(), Expr::c(0, l)]);
                    let sh = b.wire_note(
                        &Self::name("den_sh"),
                        x2.shr(&amt_lo),
                        "{win, 0} >> (emin - e) mod 2^sw",
                    );
                    let y = Expr::mux(
                        tiny,
                        &Expr::mux(&all, &x2.shr(&Expr::c(l as u128, sw)), &sh),
                        &x2,
                    );
                    let y = b.wire_note(&Self::name("den"), y, "{shifted | shifted out}");
                    let out = y.slice(l - 1, 0).red_or();
                    let frac = b.wire(&Self::name("frac"), y.slice(l + g - 1, l));
                    let st = b.wire(&Self::name("sticky"), out.or(st0));
                    return (y.slice(2 * l - 1, 2 * l - p), frac, st);
                }
            }
            let amt = if let Some(t) = &self.narrow {
                t.table(
                    b,
                    &Self::name("shamt"),
                    sw,
                    "denormalization shift: min(emin - e, L) when tiny, else 0",
                    |v| {
                        if v < emin {
                            (emin - v).min(l as i64)
                        } else {
                            0
                        }
                    },
                )
            } else {
                let e = &self.e;
                let emin_c = self.named("EMIN", emin, "emin: tiny below it");
                let dd = b.wire_note(&Self::name("dd"), emin_c.sub(e), "emin - e");
                let amt = if emin - self.x.exp_range.0 > l as i64 {
                    // dd > L  <=>  e < emin - L: decided from e, in parallel with the
                    // subtraction.
                    let big = e.slt(&self.named(
                        "EMIN_M_L",
                        emin - l as i64,
                        "emin - L: below it the whole window shifts out",
                    ));
                    Expr::mux(&big, &Expr::c(l as u128, sw), &dd.slice(sw - 1, 0))
                } else {
                    dd.slice(sw - 1, 0)
                };
                b.wire_note(
                    &Self::name("shamt"),
                    Expr::mux(tiny, &amt, &Expr::c(0, sw)),
                    "denormalization shift, clamped",
                )
            };
            let (y, out) = shift_right_sticky(b, win, &amt, l as u128, &Self::name("den"));
            (y.slice(l - 1, l - p), y.slice(g - 1, 0), out.or(st0))
        } else {
            (win.slice(l - 1, l - p), win.slice(g - 1, 0), st0.clone())
        };
        let frac = b.wire(&Self::name("frac"), frac);
        let st = b.wire(&Self::name("sticky"), st);
        (s_t, frac, st)
    }

    /// RoundToPrecision: the truncated magnitude code, the round-away decision of the mode
    /// and the rounded magnitude code.
    fn round_to_precision(
        &self,
        b: &mut ModuleBuilder,
        s_t: &Expr,
        frac: &Expr,
        st: &Expr,
        tiny: &Expr,
    ) -> Rounded {
        let (man, iw) = (self.man, self.iw);
        let may_den = self.may_den();
        let ebias = self.e_plus(0);
        let ebf = if may_den {
            Expr::mux(tiny, &Expr::c(0, iw), &ebias)
        } else {
            ebias
        };
        let mw = iw + man;
        let mag_t = if man > 0 {
            concat(&[ebf.clone(), s_t.slice(man - 1, 0)])
        } else {
            ebf.clone()
        };
        let mag_t = b.wire_note(
            &Self::name("mag_t"),
            mag_t,
            "truncated magnitude code {biased exp, trailing}",
        );
        let odd = mag_t.bit(0);
        let inexact = b.wire(&Self::name("inexact"), frac.red_or().or(st));
        let away = decide(
            b,
            self.m,
            &self.x.sign,
            &odd,
            frac,
            st,
            RP,
            "at the result's quantum",
        );
        // mag_t + away without a carry chain through the exponent field: the trailing bits
        // are incremented on their own, and the exponent field picks ebf or ebf + 1 (formed
        // in parallel from e) by the carry out of the trailing bits (all ones and rounded
        // away). Worth it for long trailing fields (binary32 results) and for narrow
        // exponents (the exponent adders then run beside the decision tables); other short
        // codes keep one adder.
        let mag_v = if man >= 8 || self.narrow.is_some() {
            let e1 = self.e_plus(1);
            let ebf1 = if may_den {
                Expr::mux(tiny, &Expr::c(1, iw), &e1)
            } else {
                e1
            };
            if man > 0 {
                let tr = s_t.slice(man - 1, 0);
                let cy = tr.red_and().and(&away);
                concat(&[Expr::mux(&cy, &ebf1, &ebf), tr.add(&away.zext(man))])
            } else {
                Expr::mux(&away, &ebf1, &ebf)
            }
        } else {
            mag_t.add(&away.zext(mw))
        };
        let mag = b.wire_note(
            &Self::name("mag"),
            mag_v,
            "rounded magnitude code (carry may bump the exponent)",
        );
        Rounded { mag, away, inexact }
    }

    /// Underflow: tiny and inexact. Tininess after rounding (formats with subnormals): a
    /// value with e = emin − 1 is not tiny when rounding at precision P with an unbounded
    /// exponent carries it up to 2^emin.
    fn underflow(
        &self,
        b: &mut ModuleBuilder,
        win: &Expr,
        st0: &Expr,
        tiny: &Expr,
        inexact: &Expr,
        flush: Option<&Flush>,
    ) -> Expr {
        let emin = self.emin;
        if self.x.exp_range.0 >= emin {
            return Expr::bit_c(false);
        }
        if let Some(fl) = flush {
            // Every tiny value is inexact; a flushed one underflows, a kept smallest normal
            // when it was tiny by the tininess rule.
            return b.wire(
                &Self::name("uf"),
                tiny.and(&fl.keep_min.not().or(&fl.min_tiny)),
            );
        }
        let tiny_ok = match (self.m.tininess, self.may_den()) {
            (Tininess::AfterRounding, true) => {
                let carry = self.carries_at_p(b, win, st0);
                // e != emin - 1 (dd != 1), decided from e beside the shift amount: a table
                // for a narrow exponent, else a compare.
                let not_below = match &self.narrow {
                    Some(t) => t.table(b, &Self::name("e_ne_emin_m1"), 1, "e != emin - 1", |v| {
                        (v != emin - 1) as i64
                    }),
                    None => self.e.ne(&self.named("EMIN_M1", emin - 1, "emin - 1")),
                };
                not_below.or(&carry.not())
            }
            _ => Expr::bit_c(true),
        };
        b.wire(&Self::name("uf"), inexact.and(tiny).and(&tiny_ok))
    }

    /// Range checks: `mag > max finite` (decided from the exponent and the window, without
    /// waiting for the rounding increment), and, for formats without subnormals, a rounded
    /// magnitude below the smallest value.
    fn overflow(&self, b: &mut ModuleBuilder, win: &Expr, q: &Rounded) -> (Expr, Expr) {
        let f = self.f;
        let (man, l, p, bias, iw) = (self.man, self.l, self.p, self.bias, self.iw);
        let (elo, ehi) = self.x.exp_range;
        let emax = f.emax() as i64;
        let mag_neg = if !self.subn && elo + bias < 1 {
            b.wire_note(
                &Self::name("mag_neg"),
                q.mag.msb(),
                "below the smallest value (no subnormals)",
            )
        } else {
            Expr::bit_c(false)
        };
        let maxm = f.max_finite_mag() as u128;
        // Largest binade: biased exponent field and trailing significand of max finite.
        let eb = (maxm >> man) as i64;
        if ehi >= emax {
            b.comment_owned(vec![format!(
                "Overflow: rounded magnitude above max finite {:#x} (from e and the window, \
                 beside the increment)",
                maxm
            )]);
        }
        let ovf = if ehi >= emax && (eb >= 1 || !self.subn) {
            // mag > max: e above the largest binade, or in it (never tiny there, so the
            // window is not shifted) with a trailing significand above max's, or equal to it
            // and rounded away.
            let et = self.named(
                "EMAX_FINITE",
                eb - bias,
                "exponent of the largest finite binade",
            );
            let tmax = maxm & mask(man);
            let in_top = if man > 0 {
                let tr = win.slice(l - 2, l - p);
                tr.gt(&Expr::c(tmax, man)).or(&tr.eq_c(tmax).and(&q.away))
            } else {
                q.away.clone()
            };
            let (above, at) = match &self.narrow {
                Some(t) => (
                    t.table(
                        b,
                        &Self::name("e_above"),
                        1,
                        "above the largest binade",
                        |v| (v > eb - bias) as i64,
                    ),
                    t.table(b, &Self::name("e_top"), 1, "in the largest binade", |v| {
                        (v == eb - bias) as i64
                    }),
                ),
                None => (et.slt(&self.e), self.e.eq(&et)),
            };
            b.wire(&Self::name("ovf"), above.or(&at.and(&in_top)))
        } else if ehi >= emax {
            b.wire(
                &Self::name("ovf"),
                mag_neg.not().and(&q.mag.gt(&Expr::c(maxm, iw + man))),
            )
        } else {
            Expr::bit_c(false)
        };
        (ovf, mag_neg)
    }

    /// Saturate → Encode for a finite nonzero operand: overflow per saturation mode and
    /// rounding direction (P3109 §4.7.5 with the golden model's SatNone rules), negative
    /// values into unsigned formats, e8m0's clamp below its smallest value, zeros.
    fn saturate_encode(
        &self,
        b: &mut ModuleBuilder,
        q: &Rounded,
        ovf: &Expr,
        mag_neg: &Expr,
        uf0: &Expr,
        flush: Option<&Flush>,
    ) -> Finite {
        let (f, m) = (self.f, self.m);
        let (k, mb, subn) = (f.k, f.mag_bits(), self.subn);
        let kmask = mask(k);
        let sign = self.x.sign.clone();
        let with_sign = |mag_code: u128, s: &Expr| -> Expr {
            if f.signed {
                concat(&[
                    s.clone(),
                    Expr::named(&const_name(f, "MAX_MAG"), mag_code, k - 1),
                ])
            } else {
                Expr::named(&const_name(f, "MAX"), mag_code, k)
            }
        };
        let nan_c = match f.nan_code() {
            Some(c) => Expr::named(&const_name(f, "NAN"), c as u128, k),
            None => Expr::named(&const_name(f, "NAN_OUT"), (m.nonan_code as u128) & kmask, k),
        };
        let has_nan = f.has_nan();
        let has_inf = f.has_inf();
        let maxf = with_sign(f.max_finite_mag() as u128, &sign);
        let inf_c = if has_inf {
            let pos = f.pos_inf_code().unwrap_or(0) as u128;
            let pos = Expr::named(&const_name(f, "POS_INF"), pos, k);
            match f.neg_inf_code() {
                Some(n) => Expr::mux(
                    &sign,
                    &Expr::named(&const_name(f, "NEG_INF"), n as u128, k),
                    &pos,
                ),
                None => pos,
            }
        } else {
            nan_c.clone()
        };
        let zcode = if f.has_neg_zero() {
            concat(&[sign.clone(), Expr::c(0, k - 1)])
        } else {
            Expr::c(0, k)
        };
        b.comment(&[
            "Saturate -> Encode: overflow per saturation mode and rounding direction,",
            "  negative values into unsigned formats, zeros",
        ]);
        let mag_zero = b.wire(&Self::name("mag_zero"), q.mag.eq_c(0));
        let sat_none = m.s(Saturation::SatNone);
        let sat_v4 = m.s(Saturation::SatNoneV4);
        let toward_finite = any(&[
            m.r(Rounding::Rtz),
            m.r(Rounding::Rtn).and(&sign.not()),
            m.r(Rounding::Rtp).and(&sign),
            if (!f.signed && f.specials == Specials::P3109Extended)
                || m.rto_overflow == golden::RtoOverflow::Ieee
            {
                m.r(Rounding::Rto)
            } else {
                Expr::bit_c(false)
            },
        ]);
        let ovf_to_max = any(&[
            m.s(Saturation::SatFinite),
            m.s(Saturation::SatPropagate),
            toward_finite,
            Expr::bit_c(!has_nan),
            if has_inf {
                Expr::bit_c(false)
            } else {
                sat_v4.clone()
            },
        ]);
        let ovf_to_max = if ovf.is_const(0) {
            Expr::bit_c(true)
        } else {
            b.wire(&Self::name("ovf_to_max"), ovf_to_max)
        };
        let ovf_code = Expr::mux(&ovf_to_max, &maxf, &inf_c);
        // Negative values into unsigned formats.
        let neg_uns = if f.signed {
            Expr::bit_c(false)
        } else {
            sign.clone()
        };
        let nan_on_neg = all(&[
            sat_none.or(&sat_v4),
            m.r(Rounding::Rtz).or(&m.r(Rounding::Rtp)).not(),
            Expr::bit_c(has_nan),
        ]);
        // A negative value is in range only when it rounds to zero (e8m0 has no zero).
        let neg_uns_nz = b.wire(
            &Self::name("neg_uns"),
            if subn {
                neg_uns.and(&mag_zero.not())
            } else {
                neg_uns.clone()
            },
        );
        // Below the smallest e8m0 value and positive: clamps up to it.
        let mag_neg = mag_neg.and(&neg_uns.not());
        let need_zero_fix = f.signed && !f.has_neg_zero() && subn;
        let regular = if f.signed {
            concat(&[sign.clone(), q.mag.slice(mb - 1, 0)])
        } else {
            q.mag.slice(k - 1, 0)
        };
        let mut fin = Expr::mux(
            &mag_zero.and(&Expr::bit_c(need_zero_fix)),
            &Expr::c(0, k),
            &regular,
        );
        fin = Expr::mux(ovf, &ovf_code, &fin);
        let mut inexact = q.inexact.clone();
        if let Some(fl) = flush {
            // ftz: a tiny value is +-0 or (carried up) the smallest normal, always inexact.
            let min_normal = concat(&[sign.clone(), Expr::c(1u128 << self.man, k - 1)]);
            let tiny = self.tiny.clone();
            fin = Expr::mux(&tiny, &Expr::mux(&fl.keep_min, &min_normal, &zcode), &fin);
            inexact = inexact.or(&tiny);
        }
        fin = Expr::mux(&neg_uns.or(&mag_neg), &Expr::c(0, k), &fin);
        fin = Expr::mux(&neg_uns_nz.and(&nan_on_neg), &nan_c, &fin);
        let code = if matches!(fin.node, crate::ast::Node::Mux(..)) {
            b.wire(&Self::name("fin_code"), fin)
        } else {
            fin
        };
        let ovf_eff = ovf.and(&neg_uns.not());
        Finite {
            code,
            ix: any(&[
                inexact,
                mag_neg.clone(),
                neg_uns_nz.clone(),
                ovf_eff.clone(),
            ]),
            uf: uf0.or(&mag_neg),
            ov: ovf_eff.clone(),
            inv: any(&[
                neg_uns_nz.and(&nan_on_neg),
                ovf_eff.and(&ovf_to_max.not()).and(&Expr::bit_c(!has_inf)),
            ]),
            nan_c,
            inf_c,
            maxf,
            zcode,
        }
    }

    /// Result selection: NaN, ±∞ and ±0 operands before the finite path, and the flags
    /// (none for special operands but invalid).
    fn select(&self, b: &mut ModuleBuilder, fin: Finite) -> RoundOut {
        let (f, m, x) = (self.f, self.m, self.x);
        let k = f.k;
        let (has_nan, has_inf) = (f.has_nan(), f.has_inf());
        let sign = &x.sign;
        let sat_finite = m.s(Saturation::SatFinite);
        let sat_none = m.s(Saturation::SatNone);
        let sat_v4 = m.s(Saturation::SatNoneV4);
        let (inf_code, inf_inv) = {
            // ±∞ operand (saturate_inf).
            let to_nan_signed = sat_finite
                .not()
                .and(&Expr::bit_c(!has_inf && has_nan))
                .and(&sat_none);
            let signed_code = Expr::mux(
                &sat_finite,
                &fin.maxf,
                &if has_inf {
                    fin.inf_c.clone()
                } else {
                    Expr::mux(&to_nan_signed, &fin.nan_c, &fin.maxf)
                },
            );
            if f.signed {
                (signed_code, to_nan_signed)
            } else {
                let neg_nan = sat_none.or(&sat_v4).and(&Expr::bit_c(has_nan));
                let neg_code = Expr::mux(&neg_nan, &fin.nan_c, &Expr::c(0, k));
                (
                    Expr::mux(sign, &neg_code, &signed_code),
                    Expr::mux(sign, &neg_nan, &to_nan_signed),
                )
            }
        };
        let (zero_code, zero_inv) = if f.specials == Specials::E8m0 {
            (Expr::c(mask(k), k), Expr::bit_c(true))
        } else {
            (fin.zcode.clone(), Expr::bit_c(false))
        };
        b.comment(&[
            "Result selection, highest priority first:",
            "  NaN operand        -> NaN (NaN-less formats: nonan code, invalid)",
            "  +-Inf operand      -> Inf / max finite / NaN per saturation mode",
            "  +-0 operand        -> +-0 (e8m0: NaN, invalid)",
            "  below range (e8m0) -> smallest value, underflow + inexact",
            "  negative, unsigned -> 0, or NaN for satnone* unless rtz/rtp",
            "  mag > max finite   -> max finite / Inf / NaN, overflow + inexact",
            "  mag == 0           -> +-0",
            "  otherwise          -> {sign, mag}",
        ]);
        let code = Expr::mux(
            &x.nan,
            &fin.nan_c,
            &Expr::mux(
                &x.inf,
                &inf_code,
                &Expr::mux(&x.zero, &zero_code, &fin.code),
            ),
        );
        let special = b.wire(&Self::name("special"), x.nan.or(&x.inf).or(&x.zero));
        let inv = any(&[
            x.invalid.clone(),
            x.nan.and(&Expr::bit_c(!has_nan)),
            x.inf.and(&inf_inv),
            x.zero.and(&zero_inv),
            special.not().and(&fin.inv),
        ]);
        let keep = special.not();
        let flags = concat(&[inv, keep.and(&fin.ov), keep.and(&fin.uf), keep.and(&fin.ix)]);
        RoundOut { code, flags }
    }
}

/// Class of a product of two factors `a·b` (golden::mul_exact): NaN (including invalid),
/// invalid (0·∞ with no NaN factor), ∞, 0.
pub(crate) struct Class {
    pub nan: Expr,
    pub invalid: Expr,
    pub inf: Expr,
    pub zero: Expr,
}

pub(crate) fn class_mul(a: &Class, c: &Class) -> Class {
    let in_nan = a.nan.or(&c.nan);
    let inv = in_nan
        .not()
        .and(&a.inf.and(&c.zero).or(&a.zero.and(&c.inf)));
    let nan = in_nan.or(&inv);
    let inf = nan.not().and(&a.inf.or(&c.inf));
    let zero = nan.not().and(&inf.not()).and(&a.zero.or(&c.zero));
    Class {
        nan,
        invalid: a.invalid.or(&c.invalid).or(&inv),
        inf,
        zero,
    }
}

pub(crate) fn class_of(u: &Unpacked) -> Class {
    Class {
        nan: u.nan.clone(),
        invalid: Expr::bit_c(false),
        inf: u.inf.clone(),
        zero: u.zero.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{Node, SigKind};

    /// Each `rm_i` / `sat_i` encoding names a mode whose index is that encoding, and the
    /// values a core does not implement select the documented default.
    #[test]
    fn mode_encodings_round_trip() {
        for (i, name) in ROUNDING_ENCODING.iter().enumerate() {
            let r = rounding_from_port(i as u64, 3);
            assert_eq!(r.name(), *name);
            assert_eq!(rounding_index(r), i);
            let deterministic = rounding_from_port(i as u64, 0);
            let want = if i < DETERMINISTIC_ROUNDINGS {
                *name
            } else {
                "rne"
            };
            assert_eq!(deterministic.name(), want, "rm_i = {i} without random bits");
        }
        let top = 1u64 << rm_port_width(3);
        for v in ROUNDING_ENCODING.len() as u64..top {
            assert_eq!(rounding_from_port(v, 3), Rounding::Rne, "rm_i = {v}");
        }
        assert!(DETERMINISTIC_ROUNDINGS <= 1 << rm_port_width(0));
        for (i, name) in SATURATION_ENCODING.iter().enumerate() {
            let s = saturation_from_port(i as u64);
            assert_eq!(s.name(), *name);
            assert_eq!(saturation_index(s), i);
        }
        for s in Saturation::ALL {
            assert_eq!(saturation_from_port(saturation_index(s) as u64), s);
        }
    }

    /// Selector value → exponent, with and without the increment bit, and a table's arms:
    /// the most common in-range result is the default, out-of-range values take it too.
    #[test]
    fn exponent_tables_decode_the_selector_and_pick_the_common_default() {
        let mut b = ModuleBuilder::new();
        let exp = b.input("e_i", 4);
        let inc = b.input("c_i", 1);
        let t = ExpSel {
            sel: concat(&[inc, exp]),
            ew: 4,
            signed: true,
            inc: true,
            offset: 0,
            range: (-8, 5),
        };
        assert_eq!(t.value(0b0_0111), 7);
        assert_eq!(t.value(0b0_1000), -8);
        assert_eq!(t.value(0b1_1111), 0); // -1 + 1
        assert_eq!(t.value(0b1_0111), 8); // out of range: never occurs
        let tiny = t.table(&mut b, "tiny", 1, "e < -6", |v| (v < -6) as i64);
        let Node::Sig(id) = tiny.node else {
            panic!("a table is a named wire")
        };
        let SigKind::Wire(e) = &b.sigs[id].kind else {
            panic!("a wire")
        };
        let Node::Case(_, arms, default) = &e.node else {
            panic!("a case: {e:?}")
        };
        assert!(default.is_const(0));
        // e < -6 for e = -8, -7: selector 0_1000, 0_1001 and (with the increment) 1_1000.
        let ones: Vec<u128> = arms.iter().map(|(v, _)| *v).collect();
        assert_eq!(ones, vec![0b0_1000, 0b0_1001, 0b1_1000]);
        assert!(arms.iter().all(|(_, x)| x.is_const(1)));
        // A biased selector: the exponent is the unsigned field sum + offset.
        let t = ExpSel {
            offset: -14,
            signed: false,
            inc: false,
            range: (-14, 16),
            ..t
        };
        assert_eq!(t.value(0b0_0000), -14);
        assert_eq!(t.value(0b0_0111), -7);
        assert_eq!(t.value(0b0_1111), 1); // unsigned: the top bit is a value bit
    }
}
