//! Writing results to stdout: a closed pipe (`fp8gen … | head`) ends the program quietly
//! with exit code 0, as for any Unix filter; other write errors are reported.

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

/// `println!` for reports: see [`line`].
macro_rules! outln {
    ($($t:tt)*) => {
        crate::out::line(&format!($($t)*))
    };
}
