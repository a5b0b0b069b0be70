//! `fp8gen add`: "x y" hex pairs from stdin → `x + y` (or `x − y` with `--sub`), exact sum,
//! one rounding (`golden::add`), one hex result per line like the `mul` batch command.

use crate::args::{CliError, FormatArgs, ModeArgs};
use crate::batch;

/// Runs the batch: formats x = `format`, y = `format_y` (default x), result `out_format`
/// (default x).
pub fn run(
    format: &FormatArgs,
    format_y: Option<String>,
    out_format: Option<String>,
    modes: &ModeArgs,
    sub: bool,
    out: batch::OutOpts,
) -> Result<(), CliError> {
    let fx = format.resolve()?;
    let fy = crate::opt_named("--format-y", format_y, fx)?;
    let fr = crate::opt_named("--out-format", out_format, fx)?;
    let spec = modes.spec()?;
    let mut cols = crate::operand_columns(&fx, &fy, None);
    crate::add_random_column(&mut cols, &spec);
    let stdin = std::io::stdin().lock();
    let w = std::io::stdout().lock();
    batch::run(stdin, w, &cols, &fr, out, |v| {
        golden::add(&fx, v[0], &fy, v[1], sub, &fr, &spec, crate::rnd(v, 2))
    })?;
    Ok(())
}
