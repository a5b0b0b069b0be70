//! The MX block quantizer `quantize` through the CLI: generated and verified on the block
//! space (and exhaustively for a one-element bfloat16 block), a mutant whose scale is one
//! binade off at the rceil edge refuted, known answers from `eval`, the option rules.

use crate::common;

use common::{gen, run, run_stdin, stderr, stdout, verilog_of};
use std::process::Command;

#[test]
fn e4m3_block_of_4_verifies_and_an_off_by_one_binade_scale_fails() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("q");
    gen(
        &d,
        &[
            "-u",
            "quantize",
            "-f",
            "e4m3",
            "--n",
            "4",
            "--scale-policy",
            "rceil",
            "-s",
            "dyn",
        ],
    );
    let args = [
        "verify",
        "--from",
        d.to_str().unwrap(),
        "--random",
        "200000",
    ];
    let o = run(&args);
    let out = stderr(&o) + &stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("PASS: 800000 vectors, 0 mismatches"), "{out}");
    assert!(out.contains("structured blocks"), "{out}");
    assert!(out.contains("s_o[8]"), "{out}");
    // The mutant: a block maximum whose significand equals MaxFinite's (448 · 2^k) takes the
    // scale one binade up (amax_frac >= instead of >).
    let v = verilog_of(&d);
    let text = std::fs::read_to_string(&v).unwrap();
    let needle = "amax_frac > E4M3_MAX_FRAC";
    assert!(
        text.contains(needle),
        "no rceil comparison in {}",
        v.display()
    );
    std::fs::write(&v, text.replacen(needle, "amax_frac >= E4M3_MAX_FRAC", 1)).unwrap();
    let o = run(&args);
    let out = stderr(&o) + &stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL"), "{out}");
}

#[test]
fn a_block_of_32_verifies() {
    let o = run(&[
        "verify",
        "-u",
        "quantize",
        "-f",
        "e2m1",
        "--n",
        "32",
        "--scale-policy",
        "floor",
        "-s",
        "satfinite",
        "--random",
        "20000",
    ]);
    let out = stderr(&o) + &stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("PASS: 20000 vectors, 0 mismatches"), "{out}");
}

#[test]
fn a_one_element_bfloat16_block_verifies_exhaustively() {
    let o = run(&[
        "verify",
        "-u",
        "quantize",
        "--in-format",
        "bfloat16",
        "-f",
        "e5m2",
        "--n",
        "1",
        "--scale-policy",
        "even",
    ]);
    let out = stderr(&o) + &stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("PASS: 65536 vectors, 0 mismatches"), "{out}");
    assert!(out.contains("exhaustive"), "{out}");
}

#[test]
fn eval_gives_known_answers() {
    // 448, 1, -3, 0 (binary32) -> e4m3 with floor: scale 2^(8 - 8) = 1 (code 0x7f), elements
    // 448 = 0x7e, 1 = 0x38, -3 = 0xc4, 0; then 1, NaN: the scale and E2M1 elements are NaN
    // (E2M1 has none: code 0 with invalid).
    let o = run_stdin(
        &["eval", "-u", "quantize", "-f", "e4m3", "--n", "4"],
        "43e00000 3f800000 c0400000 0\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "7e 38 c4 00 7f 0\n");
    let o = run_stdin(
        &["eval", "-u", "quantize", "-f", "e2m1", "--n", "2"],
        "3f800000 7fc00000\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "0 0 ff 8\n");
    // rceil: 449 exceeds 448 = MaxFinite(e4m3) · 2^0, so the scale is 2^1 (0x80).
    let o = run_stdin(
        &[
            "eval",
            "-u",
            "quantize",
            "-f",
            "e4m3",
            "--n",
            "1",
            "--scale-policy",
            "rceil",
        ],
        "43e08000\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).ends_with(" 80 1\n"), "{}", stdout(&o));
}

#[test]
fn option_rules_are_exact_messages() {
    let cases: [(&[&str], &str); 5] = [
        (
            &[
                "gen", "-u", "quantize", "-f", "e4m3", "--n", "4", "--addend",
            ],
            "--addend applies to --unit dot only, not to quantize",
        ),
        (
            &["gen", "-u", "mul", "-f", "e4m3", "--scale-policy", "rceil"],
            "--scale-policy applies to --unit quantize only, not to mul",
        ),
        (
            &["gen", "-u", "quantize", "-f", "e4m3"],
            "--unit quantize needs --n N, the number of elements per block (1..=64)",
        ),
        (
            &["gen", "-u", "quantize", "-f", "e4m3", "--n", "65"],
            "--n 65 is out of range; a block has 1..=64 elements",
        ),
        (
            &[
                "gen",
                "-u",
                "quantize",
                "-f",
                "e4m3",
                "--n",
                "2",
                "--scale-policy",
                "nearest",
            ],
            "unknown scale policy 'nearest'; expected floor, ceil, even or rceil",
        ),
    ];
    for (args, msg) in cases {
        let t = tempfile::tempdir().unwrap();
        let mut a = args.to_vec();
        let out = t.path().join("o");
        a.extend(["-o", out.to_str().unwrap()]);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
        assert!(!out.exists());
    }
}

#[test]
fn a_one_element_binary32_quantizer_is_proven() {
    let o = run(&[
        "prove", "-u", "quantize", "-f", "e4m3", "--n", "1", "-r", "dyn",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.starts_with("PROVEN:"), "{out}");
    assert!(out.contains("z0_i[32]"), "{out}");
}

/// `scripts/xcheck/check_quantize.py`, a small run: the golden quantizer (through `eval`)
/// against gfloat's scale and element rounding and torchao's scale rules; nothing may be
/// unexplained. Needs the project virtualenv (`make setup-fpga`); a missing one is a
/// failure, not a skip.
#[test]
fn quantizer_matches_gfloat() {
    let repo = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = std::env::var_os("FP8GEN_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| repo.join(".venv"))
        .join("bin")
        .join("python");
    assert!(
        python.is_file(),
        "{} not found: run `make setup-fpga` first",
        python.display()
    );
    let t = tempfile::tempdir().unwrap();
    let json = t.path().join("q.json");
    let o = Command::new(&python)
        .arg(repo.join("scripts/xcheck/check_quantize.py"))
        .args(["--fp8gen", env!("CARGO_BIN_EXE_fp8gen"), "--blocks", "200"])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let out = stdout(&o) + &stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["unexplained"], 0, "{out}");
    // 5 formats x 4 policies x 10 classes x 200 blocks.
    assert_eq!(v["blocks"], 40000, "{out}");
}
