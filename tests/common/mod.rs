//! Helpers shared by the command-line integration tests: run the `fp8gen` binary cargo built,
//! generate a core, find and edit its files.

#![allow(dead_code)]

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs `fp8gen args` and waits for it.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args(args)
        .output()
        .expect("run fp8gen")
}

/// `fp8gen args` with `input` on stdin.
pub fn run_stdin(args: &[&str], input: &str) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fp8gen");
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    c.wait_with_output().unwrap()
}

/// The process's stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The process's stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `fp8gen gen args -o dir`, which must succeed.
pub fn gen(dir: &Path, args: &[&str]) {
    let mut a = vec!["gen"];
    a.extend_from_slice(args);
    a.push("-o");
    a.push(dir.to_str().unwrap());
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The generated core's Verilog file in `dir`.
pub fn verilog_of(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "v"))
        .unwrap()
}

/// Rewrites `dir/manifest.json` through `f`.
pub fn edit_manifest(dir: &Path, f: impl FnOnce(&mut Value)) {
    let p = dir.join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    f(&mut m);
    std::fs::write(&p, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}
