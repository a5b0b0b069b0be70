//! The text compiled is the text meant: one regression test per way a core on disk could be
//! compiled differently from what its files say (a module defined twice, an edited include
//! behind a cached model, `ifdef FORMAL`, x and z values), and per way a sweep's results
//! could be merged into a PASS they do not support. Each test's core is built to exploit it.

use crate::common;
use common::{edit_manifest, gen, run, stderr, stdout, verilog_of};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run fp8gen")
}

/// Runs and expects exit code `code`; returns stderr.
fn expect(args: &[&str], code: i32) -> String {
    let o = run(args);
    assert_eq!(
        o.status.code(),
        Some(code),
        "fp8gen {args:?}:\n{}{}",
        stdout(&o),
        stderr(&o)
    );
    stderr(&o)
}

/// A generated `mul e4m3` core whose `assign r_o = …` is rewritten by `edit` (the right-hand
/// side's first token is kept after the inserted text).
fn mul_core(dir: &Path, edit: &str) -> PathBuf {
    gen(
        dir,
        &["-u", "mul", "-f", "e4m3", "-r", "rne", "-s", "satfinite"],
    );
    let v = verilog_of(dir);
    let text = std::fs::read_to_string(&v).unwrap();
    let edited = text.replacen("assign r_o = ", &format!("assign r_o = {edit}"), 1);
    assert!(edit.is_empty() || edited != text);
    std::fs::write(&v, edited).unwrap();
    v
}

#[test]
fn a_module_defined_twice_is_an_error_naming_both_files() {
    // Two files both define the top: Verilator compiled the first (here the right one) and
    // yosys the last, so simulation passed what proof and synthesis read differently.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("mul");
    let v = mul_core(&d, "");
    let name = v.file_name().unwrap().to_str().unwrap().to_string();
    let text = std::fs::read_to_string(&v).unwrap();
    std::fs::write(
        d.join("other.v"),
        text.replacen("assign r_o = ", "assign r_o = 8'h01 ^ ", 1),
    )
    .unwrap();
    edit_manifest(&d, |m| {
        m["verilog"] = serde_json::json!([name.clone(), "other.v"]);
    });
    let ds = d.to_str().unwrap();
    for extra in [None, Some("--prove")] {
        let mut args = vec!["verify", "--from", ds];
        args.extend(extra);
        let e = expect(&args, 2);
        assert!(
            e.contains("module `fp8_mul_e4m3_to_e4m3_rne_satfinite_s0` is defined in ")
                && e.contains(&format!("{name} and in "))
                && e.contains("other.v"),
            "{e}"
        );
    }
    // Also inside one file, and whatever `lint_off` says.
    edit_manifest(&d, |m| m["verilog"] = serde_json::json!(["other.v"]));
    let mut twice = std::fs::read_to_string(d.join("other.v")).unwrap();
    twice.push_str("/* verilator lint_off MODDUP */\n");
    twice.push_str(&text);
    std::fs::write(d.join("other.v"), twice).unwrap();
    let e = expect(&["verify", "--from", ds], 2);
    assert!(e.contains("is defined twice in "), "{e}");
}

#[test]
fn an_edited_include_is_rebuilt_not_served_from_the_cache() {
    // decode e4m3 (a small model): sign_o is XORed with a macro from an include two levels
    // down an include directory; editing that file must rebuild the model.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("dec");
    gen(&d, &["-u", "decode", "-f", "e4m3"]);
    let v = verilog_of(&d);
    let text = std::fs::read_to_string(&v).unwrap();
    let edited = text
        .replacen("assign sign_o = sign;", "assign sign_o = sign ^ `FLIP;", 1)
        .replacen("module ", "`include \"defs.vh\"\nmodule ", 1);
    assert_ne!(edited, text);
    std::fs::write(&v, edited).unwrap();
    std::fs::create_dir_all(d.join("inc/deep")).unwrap();
    std::fs::write(d.join("inc/defs.vh"), "`include \"deep/flip.vh\"\n").unwrap();
    let flip = d.join("inc/deep/flip.vh");
    std::fs::write(&flip, "`define FLIP 1'b0\n").unwrap();
    edit_manifest(&d, |m| m["include_dirs"] = serde_json::json!(["inc"]));
    let ds = d.to_str().unwrap();
    let o = run(&["verify", "--from", ds]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("inc/defs.vh") && e.contains("inc/deep/flip.vh"),
        "the summary lists every file compiled: {e}"
    );
    let o = run(&["verify", "--from", ds, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before: Value = serde_json::from_slice(&o.stdout).unwrap();
    // The bug is in the included file only: the listed sources are unchanged.
    std::fs::write(&flip, "`define FLIP 1'b1\n").unwrap();
    let o = run_in(t.path(), &["verify", "--from", ds, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        j["mismatches_per_port"]["sign_o"].as_u64().unwrap() > 0,
        "{j}"
    );
    // Nor do summaries of the two texts claim one core (merge would combine them).
    assert_ne!(j["meta"]["core_hash"], before["meta"]["core_hash"]);
}

#[test]
fn simulation_and_proof_compile_the_same_text() {
    // The bug sits outside `ifdef FORMAL`: yosys's `read_verilog -formal` defined FORMAL, so
    // --prove proved the clean branch while simulation failed the core.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("mul");
    let v = mul_core(&d, "");
    let text = std::fs::read_to_string(&v).unwrap();
    let start = text.find("assign r_o = ").unwrap();
    let end = start + text[start..].find(';').unwrap() + 1;
    let assign = &text[start..end];
    let buggy = assign.replacen("assign r_o = ", "assign r_o = 8'h01 ^ ", 1);
    let both = format!("`ifdef FORMAL\n{assign}\n`else\n{buggy}\n`endif");
    std::fs::write(&v, text.replacen(assign, &both, 1)).unwrap();
    let ds = d.to_str().unwrap();
    let o = run_in(t.path(), &["verify", "--from", ds, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(j["mismatches"].as_u64().unwrap() > 1000, "{j}");
    assert!(
        j["meta"]["compiled"]
            .as_str()
            .unwrap()
            .contains("defines: none"),
        "{j}"
    );
    let o = run_in(t.path(), &["verify", "--from", ds, "--prove"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("REFUTED:"), "{out}");
    assert!(
        out.contains("compiled text: ") && out.contains("(defines: none;"),
        "{out}"
    );
    // A manifest define selects the branch for both alike.
    edit_manifest(&d, |m| m["defines"] = serde_json::json!({"FORMAL": ""}));
    let o = run_in(t.path(), &["verify", "--from", ds, "--prove"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("(defines: FORMAL;"), "{}", stdout(&o));
}

#[test]
fn the_simulators_own_macros_select_no_branch() {
    // Correct under `ifdef VERILATOR`, wrong for every other tool (the synthesizer): the text
    // checked is the one without simulator macros, so the run fails.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("mul");
    let v = mul_core(&d, "");
    let text = std::fs::read_to_string(&v).unwrap();
    let start = text.find("assign r_o = ").unwrap();
    let end = start + text[start..].find(';').unwrap() + 1;
    let assign = &text[start..end];
    let buggy = assign.replacen("assign r_o = ", "assign r_o = 8'h01 ^ ", 1);
    for guard in ["`ifdef VERILATOR", "`ifdef verilator", "`ifdef verilator3"] {
        let both = format!("{guard}\n{assign}\n`else\n{buggy}\n`endif");
        std::fs::write(&v, text.replacen(assign, &both, 1)).unwrap();
        let ds = d.to_str().unwrap();
        let o = run_in(t.path(), &["verify", "--from", ds, "--json"]);
        assert_eq!(o.status.code(), Some(1), "{guard}: {}", stderr(&o));
        let j: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(j["mismatches"].as_u64().unwrap() > 1000, "{j}");
        let c = j["meta"]["compiled"].as_str().unwrap();
        assert!(
            c.contains("undefined: VERILATOR verilator verilator3"),
            "{c}"
        );
    }
}

#[test]
fn a_core_returning_x_fails_verify_and_is_refuted_by_prove() {
    // 0 x 0 = 0 in e4m3; the core returns x there, which 2-state simulation made 0.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("mul");
    mul_core(&d, "(x_i == 8'h00 && y_i == 8'h00) ? 8'bx : ");
    let ds = d.to_str().unwrap();
    let o = run_in(t.path(), &["verify", "--from", ds, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        j["mismatches_per_port"]["r_o depends on x/z values"]
            .as_u64()
            .unwrap()
            > 0,
        "{j}"
    );
    assert!(
        j["meta"]["xz_check"]
            .as_str()
            .unwrap()
            .contains("x randomized"),
        "{j}"
    );
    let o = run_in(t.path(), &["verify", "--from", ds, "--prove"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("REFUTED:"), "{out}");
    assert!(out.contains("drives x/z on r_o:"), "{out}");
}

#[test]
fn a_core_returning_z_fails_verify_and_prove() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("mul");
    mul_core(&d, "(x_i == 8'h00 && y_i == 8'h00) ? 8'bz : ");
    let ds = d.to_str().unwrap();
    for extra in [None, Some("--prove")] {
        let mut args = vec!["verify", "--from", ds];
        args.extend(extra);
        let e = expect(&args, 1);
        assert!(
            e.contains(
                "core `fp8_mul_e4m3_to_e4m3_rne_satfinite_s0` drives z (high impedance) on r_o"
            ),
            "{e}"
        );
    }
}

/// Writes `verify --json` of `args` to `path`.
fn summary_to(path: &Path, args: &[&str]) {
    let o = run(args);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(path, &o.stdout).unwrap();
}

#[test]
fn merge_checks_every_shard_against_its_space() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("runs");
    std::fs::create_dir_all(&d).unwrap();
    let base = ["verify", "-u", "decode", "-f", "e4m3", "--json"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        a
    };
    let s0 = d.join("s0.json");
    let s1 = d.join("s1.json");
    summary_to(&s0, &with(&["--shard", "0/2"]));
    summary_to(&s1, &with(&["--shard", "1/2"]));
    let o = run(&["merge", d.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A shard's vectors edited (to 0, or to any other count): refused, naming the shard.
    let good = std::fs::read_to_string(&s1).unwrap();
    for n in [0u64, 100, 1_000_000] {
        let mut j: Value = serde_json::from_str(&good).unwrap();
        j["vectors"] = n.into();
        std::fs::write(&s1, serde_json::to_string(&j).unwrap()).unwrap();
        let e = expect(&["merge", d.to_str().unwrap()], 2);
        assert!(
            e.contains(
                "s1.json: shard 1/2 of a 256-vector space holds 128 vectors, but the summary says"
            ),
            "{e}"
        );
    }
    // Space and vectors both edited to 0 (consistent, but nothing checked): FAIL.
    let mut j: Value = serde_json::from_str(&good).unwrap();
    j["vectors"] = 0.into();
    j["space"] = 0.into();
    std::fs::write(&s1, serde_json::to_string(&j).unwrap()).unwrap();
    std::fs::write(
        &s0,
        serde_json::to_string(&j)
            .unwrap()
            .replace("\"index\":1", "\"index\":0"),
    )
    .unwrap();
    let o = run(&["merge", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("no vector was compared")
            || stderr(&o).contains("no vector was compared"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    summary_to(&s0, &with(&["--shard", "0/2"]));
    // Mismatches removed but the per-port counts left: refused.
    let mut j: Value = serde_json::from_str(&good).unwrap();
    j["mismatches_per_port"] = serde_json::json!({"r_o": 3});
    std::fs::write(&s1, serde_json::to_string(&j).unwrap()).unwrap();
    let e = expect(&["merge", d.to_str().unwrap()], 2);
    assert!(e.contains("do not add up"), "{e}");
    std::fs::write(&s1, &good).unwrap();
    // Runs of different seeds: the error names the seed.
    let r = t.path().join("random");
    std::fs::create_dir_all(&r).unwrap();
    summary_to(
        &r.join("a.json"),
        &with(&["--random", "1000", "--seed", "1", "--shard", "0/2"]),
    );
    summary_to(
        &r.join("b.json"),
        &with(&["--random", "1000", "--seed", "2", "--shard", "1/2"]),
    );
    let e = expect(&["merge", r.to_str().unwrap()], 2);
    assert!(e.contains("are different runs: seed 1 vs seed 2"), "{e}");
    // A proof report given twice, or one that is no job of plan.json: refused.
    let p = t.path().join("proofs");
    std::fs::create_dir_all(p.join("again")).unwrap();
    let report = r#"[{"verdict":"proven","statement":"a and b agree","gold":"a","gate":"b","seconds":1.0,"solver":"s"}]"#;
    std::fs::write(p.join("prove-mul.json"), report).unwrap();
    std::fs::write(p.join("again/prove-mul.json"), report).unwrap();
    let e = expect(
        &[
            "merge",
            p.join("prove-mul.json").to_str().unwrap(),
            p.join("again/prove-mul.json").to_str().unwrap(),
        ],
        2,
    );
    assert!(
        e.contains("the result of job prove-mul is given twice"),
        "{e}"
    );
    std::fs::remove_dir_all(p.join("again")).unwrap();
    std::fs::write(
        p.join("plan.json"),
        r#"{"schema":1,"kind":"prove","what":"prove mul","generator":"fp8gen","core_hash":null,"rate":"-","jobs":[{"name":"prove-fma","args":["prove"],"work":"1 proof","est_seconds":1.0,"labels":{}}]}"#,
    )
    .unwrap();
    let e = expect(&["merge", p.to_str().unwrap()], 2);
    assert!(
        e.contains("prove-mul.json: a proof report that is no job of plan.json"),
        "{e}"
    );
}

#[test]
fn an_honest_core_with_casez_wildcards_and_unreachable_x_passes() {
    // z and ? in casez labels are wildcards, and an x in a branch no input reaches decides
    // nothing: the x/z check must not fail such a core.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("dec");
    gen(&d, &["-u", "decode", "-f", "e4m3"]);
    let v = verilog_of(&d);
    let text = std::fs::read_to_string(&v).unwrap();
    let edited = text.replacen(
        "assign sign_o = sign;",
        "reg [1:0] cz;\n  always @* begin\n    casez (x_i[1:0])\n      2'b1?: cz = 2'd1;\n      2'bz1: cz = 2'd2;\n      2'b00: cz = 2'd0;\n      default: cz = 2'bxx;\n    endcase\n  end\n  assign sign_o = sign ^ (cz == 2'd3);",
        1,
    );
    assert_ne!(edited, text);
    std::fs::write(&v, edited).unwrap();
    let o = run_in(t.path(), &["verify", "--from", d.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("x/z check: up to 65536 vectors per shard")
            && e.contains("z drivers: none (yosys)"),
        "{e}"
    );
}

#[test]
fn a_counterexample_vcd_never_overwrites_a_users_file() {
    // By default the VCD is a new file in the cache's counterexamples directory, its path
    // printed: a user's file of the old default name in the working directory stays as it is,
    // and a second run writes a second file.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("mul");
    mul_core(&d, "(x_i == 8'h38) ? 8'h00 : ");
    let mine = t.path().join("fp8gen-counterexample.vcd");
    std::fs::write(&mine, "my notes\n").unwrap();
    let vcd_of = |o: &Output| -> PathBuf {
        let e = stderr(o);
        let line = e
            .lines()
            .find_map(|l| l.strip_prefix("VCD of the first counterexample: "))
            .unwrap_or_else(|| panic!("no VCD path printed: {e}"));
        PathBuf::from(line)
    };
    let o = run_in(t.path(), &["verify", "--from", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my notes\n");
    let first = vcd_of(&o);
    let o = run_in(t.path(), &["verify", "--from", d.to_str().unwrap()]);
    let second = vcd_of(&o);
    for p in [&first, &second] {
        assert!(
            p.is_absolute() && p.parent().unwrap().ends_with("counterexamples"),
            "{}",
            p.display()
        );
        assert!(std::fs::read_to_string(p)
            .unwrap()
            .contains("$enddefinitions"));
    }
    assert_ne!(first, second);
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        2,
        "only mul/ and the user's file"
    );
    for p in [&first, &second] {
        std::fs::remove_file(p).unwrap();
    }
    // --vcd naming a user's file: refused, the file kept, the run still fails.
    let o = run_in(
        t.path(),
        &[
            "verify",
            "--from",
            d.to_str().unwrap(),
            "--vcd",
            mine.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my notes\n");
    let e = stderr(&o);
    assert!(
        e.contains("VCD of the first counterexample not written: ")
            && e.contains("exists and is not a VCD file"),
        "{e}"
    );
    // An earlier VCD of fp8gen's is replaced.
    std::fs::write(&mine, "$version Generated by VerilatedVcd $end\n").unwrap();
    let o = run_in(
        t.path(),
        &[
            "verify",
            "--from",
            d.to_str().unwrap(),
            "--vcd",
            mine.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&mine)
        .unwrap()
        .contains("$enddefinitions"));
}
