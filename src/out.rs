//! Writing results to stdout: a closed pipe (`fp8gen … | head`) ends the program quietly
//! with exit code 0, as for any Unix filter; other write errors are reported. A stdout that
//! is not open at all (`fp8gen formats >&-`) is an error before anything runs (Rust's
//! standard library would drop every write to it silently), and while a simulation runs,
//! the core's own output (`$display`) goes to stderr so that stdout holds only fp8gen's
//! results.

use crate::args::CliError;
use std::io::Write;

/// Prints `s` and a newline to stdout.
pub fn println(s: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{s}")?;
    out.flush()?;
    Ok(())
}

/// Prints a line for a report that cannot return an error: a closed pipe ends the program
/// quietly (exit 0), any other write error with its message (exit 1).
pub fn line(s: &str) {
    if let Err(e) = println(s) {
        if e.code != 0 {
            eprintln!("error: {}", e.message);
        }
        std::process::exit(e.code);
    }
}

/// `println!` for reports: see [`line()`].
macro_rules! outln {
    ($($t:tt)*) => {
        crate::out::line(&format!($($t)*))
    };
}

#[cfg(unix)]
mod fd {
    use std::ffi::{c_int, c_void};
    extern "C" {
        pub fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
        pub fn dup(fd: c_int) -> c_int;
        pub fn dup2(from: c_int, to: c_int) -> c_int;
        pub fn close(fd: c_int) -> c_int;
        pub fn fflush(stream: *mut c_void) -> c_int;
    }
    /// `F_GETFD` (POSIX; 1 on every Unix fp8gen runs on).
    pub const F_GETFD: c_int = 1;
}

/// Whether fd 1 was closed when the process started. Rust's runtime reopens a closed fd 1 on
/// /dev/null before `main` (so that no file opened later becomes fd 1), which would turn a
/// closed stdout into a silent success; a constructor that runs before the runtime records
/// the state it found.
static STDOUT_WAS_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static RECORD_STDOUT: extern "C" fn() = record_stdout;

#[cfg(target_os = "linux")]
extern "C" fn record_stdout() {
    // SAFETY: F_GETFD reads the descriptor flags of fd 1 and changes nothing.
    if unsafe { fd::fcntl(1, fd::F_GETFD) } == -1 {
        STDOUT_WAS_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Fails when stdout (fd 1) was not open: results written there would vanish.
pub fn check_stdout_open() -> Result<(), CliError> {
    #[cfg(unix)]
    {
        // SAFETY: F_GETFD reads the descriptor flags of fd 1 and changes nothing.
        let closed_now = unsafe { fd::fcntl(1, fd::F_GETFD) } == -1;
        if closed_now || STDOUT_WAS_CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(CliError::failed(
                "stdout is closed; fp8gen writes its results there: redirect it to a file or to /dev/null instead of closing it",
            ));
        }
    }
    Ok(())
}

/// While alive, fd 1 is a copy of fd 2: whatever a simulated core prints (`$display`, which
/// Verilator writes with C `printf`) lands on stderr, never in fp8gen's stdout results.
#[derive(Debug)]
pub struct CoreOutputToStderr {
    #[cfg(unix)]
    saved: std::ffi::c_int,
}

impl CoreOutputToStderr {
    /// Points fd 1 at stderr (restored on drop).
    pub fn new() -> Result<Self, CliError> {
        std::io::stdout().flush()?;
        #[cfg(unix)]
        {
            // SAFETY: dup/dup2 on the process's own standard descriptors; the saved copy is
            // restored and closed in `drop`.
            let saved = unsafe { fd::dup(1) };
            if saved < 0 || unsafe { fd::dup2(2, 1) } < 0 {
                let e = std::io::Error::last_os_error();
                if saved >= 0 {
                    // SAFETY: `saved` is the descriptor dup returned above.
                    unsafe { fd::close(saved) };
                }
                return Err(CliError::failed(format!(
                    "cannot send the core's own output to stderr: {e}"
                )));
            }
            Ok(CoreOutputToStderr { saved })
        }
        #[cfg(not(unix))]
        Ok(CoreOutputToStderr {})
    }
}

impl Drop for CoreOutputToStderr {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: flush C stdio (the model's buffered printf output) while fd 1 is still
        // stderr, then put the saved stdout back.
        unsafe {
            fd::fflush(std::ptr::null_mut());
            fd::dup2(self.saved, 1);
            fd::close(self.saved);
        }
    }
}
