//! Dot products with optional block scales and addend, summed exactly and rounded once
//! (P3109 interim report §5.3.2 BlockDotProduct; OCP MX v1.0 §6 "Dot product" with E8M0
//! scales):
//!
//! ```text
//!   r = Round_fr( Σ_{i<N} (x_i · Sx) · (y_i · Sy)  +  z )
//! ```
//!
//! with every product and the whole sum exact (a two's-complement fixed-point accumulator
//! sized from the formats, [`DotUnit::acc_bits`]) and **one** projection by the one rounder
//! ([`crate::project_to`]). Choices, documented in docs/semantics.md ("Dot products"):
//!
//! - a NaN element, NaN scale or NaN addend gives NaN; `0·∞` anywhere (an element times a
//!   scale, or two scaled elements) and `+∞ + −∞` raise invalid and give NaN; a signaling
//!   binary32 `z` raises invalid (as `fma`);
//! - the products are formed as `(x_i·Sx)·(y_i·Sy)`, exactly as [`crate::fma_scaled`], so
//!   `N = 1` is the scaled FMA bit for bit;
//! - an exact zero sum takes its sign by IEEE 754 §6.3 (the common sign when every term is a
//!   zero of one sign, else +0, −0 when rounding toward negative); when an operand format has
//!   no −0 (P3109, FNUZ) every zero result is +0 (as [`crate::fma_ieee_zero`]).

use crate::format::Format;
use crate::ops::{is_signaling_nan, mul_exact, Scale};
use crate::round::{nan, project_to, Flags, Spec, Target};
use crate::value::{Exact, ExactClass};

/// Largest number of elements of one dot product.
pub const MAX_DOT_N: usize = 64;

/// Largest exact accumulator, in bits (wide enough for every format with K ≤ 16 and
/// scales of K ≤ 8 bits).
pub const MAX_ACC_BITS: u32 = 64 * 64;

/// A dot-product unit: formats and shape fixed, the accumulator geometry derived once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DotUnit {
    /// Element format of x.
    pub fx: Format,
    /// Element format of y.
    pub fy: Format,
    /// Number of elements.
    pub n: usize,
    /// Format of the block scales (both x and y carry one), if any.
    pub scale: Option<Format>,
    /// Whether a binary32 addend `z` is added.
    pub addend: bool,
    /// Result format.
    pub fr: Format,
    target: Target,
    lsb: i32,
    limbs: usize,
    ieee_zero: bool,
}

/// Exponent of the least significant bit of the smallest nonzero value of `f`.
pub fn lsb_exp(f: &Format) -> i32 {
    f.emin() - f.man_bits() as i32
}

/// `⌈log2 n⌉` (0 for n ≤ 1).
pub fn clog2(n: u64) -> u32 {
    64 - n.saturating_sub(1).leading_zeros()
}

impl DotUnit {
    /// A unit of `n` elements `fx × fy`, with block scales of format `scale`, an optional
    /// binary32 addend, rounding to `fr`.
    pub fn new(
        fx: Format,
        fy: Format,
        n: usize,
        scale: Option<Format>,
        addend: bool,
        fr: Format,
    ) -> Result<DotUnit, String> {
        if !(1..=MAX_DOT_N).contains(&n) {
            return Err(format!(
                "a dot product has 1..={MAX_DOT_N} elements, not {n}"
            ));
        }
        if let Some(s) = scale {
            crate::Scale::check_format(&s)?;
        }
        if fr.p > 30 {
            return Err(format!(
                "result format {} has precision {}; the dot product rounds to formats of at most 30 bits of precision (binary32 and smaller)",
                fr.name(),
                fr.p
            ));
        }
        let (lo, hi) = Self::range(&fx, &fy, n, scale.as_ref(), addend);
        let bits = (hi - lo + 2) as u32;
        if bits > MAX_ACC_BITS {
            return Err(format!(
                "the exact sum of {n} products {} × {}{} spans {bits} bits; fp8gen's dot product supports at most {MAX_ACC_BITS}",
                fx.name(),
                fy.name(),
                scale.map(|s| format!(" with {} scales", s.name())).unwrap_or_default()
            ));
        }
        Ok(DotUnit {
            fx,
            fy,
            n,
            scale,
            addend,
            fr,
            target: Target::new(fr),
            lsb: lo,
            limbs: bits.div_ceil(64) as usize,
            ieee_zero: crate::fma_ieee_zero(&fx, &fy),
        })
    }

    /// `(lsb, msb)`: exponents of the lowest bit any term can have and of the highest bit
    /// of any sum's magnitude.
    fn range(
        fx: &Format,
        fy: &Format,
        n: usize,
        scale: Option<&Format>,
        addend: bool,
    ) -> (i32, i32) {
        let (slo, shi) = scale.map_or((0, 0), |s| (2 * lsb_exp(s), 2 * (s.emax() + 1)));
        let mut lo = lsb_exp(fx) + lsb_exp(fy) + slo;
        // every product is below 2^((emax_x + 1) + (emax_y + 1) + scales)
        let mut hi = fx.emax() + 1 + fy.emax() + 1 + shi + clog2(n as u64 + 1) as i32;
        if addend {
            let b = Format::BINARY32;
            lo = lo.min(lsb_exp(&b));
            hi = hi.max(b.emax() + 1) + 1;
        }
        (lo, hi)
    }

    /// Width of the exact two's-complement accumulator (sign bit included).
    pub fn acc_bits(&self) -> u32 {
        let (lo, hi) = Self::range(&self.fx, &self.fy, self.n, self.scale.as_ref(), self.addend);
        (hi - lo + 2) as u32
    }

    /// The dot product of `xs` and `ys` (each `n` codes), scale codes `sx`, `sy` (ignored
    /// without a scale format) and addend `z` (binary32 code, ignored without an addend).
    pub fn eval(
        &self,
        xs: &[u32],
        ys: &[u32],
        sx: u32,
        sy: u32,
        z: u32,
        spec: &Spec,
    ) -> (u32, Flags) {
        self.eval_with(xs, ys, sx, sy, z, None, spec)
    }

    /// [`DotUnit::eval`] with the addend `wide_z` = (exact value, whether it is a signaling
    /// NaN) in place of the binary32 code `z` when given: the accumulator then also spans
    /// the addend's bits.
    #[allow(clippy::too_many_arguments)]
    fn eval_with(
        &self,
        xs: &[u32],
        ys: &[u32],
        sx: u32,
        sy: u32,
        z: u32,
        wide_z: Option<(&Exact, bool)>,
        spec: &Spec,
    ) -> (u32, Flags) {
        let mut inv = 0u8;
        let mut any_nan = false;
        let (mut pos_inf, mut neg_inf) = (false, false);
        // Terms that are zeros: their count and whether all share a sign.
        let mut zero_terms = 0usize;
        let mut zero_sign: Option<bool> = None;
        let mut mixed_zero = false;
        let (lsb, limbs) = match wide_z {
            Some((w, _)) if w.class == ExactClass::Finite => {
                // the terms' window and the addend's 64-bit significand, with a sign bit and
                // a carry above both
                let top = (self.lsb + 64 * self.limbs as i32).max(w.exp + 66);
                let lo = self.lsb.min(w.exp);
                (lo, ((top - lo) as u32).div_ceil(64) as usize)
            }
            _ => (self.lsb, self.limbs),
        };
        let mut fixed = [0u64; MAX_ACC_BITS as usize / 64];
        let mut wide = Vec::new();
        let acc = if limbs <= fixed.len() {
            &mut fixed[..limbs]
        } else {
            wide.resize(limbs, 0u64);
            &mut wide[..]
        };
        let scales = self.scale.map(|f| {
            (
                Scale {
                    format: f,
                    code: sx & f.code_mask(),
                }
                .exact(),
                Scale {
                    format: f,
                    code: sy & f.code_mask(),
                }
                .exact(),
            )
        });
        let mut term = |t: &Exact, acc: &mut [u64]| match t.class {
            ExactClass::Nan => any_nan = true,
            ExactClass::Inf => {
                if t.sign {
                    neg_inf = true
                } else {
                    pos_inf = true
                }
            }
            ExactClass::Zero => {
                zero_terms += 1;
                match zero_sign {
                    None => zero_sign = Some(t.sign),
                    Some(s) if s != t.sign => mixed_zero = true,
                    _ => {}
                }
            }
            ExactClass::Finite => {
                debug_assert!(!t.sticky && t.exp >= lsb);
                add_at(acc, (t.exp - lsb) as u32, t.sig, t.sign);
            }
        };
        for i in 0..self.n {
            let x = self.fx.decode(xs[i] & self.fx.code_mask()).exact();
            let y = self.fy.decode(ys[i] & self.fy.code_mask()).exact();
            let (p, i3) = match &scales {
                Some((ex, ey)) => {
                    let (a, i1) = mul_exact(&x, ex);
                    let (b, i2) = mul_exact(&y, ey);
                    let (p, i3) = mul_exact(&a, &b);
                    (p, i1 | i2 | i3)
                }
                None => mul_exact(&x, &y),
            };
            inv |= i3;
            term(&p, acc);
        }
        let b32 = Format::BINARY32;
        if let Some((w, snan)) = wide_z {
            if snan {
                inv |= Flags::INVALID;
            }
            term(w, acc);
        } else if self.addend {
            if b32.decode(z).is_nan() && is_signaling_nan(&b32, z) {
                inv |= Flags::INVALID;
            }
            term(&b32.decode(z).exact(), acc);
        }
        if inv != 0 || any_nan {
            return nan(&self.fr, spec, inv);
        }
        let sum = if pos_inf && neg_inf {
            return nan(&self.fr, spec, Flags::INVALID);
        } else if pos_inf || neg_inf {
            Exact::inf(neg_inf)
        } else {
            match to_exact(acc, lsb) {
                Some(e) => e,
                None => {
                    let terms = self.n + (self.addend || wide_z.is_some()) as usize;
                    let sign = if zero_terms == terms && !mixed_zero {
                        zero_sign.unwrap_or(false)
                    } else {
                        spec.rounding == crate::Rounding::Rtn
                    };
                    Exact::zero(sign)
                }
            }
        };
        let (mut c, fl) = project_to(&sum, &self.target, spec, 0);
        if !self.ieee_zero && self.fr.has_neg_zero() && c == self.fr.sign_bit() {
            c = 0;
        }
        (c, fl)
    }
}

impl DotUnit {
    /// The dot product with an exact addend of any magnitude (a binary64 value, for one) in
    /// place of the binary32 `z`: `Σ (x_i·Sx)·(y_i·Sy) + z` exact, rounded once. `z_snan`:
    /// the addend was a signaling NaN (raises invalid, as a binary32 one does). The unit's
    /// own addend (if any) is not used.
    #[allow(clippy::too_many_arguments)]
    pub fn eval_exact_addend(
        &self,
        xs: &[u32],
        ys: &[u32],
        sx: u32,
        sy: u32,
        z: &Exact,
        z_snan: bool,
        spec: &Spec,
    ) -> (u32, Flags) {
        debug_assert!(!z.sticky);
        self.eval_with(xs, ys, sx, sy, 0, Some((z, z_snan)), spec)
    }

    /// Whether an element of `xs` or `ys` is a signaling NaN when small IEEE-style NaNs with
    /// a clear top trailing bit count as signaling ([`crate::is_small_signaling_nan`], IEEE 754
    /// §6.2; CVFPU): the dot product then raises invalid.
    pub fn has_small_signaling_nan(&self, xs: &[u32], ys: &[u32]) -> bool {
        let snan = |f: &Format, c: u32| crate::is_small_signaling_nan(f, c & f.code_mask());
        xs.iter().any(|&x| snan(&self.fx, x)) || ys.iter().any(|&y| snan(&self.fy, y))
    }
}

/// Bits of the exact product of an `fx` and an `fy` value on the fixed-point grid of the
/// smallest product's last bit: every finite product is below `2^product_bits` units.
pub fn product_bits(fx: &Format, fy: &Format) -> u32 {
    ((fx.emax() + 1 + fy.emax() + 1) - (lsb_exp(fx) + lsb_exp(fy))) as u32
}

/// Default guard bits of the exact accumulator: `2^16` products of any magnitude sum
/// without overflow.
pub const DEFAULT_GUARD_BITS: u32 = 16;

/// The exact accumulator of `mac --acc exact`: `acc ← acc + x·y` with no rounding, in a
/// two's-complement register of [`ExactAcc::bits`] = product bits + guard bits + 1 (sign),
/// the sum of at most `2^guard` products of any magnitude; projected once on output.
///
/// Specials are state: a NaN product (NaN operand, `0·∞`) makes the sum NaN (invalid for
/// `0·∞`), infinities of both signs make it NaN + invalid, an infinity of one sign makes it
/// that infinity. An exact zero sum follows IEEE 754 §6.3 (the common sign when every term
/// was a zero of one sign, else +0, −0 rounding toward negative; +0 for P3109 / FNUZ
/// operands). A sum that leaves the register (guard overflow) is never silent: from then
/// until the next clear the output is NaN with flags invalid | overflow (a combination no
/// arithmetic result has).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExactAcc {
    /// Element format of x.
    pub fx: Format,
    /// Element format of y.
    pub fy: Format,
    /// Guard bits.
    pub guard: u32,
    lsb: i32,
    bits: u32,
    acc: [u64; 4],
    /// State: NaN (from a product), invalid (0·∞), +∞ seen, −∞ seen, guard overflow.
    nan: bool,
    invalid: bool,
    pinf: bool,
    ninf: bool,
    ovf: bool,
    /// Every term so far was a zero; a zero of each sign was seen.
    all_zero: bool,
    zpos: bool,
    zneg: bool,
}

impl ExactAcc {
    /// An accumulator of `fx × fy` products with `guard` guard bits, cleared.
    pub fn new(fx: Format, fy: Format, guard: u32) -> Result<ExactAcc, String> {
        let bits = product_bits(&fx, &fy) + guard + 1;
        if !(1..=32).contains(&guard) {
            return Err(format!(
                "--guard-bits {guard} is out of range; use 1..=32 (2^N products of any magnitude sum without overflow)"
            ));
        }
        if bits > 128 {
            return Err(format!(
                "the exact accumulator of {} x {} products needs {bits} bits; fp8gen supports up to 128 (element formats with up to 6 exponent bits, e.g. e4m3, e5m2)",
                fx.name(),
                fy.name()
            ));
        }
        let mut a = ExactAcc {
            fx,
            fy,
            guard,
            lsb: lsb_exp(&fx) + lsb_exp(&fy),
            bits,
            acc: [0; 4],
            nan: false,
            invalid: false,
            pinf: false,
            ninf: false,
            ovf: false,
            all_zero: true,
            zpos: false,
            zneg: false,
        };
        a.clear();
        Ok(a)
    }

    /// Width of the two's-complement register (sign included).
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Exponent of the register's least significant bit.
    pub fn lsb(&self) -> i32 {
        self.lsb
    }

    /// The reset state: an empty sum (+0).
    pub fn clear(&mut self) {
        self.acc = [0; 4];
        self.nan = false;
        self.invalid = false;
        self.pinf = false;
        self.ninf = false;
        self.ovf = false;
        self.all_zero = true;
        self.zpos = false;
        self.zneg = false;
    }

    /// `acc ← (clear ? 0 : acc) + x·y`, exactly.
    pub fn step(&mut self, clear: bool, x: u32, y: u32) {
        if clear {
            self.clear();
        }
        let xe = self.fx.decode(x & self.fx.code_mask()).exact();
        let ye = self.fy.decode(y & self.fy.code_mask()).exact();
        let (p, inv) = mul_exact(&xe, &ye);
        self.invalid |= inv != 0;
        if p.class != ExactClass::Zero {
            self.all_zero = false;
        }
        match p.class {
            ExactClass::Nan => self.nan = true,
            ExactClass::Inf => {
                if p.sign {
                    self.ninf = true
                } else {
                    self.pinf = true
                }
            }
            ExactClass::Zero => {
                if p.sign {
                    self.zneg = true
                } else {
                    self.zpos = true
                }
            }
            ExactClass::Finite => {
                let before = self.acc;
                add_at(&mut self.acc, (p.exp - self.lsb) as u32, p.sig, p.sign);
                // Signed overflow of the `bits`-bit register: operands of one sign, a
                // result of the other (the limbs are wider, so compare the register's sign).
                let sb =
                    |a: &[u64; 4]| (a[(self.bits - 1) as usize / 64] >> ((self.bits - 1) % 64)) & 1;
                let same_sign = p.sign == (sb(&before) == 1);
                if same_sign && sb(&before) != sb(&self.acc) {
                    self.ovf = true;
                }
                // Wrap to the register's width (sign-extend bit bits-1).
                let neg = sb(&self.acc) == 1;
                for (i, l) in self.acc.iter_mut().enumerate() {
                    let lo = i as u32 * 64;
                    if lo >= self.bits {
                        *l = if neg { u64::MAX } else { 0 };
                    } else if lo + 64 > self.bits {
                        let k = self.bits - lo;
                        let m = (1u64 << k) - 1;
                        *l = if neg { *l | !m } else { *l & m };
                    }
                }
            }
        }
    }

    /// The sum projected once to `fr` with `spec`.
    pub fn result(&self, fr: &Format, spec: &Spec) -> (u32, Flags) {
        if self.ovf {
            let (c, _) = nan(fr, spec, 0);
            return (c, Flags(Flags::INVALID | Flags::OVERFLOW));
        }
        if self.nan || self.invalid {
            return nan(fr, spec, if self.invalid { Flags::INVALID } else { 0 });
        }
        if self.pinf && self.ninf {
            return nan(fr, spec, Flags::INVALID);
        }
        let sum = if self.pinf || self.ninf {
            Exact::inf(self.ninf)
        } else {
            let mut a = self.acc;
            match to_exact(&mut a, self.lsb) {
                Some(e) => e,
                None => Exact::zero(if self.all_zero && !(self.zpos && self.zneg) {
                    self.zneg
                } else {
                    spec.rounding == crate::Rounding::Rtn
                }),
            }
        };
        let (mut c, fl) = project_to(&sum, &Target::new(*fr), spec, 0);
        if !crate::fma_ieee_zero(&self.fx, &self.fy) && fr.has_neg_zero() && c == fr.sign_bit() {
            c = 0;
        }
        (c, fl)
    }
}

/// `acc += (−1)^neg · sig · 2^off` in two's complement (wrapping at the accumulator's width,
/// which [`DotUnit::new`] sized so that no sum wraps).
fn add_at(acc: &mut [u64], off: u32, sig: u64, neg: bool) {
    let (w, b) = ((off / 64) as usize, off % 64);
    let lo = sig << b;
    let hi = if b == 0 { 0 } else { sig >> (64 - b) };
    let parts = [lo, hi];
    let mut carry = false;
    for (i, limb) in acc.iter_mut().enumerate().skip(w) {
        let p = parts.get(i - w).copied().unwrap_or(0);
        if neg {
            let (d, b1) = limb.overflowing_sub(p);
            let (d, b2) = d.overflowing_sub(carry as u64);
            *limb = d;
            carry = b1 | b2;
        } else {
            let (s, c1) = limb.overflowing_add(p);
            let (s, c2) = s.overflowing_add(carry as u64);
            *limb = s;
            carry = c1 | c2;
        }
        if !carry && i > w {
            break;
        }
    }
}

/// The accumulator's value as an exact intermediate (64 significant bits and a sticky bit
/// below, [`Exact`]'s contract), or `None` when it is zero.
fn to_exact(acc: &mut [u64], lsb: i32) -> Option<Exact> {
    let neg = acc.last().is_some_and(|l| l >> 63 == 1);
    if neg {
        // magnitude = two's-complement negation
        let mut carry = true;
        for l in acc.iter_mut() {
            let (s, c) = (!*l).overflowing_add(carry as u64);
            *l = s;
            carry = c;
        }
    }
    let top = acc.iter().rposition(|&l| l != 0)?;
    // bit index of the leading one
    let msb = top as u32 * 64 + 63 - acc[top].leading_zeros();
    if msb < 64 {
        return Some(Exact::finite(neg, lsb, acc[0]));
    }
    let low = msb - 63; // the bit index of the kept significand's LSB
    let (w, b) = ((low / 64) as usize, low % 64);
    let mut sig = acc[w] >> b;
    if b != 0 {
        sig |= acc[w + 1] << (64 - b);
    }
    let sticky = acc[..w].iter().any(|&l| l != 0) || (b != 0 && acc[w] & ((1u64 << b) - 1) != 0);
    Some(Exact {
        class: ExactClass::Finite,
        sign: neg,
        exp: lsb + low as i32,
        sig,
        sticky,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{fma, fma_scaled, FmaOptions, Rounding, Saturation};

    fn spec(r: Rounding) -> Spec {
        Spec {
            saturation: Saturation::SatNone,
            ..Spec::ieee(r)
        }
    }

    #[test]
    fn one_element_is_the_fma() {
        let e4 = Format::parse("e4m3").unwrap();
        let u = DotUnit::new(e4, e4, 1, None, true, Format::BINARY32).unwrap();
        let zs = [
            0u32,
            0x8000_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x0000_0001,
            0x7f80_0000,
            0x7fc0_0000,
            0x3b00_0000,
            0x7f7f_ffff,
        ];
        for r in [Rounding::Rne, Rounding::Rtn, Rounding::Rtz, Rounding::Rto] {
            let s = spec(r);
            for x in 0..256 {
                for y in (0..256).step_by(7) {
                    for &z in &zs {
                        assert_eq!(
                            u.eval(&[x], &[y], 0, 0, z, &s),
                            fma(&e4, x, &e4, y, z, &s, FmaOptions::default()),
                            "x {x:#x} y {y:#x} z {z:#x} {r}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn one_scaled_element_is_the_scaled_fma() {
        let e5 = Format::parse("e5m2").unwrap();
        let u = DotUnit::new(e5, e5, 1, Some(Format::E8M0), true, Format::BINARY32).unwrap();
        let s = spec(Rounding::Rne);
        for x in (0..256).step_by(3) {
            for y in (0..256).step_by(5) {
                for (sx, sy) in [(127, 127), (0, 254), (100, 160), (255, 127), (254, 254)] {
                    for z in [0u32, 0x4000_0000, 0x8000_0001] {
                        let want = fma_scaled(
                            &e5,
                            x,
                            Scale {
                                format: Format::E8M0,
                                code: sx,
                            },
                            &e5,
                            y,
                            Scale {
                                format: Format::E8M0,
                                code: sy,
                            },
                            z,
                            &s,
                            FmaOptions::default(),
                        );
                        assert_eq!(
                            u.eval(&[x], &[y], sx, sy, z, &s),
                            want,
                            "{x} {y} {sx} {sy} {z:#x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn accumulator_carries_and_cancels_exactly() {
        let e4 = Format::parse("e4m3").unwrap();
        let u = DotUnit::new(e4, e4, 4, None, false, Format::BINARY32).unwrap();
        let s = spec(Rounding::Rne);
        // 448·448 − 448·448 + 2^-9·2^-9 − 0 = 2^-18 exactly
        let (c, f) = u.eval(
            &[0x7e, 0xfe, 0x01, 0x00],
            &[0x7e, 0x7e, 0x01, 0x00],
            0,
            0,
            0,
            &s,
        );
        assert_eq!((c, f.0), (0x3680_0000, 0));
        // exact cancellation: +0 (−0 when rounding toward negative)
        let (c, _) = u.eval(&[0x38, 0xb8, 0, 0], &[0x38, 0x38, 0, 0], 0, 0, 0, &s);
        assert_eq!(c, 0);
        let (c, _) = u.eval(
            &[0x38, 0xb8, 0, 0],
            &[0x38, 0x38, 0, 0],
            0,
            0,
            0,
            &spec(Rounding::Rtn),
        );
        assert_eq!(c, 0x8000_0000);
        // all products −0: −0
        let (c, _) = u.eval(
            &[0x80, 0x80, 0x80, 0x80],
            &[0x38, 0x38, 0x38, 0x38],
            0,
            0,
            0,
            &s,
        );
        assert_eq!(c, 0x8000_0000);
        // +∞ + −∞ is invalid (E5M2 has infinities)
        let e5 = Format::parse("e5m2").unwrap();
        let u5 = DotUnit::new(e5, e5, 2, None, false, Format::BINARY32).unwrap();
        let (c, f) = u5.eval(&[0x7c, 0xfc], &[0x3c, 0x3c], 0, 0, 0, &s);
        assert_eq!((c, f.0), (0x7fc0_0000, Flags::INVALID));
    }

    #[test]
    fn sticky_below_64_bits() {
        // 2^40 + 2^-30 with an E8M0-scaled sum: the tiny term only sets sticky; RTP rounds up.
        let e5 = Format::parse("e5m2").unwrap();
        let u = DotUnit::new(e5, e5, 2, None, true, Format::BINARY32).unwrap();
        let one = 0x3c; // 1.0
        let tiny = 0x01; // 2^-16
        let s = spec(Rounding::Rtp);
        // 1·1 + 2^-16·2^-16 + 2^40: rounded up to the next binary32 above 2^40
        let (c, f) = u.eval(&[one, tiny], &[one, tiny], 0, 0, 0x5380_0000, &s);
        assert_eq!(c, 0x5380_0001);
        assert!(f.inexact());
    }

    #[test]
    fn exact_accumulator_equals_the_dot_product_and_flags_guard_overflow() {
        let mut h = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            h ^= h << 13;
            h ^= h >> 7;
            h ^= h << 17;
            h
        };
        for name in ["e4m3", "e5m2", "e4m3fnuz", "binary8p3se", "e2m1"] {
            let f = Format::parse(name).unwrap();
            for r in [Rounding::Rne, Rounding::Rtn, Rounding::Rto] {
                let s = spec(r);
                for _ in 0..300 {
                    let n = 1 + (next() % 64) as usize;
                    let xs: Vec<u32> = (0..n).map(|_| next() as u32 & f.code_mask()).collect();
                    let ys: Vec<u32> = (0..n).map(|_| next() as u32 & f.code_mask()).collect();
                    let mut a = ExactAcc::new(f, f, 16).unwrap();
                    for i in 0..n {
                        a.step(i == 0, xs[i], ys[i]);
                    }
                    let d = DotUnit::new(f, f, n, None, false, Format::BINARY32).unwrap();
                    assert_eq!(
                        a.result(&Format::BINARY32, &s),
                        d.eval(&xs, &ys, 0, 0, 0, &s),
                        "{name} {r} {xs:x?} {ys:x?}"
                    );
                }
            }
        }
        // 448^2 three times with one guard bit: 3 * 200704 >= 2^(18+1) overflows.
        let e4 = Format::parse("e4m3").unwrap();
        let mut a = ExactAcc::new(e4, e4, 1).unwrap();
        let s = spec(Rounding::Rne);
        a.step(true, 0x7e, 0x7e);
        a.step(false, 0x7e, 0x7e);
        assert_eq!(a.result(&Format::BINARY32, &s), (0x48c4_0000, Flags(0)));
        a.step(false, 0x7e, 0x7e);
        assert_eq!(
            a.result(&Format::BINARY32, &s),
            (0x7fc0_0000, Flags(Flags::INVALID | Flags::OVERFLOW))
        );
        a.step(true, 0x38, 0x38);
        assert_eq!(a.result(&Format::BINARY32, &s), (0x3f80_0000, Flags(0)));
    }
}
