//! The exact-addend entry points (`fma_exact_addend`, `DotUnit::eval_exact_addend`): a binary64
//! addend is added exactly and the sum rounded once to binary32.

use golden::{
    fma, fma_exact_addend, DotUnit, Exact, FmaOptions, Format, Rounding, Saturation, Spec,
};

/// The exact value of a binary64 (finite or not; NaN → NaN).
fn exact(v: f64) -> Exact {
    let b = v.to_bits();
    let (sign, e, m) = (
        b >> 63 != 0,
        ((b >> 52) & 0x7FF) as i32,
        b & ((1 << 52) - 1),
    );
    match e {
        0x7FF if m == 0 => Exact::inf(sign),
        0x7FF => Exact::NAN,
        0 => Exact::finite(sign, -1074, m),
        _ => Exact::finite(sign, e - 1075, m | 1 << 52),
    }
}

fn spec(r: Rounding) -> Spec {
    Spec::new(r, Saturation::SatNone)
}

const ONE: u32 = 0x38; // E4M3 1.0

#[test]
fn no_double_rounding() {
    let e4m3 = Format::parse("e4m3").unwrap();
    let s = spec(Rounding::Rne);
    // 1 + (2^-24 + 2^-60): above the midpoint of 1 and 1 + 2^-23, so it rounds up; z rounded
    // to binary32 first (2^-24) makes a tie that rounds to 1.0
    let z = 2f64.powi(-24) + 2f64.powi(-60);
    let once = fma_exact_addend(&e4m3, ONE, &e4m3, ONE, &exact(z), false, &s);
    assert_eq!(once.0, 0x3F80_0001);
    let twice = fma(
        &e4m3,
        ONE,
        &e4m3,
        ONE,
        (z as f32).to_bits(),
        &s,
        FmaOptions::default(),
    );
    assert_eq!(twice.0, 0x3F80_0000);
    let unit = DotUnit::new(e4m3, e4m3, 4, None, None, Format::BINARY32).unwrap();
    let xs = [ONE, 0, 0, 0];
    assert_eq!(
        unit.eval_exact_addend(&xs, &xs, 0, 0, &exact(z), false, &s),
        once
    );
}

#[test]
fn addends_beyond_binary32_range() {
    let e5m2 = Format::parse("e5m2").unwrap();
    let unit = DotUnit::new(e5m2, e5m2, 2, None, None, Format::BINARY32).unwrap();
    // 57344² = 2^31.6 plus 2^-16² = 2^-32: a 64-bit-plus sum; 2^-1074 decides rtp/rtz
    let xs = [0x7B, 0x01];
    let tiny = exact(2f64.powi(-1074));
    let up = unit.eval_exact_addend(&xs, &xs, 0, 0, &tiny, false, &spec(Rounding::Rtp));
    let down = unit.eval_exact_addend(&xs, &xs, 0, 0, &tiny, false, &spec(Rounding::Rtz));
    assert_eq!(up.0, down.0 + 1);
    // 2^300: overflow (satnone: +inf, overflow and inexact raised)
    let big = unit.eval_exact_addend(
        &xs,
        &xs,
        0,
        0,
        &exact(2f64.powi(300)),
        false,
        &spec(Rounding::Rne),
    );
    assert_eq!(big.0, 0x7F80_0000);
    // 1 - 2^40 (exact in binary64) rounded once: binary64 → binary32 conversion is RNE
    let e = 2f64.powi(40);
    let xs1 = [0x3C, 0x00]; // 1.0 and 0
    let r = unit.eval_exact_addend(&xs1, &xs1, 0, 0, &exact(-e), false, &spec(Rounding::Rne));
    assert_eq!(r.0, ((1.0 - e) as f32).to_bits());
    // a signaling NaN addend raises invalid
    let snan = unit.eval_exact_addend(&xs1, &xs1, 0, 0, &Exact::NAN, true, &spec(Rounding::Rne));
    assert!(snan.1.invalid());
}

/// One element: the dot product with an exact addend is the FMA with an exact addend, for
/// every E4M3 × E2M1 pair and addends of every magnitude, in every deterministic mode.
#[test]
fn one_element_dot_is_the_fma() {
    let (fx, fy) = (
        Format::parse("e4m3").unwrap(),
        Format::parse("e2m1").unwrap(),
    );
    let unit = DotUnit::new(fx, fy, 1, None, None, Format::BINARY32).unwrap();
    let zs = [
        0.0,
        -0.0,
        1.0,
        -3.25,
        1e-40,
        -1e-45,
        2f64.powi(-149) / 3.0,
        0.1,
        -448.0 * 6.0,
        1e30,
        1e300,
        -1e-300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    for r in [
        Rounding::Rne,
        Rounding::Rna,
        Rounding::Rtz,
        Rounding::Rtp,
        Rounding::Rtn,
    ] {
        let s = spec(r);
        for x in 0..fx.num_codes() as u32 {
            for y in 0..fy.num_codes() as u32 {
                for &z in &zs {
                    let want = fma_exact_addend(&fx, x, &fy, y, &exact(z), false, &s);
                    let got = unit.eval_exact_addend(&[x], &[y], 0, 0, &exact(z), false, &s);
                    assert_eq!(got, want, "x={x:#x} y={y:#x} z={z:e} {r:?}");
                }
            }
        }
    }
}
