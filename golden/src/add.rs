//! Addition and subtraction of two small-float codes: `x ± y` with x in `fx`, y in `fy` and
//! the result in any format `fr`, computed exactly ([`add_exact`]) and rounded once by the one
//! rounder ([`project`]).
//!
//! Specials (IEEE 754 §6.1, §6.2, §7.2):
//!
//! | x            | y (after negation for `x − y`) | result                               |
//! |--------------|--------------------------------|--------------------------------------|
//! | NaN          | any                            | NaN (no flag, as `mul`: every operand NaN is quiet) |
//! | any          | NaN                            | NaN                                  |
//! | +∞           | −∞ (or −∞, +∞)                 | NaN + invalid                        |
//! | ±∞           | finite or ∞ of the same sign   | ±∞ (then saturated by the spec)      |
//! | finite       | ±∞                             | ±∞                                   |
//! | ±0           | ±0 (same sign)                 | that zero                            |
//! | finite       | finite, exact sum 0            | +0, −0 when rounding toward negative (IEEE 754 §6.3) |
//!
//! Formats without −0 never decode to −0, formats without NaN or ∞ map NaN results to the
//! spec's `nonan_code` with invalid, all by the rounder, exactly as [`crate::mul`] does.

use crate::format::Format;
use crate::ops::add_exact;
use crate::round::{nan, project, Flags, Rounding, Spec};
use crate::value::{Exact, ExactClass};

/// The exact sum `a + b` of any two exact values (no sticky inputs), with `invalid` for
/// ∞ − ∞. NaN in → NaN; the zero sign of an exact zero sum follows IEEE 754 §6.3
/// ([`add_exact`]).
#[inline]
pub fn add_any_exact(a: &Exact, b: &Exact, rounding: Rounding) -> (Exact, u8) {
    use ExactClass::*;
    match (a.class, b.class) {
        (Nan, _) | (_, Nan) => (Exact::NAN, 0),
        (Inf, Inf) if a.sign != b.sign => (Exact::NAN, Flags::INVALID),
        (Inf, _) => (Exact::inf(a.sign), 0),
        (_, Inf) => (Exact::inf(b.sign), 0),
        _ => (add_exact(a, b, rounding), 0),
    }
}

/// `x + y` (or `x − y` when `sub`) with x in `fx`, y in `fy`, rounded once to `fr` (any
/// format, including binary16, bfloat16 and binary32). `rnd` = random bits of stochastic
/// rounding.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn add(
    fx: &Format,
    x: u32,
    fy: &Format,
    y: u32,
    sub: bool,
    fr: &Format,
    spec: &Spec,
    rnd: u32,
) -> (u32, Flags) {
    let a = fx.decode(x).exact();
    let mut b = fy.decode(y).exact();
    if sub {
        b.sign = !b.sign;
    }
    let (s, inv) = add_any_exact(&a, &b, spec.rounding);
    if inv != 0 {
        return nan(fr, spec, inv);
    }
    project(&s, fr, spec, rnd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::round::Saturation;

    fn spec(r: Rounding, s: Saturation) -> Spec {
        Spec {
            saturation: s,
            ..Spec::ieee(r)
        }
    }

    /// Known answers for the special cases (E5M2: ±∞ = 0x7C/0xFC, NaN = 0x7E …; E4M3:
    /// NaN = 0x7F/0xFF, max 448 = 0x7E; P3109 binary8p3: NaN = 0x80, no −0).
    #[test]
    fn special_cases() {
        let e5 = Format::E5M2;
        let e4 = Format::E4M3;
        let rne = spec(Rounding::Rne, Saturation::SatNone);
        let rtn = spec(Rounding::Rtn, Saturation::SatNone);
        let fin = spec(Rounding::Rne, Saturation::SatFinite);
        let one5 = 0x3C; // 1.0 in E5M2
        let one4 = 0x38; // 1.0 in E4M3
        #[rustfmt::skip]
        let cases: &[(&Format, u32, u32, bool, Spec, u32, u8)] = &[
            // Inf - Inf, Inf + (-Inf): NaN + invalid
            (&e5, 0x7C, 0x7C, true, rne, 0x7E, Flags::INVALID),
            (&e5, 0x7C, 0xFC, false, rne, 0x7E, Flags::INVALID),
            // Inf + Inf, Inf + finite
            (&e5, 0x7C, 0x7C, false, rne, 0x7C, 0),
            (&e5, 0xFC, one5, false, rne, 0xFC, 0),
            (&e5, one5, 0x7C, true, rne, 0xFC, 0),
            // Inf under satfinite clamps to the largest finite value
            (&e5, 0x7C, one5, false, fin, 0x7B, 0),
            // NaN in -> NaN, no flag
            (&e5, 0x7E, one5, false, rne, 0x7E, 0),
            (&e5, 0x7D, 0x7C, true, rne, 0x7E, 0),
            (&e4, 0x7F, one4, false, rne, 0x7F, 0),
            // zero signs: x - x = +0, -0 under RTN; (-0) + (-0) = -0; (+0) + (-0) = +0
            (&e4, one4, one4, true, rne, 0x00, 0),
            (&e4, one4, one4, true, rtn, 0x80, 0),
            (&e4, 0x80, 0x80, false, rne, 0x80, 0),
            (&e4, 0x80, 0x00, true, rne, 0x80, 0),
            (&e4, 0x00, 0x80, false, rne, 0x00, 0),
            (&e4, 0x00, 0x80, false, rtn, 0x80, 0),
            (&e4, 0x00, 0x00, true, rtn, 0x80, 0),
            // 448 + 448 overflows: E4M3 has no Inf -> NaN (satnone; the rounder adds invalid),
            // 448 (satfinite)
            (&e4, 0x7E, 0x7E, false, rne, 0x7F, Flags::INVALID | Flags::OVERFLOW | Flags::INEXACT),
            (&e4, 0x7E, 0x7E, false, fin, 0x7E, Flags::OVERFLOW | Flags::INEXACT),
            // 1 + 1 = 2 exactly; 1 - 2^-3 = 0.875 exactly
            (&e4, one4, one4, false, rne, 0x40, 0),
            (&e4, one4, 0x20, true, rne, 0x36, 0),
            // 1 + 2^-4: a tie between 1 and 1.125 -> 1 (even), inexact
            (&e4, one4, 0x18, false, rne, 0x38, Flags::INEXACT),
            // 2^-9 - 2^-9 = 0: the smallest subnormals cancel exactly
            (&e4, 0x01, 0x01, true, rne, 0x00, 0),
        ];
        for &(f, x, y, sub, sp, want, wfl) in cases {
            let (c, fl) = add(f, x, f, y, sub, f, &sp, 0);
            let op = if sub { '-' } else { '+' };
            assert_eq!(
                (c, fl.0),
                (want, wfl),
                "{} {x:#04x} {op} {y:#04x} {}",
                f.name(),
                sp.rounding
            );
        }
        // P3109 formats have no -0: an exact zero is +0 even under RTN.
        let p = Format::parse("binary8p3se").unwrap();
        let one = p.decode(0x40).exact();
        assert_eq!(one.class, ExactClass::Finite);
        let (c, _) = add(&p, 0x40, &p, 0x40, true, &p, &rtn, 0);
        assert_eq!(c, 0);
        // ... but a binary16 result of the same subtraction is -0 under RTN (as mul projects).
        let (c, _) = add(&p, 0x40, &p, 0x40, true, &Format::BINARY16, &rtn, 0);
        assert_eq!(c, 0x8000);
    }
}
