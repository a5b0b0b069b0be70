//! Errors of the simulation layer: missing tools, failed builds, bad port lists, bad buffers.
//!
//! Every variant renders as a message that names what went wrong and how to fix it.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Result alias of the `sim` crate.
pub type Result<T, E = SimError> = std::result::Result<T, E>;

/// What can go wrong while building, loading or driving a Verilated core.
#[derive(Debug)]
pub enum SimError {
    /// No `verilator` executable was found.
    VerilatorMissing {
        /// Where we looked (the `FP8GEN_VERILATOR` value or `PATH`).
        searched: String,
    },
    /// `verilator` exists but is unusable (version too old, broken install, ...).
    VerilatorUnusable {
        /// The executable that was tried.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
    /// No C++ compiler was found.
    CompilerMissing {
        /// The candidates that were tried.
        tried: Vec<String>,
    },
    /// The port list / core description is inconsistent.
    InvalidSpec(String),
    /// `verilator --cc` rejected the design.
    Verilator {
        /// The command line that failed.
        command: String,
        /// The build directory, kept for inspection.
        build_dir: PathBuf,
        /// The first errors and the last lines of Verilator's output.
        stderr_tail: String,
    },
    /// The C++ compiler or linker failed on the generated model.
    Compile {
        /// The command line that failed.
        command: String,
        /// The build directory, kept for inspection.
        build_dir: PathBuf,
        /// The first errors and the last lines of the compiler's output.
        stderr_tail: String,
    },
    /// A file-system operation failed.
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: io::Error,
    },
    /// The shared library could not be loaded or lacks the harness symbols.
    Load {
        /// The library path.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },
    /// The simulated model stopped on a fatal error (`$stop`, assertion, out of memory).
    Runtime(String),
    /// A pipelined core broke its handshake (`valid_o` did not follow `valid_i` with the declared latency).
    Protocol(String),
    /// A caller passed buffers of the wrong size or an impossible option.
    Usage(String),
}

impl SimError {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        SimError::Io {
            context: context.into(),
            source,
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::VerilatorMissing { searched } => write!(
                f,
                "verilator not found ({searched}); install it with `apt-get install verilator` \
                 (or run `scripts/setup.sh`), or point FP8GEN_VERILATOR at a verilator executable"
            ),
            SimError::VerilatorUnusable { path, reason } => write!(
                f,
                "verilator at {} is unusable: {reason}; install Verilator >= 5.0 with \
                 `apt-get install verilator` (or `scripts/setup.sh`), or set FP8GEN_VERILATOR",
                path.display()
            ),
            SimError::CompilerMissing { tried } => write!(
                f,
                "no C++ compiler found (tried {}); install one with `apt-get install g++` \
                 or set CXX",
                tried.join(", ")
            ),
            SimError::InvalidSpec(msg) => write!(f, "invalid core description: {msg}"),
            SimError::Verilator {
                command,
                build_dir,
                stderr_tail,
            } => write!(
                f,
                "verilator failed (build dir {}):\n  $ {command}\n{stderr_tail}",
                build_dir.display()
            ),
            SimError::Compile {
                command,
                build_dir,
                stderr_tail,
            } => write!(
                f,
                "C++ build of the Verilated model failed (build dir {}):\n  $ {command}\n{stderr_tail}",
                build_dir.display()
            ),
            SimError::Io { context, source } => write!(f, "{context}: {source}"),
            SimError::Load { path, message } => write!(
                f,
                "cannot load simulation model {}: {message}; run `fp8gen cache clean` to rebuild every model",
                path.display()
            ),
            SimError::Runtime(msg) => write!(f, "simulation stopped: {msg}"),
            SimError::Protocol(msg) => write!(f, "pipeline handshake violated: {msg}"),
            SimError::Usage(msg) => write!(f, "{msg}"),
        }
    }
}

impl std::error::Error for SimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SimError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The last `max_lines` lines of a tool's output, for error messages.
pub(crate) fn tail(text: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(max_lines);
    lines[start..].join("\n")
}

/// The part of a tool's output a user needs: the first errors (lines starting with `%Error`
/// or containing `error:`, each with the two lines after it, at most `max_errors` of them:
/// the first error is usually the real one), then the last lines. Falls back to the tail.
pub(crate) fn error_excerpt(text: &str, max_errors: usize, tail_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let is_err = |l: &str| l.starts_with("%Error") || l.contains("error:");
    let mut keep = vec![false; lines.len()];
    let mut found = 0;
    for (i, l) in lines.iter().enumerate() {
        if found < max_errors && is_err(l) {
            found += 1;
            for k in keep.iter_mut().skip(i).take(3) {
                *k = true;
            }
        }
    }
    if found == 0 {
        return tail(text, tail_lines);
    }
    let start = lines.len().saturating_sub(tail_lines);
    let mut out = Vec::new();
    let mut gap = false;
    for (i, l) in lines.iter().enumerate() {
        if keep[i] || i >= start {
            if gap && !out.is_empty() {
                out.push("  [...]");
            }
            gap = false;
            out.push(l);
        } else {
            gap = true;
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_keeps_the_first_error_and_the_tail() {
        let mut text = String::from("%Warning-WIDTH: a\n%Error: core.v:3: syntax error\n  here\n");
        for i in 0..100 {
            text.push_str(&format!("noise {i}\n"));
        }
        text.push_str("%Error: Exiting due to 1 error(s)\n");
        let e = error_excerpt(&text, 10, 5);
        assert!(
            e.starts_with("%Error: core.v:3: syntax error\n  here\n"),
            "{e}"
        );
        assert!(e.contains("[...]"), "{e}");
        assert!(e.ends_with("%Error: Exiting due to 1 error(s)"), "{e}");
        assert!(!e.contains("noise 50"), "{e}");
        assert_eq!(error_excerpt("a\nb", 10, 1), "b");
    }
}
