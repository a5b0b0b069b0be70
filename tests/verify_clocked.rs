//! What a PASS covers beyond the input space: the valid handshake with bubbles, state that
//! breaks after more inputs than the space has, streams that follow the initiation interval,
//! the exact accumulator's guard overflow, and cores whose evaluation never returns. Each
//! test edits a generated core into one built to exploit a gap (it must FAIL on the right
//! port, or be refused) and checks that the honest core still PASSes.

use crate::common;
use common::{edit_manifest, gen, run, stderr, verilog_of};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn run_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fp8gen"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run fp8gen")
}

/// Replaces `from` by `to` in the core's Verilog (which must contain it).
fn edit_verilog(dir: &Path, from: &str, to: &str) {
    let v = verilog_of(dir);
    let text = std::fs::read_to_string(&v).unwrap();
    assert!(text.contains(from), "`{from}` not in {}", v.display());
    std::fs::write(&v, text.replacen(from, to, 1)).unwrap();
}

/// `fp8gen verify --from DIR --json EXTRA…`: (exit code, JSON summary, stderr).
fn verify(dir: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    let mut a = vec!["verify", "--from", dir.to_str().unwrap(), "--json"];
    a.extend_from_slice(extra);
    let o = run(&a);
    let j = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), j, stderr(&o))
}

fn passes(dir: &Path, extra: &[&str]) -> Value {
    let (code, j, e) = verify(dir, extra);
    assert_eq!(code, Some(0), "{e}\n{j}");
    j
}

/// Fails (exit 1) with mismatches on `port` only counted there.
fn fails_on(dir: &Path, extra: &[&str], port: &str) -> Value {
    let (code, j, e) = verify(dir, extra);
    assert_eq!(code, Some(1), "{e}\n{j}");
    let n = j["mismatches_per_port"][port].as_u64().unwrap_or(0);
    assert!(n > 0, "no mismatch on {port}: {j}");
    assert!(
        j["counterexamples"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["mismatched_ports"].to_string().contains(port)),
        "{j}"
    );
    j
}

const E2M1_MUL: [&str; 8] = ["-u", "mul", "-f", "e2m1", "-r", "rne", "-s", "satfinite"];

#[test]
fn a_combinational_valid_o_is_checked_on_bubbles() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("c");
    gen(&d, &E2M1_MUL);
    let j = passes(&d, &[]);
    // Every vector of the space applied, plus bubble rows between them.
    assert_eq!(j["vectors"], 256);
    assert!(j["bubbles"].as_u64().unwrap() >= 256 / 16, "{j}");
    // valid_o stuck at 1: seen only on rows whose valid_i is 0.
    edit_verilog(&d, "assign valid_o = valid_i;", "assign valid_o = 1'b1;");
    let j = fails_on(&d, &[], "valid_o");
    assert_eq!(
        j["mismatches_per_port"].as_object().unwrap().len(),
        1,
        "{j}"
    );
    let cx = &j["counterexamples"][0];
    assert_eq!(cx["inputs"]["valid_i"], "0x0", "{cx}");
    assert_eq!(cx["expected"]["valid_o"], "0x0", "{cx}");
    // Stuck at 0: every vector.
    let d0 = t.path().join("c0");
    gen(&d0, &E2M1_MUL);
    edit_verilog(&d0, "assign valid_o = valid_i;", "assign valid_o = 1'b0;");
    let j = fails_on(&d0, &[], "valid_o");
    assert_eq!(j["mismatches_per_port"]["valid_o"], 256, "{j}");
}

#[test]
fn a_pipelined_valid_o_stuck_or_late_fails_on_valid_o() {
    let t = tempfile::tempdir().unwrap();
    let args: Vec<&str> = E2M1_MUL.iter().copied().chain(["--stages", "1"]).collect();
    let d = t.path().join("ok");
    gen(&d, &args);
    let j = passes(&d, &[]);
    assert!(j["bubbles"].as_u64().unwrap() > 0, "{j}");
    assert!(j["compared"].to_string().contains("valid_o[1]"), "{j}");
    for (name, to) in [
        ("one", "assign valid_o = 1'b1;"),
        ("zero", "assign valid_o = 1'b0;"),
        (
            // One cycle late: a second register behind the first.
            "late",
            "reg valid_late; always @(posedge clk_i) valid_late <= valid_q1; \
             assign valid_o = valid_late;",
        ),
    ] {
        let d = t.path().join(name);
        gen(&d, &args);
        edit_verilog(&d, "assign valid_o = valid_q1;", to);
        fails_on(&d, &[], "valid_o");
    }
}

#[test]
fn a_pipelined_core_that_breaks_after_more_inputs_than_its_space_fails() {
    // 2^16 input pairs; the core counts its inputs (reset by rst_ni) and corrupts the
    // result from the 70001st on. One pass over the space gives each of the 16 lanes
    // 4096 inputs; every lane now runs more than twice the space on either side of a reset.
    let t = tempfile::tempdir().unwrap();
    let args = [
        "-u",
        "mul",
        "-f",
        "e4m3",
        "-r",
        "rne",
        "-s",
        "satfinite",
        "--stages",
        "1",
    ];
    let d = t.path().join("ok");
    gen(&d, &args);
    let j = passes(&d, &["--threads", "2"]);
    assert_eq!(j["space"], 65536);
    let cpl = j["cycles_per_lane"].as_u64().unwrap();
    assert!(cpl > 4 * 65536, "{j}");
    assert_eq!(j["resets_per_lane"], 1, "{j}");
    assert!(j["meta"]["space"]
        .as_str()
        .unwrap()
        .starts_with("exhaustive over inputs"));
    let bad = t.path().join("counter");
    gen(&bad, &args);
    edit_verilog(
        &bad,
        "assign r_o =",
        "reg [31:0] seen_q;\n  always @(posedge clk_i) begin\n    if (!rst_ni) seen_q <= 32'd0;\n    \
         else if (valid_i) seen_q <= seen_q + 32'd1;\n  end\n  \
         assign r_o = (seen_q > 32'd70000) ? 8'h00 :",
    );
    fails_on(&bad, &["--threads", "2"], "r_o");
}

#[test]
fn a_mac_that_never_accumulates_fails_whatever_its_initiation_interval() {
    let t = tempfile::tempdir().unwrap();
    let args = ["-u", "mac", "-f", "e2m1", "-r", "rne"];
    let d = t.path().join("ok");
    gen(&d, &args);
    edit_manifest(&d, |m| m["initiation_interval"] = 300.into());
    let j = passes(&d, &["--random", "20000"]);
    // Every stream holds at least 8 steps of 300 cycles.
    let space = j["meta"]["space"].as_str().unwrap().to_string();
    assert!(j["cycles_per_lane"].as_u64().unwrap() >= 8 * 300, "{j}");
    assert!(space.contains("valid every 300 cycle(s)"), "{space}");
    // The sum is never carried over: with 256-cycle streams and II = 300 every stream held
    // one step, and this passed.
    let bad = t.path().join("bad");
    gen(&bad, &args);
    edit_manifest(&bad, |m| m["initiation_interval"] = 300.into());
    edit_verilog(&bad, "clear_i ? 32'h0 : acc_q", "32'h0");
    fails_on(&bad, &["--random", "20000"], "acc_o");
}

#[test]
fn an_exact_accumulator_without_guard_overflow_detection_fails() {
    let t = tempfile::tempdir().unwrap();
    let args = [
        "-u",
        "mac",
        "-f",
        "e2m1",
        "-r",
        "rne",
        "--acc",
        "exact",
        "--guard-bits",
        "4",
    ];
    let d = t.path().join("ok");
    gen(&d, &args);
    let j = passes(&d, &["--random", "20000"]);
    let g = j["meta"]["guard_overflow"].as_str().unwrap();
    assert!(g.starts_with("reached: yes"), "{g}");
    // The overflow flag never set: the sum wraps silently.
    let bad = t.path().join("bad");
    gen(&bad, &args);
    edit_verilog(
        &bad,
        "ovf_q  <= (~t_clear & ovf_q) | a_ovf;",
        "ovf_q  <= 1'b0;",
    );
    fails_on(&bad, &["--random", "20000"], "flags_o");
    // The default guard bits (16): the overflow takes ~2^16 products, and the streams are as
    // long as that, so the same mutant fails there too.
    let default_args = ["-u", "mac", "-f", "e2m1", "-r", "rne", "--acc", "exact"];
    let ok16 = t.path().join("ok16");
    gen(&ok16, &default_args);
    let j = passes(&ok16, &["--random", "2^18"]);
    let g = j["meta"]["guard_overflow"].as_str().unwrap();
    assert!(g.starts_with("reached: yes"), "{g}");
    let bad16 = t.path().join("bad16");
    gen(&bad16, &default_args);
    edit_verilog(
        &bad16,
        "ovf_q  <= (~t_clear & ovf_q) | a_ovf;",
        "ovf_q  <= 1'b0;",
    );
    fails_on(&bad16, &["--random", "2^18"], "flags_o");
    // Many guard bits: no overflow stream, and the summary says so.
    let big = t.path().join("big");
    gen(
        &big,
        &[
            "-u",
            "mac",
            "-f",
            "e2m1",
            "-r",
            "rne",
            "--acc",
            "exact",
            "--guard-bits",
            "20",
        ],
    );
    let j = passes(&big, &["--random", "5000"]);
    let g = j["meta"]["guard_overflow"].as_str().unwrap();
    assert!(g.starts_with("reached: no (20 guard bits"), "{g}");
}

#[test]
fn a_core_whose_evaluation_never_returns_ends_with_an_error() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("spin");
    gen(&d, &E2M1_MUL);
    // A runaway loop in combinational logic for one operand value: Verilator compiles it,
    // and its evaluation never returns.
    edit_verilog(
        &d,
        "assign valid_o = valid_i;",
        "reg [7:0] spin;\n  always @* begin\n    spin = 8'd0;\n    \
         while (x_i == 4'd3) spin = spin + 8'd1;\n  end\n  \
         assign valid_o = valid_i | (spin == 8'd255);",
    );
    let started = Instant::now();
    let o = run_env(
        &["verify", "--from", d.to_str().unwrap()],
        &[("FP8GEN_SIM_WATCHDOG_SECS", "3")],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(!e.contains("PASS"), "{e}");
    assert!(
        e.contains(
            "simulation of `fp8_mul_e2m1_to_e2m1_rne_satfinite_s0` made no progress for 3 s"
        ),
        "{e}"
    );
    // The build takes its time; the hang itself ends within a few seconds of the limit.
    assert!(started.elapsed() < Duration::from_secs(120), "{e}");
}
