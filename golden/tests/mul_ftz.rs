//! `mul_ftz` known answers (flush-to-zero multiply, the semantics of cores without subnormals):
//! subnormal operands are ±0 without a flag, subnormal results become zero with underflow and
//! inexact, a result rounded up to the smallest normal is kept; and on every E4M3 pair it
//! equals `mul` wherever neither an operand nor the result is subnormal.

use golden::{mul, mul_ftz, Class, Flags, Format, Rounding, Saturation, Spec, Tininess};

fn spec(r: Rounding) -> Spec {
    Spec {
        rounding: r,
        saturation: Saturation::SatFinite,
        tininess: Tininess::AfterRounding,
        nonan_code: 0,
        rto_overflow: Default::default(),
    }
}

#[test]
fn known_answers() {
    let e4 = Format::E4M3;
    let rne = spec(Rounding::Rne);
    let uf_ix = Flags::UNDERFLOW | Flags::INEXACT;
    // (fmt, x, y, code, flags)
    let cases: &[(Format, u32, u32, u32, u8)] = &[
        (e4, 0x01, 0x38, 0x00, 0),     // 2^-9 (subnormal) x 1 -> +0, no flag
        (e4, 0x81, 0x38, 0x80, 0),     // -2^-9 x 1 -> -0
        (e4, 0x08, 0x30, 0x00, uf_ix), // 2^-6 x 0.5 = 2^-7 (subnormal code 0x04) -> +0
        (e4, 0x88, 0x30, 0x80, uf_ix), // negative -> -0 (E4M3 has -0)
        (e4, 0x37, 0x08, 0x08, uf_ix), // 0.9375 x 2^-6 rounds up to 2^-6 (normal): kept
        (e4, 0x38, 0x38, 0x38, 0),     // 1 x 1
        (Format::E4M3FNUZ, 0x88, 0x38, 0x00, uf_ix), // -2^-7 x 0.5: FNUZ has no -0, +0 (0x80 is NaN)
        (Format::E5M2, 0x7c, 0x01, 0x7e, Flags::INVALID), // inf x subnormal = inf x 0 -> NaN
    ];
    for &(f, x, y, code, flags) in cases {
        let (c, fl) = mul_ftz(&f, x, &f, y, &f, &rne, 0);
        assert_eq!(
            (c, fl.0),
            (code, flags),
            "{} {x:#04x} x {y:#04x}: got {c:#04x} flags {:#x}",
            f.name(),
            fl.0
        );
    }
}

#[test]
fn equals_mul_away_from_subnormals() {
    let f = Format::E4M3;
    for r in [Rounding::Rne, Rounding::Rtz, Rounding::Rtp, Rounding::Rna] {
        let s = spec(r);
        let mut flushed = 0;
        for x in 0..256 {
            for y in 0..256 {
                let a = mul(&f, x, &f, y, &f, &s, 0);
                let b = mul_ftz(&f, x, &f, y, &f, &s, 0);
                let sub = |c: u32| f.decode(c).class == Class::Subnormal;
                if sub(x) || sub(y) || sub(a.0) {
                    flushed += 1;
                    assert_ne!(f.decode(b.0).class, Class::Subnormal);
                } else {
                    assert_eq!(a, b, "{x:#04x} x {y:#04x} {r:?}");
                }
            }
        }
        assert!(flushed > 4000, "{flushed}");
    }
}
