//! The `add` unit from the command line: a generated adder verifies exhaustively (mixed
//! formats, a `sub_i` port, mode ports), a hand-broken one fails, `--sub` is refused where it
//! means nothing, and the `add` batch command computes `golden::add`.

use crate::common;

use common::{gen, run, stderr, verilog_of};
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

fn verify_json(args: &[&str]) -> (i32, Value) {
    let o = run(args);
    let code = o.status.code().unwrap_or(-1);
    let j = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("fp8gen {args:?}: no JSON summary:\n{}", stderr(&o)));
    (code, j)
}

#[test]
fn generated_adder_verifies_exhaustively() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("add");
    gen(
        &d,
        &[
            "-u",
            "add",
            "-f",
            "e4m3",
            "--format-y",
            "e5m2",
            "--sub",
            "dyn",
            "-r",
            "dyn",
            "-s",
            "dyn",
        ],
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["unit"], "add");
    let sub = m["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "sub_i")
        .expect("sub_i port");
    assert_eq!(sub["role"], "sub");
    let (code, j) = verify_json(&["verify", "--from", d.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{j}");
    assert_eq!(j["mismatches"], 0);
    assert_eq!(j["complete"], true);
    assert_eq!(
        j["meta"]["space"], "exhaustive: every operand bit pattern",
        "{j}"
    );
    // x (8) + y (8) + sub_i (1) bits, every one of 6 roundings x 4 saturations.
    assert_eq!(j["vectors"], (1u64 << 17) * 24, "{j}");

    // A fixed subtraction is recorded in the manifest and verified as x - y.
    let d2 = t.path().join("sub");
    gen(&d2, &["-u", "add", "-f", "e5m2", "--sub", "--stages", "2"]);
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(d2.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["modes"]["subtract"], true, "{m}");
    let (code, j) = verify_json(&["verify", "--from", d2.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{j}");
    assert!(j["vectors"].as_u64().unwrap() >= 1 << 16, "{j}");
}

/// The adder with its sticky bit dropped (the alignment shifter's shifted-out bits ignored)
/// rounds ties-with-something-below wrongly: the verifier must find it.
#[test]
fn adder_without_sticky_fails() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("add");
    gen(&d, &["-u", "add", "-f", "e4m3"]);
    let v = verilog_of(&d);
    let text = std::fs::read_to_string(&v).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("wire al_sticky ="))
        .expect("sticky wire")
        .to_string();
    let broken = text.replace(&line, "  wire al_sticky = 1'b0;");
    assert_ne!(broken, text);
    std::fs::write(&v, broken).unwrap();
    let (code, j) = verify_json(&["verify", "--from", d.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{j}");
    let bad = j["mismatches"].as_u64().unwrap();
    assert!(bad > 0, "{j}");
    assert!(!j["counterexamples"].as_array().unwrap().is_empty(), "{j}");
}

#[test]
fn sub_is_refused_where_it_means_nothing() {
    let t = tempfile::tempdir().unwrap();
    let o = t.path().join("o");
    let e = run(&[
        "gen",
        "-u",
        "mul",
        "-f",
        "e4m3",
        "--sub",
        "-o",
        o.to_str().unwrap(),
    ]);
    assert_eq!(e.status.code(), Some(2));
    assert!(
        stderr(&e).contains("--sub applies to --unit add only"),
        "{}",
        stderr(&e)
    );
    let e = run(&[
        "gen",
        "-u",
        "add",
        "-f",
        "e4m3",
        "--sub",
        "maybe",
        "-o",
        o.to_str().unwrap(),
    ]);
    assert_eq!(e.status.code(), Some(2));
    assert!(
        stderr(&e).contains("--sub: unknown value 'maybe'"),
        "{}",
        stderr(&e)
    );
    assert!(!o.exists());
    let d = t.path().join("add");
    gen(&d, &["-u", "add", "-f", "e4m3"]);
    let e = run(&["verify", "--from", d.to_str().unwrap(), "--sub"]);
    assert_eq!(e.status.code(), Some(2));
    assert!(
        stderr(&e).contains("--sub describes an add core to generate"),
        "{}",
        stderr(&e)
    );
}

fn batch(args: &[&str], input: &str) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn add_batch_command() {
    // 1 + 1 = 2; 1 - 1 = +0 (-0 under rtn); 448 + 448 overflows E4M3 (NaN, satnone) or
    // saturates (satfinite); 1 + 2^-4 is a tie -> 1 (rne).
    assert_eq!(batch(&["add", "-f", "e4m3"], "38 38\n38 18\n"), "40\n38\n");
    assert_eq!(batch(&["add", "-f", "e4m3", "--sub"], "38 38\n"), "00\n");
    assert_eq!(
        batch(&["add", "-f", "e4m3", "--sub", "-r", "rtn"], "38 38\n"),
        "80\n"
    );
    assert_eq!(
        batch(&["add", "-f", "e4m3", "--flags"], "7e 7e\n"),
        "7f d\n"
    );
    assert_eq!(
        batch(
            &["add", "-f", "e4m3", "-s", "satfinite", "--flags"],
            "7e 7e\n"
        ),
        "7e 5\n"
    );
    // e4m3 1.0 + e5m2 1.0 = 2.0 in bfloat16.
    assert_eq!(
        batch(
            &[
                "add",
                "-f",
                "e4m3",
                "--format-y",
                "e5m2",
                "--out-format",
                "bfloat16"
            ],
            "38 3c\n"
        ),
        "4000\n"
    );
    let o = run(&["add", "-f", "e4m3", "--sub", "dyn"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
