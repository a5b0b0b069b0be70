//! Detection of the external tools: Verilator (≥ 5.0) and a C++ compiler.
//!
//! Verilator is found by the `tools` crate ([`::tools::find`]: `FP8GEN_VERILATOR` (a path or
//! a program on `PATH`), the project's `.venv/bin`, then `PATH`); `CXX` overrides the C++
//! compiler (`c++`, `g++`, `clang++` are tried in that order). The compiler is invoked
//! directly (no `cc` crate at run time): the flags are few and fixed, see `builder.rs`.

use std::env;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use ::tools::{find_in_path, is_executable};

use crate::error::{Result, SimError};

/// The tools needed to turn Verilog into a loadable model.
#[derive(Clone, Debug)]
pub struct Toolchain {
    /// The `verilator` executable.
    pub verilator: PathBuf,
    /// Its version line, e.g. `Verilator 5.006 2023-01-22 rev (Debian 5.006-3)`.
    pub verilator_version: String,
    /// Parsed (major, minor) version, e.g. (5, 6).
    pub verilator_semver: (u32, u32),
    /// `VERILATOR_ROOT`: the directory holding `include/verilated.cpp`.
    pub verilator_root: PathBuf,
    /// The C++ compiler program.
    pub cxx: PathBuf,
    /// Extra leading arguments from `CXX` (e.g. `ccache g++` → program `ccache`, args `[g++]`).
    pub cxx_prefix_args: Vec<String>,
    /// First line of `cxx --version`.
    pub cxx_version: String,
}

impl Toolchain {
    /// Finds Verilator and a C++ compiler, or explains what to install.
    pub fn detect() -> Result<Toolchain> {
        let verilator = ::tools::find(::tools::Tool::Verilator).map_err(|e| match e {
            ::tools::ToolError::BadOverride(m) => SimError::VerilatorMissing { searched: m },
            ::tools::ToolError::Missing { searched, .. } => SimError::VerilatorMissing {
                searched: format!("searched {}", searched.join(", ")),
            },
        })?;
        Self::detect_at(&verilator)
    }

    /// Uses the given `verilator` executable (and finds a C++ compiler).
    pub fn detect_at(verilator: &Path) -> Result<Toolchain> {
        if !is_executable(verilator) {
            return Err(SimError::VerilatorMissing {
                searched: format!("{} is not an executable file", verilator.display()),
            });
        }
        let verilator = verilator.to_path_buf();
        let unusable = |reason: String| SimError::VerilatorUnusable {
            path: verilator.clone(),
            reason,
        };
        let out = Command::new(&verilator)
            .arg("--version")
            .output()
            .map_err(|e| unusable(format!("cannot run it: {e}")))?;
        let version_text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() {
            return Err(unusable(format!(
                "`--version` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let semver = parse_version(&version_text)
            .ok_or_else(|| unusable(format!("cannot parse version from `{version_text}`")))?;
        if semver.0 < 5 {
            return Err(unusable(format!(
                "version {}.{:03} is too old",
                semver.0, semver.1
            )));
        }
        let out = Command::new(&verilator)
            .args(["--getenv", "VERILATOR_ROOT"])
            .output()
            .map_err(|e| unusable(format!("cannot run it: {e}")))?;
        let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if !root.join("include").join("verilated.cpp").is_file() {
            return Err(unusable(format!(
                "its runtime sources are missing ({} has no include/verilated.cpp)",
                root.display()
            )));
        }

        let (cxx, cxx_prefix_args, tried) = find_cxx();
        let cxx = cxx.ok_or(SimError::CompilerMissing { tried })?;
        let out = Command::new(&cxx)
            .args(&cxx_prefix_args)
            .arg("--version")
            .output()
            .map_err(|e| SimError::CompilerMissing {
                tried: vec![format!("{} ({e})", cxx.display())],
            })?;
        let cxx_version = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string();

        Ok(Toolchain {
            verilator,
            verilator_version: version_text,
            verilator_semver: semver,
            verilator_root: root,
            cxx,
            cxx_prefix_args,
            cxx_version,
        })
    }

    /// Directory of Verilator's runtime sources and headers.
    pub fn include_dir(&self) -> PathBuf {
        self.verilator_root.join("include")
    }

    /// A `Command` running the C++ compiler (with any `CXX` prefix arguments).
    pub(crate) fn cxx_command(&self) -> Command {
        let mut c = Command::new(&self.cxx);
        c.args(&self.cxx_prefix_args);
        c
    }
}

/// Parses `Verilator 5.006 ...` into (5, 6).
pub(crate) fn parse_version(text: &str) -> Option<(u32, u32)> {
    let word = text.split_whitespace().nth(1)?;
    let (maj, min) = word.split_once('.')?;
    let min: String = min.chars().take_while(|c| c.is_ascii_digit()).collect();
    Some((maj.parse().ok()?, min.parse().ok()?))
}

fn find_cxx() -> (Option<PathBuf>, Vec<String>, Vec<String>) {
    if let Ok(cxx) = env::var("CXX") {
        let mut words = cxx.split_whitespace().map(str::to_string);
        if let Some(first) = words.next() {
            let rest: Vec<String> = words.collect();
            let p = PathBuf::from(&first);
            let found = if p.components().count() > 1 {
                is_executable(&p).then_some(p)
            } else {
                find_in_path(OsStr::new(&first))
            };
            return (found, rest, vec![format!("CXX={cxx}")]);
        }
    }
    let candidates = ["c++", "g++", "clang++"];
    for c in candidates {
        if let Some(p) = find_in_path(OsStr::new(c)) {
            return (Some(p), Vec::new(), Vec::new());
        }
    }
    (
        None,
        Vec::new(),
        candidates.iter().map(|s| s.to_string()).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_debian_version_line() {
        assert_eq!(
            parse_version("Verilator 5.006 2023-01-22 rev (Debian 5.006-3)"),
            Some((5, 6))
        );
        assert_eq!(parse_version("Verilator 4.228 devel"), Some((4, 228)));
        assert_eq!(parse_version("garbage"), None);
    }
}
