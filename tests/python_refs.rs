//! The golden model against independent Python references: `scripts/xcheck/check_refs.py`
//! pipes structured and random binary32 inputs through `fp8gen project` and compares every
//! result code with ml_dtypes' casts and gfloat's P3109 decode / rounding (every mode and
//! saturation gfloat has). Documented semantic differences are counted per class; any other
//! mismatch fails this test.
//!
//! Needs the project virtualenv with the pinned packages (`scripts/xcheck/requirements.txt`,
//! installed by `make setup-fpga`, which CI runs first). A missing venv or package is a
//! failure, not a skip.

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's interpreter (`FP8GEN_VENV` overrides `<repo>/.venv`, as in setup-fpga.sh).
fn venv_python() -> PathBuf {
    let venv = std::env::var_os("FP8GEN_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv"));
    venv.join("bin").join("python")
}

#[test]
fn golden_matches_ml_dtypes_and_gfloat() {
    let python = venv_python();
    assert!(
        python.is_file(),
        "{} not found: the Python references (ml_dtypes, gfloat) live in the project \
         virtualenv; run `make setup-fpga` first",
        python.display()
    );
    let script = repo().join("scripts/xcheck/check_refs.py");
    let json = std::env::temp_dir().join(format!("fp8gen-xcheck-{}.json", std::process::id()));
    let out = Command::new(&python)
        .arg(&script)
        .arg("--fp8gen")
        .arg(env!("CARGO_BIN_EXE_fp8gen"))
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} {}: {e}", python.display(), script.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    match out.status.code() {
        Some(0) => {}
        Some(2) => panic!(
            "check_refs.py could not run (setup error):\n{stderr}\n\
             If a package is missing or at the wrong version, run `make setup-fpga`."
        ),
        _ => {
            // The full table is printed above; repeat the failing rows and the totals.
            let total = stdout.lines().last().unwrap_or("");
            let bad: Vec<&str> = stdout
                .lines()
                .filter(|l| l.contains("unexplained:") || l.contains("inexact-flag incons"))
                .filter(|l| *l != total)
                .chain([total])
                .collect();
            let errors: Vec<&str> = stderr.lines().filter(|l| !l.starts_with('[')).collect();
            panic!(
                "golden model disagrees with ml_dtypes / gfloat beyond the documented classes \
                 (status {:?}):\n{}\n{}",
                out.status,
                bad.join("\n"),
                errors.join("\n")
            )
        }
    }

    // The summary must describe a real run: many vectors, nothing unexplained.
    let summary = std::fs::read_to_string(&json).expect("check_refs.py wrote no JSON summary");
    let _ = std::fs::remove_file(&json);
    let v: serde_json::Value = serde_json::from_str(&summary).expect("summary is JSON");
    assert_eq!(v["unexplained"], 0, "{summary}");
    assert_eq!(v["inexact_inconsistent"], 0, "{summary}");
    let vectors = v["vectors"].as_u64().expect("vectors count");
    assert!(vectors > 50_000_000, "only {vectors} vectors compared");
    let rows = v["rows"].as_array().expect("rows");
    for reference in ["ml_dtypes", "gfloat"] {
        assert!(
            rows.iter()
                .any(|r| r["ref"] == reference && r["vectors"].as_u64() > Some(0)),
            "no {reference} comparison ran"
        );
    }
}
