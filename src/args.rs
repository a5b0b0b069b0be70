//! Command-line pieces shared by subcommands: format selection and rounding options.

use clap::Args;
use golden::{Format, Rounding, Saturation, Spec, Specials, Tininess};
pub use iface::shown;
use std::path::Path;

/// An error for the user: what is wrong and how to fix it.
#[derive(Debug)]
pub struct CliError {
    /// Message printed after `error: `.
    pub message: String,
    /// Process exit code.
    pub code: i32,
}

impl CliError {
    /// A usage error (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: 2,
        }
    }

    /// A failure while running (exit code 1).
    pub fn failed(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: 1,
        }
    }
}

impl CliError {
    /// The reader of our output went away (`| head`): stop quietly with exit code 0.
    pub fn broken_pipe() -> Self {
        CliError {
            message: String::new(),
            code: 0,
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::broken_pipe()
        } else {
            CliError::failed(format!("I/O error: {e}"))
        }
    }
}

impl From<golden::FormatError> for CliError {
    fn from(e: golden::FormatError) -> Self {
        CliError::usage(e.to_string())
    }
}

/// Selects the main format: a preset / P3109 name, or a custom format from its fields.
#[derive(Args, Debug, Clone, Default)]
pub struct FormatArgs {
    /// Format name: a preset (e4m3, e5m2, e4m3fnuz, …, see `fp8gen formats`),
    /// binary{K}p{P}{s|u}{e|f}, or a custom name k{K}p{P}b{B}{s|u}-{family}.
    #[arg(long, short = 'f')]
    pub format: Option<String>,
    /// Custom format: total bits K (2..=16).
    #[arg(long)]
    pub k: Option<u32>,
    /// Custom format: precision P including the hidden bit.
    #[arg(long)]
    pub p: Option<u32>,
    /// Exponent bias (default: the family's; overrides a preset's bias).
    #[arg(long, allow_hyphen_values = true)]
    pub bias: Option<i32>,
    /// Custom format: sign-magnitude (default).
    #[arg(long, conflicts_with = "unsigned")]
    pub signed: bool,
    /// Custom format: unsigned.
    #[arg(long)]
    pub unsigned: bool,
    /// Custom format: NaN/Inf family: ieee, fn, fnuz, p3109-finite, p3109-extended, nonan, e8m0.
    #[arg(long)]
    pub specials: Option<String>,
}

impl FormatArgs {
    /// Resolves to a validated format.
    pub fn resolve(&self) -> Result<Format, CliError> {
        let custom = self.k.is_some() || self.p.is_some() || self.specials.is_some();
        match (&self.format, custom) {
            (Some(_), true) => Err(CliError::usage(
                "give either --format NAME or a custom format (--k, --p, --specials), not both; --bias may adjust a named format",
            )),
            (Some(name), false) => {
                let f = Format::parse(name)?;
                if self.signed || self.unsigned {
                    return Err(CliError::usage(
                        "--signed/--unsigned describe a custom format; a named format fixes its signedness",
                    ));
                }
                match self.bias {
                    Some(b) => Ok(Format::new(f.k, f.p, b, f.signed, f.specials)?),
                    None => Ok(f),
                }
            }
            (None, true) => {
                let k = self.k.ok_or_else(|| {
                    CliError::usage("invalid format field `k`: a custom format needs --k (total bits, 2..=16)")
                })?;
                let p = self.p.ok_or_else(|| {
                    CliError::usage("invalid format field `p`: a custom format needs --p (precision including the hidden bit)")
                })?;
                let specials = match &self.specials {
                    Some(s) => Specials::parse(s)?,
                    None => {
                        return Err(CliError::usage(
                            "invalid format field `specials`: a custom format needs --specials (ieee, fn, fnuz, p3109-finite, p3109-extended, nonan, e8m0)",
                        ))
                    }
                };
                let signed = !self.unsigned;
                let bias = self
                    .bias
                    .unwrap_or_else(|| Format::default_bias(k, p, signed, specials));
                Ok(Format::new(k, p, bias, signed, specials)?)
            }
            (None, false) => Err(CliError::usage(
                "no format given: use --format NAME (e.g. --format e4m3; `fp8gen formats` lists them) or --k/--p/--specials",
            )),
        }
    }
}

/// Parses a secondary format given by name (`--format-y`, `--out-format`).
pub fn parse_named(flag: &str, name: &str) -> Result<Format, CliError> {
    Format::parse(name).map_err(|e| CliError::usage(format!("{flag}: {}", e.message)))
}

/// `--scale-format NAME`: a format that is a power-of-two block scale (the one check of
/// `gen` and the batch commands).
pub fn scale_named(name: &str) -> Result<Format, CliError> {
    let f = parse_named("--scale-format", name)?;
    golden::Scale::check_format(&f).map_err(|e| CliError::usage(format!("--scale-format: {e}")))?;
    Ok(f)
}

/// Rounding, saturation and projection options.
#[derive(Args, Debug, Clone)]
pub struct ModeArgs {
    /// Rounding mode: rne, rna, rtp, rtn, rtz, rto, sra, srb, src.
    #[arg(long, short = 'r', default_value = "rne")]
    pub rounding: String,
    /// Saturation mode: satfinite, satpropagate, satnone, satnone-v4.
    #[arg(long, short = 's', default_value = "satnone")]
    pub saturation: String,
    /// Random bits N for stochastic rounding (the value R is an extra hex column per line).
    #[arg(long, default_value_t = 8)]
    pub sr_bits: u8,
    /// Tininess detection for the underflow flag: after (default) or before rounding.
    #[arg(long, default_value = "after")]
    pub tininess: String,
    /// Code written for NaN into a format without NaN (default 0 = +0; `invalid` is raised).
    #[arg(long, value_parser = parse_hex_u32, default_value = "0")]
    pub nan_code: u32,
    /// Round-to-odd on overflow under satnone: p3109 (±Inf, P3109 §4.7.5) or ieee (the
    /// largest finite value, as SoftFloat's round_odd).
    #[arg(long, default_value = "p3109")]
    pub rto_overflow: String,
}

impl ModeArgs {
    /// The projection spec.
    pub fn spec(&self) -> Result<Spec, CliError> {
        let rounding = Rounding::parse(&self.rounding, self.sr_bits)
            .map_err(|e| CliError::usage(format!("--rounding: {e}")))?;
        let saturation = Saturation::parse(&self.saturation)
            .map_err(|e| CliError::usage(format!("--saturation: {e}")))?;
        let tininess = match self.tininess.to_ascii_lowercase().as_str() {
            "after" => Tininess::AfterRounding,
            "before" => Tininess::BeforeRounding,
            t => {
                return Err(CliError::usage(format!(
                    "--tininess: unknown value '{t}'; expected after or before"
                )))
            }
        };
        Ok(Spec {
            rounding,
            saturation,
            tininess,
            nonan_code: self.nan_code,
            rto_overflow: golden::RtoOverflow::parse(&self.rto_overflow)
                .map_err(|e| CliError::usage(format!("--rto-overflow: {e}")))?,
        })
    }
}

/// Parses hex with or without `0x`.
pub fn parse_hex_u32(s: &str) -> Result<u32, String> {
    let t = s.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    u32::from_str_radix(t, 16).map_err(|_| format!("'{s}' is not a hex number"))
}

/// Parses a vector count: `1000000`, `1_000_000`, `1e9`, `2^32`.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let bad = || format!("'{s}' is not a count; write e.g. 1000000, 1e9 or 2^32");
    if let Some((b, e)) = t.split_once('^') {
        let b: u64 = b.parse().map_err(|_| bad())?;
        let e: u32 = e.parse().map_err(|_| bad())?;
        return b
            .checked_pow(e)
            .ok_or_else(|| format!("'{s}' does not fit in 64 bits"));
    }
    if let Some((m, e)) = t.split_once(['e', 'E']) {
        let m: u64 = m.parse().map_err(|_| bad())?;
        let e: u32 = e.parse().map_err(|_| bad())?;
        return 10u64
            .checked_pow(e)
            .and_then(|p| p.checked_mul(m))
            .ok_or_else(|| format!("'{s}' does not fit in 64 bits"));
    }
    t.parse().map_err(|_| bad())
}

/// A file `flag` names can be written: an existing regular file opens for writing (nothing is
/// changed), a new one is created and removed again.
pub fn check_writable(flag: &str, p: &Path) -> Result<(), CliError> {
    let bad = |why: String| {
        CliError::usage(format!(
            "{flag} {}: {why}; give a path in a directory you can write",
            crate::args::shown(&p.display().to_string())
        ))
    };
    if p.is_dir() {
        return Err(bad("is a directory".into()));
    }
    if p.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(p)
            .map_err(|e| bad(format!("cannot be written ({e})")))?;
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
        .map_err(|e| bad(format!("cannot be created ({e})")))?;
    let _ = std::fs::remove_file(p);
    Ok(())
}

/// A prover's `--timeout`: at least one second (0 would end every proof without a verdict).
pub fn check_timeout(t: u64) -> Result<u64, CliError> {
    if t == 0 {
        return Err(CliError::usage(
            "--timeout 0 gives the solver no time, so no proof could end with a verdict; give the limit in seconds (default 600)",
        ));
    }
    Ok(t)
}
