//! Two evaluation paths compared: the memoized [`Projector`] against the direct rounder, for
//! every family, several biases and precisions, every deterministic mode and saturation mode,
//! on inputs that cover every binary32 exponent, every round/sticky pattern and all specials.

use golden::{Format, Projector, Rounding, Saturation, Spec, Specials, Tininess};

fn formats() -> Vec<Format> {
    let mut v: Vec<Format> = golden::PRESETS.iter().map(|p| p.1).collect();
    for name in [
        "binary8p1se",
        "binary8p1uf",
        "binary8p3se",
        "binary8p4se",
        "binary8p7sf",
        "binary8p8ue",
        "binary4p2sf",
        "binary3p1ue",
        "binary10p1se",
        "binary12p9se",
        "binary16p10uf",
        "binary16p4se",
    ] {
        v.push(Format::parse(name).unwrap());
    }
    v.push(Format::new(8, 4, -3, true, Specials::Ieee).unwrap());
    v.push(Format::new(11, 6, 40, false, Specials::NoNan).unwrap());
    v.push(Format::new(5, 2, 0, true, Specials::Fn).unwrap());
    v
}

/// Structured binary32 inputs: each exponent with mantissas that sit on, just below and just
/// above every rounding boundary of a P-bit target, plus specials and pseudo-random patterns.
fn inputs() -> Vec<u32> {
    let mut v = vec![
        0,
        0x8000_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0x7F80_0001,
        0xFFFF_FFFF,
    ];
    for e in 0..255u32 {
        for s in [0u32, 0x8000_0000] {
            for sh in 0..23u32 {
                let half = 1u32 << sh;
                for m in [
                    half,
                    half - 1,
                    half + 1,
                    half * 3,
                    (half << 1).wrapping_sub(1),
                    0,
                    0x7F_FFFF,
                ] {
                    v.push(s | (e << 23) | (m & 0x7F_FFFF));
                }
            }
        }
    }
    let mut x = 0x9E37_79B9u32;
    for _ in 0..50_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v.push(x);
    }
    v
}

#[test]
fn memoized_projector_equals_direct_rounder_from_binary32() {
    memoized_projector_equals_direct_rounder(Format::BINARY32);
}

// One test per source format, so the test threads share the work.
#[test]
fn memoized_projector_equals_direct_rounder_from_binary16() {
    memoized_projector_equals_direct_rounder(Format::BINARY16);
}

#[test]
fn memoized_projector_equals_direct_rounder_from_bfloat16() {
    memoized_projector_equals_direct_rounder(Format::BFLOAT16);
}

fn memoized_projector_equals_direct_rounder(from: Format) {
    let inputs = inputs();
    let mut checked = 0u64;
    let mut memoized = 0;
    for f in formats() {
        for r in Rounding::DETERMINISTIC {
            for sat in Saturation::ALL {
                for tin in [Tininess::AfterRounding, Tininess::BeforeRounding] {
                    let spec = Spec {
                        rounding: r,
                        saturation: sat,
                        tininess: tin,
                        nonan_code: 0,
                        rto_overflow: Default::default(),
                    };
                    let pr = Projector::new(from, f, spec);
                    memoized += pr.is_memoized() as u32;
                    let mask = from.code_mask();
                    for &a in &inputs {
                        let a = if from.k == 16 { (a >> 16) & mask } else { a };
                        let fast = pr.convert(a, 0);
                        let slow = pr.convert_direct(a, 0);
                        assert_eq!(
                            fast,
                            slow,
                            "{} from {} {r} {sat} {tin:?} input {a:#x}",
                            f.name(),
                            from.name()
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(memoized > 30, "memo tables must be exercised ({memoized})");
    eprintln!(
        "{checked} projections from {} agree on both paths",
        from.name()
    );
}

#[test]
fn prepared_fma_equals_direct_fma() {
    use golden::{fma, FmaOptions, FmaUnit};
    let pairs = [
        (Format::E4M3, Format::E4M3),
        (Format::E5M2, Format::E5M2),
        (Format::E4M3, Format::E5M2),
        (Format::parse("binary8p4se").unwrap(), Format::E4M3FNUZ),
        (Format::E2M1, Format::E3M2),
        (Format::parse("binary12p5sf").unwrap(), Format::E4M3), // no product table (20 bits)
    ];
    let mut z: u32 = 0x1234_5678;
    let mut n = 0u64;
    for (fx, fy) in pairs {
        for r in Rounding::DETERMINISTIC {
            for ftz in [false, true] {
                let spec = Spec::ieee(r);
                let opts = FmaOptions {
                    ftz,
                    ..FmaOptions::default()
                };
                let u = FmaUnit::new(fx, fy, spec, opts);
                for i in 0..40_000u32 {
                    z ^= z << 13;
                    z ^= z >> 17;
                    z ^= z << 5;
                    let (x, y) = (z & fx.code_mask(), z.rotate_left(11) & fy.code_mask());
                    let zz = if i % 3 == 0 {
                        z & 0x80FF_FFFF
                    } else {
                        z.rotate_left(5)
                    };
                    assert_eq!(
                        u.eval(x, y, zz),
                        fma(&fx, x, &fy, y, zz, &spec, opts),
                        "{} {} {r} {x:#x} {y:#x} {zz:#x}",
                        fx.name(),
                        fy.name()
                    );
                    n += 1;
                }
            }
        }
    }
    assert!(n > 1_000_000);
}
