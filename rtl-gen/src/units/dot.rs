//! The `dot` unit: `r = Σ_{i<N} (x_i·Sx)·(y_i·Sy) + z`, every product and the sum exact,
//! one rounding to the result format (P3109 interim report §5.3.2 BlockDotProduct; OCP MX
//! v1.0 dot product with E8M0 scales).
//!
//! Golden meaning: `(r_o, flags_o) = golden::DotUnit::eval(x, y, sx, sy, z, spec)` with
//! `spec` = the fixed modes or the modes selected by `rm_i` / `sat_i`. Data input ports, in
//! order: `x0_i … x{N-1}_i` (role x, index i), `y0_i … y{N-1}_i` (role y), `sx_i`, `sy_i`
//! (roles scale_x, scale_y; with `--scale-format`), `z_i` (the addend format, binary32 by
//! default; with `--addend`),
//! `rm_i`, `sat_i`; outputs `r_o` (result format), `flags_o`.
//!
//! Datapath ([`dot_sum`]):
//! ```text
//!   lane i:  x_i = {s, E, T} → sig {E≠0, T}, e' = max(E, 1)     (no normalization)
//!            y_i likewise
//!            term_i = (sig_x · sig_y) << ((e'_x − 1) + (e'_y − 1))   in a W-bit window
//!            (formats without subnormals: e' = E, shift E_x + E_y)
//!            ±term_i (two's complement, T = W + ⌈log2 N⌉ + 1 bits), 0 for 0 / NaN / Inf
//!   adder tree over the N lanes → S (exact)
//!   |S| → leading-zero count → normalized significand, exponent
//!        e(MSB) = lsb_x + lsb_y + (T − 2 − lzc) + e(Sx) + e(Sy)
//!   no addend: THE ONE rounder;  addend z: fma::add_round (swap, align, add, lzc, rounder)
//! ```
//! Block scales are powers of two (P = 1: e8m0, binary8p1uf, …): they only add to the
//! exponent of the whole sum. Specials per lane follow `golden::mul_exact` applied to
//! `(x_i·Sx)·(y_i·Sy)`; `+∞ + −∞` across lanes is invalid.

use super::fma::{add_round, plus_zero_results};
use super::modes::{mode_lines, mode_ports, mode_tag, spec_from_ports, z_format};
use super::mul::{umul, Product};
use super::{describe, finish_core};
use crate::ast::{all, any, concat, sbits, ubits, Expr, ModuleBuilder, MAX_WIDTH};
use crate::blocks::{
    class_mul, class_of, guard_bits, lzc_tree, round, shl_by_count, unpack, RoundIn, Unpacked,
};
use crate::{GenError, GenRequest, GeneratedCore, RoundingSel};
use golden::dot::lsb_exp;
use golden::{fma_ieee_zero, DotUnit, Format, Rounding, Tininess};
use iface::DotShape;

/// The fixed-point window of one lane's product: `(W, min_e'_x, min_e'_y)`, W = bits of the
/// largest shifted product.
fn window(fx: &Format, fy: &Format) -> (u32, u32, u32) {
    let min_e = |f: &Format| f.has_subnormals() as u32;
    let span = |f: &Format| ((1u32 << f.exp_bits()) - 1) - min_e(f);
    (fx.p + fy.p + span(fx) + span(fy), min_e(fx), min_e(fy))
}

/// Width of the signed sum: the window, the growth of N terms and a sign bit.
pub fn sum_width(fx: &Format, fy: &Format, n: u32) -> u32 {
    window(fx, fy).0 + golden::dot::clog2(n as u64) + 1
}

/// The dot shape of a request (`n` 0 for every other unit).
pub fn shape(req: &GenRequest) -> DotShape {
    req.options.dot
}

/// Validates a `dot` request.
pub fn validate(req: &GenRequest) -> Result<(), GenError> {
    let s = shape(req);
    let fx = req.formats.x;
    let fy = req.formats.y.unwrap_or(fx);
    for (f, what) in [(fx, "x"), (fy, "y")] {
        if f.k > 16 {
            return Err(GenError::Unsupported(format!(
                "the {what} elements of dot must be a small format (k <= 16), not {}",
                f.name()
            )));
        }
        Format::new(f.k, f.p, f.bias, f.signed, f.specials)
            .map_err(|e| GenError::BadRequest(format!("{what} format {}: {e}", f.name())))?;
        if f.exp_bits() == 0 {
            return Err(GenError::Unsupported(format!(
                "the {what} format {} has no exponent field; dot elements need at least one exponent bit",
                f.name()
            )));
        }
    }
    if let Some(sf) = req.formats.scale {
        if sf.p != 1 {
            return Err(GenError::Unsupported(format!(
                "block scale format {} has precision {}; the dot unit's scales are powers of two (precision 1: e8m0, binary8p1uf, …)",
                sf.name(),
                sf.p
            )));
        }
    }
    let fr = req.formats.r;
    if req.formats.z.is_some() && !s.addend {
        return Err(GenError::BadRequest(
            "an addend format (formats.z, --addend-format) without an addend: add --addend (\"dot\": {\"addend\": true})".into(),
        ));
    }
    super::fma::check_addend_result(req, &z_format(req), &fr)?;
    DotUnit::new(fx, fy, s.n as usize, req.formats.scale, addend(req), fr)
        .map_err(|e| GenError::Unsupported(format!("dot: {e}")))?;
    let t = sum_width(&fx, &fy, s.n);
    if t > MAX_WIDTH {
        return Err(GenError::Unsupported(format!(
            "the exact sum of {} products {} x {} needs a {t}-bit fixed-point window; the dot unit supports up to {MAX_WIDTH} bits (element formats with up to 6 exponent bits, e.g. e4m3, e5m2, binary8p3se)",
            s.n,
            fx.name(),
            fy.name()
        )));
    }
    if req.options.ftz {
        return Err(GenError::Unsupported(
            "--ftz is not offered for dot (subnormal elements are exact at no cost in the fixed-point window)".into(),
        ));
    }
    if req.random_bits() > 0
        || matches!(
            req.rounding,
            RoundingSel::Fixed(Rounding::Sra(_) | Rounding::Srb(_) | Rounding::Src(_))
        )
    {
        return Err(GenError::Unsupported(
            "dot supports the deterministic rounding modes (rne, rna, rtp, rtn, rtz, rto)".into(),
        ));
    }
    Ok(())
}

/// The addend format of a `dot` request, if it has an addend.
fn addend(req: &GenRequest) -> Option<Format> {
    shape(req).addend.then(|| z_format(req))
}

/// The golden model of a generated `dot` core.
#[derive(Clone, Debug)]
pub struct DotModel {
    unit: DotUnit,
    rounding: RoundingSel,
    saturation: crate::SaturationSel,
    tininess: Tininess,
    nonan_code: u32,
    signaling_nan: bool,
    rto_overflow: golden::RtoOverflow,
}

impl DotModel {
    /// The model of the core `req` generates.
    pub fn new(req: &GenRequest) -> Result<DotModel, GenError> {
        let s = shape(req);
        let fx = req.formats.x;
        let unit = DotUnit::new(
            fx,
            req.formats.y.unwrap_or(fx),
            s.n as usize,
            req.formats.scale,
            addend(req),
            req.formats.r,
        )
        .map_err(|e| GenError::Unsupported(format!("dot: {e}")))?;
        Ok(DotModel {
            unit,
            rounding: req.rounding,
            saturation: req.saturation,
            tininess: req.options.tininess,
            nonan_code: req.options.nonan_code,
            signaling_nan: req.options.signaling_nan,
            rto_overflow: req.options.rto_overflow,
        })
    }

    /// `[r_o, flags_o]` for the data inputs `x0 … x{N-1}, y0 … y{N-1}, [sx, sy], [z], [rm],
    /// [sat]`.
    pub fn eval(&self, inputs: &[u64]) -> [u64; 2] {
        let u = &self.unit;
        let n = u.n;
        let mut xs = [0u32; golden::MAX_DOT_N];
        let mut ys = [0u32; golden::MAX_DOT_N];
        for i in 0..n {
            xs[i] = inputs.get(i).copied().unwrap_or(0) as u32;
            ys[i] = inputs.get(n + i).copied().unwrap_or(0) as u32;
        }
        let mut it = inputs.iter().copied().skip(2 * n);
        let (sx, sy) = if u.scale.is_some() {
            (it.next().unwrap_or(0) as u32, it.next().unwrap_or(0) as u32)
        } else {
            (0, 0)
        };
        let z = if u.addend.is_some() {
            it.next().unwrap_or(0) as u32
        } else {
            0
        };
        let (spec, _) = spec_from_ports(
            &mut it,
            self.rounding,
            self.saturation,
            0,
            self.tininess,
            self.nonan_code,
            self.rto_overflow,
        );
        let (c, mut fl) = u.eval(&xs[..n], &ys[..n], sx, sy, z, &spec);
        if self.signaling_nan && u.has_small_signaling_nan(&xs[..n], &ys[..n]) {
            fl.0 |= golden::Flags::INVALID;
        }
        [c as u64, fl.0 as u64]
    }
}

/// Top module name:
/// `fp8_dot<N>_<x>[_x_<y>][_sc_<scale>][_z[_<addend>]]_to_<r>_<rounding>_<saturation>_s<S>`
/// (the addend's format named when it is not binary32).
pub fn top_name(req: &GenRequest) -> String {
    let s = shape(req);
    let fx = req.formats.x;
    let fy = req.formats.y.unwrap_or(fx);
    let mut name = format!("fp8_dot{}_{}", s.n, fx.ident());
    if fy != fx {
        name.push_str(&format!("_x_{}", fy.ident()));
    }
    if let Some(sf) = req.formats.scale {
        name.push_str(&format!("_sc_{}", sf.ident()));
    }
    if s.addend {
        name.push_str("_z");
        let fz = z_format(req);
        if fz != Format::BINARY32 {
            name.push_str(&format!("_{}", fz.ident()));
        }
    }
    name.push_str(&format!("_to_{}_{}", req.formats.r.ident(), mode_tag(req)));
    if !req.formats.r.has_nan() && req.options.nonan_code != 0 {
        name.push_str(&format!("_nc{:x}", req.options.nonan_code));
    }
    name.push_str(&format!("_s{}", req.stages));
    name
}

/// Whether `code` is a NaN of `f`, as one expression (the family's NaN codes: IEEE exponent
/// all ones and a nonzero trailing significand; `fn` all magnitude bits ones; the one NaN
/// code of fnuz / P3109 / e8m0; none for nonan).
fn nan_code_test(f: &Format, code: &Expr) -> Expr {
    use golden::Specials;
    let (man, mb) = (f.man_bits(), f.mag_bits());
    match f.specials {
        Specials::Ieee => code
            .slice(mb - 1, man)
            .eq_c((1u128 << f.exp_bits()) - 1)
            .and(&code.slice(man - 1, 0).eq_c(0).not()),
        Specials::Fn => code.slice(mb - 1, 0).eq_c((1u128 << mb) - 1),
        Specials::NoNan => Expr::bit_c(false),
        _ => code.eq_c(f.nan_code().unwrap_or(0) as u128),
    }
}

/// One element: its class, sign, significand `{E≠0, T}` and window shift `e' − min e'`.
struct Lane {
    u: Unpacked,
    sig: Expr,
    shift: Expr,
}

fn lane(b: &mut ModuleBuilder, f: &Format, code: &Expr, prefix: &str) -> Lane {
    let u = unpack(b, f, code, false, prefix);
    let man = f.man_bits();
    let eb = f.exp_bits();
    let ef = code.slice(man + eb - 1, man);
    let (hidden, shift) = if f.has_subnormals() {
        // e' − 1 = max(E, 1) − 1 = E − (E ≠ 0)
        let nz = ef.eq_c(0).not();
        (nz.clone(), ef.sub(&nz.zext(eb)))
    } else {
        (Expr::bit_c(true), ef.clone())
    };
    let sig = if man > 0 {
        concat(&[hidden, code.slice(man - 1, 0)])
    } else {
        hidden
    };
    let sig = b.wire(&format!("{prefix}_fsig"), sig);
    let shift = b.wire_note(
        &format!("{prefix}_shift"),
        shift,
        "window position of the LSB",
    );
    Lane { u, sig, shift }
}

/// `v << amount` for a two's-complement `v`, `out_w` bits (`out_w` ≥ the widest placement):
/// one mux level per amount bit, each level only as wide as its largest shift leaves
/// nonzero, the bits above it the sign (wires `<name>_<k>`).
fn shl_signed(b: &mut ModuleBuilder, v: &Expr, amount: &Expr, out_w: u32, name: &str) -> Expr {
    let mut cur = v.clone();
    let mut reach = 0u128; // largest shift applied so far
    for k in 0..amount.width {
        let sh = 1u32 << k;
        let w = (v.width as u128 + reach + sh as u128).min(out_w as u128) as u32;
        let wide = cur.sext(w);
        let shifted = if sh >= w {
            Expr::c(0, w)
        } else {
            concat(&[wide.slice(w - 1 - sh, 0), Expr::c(0, sh)])
        };
        cur = b.wire(
            &format!("{name}_{k}"),
            Expr::mux(&amount.bit(k), &shifted, &wide),
        );
        reach += sh as u128;
    }
    cur.sext(out_w)
}

/// One product lane: the classes of `(x·Sx)·(y·Sy)` and the exact product on the window's
/// grid, `t` bits, 0 unless finite nonzero: a two's-complement term (the dot's adder tree) or
/// a magnitude (the exact mac's product half, which negates in its loop).
pub(crate) struct LaneOut {
    pub nan: Expr,
    pub invalid: Expr,
    pub inf: Expr,
    pub zero: Expr,
    pub sign: Expr,
    /// `±product` ([`LaneForm::Signed`]) or `|product|` ([`LaneForm::Magnitude`]).
    pub term: Expr,
}

/// What [`product_lane`] places in the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaneForm {
    /// The signed product, two's complement ([`signed_product`]).
    Signed,
    /// The product's magnitude, unsigned.
    Magnitude,
}

/// `±(x·y)` for significands `x`, `y` (unsigned, hidden bit on top) and the product's sign
/// `s`, as a `(Px + Py + 1)`-bit two's complement number, without a negation after the
/// multiply (wires `<name>_…`). With `x^S` the ones' complement of `x` when `s` (`−x − 1`, one
/// bit wider) the rows are
///
/// ```text
///   row k < Py-1:  y[k] ? (x^S) << k : 0                   Σ = ±x·y_low − s·y_low
///   top row:       ((x & y_hid) ^ S) + s  << (Py-1)         = ±x·y_hid·2^(Py-1)
///                  its low Py-1 bits (zero) hold s ? y_low : 0, the correction of the rows above
/// ```
///
/// summed as a tree of carry chains: `±x` of the top row is a short chain beside the other rows'
/// gates, and the negation `(p ^ S) + s` after the product's last chain is gone.
fn signed_product(b: &mut ModuleBuilder, x: &Expr, y: &Expr, s: &Expr, name: &str) -> Expr {
    let (px, py) = (x.width, y.width);
    let w = px + py + 1;
    let sx = b.wire_note(
        &format!("{name}_xs"),
        x.zext(px + 1).xor(&Expr::repl(px + 1, s)),
        "x ^ sign: x, or -x - 1",
    );
    let hid = y.bit(py - 1);
    let top = x
        .and(&Expr::repl(px, &hid))
        .zext(px + 1)
        .xor(&Expr::repl(px + 1, s))
        .add(&s.zext(px + 1));
    let top = b.wire_keep(&format!("{name}_top"), top);
    let mut rows: Vec<Expr> = Vec::new();
    for k in 0..py - 1 {
        let g = b.wire(
            &format!("{name}_r{k}"),
            sx.and(&Expr::repl(px + 1, &y.bit(k))),
        );
        let g = g.sext(w - k);
        rows.push(if k > 0 {
            concat(&[g, Expr::c(0, k)])
        } else {
            g
        });
    }
    let hi = top.sext(w - (py - 1));
    rows.push(if py > 1 {
        let low = y.slice(py - 2, 0).and(&Expr::repl(py - 1, s));
        concat(&[hi, low])
    } else {
        hi
    });
    let mut level = 0;
    while rows.len() > 1 {
        let mut next = Vec::new();
        for (j, pair) in rows.chunks(2).enumerate() {
            if pair.len() == 2 {
                let pp = format!("{name}_pp{level}_{j}");
                next.push(b.wire_keep(&pp, pair[0].add(&pair[1])));
            } else {
                next.push(pair[0].clone());
            }
        }
        rows = next;
        level += 1;
    }
    b.wire_note(name, rows.remove(0), "+-product, two's complement")
}

/// Builds lane `i` (wires `l<i>_…`): unpack without normalization, significand product
/// (signed or its magnitude, `form`), placement in the window. `t` is the width of the term
/// (at least the window width, or narrower when the window's top bits only hold NaN/Inf
/// codes, which are masked).
#[allow(clippy::too_many_arguments)]
pub(crate) fn product_lane(
    b: &mut ModuleBuilder,
    fx: &Format,
    x: &Expr,
    fy: &Format,
    y: &Expr,
    scales: Option<(&Unpacked, &Unpacked)>,
    i: usize,
    t: u32,
    form: LaneForm,
) -> LaneOut {
    let (w, _, _) = window(fx, fy);
    let lx = lane(b, fx, x, &format!("x{i}"));
    let ly = lane(b, fy, y, &format!("y{i}"));
    let (mut ca, mut cb) = (class_of(&lx.u), class_of(&ly.u));
    let mut sign = lx.u.sign.xor(&ly.u.sign);
    if let Some((usx, usy)) = scales {
        ca = class_mul(&ca, &class_of(usx));
        cb = class_mul(&cb, &class_of(usy));
        sign = sign.xor(&usx.sign).xor(&usy.sign);
    }
    let c = class_mul(&ca, &cb);
    let nan = b.wire(&format!("l{i}_nan"), c.nan);
    let inv = b.wire(&format!("l{i}_invalid"), c.invalid);
    let inf = b.wire(&format!("l{i}_inf"), c.inf);
    let zero = b.wire(&format!("l{i}_zero"), c.zero);
    let sign = b.wire(&format!("l{i}_sign"), sign);
    let live = b.wire_note(
        &format!("l{i}_live"),
        any(&[nan.clone(), inf.clone(), zero.clone()]).not(),
        "finite nonzero product",
    );
    let shw = ubits(((1u128 << fx.exp_bits()) - 1) + ((1u128 << fy.exp_bits()) - 1));
    let amt = lx.shift.zext(shw).add(&ly.shift.zext(shw));
    let amt = b.wire(&format!("l{i}_amt"), amt);
    let term = match form {
        LaneForm::Signed => {
            // The sign goes in with the multiply: -(p << a) = (-p) << a, and -p from the
            // rows of the multiplier ([`signed_product`]), not a negation after it.
            let sp = signed_product(b, &lx.sig, &ly.sig, &sign, &format!("l{i}_sprod"));
            let spw = sp.width;
            let sp = b.wire(&format!("l{i}_sprod_live"), sp.and(&Expr::repl(spw, &live)));
            let placed = shl_signed(b, &sp, &amt, w + 1, &format!("l{i}_place"));
            let term = if w + 1 < t {
                placed.sext(t)
            } else {
                placed.slice(t - 1, 0)
            };
            b.wire_note(
                &format!("l{i}_term"),
                term,
                "+-product on the window grid, two's complement",
            )
        }
        LaneForm::Magnitude => {
            let prod = umul(b, &lx.sig, &ly.sig, &format!("l{i}_prod"), true);
            let pw = prod.width;
            let gated = b.wire(&format!("l{i}_prod_live"), prod.and(&Expr::repl(pw, &live)));
            // |product| on the window grid, unsigned; an expression (the reader names it).
            let mag = gated.zext(w).shl(&amt);
            if w < t {
                mag.zext(t)
            } else {
                mag.slice(t - 1, 0)
            }
        }
    };
    LaneOut {
        nan,
        invalid: inv,
        inf,
        zero,
        sign,
        term,
    }
}

/// A two's-complement sum normalized for the rounder (`normalize_signed`).
pub(crate) struct SignedNorm {
    /// Leading-zero count of the ones' complement `s ^ sign` below the sign bit.
    pub lz: Expr,
    /// `|s| = 2^k` with `s < 0`: `|s|` was shifted one place too far (the MSB's exponent is
    /// one more than `lz` says).
    pub over: Expr,
    /// The top bits of `|s| << lz`, MSB set for `s ≠ 0`.
    pub sig: Expr,
    /// OR of the bits of `|s| << lz` below `sig` (0 when `sig` is all of them).
    pub sticky: Expr,
}

/// Normalizes the `w`-bit two's-complement `s` with magnitude `abs` (`|s|`, `w − 1` or `w`
/// bits, formed beside: a carry chain in parallel with the count):
///
/// ```text
///   ones = s[w-2:0] ^ sign            |s|, or |s| − 1 for s < 0
///   lz   = leading zeros of ones      (one more than |s|'s when |s| = 2^k, s < 0)
///   wide = |s| << lz   (w bits)       over = wide[w-1]: that case, |s| = 100..0
///   norm = {wide[w-2] | over, wide[w-3:0]}
/// ```
///
/// With `keep = Some(k)` (`k < w − 1`) only the top `k` bits of `norm` are formed (the
/// shifter's lower bits are dead) and `sticky` = OR of the rest, taken from `|s|` beside the
/// shifter: bit `i` of `|s|` lands below the kept bits exactly when `lz ≤ w − 2 − k − i`, a
/// thermometer mask decoded from `lz` (`<name>_st_mask`). In the `over` case `|s|` is one bit
/// whose position is never below the kept bits. The MSB's exponent is `e(bit w − 2) − lz +
/// over`.
pub(crate) fn normalize_signed(
    b: &mut ModuleBuilder,
    s: &Expr,
    abs: &Expr,
    keep: Option<u32>,
    name: &str,
) -> SignedNorm {
    let w = s.width;
    let neg = s.msb();
    b.comment_owned(vec![
        format!(
            "Normalize: the leading-zero count of the {}-bit ones' complement S ^ sign (|S|, or |S| - 1",
            w - 1
        ),
        "  for S < 0: formed beside the negation; one more than |S|'s when |S| is a power of two),".into(),
        "  |S| shifted by it one bit wider: its top bit catches that case (|S| = 100..0, exponent + 1)".into(),
    ]);
    let ones = b.wire(
        &format!("{name}_ones"),
        s.slice(w - 2, 0).xor(&Expr::repl(w - 1, &neg)),
    );
    let lz = lzc_tree(b, &ones, name);
    let lz = b.wire(&format!("{name}_lzc"), lz);
    let wide = shl_by_count(b, &abs.zext(w), &lz, name);
    let over = b.wire_note(
        &format!("{name}_over"),
        wide.msb(),
        "|S| = 2^k with S < 0: shifted one place too far",
    );
    let norm = concat(&[wide.bit(w - 2).or(&over), wide.slice(w - 3, 0)]);
    match keep {
        Some(k) if k + 1 < w => {
            let kk = w - 2 - k; // bits 0 ..= kk of norm go to the sticky
            b.comment_owned(vec![
                format!(
                    "Sticky beside the shifter: bit i of |S| lands in the {} bits below the kept {k} when lzc <= {kk} - i",
                    kk + 1
                ),
                format!("  (mask bit i = lzc <= {kk} - i, a table of lzc)"),
            ]);
            let arms = (0..=kk as u128)
                .map(|v| {
                    let m = (1u128 << (kk as u128 - v + 1)) - 1;
                    (v, Expr::c(m, kk + 1))
                })
                .collect();
            let mask = b.wire(
                &format!("{name}_st_mask"),
                Expr::case(&lz, arms, &Expr::c(0, kk + 1)),
            );
            let sticky = b.wire(
                &format!("{name}_sticky"),
                abs.slice(kk, 0).and(&mask).red_or(),
            );
            let sig = b.wire(&format!("{name}_sig"), norm.slice(w - 2, kk + 1));
            SignedNorm {
                lz,
                over,
                sig,
                sticky,
            }
        }
        _ => SignedNorm {
            lz,
            over,
            sig: b.wire(&format!("{name}_sig"), norm),
            sticky: Expr::bit_c(false),
        },
    }
}

/// The exact sum `Σ (x_i·Sx)·(y_i·Sy)` as a normalized product-like operand (the form of
/// [`Product`]: MSB of `sig` set for finite nonzero values) and a sticky bit. `keep`:
/// `None` for the whole significand (exact, sticky 0: the addend path); `Some(k)` for its top
/// `k` bits only, the bits below OR-ed into the sticky (`normalize_signed`; the rounder
/// needs P + 1). `other_nan` is a NaN among the other operands (the addend): a NaN operand
/// anywhere makes `+∞ + −∞` quiet (golden::DotUnit: only `0·∞` is invalid next to a NaN).
#[allow(clippy::too_many_arguments)]
pub fn dot_sum(
    b: &mut ModuleBuilder,
    fx: &Format,
    xs: &[Expr],
    fy: &Format,
    ys: &[Expr],
    scales: Option<(&Format, &Expr, &Expr)>,
    other_nan: &Expr,
    rtn: &Expr,
    keep: Option<u32>,
) -> (Product, Expr) {
    let n = xs.len() as u32;
    let w = window(fx, fy).0;
    let t = sum_width(fx, fy, n);
    let sc = scales.map(|(f, sx, sy)| {
        b.comment_owned(vec![format!("Block scales: {}", describe(f))]);
        (unpack(b, f, sx, true, "sx"), unpack(b, f, sy, true, "sy"))
    });
    b.comment_owned(vec![
        format!(
            "Lanes: {n} x ({} x {}) products placed unnormalized in a {w}-bit fixed-point window",
            fx.name(),
            fy.name()
        ),
        format!(
            "  window LSB = 2^{} (lsb x {} + lsb y {}); signed sum in {t} bits",
            lsb_exp(fx) + lsb_exp(fy),
            lsb_exp(fx),
            lsb_exp(fy)
        ),
    ]);
    let mut terms = Vec::new();
    let (mut nans, mut invs, mut pinf, mut ninf, mut zeros, mut signs) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for i in 0..n as usize {
        let scl = sc.as_ref().map(|(a, c)| (a, c));
        let l = product_lane(b, fx, &xs[i], fy, &ys[i], scl, i, t, LaneForm::Signed);
        terms.push(l.term);
        nans.push(l.nan);
        invs.push(l.invalid);
        pinf.push(l.inf.and(&l.sign.not()));
        ninf.push(l.inf.and(&l.sign));
        zeros.push(l.zero);
        signs.push(l.sign);
    }
    b.comment_owned(vec![format!("Adder tree: {n} terms, {t} bits, exact")]);
    let mut level = 0;
    while terms.len() > 1 {
        let mut next = Vec::new();
        for (j, pair) in terms.chunks(2).enumerate() {
            if pair.len() == 2 {
                next.push(b.wire_keep(&format!("s{level}_{j}"), pair[0].add(&pair[1])));
            } else {
                next.push(pair[0].clone());
            }
        }
        terms = next;
        level += 1;
    }
    let s = b.wire("s_sum", terms.remove(0));
    b.comment(&[
        "Specials: a NaN product (NaN element or scale, 0*Inf) -> NaN; +Inf + -Inf -> NaN + invalid",
        "zero sum: the common sign when every product is a zero of one sign, else +0 (-0 for rtn)",
    ]);
    let any_nan = b.wire("s_any_nan", any(&nans));
    let pinf = b.wire("s_pos_inf", any(&pinf));
    let ninf = b.wire("s_neg_inf", any(&ninf));
    let inf_inf = pinf.and(&ninf);
    let nan = b.wire("s_is_nan", any_nan.or(&inf_inf));
    let invalid = b.wire(
        "s_invalid",
        any(&invs).or(&inf_inf.and(&any_nan.or(other_nan).not())),
    );
    let inf = b.wire("s_is_inf", pinf.or(&ninf).and(&nan.not()));
    let neg = s.msb();
    let abs = b.wire("s_abs", Expr::mux(&neg, &Expr::c(0, t).sub(&s), &s));
    let mag = b.wire("s_mag", abs.slice(t - 2, 0));
    // |S| mod 2^(T-1) = 0 from S itself (S = 0, or the unreachable -2^(T-1)).
    let mag_zero = b.wire("s_mag_zero", s.slice(t - 2, 0).eq_c(0));
    let zero = b.wire("s_is_zero", mag_zero.and(&nan.not()).and(&inf.not()));
    let same_sign = all(&signs).or(&any(&signs).not());
    let zsign = Expr::mux(&all(&zeros).and(&same_sign), &signs[0], rtn);
    let sign = Expr::mux(&inf, &ninf, &Expr::mux(&zero, &zsign, &neg));
    let sign = b.wire("s_sign", sign);
    let nrm = normalize_signed(b, &s, &mag, keep, "snrm");
    let (lz, over) = (nrm.lz.clone(), nrm.over.clone());
    let l0 = (lsb_exp(fx) + lsb_exp(fy)) as i64;
    let (mut lo, mut hi) = (l0, l0 + t as i64 - 2);
    if let Some((usx, usy)) = &sc {
        lo += usx.exp_range.0 + usy.exp_range.0;
        hi += usx.exp_range.1 + usy.exp_range.1;
    }
    let ew = sbits(lo.min(-(t as i64)), hi.max(t as i64))
        .max(lz.width + 1)
        .max(
            sc.as_ref()
                .map_or(0, |(a, c)| a.exp.width.max(c.exp.width) + 1),
        );
    // TOP - lzc + over = (TOP + 1) + ~lzc + over: one carry chain, `over` its carry-in.
    let top1 = Expr::named_i(
        "SUM_TOP_EXP_P1",
        l0 + t as i64 - 1,
        ew,
        "exponent of the sum's top value bit (lsb_x + lsb_y + T - 2), plus 1; MSB = this + ~lzc + over",
    );
    // The scales' exponents join the constant beside the lanes (once, not per lane), so the
    // count and `over` meet one carry chain after the normalizer.
    let base = match &sc {
        Some((usx, usy)) => {
            let scl = b.wire_keep("s_scale_exp", usx.exp.sext(ew).add(&usy.exp.sext(ew)));
            b.wire_keep("snrm_exp_base", top1.add(&scl))
        }
        None => top1,
    };
    let exp = base.add(&lz.zext(ew).not()).add(&over.zext(ew));
    let exp = b.wire_note("snrm_exp", exp, "exponent of the sum's MSB");
    let p = Product {
        nan,
        invalid,
        inf,
        zero,
        sign,
        exp,
        exp_range: (lo, hi),
        sig: nrm.sig,
        exp_parts: None,
    };
    (p, nrm.sticky)
}

/// Generates the dot-product core.
pub fn generate(req: &GenRequest) -> Result<GeneratedCore, GenError> {
    validate(req)?;
    let s = shape(req);
    let fx = req.formats.x;
    let fy = req.formats.y.unwrap_or(fx);
    let fr = req.formats.r;
    let top = top_name(req);
    let mut b = ModuleBuilder::new();
    let xs: Vec<Expr> = (0..s.n)
        .map(|i| b.input(&format!("x{i}_i"), fx.k))
        .collect();
    let ys: Vec<Expr> = (0..s.n)
        .map(|i| b.input(&format!("y{i}_i"), fy.k))
        .collect();
    let scales = req
        .formats
        .scale
        .map(|f| (f, b.input("sx_i", f.k), b.input("sy_i", f.k)));
    let fz = z_format(req);
    let z = s.addend.then(|| b.input("z_i", fz.k));
    let modes = mode_ports(&mut b, req);
    let rtn = modes.rm[3].clone();
    let z_nan = match &z {
        Some(z) => b.wire_note(
            "z_nan_early",
            nan_code_test(&fz, z),
            "z is NaN: +Inf + -Inf among the products is then quiet",
        ),
        None => Expr::bit_c(false),
    };
    // Without an addend the rounder reads P + G bits and a sticky: the sum's lower bits
    // are OR-ed beside the normalizing shifter; with one the exact sum goes on.
    let keep = z.is_none().then(|| fr.p + guard_bits(&modes));
    let (p, sticky) = dot_sum(
        &mut b,
        &fx,
        &xs,
        &fy,
        &ys,
        scales.as_ref().map(|(f, a, c)| (f, a, c)),
        &z_nan,
        &rtn,
        keep,
    );
    let ieee_zero = fma_ieee_zero(&fx, &fy);
    let (code, flags) = match &z {
        Some(z) => {
            b.comment(&["Addend: sum + z, one rounding (the fma datapath after its product)"]);
            let o = add_round(&mut b, &p, z, &fz, &fr, ieee_zero, &modes, false);
            (o.code, o.flags)
        }
        None => {
            let rin = RoundIn {
                nan: p.nan.clone(),
                inf: p.inf.clone(),
                zero: p.zero.clone(),
                sign: p.sign.clone(),
                exp: p.exp.clone(),
                exp_range: p.exp_range,
                sig: p.sig.clone(),
                sticky,
                invalid: p.invalid.clone(),
                exp_inc: None,
                ftz: false,
                exp_offset: 0,
            };
            let out = round(&mut b, &fr, &modes, &rin);
            let code = b.wire("round_code", out.code);
            (plus_zero_results(&mut b, &fr, ieee_zero, code), out.flags)
        }
    };
    b.output("r_o", code);
    b.output("flags_o", flags);
    let mut header = vec![
        format!(
            "Unit:        dot  r = sum_{{i<{}}} x_i * y_i{}{} , exact, one rounding",
            s.n,
            if req.formats.scale.is_some() {
                " * 2^(sx + sy)"
            } else {
                ""
            },
            if s.addend { " + z" } else { "" }
        ),
        format!("x:           {}", describe(&fx)),
        format!("y:           {}", describe(&fy)),
    ];
    if let Some(f) = req.formats.scale {
        header.push(format!("scales:      {}", describe(&f)));
    }
    if s.addend {
        header.push(if fz == Format::BINARY32 {
            "z:           binary32 (IEEE 754)".to_string()
        } else {
            format!("z:           {}", describe(&fz))
        });
    }
    header.push(format!("r:           {}", describe(&fr)));
    header.extend(mode_lines(req));
    header.push(format!(
        "Options:     tininess {}; zero results: {}",
        match req.options.tininess {
            Tininess::AfterRounding => "after rounding",
            Tininess::BeforeRounding => "before rounding",
        },
        if ieee_zero {
            "IEEE 754 sign rules"
        } else {
            "always +0 (P3109 / FNUZ operands)"
        }
    ));
    header.push(format!(
        "Datapath:    {} lanes -> {}-bit fixed-point window -> adder tree -> lzc normalize -> {}",
        s.n,
        window(&fx, &fy).0,
        if s.addend {
            "align with z -> add -> lzc normalize -> round"
        } else {
            "round"
        }
    ));
    header.push(
        "Outputs:     r_o = code, flags_o = {invalid, overflow, underflow, inexact}".to_string(),
    );
    finish_core(req, b, &top, header)
}

/// The `dot` unit in the registry ([`super::def`]).
#[derive(Debug)]
pub struct Dot;

impl super::ResultFlags for DotModel {
    #[inline]
    fn result_flags(&self, inputs: &[u64]) -> [u64; 2] {
        DotModel::eval(self, inputs)
    }
}

impl super::UnitDef for Dot {
    fn validate(&self, req: &GenRequest) -> Result<(), GenError> {
        validate(req)
    }

    fn ports(&self, req: &GenRequest, v: &mut Vec<iface::Port>) {
        use super::{input, output, FLAGS_WIDTH};
        use iface::{Direction, Port, Role};
        let s = req.options.dot;
        let f = &req.formats;
        let fy = f.y.unwrap_or(f.x);
        for (role, fmt, name) in [(Role::X, f.x, "x"), (Role::Y, fy, "y")] {
            for i in 0..s.n {
                v.push(Port::element(
                    format!("{name}{i}_i"),
                    Direction::Input,
                    fmt.k,
                    role,
                    i,
                ));
            }
        }
        super::scale_ports(req, v);
        if s.addend {
            v.push(input("z_i", z_format(req).k, Role::Z));
        }
        super::mode_ports(req, v, false);
        v.push(output("r_o", f.r.k, Role::Result));
        v.push(output("flags_o", FLAGS_WIDTH, Role::Flags));
    }

    fn generate(&self, req: &GenRequest) -> Result<GeneratedCore, GenError> {
        generate(req)
    }

    fn model(&self, req: &GenRequest) -> Result<super::GoldenModel, GenError> {
        Ok(super::GoldenModel::of(DotModel::new(req)?))
    }
}
