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
    // <top>.v, manifest.json and the FuseSoC <top>.core
    assert_eq!(ra.len(), 3);
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
    let e = err(&["prove", "-u", "mul", "-f", "e4m3", "--no-flags"], "", 2);
    assert!(
        e.contains("the reference does not implement --ftz or --no-flags"),
        "{e}"
    );
}

#[test]
fn fmax_chooses_stages_from_the_delay_model_and_synth_confirms_them() {
    // gen: the delay model's choice (ECP5: 0.90 ns + 0.659 ns per level; E4M3 mul: 26 levels).
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
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("--fmax 150: 3 stage(s) on ecp5-25k (logic depth 26 levels, predicted 181 MHz"));
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
