//! The `fp8gen` command line as a user runs it: known answers, exact error messages, exit
//! codes, atomic and deterministic `gen`.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn fp8gen(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fp8gen");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn ok(args: &[&str], stdin: &str) -> String {
    let o = fp8gen(args, stdin);
    assert!(
        o.status.success(),
        "fp8gen {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn err(args: &[&str], stdin: &str, code: i32) -> String {
    let o = fp8gen(args, stdin);
    assert_eq!(
        o.status.code(),
        Some(code),
        "fp8gen {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stderr).unwrap()
}

#[test]
fn project_known_answers_table() {
    // (format, rounding, saturation, binary32 input, expected "code flags")
    let table: &[(&str, &str, &str, &str, &str)] = &[
        ("e4m3", "rne", "satfinite", "43e00000", "7e 0"), // 448
        ("e4m3", "rne", "satfinite", "43f00000", "7e 5"), // 480 → clamps, overflow+inexact
        ("e4m3", "rne", "satnone", "43f00000", "7f d"), // 480 → NaN (OCP), invalid+overflow+inexact
        ("e4m3", "rne", "satnone", "43e80000", "7e 1"), // 464: tie → 448 (even)
        ("e4m3", "rtz", "satnone", "44000000", "7e 5"), // 512 toward zero → 448
        ("e4m3", "rne", "satfinite", "7f800000", "7e 0"), // +inf → 448
        ("e4m3", "rne", "satnone", "ff800000", "7f 8"), // -inf → NaN, invalid
        ("e4m3", "rne", "satnone", "80000000", "80 0"), // -0
        ("e4m3", "rne", "satnone", "3a800000", "00 3"), // 2^-10 = half the min subnormal → 0, underflow
        ("e4m3", "rne", "satnone", "3ac00000", "01 3"), // 1.5·2^-10 → min subnormal
        ("e5m2", "rne", "satnone", "47800000", "7c 5"), // 65536 → +inf, overflow
        ("e5m2", "rne", "satpropagate", "7f800000", "7c 0"),
        ("e5m2", "rne", "satfinite", "7f800000", "7b 0"),
        ("e4m3fnuz", "rne", "satnone", "80000000", "00 0"), // -0 → +0 (no -0)
        ("e4m3fnuz", "rne", "satnone", "7fc00000", "80 0"),
        ("binary8p3se", "rne", "satnone", "ff800000", "ff 0"),
        ("binary8p3se", "rne", "satnone", "c7800000", "ff 5"),
        ("e2m1", "rne", "satnone", "41200000", "7 5"), // 10 → 6 (MX always saturates)
        ("e2m1", "rne", "satnone", "7fc00000", "0 8"), // NaN → nan-code +0, invalid
        ("e8m0", "rne", "satnone", "3f800000", "7f 0"),
        ("e8m0", "rne", "satnone", "00000000", "ff 8"), // zero has no encoding
        ("binary8p1uf", "rne", "satfinite", "bf800000", "00 1"), // negative → 0
    ];
    for (f, r, s, input, want) in table {
        let got = ok(
            &["project", "-f", f, "-r", r, "-s", s, "--flags"],
            &format!("{input}\n"),
        );
        assert_eq!(got.trim(), *want, "{f} {r} {s} {input}");
    }
}

#[test]
fn mul_and_fma_batches() {
    // 1.75·2^8 (448) × 1.0 in E5M2 (0x3c) → binary32 448.0
    assert_eq!(
        ok(
            &[
                "mul",
                "-f",
                "e4m3",
                "--format-y",
                "e5m2",
                "--out-format",
                "binary32"
            ],
            "7e 3c\n"
        )
        .trim(),
        "43e00000"
    );
    // 1·1 + 1 = 2 in binary32; and comments/blank lines are skipped
    assert_eq!(
        ok(&["fma", "-f", "e4m3"], "# x y z\n\n38 38 3f800000\n").trim(),
        "40000000"
    );
    // 0·inf = NaN, invalid
    assert_eq!(
        ok(&["fma", "-f", "e5m2", "--flags"], "00 7c 3f800000\n").trim(),
        "7fc00000 8"
    );
    // stochastic rounding consumes a random column; R = 0 rounds toward zero
    assert_eq!(
        ok(
            &["project", "-f", "e4m3", "-r", "sra", "--sr-bits", "4"],
            "3f880000 0\n3f880000 f\n"
        )
        .trim(),
        "38\n39"
    );
    // scaled: x·2^1 · y·2^-1 = x·y
    assert_eq!(
        ok(&["mul", "-f", "e4m3", "--scaled"], "40 80 40 7e\n").trim(),
        "48"
    );
}

#[test]
fn errors_name_the_problem() {
    let e = err(&["project", "-f", "e9m9"], "", 2);
    assert!(
        e.starts_with("error: invalid format field `format`: unknown format 'e9m9'"),
        "{e}"
    );
    let e = err(
        &["project", "--k", "8", "--p", "8", "--specials", "fn"],
        "",
        2,
    );
    assert_eq!(e.trim(), "error: invalid format field `p`: p = 8 is out of range for a signed 8-bit format; precision (including the hidden bit) must be 1..=7");
    let e = err(&["project", "-f", "e4m3", "-r", "nearest"], "", 2);
    assert!(
        e.contains("--rounding: unknown rounding mode 'nearest'"),
        "{e}"
    );
    let e = err(&["mul", "-f", "e4m3"], "7e\n", 2);
    assert_eq!(
        e.trim(),
        "error: line 1: expected 2 hex field(s) 'x y', got '7e'"
    );
    let e = err(&["mul", "-f", "e4m3"], "38 38\n1ff 38\n", 2);
    assert_eq!(
        e.trim(),
        "error: line 2: field x = 1ff does not fit in the 8-bit e4m3 (8 bits)"
    );
    let e = err(&["mul", "-f", "e4m3"], "38 zz\n", 2);
    assert_eq!(
        e.trim(),
        "error: line 1: field y = 'zz' is not a hex number"
    );
    let e = err(
        &[
            "project",
            "--k",
            "8",
            "--p",
            "3",
            "--unsigned",
            "--specials",
            "fnuz",
        ],
        "",
        2,
    );
    assert!(e.contains("field `signed`"), "{e}");
    let e = err(
        &["gen", "-u", "adder", "-f", "e4m3", "-o", "/tmp/never"],
        "",
        2,
    );
    assert!(e.contains("--unit: unknown unit 'adder'"), "{e}");
}

#[test]
fn formats_and_decode_tables() {
    let t = ok(&["formats"], "");
    assert!(
        t.lines()
            .any(|l| l.starts_with("e4m3 ") && l.contains("448")),
        "{t}"
    );
    let j: serde_json::Value = serde_json::from_str(&ok(&["formats", "--json"], "")).unwrap();
    assert_eq!(j.as_array().unwrap().len(), golden::PRESETS.len());
    let d = ok(&["decode", "-f", "e4m3"], "");
    assert!(d.contains("7e  normal     0x1.cp+8"), "{d}");
    let d: serde_json::Value =
        serde_json::from_str(&ok(&["decode", "-f", "binary8p3se", "--json"], "")).unwrap();
    assert_eq!(d["codes"].as_array().unwrap().len(), 256);
    assert_eq!(d["codes"][0x80]["class"], "nan");
}

#[test]
fn gen_is_atomic_deterministic_and_refuses_to_clobber() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    let args = |o: &std::path::Path| {
        vec![
            "gen".to_string(),
            "-u".into(),
            "project".into(),
            "-f".into(),
            "e5m2".into(),
            "-r".into(),
            "dyn".into(),
            "-s".into(),
            "dyn".into(),
            "--stages".into(),
            "2".into(),
            "-o".into(),
            o.display().to_string(),
        ]
    };
    let run = |o: &std::path::Path| {
        let v = args(o);
        ok(&v.iter().map(|s| s.as_str()).collect::<Vec<_>>(), "")
    };
    run(&a);
    run(&b);
    let read = |d: &std::path::Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().to_string(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let (ra, rb) = (read(&a), read(&b));
    // <top>.v, manifest.json, the FuseSoC <top>.core and its testbench <top>_tb.sv,
    // <top>_vectors.hex
    assert_eq!(ra.len(), 5);
    assert!(ra.iter().any(|(n, _)| n.ends_with(".core")));
    // The same bytes: the header records the canonical request, never the output path.
    for ((na, ta), (nb, tb)) in ra.iter().zip(&rb) {
        assert_eq!(na, nb);
        assert_eq!(ta, tb, "{na} differs between runs");
        assert!(
            !String::from_utf8_lossy(ta).contains(&a.display().to_string()),
            "{na} records the output path"
        );
    }
    // A second gen into a non-empty directory is refused (a usage error) and leaves it untouched.
    let v = args(&a);
    let e = err(&v.iter().map(|s| s.as_str()).collect::<Vec<_>>(), "", 2);
    assert!(e.contains("--force") || e.contains("not empty"), "{e}");
    assert_eq!(read(&a), ra);
    // A bad request writes nothing.
    let c = tmp.path().join("c");
    err(
        &[
            "gen",
            "-u",
            "project",
            "-f",
            "e4m3",
            "-r",
            "bogus",
            "-o",
            &c.display().to_string(),
        ],
        "",
        2,
    );
    assert!(!c.exists());
}

/// `mul --ftz --no-flags` (a core with FloPoCo's semantics and interface): the batch command
/// flushes, the core has no flags port and passes every pair in every mode with its result
/// compared; `--no-flags` elsewhere and `prove` of such a core are errors naming why.
#[test]
fn mul_ftz_no_flags_core_and_batch() {
    let out = ok(
        &["mul", "-f", "e4m3", "--ftz", "--flags"],
        "08 30\n88 30\n37 08\n01 38\n",
    );
    assert_eq!(out, "00 3\n80 3\n08 3\n00 0\n");
    let out = ok(
        &[
            "verify",
            "-u",
            "mul",
            "-f",
            "e4m3",
            "-r",
            "dyn",
            "-s",
            "dyn",
            "--ftz",
            "--no-flags",
            "--exhaustive",
            "--json",
        ],
        "",
    );
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["vectors"], 65536 * 24);
    assert_eq!(j["mismatches"], 0);
    assert_eq!(j["compared"], serde_json::json!(["r_o[8]", "valid_o[1]"]));
    assert!(j["top"].as_str().unwrap().ends_with("_ftz_nf_s0"), "{j}");
    let e = err(
        &[
            "gen",
            "-u",
            "fma",
            "-f",
            "e4m3",
            "--no-flags",
            "-o",
            "/tmp/x",
        ],
        "",
        2,
    );
    assert!(
        e.contains("--no-flags applies to mul only, not to the fma unit"),
        "{e}"
    );
    let e = err(&["prove", "-u", "fma", "-f", "e4m3", "--no-flags"], "", 2);
    assert!(
        e.contains("--no-flags applies to mul only, not to the fma unit"),
        "{e}"
    );
}

#[test]
fn fmax_chooses_stages_from_the_delay_model_and_synth_confirms_them() {
    // gen: the delay model's choice (ECP5: 2.09 ns + 0.538 ns per level; E4M3 mul: 28.2 levels).
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("m");
    let o = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args([
            "gen", "-u", "mul", "-f", "e4m3", "--fmax", "150", "-t", "ecp5-25k", "--json", "-o",
        ])
        .arg(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(m["stages"], 3);
    assert!(String::from_utf8_lossy(&o.stderr).contains(
        "--fmax 150: 3 stage(s) on ecp5-25k (logic depth 28.2 levels, predicted 170 MHz"
    ));
    let e = fp8gen(
        &[
            "gen", "-u", "mul", "-f", "e4m3", "--fmax", "150", "-o", "/tmp/x",
        ],
        "",
    );
    assert_eq!(
        String::from_utf8_lossy(&e.stderr).trim(),
        "error: --fmax needs --target T: the delay model is per device (ice40-up5k, ecp5-25k, ecp5-85k, gowin-gw1nr9)"
    );
    // synth: place and route decides; the result meets the clock and one stage fewer does not.
    let out = ok(
        &[
            "synth", "-u", "mul", "-f", "e4m3", "-t", "ecp5-25k", "--fmax", "120", "--json",
        ],
        "",
    );
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let s = r["stages"].as_u64().unwrap();
    assert!(r["fmax_mhz"].as_f64().unwrap() >= 120.0, "{out}");
    let tried = r["tried"].as_array().unwrap();
    if s > 0 {
        let fewer = tried
            .iter()
            .find(|t| t[0].as_u64() == Some(s - 1))
            .expect("one stage fewer was tried");
        assert!(fewer[1].as_f64().unwrap() < 120.0, "{out}");
    }
}

/// Options that were silently dropped or half-honoured, and messages that echoed the user's
/// text whole: each is now an error that names the problem (args → exit code, message).
#[test]
fn options_a_run_cannot_honour_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let o = tmp.path().join("never");
    let o = o.to_str().unwrap();
    let scale_msg = "--scale-format: scale format e4m3 is not a power-of-two scale of at most 8 bits (precision 1: e8m0, binary8p1uf, …)";
    let table: &[(&[&str], &str, i32, &str)] = &[
        // One check of the scale format for gen and the batch commands.
        (&["project", "-f", "e4m3", "--scale-format", "e4m3"], "", 2, scale_msg),
        (&["mul", "-f", "e4m3", "--scaled", "--scale-format", "e4m3"], "", 2, scale_msg),
        (&["dot", "-f", "e4m3", "--n", "2", "--scale-format", "e4m3"], "", 2, scale_msg),
        (&["gen", "-u", "mul", "-f", "e4m3", "--scale-format", "e4m3", "-o", o], "", 2, "scale format e4m3 is not a power-of-two scale"),
        // decode lists every code: binary32 printed a header and no code.
        (
            &["decode", "-f", "binary32"],
            "",
            2,
            "error: decode lists every code of a format; binary32 has 2^32 codes: use a format of at most 16 bits",
        ),
        // 0 guard bits would have been the binary32 accumulator.
        (
            &["gen", "-u", "mac", "-f", "e4m3", "--acc", "exact", "--guard-bits", "0", "-o", o],
            "",
            2,
            "error: --guard-bits 0 is out of range; use 1..=32 (0 guard bits is no exact accumulator; --acc binary32 is the rounding one)",
        ),
        // A mode listed twice would run twice.
        (
            &["verify", "-u", "project", "-f", "e2m1", "-r", "dyn", "-s", "dyn", "--run-saturation", "satfinite,satfinite"],
            "",
            2,
            "error: --saturation: 'satfinite' is listed twice; list each mode once (it would run twice)",
        ),
        (
            &["verify", "-u", "project", "-f", "e2m1", "-r", "dyn", "-s", "dyn", "--run-rounding", "rne,RNE"],
            "",
            2,
            "error: --rounding: 'RNE' is listed twice",
        ),
        // Run limits that are no limit.
        (&["verify", "-u", "mul", "-f", "e2m1", "--max-hours", "nan"], "", 2, "error: --max-hours NaN: give a positive number of hours (default 24)"),
        (&["verify", "-u", "mul", "-f", "e2m1", "--max-hours", "inf"], "", 2, "error: --max-hours inf: give a positive number of hours"),
        (&["verify", "-u", "mul", "-f", "e2m1", "--max-hours=-1"], "", 2, "error: --max-hours -1: give a positive number of hours"),
        (&["verify", "-u", "mul", "-f", "e2m1", "--timeout", "5"], "", 2, "error: --timeout limits the solver of --prove"),
        (
            &["prove", "-u", "mul", "-f", "e4m3", "--timeout", "0"],
            "",
            2,
            "error: --timeout 0 gives the solver no time, so no proof could end with a verdict; give the limit in seconds (default 600)",
        ),
        // An unwritable --vcd is refused before the run, not after it.
        (
            &["verify", "-u", "mul", "-f", "e2m1", "--vcd", "/nonexistent-fp8gen-dir/cx.vcd"],
            "",
            2,
            "error: --vcd /nonexistent-fp8gen-dir/cx.vcd: cannot be created (No such file or directory (os error 2)); give a path in a directory you can write",
        ),
        (
            &["prove", "-u", "mul", "-f", "e4m3", "--vcd", "/nonexistent-fp8gen-dir/cx.vcd"],
            "",
            2,
            "error: --vcd /nonexistent-fp8gen-dir/cx.vcd: cannot be created",
        ),
        // No clock beyond the fastest measured row is promised.
        (
            &["gen", "-u", "mul", "-f", "e4m3", "--fmax", "600", "-t", "ecp5-25k", "-o", o],
            "",
            2,
            "error: --fmax 600: no core measured on ecp5-25k runs faster than 279.6 MHz (docs/qor/qor.csv); the delay model promises nothing beyond its measured rows: ask for at most 279 MHz",
        ),
        (
            &["gen", "-u", "decode", "-f", "e4m3", "--fmax", "200", "-t", "ice40-up5k", "-o", o],
            "",
            2,
            "error: --fmax 200: no core measured on ice40-up5k runs faster than 105.6 MHz",
        ),
        // Nor beyond the fastest measured row of the unit itself.
        (
            &["gen", "-u", "mul", "-f", "e4m3", "--fmax", "250", "-t", "ecp5-25k", "-o", o],
            "",
            2,
            "error: --fmax 250: the fastest mul core measured on ecp5-25k runs at 214.7 MHz (docs/qor/qor.csv); the delay model promises nothing beyond it: ask for at most 214 MHz",
        ),
        (
            &["gen", "-u", "quantize", "-f", "e4m3", "--n", "32", "--scale-format", "e8m0", "--fmax", "50", "-t", "ecp5-25k", "-o", o],
            "",
            2,
            "error: --fmax 50: the fastest quantize32 core measured on ecp5-25k runs at 31.6 MHz",
        ),
        // Sweeps never plan a job that can only fail.
        (
            &["sweep", "plan", "prove", "--units", "project", "--formats", "e8m0", "--roundings", "rne"],
            "",
            2,
            "error: job prove-project-e8m0-rne-satfinite would fail: not supported: the reference rounder does not cover the e8m0 family",
        ),
        (
            &["sweep", "plan", "prove", "--units", "mul", "--formats", "e4m3", "--roundings", "rne", "--timeout", "0"],
            "",
            2,
            "error: job prove-mul-e4m3-rne-satfinite would fail: --timeout 0 gives the solver no time",
        ),
        (
            &["sweep", "plan", "qor", "--units", "mul", "--formats", "e4m3", "--stages", "0", "--targets", "ecp5-99k"],
            "",
            2,
            "error: job qor-mul-e4m3-s0-ecp5-99k would fail: --target: ",
        ),
        (
            &["sweep", "plan", "qor", "--units", "madd", "--formats", "e4m3", "--stages", "0", "--targets", "ecp5-25k"],
            "",
            2,
            "error: job qor-madd-e4m3-s0-ecp5-25k would fail: --unit: unknown unit 'madd'",
        ),
        // Control bytes from stdin are escaped, never sent to the terminal.
        (&["mul", "-f", "e4m3"], "3f\x1b[2J 00\n", 2, "error: line 1: field x = '3f\\u{1b}[2J' is not a hex number"),
    ];
    for (args, stdin, code, want) in table {
        let e = err(args, stdin, *code);
        assert!(
            e.contains(want),
            "fp8gen {args:?}:\n got: {e}\nwant: {want}"
        );
        assert!(!e.contains('\x1b'), "{e:?}");
    }
    // --scale-format implies the scaled columns, as for gen: x·2^1 · y·2^-1 = x·y.
    for args in [
        &["mul", "-f", "e4m3", "--scale-format", "e8m0"][..],
        &["mul", "-f", "e4m3", "--scaled"][..],
    ] {
        assert_eq!(ok(args, "40 80 40 7e\n").trim(), "48", "{args:?}");
    }
    // The default sweeps plan only jobs that can run (int-mul8 has 0..=2 stages).
    let plan = ok(&["sweep", "plan", "qor"], "");
    assert!(!plan.contains("int-mul8 --stages 3"), "{plan}");
    assert!(plan.contains("qor-int-mul8-int-s2-ecp5-25k"), "{plan}");
    ok(&["sweep", "plan", "prove"], "");
}

#[test]
fn user_text_in_errors_is_shortened() {
    let huge = "e".repeat(100_000);
    let e = err(&["project", "-f", &huge], "", 2);
    assert!(e.len() < 1000, "{} bytes of error", e.len());
    assert!(e.contains(&format!("'{}…'", "e".repeat(80))), "{e}");
    // clap's own errors too.
    let e = err(
        &["verify", "-u", "mul", "-f", "e4m3", "--nan-code", &huge],
        "",
        2,
    );
    assert!(e.len() < 1000, "{} bytes of error", e.len());
    let e = err(&["project", "-f", "e4\x1b[31mm3"], "", 2);
    assert!(e.contains("unknown format 'e4\\u{1b}[31mm3'"), "{e}");
}

#[test]
fn unit_help_lists_every_unit() {
    for cmd in ["gen", "verify", "synth", "prove", "board"] {
        let h = ok(&[cmd, "--help"], "");
        assert!(
            h.contains("Unit: decode, project, convert, add, mul, fma, mac, dot or quantize"),
            "{cmd}: {h}"
        );
    }
}

#[test]
fn a_closed_stdout_is_an_error_and_a_closed_stdin_is_no_input() {
    let sh = |script: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(env!("CARGO_BIN_EXE_fp8gen"))
            .output()
            .unwrap()
    };
    // stdout closed: the results would vanish.
    let o = sh("\"$0\" formats >&-");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim(),
        "error: stdout is closed; fp8gen writes its results there: redirect it to a file or to /dev/null instead of closing it"
    );
    // stdout to /dev/null is the user's choice.
    assert_eq!(sh("\"$0\" formats >/dev/null").status.code(), Some(0));
    // stdin closed or empty: no input, no output, success.
    for script in [
        "\"$0\" project -f e4m3 <&-",
        "\"$0\" project -f e4m3 </dev/null",
    ] {
        let o = sh(script);
        assert_eq!(o.status.code(), Some(0), "{script}");
        assert!(o.stdout.is_empty() && o.stderr.is_empty(), "{script}");
    }
}
