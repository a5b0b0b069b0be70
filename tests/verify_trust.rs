//! Verification you can trust: one regression test per way a core or a manifest could get a
//! false PASS or a wrong result (each fails on a verifier without the check it guards), run
//! through the command line as a user would, plus
//! bring-your-own-RTL cores made of several files.

use crate::common;
use common::{edit_manifest, gen, run, stderr, verilog_of};
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn run_in(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fp8gen");
    let mut sin = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = sin.write_all(&data);
    });
    let o = child.wait_with_output().unwrap();
    let _ = writer.join();
    o
}

/// Runs and expects exit code `code`; returns stderr.
fn expect(args: &[&str], code: i32) -> String {
    let o = run(args);
    assert_eq!(
        o.status.code(),
        Some(code),
        "fp8gen {args:?}:\n{}",
        stderr(&o)
    );
    stderr(&o)
}

fn json_ok(args: &[&str]) -> Value {
    let o = run(args);
    assert!(o.status.success(), "fp8gen {args:?}:\n{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("json summary")
}

#[test]
fn a_narrow_result_port_is_an_error_not_a_partial_compare() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("mul");
    gen(
        &d,
        &["-u", "mul", "-f", "e4m3", "-r", "rne", "-s", "satfinite"],
    );
    // The manifest declares r_o 4 of 8 bits: before, the upper bits were never compared.
    edit_manifest(&d, |m| {
        for p in m["ports"].as_array_mut().unwrap() {
            if p["name"] == "r_o" {
                p["width"] = 4.into();
            }
        }
    });
    let e = expect(&["verify", "--from", d.to_str().unwrap()], 2);
    assert!(
        e.contains("port `r_o` (role result) of `fp8_mul_e4m3_to_e4m3_rne_satfinite_s0` is 4 bits wide, but mul e4m3 -> e4m3 makes it 8 bits (the result format e4m3)"),
        "{e}"
    );
    // Consistent manifest, but the core's upper result bits are wrong on every vector: fails.
    let t2 = tempfile::tempdir().unwrap();
    let d2 = t2.path().join("mul");
    gen(
        &d2,
        &["-u", "mul", "-f", "e4m3", "-r", "rne", "-s", "satfinite"],
    );
    let v = verilog_of(&d2);
    let text = std::fs::read_to_string(&v).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("assign r_o ="))
        .expect("r_o assignment")
        .to_string();
    let broken = text.replace(&line, &line.replace("assign r_o =", "assign r_o = 8'hf0 ^"));
    assert_ne!(broken, text);
    std::fs::write(&v, broken).unwrap();
    let o = run(&["verify", "--from", d2.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    // (`8'hf0 ^ cond ? a : b` breaks every result but the few where the wrong branch
    // happens to give the right code.)
    assert!(j["mismatches"].as_u64().unwrap() > 60_000, "{j}");
    assert_eq!(j["mismatches_per_port"]["r_o"], j["mismatches"]);
}

#[test]
fn options_next_to_from_must_agree_and_select_modes() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("p");
    gen(
        &d,
        &["-u", "project", "-f", "e4m3", "-r", "dyn", "-s", "dyn"],
    );
    let ds = d.to_str().unwrap();
    let e = expect(&["verify", "--from", ds, "-f", "e5m2"], 2);
    assert!(
        e.contains("--format e5m2 conflicts with the core in --from: its manifest says e4m3"),
        "{e}"
    );
    let e = expect(&["verify", "--from", ds, "--stages", "2"], 2);
    assert!(e.contains("--stages 2 conflicts with the core"), "{e}");
    let e = expect(&["verify", "--from", ds, "--ftz"], 2);
    assert!(e.contains("--ftz"), "{e}");
    let e = expect(&["verify", "--from", ds, "--sr-bits", "3"], 2);
    assert!(e.contains("--sr-bits 3 conflicts"), "{e}");
    // -r/-s on a run-time-mode core select the modes to run.
    let j = json_ok(&[
        "verify",
        "--from",
        ds,
        "-r",
        "rtz,rna",
        "-s",
        "satfinite",
        "--json",
    ]);
    assert_eq!(j["meta"]["modes"], "rtz/satfinite, rna/satfinite");
    let per_mode: u64 = j["meta"]["vectors_per_mode"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(j["vectors"].as_u64().unwrap(), 2 * per_mode);
    // The same option agreeing with the manifest is fine; a mode the core lacks is an error.
    let f = t.path().join("f");
    gen(
        &f,
        &["-u", "mul", "-f", "e5m2", "-r", "rne", "-s", "satfinite"],
    );
    let fs = f.to_str().unwrap();
    json_ok(&["verify", "--from", fs, "-f", "e5m2", "-r", "rne", "--json"]);
    let e = expect(&["verify", "--from", fs, "-r", "rtz"], 2);
    assert!(
        e.contains("--rounding rtz: the core does not implement it (it has rne)"),
        "{e}"
    );
}

#[test]
fn zero_vectors_never_pass() {
    let e = expect(&["verify", "-u", "mul", "-f", "e4m3", "--random", "0"], 2);
    assert!(e.contains("--random 0 draws no vector"), "{e}");
    let e = expect(
        &[
            "verify", "-u", "mul", "-f", "e4m3", "--random", "3", "--shard", "0/8",
        ],
        2,
    );
    assert!(e.contains("shard 0/8 of a 3-vector space is empty"), "{e}");
    let e = expect(&["verify", "-u", "mac", "-f", "e4m3", "--random", "0"], 2);
    assert!(e.contains("--random 0 draws no cycle"), "{e}");
    let e = expect(
        &[
            "verify",
            "-u",
            "mul",
            "-f",
            "e4m3",
            "--ignore",
            "result,flags,valid_out",
        ],
        2,
    );
    assert!(e.contains("leaves no data output to compare"), "{e}");
    // Every data output ignored: the handshake alone is no check of the core.
    let e = expect(
        &[
            "verify",
            "-u",
            "mul",
            "-f",
            "e4m3",
            "--ignore",
            "result,flags",
        ],
        2,
    );
    assert!(
        e.contains("--ignore result,flags leaves no data output to compare"),
        "{e}"
    );
}

#[test]
fn manifest_schema_and_latency_are_validated() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("m");
    gen(&d, &["-u", "mul", "-f", "e4m3"]);
    let ds = d.to_str().unwrap();
    edit_manifest(&d, |m| m["schema"] = 2.into());
    let e = expect(&["verify", "--from", ds], 2);
    assert!(
        e.contains("schema 2 is not supported; this fp8gen reads schema 1"),
        "{e}"
    );
    edit_manifest(&d, |m| {
        m["schema"] = 1.into();
        m["latency"] = 3.into();
    });
    let e = expect(&["verify", "--from", ds], 2);
    assert!(
        e.contains("latency is 3 but the core has no clock port"),
        "{e}"
    );
}

#[test]
fn exhaustive_enumerates_random_bits_of_a_stochastic_core() {
    // binary16 input (16 bits) x 4 random bits: 2^20 vectors, every rnd_i value.
    let j = json_ok(&[
        "verify",
        "-u",
        "project",
        "-f",
        "e4m3",
        "--in-format",
        "binary16",
        "-r",
        "sra",
        "--sr-bits",
        "4",
        "-s",
        "satfinite",
        "--exhaustive",
        "--json",
    ]);
    assert_eq!(j["vectors"], 1 << 20);
    let space = j["meta"]["space"].as_str().unwrap();
    assert!(space.contains("rnd_i (4 bits) enumerated"), "{space}");
    // binary32 x 12 random bits cannot be enumerated: said so, not sampled silently.
    let e = expect(
        &[
            "verify",
            "-u",
            "project",
            "-f",
            "e4m3",
            "-r",
            "sra",
            "--sr-bits",
            "12",
            "--exhaustive",
        ],
        2,
    );
    assert!(
        e.contains("--exhaustive: 32 operand bits + 12 random bits (rnd_i) = 2^44"),
        "{e}"
    );
    // Without --exhaustive the summary says rnd_i is sampled.
    let j = json_ok(&[
        "verify",
        "-u",
        "project",
        "-f",
        "e4m3",
        "-r",
        "sra",
        "--sr-bits",
        "12",
        "-s",
        "satfinite",
        "--random",
        "1000",
        "--json",
    ]);
    assert!(
        j["meta"]["space"].as_str().unwrap().contains("sampled"),
        "{j}"
    );
}

#[test]
fn the_same_core_hits_the_model_cache_whatever_the_verify_options() {
    let cache = tempfile::tempdir().unwrap();
    let c = cache.path().to_str().unwrap();
    let v = |extra: &[&str]| -> String {
        let mut a = vec![
            "verify",
            "-u",
            "mul",
            "-f",
            "e5m2",
            "-r",
            "rtz",
            "-s",
            "satfinite",
        ];
        a.extend_from_slice(extra);
        let o = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
            .args(&a)
            .env("FP8GEN_CACHE", c)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let first = v(&[]);
    assert!(first.contains("model built in"), "{first}");
    for extra in [
        &["--seed", "9", "--random", "5000"][..],
        &["--shard", "1/3"][..],
        &["--json"][..],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
            .args([
                "verify",
                "-u",
                "mul",
                "-f",
                "e5m2",
                "-r",
                "rtz",
                "-s",
                "satfinite",
            ])
            .args(extra)
            .env("FP8GEN_CACHE", c)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        if extra != ["--json"] {
            assert!(
                stderr(&o).contains("model from cache"),
                "{extra:?}: {}",
                stderr(&o)
            );
        } else {
            let j: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(j["meta"]["request"], "fp8gen gen --unit mul --format e5m2 --format-y e5m2 --out-format e5m2 --rounding rtz --saturation satfinite --stages 0");
        }
    }
    // The same core from a directory is the same entry; a truncated model heals itself.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("core");
    gen(
        &d,
        &["-u", "mul", "-f", "e5m2", "-r", "rtz", "-s", "satfinite"],
    );
    let o = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args(["verify", "--from", d.to_str().unwrap()])
        .env("FP8GEN_CACHE", c)
        .output()
        .unwrap();
    assert!(stderr(&o).contains("model from cache"), "{}", stderr(&o));
    let models: Vec<PathBuf> = std::fs::read_dir(cache.path().join("models"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    for m in &models {
        let so = m.join("model.so");
        let len = std::fs::metadata(&so).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(&so).unwrap();
        f.set_len(len / 2).unwrap();
    }
    let again = v(&[]);
    assert!(
        again.contains("PASS") && again.contains("model built in"),
        "{again}"
    );
    // Leftovers of an interrupted build are swept; `cache clean` empties the cache.
    let stale = cache.path().join("tmp").join("model-4194399-1-0");
    std::fs::create_dir_all(&stale).unwrap();
    v(&["--random", "100"]);
    assert!(
        !stale.exists(),
        "temporary directory of a dead build survived"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args(["cache", "clean"])
        .env("FP8GEN_CACHE", c)
        .output()
        .unwrap();
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("cleaned") && out.contains("models"), "{out}");
    assert_eq!(
        std::fs::read_dir(cache.path().join("models"))
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn bad_numbers_and_bad_input_get_clear_errors() {
    let e = expect(&["decode", "-f", "e4m3", "--bias=-2147483648"], 2);
    assert!(e.contains("bias -2147483648 is out of range"), "{e}");
    let e = expect(
        &["verify", "-u", "mul", "-f", "e4m3", "--threads", "100000"],
        2,
    );
    assert!(e.contains("--threads 100000: this machine has"), "{e}");
    let e = expect(
        &["verify", "-u", "fma", "-f", "e4m3", "--random", "1e16"],
        2,
    );
    assert!(e.contains("years") && e.contains("--shard"), "{e}");
    let e = expect(
        &["verify", "-u", "mul", "-f", "e4m3", "--random", "lots"],
        2,
    );
    assert!(e.contains("'lots' is not a count"), "{e}");
    // A huge line is neither held nor echoed whole.
    let mut big = vec![b'4'; 10 << 20];
    big.push(b'\n');
    let o = run_in(&["project", "-f", "e4m3"], &big);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("line 1: longer than 4096 bytes"), "{e}");
    assert!(e.len() < 300, "{} bytes of error", e.len());
    // Binary input names its line.
    let o = run_in(&["project", "-f", "e4m3"], b"3f800000\n\xff\xfe\x00\x01\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("line 2: not text (invalid UTF-8"),
        "{}",
        stderr(&o)
    );
    // Usage errors exit 2, verification failures 1 (see the tests above).
    for args in [
        &["verify", "-u", "nope", "-f", "e4m3"][..],
        &["verify", "-u", "mul", "-f", "e4m3", "--shard", "4/4"][..],
        &[
            "gen",
            "-u",
            "decode",
            "-f",
            "e4m3",
            "--ftz",
            "-o",
            "/tmp/fp8gen-never",
        ][..],
        &["verify", "--from", "/nonexistent"][..],
        &["verify", "-u", "mul", "-f", "e4m3", "--ignore", "wrong"][..],
        &["cache", "explode"][..],
    ] {
        expect(args, 2);
    }
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // `fp8gen decode -f binary16 | head -1`: 65536 lines into a reader that went away.
    let mut child = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args(["decode", "-f", "binary16"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn mac_runs_through_the_shared_engine_with_the_same_summary() {
    let j = json_ok(&[
        "verify",
        "-u",
        "mac",
        "-f",
        "e4m3",
        "-r",
        "dyn",
        "-s",
        "satfinite",
        "--stages",
        "2",
        "--random",
        "50000",
        "--shard",
        "0/2",
        "--json",
    ]);
    for k in [
        "vectors",
        "mismatches",
        "compared",
        "mismatches_per_port",
        "shards",
        "meta",
    ] {
        assert!(j.get(k).is_some(), "{k} missing: {j}");
    }
    assert!(j["meta"]["space"]
        .as_str()
        .unwrap()
        .starts_with("random streams"));
    assert!(j["vectors"].as_u64().unwrap() >= 25_000);
    // An accumulator that ignores clear_i is caught, with a counterexample and a VCD.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("mac");
    gen(&d, &["-u", "mac", "-f", "e4m3", "-r", "rne"]);
    let v = verilog_of(&d);
    let text = std::fs::read_to_string(&v).unwrap();
    let broken = text.replace("clear_i ? 32'h0 : acc_q", "acc_q");
    assert_ne!(broken, text);
    std::fs::write(&v, broken).unwrap();
    let vcd = t.path().join("mac.vcd");
    let o = run(&[
        "verify",
        "--from",
        d.to_str().unwrap(),
        "--random",
        "20000",
        "--vcd",
        vcd.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(j["mismatches"].as_u64().unwrap() > 0);
    assert!(!j["counterexamples"].as_array().unwrap().is_empty());
    assert!(j["vcd"].is_string(), "{j}");
    assert!(std::fs::metadata(&vcd)
        .map(|m| m.len() > 100)
        .unwrap_or(false));
}

#[test]
fn a_multi_file_core_is_verified_from_its_manifest() {
    // A third-party-style core: a package-like header, a wrapper in SystemVerilog with a
    // parameter and a define, the datapath in a third file; ports named its own way.
    let t = tempfile::tempdir().unwrap();
    let g = t.path().join("gen");
    gen(
        &g,
        &["-u", "fma", "-f", "e5m2", "-r", "rne", "-s", "satfinite"],
    );
    let d = t.path().join("byo");
    std::fs::create_dir_all(d.join("rtl/include")).unwrap();
    let src = verilog_of(&g);
    std::fs::copy(&src, d.join("rtl").join(src.file_name().unwrap())).unwrap();
    let inner = src.file_stem().unwrap().to_str().unwrap().to_string();
    std::fs::write(
        d.join("rtl/include/fp8_defs.svh"),
        "`define FP8_XW 8\n`define FP8_FLAGS_W 4\n",
    )
    .unwrap();
    std::fs::write(
        d.join("rtl/my_fma_top.sv"),
        format!(
            "`include \"fp8_defs.svh\"\n\
             module my_fma_top #(parameter int ACC_W = 16) (\n\
               input  logic [`FP8_XW-1:0] a_in,\n  input  logic [`FP8_XW-1:0] b_in,\n\
               input  logic [ACC_W-1:0] c_in,\n  output logic [ACC_W-1:0] res,\n\
               output logic [`FP8_FLAGS_W-1:0] status);\n\
             `ifdef USE_INNER\n\
               logic v;\n\
               {inner} u_core (.valid_i(1'b1), .x_i(a_in), .y_i(b_in), .z_i(c_in), .r_o(res), .flags_o(status), .valid_o(v));\n\
             `endif\n\
             endmodule\n"
        ),
    )
    .unwrap();
    let manifest = format!(
        r#"{{"unit":"fma","top":"my_fma_top","generator":"hand-written",
          "verilog":["rtl/{}","rtl/my_fma_top.sv"],
          "include_dirs":["rtl/include"],"defines":{{"USE_INNER":""}},"parameters":{{"ACC_W":32}},
          "formats":{{"x":"e5m2","y":"e5m2","r":"binary32"}},
          "modes":{{"rounding":"rne","saturation":"satfinite"}},
          "ports":[{{"name":"a_in","direction":"input","width":8,"role":"x"}},
                   {{"name":"b_in","direction":"input","width":8,"role":"y"}},
                   {{"name":"c_in","direction":"input","width":32,"role":"z"}},
                   {{"name":"res","direction":"output","width":32,"role":"result"}},
                   {{"name":"status","direction":"output","width":4,"role":"flags"}}]}}"#,
        src.file_name().unwrap().to_str().unwrap()
    );
    std::fs::write(d.join("manifest.json"), manifest).unwrap();
    let ds = d.to_str().unwrap();
    let j = json_ok(&["verify", "--from", ds, "--random", "200000", "--json"]);
    assert_eq!(j["mismatches"], 0);
    assert_eq!(
        j["compared"],
        serde_json::json!(["res[32]", "status[4]"]),
        "{j}"
    );
    // Compare a subset of outputs.
    let j = json_ok(&[
        "verify", "--from", ds, "--random", "1000", "--ignore", "flags", "--json",
    ]);
    assert_eq!(j["compared"], serde_json::json!(["res[32]"]));
    // IEEE signaling-NaN semantics (CVFPU's) are a golden option: this core treats E5M2 NaNs
    // as quiet, so asking for signaling NaNs must fail on the invalid flag only.
    let o = run(&[
        "verify",
        "--from",
        ds,
        "--signaling-nan",
        "--max-counterexamples",
        "3",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        j["mismatches_per_port"].as_object().unwrap().len(),
        1,
        "{j}"
    );
    assert!(j["mismatches_per_port"]["status"].as_u64().unwrap() > 0);
    assert_eq!(j["counterexamples"].as_array().unwrap().len(), 3);
}

#[test]
fn verify_from_prove_proves_a_hand_edited_core_and_refutes_a_broken_one() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("mul");
    gen(
        &d,
        &["-u", "mul", "-f", "e4m3", "-r", "dyn", "-s", "satfinite"],
    );
    let ds = d.to_str().unwrap();
    let v = verilog_of(&d);
    // Hand-edited but correct: the header is gone and the ports are declared another way.
    let text = std::fs::read_to_string(&v).unwrap();
    let edited: String = text
        .lines()
        .filter(|l| !l.starts_with("// Generated by"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(edited, text);
    std::fs::write(&v, &edited).unwrap();
    let o = run(&["verify", "--from", ds, "--prove"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("PROVEN:"), "{out}");
    assert!(out.contains("r_o[8], flags_o[4]"), "{out}");
    // Ties-to-odd instead of ties-to-even under rne: refuted, and the counterexample replays
    // in Verilator as a difference from the golden model.
    let line = edited
        .lines()
        .find(|l| l.contains("wire round_away ="))
        .expect("rounder line");
    let broken = edited.replace(
        line,
        &line.replacen(
            "(round_sticky | round_mag_t[0])",
            "(round_sticky | ~round_mag_t[0])",
            1,
        ),
    );
    assert_ne!(broken, edited);
    std::fs::write(&v, broken).unwrap();
    let vcd = t.path().join("cx.vcd");
    let o = run(&[
        "verify",
        "--from",
        ds,
        "--prove",
        "--vcd",
        vcd.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("REFUTED:"), "{out}");
    assert!(
        out.contains("differs from the golden model: fp8_mul_e4m3_to_e4m3_rmdyn_satfinite_s0"),
        "{out}"
    );
    assert!(std::fs::metadata(&vcd)
        .map(|m| m.len() > 100)
        .unwrap_or(false));
    // Simulation-only options are refused next to --prove.
    let e = expect(&["verify", "--from", ds, "--prove", "--random", "10"], 2);
    assert!(e.contains("--random selects simulation vectors"), "{e}");
}

/// Options next to `--from` that the core's unit does not have are refused (before, e.g.
/// `--in-format` on a mul core was dropped without a word), as are duplicate modes and
/// simulation options next to `--prove`.
#[test]
fn options_the_core_in_from_cannot_honour_are_errors() {
    let t = tempfile::tempdir().unwrap();
    let m = t.path().join("m");
    gen(
        &m,
        &["-u", "mul", "-f", "e2m1", "-r", "rne", "-s", "satfinite"],
    );
    let p = t.path().join("p");
    gen(
        &p,
        &["-u", "project", "-f", "e2m1", "-r", "rne", "-s", "dyn"],
    );
    let (ms, ps) = (m.to_str().unwrap(), p.to_str().unwrap());
    let table: &[(&[&str], &str)] = &[
        (
            &["verify", "--from", ms, "--in-format", "binary16"],
            "error: --in-format applies to --unit project, convert or quantize; the core in --from is a mul core: drop the option",
        ),
        (
            &["verify", "--from", ps, "--format-y", "binary32"],
            "error: --format-y applies to --unit add, mul, fma, mac or dot; the core in --from is a project core: drop the option",
        ),
        (
            &["verify", "--from", ps, "--out-format", "e2m1"],
            "error: --out-format applies to --unit add, mul, fma or dot; the core in --from is a project core: drop the option",
        ),
        (
            &["verify", "--from", ps, "--in-format", "binary16"],
            "error: --in-format binary16 conflicts with the core in --from: its manifest says binary32",
        ),
        (
            &["verify", "--from", ps, "-s", "satfinite,satfinite"],
            "error: --saturation: 'satfinite' is listed twice",
        ),
        (
            &["verify", "--from", ms, "--prove", "--seed", "3"],
            "error: --seed selects simulation vectors; --prove covers every input",
        ),
        (
            &["verify", "--from", ms, "--prove", "--max-hours", "2"],
            "error: --max-hours bounds a simulation run's estimate; --prove is bounded by --timeout (seconds)",
        ),
        (
            &["verify", "--from", ms, "--prove", "--timeout", "0"],
            "error: --timeout 0 gives the solver no time",
        ),
    ];
    for (args, want) in table {
        let e = expect(args, 2);
        assert!(
            e.contains(want),
            "fp8gen {args:?}:\n got: {e}\nwant: {want}"
        );
    }
}

/// A core that prints on every evaluation: its output goes to stderr, stdout holds the JSON
/// summary alone (before, the `$display` lines followed the JSON on stdout).
#[test]
fn a_cores_display_output_never_reaches_stdout() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("chatty");
    gen(
        &d,
        &["-u", "mul", "-f", "e2m1", "-r", "rne", "-s", "satfinite"],
    );
    let v = verilog_of(&d);
    let text = std::fs::read_to_string(&v).unwrap();
    let at = text.rfind("endmodule").unwrap();
    let chatty = format!(
        "{}  always @* $display(\"chatty core: x=%h y=%h\", x_i, y_i);\n{}",
        &text[..at],
        &text[at..]
    );
    std::fs::write(&v, chatty).unwrap();
    for json in [true, false] {
        let mut args = vec!["verify", "--from", d.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let j: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not the JSON summary alone ({e}):\n{}",
                String::from_utf8_lossy(&o.stdout)
            )
        });
        assert_eq!(j["mismatches"], 0);
        assert!(stderr(&o).contains("chatty core: x="), "{}", stderr(&o));
    }
}

/// Hand-written manifests: every mistake is a usage error (exit 2) that names it.
#[test]
fn manifest_mistakes_are_usage_errors_that_name_them() {
    let t = tempfile::tempdir().unwrap();
    let base = t.path().join("base");
    gen(
        &base,
        &["-u", "mul", "-f", "e2m1", "-r", "rne", "-s", "satfinite"],
    );
    let copy = |name: &str| {
        let d = t.path().join(name);
        std::fs::create_dir(&d).unwrap();
        for e in std::fs::read_dir(&base).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
        }
        d
    };
    let port = |m: &mut Value, name: &str| -> usize {
        m["ports"]
            .as_array()
            .unwrap()
            .iter()
            .position(|p| p["name"] == name)
            .unwrap()
    };
    // An unknown key in a port object or a format object.
    let d = copy("port_key");
    edit_manifest(&d, |m| {
        let i = port(m, "x_i");
        m["ports"][i]["signed"] = true.into();
    });
    let e = expect(&["verify", "--from", d.to_str().unwrap()], 2);
    assert!(
        e.contains(
            "unknown field `signed`, expected one of `name`, `direction`, `width`, `role`, `index`"
        ),
        "{e}"
    );
    let d = copy("format_key");
    edit_manifest(&d, |m| {
        m["formats"]["x"] = serde_json::json!({"k": 4, "p": 2, "bias": 1, "signed": true, "specials": "fn", "emax": 2});
    });
    let e = expect(&["verify", "--from", d.to_str().unwrap()], 2);
    assert!(
        e.contains(
            "unknown key `emax` in a format object; its keys are k, p, bias, signed, specials"
        ),
        "{e}"
    );
    // Stages on a core without a clock.
    let d = copy("stages");
    edit_manifest(&d, |m| m["stages"] = 2.into());
    let e = expect(&["verify", "--from", d.to_str().unwrap()], 2);
    assert!(e.contains("stages is 2 but the core has no clock port (role clock); a combinational core has 0 stages"), "{e}");
    // Not an object; serde's "did not match any variant" never reaches the user.
    let d = copy("array");
    std::fs::write(d.join("manifest.json"), "[1, 2, 3]").unwrap();
    let e = expect(&["verify", "--from", d.to_str().unwrap()], 2);
    assert!(e.contains("manifest.json must be a JSON object {\"unit\": …, \"top\": …, \"verilog\": …, \"formats\": …, \"ports\": …}"), "{e}");
    let d = copy("formats");
    edit_manifest(&d, |m| m["formats"]["x"] = serde_json::json!(["e2m1"]));
    let e = expect(&["verify", "--from", d.to_str().unwrap()], 2);
    assert!(
        e.contains("an array is not a format; a format is a name"),
        "{e}"
    );
    assert!(!e.contains("untagged"), "{e}");
    // A port named like a C++ / SystemVerilog keyword, in the Verilog and the manifest alike.
    let d = copy("keyword");
    let v = verilog_of(&d);
    let text = std::fs::read_to_string(&v).unwrap();
    std::fs::write(&v, text.replace("y_i", "class")).unwrap();
    edit_manifest(&d, |m| {
        let i = port(m, "y_i");
        m["ports"][i]["name"] = "class".into();
    });
    let e = expect(&["verify", "--from", d.to_str().unwrap()], 2);
    assert!(e.contains("port name `class` is a reserved word of SystemVerilog; rename it in the Verilog and the manifest (e.g. `class_i`)"), "{e}");
    // A port the Verilog module does not have: found by Verilator, still a manifest error.
    let d = copy("pin");
    edit_manifest(&d, |m| {
        let i = port(m, "r_o");
        m["ports"][i]["name"] = "r_out".into();
    });
    let e = expect(&["verify", "--from", d.to_str().unwrap()], 2);
    assert!(
        e.contains("the manifest lists a port or parameter the Verilog module does not have"),
        "{e}"
    );
    assert!(e.contains("Pin not found: 'r_out'"), "{e}");
    // A byte-order mark before the JSON is accepted.
    let d = copy("bom");
    let text = std::fs::read_to_string(d.join("manifest.json")).unwrap();
    std::fs::write(d.join("manifest.json"), format!("\u{feff}{text}")).unwrap();
    json_ok(&["verify", "--from", d.to_str().unwrap(), "--json"]);
}
