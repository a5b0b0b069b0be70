//! Invocation of the external FPGA tools; finding them is the `tools` crate's
//! ([`tools::find`]: the `FP8GEN_*` override, the project's `.venv/bin`, then `PATH`).
//!
//! Every tool is run with its working directory set to the build directory and relative
//! arguments only, so the YoWASP (WASI-sandboxed) and native builds behave the same.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::FpgaError;

pub use ::tools::{env_var_for, last_lines, venv_bin_dirs, version, Tool};

/// Finds the executable for `tool` ([`tools::find`]), or explains where it looked.
pub fn find(tool: Tool) -> Result<PathBuf, FpgaError> {
    ::tools::find(tool).map_err(|e| match e {
        ::tools::ToolError::BadOverride(m) => FpgaError::BadRequest(m),
        ::tools::ToolError::Missing { tool, searched } => FpgaError::ToolMissing { tool, searched },
    })
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
