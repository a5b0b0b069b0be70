//! Operations: conversion, multiply, FMA with a binary32 accumulator, and their power-of-two
//! scaled variants. Each builds the exact result as an [`Exact`] and calls the one rounder
//! [`project`] once.

use crate::format::{Format, Specials};
use crate::round::{nan, project, project_to, Flags, Rounding, Spec, Target};
use crate::value::{Class, Decoded, Exact, ExactClass};

/// Whether `code` is a signaling NaN of an external IEEE format (binary32/16, bfloat16):
/// a NaN whose most significant trailing significand bit is clear.
#[inline]
pub fn is_signaling_nan(f: &Format, code: u32) -> bool {
    f.specials == Specials::Ieee
        && f.k >= 16
        && f.is_nan_code(code)
        && code & (1u32 << (f.man_bits() - 1)) == 0
}

/// Whether `code` is a signaling NaN of a small IEEE-style format (family `ieee`, K < 16)
/// under IEEE 754 §6.2.1 semantics: a NaN whose most significant trailing significand bit is
/// clear. OCP E5M2 and P3109 do not distinguish signaling NaNs, so the model treats every
/// small-format NaN as quiet unless a caller opts in (`--signaling-nan`; CVFPU does).
#[inline]
pub fn is_small_signaling_nan(f: &Format, code: u32) -> bool {
    f.specials == Specials::Ieee
        && f.k < 16
        && f.man_bits() >= 1
        && f.is_nan_code(code)
        && code & (1u32 << (f.man_bits() - 1)) == 0
}

/// Converts `code` of format `from` to format `to` (decode exactly, project once).
/// A signaling NaN operand raises `invalid`.
#[inline]
pub fn convert(from: &Format, code: u32, to: &Format, spec: &Spec, rnd: u32) -> (u32, Flags) {
    let d = from.decode(code);
    let (c, fl) = project(&d.exact(), to, spec, rnd);
    if d.class == Class::Nan && is_signaling_nan(from, code) {
        (c, Flags(fl.0 | Flags::INVALID))
    } else {
        (c, fl)
    }
}

/// P3109 §5.1.2 ωBlockProject for one element: `code` of `from` divided by the power-of-two
/// scale `s`, projected once to `to` (the MX quantizer: binary32 → element with a given block
/// scale). NaN element or scale → NaN; `s = 0` → +0; `s = ±∞` → ±1 for a nonzero element
/// (sign of the element times the scale's), +0 for a zero one; otherwise the exact quotient.
/// A signaling NaN element raises `invalid`.
pub fn convert_scaled(
    from: &Format,
    code: u32,
    s: Scale,
    to: &Format,
    spec: &Spec,
    rnd: u32,
) -> (u32, Flags) {
    let d = from.decode(code);
    let inv = if d.class == Class::Nan && is_signaling_nan(from, code) {
        Flags::INVALID
    } else {
        0
    };
    let x = d.exact();
    let se = s.exact();
    use ExactClass::*;
    let z = match (x.class, se.class) {
        (Nan, _) | (_, Nan) => return nan(to, spec, inv),
        (_, Zero) => Exact::zero(false),
        (Zero, Inf) => Exact::zero(false),
        (_, Inf) => Exact::finite(x.sign ^ se.sign, 0, 1),
        (Inf, _) => Exact::inf(x.sign ^ se.sign),
        (Zero, _) => Exact::zero(x.sign ^ se.sign),
        (Finite, Finite) => {
            debug_assert!(se.sig.is_power_of_two(), "scales are powers of two");
            Exact {
                sign: x.sign ^ se.sign,
                exp: x.exp - se.exp - se.sig.trailing_zeros() as i32,
                ..x
            }
        }
    };
    let (c, fl) = project(&z, to, spec, rnd);
    (c, Flags(fl.0 | inv))
}

/// Projects a binary32 value (given as its bits) to `to`.
#[inline]
pub fn project_f32(to: &Format, bits: u32, spec: &Spec, rnd: u32) -> (u32, Flags) {
    convert(&Format::BINARY32, bits, to, spec, rnd)
}

/// The exact product of two exact values, with `invalid` for 0·∞.
#[inline]
pub fn mul_exact(a: &Exact, b: &Exact) -> (Exact, u8) {
    use ExactClass::*;
    let sign = a.sign ^ b.sign;
    match (a.class, b.class) {
        (Nan, _) | (_, Nan) => (Exact::NAN, 0),
        (Inf, Zero) | (Zero, Inf) => (Exact::NAN, Flags::INVALID),
        (Inf, _) | (_, Inf) => (Exact::inf(sign), 0),
        (Zero, _) | (_, Zero) => (Exact::zero(sign), 0),
        (Finite, Finite) => {
            debug_assert!(!a.sticky && !b.sticky);
            let (sa, ea) = strip(a.sig, a.exp);
            let (sb, eb) = strip(b.sig, b.exp);
            let prod = sa as u128 * sb as u128;
            (reduce(sign, ea + eb, prod), 0)
        }
    }
}

/// Removes trailing zero bits (exactly).
#[inline(always)]
fn strip(sig: u64, exp: i32) -> (u64, i32) {
    let tz = sig.trailing_zeros();
    (sig >> tz, exp + tz as i32)
}

/// A u128 magnitude as an [`Exact`], keeping 64 significant bits and a sticky bit below.
#[inline(always)]
fn reduce(sign: bool, exp: i32, m: u128) -> Exact {
    if m >> 64 == 0 {
        return Exact::finite(sign, exp, m as u64);
    }
    let sh = 64 - m.leading_zeros();
    Exact {
        class: ExactClass::Finite,
        sign,
        exp: exp + sh as i32,
        sig: (m >> sh) as u64,
        sticky: m & ((1u128 << sh) - 1) != 0,
    }
}

/// Multiply `x·y` with x in `fx`, y in `fy` and the result in `fr` (any formats, including
/// binary32), rounded once. NaN in → NaN out; 0·∞ → NaN with `invalid`.
#[inline]
pub fn mul(
    fx: &Format,
    x: u32,
    fy: &Format,
    y: u32,
    fr: &Format,
    spec: &Spec,
    rnd: u32,
) -> (u32, Flags) {
    let (p, inv) = mul_exact(&fx.decode(x).exact(), &fy.decode(y).exact());
    finish(&p, inv, fr, spec, rnd)
}

/// `x·y` with flush-to-zero (`mul --ftz`, the semantics of cores without subnormals such as
/// FloPoCo's FPMult): a subnormal operand is ±0 (sign kept, no flag; so ∞ × subnormal is
/// NaN + invalid like ∞ × 0); a result that would be a subnormal code of `fr` becomes zero
/// — −0 for a negative result when `fr` has −0, else +0 — with underflow and inexact. A
/// result rounded up to the smallest normal is kept.
#[allow(clippy::too_many_arguments)]
pub fn mul_ftz(
    fx: &Format,
    x: u32,
    fy: &Format,
    y: u32,
    fr: &Format,
    spec: &Spec,
    rnd: u32,
) -> (u32, Flags) {
    let (p, inv) = mul_exact(
        &flush_input(fx.decode(x)).exact(),
        &flush_input(fy.decode(y)).exact(),
    );
    let (c, fl) = finish(&p, inv, fr, spec, rnd);
    flush_result(fr, c, fl)
}

/// A subnormal operand as zero of the same sign (flush-to-zero on input; no flag).
#[inline(always)]
fn flush_input(d: Decoded) -> Decoded {
    if d.class == Class::Subnormal {
        Decoded {
            class: Class::Zero,
            sign: d.sign,
            exp: 0,
            sig: 0,
        }
    } else {
        d
    }
}

/// A subnormal result code of `fr` flushed to zero (sign kept when `fr` has −0) with
/// underflow and inexact; any other code unchanged.
pub fn flush_result(fr: &Format, c: u32, fl: Flags) -> (u32, Flags) {
    if fr.decode(c).class != Class::Subnormal {
        return (c, fl);
    }
    let z = if fr.has_neg_zero() {
        c & fr.sign_bit()
    } else {
        0
    };
    (z, Flags(fl.0 | Flags::UNDERFLOW | Flags::INEXACT))
}

/// A power-of-two scale attached to an operand (P3109 §5.5, PopXL `log2_scale`): the code of a
/// scale format (E8M0 or Binary8p1uf), decoded like any other value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// Format of the scale (usually [`Format::E8M0`]).
    pub format: Format,
    /// The scale's code.
    pub code: u32,
}

impl Scale {
    /// A unit scale (E8M0 code 127 = 2^0).
    pub const ONE: Scale = Scale {
        format: Format::E8M0,
        code: 127,
    };

    /// The scale `2^e` in E8M0 (e in −127..=127).
    pub fn pow2(e: i32) -> Scale {
        Scale {
            format: Format::E8M0,
            code: (e + 127).clamp(0, 254) as u32,
        }
    }

    #[inline]
    pub(crate) fn exact(&self) -> Exact {
        self.format.decode(self.code).exact()
    }

    /// Whether `f` can be a block scale format: precision 1 (every code a power of two, or a
    /// special) and at most 8 bits, like E8M0 and Binary8p1uf (P3109 §5.5).
    pub fn check_format(f: &Format) -> Result<(), String> {
        if f.p != 1 || f.k > 8 {
            return Err(format!(
                "scale format {} is not a power-of-two scale of at most 8 bits (precision 1: e8m0, binary8p1uf, …)",
                f.name()
            ));
        }
        Ok(())
    }
}

/// `(x·Sx)·(y·Sy)` rounded once to `fr`. A NaN scale gives NaN.
#[allow(clippy::too_many_arguments)]
pub fn mul_scaled(
    fx: &Format,
    x: u32,
    sx: Scale,
    fy: &Format,
    y: u32,
    sy: Scale,
    fr: &Format,
    spec: &Spec,
    rnd: u32,
) -> (u32, Flags) {
    let (p, inv) = scaled_product(fx, x, sx, fy, y, sy);
    finish(&p, inv, fr, spec, rnd)
}

fn scaled_product(fx: &Format, x: u32, sx: Scale, fy: &Format, y: u32, sy: Scale) -> (Exact, u8) {
    let (a, i1) = mul_exact(&fx.decode(x).exact(), &sx.exact());
    let (b, i2) = mul_exact(&fy.decode(y).exact(), &sy.exact());
    let (p, i3) = mul_exact(&a, &b);
    (p, i1 | i2 | i3)
}

#[inline(always)]
fn finish(p: &Exact, inv: u8, fr: &Format, spec: &Spec, rnd: u32) -> (u32, Flags) {
    if inv != 0 {
        return nan(fr, spec, inv);
    }
    project(p, fr, spec, rnd)
}

/// Options of the binary32-accumulator FMA.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FmaOptions {
    /// Flush subnormal binary32 `z` to zero on input and subnormal results to zero on output
    /// (sign kept; output flush raises underflow and inexact).
    pub ftz: bool,
}

/// Whether zero results follow IEEE 754 sign rules (both small formats have −0), or are
/// always +0 (P3109 / FNUZ semantics: the extended reals have no −0).
#[inline]
pub fn fma_ieee_zero(fx: &Format, fy: &Format) -> bool {
    fx.has_neg_zero() && fy.has_neg_zero()
}

/// `r = x·y + z`, x in `fx`, y in `fy`, z and r binary32, computed exactly and rounded once
/// (P3109 FMA<fx, fy, binary32, binary32, ρ>). NaN results are the canonical 0x7FC00000.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn fma(
    fx: &Format,
    x: u32,
    fy: &Format,
    y: u32,
    z: u32,
    spec: &Spec,
    opts: FmaOptions,
) -> (u32, Flags) {
    let (p, inv) = mul_exact(&fx.decode(x).exact(), &fy.decode(y).exact());
    fma_tail(&p, inv, z, fma_ieee_zero(fx, fy), spec, opts)
}

/// `(x·Sx)·(y·Sy) + z` with a single rounding.
#[allow(clippy::too_many_arguments)]
pub fn fma_scaled(
    fx: &Format,
    x: u32,
    sx: Scale,
    fy: &Format,
    y: u32,
    sy: Scale,
    z: u32,
    spec: &Spec,
    opts: FmaOptions,
) -> (u32, Flags) {
    let (p, inv) = scaled_product(fx, x, sx, fy, y, sy);
    fma_tail(&p, inv, z, fma_ieee_zero(fx, fy), spec, opts)
}

#[inline(always)]
fn fma_tail(
    p: &Exact,
    inv: u8,
    z: u32,
    ieee_zero: bool,
    spec: &Spec,
    opts: FmaOptions,
) -> (u32, Flags) {
    let b32 = Format::BINARY32;
    let mut dz: Decoded = b32.decode(z);
    let snan = if dz.class == Class::Nan && is_signaling_nan(&b32, z) {
        Flags::INVALID
    } else {
        0
    };
    if opts.ftz {
        dz = flush_input(dz);
    }
    let ze = dz.exact();
    use ExactClass::*;
    if inv != 0 || p.class == Nan || ze.class == Nan {
        return nan(&b32, spec, inv | snan);
    }
    let sum = match (p.class, ze.class) {
        (Inf, Inf) if p.sign != ze.sign => return nan(&b32, spec, Flags::INVALID),
        (Inf, _) => Exact::inf(p.sign),
        (_, Inf) => Exact::inf(ze.sign),
        _ => add_exact(p, &ze, spec.rounding),
    };
    let (mut c, mut fl) = project_to(&sum, &Target::BINARY32, spec, 0);
    let sign_bit = b32.sign_bit();
    if opts.ftz && c & 0x7F80_0000 == 0 && c & 0x007F_FFFF != 0 {
        c &= sign_bit;
        fl = Flags(fl.0 | Flags::UNDERFLOW | Flags::INEXACT);
    }
    if !ieee_zero && c & !sign_bit == 0 {
        c = 0;
    }
    (c, fl)
}

/// The exact sum of two finite-or-zero exact values (no sticky inputs). An exact zero sum
/// takes its sign by IEEE 754 §6.3: the common sign of two like-signed zeros, else +0
/// (−0 when rounding toward negative).
#[inline]
pub fn add_exact(a: &Exact, b: &Exact, rounding: Rounding) -> Exact {
    use ExactClass::*;
    let zero_sign = |sa: bool, sb: bool| {
        if sa == sb {
            sa
        } else {
            rounding == Rounding::Rtn
        }
    };
    match (a.class, b.class) {
        (Zero, Zero) => return Exact::zero(zero_sign(a.sign, b.sign)),
        (Zero, _) => return *b,
        (_, Zero) => return *a,
        _ => {}
    }
    debug_assert!(!a.sticky && !b.sticky);
    // Normalize both significands to MSB at bit 62; then the larger exponent is the larger
    // magnitude (up to a factor of 2) and sums cannot overflow 128 bits.
    let la = a.sig.leading_zeros() - 1;
    let lb = b.sig.leading_zeros() - 1;
    let (na, ea) = (a.sig << la, a.exp - la as i32);
    let (nb, eb) = (b.sig << lb, b.exp - lb as i32);
    let ((hs, hsig, he), (ls, lsig, le)) = if ea >= eb {
        ((a.sign, na, ea), (b.sign, nb, eb))
    } else {
        ((b.sign, nb, eb), (a.sign, na, ea))
    };
    let d = (he - le) as u32;
    if d > 64 {
        // The smaller operand is below one unit of the larger's last bit: it only decides the
        // sticky bit, and (when subtracting) borrows one unit.
        let sig = if hs == ls { hsig } else { hsig - 1 };
        return Exact {
            class: Finite,
            sign: hs,
            exp: he,
            sig,
            sticky: true,
        };
    }
    let h = (hsig as u128) << d;
    let l = lsig as u128;
    let (sign, m) = if hs == ls {
        (hs, h + l)
    } else if h >= l {
        (hs, h - l)
    } else {
        (ls, l - h)
    };
    if m == 0 {
        // Exact cancellation of two nonzero values.
        return Exact::zero(rounding == Rounding::Rtn);
    }
    reduce(sign, le, m)
}

/// A conversion `from → to` with fixed modes and its constants derived once: the fast path
/// for batch and verification loops.
///
/// For an IEEE input format (binary32/16, bfloat16) and a deterministic rounding mode, the
/// result of the one rounder depends only on the sign, the exponent of the leading one, the
/// P bits after the leading one and whether anything below them is nonzero (every rounding
/// position of a P-bit target lies at or above the P-th bit after the leading one, and the
/// round bit and sticky bit are among those bits). `Projector` therefore memoizes the rounder
/// over those classes: at construction it calls [`project_to`] once per class on a
/// representative input and afterwards answers with one table look-up. Nothing is computed
/// twice by different code: every table entry is the rounder's own answer, and the
/// equivalence with the direct path is tested on all classes of inputs.
#[derive(Clone, Debug)]
pub struct Projector {
    from: Format,
    to: Target,
    spec: Spec,
    /// Memo table: index = ((sign · 512 + exponent index) << (P + 1)) | (P bits << 1) | sticky;
    /// entry = code | flags << 24.
    table: Option<Vec<u32>>,
}

/// Largest target precision that gets a memo table (2^(P+11) entries).
const MEMO_MAX_P: u32 = 10;

impl Projector {
    /// A projector from `from` (e.g. binary32) to `to`.
    pub fn new(from: Format, to: Format, spec: Spec) -> Projector {
        let mut pr = Projector {
            from,
            to: Target::new(to),
            spec,
            table: None,
        };
        let memo = spec.rounding.random_bits() == 0
            && from.specials == Specials::Ieee
            && from.k >= 16
            && to.p <= MEMO_MAX_P
            && to.p + 1 < from.p
            && to.k <= 24;
        if memo {
            let pb = to.p;
            let n = 1usize << (pb + 11);
            let mut t = vec![0u32; n];
            let man = from.man_bits();
            let min_lsb = from.emin() - man as i32; // exponent of the smallest subnormal
            for (i, e) in t.iter_mut().enumerate() {
                let sticky = (i & 1) as u64;
                let bits = ((i >> 1) & ((1 << pb) - 1)) as u64;
                let expidx = ((i >> (pb + 1)) & 511) as i32;
                let sign = i >> (pb + 10) != 0;
                // Representative: leading one, the P class bits, then a sticky bit at the bottom.
                let sig = (1u64 << man) | (bits << (man - pb)) | sticky;
                let x = Exact::finite(sign, min_lsb + expidx - man as i32, sig);
                let (c, fl) = project_to(&x, &pr.to, &spec, 0);
                *e = c | (fl.0 as u32) << 24;
            }
            pr.table = Some(t);
        }
        pr
    }

    /// Converts one code (`rnd` = random bits for stochastic modes).
    #[inline(always)]
    pub fn convert(&self, code: u32, rnd: u32) -> (u32, Flags) {
        if let Some(t) = &self.table {
            let f = &self.from;
            let man = f.man_bits();
            let mag = code & !f.sign_bit() & f.code_mask();
            let eb = mag >> man;
            let emax_field = (1u32 << f.exp_bits()) - 1;
            if eb != emax_field && mag != 0 {
                // Normalize: leading one at bit `man`; exponent index = log2 position above
                // the smallest subnormal.
                let m = mag & ((1u32 << man) - 1);
                let (sig, expidx) = if eb == 0 {
                    let lz = m.leading_zeros() - (31 - man);
                    (m << lz, man as i32 - lz as i32)
                } else {
                    (m | (1u32 << man), man as i32 + eb as i32 - 1)
                };
                let pb = self.to.format.p;
                let low = man - pb;
                let bits = (sig >> low) & ((1u32 << pb) - 1);
                let sticky = (sig & ((1u32 << low) - 1) != 0) as u32;
                let sign = (code & f.sign_bit() != 0) as u32;
                let idx = (((sign << 9) | expidx as u32) << (pb + 1)) | (bits << 1) | sticky;
                let e = t[idx as usize];
                return (e & 0xFF_FFFF, Flags((e >> 24) as u8));
            }
        }
        self.convert_direct(code, rnd)
    }

    /// The direct path: decode and call the rounder.
    #[inline]
    pub fn convert_direct(&self, code: u32, rnd: u32) -> (u32, Flags) {
        let d = self.from.decode(code);
        let (c, fl) = project_to(&d.exact(), &self.to, &self.spec, rnd);
        if d.class == Class::Nan && is_signaling_nan(&self.from, code) {
            (c, Flags(fl.0 | Flags::INVALID))
        } else {
            (c, fl)
        }
    }

    /// Whether the memo table is in use.
    pub fn is_memoized(&self) -> bool {
        self.table.is_some()
    }
}

/// The binary32-accumulator FMA with fixed formats and modes, prepared for hot loops: the
/// exact products x·y of all code pairs are computed once by [`mul_exact`] (when both
/// formats together have at most 16 bits), then each `x·y + z` is one exact addition and one
/// call of the rounder — the same path as [`fma`].
#[derive(Clone, Debug)]
pub struct FmaUnit {
    fx: Format,
    fy: Format,
    spec: Spec,
    opts: FmaOptions,
    ieee_zero: bool,
    products: Option<std::sync::Arc<Vec<(Exact, u8)>>>,
}

impl FmaUnit {
    /// An FMA of `fx × fy + binary32`.
    pub fn new(fx: Format, fy: Format, spec: Spec, opts: FmaOptions) -> FmaUnit {
        let products = (fx.k + fy.k <= 16).then(|| {
            let mut v = Vec::with_capacity(1 << (fx.k + fy.k));
            for y in 0..fy.num_codes() as u32 {
                for x in 0..fx.num_codes() as u32 {
                    v.push(mul_exact(&fx.decode(x).exact(), &fy.decode(y).exact()));
                }
            }
            std::sync::Arc::new(v)
        });
        FmaUnit {
            fx,
            fy,
            spec,
            opts,
            ieee_zero: fma_ieee_zero(&fx, &fy),
            products,
        }
    }

    /// `x·y + z`, rounded once to binary32.
    #[inline]
    pub fn eval(&self, x: u32, y: u32, z: u32) -> (u32, Flags) {
        self.eval_spec(x, y, z, &self.spec)
    }

    /// `x·y + z` with another rounding/saturation spec (run-time mode ports).
    #[inline]
    pub fn eval_spec(&self, x: u32, y: u32, z: u32, spec: &Spec) -> (u32, Flags) {
        let (x, y) = (x & self.fx.code_mask(), y & self.fy.code_mask());
        let (p, inv) = match &self.products {
            Some(t) => t[((y << self.fx.k) | x) as usize],
            None => mul_exact(&self.fx.decode(x).exact(), &self.fy.decode(y).exact()),
        };
        fma_tail(&p, inv, z, self.ieee_zero, spec, self.opts)
    }

    /// The same FMA with another rounding mode (for run-time `rm_i` ports).
    pub fn spec(&self) -> &Spec {
        &self.spec
    }
}
/// `x·y + z` with an exact addend of any magnitude (a binary64 value, for one) instead of a
/// binary32 code, computed exactly and rounded once to binary32 (as [`fma`]; `z_snan`: the
/// addend was a signaling NaN, which raises invalid).
pub fn fma_exact_addend(
    fx: &Format,
    x: u32,
    fy: &Format,
    y: u32,
    z: &Exact,
    z_snan: bool,
    spec: &Spec,
) -> (u32, Flags) {
    let b32 = Format::BINARY32;
    let (p, inv) = mul_exact(&fx.decode(x).exact(), &fy.decode(y).exact());
    let (sum, inv2) = crate::add_any_exact(&p, z, spec.rounding);
    let inv = inv | inv2 | if z_snan { Flags::INVALID } else { 0 };
    if inv != 0 || sum.class == ExactClass::Nan {
        return nan(&b32, spec, inv);
    }
    let (mut c, fl) = project_to(&sum, &Target::BINARY32, spec, 0);
    if !fma_ieee_zero(fx, fy) && c == b32.sign_bit() {
        c = 0;
    }
    (c, fl)
}
