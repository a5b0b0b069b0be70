//! Operations: conversion, multiply, FMA with a binary32 accumulator, and their power-of-two
//! scaled variants. Each builds the exact result as an [`Exact`] and calls the one rounder
//! [`project`] once.

use crate::format::{Format, Specials};
use crate::round::{nan, project, Flags, Rounding, Spec};
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
    fn exact(&self) -> Exact {
        self.format.decode(self.code).exact()
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
    if opts.ftz && dz.class == Class::Subnormal {
        dz = Decoded {
            class: Class::Zero,
            sign: dz.sign,
            exp: 0,
            sig: 0,
        };
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
    let (mut c, mut fl) = project(&sum, &b32, spec, 0);
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
