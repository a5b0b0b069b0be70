//! `golden::add` against independent references:
//!
//! - every E4M3/E5M2 operand pair (both orders of formats, add and subtract) into E4M3 and
//!   E5M2 under the six deterministic modes and satfinite / satnone, against the f64 sum (two
//!   8-bit values sum exactly in f64) rounded by a rounder written here from the definitions
//!   (quantum, floor, mode decision, overflow), not by the model's;
//! - the same pairs into binary16 under the five IEEE modes against Berkeley SoftFloat's
//!   f64 → f16 conversion (value and the inexact, overflow and underflow flags).

use golden::{add, Class, Flags, Format, Rounding, Saturation, Spec};
use softfloat_wrapper::{ExceptionFlags, Float as SfFloat, RoundingMode, F64};

/// Largest finite value and precision data of a small format, from its definition.
fn max_finite(f: &Format) -> f64 {
    (0..f.num_codes() as u32)
        .map(|c| f.decode(c))
        .filter(|d| !matches!(d.class, Class::Nan | Class::Inf))
        .map(|d| d.to_f64().abs())
        .fold(0.0, f64::max)
}

/// `v` (exact, finite) rounded to `f` by the definitions: the quantum of v's binade
/// (never below the subnormal quantum), the integer multiple chosen by the mode, then
/// overflow by the saturation mode. `None` = NaN.
fn round_ref(v: f64, neg_zero: bool, f: &Format, r: Rounding, s: Saturation) -> Option<f64> {
    if v == 0.0 {
        return Some(if neg_zero && f.has_neg_zero() {
            -0.0
        } else {
            0.0
        });
    }
    let emin = f.emin();
    let e = (v.abs().log2().floor() as i32).max(emin);
    let q = 2f64.powi(e - (f.p as i32 - 1));
    let n = v / q; // exact: q is a power of two
    let lo = n.floor();
    let frac = n - lo;
    let pick_up = match r {
        Rounding::Rne => frac > 0.5 || (frac == 0.5 && lo % 2.0 != 0.0),
        Rounding::Rna => {
            if v > 0.0 {
                frac >= 0.5
            } else {
                frac > 0.5
            }
        }
        Rounding::Rtp => frac > 0.0,
        Rounding::Rtn => false,
        Rounding::Rtz => v < 0.0 && frac > 0.0,
        Rounding::Rto => frac > 0.0 && lo % 2.0 == 0.0,
        _ => unreachable!(),
    };
    let m = if pick_up { lo + 1.0 } else { lo };
    let res = m * q;
    let res = if res == 0.0 {
        if v < 0.0 && f.has_neg_zero() {
            -0.0
        } else {
            0.0
        }
    } else {
        res
    };
    let max = max_finite(f);
    if res.abs() <= max {
        return Some(res);
    }
    let sign = res.signum();
    let toward_finite = match r {
        Rounding::Rtz => true,
        Rounding::Rtp => v < 0.0,
        Rounding::Rtn => v > 0.0,
        _ => false,
    };
    match s {
        Saturation::SatFinite => Some(sign * max),
        Saturation::SatNone if toward_finite => Some(sign * max),
        Saturation::SatNone if f.specials == golden::Specials::Ieee => Some(sign * f64::INFINITY),
        Saturation::SatNone => None,
        _ => unreachable!(),
    }
}

fn same(a: f64, b: f64) -> bool {
    a == b && a.is_sign_negative() == b.is_sign_negative()
}

// One test per operand-format pair, so the test threads share the 25 M checks.
#[test]
fn small_results_match_the_definition_e4m3_e4m3() {
    small_results_match_the_definition(Format::E4M3, Format::E4M3);
}

#[test]
fn small_results_match_the_definition_e5m2_e5m2() {
    small_results_match_the_definition(Format::E5M2, Format::E5M2);
}

#[test]
fn small_results_match_the_definition_e4m3_e5m2() {
    small_results_match_the_definition(Format::E4M3, Format::E5M2);
}

#[test]
fn small_results_match_the_definition_e5m2_e4m3() {
    small_results_match_the_definition(Format::E5M2, Format::E4M3);
}

fn small_results_match_the_definition(fx: Format, fy: Format) {
    let (e4, e5) = (Format::E4M3, Format::E5M2);
    let mut n = 0u64;
    for fr in [e4, e5] {
        for r in Rounding::DETERMINISTIC {
            for s in [Saturation::SatFinite, Saturation::SatNone] {
                let spec = Spec {
                    saturation: s,
                    ..Spec::ieee(r)
                };
                for x in 0..256u32 {
                    for y in 0..256u32 {
                        for sub in [false, true] {
                            check_one(&fx, x, &fy, y, sub, &fr, &spec);
                            n += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(n, 2 * 6 * 2 * 65536 * 2);
}

fn check_one(fx: &Format, x: u32, fy: &Format, y: u32, sub: bool, fr: &Format, spec: &Spec) {
    let (r, s) = (spec.rounding, spec.saturation);
    let (c, fl) = add(fx, x, fy, y, sub, fr, spec, 0);
    let dx = fx.decode(x).to_f64();
    let mut dy = fy.decode(y).to_f64();
    if sub {
        dy = -dy;
    }
    let what = || {
        format!(
            "{} {x:#04x} {} {} {y:#04x} -> {} {r} {s}",
            fx.name(),
            if sub { '-' } else { '+' },
            fy.name(),
            fr.name()
        )
    };
    let got = fr.decode(c);
    if dx.is_nan() || dy.is_nan() {
        assert!(got.is_nan(), "{}: NaN operand gives {c:#x}", what());
        assert_eq!(fl.0, 0, "{}: flags", what());
        return;
    }
    if dx.is_infinite() || dy.is_infinite() {
        if dx.is_infinite() && dy.is_infinite() && dx != dy {
            assert!(got.is_nan(), "{}: inf - inf gives {c:#x}", what());
            assert_eq!(fl.0, Flags::INVALID, "{}: flags", what());
            return;
        }
        let inf = if dx.is_infinite() { dx } else { dy };
        let want = match (s, fr.specials) {
            (Saturation::SatNone, golden::Specials::Ieee) => inf,
            (Saturation::SatNone, _) => f64::NAN,
            _ => inf.signum() * max_finite(fr),
        };
        if want.is_nan() {
            assert!(got.is_nan(), "{}: {c:#x}", what());
        } else {
            assert!(same(got.to_f64(), want), "{}: {c:#x}, want {want}", what());
        }
        return;
    }
    let v = dx + dy; // exact: both are 8-bit values
    let zero_sign = if v == 0.0 {
        if dx == 0.0 && dy == 0.0 && dx.is_sign_negative() == dy.is_sign_negative() {
            dx.is_sign_negative()
        } else {
            r == Rounding::Rtn
        }
    } else {
        false
    };
    match round_ref(v, zero_sign, fr, r, s) {
        None => assert!(got.is_nan(), "{}: {c:#x}, want NaN", what()),
        Some(want) => {
            assert!(
                !got.is_nan() && same(got.to_f64(), want),
                "{}: {c:#x} = {}, want {want}",
                what(),
                got.to_f64()
            );
            let overflow = (v.abs() > max_finite(fr)) && want.abs() >= max_finite(fr);
            if !overflow {
                assert_eq!(fl.inexact(), want != v, "{}: inexact", what());
                assert!(!fl.invalid(), "{}: invalid", what());
            }
        }
    }
}

fn sf_mode(r: Rounding) -> RoundingMode {
    match r {
        Rounding::Rne => RoundingMode::TiesToEven,
        Rounding::Rna => RoundingMode::TiesToAway,
        Rounding::Rtp => RoundingMode::TowardPositive,
        Rounding::Rtn => RoundingMode::TowardNegative,
        Rounding::Rtz => RoundingMode::TowardZero,
        _ => unreachable!("not an IEEE mode"),
    }
}

/// Finite E4M3/E5M2 pairs into binary16 against SoftFloat (f64 sum, exact; then one
/// conversion). SoftFloat's flags are process-global, so this is the file's only SoftFloat
/// test.
#[test]
fn binary16_results_match_softfloat() {
    let b16 = Format::BINARY16;
    let mut n = 0u64;
    for (fx, fy) in [
        (Format::E4M3, Format::E5M2),
        (Format::E5M2, Format::E5M2),
        (Format::E4M3, Format::E4M3),
    ] {
        for r in Rounding::IEEE {
            let spec = Spec::ieee(r);
            for x in 0..256u32 {
                for y in 0..256u32 {
                    let (dx, dy) = (fx.decode(x).to_f64(), fy.decode(y).to_f64());
                    if !dx.is_finite() || !dy.is_finite() {
                        continue;
                    }
                    for sub in [false, true] {
                        let v = if sub { dx - dy } else { dx + dy };
                        let flags = ExceptionFlags::default();
                        flags.set();
                        let sf = F64::from_f64(v).to_f16(sf_mode(r));
                        let mut got_flags = ExceptionFlags::default();
                        got_flags.get();
                        let (c, fl) = add(&fx, x, &fy, y, sub, &b16, &spec, 0);
                        let what = || {
                            format!(
                                "{} {x:#04x} {} {} {y:#04x} -> binary16 {r}",
                                fx.name(),
                                if sub { '-' } else { '+' },
                                fy.name()
                            )
                        };
                        // An exact zero sum takes its sign by IEEE 754 §6.3: the common sign
                        // of two like-signed zeros, else +0 (−0 under RTN); f64 arithmetic
                        // (always RNE) gives the first two cases, not the RTN one.
                        let ey = if sub { -dy } else { dy };
                        let want = if v == 0.0 {
                            let like = dx == 0.0
                                && ey == 0.0
                                && dx.is_sign_negative() == ey.is_sign_negative();
                            let neg = if like {
                                dx.is_sign_negative()
                            } else {
                                r == Rounding::Rtn
                            };
                            if neg {
                                0x8000
                            } else {
                                0
                            }
                        } else {
                            sf.to_bits() as u32
                        };
                        assert_eq!(c, want, "{}", what());
                        let sf_fl = (got_flags.is_overflow() as u8) << 2
                            | (got_flags.is_underflow() as u8) << 1
                            | got_flags.is_inexact() as u8;
                        assert_eq!(fl.0, sf_fl, "{}: flags", what());
                        n += 1;
                    }
                }
            }
        }
    }
    assert!(n > 500_000, "{n}");
}
