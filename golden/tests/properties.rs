//! Property tests of the golden model (proptest): monotone projection, directed modes bracket
//! the exact value, round trip, RNE agrees with the CPU's binary32 arithmetic where both are
//! defined, commutativity, scaled = unscaled with a shifted exponent, stochastic rounding is
//! exactly as biased as its definition says.

use golden::{
    convert, fma, mul, mul_scaled, project_f32, Class, FmaOptions, Format, Rounding, Saturation,
    Scale, Spec,
};
use proptest::prelude::*;

fn any_format() -> impl Strategy<Value = Format> {
    prop_oneof![
        Just(Format::E4M3),
        Just(Format::E5M2),
        Just(Format::E4M3FNUZ),
        Just(Format::E5M2FNUZ),
        Just(Format::E4M3B11FNUZ),
        Just(Format::E3M4),
        Just(Format::E2M1),
        Just(Format::E3M2),
        (3u32..=12, any::<bool>(), any::<bool>()).prop_flat_map(|(k, s, e)| {
            let pmax = if s { k - 1 } else { k };
            (1u32..=pmax).prop_map(move |p| Format::p3109(k, p, s, e).unwrap())
        }),
    ]
}

fn finite_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        (-40i32..40, any::<u32>())
            .prop_map(|(e, m)| f32::from_bits((m & 0x807F_FFFF) | (((127 + e) as u32) << 23))),
    ]
    .prop_filter("finite", |x| x.is_finite())
}

fn value(f: &Format, c: u32) -> f64 {
    f.decode(c).to_f64()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn projection_is_monotone(f in any_format(), a in finite_f32(), b in finite_f32(), m in 0usize..6) {
        let r = Rounding::DETERMINISTIC[m];
        let spec = Spec::new(r, Saturation::SatFinite);
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let cl = project_f32(&f, lo.to_bits(), &spec, 0).0;
        let ch = project_f32(&f, hi.to_bits(), &spec, 0).0;
        prop_assert!(value(&f, cl) <= value(&f, ch), "{} {r}: {lo} → {}, {hi} → {}", f.name(), value(&f, cl), value(&f, ch));
    }

    #[test]
    fn directed_modes_bracket_the_exact_value(f in any_format(), a in finite_f32()) {
        let sat = Saturation::SatPropagate;
        let x = a as f64;
        let dn = value(&f, project_f32(&f, a.to_bits(), &Spec::new(Rounding::Rtn, sat), 0).0);
        let up = value(&f, project_f32(&f, a.to_bits(), &Spec::new(Rounding::Rtp, sat), 0).0);
        let z = value(&f, project_f32(&f, a.to_bits(), &Spec::new(Rounding::Rtz, sat), 0).0);
        let max = value(&f, f.max_finite_mag());
        let min = if f.signed { -max } else { 0.0 };
        // Inside the finite range (and for unsigned, non-negative), RTN ≤ x ≤ RTP and |RTZ| ≤ |x|.
        if x <= max && x >= min && f.specials != golden::Specials::E8m0 {
            prop_assert!(dn <= x && x <= up, "{} {a}: {dn} {up}", f.name());
            prop_assert!(z.abs() <= x.abs());
            let nearest = value(&f, project_f32(&f, a.to_bits(), &Spec::new(Rounding::Rne, sat), 0).0);
            prop_assert!(nearest == dn || nearest == up);
        }
    }

    #[test]
    fn every_code_round_trips(f in any_format(), c in any::<u32>(), m in 0usize..6) {
        let c = c & f.code_mask();
        let spec = Spec::new(Rounding::DETERMINISTIC[m], Saturation::SatPropagate);
        let (r, fl) = convert(&f, c, &f, &spec, 0);
        if f.is_nan_code(c) {
            prop_assert!(f.is_nan_code(r));
        } else {
            prop_assert_eq!(r, c, "{} code {:#x}", f.name(), c);
            prop_assert_eq!(fl.0, 0);
        }
    }

    #[test]
    fn rne_multiply_and_fma_agree_with_cpu_binary32(x in 0u32..256, y in 0u32..256, z in any::<u32>(), e5 in any::<bool>()) {
        let f = if e5 { Format::E5M2 } else { Format::E4M3 };
        let spec = Spec::ieee(Rounding::Rne);
        let xf = f.decode(x).to_f64() as f32;
        let yf = f.decode(y).to_f64() as f32;
        let (p, _) = mul(&f, x, &f, y, &Format::BINARY32, &spec, 0);
        let cpu = xf * yf; // exact: 8-bit significand products fit binary32
        prop_assert!(cpu.is_nan() && f32::from_bits(p).is_nan() || p == cpu.to_bits());
        let zf = f32::from_bits(z);
        let (r, _) = fma(&f, x, &f, y, z, &spec, FmaOptions::default());
        let cpu = xf.mul_add(yf, zf); // correctly rounded fused multiply-add
        prop_assert!(cpu.is_nan() && r == 0x7FC0_0000 || r == cpu.to_bits(), "{x:#x} {y:#x} {z:#x}: {r:#x} vs {:#x}", cpu.to_bits());
    }

    #[test]
    fn multiply_and_fma_commute(f in any_format(), g in any_format(), x in any::<u32>(), y in any::<u32>(), z in any::<u32>(), m in 0usize..6) {
        let (x, y) = (x & f.code_mask(), y & g.code_mask());
        let spec = Spec::new(Rounding::DETERMINISTIC[m], Saturation::SatNone);
        prop_assert_eq!(mul(&f, x, &g, y, &Format::E4M3, &spec, 0), mul(&g, y, &f, x, &Format::E4M3, &spec, 0));
        let o = FmaOptions::default();
        prop_assert_eq!(fma(&f, x, &g, y, z, &spec, o), fma(&g, y, &f, x, z, &spec, o));
    }

    #[test]
    fn scaled_equals_unscaled_with_shifted_exponent(x in 0u32..256, y in 0u32..256, a in -20i32..20, b in -20i32..20, m in 0usize..6) {
        let f = Format::E4M3;
        let spec = Spec::new(Rounding::DETERMINISTIC[m], Saturation::SatNone);
        // Reference: the exact product of x·2^a and y·2^b as binary32 (exact: 8 significant
        // bits, exponent well inside the binary32 range), then one projection to E5M2.
        let exact = f.decode(x).to_f64() * f.decode(y).to_f64() * 2f64.powi(a + b);
        let want = if exact.is_nan() {
            None
        } else {
            Some(project_f32(&Format::E5M2, (exact as f32).to_bits(), &spec, 0))
        };
        let got = mul_scaled(&f, x, Scale::pow2(a), &f, y, Scale::pow2(b), &Format::E5M2, &spec, 0);
        match want {
            Some(w) => prop_assert_eq!(got, w),
            None => prop_assert!(Format::E5M2.is_nan_code(got.0)),
        }
    }

    #[test]
    fn stochastic_rounding_has_exactly_its_defined_bias(a in finite_f32(), n in 1u8..8) {
        // For SRA with N bits, the number of R in [0, 2^N) that round away is ⌊ν·2^N⌋.
        let f = Format::E4M3;
        let d = Format::BINARY32.decode(a.to_bits());
        prop_assume!(d.class == Class::Normal || d.class == Class::Subnormal);
        let spec_z = Spec::new(Rounding::Rtz, Saturation::SatFinite);
        let down = project_f32(&f, a.to_bits(), &spec_z, 0).0;
        let mut away = 0u64;
        for r in 0..(1u32 << n) {
            let c = project_f32(&f, a.to_bits(), &Spec::new(Rounding::Sra(n), Saturation::SatFinite), r).0;
            if c != down { away += 1; }
        }
        // ν from the exact values (f64 holds them exactly).
        let lo = value(&f, down).abs();
        let up = value(&f, project_f32(&f, a.to_bits(), &Spec::new(Rounding::Rtp, Saturation::SatFinite), 0).0)
            .abs().max(value(&f, project_f32(&f, a.to_bits(), &Spec::new(Rounding::Rtn, Saturation::SatFinite), 0).0).abs());
        let x = (a as f64).abs();
        if up > lo && x <= value(&f, f.max_finite_mag()) {
            let nu = (x - lo) / (up - lo);
            prop_assert_eq!(away, (nu * (1u64 << n) as f64).floor() as u64, "{} n={}", a, n);
        }
    }
}
