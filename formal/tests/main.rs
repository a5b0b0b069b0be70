//! The integration tests of the prover, compiled as one test binary: one link instead of one
//! per file, and one pool of test threads, so a slow test never leaves a core idle while
//! other files wait. Each `tests/<name>.rs` is the module `<name>`; run one file's tests with
//! `cargo test -p fp8gen-formal --test tests <name>::`. A new test file must be declared below
//! (`every_test_file_is_compiled` fails otherwise).

mod prove;
mod prove_dotmac;
mod reference;

/// Every `tests/*.rs` file is a module of this binary (`autotests = false` in Cargo.toml): a
/// file left out of the list above would never be compiled, and its tests would never run.
#[test]
fn every_test_file_is_compiled() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let declared: Vec<&str> = include_str!("main.rs")
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(module) = name.strip_suffix(".rs") {
            if module != "main" && !declared.contains(&module) {
                missing.push(name);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "test files not declared in tests/main.rs (their tests never run): {missing:?}"
    );
    assert!(
        declared.len() > 1,
        "the module list was not read: {declared:?}"
    );
}
