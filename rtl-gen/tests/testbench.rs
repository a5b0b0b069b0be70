//! The self-checking testbench fp8gen writes next to a core (`<top>_tb.sv`,
//! `<top>_vectors.hex`, FuseSoC target `sim`): written and owned by `gen`, replaced with
//! `--force`, `verilator --lint-only -Wall` clean for every unit, and its vectors follow the
//! core's protocol (latency, initiation interval). Running it is scripts/fusesoc_check.sh
//! (Icarus and Verilator, with a core whose RTL is broken as negative control).

use crate::common;
use common::*;
use golden::{Format, Rounding, Saturation};
use iface::Formats;
use rtl::manifest::Unit;
use rtl::testbench::{file_names, testbench, SIM_CYCLES};
use rtl::{generate, write_core_with_testbench, GenRequest, RoundingSel, SaturationSel};
use std::process::Command;

fn mac(stages: u32, guard: u32, interleave: u32) -> GenRequest {
    let mut r = GenRequest {
        unit: Unit::Mac,
        formats: Formats {
            x: Format::E4M3,
            y: Some(Format::E4M3),
            r: Format::BINARY32,
            scale: None,
            z: None,
        },
        rounding: RoundingSel::Dynamic,
        saturation: SaturationSel::Fixed(Saturation::SatNone),
        sr_bits: 0,
        stages,
        options: Default::default(),
    };
    r.options.acc_guard = guard;
    r.options.interleave = interleave;
    r
}

fn requests() -> Vec<GenRequest> {
    vec![
        GenRequest::decode(Format::E5M2).with_stages(1),
        GenRequest::project(Format::E4M3, RoundingSel::Dynamic, SaturationSel::Dynamic)
            .with_sr_bits(4),
        GenRequest::project(
            Format::E2M1,
            RoundingSel::Fixed(Rounding::Rne),
            SaturationSel::Fixed(Saturation::SatFinite),
        )
        .with_stages(2),
        mac(0, 0, 0),
        mac(3, 0, 0),
        mac(2, 0, 2),
        mac(2, 16, 0),
    ]
}

#[test]
fn testbenches_are_verilator_wall_clean() {
    let mut bad = Vec::new();
    for req in requests() {
        let core = generate(&req).expect("generate");
        let dir = scratch(&format!("tb-lint-{}", core.top));
        let out = dir.join("core");
        write_core_with_testbench(&out, &core, &req, false).expect("write");
        let (tv, _) = file_names(&core.top);
        let o = Command::new(verilator())
            .args(["--lint-only", "-Wall", "--timing", "--top-module"])
            .arg(format!("{}_tb", core.top))
            .arg(out.join(&tv))
            .arg(out.join(format!("{}.v", core.top)))
            .output()
            .expect("run verilator");
        if !o.status.success() {
            bad.push(format!(
                "{}: {}",
                core.top,
                String::from_utf8_lossy(&o.stderr)
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Splits a vector line into its fields (`widths` MSB first).
fn fields(line: &str, widths: &[u32]) -> Vec<u128> {
    let v = u128::from_str_radix(line, 16).expect("hex");
    let total: u32 = widths.iter().sum();
    let mut at = total;
    widths
        .iter()
        .map(|w| {
            at -= w;
            (v >> at) & ((1u128 << w) - 1)
        })
        .collect()
}

#[test]
fn vectors_follow_latency_and_initiation_interval() {
    for req in [
        mac(2, 0, 0),
        mac(1, 16, 0),
        GenRequest::decode(Format::E4M3).with_stages(2),
    ] {
        let core = generate(&req).expect("generate");
        let tb = testbench(&req, &core).expect("testbench");
        // Deterministic.
        assert_eq!(tb, testbench(&req, &core).expect("again"));
        let lat = core.manifest.latency as usize;
        let ii = core.manifest.initiation_interval as usize;
        assert_eq!(tb.lines, SIM_CYCLES + lat);
        let ports = &core.manifest.ports;
        use rtl::manifest::{Direction, Role};
        let ctl = |r: Role| r.is_control();
        let ins: Vec<u32> = ports
            .iter()
            .filter(|p| p.direction == Direction::Input && !ctl(p.role))
            .map(|p| p.width)
            .collect();
        let outs: Vec<u32> = ports
            .iter()
            .filter(|p| p.direction == Direction::Output && !ctl(p.role))
            .map(|p| p.width)
            .collect();
        let mut widths = vec![1];
        widths.extend(&ins);
        widths.push(1);
        widths.extend(&outs);
        let rows: Vec<Vec<u128>> = tb.vectors.lines().map(|l| fields(l, &widths)).collect();
        assert_eq!(rows.len(), tb.lines);
        let valid_in: Vec<bool> = rows.iter().map(|r| r[0] == 1).collect();
        let valid_out: Vec<bool> = rows.iter().map(|r| r[1 + ins.len()] == 1).collect();
        for c in 0..tb.lines {
            let want = c >= lat && valid_in[c - lat];
            assert_eq!(valid_out[c], want, "{}: cycle {c}", core.top);
        }
        let issued: Vec<usize> = (0..tb.lines).filter(|&c| valid_in[c]).collect();
        assert!(
            issued.len() > SIM_CYCLES / 2 / ii,
            "{}: too few steps",
            core.top
        );
        assert!(
            issued.windows(2).all(|w| w[1] - w[0] >= ii),
            "{}: a step inside the initiation interval {ii}",
            core.top
        );
        assert!(tb.verilog.contains("$fatal(1, \"FAIL: "));
        assert!(tb.verilog.contains("$display(\"PASS: "));
    }
}

#[test]
fn gen_writes_owns_and_replaces_the_testbench() {
    let base = scratch("tb-write");
    let req = mac(2, 16, 0);
    let core = generate(&req).expect("gen");
    let out = base.join("out");
    write_core_with_testbench(&out, &core, &req, false).expect("write");
    let (tv, th) = file_names(&core.top);
    let text = std::fs::read_to_string(out.join(format!("{}.core", core.top))).expect("core");
    assert_eq!(text, rtl::fusesoc::core_file_sim(&core.manifest, true));
    assert!(text.contains("  sim:\n"), "{text}");
    assert!(
        text.contains(&format!("      - \"{th}\": {{copyto: \"{th}\"}}\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!("    toplevel: \"{}_tb\"\n", core.top)),
        "{text}"
    );
    let tb = testbench(&req, &core).expect("tb");
    assert_eq!(
        std::fs::read_to_string(out.join(&tv)).expect("tb.v"),
        tb.verilog
    );
    assert_eq!(
        std::fs::read_to_string(out.join(&th)).expect("hex"),
        tb.vectors
    );
    // --force replaces every file of the earlier core, the testbench included.
    let req2 = GenRequest::decode(Format::E5M2);
    let other = generate(&req2).expect("gen2");
    write_core_with_testbench(&out, &other, &req2, true).expect("force");
    for f in [&tv, &th] {
        assert!(!out.join(f).exists(), "{f} of the old core left behind");
    }
    let (tv2, th2) = file_names(&other.top);
    assert!(out.join(&tv2).exists() && out.join(&th2).exists());
    // A file the user put there is not gen's: refused even with --force, nothing deleted.
    std::fs::write(out.join("my_tb.v"), "// mine").expect("user file");
    let e = write_core_with_testbench(&out, &core, &req, true).expect_err("must refuse");
    assert!(e.to_string().contains("my_tb.v"), "{e}");
    assert!(out.join("my_tb.v").exists() && out.join(&tv2).exists());
}
