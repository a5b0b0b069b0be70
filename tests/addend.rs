//! Any addend format and any FMA result format, as a user runs them: `gen` and `verify` of a
//! binary16-addend `fma` and `dot` (the PULP ExSdotp shape: FP8 products, binary16 addend and
//! result), `verify --from` reading the addend format from the manifest, the batch commands
//! `fp8gen fma` / `fp8gen dot` / `fp8gen eval` with known answers, and the error messages of
//! a bad `--addend-format`.

use crate::common;
use common::{run, run_stdin, stderr, stdout};

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `verify ARGS --json`: the summary, asserted to pass with at least `min` vectors.
fn verify_passes(args: &[&str], min: u64) -> serde_json::Value {
    let mut a = vec!["verify", "--json"];
    a.extend_from_slice(args);
    let o = run(&a);
    assert!(
        o.status.success(),
        "{args:?}: {}\n{}",
        stderr(&o),
        stdout(&o)
    );
    let j = json(&stdout(&o));
    assert_eq!(j["mismatches"], 0, "{args:?}");
    assert!(j["vectors"].as_u64().unwrap() >= min, "{args:?}: {j}");
    j
}

#[test]
fn binary16_addend_fma_generates_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fma16");
    let o = run(&[
        "gen",
        "-u",
        "fma",
        "-f",
        "e4m3",
        "--out-format",
        "binary16",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    // the addend follows the result format and is recorded in the manifest and the command
    assert_eq!(m["formats"]["z"]["k"], 16, "{m}");
    assert_eq!(m["formats"]["r"]["p"], 11, "{m}");
    let cmd = m["command"].as_str().unwrap();
    assert!(
        cmd.contains("--out-format binary16 --addend-format binary16"),
        "{cmd}"
    );
    assert_eq!(
        m["top"],
        "fp8_fma_e4m3_z_binary16_to_binary16_rne_satnone_s0"
    );
    let width = |name: &str| {
        m["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()["width"]
            .clone()
    };
    assert_eq!(width("z_i"), 16);
    assert_eq!(width("r_o"), 16);
    // verify --from reads the formats from the manifest: no wrapper, no option
    let j = verify_passes(
        &["--from", out.to_str().unwrap(), "--random", "200000"],
        200_000,
    );
    assert_eq!(j["format"], "e4m3 + binary16 -> binary16", "{j}");
    // pipelined, every mode, a binary32 addend rounded into a bfloat16 result
    verify_passes(
        &[
            "-u",
            "fma",
            "-f",
            "e4m3",
            "--out-format",
            "bfloat16",
            "--addend-format",
            "binary32",
            "-r",
            "dyn",
            "-s",
            "dyn",
            "--stages",
            "2",
            "--random",
            "20000",
        ],
        20_000 * 24,
    );
}

#[test]
fn binary16_addend_dot_generates_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dot16");
    let o = run(&[
        "gen",
        "-u",
        "dot",
        "-f",
        "e4m3",
        "--n",
        "8",
        "--scale-format",
        "e8m0",
        "--addend-format",
        "binary16",
        "--out-format",
        "binary16",
        "--stages",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    // --addend-format implies --addend
    assert_eq!(m["dot"]["addend"], true, "{m}");
    assert_eq!(m["formats"]["z"]["k"], 16, "{m}");
    assert_eq!(
        m["top"],
        "fp8_dot8_e4m3_sc_e8m0_z_binary16_to_binary16_rne_satnone_s1"
    );
    let j = verify_passes(
        &["--from", out.to_str().unwrap(), "--random", "100000"],
        100_000,
    );
    let space = j["meta"]["space"].as_str().unwrap_or_default().to_string();
    assert!(space.starts_with("structured dot"), "{space}");
}

#[test]
fn default_addends_are_the_cores_of_before() {
    // --addend-format binary32 on a dot, --out-format binary32 on an fma: the same core (name,
    // command) as without the options.
    let dir = tempfile::tempdir().unwrap();
    for (k, (with, without)) in [
        (
            "gen -u dot -f e4m3 --n 4 --addend --addend-format binary32",
            "gen -u dot -f e4m3 --n 4 --addend",
        ),
        (
            "gen -u fma -f e4m3 --out-format binary32 --addend-format binary32",
            "gen -u fma -f e4m3",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let gen = |args: &str, sub: &str| {
            let out = dir.path().join(format!("{k}{sub}"));
            let mut a: Vec<&str> = args.split_whitespace().collect();
            let o = out.to_str().unwrap().to_string();
            a.extend(["-o", &o]);
            let r = run(&a);
            assert!(r.status.success(), "{args}: {}", stderr(&r));
            std::fs::read_to_string(out.join("manifest.json")).unwrap()
        };
        assert_eq!(gen(with, "a"), gen(without, "b"), "{with}");
    }
}

#[test]
fn batch_commands_take_the_addend_and_result_formats() {
    // e4m3 1 * 1 + binary16 1 = 2 (0x4000); 448 * 448 overflows binary16 to +Inf
    let o = run_stdin(
        &["fma", "-f", "e4m3", "--out-format", "binary16", "--flags"],
        "38 38 3c00\n7e 7e 0\n38 38 7c01\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(|l| l.to_string()).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].starts_with("4000"), "{lines:?}");
    assert!(lines[1].starts_with("7c00"), "{lines:?}");
    assert!(lines[2].starts_with("7e00"), "{lines:?}");
    // a binary16 addend with the default binary32 result
    let o = run_stdin(
        &["fma", "-f", "e4m3", "--addend-format", "binary16"],
        "38 38 3c00\n",
    );
    assert_eq!(stdout(&o).trim(), "40000000", "{}", stderr(&o));
    // dot: 8 * 1 + 1 = 9 in binary16 (0x4880)
    let ones = vec!["38"; 16].join(" ");
    let o = run_stdin(
        &[
            "dot",
            "-f",
            "e4m3",
            "--n",
            "8",
            "--addend-format",
            "binary16",
            "--out-format",
            "binary16",
        ],
        &format!("{ones} 3c00\n"),
    );
    assert_eq!(stdout(&o).trim(), "4880", "{}", stderr(&o));
    // eval: the generated core's golden model, in port order x y z
    let o = run_stdin(
        &["eval", "-u", "fma", "-f", "e4m3", "--out-format", "e4m3"],
        "38 38 38\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("40 0"), "{}", stdout(&o));
}

#[test]
fn bad_addend_formats_are_refused_with_the_reason() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["verify", "-u", "fma", "-f", "e4m3", "--addend-format", "binary17"],
            "--addend-format: 'binary17' is not a P3109 name",
        ),
        (
            &["verify", "-u", "mul", "-f", "e4m3", "--addend-format", "binary16"],
            "--addend-format applies to --unit fma or dot only, not to mul",
        ),
        (
            &[
                "verify",
                "-u",
                "fma",
                "-f",
                "e4m3",
                "--out-format",
                "binary16",
                "--ftz",
            ],
            "--ftz flushes a binary32 addend and result; this fma has addend binary16 and result binary16",
        ),
        (
            &["fma", "-f", "e4m3", "--addend-format", "nope"],
            "--addend-format: unknown format 'nope'",
        ),
        (
            &["fma", "-f", "e4m3", "--out-format", "binary16", "--ftz"],
            "--ftz flushes a binary32 addend and result",
        ),
        (
            &["verify", "--from", ".", "--addend-format", "binary16"],
            "with --from DIR the manifest gives them",
        ),
    ];
    for (args, want) in cases {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}");
    }
}
