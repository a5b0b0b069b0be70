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
