//! Tests of the FPGA flow: report parsing on real tool output, wrapper and shell text,
//! the UART shell simulated in Verilator against the host code, and an end-to-end
//! synthesis of the reference multiplier (needs `scripts/setup-fpga.sh`).

use std::io::{BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::report::{parse_nextpnr_log, parse_nextpnr_report, parse_yosys_stat};
use crate::*;

// ---------------------------------------------------------------- report parsing

/// `stat -json` of the reference 8x8 multiplier in the synthesis wrapper, yosys 0.70,
/// `synth_ice40 -dsp` (module entries trimmed to the fields the parser reads).
const STAT_ICE40_DSP: &str = r#"{"creator": "Yosys 0.70", "modules": {
 "\\fp8gen_synth_top": {"num_cells": 42, "num_cells_by_type": {"SB_DFF": 37, "SB_LUT4": 5, "mul8x8": 1}},
 "\\mul8x8": {"num_cells": 1, "num_cells_by_type": {"SB_MAC16": 1}}}}"#;

/// Same design, `synth_ecp5 -nodsp`.
const STAT_ECP5_NODSP: &str = r#"{"creator": "Yosys 0.70", "modules": {
 "\\fp8gen_synth_top": {"num_cells": 42, "num_cells_by_type": {"LUT4": 5, "TRELLIS_FF": 37, "mul8x8": 1}},
 "\\mul8x8": {"num_cells": 411, "num_cells_by_type": {"CCU2C": 8, "L6MUX21": 48, "LUT4": 261, "PFUMX": 94}}}}"#;

/// Same design, `synth_gowin -nodsp -noiopads` + top-level `iopadmap`.
const STAT_GOWIN_NODSP: &str = r#"{"creator": "Yosys 0.70", "modules": {
 "\\fp8gen_synth_top": {"num_cells": 45, "num_cells_by_type": {"DFF": 37, "IBUF": 2, "LUT4": 5, "OBUF": 1, "mul8x8": 1}},
 "\\mul8x8": {"num_cells": 265, "num_cells_by_type": {"ALU": 16, "GND": 1, "LUT1": 7, "LUT2": 40, "LUT3": 30, "LUT4": 108, "MUX2_LUT5": 48, "MUX2_LUT6": 9, "MUX2_LUT7": 4, "MUX2_LUT8": 1, "VCC": 1}}}}"#;

/// nextpnr-ecp5 0.11 `--report` (utilisation trimmed).
const REPORT_ECP5: &str = r#"{"critical_paths": [], "fmax": {"$glbnet$clk$TRELLIS_IO_IN": {"achieved": 147.9071044921875, "constraint": 50}}, "utilization": {"ALU54B": {"available": 14, "used": 0}, "DCCA": {"available": 56, "used": 1}, "MULT18X18D": {"available": 28, "used": 1}, "TRELLIS_COMB": {"available": 24288, "used": 6}, "TRELLIS_FF": {"available": 24288, "used": 37}}}"#;

/// nextpnr-ice40 0.11 log excerpt of a design failing 100 MHz (without --timing-allow-fail).
const LOG_ICE40_FAIL: &str = "Info: Device utilisation:
Info: \t         ICESTORM_LC:     177/   5280     3%
Info: \t        ICESTORM_RAM:       0/     30     0%
Info: \t               SB_IO:      33/     39    84%
Info: \t               SB_GB:       1/      8    12%
Info: \t        ICESTORM_DSP:       0/      8     0%

Info: Max frequency for clock 'clk$SB_IO_IN_$glb_clk': 43.39 MHz (FAIL at 100.00 MHz)
Info: Routing..
ERROR: Max frequency for clock 'clk$SB_IO_IN_$glb_clk': 41.73 MHz (FAIL at 100.00 MHz)
";

/// nextpnr-himbaechel-gowin 0.11 log excerpt.
const LOG_GOWIN: &str = "Info: Device utilisation:
Info: \t                 VCC:       1/      1   100%
Info: \t                 IOB:       3/    276     1%
Info: \t                LUT4:       5/   8640     0%
Info: Max frequency for clock '$iopadmap$clk': 464.04 MHz (PASS at 50.00 MHz)
Info: Max frequency for clock '$iopadmap$clk': 389.11 MHz (PASS at 50.00 MHz)
";

#[test]
fn yosys_stat_counts_core_cells_only() {
    let c = parse_yosys_stat(Arch::Ice40, STAT_ICE40_DSP, "mul8x8").unwrap();
    assert_eq!((c.luts, c.ffs, c.dsp, c.carry, c.cells), (0, 0, 1, 0, 1));
    let w = parse_yosys_stat(Arch::Ice40, STAT_ICE40_DSP, "fp8gen_synth_top").unwrap();
    assert_eq!((w.luts, w.ffs, w.cells), (5, 37, 42));
    assert!(
        !w.by_type.contains_key("mul8x8"),
        "submodule instance counted as a cell"
    );

    let c = parse_yosys_stat(Arch::Ecp5, STAT_ECP5_NODSP, "mul8x8").unwrap();
    assert_eq!((c.luts, c.carry, c.muxes, c.dsp), (261, 8, 142, 0));
    assert_eq!(c.cells, 411);

    let c = parse_yosys_stat(Arch::Gowin, STAT_GOWIN_NODSP, "mul8x8").unwrap();
    assert_eq!(c.luts, 7 + 40 + 30 + 108);
    assert_eq!((c.carry, c.muxes, c.dsp), (16, 62, 0));
    assert_eq!(c.cells, 265 - 2, "GND/VCC are not logic");
    let w = parse_yosys_stat(Arch::Gowin, STAT_GOWIN_NODSP, "fp8gen_synth_top").unwrap();
    assert_eq!(
        (w.ffs, w.luts, w.cells),
        (37, 5, 42),
        "I/O buffers are not logic"
    );

    let err = parse_yosys_stat(Arch::Ice40, STAT_ICE40_DSP, "nope").unwrap_err();
    assert!(err.to_string().contains("no module `nope`"), "{err}");
    assert!(parse_yosys_stat(Arch::Ice40, "{", "x").is_err());
}

#[test]
fn nextpnr_report_and_log_agree_on_format() {
    let r = parse_nextpnr_report(REPORT_ECP5).unwrap();
    assert!((r.fmax().unwrap() - 147.907).abs() < 1e-3);
    assert!(r.met());
    assert_eq!(r.utilization.get("MULT18X18D"), Some(&(1, 28)));
    assert!(
        !r.utilization.contains_key("ALU54B"),
        "unused resources are dropped"
    );

    let l = parse_nextpnr_log(LOG_ICE40_FAIL).unwrap();
    assert!(
        (l.fmax().unwrap() - 41.73).abs() < 1e-9,
        "post-route line wins"
    );
    assert!(!l.met());
    assert_eq!(l.utilization.get("SB_IO"), Some(&(33, 39)));
    assert_eq!(l.utilization.get("ICESTORM_LC"), Some(&(177, 5280)));
    assert!(!l.utilization.contains_key("ICESTORM_DSP"));

    let g = parse_nextpnr_log(LOG_GOWIN).unwrap();
    assert!((g.fmax().unwrap() - 389.11).abs() < 1e-9);
    assert!(g.met());
    assert_eq!(g.utilization.get("IOB"), Some(&(3, 276)));

    assert!(parse_nextpnr_log("Info: nothing here").is_err());
    assert!(parse_nextpnr_report("{\"utilization\": {}}").is_err());
}

/// Real `--report` JSON of nextpnr 0.11 (YoWASP), `fp8gen synth --keep` of E4M3 cores in
/// the synthesis wrapper (seed 1; per segment the `sources` and `loc` fields and the unused
/// resources are left out): project at 2 stages on ECP5-25k (LUT4 → PFUMX → L6MUX21) and
/// on iCE40 UP5K, mul at 2 stages (a path through a carry chain), the exact mac at 4 stages
/// (a 28-arc carry chain inside the instance `u_round`), the binary32 mac at 2 stages
/// (from the accumulator state register into the instance `u_fma`).
const REPORT_ECP5_PROJECT_S2: &str = include_str!("testdata/report_ecp5_project_s2.json");
const REPORT_ICE40_PROJECT_S2: &str = include_str!("testdata/report_ice40_project_s2.json");
const REPORT_ECP5_MUL_S2: &str = include_str!("testdata/report_ecp5_mul_s2_carry.json");
const REPORT_ECP5_MAC_EXACT_S4: &str = include_str!("testdata/report_ecp5_mac_exact_s4.json");
const REPORT_ECP5_MAC_S2: &str = include_str!("testdata/report_ecp5_mac_s2.json");

#[test]
fn critical_path_is_read_from_real_nextpnr_reports() {
    use crate::report::parse_critical_path;
    // (report, total ns, routing ns, levels, carry arcs, from, to, scope, stage)
    type Case<'a> = (
        &'a str,
        f64,
        f64,
        u32,
        u32,
        &'a str,
        &'a str,
        &'a str,
        Option<u32>,
    );
    let cases: [Case; 5] = [
        (
            REPORT_ECP5_PROJECT_S2,
            4.242,
            2.582,
            3,
            0,
            "in_r",
            "dut.in_is_nan_q1",
            "",
            Some(0),
        ),
        (
            REPORT_ICE40_PROJECT_S2,
            12.952,
            7.044,
            4,
            0,
            "in_r",
            "dut.round_st0_q1",
            "",
            Some(0),
        ),
        (
            REPORT_ECP5_MUL_S2,
            6.288,
            3.733,
            5,
            3,
            "in_r",
            "dut.p_raw_pp1_0_q1",
            "",
            Some(0),
        ),
        (
            REPORT_ECP5_MAC_EXACT_S4,
            9.111,
            5.160,
            5,
            28,
            "dut.u_round.acc_i",
            "dut.u_round.onrm_t5_c_q1",
            "u_round",
            Some(0),
        ),
        (
            REPORT_ECP5_MAC_S2,
            15.669,
            10.188,
            12,
            10,
            "dut.acc_o",
            "dut.u_fma.al_amt_q1",
            "u_fma",
            Some(0),
        ),
    ];
    for (json, total, routing, levels, carry, from, to, scope, stage) in cases {
        let cp = parse_critical_path(json, Some(2))
            .unwrap()
            .expect("a clock-to-clock path");
        let ctx = format!("{from} -> {to}: {cp:?}");
        assert!((cp.total_ns - total).abs() < 1e-3, "{ctx}");
        assert!((cp.routing_ns - routing).abs() < 1e-3, "{ctx}");
        assert!(
            (cp.logic_ns + cp.routing_ns - cp.total_ns).abs() < 1e-9,
            "{ctx}"
        );
        // nextpnr's Fmax is the inverse of this path's delay
        let fmax = parse_nextpnr_report(json).unwrap().fmax().unwrap();
        assert!((1000.0 / fmax - cp.total_ns).abs() < 1e-3, "{ctx}");
        assert_eq!((cp.levels, cp.carry_arcs), (levels, carry), "{ctx}");
        assert_eq!((cp.from.as_str(), cp.to.as_str()), (from, to), "{ctx}");
        assert_eq!((cp.scope.as_str(), cp.stage), (scope, stage), "{ctx}");
    }
    // A report without critical paths (older nextpnr, or trimmed) has none; bad JSON is an error.
    assert_eq!(parse_critical_path(REPORT_ECP5, Some(0)).unwrap(), None);
    assert_eq!(
        parse_critical_path("{\"fmax\": {}}", Some(0)).unwrap(),
        None
    );
    assert!(parse_critical_path("{", Some(0)).is_err());
    let no_delay = r#"{"critical_paths": [{"from": "posedge c", "to": "posedge c",
        "path": [{"type": "logic", "from": {"cell": "a", "port": "A"}, "to": {"cell": "a", "port": "F"}}]}]}"#;
    // iCE40: a start cell named after the LUT packed with its flip-flop; the net the
    // flip-flop drives names the register
    let packed = r#"{"critical_paths": [{"from": "posedge c", "to": "posedge c", "path": [
        {"type": "clk-to-q", "delay": 1.39, "from": {"cell": "dut.x_lzc_q1_SB_LUT4_I1_LC", "port": "O"}, "to": {"cell": "dut.x_lzc_q1_SB_LUT4_I1_LC", "port": "O"}},
        {"type": "routing", "delay": 1.76, "net": "dut.x_exp_q2[3]", "from": {"cell": "dut.x_lzc_q1_SB_LUT4_I1_LC", "port": "O"}, "to": {"cell": "out_r_SB_DFF_Q_2_DFFLC", "port": "I0"}},
        {"type": "setup", "delay": 1.23, "from": {"cell": "out_r_SB_DFF_Q_2_DFFLC", "port": "I0"}, "to": {"cell": "out_r_SB_DFF_Q_2_DFFLC", "port": "I0"}}]}]}"#;
    let cp = parse_critical_path(packed, Some(2)).unwrap().unwrap();
    assert_eq!(
        (cp.from.as_str(), cp.to.as_str()),
        ("dut.x_exp_q2", "out_r")
    );
    assert_eq!((cp.stage, cp.levels), (Some(2), 1), "{cp:?}");
    let err = parse_critical_path(no_delay, Some(0)).unwrap_err();
    assert!(err.to_string().contains("no delay"), "{err}");
}

#[test]
fn stage_times_are_the_latest_arrivals_at_each_stages_registers() {
    use crate::report::{parse_stage_times, StageTime};
    let t = |scope: &str, stage: Option<u32>, ns: f64, to: &str| StageTime {
        scope: scope.into(),
        stage,
        ns,
        to: to.into(),
    };
    // project, 2 stages: the worst arrival of each stage; the first is the critical path
    assert_eq!(
        parse_stage_times(REPORT_ECP5_PROJECT_S2, Some(2)).unwrap(),
        vec![
            t("", Some(0), 4.242, "dut.in_is_nan_q1"),
            t("", Some(1), 3.875, "dut.round_ovf_t1_q2"),
            t("", Some(2), 3.718, "out_r"),
        ]
    );
    // iCE40: arrivals before the end register's own LUT (its setup arc, not included);
    // a LUT-named logic cell packing a register bit has no known stage
    assert_eq!(
        parse_stage_times(REPORT_ICE40_PROJECT_S2, Some(2)).unwrap(),
        vec![
            t("", Some(0), 12.75, "dut.round_den_b8_0_q1"),
            t("", Some(1), 12.645, "dut.round_mag_b6_0_q2"),
            t("", Some(2), 10.248, "out_r"),
            t("?", None, 10.248, "dut.flags_o_SB_LUT4_O_2_LC"),
        ]
    );
    // the exact mac: stages of its instances; the accumulator (u_round's input register)
    // and the overflow flag are state registers; out_r ends u_round's last stage, which the
    // top module does not number
    assert_eq!(
        parse_stage_times(REPORT_ECP5_MAC_EXACT_S4, None).unwrap(),
        vec![
            t("", None, 7.299, "dut.ovf_q"),
            t("u_round", None, 5.588, "dut.u_round.acc_i"),
            t("u_round", Some(0), 9.111, "dut.u_round.onrm_t5_c_q1"),
            t("u_round", Some(1), 8.44, "dut.u_round.round_win_b23_1_q2"),
            t("u_term", Some(0), 7.033, "dut.u_term.l0_prod_pp1_0_q1"),
        ]
    );
    assert!(
        parse_stage_times(REPORT_ECP5_MUL_S2, Some(2))
            .unwrap()
            .is_empty(),
        "no detailed timings"
    );
    assert!(parse_stage_times("[", Some(0)).is_err());
}

#[test]
fn register_names_give_the_pipeline_stage() {
    use crate::report::{path_stage, register_of, register_stage};
    assert_eq!(register_of("in_r_TRELLIS_FF_Q_23"), "in_r");
    assert_eq!(
        register_of("dut.round_st0_q1_SB_DFF_Q_DFFLC"),
        "dut.round_st0_q1"
    );
    assert_eq!(register_of("dut.x_q2_SB_DFFSR_Q"), "dut.x_q2");
    assert_eq!(register_of("dut.x_q2_DFFE_Q_1"), "dut.x_q2");
    assert_eq!(register_of("no_marker"), "no_marker");
    assert_eq!(register_stage("dut.sum_q3"), Some(3));
    assert_eq!(register_stage("dut.sum_b7_0_q12"), Some(12));
    assert_eq!(
        register_stage("dut.sum_q2_1"),
        Some(2),
        "a second register of the name"
    );
    assert_eq!(register_stage("dut.acc_q"), None, "a state register");
    assert_eq!(register_stage("dut.u_round.acc_i"), None);
    assert_eq!(register_stage("q1"), None);
    let st = |f: &str, t: &str, n: u32| path_stage(f, t, Some(n));
    let top = |k: u32| Some((String::new(), k));
    assert_eq!(st("in_r", "dut.a_q1", 3), top(0));
    assert_eq!(st("dut.a_q1", "dut.b_q2", 3), top(1));
    assert_eq!(st("dut.a_q3", "out_r", 3), top(3));
    assert_eq!(st("in_r", "out_r", 0), top(0), "a combinational core");
    assert_eq!(st("dut.a_q1", "dut.b_q3", 3), None, "the two ends disagree");
    assert_eq!(
        st("dut.acc_q", "out_r", 3),
        None,
        "a state register to the output"
    );
    assert_eq!(
        st("dut.acc_q", "dut.acc_q", 3),
        None,
        "a state register loop"
    );
    assert_eq!(
        st("dut.a_q2", "dut.acc_q", 3),
        top(2),
        "into a state register"
    );
    assert_eq!(
        st("in_r", "dut.acc_q", 3),
        None,
        "inputs into a state register"
    );
    assert_eq!(
        st("dut.u_fma.a_q1", "out_r", 2),
        None,
        "out_r ends the top module's last stage, not an instance's"
    );
    assert_eq!(
        path_stage("in_r", "out_r", None),
        None,
        "a top module that is no pipeline numbers no stage"
    );
    assert_eq!(
        st("dut.u_fma.a_q1", "dut.u_fma.b_q2", 2),
        Some(("u_fma".to_string(), 1))
    );
}

/// The generator's `Stage depths` header lines, read back per pipelined module and named
/// by the instance inside the core (as the critical path's scope).
#[test]
fn stage_depths_are_read_from_generated_verilog() {
    use crate::report::stage_depths;
    use golden::{Format, Rounding, Saturation};
    let gen = |stages: u32| {
        let req = rtl::GenRequest::project(
            Format::E4M3,
            rtl::RoundingSel::Fixed(Rounding::Rne),
            rtl::SaturationSel::Fixed(Saturation::SatFinite),
        )
        .with_stages(stages);
        rtl::generate(&req).unwrap()
    };
    let p = gen(2);
    let d = stage_depths(&p.verilog, &p.top);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, "");
    assert_eq!(d[0].1.len(), 3, "stages 0, 1, 2: {d:?}");
    assert!(d[0].1.iter().all(|l| *l > 0.0), "{d:?}");
    let longest = d[0].1.iter().copied().fold(0.0, f64::max);
    assert!(
        longest <= p.depth as f64 / 10.0 && longest * 3.0 >= p.depth as f64 / 10.0 - 1e-9,
        "three stages share the depth {}: {d:?}",
        p.depth
    );
    let c = gen(0);
    assert!(
        stage_depths(&c.verilog, &c.top).is_empty(),
        "a combinational core"
    );
    // Modules the top instantiates are named by their instance; a module the top does not
    // instantiate, or without the line, has none.
    let v = "// Stage depths: 6.4 | 6.8 (levels)\nmodule a_term (\n);\nendmodule\n\
             module b_spare (\n);\nendmodule\n\
             // Stage depths: 11.8 | 12.0 | 10.2 (levels)\nmodule a_round (\n);\nendmodule\n\
             // Stage depths: 1.0 (levels)\nmodule unused (\n);\nendmodule\n\
             module a (\n  input wire clk_i\n);\n  a_term u_term (\n  );\n  b_spare u_spare (\n  );\n  a_round u_round (\n  );\nendmodule\n";
    assert_eq!(
        stage_depths(v, "a"),
        vec![
            ("u_term".to_string(), vec![6.4, 6.8]),
            ("u_round".to_string(), vec![11.8, 12.0, 10.2])
        ]
    );
}

#[test]
fn yosys_version_is_read_from_log() {
    let log = "End of script.\nYosys 0.70 (git sha1 28ba3cb92, Release, Clang /x/clang++ 22.1.0)\n";
    assert_eq!(
        report::yosys_version_from_log(log).as_deref(),
        Some("Yosys 0.70 (git sha1 28ba3cb92)")
    );
}

// ---------------------------------------------------------------- names, wrapper, shell

#[test]
fn targets_and_boards_parse_and_reject() {
    for t in Target::ALL {
        assert_eq!(t.name().parse::<Target>().unwrap(), t);
        let j = serde_json::to_string(&t).unwrap();
        assert_eq!(j, format!("\"{}\"", t.name()));
    }
    let e = "ecp5-45k".parse::<Target>().unwrap_err().to_string();
    assert!(e.contains("ecp5-45k") && e.contains("ice40-up5k"), "{e}");
    for b in Board::ALL {
        assert_eq!(b.name().parse::<Board>().unwrap(), b);
        let (name, text) = b.constraints();
        assert!(text.contains("clk") && text.contains("uart_rx") && text.contains("uart_tx"));
        assert!(text.contains("led[0]") && text.contains("led[1]"), "{name}");
    }
    assert_eq!("ULX3S".parse::<Board>().unwrap(), Board::Ulx3s85);
    assert!("arty".parse::<Board>().is_err());
}

#[test]
fn core_validation_names_the_problem() {
    let mut c = refcores::int_mul(8, 8, 0).unwrap();
    c.validate(64).unwrap();
    c.ports[0].width = 0;
    assert!(c.validate(64).unwrap_err().to_string().contains("`a_i`"));
    let mut c = refcores::int_mul(8, 8, 0).unwrap();
    c.latency = 2;
    assert!(c.validate(64).unwrap_err().to_string().contains("clock"));
    let mut c = refcores::int_mul(8, 8, 0).unwrap();
    c.top = "other".into();
    assert!(c
        .validate(64)
        .unwrap_err()
        .to_string()
        .contains("module other"));
    let c = refcores::int_mul(8, 8, 2).unwrap();
    c.validate(64).unwrap();
    assert!(refcores::int_mul(8, 8, 3).is_err());
}

#[test]
fn missing_tool_error_points_to_setup_script() {
    let e = FpgaError::ToolMissing {
        tool: "yosys".into(),
        searched: vec!["$FP8GEN_YOSYS".into(), "PATH".into()],
    }
    .to_string();
    assert!(
        e.contains("scripts/setup-fpga.sh") && e.contains("FP8GEN_YOSYS"),
        "{e}"
    );
    assert_eq!(
        tools::env_var_for("nextpnr-himbaechel-gowin"),
        "FP8GEN_NEXTPNR_GOWIN"
    );
    assert_eq!(tools::env_var_for("gowin_pack"), "FP8GEN_GOWIN_PACK");
}

#[test]
fn wrapper_is_deterministic_and_registers_everything() {
    let core = refcores::int_mul(8, 8, 2).unwrap();
    let (a, cost) = wrapper::wrapper_verilog(&core);
    let (b, _) = wrapper::wrapper_verilog(&core);
    assert_eq!(a, b);
    assert_eq!(cost.input_ffs, 16);
    assert_eq!(cost.output_ffs, 16);
    assert_eq!(cost.xor_ffs, 4 + 1);
    assert!(a.contains("(* keep_hierarchy *)"));
    assert!(a.contains(".clk(clk)"));
    assert!(a.contains(".a_i(in_r[7:0])") && a.contains(".b_i(in_r[15:8])"));
    assert!(a.contains(".p_o(core_out[15:0])"));
    // 37-bit output: 10 + 3 + 1 XOR flip-flops.
    let mut wide = core.clone();
    wide.ports.push(Port::output("flags_o", 21));
    let (_, cost) = wrapper::wrapper_verilog(&wide);
    assert_eq!(cost.xor_ffs, 10 + 3 + 1);
}

#[test]
fn shell_frames_round_trip() {
    let mut core = refcores::int_mul(8, 8, 0).unwrap();
    core.ports.push(Port::input("c_i", 3));
    let l = ShellLayout::new(&core, 12_000_000, 115_200).unwrap();
    assert_eq!((l.in_bytes, l.out_bytes, l.clks_per_bit), (3, 2, 104));
    let f = l.encode_request(&[0x12, 0x34, 0x5]).unwrap();
    assert_eq!(f, vec![shell::REQ_HEADER, 0x12, 0x34, 0x05]);
    assert!(
        l.encode_request(&[0x12, 0x34, 0x8]).is_err(),
        "3-bit overflow"
    );
    assert!(l.encode_request(&[1, 2]).is_err());
    let (st, out) = l
        .decode_response(&[shell::RESP_HEADER, 1, 0xcd, 0xab])
        .unwrap();
    assert_eq!((st, out), (1, vec![0xabcd]));
    assert!(l.decode_response(&[0, 1, 2, 3]).is_err());
    assert!(ShellLayout::new(&core, 12_000_000, 4_000_000).is_err());
    let a = shell::shell_verilog(&core, &l, &Board::IceBreaker.shell_options());
    let b = shell::shell_verilog(&core, &l, &Board::IceBreaker.shell_options());
    assert_eq!(a, b);
}

// ---------------------------------------------------------------- simulated board

/// The Verilator-built simulated board, as a byte link.
struct SimBoard {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Read for SimBoard {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stdout.read(buf)
    }
}

impl Write for SimBoard {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stdin.as_mut().expect("stdin open").write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.stdin.as_mut().expect("stdin open").flush()
    }
}

impl SimBoard {
    fn finish(mut self) {
        drop(self.stdin.take());
        let st = self.child.wait().expect("simulated board exits");
        assert!(st.success(), "simulated board exited with {st}");
    }
}

/// Builds the shell around `core` with Verilator and starts it.
fn sim_board(core: &Core, clks_per_bit: u32, dir: &Path) -> (SimBoard, ShellLayout) {
    let verilator = std::env::var("FP8GEN_VERILATOR").unwrap_or_else(|_| "verilator".into());
    let layout = ShellLayout::new(core, u64::from(clks_per_bit) * 1_000_000, 1_000_000).unwrap();
    let opts = shell::ShellOptions {
        leds: 2,
        leds_active_low: true,
        heartbeat_log2: 4,
    };
    std::fs::write(dir.join("core.v"), &core.verilog).unwrap();
    std::fs::write(
        dir.join("shell.v"),
        shell::shell_verilog(core, &layout, &opts),
    )
    .unwrap();
    std::fs::write(dir.join("uart_tb.cpp"), include_str!("uart_tb.cpp")).unwrap();
    let out = Command::new(&verilator)
        .current_dir(dir)
        .args([
            "--cc",
            "--exe",
            "--build",
            "-j",
            "2",
            "-Wall",
            "-Wno-DECLFILENAME",
            "-Wno-UNUSEDSIGNAL",
            "--top-module",
            shell::SHELL_TOP,
            "-o",
            "uart_tb",
            "core.v",
            "shell.v",
            "uart_tb.cpp",
        ])
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run `{verilator}` ({e}); install it: apt-get install -y verilator")
        });
    assert!(
        out.status.success(),
        "verilator failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut child = Command::new(dir.join("obj_dir").join("uart_tb"))
        .args([
            clks_per_bit.to_string(),
            (1 + layout.in_bytes).to_string(),
            layout.response_len().to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start simulated board");
    let stdin = child.stdin.take();
    let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    (
        SimBoard {
            child,
            stdin,
            stdout,
        },
        layout,
    )
}

/// A new directory of this test run under the system temp dir (created with `create_dir`,
/// so its removal can only delete what the test wrote).
fn scratch_dir(name: &str) -> iface::outdir::FreshDir {
    iface::outdir::FreshDir::create_in(&std::env::temp_dir(), &format!("fp8gen-fpga-test-{name}"))
        .unwrap()
}

/// Deterministic operand stream: corners, then an LCG.
fn operands(n: usize) -> Vec<(u64, u64)> {
    let mut v = vec![
        (0, 0),
        (0xff, 0xff),
        (0xff, 1),
        (1, 0xff),
        (0x80, 0x80),
        (0x55, 0xaa),
    ];
    let mut s: u64 = 0x2545_f491_4f6c_dd1d;
    while v.len() < n {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.push(((s >> 33) & 0xff, (s >> 45) & 0xff));
    }
    v
}

#[test]
fn uart_shell_round_trips_vectors_in_verilator() {
    for stages in [0u32, 2] {
        let core = refcores::int_mul(8, 8, stages).unwrap();
        let dir = scratch_dir(&format!("mul-s{stages}"));
        let (mut board, layout) = sim_board(&core, 8, &dir);
        assert_eq!(layout.latency, stages);
        let ops = operands(300);
        // Host replay path (text in, text out), as `board-test` uses it.
        let text: String = ops
            .iter()
            .map(|(a, b)| format!("{a:02x} {b:02x}\n"))
            .collect();
        let mut out = Vec::new();
        let sum = board_test_serial(&mut board, &layout, text.as_bytes(), &mut out).unwrap();
        assert_eq!(sum.vectors, ops.len() as u64);
        assert_eq!(sum.not_valid, 0);
        let lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
        for ((a, b), line) in ops.iter().zip(&lines) {
            assert_eq!(
                *line,
                format!("{:04x}", a * b),
                "{a:#x} * {b:#x}, stages {stages}"
            );
        }
        board.finish();
        dir.remove();
    }
}

/// A clocked core with an active-low reset and a valid handshake: accumulates `a_i` on
/// every `valid_i` cycle, so a shell that pulsed `valid_i` for more (or less) than one
/// cycle per vector, or never reset the core, gives a wrong running sum.
const ACC_CORE: &str = "module acc16 (
    input  wire clk, input wire rst_n, input wire valid_i, input wire [7:0] a_i,
    output reg  valid_o, output reg [15:0] sum_o
);
    always @(posedge clk) begin
        if (!rst_n) begin sum_o <= 16'd0; valid_o <= 1'b0; end
        else begin
            valid_o <= valid_i;
            if (valid_i) sum_o <= sum_o + {8'd0, a_i};
        end
    end
endmodule
";

#[test]
fn uart_shell_drives_reset_and_valid_in_verilator() {
    let core = Core {
        verilog: ACC_CORE.into(),
        top: "acc16".into(),
        ports: vec![
            Port::control("clk", Role::Clock),
            Port::control("rst_n", Role::ResetN),
            Port::control("valid_i", Role::ValidIn),
            Port::input("a_i", 8),
            Port::control("valid_o", Role::ValidOut),
            Port::output("sum_o", 16),
        ],
        latency: 1,
    };
    core.validate(64).unwrap();
    let dir = scratch_dir("acc");
    let (mut board, layout) = sim_board(&core, 6, &dir);
    assert!(layout.has_valid_out);
    let mut sum = 0u64;
    for (a, _) in operands(100) {
        sum = (sum + a) & 0xffff;
        let r = exchange(&mut board, &layout, &[a]).unwrap();
        assert!(r.valid, "valid_o low at capture");
        assert!(!r.abandoned_frame);
        assert_eq!(r.outputs, vec![sum]);
    }
    board.finish();
    dir.remove();
}

// ---------------------------------------------------------------- real tools

/// End to end on the real toolchain: fails (with the setup hint) when it is not installed.
#[test]
fn synth_int_mul8_on_ice40_up5k() {
    let core = refcores::int_mul(8, 8, 0).unwrap();
    let mut req = SynthRequest::new(core, Target::Ice40Up5k);
    req.use_dsp = false;
    req.freq_mhz = 50.0;
    let t0 = std::time::Instant::now();
    let rep = synth(&req).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "ice40-up5k int_mul8x8: {} LUT, {} carry, Fmax {} MHz, {:.1} s",
        rep.luts,
        rep.carry,
        rep.fmax_mhz,
        t0.elapsed().as_secs_f64()
    );
    // An 8x8 multiplier in LUT4s is on the order of 100 LUTs; no DSP when disallowed.
    assert!((40..=400).contains(&rep.luts), "{} LUTs", rep.luts);
    assert_eq!(rep.dsp, 0);
    assert_eq!(
        rep.ffs, 0,
        "a combinational core has no flip-flops of its own"
    );
    assert!(
        rep.fmax_mhz > 5.0 && rep.fmax_mhz < 1000.0,
        "{}",
        rep.fmax_mhz
    );
    assert_eq!(rep.timing_met, rep.fmax_mhz >= 50.0);
    assert!(rep.pnr_utilization.contains_key("ICESTORM_LC"));
    assert!(rep
        .tools
        .yosys
        .as_deref()
        .unwrap_or("")
        .starts_with("Yosys"));
    let j = serde_json::to_value(&rep).unwrap();
    assert_eq!(j["target"], "ice40-up5k");
    assert!(rep.artifacts.is_none());
    assert_eq!(rep.fmax_by_seed, vec![(1, rep.fmax_mhz)]);

    // Three placement seeds after one synthesis: the median, with min and max.
    req.seeds = 3;
    let r3 = synth(&req).unwrap_or_else(|e| panic!("{e}"));
    let seeds: Vec<u32> = r3.fmax_by_seed.iter().map(|x| x.0).collect();
    assert_eq!(seeds, vec![1, 2, 3]);
    let mut f: Vec<f64> = r3.fmax_by_seed.iter().map(|x| x.1).collect();
    f.sort_by(f64::total_cmp);
    assert_eq!(
        (r3.fmax_min_mhz, r3.fmax_mhz, r3.fmax_max_mhz),
        (f[0], f[1], f[2])
    );
    assert_eq!(r3.luts, rep.luts, "the seeds share one synthesis");
    req.seeds = 0;
    assert!(synth(&req).is_err());
}

/// An E4M3 × E4M3 → E4M3 multiplier generated by fp8gen, fixed `rne`/`satfinite` or with
/// run-time rounding and saturation ports, as the FPGA flow sees it.
fn generated_e4m3_mul(dynamic_modes: bool, stages: u32) -> Core {
    use golden::{Format, Rounding, Saturation};
    let (rm, sat) = if dynamic_modes {
        (rtl::RoundingSel::Dynamic, rtl::SaturationSel::Dynamic)
    } else {
        (
            rtl::RoundingSel::Fixed(Rounding::Rne),
            rtl::SaturationSel::Fixed(Saturation::SatFinite),
        )
    };
    let mut req = rtl::GenRequest::project(Format::E4M3, rm, sat).with_stages(stages);
    req.unit = rtl::manifest::Unit::Mul;
    req.formats = rtl::manifest::Formats {
        x: Format::E4M3,
        y: Some(Format::E4M3),
        r: Format::E4M3,
        scale: None,
        z: None,
    };
    let gen = rtl::generate(&req).expect("generate mul");
    let core = Core::from_manifest(gen.verilog, &gen.manifest);
    core.validate(64).unwrap();
    core
}

/// The golden model's E4M3 product and flags of one vector, as `board-test` prints them.
fn golden_mul_line(x: u32, y: u32, rm: usize, sat: usize) -> String {
    use golden::{Format, Rounding, Saturation, Spec};
    let spec = Spec::new(Rounding::DETERMINISTIC[rm], Saturation::ALL[sat]);
    let (code, fl) = golden::mul(&Format::E4M3, x, &Format::E4M3, y, &Format::E4M3, &spec, 0);
    format!("{code:02x} {:x}", fl.0)
}

#[test]
fn manifest_cores_keep_iface_roles_and_split_data_from_control() {
    let comb = generated_e4m3_mul(false, 0);
    assert!(!comb.is_clocked());
    let vin = comb
        .with_role(Role::ValidIn)
        .expect("generated cores have valid_i");
    assert!(
        comb.is_data(vin),
        "valid_in of a combinational core is data"
    );
    let names = |it: &mut dyn Iterator<Item = &Port>| -> Vec<String> {
        it.map(|p| p.name.clone()).collect()
    };
    assert_eq!(names(&mut comb.operands()), ["x_i", "y_i"]);
    assert_eq!(names(&mut comb.results()), ["r_o", "flags_o"]);
    assert_eq!(comb.with_role(Role::X).unwrap().name, "x_i");

    let piped = generated_e4m3_mul(true, 2);
    assert!(piped.is_clocked());
    assert_eq!(piped.latency, 2);
    for role in [Role::Clock, Role::ResetN, Role::ValidIn, Role::ValidOut] {
        let p = piped.with_role(role).unwrap();
        assert!(!piped.is_data(p), "{role} of a clocked core is control");
    }
    assert_eq!(
        names(&mut piped.operands()),
        ["x_i", "y_i", "rm_i", "sat_i"]
    );
    assert_eq!(names(&mut piped.results()), ["r_o", "flags_o"]);

    // A reset without a clock is rejected, naming the port.
    let mut bad = comb.clone();
    bad.ports.push(Port::control("rst_ni", Role::ResetN));
    let e = bad.validate(64).unwrap_err().to_string();
    assert!(e.contains("`rst_ni`") && e.contains("no clock"), "{e}");
}

#[test]
fn nextpnr_arguments_are_built_in_one_place() {
    let a = flow::nextpnr_args(Target::Ice40Up5k, Some("icebreaker.pcf"), true, 12.0, 1);
    assert_eq!(
        a.join(" "),
        "--up5k --package sg48 --pcf icebreaker.pcf --asc pnr.asc --json netlist.json \
         --freq 12 --seed 1 --timing-allow-fail --report report.json --detailed-timing-report \
         -l nextpnr.log"
    );
    let a = flow::nextpnr_args(Target::Ecp5_85k, Some("ulx3s.lpf"), true, 25.0, 3);
    assert!(
        a.join(" ")
            .starts_with("--85k --package CABGA381 --lpf ulx3s.lpf --textcfg pnr.config --json"),
        "{a:?}"
    );
    let a = flow::nextpnr_args(Target::GowinGw1nr9, Some("synth.cst"), false, 100.0, 1);
    assert!(
        a.join(" ").starts_with(
            "--device GW1NR-LV9QN88PC6/I5 --vopt family=GW1N-9C --vopt cst=synth.cst --json"
        ),
        "{a:?}"
    );
    let a = flow::nextpnr_args(Target::Ecp5_25k, None, false, 100.5, 7);
    assert!(!a.iter().any(|s| s == "--lpf" || s == "--textcfg"));
    assert!(a
        .join(" ")
        .contains("--freq 100.5 --seed 7 --timing-allow-fail"));
}

/// A combinational generated core on the simulated board: the host sends only the operands
/// (`38 38`, not a `valid_i` bit), the shell holds `valid_i` high, and the answer is the
/// golden result and flags with no `valid_o` column.
#[test]
fn uart_shell_drives_valid_of_a_combinational_generated_multiplier() {
    let core = generated_e4m3_mul(false, 0);
    let dir = scratch_dir("fp8-mul-comb");
    let (mut board, layout) = sim_board(&core, 8, &dir);
    assert_eq!(layout.inputs.len(), 2);
    assert_eq!((layout.in_bytes, layout.out_bytes), (2, 2));
    assert!(layout.has_valid_out, "valid_o goes to the status byte");
    let mut out = Vec::new();
    let sum = board_test_serial(&mut board, &layout, "38 38\n".as_bytes(), &mut out).unwrap();
    assert_eq!((sum.vectors, sum.not_valid), (1, 0));
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text, "38 0\n", "1.0 * 1.0 = 1.0, no flags");
    assert_eq!(text.trim(), golden_mul_line(0x38, 0x38, 0, 0));
    // A few more vectors, including overflow and NaN cases.
    let ops = operands(200);
    let input: String = ops
        .iter()
        .map(|(x, y)| format!("{x:02x} {y:02x}\n"))
        .collect();
    let mut out = Vec::new();
    let sum = board_test_serial(&mut board, &layout, input.as_bytes(), &mut out).unwrap();
    assert_eq!((sum.vectors, sum.not_valid), (ops.len() as u64, 0));
    for ((x, y), line) in ops.iter().zip(std::str::from_utf8(&out).unwrap().lines()) {
        assert_eq!(
            line,
            golden_mul_line(*x as u32, *y as u32, 0, 0),
            "x={x:#x} y={y:#x}"
        );
    }
    // The old three-value form (a valid bit first) is refused, naming the operands.
    let e = exchange(&mut board, &layout, &[1, 0x38, 0x38]).unwrap_err();
    assert!(e.to_string().contains("x_i, y_i"), "{e}");
    board.finish();
    dir.remove();
}

/// The board shell around a generated fp8gen core (E4M3 multiply, pipelined, with run-time
/// rounding and saturation ports): every vector sent over the simulated serial line comes
/// back with the golden model's result and flags.
#[test]
fn uart_shell_returns_golden_results_for_a_generated_e4m3_multiplier() {
    let core = generated_e4m3_mul(true, 1);
    let dir = scratch_dir("fp8-mul");
    let (mut board, layout) = sim_board(&core, 8, &dir);
    let mut vectors = Vec::new();
    for (i, (x, y)) in operands(400).into_iter().enumerate() {
        vectors.push((x as u32, y as u32, i % 6, (i / 6) % 4));
    }
    let text: String = vectors
        .iter()
        .map(|(x, y, r, s)| format!("{x:02x} {y:02x} {r:x} {s:x}\n"))
        .collect();
    let mut out = Vec::new();
    let sum = board_test_serial(&mut board, &layout, text.as_bytes(), &mut out).unwrap();
    assert_eq!(sum.vectors, vectors.len() as u64);
    assert_eq!(sum.not_valid, 0);
    let lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
    assert_eq!(lines.len(), vectors.len());
    for ((x, y, r, s), line) in vectors.iter().zip(&lines) {
        assert_eq!(
            *line,
            golden_mul_line(*x, *y, *r, *s),
            "x={x:#x} y={y:#x} rm={r} sat={s}"
        );
    }
    board.finish();
    dir.remove();
}
