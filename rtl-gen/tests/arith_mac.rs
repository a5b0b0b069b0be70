//! The `mac` unit: lint, and cycle-accurate equivalence of random streams (valid gaps, clears,
//! specials, dynamic modes) with the golden stream model `rtl::units::mac::MacModel`, for a
//! combinational FMA in the loop (II = 1) and a pipelined one (II = stages + 1); a broken
//! accumulator loop must be caught.

use crate::arith_util;
use arith_util::*;
use golden::{Format, Rounding, Saturation};
use rtl::manifest::{Formats, Unit};
use rtl::units::mac::{latency, MacModel};
use rtl::{GenOptions, GenRequest, GeneratedCore, RoundingSel, SaturationSel};

fn req(fx: Format, fy: Format, dynamic: bool, stages: u32) -> GenRequest {
    GenRequest {
        unit: Unit::Mac,
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
        options: GenOptions::default(),
    }
}

fn p(name: &str) -> Format {
    Format::parse(name).expect("format")
}

/// Drives `cycles` cycles per lane (steps issued every II cycles, with random gaps, clears
/// and operands) and compares every cycle's `acc_o`, `flags_o`, `valid_o` with the stream
/// model. Returns (cycles compared, mismatches).
fn run_stream(r: &GenRequest, core: &GeneratedCore, cycles: usize, seed: u64) -> (usize, usize) {
    let lanes = 8usize;
    let lib = build(core, lanes as u32, true);
    let mut m = lib.instantiate().expect("instantiate");
    let ni = m.n_inputs();
    let no = m.n_outputs();
    let ii = latency(r.stages) as usize;
    let dynamic = r.rounding == RoundingSel::Dynamic;
    let (kx, ky) = (r.formats.x.k, r.formats.y.unwrap_or(r.formats.x).k);
    // Per lane streams, interleaved lane-major per cycle.
    let mut inputs = vec![0u64; cycles * lanes * ni];
    for c in 0..cycles {
        for l in 0..lanes {
            let h = mix(seed ^ ((c * lanes + l) as u64));
            let row = &mut inputs[(c * lanes + l) * ni..(c * lanes + l + 1) * ni];
            let issue = c % ii == 0 && h % 8 != 0;
            row[0] = issue as u64;
            row[1] = ((h >> 3) % 16 == 0) as u64;
            row[2] = (h >> 8) & ((1 << kx) - 1);
            row[3] = (h >> 24) & ((1 << ky) - 1);
            if dynamic {
                row[4] = (h >> 40) % 6;
                row[5] = if (h >> 44) % 8 == 0 { (h >> 48) & 3 } else { 2 };
            }
        }
    }
    let mut outputs = vec![0u64; cycles * lanes * no];
    m.eval(&inputs, &mut outputs).expect("eval");
    let mut bad = 0;
    for l in 0..lanes {
        let mut model = MacModel::new(r).expect("model");
        for c in 0..cycles {
            let i = c * lanes + l;
            let exp = model.step(&inputs[i * ni..(i + 1) * ni]);
            let got = &outputs[i * no..(i + 1) * no];
            // valid_o is checked every cycle; acc_o/flags_o too (they hold between steps).
            if got != &exp[..no] {
                if bad < 6 {
                    eprintln!(
                        "{} lane {l} cycle {c}: inputs {:x?} expected {:x?} got {:x?}",
                        core.top,
                        &inputs[i * ni..(i + 1) * ni],
                        exp,
                        got
                    );
                }
                bad += 1;
            }
        }
    }
    (cycles * lanes, bad)
}

#[test]
fn mac_lint_clean() {
    let mut bad = Vec::new();
    for (fx, fy) in [
        (p("e4m3"), p("e4m3")),
        (p("e4m3"), p("e5m2")),
        (p("binary8p4se"), p("binary8p4se")),
    ] {
        for dynamic in [false, true] {
            for stages in [0, 3] {
                let core = rtl::generate(&req(fx, fy, dynamic, stages)).expect("generate");
                assert_eq!(core.manifest.latency, stages + 1);
                assert_eq!(core.manifest.initiation_interval, stages + 1);
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
fn mac_streams_match_golden() {
    for (fx, fy, dynamic, stages) in [
        (p("e4m3"), p("e4m3"), false, 0),
        (p("e4m3"), p("e4m3"), true, 0),
        (p("e4m3"), p("e5m2"), true, 2),
        (p("binary8p4se"), p("binary8p4se"), true, 1),
    ] {
        let r = req(fx, fy, dynamic, stages);
        let core = rtl::generate(&r).expect("generate");
        let (n, bad) = run_stream(&r, &core, 20000, 7 + stages as u64);
        eprintln!("{}: {n} lane-cycles, {bad} mismatches", core.top);
        assert_eq!(bad, 0, "{bad} of {n} lane-cycles mismatch");
    }
}

#[test]
fn mac_broken_loop_is_caught() {
    let f = p("e4m3");
    let r = req(f, f, false, 0);
    let mut core = rtl::generate(&r).expect("generate");
    let needle = "wire [31:0] fma_z = clear_i ? 32'h0 : acc_q;";
    assert!(core.verilog.contains(needle));
    core.verilog = core.verilog.replace(needle, "wire [31:0] fma_z = acc_q;");
    let (n, bad) = run_stream(&r, &core, 4000, 3);
    assert!(bad > 0, "the broken mac passed {n} lane-cycles");
}
