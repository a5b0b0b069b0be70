//! The `mul` unit: Verilator lint on several configurations and exhaustive equivalence
//! (every x, y pair in every rounding and saturation mode) against `golden::mul`, combinational
//! and pipelined; a deliberately broken core must fail with a counterexample.

use crate::arith_util;
use arith_util::*;
use golden::{Format, Rounding, Saturation};
use rtl::manifest::{Formats, Unit};
use rtl::units::mul::MulModel;
use rtl::{GenOptions, GenRequest, RoundingSel, SaturationSel};

fn req(fx: Format, fy: Format, fr: Format, dynamic: bool, stages: u32) -> GenRequest {
    GenRequest {
        unit: Unit::Mul,
        formats: Formats {
            x: fx,
            y: Some(fy),
            r: fr,
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
            SaturationSel::Fixed(Saturation::SatFinite)
        },
        sr_bits: 0,
        stages,
        options: GenOptions::default(),
    }
}

fn p(name: &str) -> Format {
    Format::parse(name).expect("format")
}

/// Exhaustive over x, y and (for dynamic cores) all 6 deterministic roundings × 4
/// saturations.
fn exhaustive(r: &GenRequest, lanes: u32) -> sim::Summary {
    let core = rtl::generate(r).expect("generate");
    let model = MulModel::new(r).expect("model");
    let fy = r.formats.y.unwrap_or(r.formats.x);
    let (kx, ky) = (r.formats.x.k, fy.k);
    let dynamic = r.rounding == RoundingSel::Dynamic;
    let modes = if dynamic { 24 } else { 1 };
    let len = (1u64 << (kx + ky)) * modes;
    verify(
        &core,
        lanes,
        len,
        |i, v: &mut [u64]| {
            v[0] = i & ((1 << kx) - 1);
            v[1] = (i >> kx) & ((1 << ky) - 1);
            if dynamic {
                let m = i >> (kx + ky);
                v[2] = m % 6;
                v[3] = m / 6;
            }
        },
        |inp: &[u64], out: &mut [u64]| out.copy_from_slice(&model.eval(inp)),
    )
}

#[test]
fn mul_lint_clean() {
    let b32 = Format::BINARY32;
    let cases = [
        (p("e4m3"), p("e4m3"), p("e4m3")),
        (p("e5m2"), p("e5m2"), p("e5m2")),
        (p("e4m3fnuz"), p("e4m3fnuz"), p("e4m3fnuz")),
        (p("binary8p4se"), p("binary8p4se"), p("binary8p4se")),
        (p("e2m1"), p("e2m1"), p("e2m1")),
        (p("e4m3"), p("e5m2"), b32),
        (p("e8m0"), p("e8m0"), p("e8m0")),
        (p("binary8p1uf"), p("binary8p3se"), p("binary8p2ue")),
    ];
    let mut bad = Vec::new();
    for (fx, fy, fr) in cases {
        for dynamic in [false, true] {
            for stages in [0, 3] {
                let r = req(fx, fy, fr, dynamic, stages);
                let core = rtl::generate(&r).expect("generate");
                let l = lint(&core);
                if !l.trim().is_empty() {
                    bad.push(format!("{}:\n{l}", core.top));
                }
            }
        }
    }
    assert!(bad.is_empty(), "lint warnings:\n{}", bad.join("\n"));
}

#[test]
fn mul_e4m3_exhaustive_all_modes() {
    let f = p("e4m3");
    let s = exhaustive(&req(f, f, f, true, 0), 16);
    assert!(s.passed(), "{}", s.to_json());
    assert_eq!(s.vectors, 65536 * 24);
}

#[test]
fn mul_e4m3_pipelined_exhaustive() {
    let f = p("e4m3");
    let s = exhaustive(&req(f, f, f, true, 3), 16);
    assert!(s.passed(), "{}", s.to_json());
    let core = rtl::generate(&req(f, f, f, false, 3)).expect("generate");
    assert_eq!(core.manifest.latency, 3);
    let s = exhaustive(&req(f, f, f, false, 3), 16);
    assert!(s.passed(), "{}", s.to_json());
}

#[test]
fn mul_other_formats_exhaustive() {
    let b32 = Format::BINARY32;
    for (fx, fy, fr) in [
        (p("e5m2"), p("e5m2"), p("e5m2")),
        (p("e4m3fnuz"), p("e4m3fnuz"), p("e4m3fnuz")),
        (p("binary8p4se"), p("binary8p4se"), p("binary8p4se")),
        (p("e2m1"), p("e2m1"), p("e2m1")),
        (p("e4m3"), p("e5m2"), b32),
        (p("e4m3"), p("e5m2"), p("e4m3")),
        (p("binary8p1uf"), p("binary8p3se"), p("binary8p2ue")),
    ] {
        let s = exhaustive(&req(fx, fy, fr, true, 0), 8);
        assert!(s.passed(), "{}", s.to_json());
    }
}

#[test]
fn mul_stochastic_e4m3_exhaustive() {
    let f = p("e4m3");
    let mut r = req(f, f, f, false, 0);
    r.rounding = RoundingSel::Fixed(Rounding::Sra(3));
    let core = rtl::generate(&r).expect("generate");
    let model = MulModel::new(&r).expect("model");
    let s = verify(
        &core,
        8,
        1 << 19,
        |i, v: &mut [u64]| {
            v[0] = i & 255;
            v[1] = (i >> 8) & 255;
            v[2] = i >> 16;
        },
        |inp: &[u64], out: &mut [u64]| out.copy_from_slice(&model.eval(inp)),
    );
    assert!(s.passed(), "{}", s.to_json());
}

#[test]
fn mul_broken_core_is_caught() {
    let f = p("e4m3");
    let r = req(f, f, f, false, 0);
    let mut core = rtl::generate(&r).expect("generate");
    // Break the 0 * Inf / NaN rule: a NaN y operand is no longer seen.
    let needle = "wire p_any_nan = x_is_nan | y_is_nan;";
    assert!(core.verilog.contains(needle), "pattern not found");
    core.verilog = core.verilog.replace(needle, "wire p_any_nan = x_is_nan;");
    core.top = core.top.clone();
    let model = MulModel::new(&r).expect("model");
    let s = verify(
        &core,
        8,
        1 << 16,
        |i, v: &mut [u64]| {
            v[0] = i & 255;
            v[1] = i >> 8;
        },
        |inp: &[u64], out: &mut [u64]| out.copy_from_slice(&model.eval(inp)),
    );
    assert!(s.mismatches > 0, "the broken core passed");
    assert!(!s.counterexamples.is_empty());
    let c = &s.counterexamples[0];
    eprintln!("broken mul counterexample: {}", serde_json_line(c));
}

fn serde_json_line(c: &sim::Counterexample) -> String {
    format!(
        "inputs {:?} expected {:?} got {:?}",
        c.inputs.0, c.expected.0, c.got.0
    )
}

/// `--ftz` (subnormal operands and results flushed, `golden::mul_ftz`): every pair in every
/// mode for formats with and without −0 (signed: the rounder's shifter-free flush; unsigned:
/// the flush of the encoded result), P = 2, tininess before rounding, a mixed-format core
/// and pipelined ones; lint clean.
#[test]
fn mul_ftz_exhaustive() {
    for (fx, fy, fr, stages, before) in [
        (p("e4m3"), p("e4m3"), p("e4m3"), 0, false),
        (p("e4m3fnuz"), p("e4m3fnuz"), p("e4m3fnuz"), 2, false),
        (p("e4m3"), p("e5m2"), p("binary16"), 0, false),
        (p("e5m2"), p("e5m2"), p("e5m2"), 1, true),
        (
            p("binary8p3se"),
            p("binary8p3se"),
            p("binary8p3se"),
            0,
            false,
        ),
        (
            p("binary8p2se"),
            p("binary8p2se"),
            p("binary8p2se"),
            0,
            false,
        ),
        (
            p("binary8p3ue"),
            p("binary8p3ue"),
            p("binary8p3ue"),
            0,
            false,
        ),
    ] {
        let mut r = req(fx, fy, fr, true, stages);
        r.options.ftz = true;
        if before {
            r.options.tininess = golden::Tininess::BeforeRounding;
        }
        let core = rtl::generate(&r).expect("generate");
        assert!(
            core.top.ends_with(&format!("_ftz_s{stages}")),
            "{}",
            core.top
        );
        assert!(core.manifest.modes.ftz);
        let l = lint(&core);
        assert!(l.trim().is_empty(), "{}: {l}", core.top);
        let s = exhaustive(&r, 8);
        assert!(s.passed(), "{}", s.to_json());
    }
}
