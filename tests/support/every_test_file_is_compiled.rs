// Included by the `tests/main.rs` of every crate with one integration-test binary (the
// workspace root, golden, rtl-gen, formal): `autotests = false` in their Cargo.toml, so a
// `tests/*.rs` file left out of main.rs's `mod` list would never be compiled, and its tests
// would never run.

/// Every `tests/*.rs` file is a module of this binary, and every module is a file or a
/// directory of `tests/` (so the list was read).
#[test]
fn every_test_file_is_compiled() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let declared: Vec<&str> = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/main.rs"))
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
    assert!(!declared.is_empty(), "no module list in tests/main.rs");
    for m in &declared {
        assert!(
            dir.join(format!("{m}.rs")).is_file() || dir.join(m).join("mod.rs").is_file(),
            "tests/main.rs declares `{m}`, which is neither tests/{m}.rs nor tests/{m}/mod.rs"
        );
    }
}
