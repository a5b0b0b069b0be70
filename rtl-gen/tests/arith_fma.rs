//! The `fma` unit: Verilator lint on several configurations, and equivalence with
//! `golden::fma` on every (x, y) pair × a structured set of binary32 addends (every alignment
//! distance around the product, exact and near cancellation, carry-out, round/sticky
//! patterns, subnormal and overflow boundaries, specials) in every rounding mode; pipelined
//! ≡ combinational; a deliberately broken core must fail with a counterexample.

use crate::arith_util;
use arith_util::*;
use golden::{Format, Rounding, Saturation, Spec};
use rtl::manifest::{Formats, Unit};
use rtl::units::fma::FmaModel;
use rtl::{GenOptions, GenRequest, RoundingSel, SaturationSel};

fn req(fx: Format, fy: Format, dynamic: bool, stages: u32, ftz: bool) -> GenRequest {
    GenRequest {
        unit: Unit::Fma,
        formats: Formats {
            x: fx,
            y: Some(fy),
            r: Format::BINARY32,
            scale: None,
            z: None,
        },
        rounding: if dynamic {
            RoundingSel::Dynamic
        } else {
            RoundingSel::Fixed(Rounding::Rne)
        },
        saturation: if dynamic {
            SaturationSel::Dynamic
        } else {
            SaturationSel::Fixed(Saturation::SatNone)
        },
        sr_bits: 0,
        stages,
        options: GenOptions {
            ftz,
            ..GenOptions::default()
        },
    }
}

fn p(name: &str) -> Format {
    Format::parse(name).expect("format")
}

/// Number of structured addend kinds per (x, y) pair.
pub const Z_KINDS: u64 = 40;

/// The structured addend `kind` for the pair (x, y): fixed specials and boundaries, values
/// relative to the exact product (cancellation, ±1 ulp, carry-out), and values at alignment
/// distances −60…+60 from the product with round/sticky mantissa patterns.
pub fn z_for(fx: &Format, x: u32, fy: &Format, y: u32, kind: u64) -> u32 {
    let h = mix((x as u64) << 40 ^ (y as u64) << 8 ^ kind);
    let sign = ((h >> 63) as u32) << 31;
    match kind {
        0 => 0x0000_0000,
        1 => 0x8000_0000,
        2 => 0x7F80_0000,
        3 => 0xFF80_0000,
        4 => 0x7FC0_0000 | (h as u32 & 0x3F_FFFF), // quiet NaN
        5 => 0x7F80_0000 | ((h as u32 & 0x3F_FFFF) | 1), // signaling NaN
        6 => sign | 1,                             // smallest subnormal
        7 => sign | 0x007F_FFFF,                   // largest subnormal
        8 => sign | 0x0080_0000,                   // smallest normal
        9 => sign | 0x7F7F_FFFF,                   // largest finite
        10 => sign | (0x7F7F_FFFF - (h as u32 & 0xFF)), // near the overflow boundary
        11 => sign | (h as u32 & 0x007F_FFFF),     // random subnormal
        _ => {
            // Relative to the exact product (as binary32; exact for these formats).
            let spec = Spec::ieee(Rounding::Rne);
            let (pb, _) = golden::mul(fx, x, fy, y, &Format::BINARY32, &spec, 0);
            let pmag = pb & 0x7FFF_FFFF;
            if pmag == 0 || pmag >= 0x7F80_0000 {
                // Special or zero product: a random finite z.
                return sign | (h as u32 % 0x7F80_0000);
            }
            let ps = pb & 0x8000_0000;
            let pexp = (pmag >> 23) as i64; // biased, 0 for subnormal
            let mant = [
                0u32,
                0x7F_FFFF,
                0x40_0000,
                1,
                0x40_0001,
                0x3F_FFFF,
                h as u32 & 0x7F_FFFF,
            ];
            match kind {
                12 => ps ^ 0x8000_0000 | pmag,       // exact cancellation
                13 => ps ^ 0x8000_0000 | (pmag + 1), // cancellation, 1 ulp above
                14 => ps ^ 0x8000_0000 | (pmag - 1), // cancellation, 1 ulp below
                15 => pb,                            // doubling: carry-out
                16 => ps | (pmag | 0x7F_FFFF),       // same exponent, all ones: carry
                17 => ps ^ 0x8000_0000 | (pmag & 0x7F80_0000 | (h as u32 & 0x7F_FFFF)),
                _ => {
                    // Alignment distances (in binary32 exponent steps) around the product.
                    const D: [i64; 22] = [
                        -60, -50, -40, -30, -27, -26, -25, -24, -23, -22, -3, -2, -1, 0, 1, 2, 3,
                        22, 23, 24, 25, 26,
                    ];
                    let k = (kind - 18) as usize % D.len();
                    let e = (pexp + D[k]).clamp(0, 254) as u32;
                    let m = mant[(h >> 8) as usize % mant.len()];
                    let s = if (h >> 20) & 3 == 0 { ps } else { sign };
                    s | e << 23 | m
                }
            }
        }
    }
}

/// Runs every (x, y) pair × [`Z_KINDS`] addends, × all 6 rounding modes when `modes == 6`
/// (else one hashed mode per vector); dynamic cores get the mode in `rm_i` and a hashed
/// saturation mode in `sat_i`.
fn structured(r: &GenRequest, lanes: u32, modes: u64) -> sim::Summary {
    let core = rtl::generate(r).expect("generate");
    structured_core(r, &core, lanes, modes)
}

fn structured_core(
    r: &GenRequest,
    core: &rtl::GeneratedCore,
    lanes: u32,
    modes: u64,
) -> sim::Summary {
    let model = FmaModel::new(r).expect("model");
    let fx = r.formats.x;
    let fy = r.formats.y.unwrap_or(fx);
    let (kx, ky) = (fx.k, fy.k);
    let dynamic = r.rounding == RoundingSel::Dynamic;
    let pairs = 1u64 << (kx + ky);
    let len = pairs * Z_KINDS * modes;
    verify(
        core,
        lanes,
        len,
        |i, v: &mut [u64]| {
            let x = (i & ((1 << kx) - 1)) as u32;
            let y = ((i >> kx) & ((1 << ky) - 1)) as u32;
            let rest = i >> (kx + ky);
            let kind = rest % Z_KINDS;
            v[0] = x as u64;
            v[1] = y as u64;
            v[2] = z_for(&fx, x, &fy, y, kind) as u64;
            if dynamic {
                // `modes == 6`: every mode for every (x, y, z); else one hashed mode each.
                v[3] = if modes == 6 {
                    rest / Z_KINDS
                } else {
                    mix(i ^ 0x5EED) % 6
                };
                // Mostly IEEE behaviour (satnone); every saturation mode appears.
                v[4] = match mix(i) % 8 {
                    0 => 0,
                    1 => 1,
                    2 => 3,
                    _ => 2,
                };
            }
        },
        |inp: &[u64], out: &mut [u64]| out.copy_from_slice(&model.eval(inp)),
    )
}

#[test]
fn fma_lint_clean() {
    let cases = [
        (p("e4m3"), p("e4m3")),
        (p("e5m2"), p("e5m2")),
        (p("e4m3fnuz"), p("e4m3fnuz")),
        (p("binary8p4se"), p("binary8p4se")),
        (p("e2m1"), p("e2m1")),
        (p("e4m3"), p("e5m2")),
    ];
    let mut bad = Vec::new();
    for (fx, fy) in cases {
        for dynamic in [false, true] {
            for stages in [0, 3] {
                for ftz in [false, true] {
                    let core = rtl::generate(&req(fx, fy, dynamic, stages, ftz)).expect("generate");
                    let l = lint(&core);
                    if !l.trim().is_empty() {
                        bad.push(format!("{}:\n{l}", core.top));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "lint warnings:\n{}", bad.join("\n"));
}

#[test]
fn fma_e4m3_structured_all_modes() {
    let f = p("e4m3");
    let s = structured(&req(f, f, true, 0, false), 16, 6);
    assert!(s.passed(), "{}", s.to_json());
    assert_eq!(s.vectors, 65536 * Z_KINDS * 6);
}

#[test]
fn fma_e4m3_pipelined_and_ftz() {
    let f = p("e4m3");
    let s = structured(&req(f, f, false, 3, false), 16, 1);
    assert!(s.passed(), "{}", s.to_json());
    let s = structured(&req(f, f, true, 2, true), 16, 1);
    assert!(s.passed(), "{}", s.to_json());
}

#[test]
fn fma_other_formats_structured() {
    for (fx, fy) in [
        (p("e5m2"), p("e5m2")),
        (p("e4m3"), p("e5m2")),
        (p("binary8p4se"), p("binary8p4se")),
        (p("e4m3fnuz"), p("e4m3fnuz")),
        (p("e2m1"), p("e2m1")),
    ] {
        let s = structured(&req(fx, fy, true, 0, false), 16, 1);
        assert!(s.passed(), "{}", s.to_json());
    }
}

#[test]
fn fma_broken_core_is_caught() {
    let f = p("e4m3");
    let r = req(f, f, false, 0, false);
    let mut core = rtl::generate(&r).expect("generate");
    // Drop the borrow of an effective subtraction with a nonzero sticky part.
    let needle = "add_sub & ~al_sticky}";
    assert!(
        core.verilog.contains(needle),
        "pattern not found in\n{}",
        core.verilog
    );
    core.verilog = core.verilog.replace(needle, "add_sub}");
    let s = structured_core(&r, &core, 16, 1);
    assert!(s.mismatches > 0, "the broken core passed");
    assert!(!s.counterexamples.is_empty());
    let c = &s.counterexamples[0];
    eprintln!(
        "broken fma counterexample: inputs {:?} expected {:?} got {:?}",
        c.inputs.0, c.expected.0, c.got.0
    );
}

/// Throughput breakdown (run with `--ignored --nocapture`): model evaluation alone, golden
/// alone, and the full equivalence engine on random (x, y, z).
#[test]
#[ignore]
fn fma_throughput() {
    let f = p("e4m3");
    let r = req(f, f, false, 0, false);
    let core = rtl::generate(&r).expect("generate");
    let model = FmaModel::new(&r).expect("model");
    let n = 1usize << 22;
    let mut inputs = vec![0u64; n * 4];
    for i in 0..n {
        let h = mix(i as u64);
        inputs[i * 4] = 1;
        inputs[i * 4 + 1] = h & 255;
        inputs[i * 4 + 2] = (h >> 8) & 255;
        inputs[i * 4 + 3] = h >> 32;
    }
    for lanes in [16u32, 32, 64] {
        let lib = build(&core, lanes, false);
        let mut m = lib.instantiate().expect("instantiate");
        let mut out = vec![0u64; n * 3];
        let t = std::time::Instant::now();
        m.eval(&inputs, &mut out).expect("eval");
        let dt = t.elapsed().as_secs_f64();
        eprintln!(
            "lanes {lanes}: model eval {:.3e} vectors/s (1 thread)",
            n as f64 / dt
        );
    }
    let t = std::time::Instant::now();
    let mut acc = 0u64;
    for i in 0..n {
        let o = model.eval(&inputs[i * 4 + 1..i * 4 + 4]);
        acc = acc.wrapping_add(o[0]);
    }
    let dt = t.elapsed().as_secs_f64();
    eprintln!(
        "golden fma {:.3e} vectors/s (1 thread) [{acc}]",
        n as f64 / dt
    );
    let s = verify(
        &core,
        32,
        1 << 25,
        |i, v: &mut [u64]| {
            let h = mix(i);
            v[0] = h & 255;
            v[1] = (h >> 8) & 255;
            v[2] = h >> 32;
        },
        |inp: &[u64], out: &mut [u64]| out.copy_from_slice(&model.eval(inp)),
    );
    assert!(s.passed());
}
