//! Batch commands: `project`, `mul`, `add`, `fma`, `dot` and `eval` (any unit) read one hex
//! vector per line on stdin and write one hex result per line on stdout, so that millions of
//! vectors can be piped through.

use crate::args::CliError;
use golden::{Flags, Format};
use std::io::{BufRead, BufWriter, Read, Write};

/// Output options of batch commands.
#[derive(Clone, Copy, Debug)]
pub struct OutOpts {
    /// Append the flags nibble (`{invalid, overflow, underflow, inexact}`) as a second column.
    pub flags: bool,
    /// One JSON object per line instead of hex.
    pub json: bool,
}

/// One operand column of an input line.
#[derive(Clone, Debug)]
pub struct Column {
    /// Name used in error messages.
    pub name: String,
    /// Width in bits (values must fit).
    pub bits: u32,
    /// Description of the format for error messages.
    pub what: String,
}

impl Column {
    /// A column holding a code of `f`.
    pub fn of(name: impl Into<String>, f: &Format) -> Column {
        Column {
            name: name.into(),
            bits: f.k,
            what: format!("{}-bit {}", f.k, f.name()),
        }
    }
}

fn hex_digits(bits: u32) -> usize {
    bits.div_ceil(4) as usize
}

/// Runs a batch: parses each line into `cols.len()` values, evaluates `op`, and writes the
/// result code of `out_fmt`. Blank lines and `#` comments are skipped.
pub fn run<R: BufRead, W: Write>(
    input: R,
    output: W,
    cols: &[Column],
    out_fmt: &Format,
    opts: OutOpts,
    mut op: impl FnMut(&[u32]) -> (u32, Flags),
) -> Result<u64, CliError> {
    let mut w = BufWriter::with_capacity(1 << 16, output);
    let width = hex_digits(out_fmt.k);
    let n = each_vector(input, cols, |vals| {
        let (r, fl) = op(vals);
        if opts.json {
            let d = out_fmt.decode(r);
            writeln!(
                w,
                "{{\"result\":\"0x{r:0width$x}\",\"flags\":\"{fl}\",\"value\":\"{}\"}}",
                d.to_hex_float()
            )
        } else if opts.flags {
            writeln!(w, "{r:0width$x} {:x}", fl.0)
        } else {
            writeln!(w, "{r:0width$x}")
        }
    })?;
    w.flush()?;
    Ok(n)
}

/// Runs a batch of any unit: each line holds the values of the input columns `cols`, `op`
/// gives the values of the output columns `outs` (name, width), written as hex fields (or
/// one JSON object per line naming each output).
pub fn run_ports<R: BufRead, W: Write>(
    input: R,
    output: W,
    cols: &[Column],
    outs: &[(String, u32)],
    json: bool,
    mut op: impl FnMut(&[u32]) -> Vec<u64>,
) -> Result<u64, CliError> {
    let mut w = BufWriter::with_capacity(1 << 16, output);
    let n = each_vector(input, cols, |vals| {
        let v = op(vals);
        let fields: Vec<String> = outs
            .iter()
            .zip(&v)
            .map(|((name, bits), x)| {
                let d = hex_digits(*bits);
                if json {
                    format!("\"{name}\":\"0x{x:0d$x}\"")
                } else {
                    format!("{x:0d$x}")
                }
            })
            .collect();
        if json {
            writeln!(w, "{{{}}}", fields.join(","))
        } else {
            writeln!(w, "{}", fields.join(" "))
        }
    })?;
    w.flush()?;
    Ok(n)
}

/// Parses each line of `input` into `cols.len()` values and hands them to `f`; blank lines
/// and `#` comments are skipped. Returns the number of vectors.
fn each_vector<R: BufRead>(
    input: R,
    cols: &[Column],
    mut f: impl FnMut(&[u32]) -> std::io::Result<()>,
) -> Result<u64, CliError> {
    let mut vals = vec![0u32; cols.len()];
    let mut n = 0u64;
    let mut raw: Vec<u8> = Vec::with_capacity(256);
    let mut input = input;
    let mut lineno = 0u64;
    loop {
        raw.clear();
        // At most MAX_LINE + 1 bytes of one line are ever held in memory.
        let got = (&mut input)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut raw)
            .map_err(|e| read_error(e, lineno + 1))?;
        if got == 0 {
            break;
        }
        lineno += 1;
        if raw.len() > MAX_LINE && raw.last() != Some(&b'\n') {
            return Err(CliError::usage(format!(
                "line {lineno}: longer than {MAX_LINE} bytes ('{}…'); write one vector per line",
                excerpt(&String::from_utf8_lossy(&raw[..raw.len().min(80)]))
            )));
        }
        let text = std::str::from_utf8(&raw).map_err(|e| {
            CliError::usage(format!(
                "line {lineno}: not text (invalid UTF-8 at byte {}); input lines are hex fields like '{}'",
                e.valid_up_to() + 1,
                names(cols)
            ))
        })?;
        let line = text.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut count = 0usize;
        for (i, field) in line.split_ascii_whitespace().enumerate() {
            let Some(col) = cols.get(i) else {
                return Err(CliError::usage(format!(
                    "line {lineno}: too many fields in '{}'; expected '{}'",
                    excerpt(line),
                    names(cols)
                )));
            };
            vals[i] = parse_field(field, col, lineno)?;
            count += 1;
        }
        if count < cols.len() {
            return Err(CliError::usage(format!(
                "line {lineno}: expected {} hex field(s) '{}', got '{}'",
                cols.len(),
                names(cols),
                excerpt(line)
            )));
        }
        f(&vals)?;
        n += 1;
    }
    Ok(n)
}

/// Longest input line accepted (bytes, newline included).
pub const MAX_LINE: usize = 4096;

/// `s` for an error message: at most 80 characters, control characters escaped (a huge field
/// is never echoed whole, terminal escapes from the input never reach the terminal).
fn excerpt(s: &str) -> String {
    crate::args::shown(s)
}

fn read_error(e: std::io::Error, lineno: u64) -> CliError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CliError::broken_pipe()
    } else {
        CliError::failed(format!("line {lineno}: cannot read the input: {e}"))
    }
}

fn names(cols: &[Column]) -> String {
    cols.iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn parse_field(field: &str, col: &Column, lineno: u64) -> Result<u32, CliError> {
    let t = field
        .strip_prefix("0x")
        .or_else(|| field.strip_prefix("0X"))
        .unwrap_or(field);
    let v = u64::from_str_radix(t, 16).map_err(|_| {
        CliError::usage(format!(
            "line {lineno}: field {} = '{}' is not a hex number{}",
            col.name,
            excerpt(field),
            if t.len() > 16 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
                " that fits in 64 bits"
            } else {
                ""
            }
        ))
    })?;
    if col.bits < 64 && v >> col.bits != 0 {
        return Err(CliError::usage(format!(
            "line {lineno}: field {} = {} does not fit in the {} ({} bits)",
            col.name,
            excerpt(field),
            col.what,
            col.bits
        )));
    }
    Ok(v as u32)
}
