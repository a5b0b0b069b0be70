//! `fp8gen gen` and `fp8gen verify`: the command-line side (arguments, progress, printing).
//! Requests are built here from the options; everything else (the device under test, vector
//! spaces, golden models, the run loop, the summary) is the `verify` library crate.

use crate::args::{parse_named, CliError, FormatArgs};
use clap::Args;
use golden::{Format, Rounding, Saturation, Tininess};
use iface::{Role, Unit};
use rtl::{GenOptions, GenRequest, RoundingSel, SaturationSel};
use std::path::{Path, PathBuf};
use verify::space::Choice;
use verify::{Dut, Overrides, Plan, Report, VerifyError};

/// What to generate (shared by `gen`, `verify`, `synth`, `board` and `prove`).
#[derive(Args, Debug, Clone)]
pub struct GenArgs {
    #[arg(long, short = 'u', help = unit_help())]
    pub unit: String,
    #[command(flatten)]
    pub rest: GenRest,
}

impl GenArgs {
    /// The generation request.
    pub fn request(&self) -> Result<GenRequest, CliError> {
        self.rest.request(&self.unit)
    }
}

/// Everything of [`GenArgs`] but the unit. Options without a value on the command line are
/// `None`, so that `verify --from DIR` can tell a given option (which must agree with the
/// core) from a default.
#[derive(Args, Debug, Clone)]
pub struct GenRest {
    #[command(flatten)]
    pub format: FormatArgs,
    /// Format of y (mul/fma/mac; default: the format of x).
    #[arg(long)]
    pub format_y: Option<String>,
    /// Result format of mul (default: the format of x; may be binary32) and of dot (default
    /// binary32).
    #[arg(long)]
    pub out_format: Option<String>,
    /// dot: elements per operand, 1..=64 (ports x0_i … x{N-1}_i, y0_i …).
    #[arg(long = "n", value_name = "N")]
    pub dot_n: Option<u32>,
    /// Power-of-two block scales of this format (e8m0 for OCP MX, binary8p1uf for P3109):
    /// mul, fma, dot get ports sx_i, sy_i ((x·Sx)·(y·Sy)); project gets s_i and divides by
    /// it (P3109 §5.1.2, the MX quantizer).
    #[arg(long)]
    pub scale_format: Option<String>,
    /// Block scales in E8M0 (the same as --scale-format e8m0).
    #[arg(long)]
    pub scaled: bool,
    /// dot: add a binary32 addend z_i to the sum (one rounding).
    #[arg(long)]
    pub addend: bool,
    /// mac: the accumulator: `binary32` (default; one rounding per step, II = stages + 1)
    /// or `exact` (a fixed-point accumulator, one rounding on output, II = 1).
    #[arg(long)]
    pub acc: Option<String>,
    /// mac --acc exact: guard bits of the accumulator (2^N products of any magnitude sum
    /// without overflow; default 16).
    #[arg(long)]
    pub guard_bits: Option<u32>,
    /// mac: L interleaved binary32 accumulators (2..=16): a step every ⌈(stages+1)/L⌉
    /// cycles; `lane_o` says which accumulator a result belongs to.
    #[arg(long)]
    pub interleave: Option<u32>,
    /// Input format of project: binary32 (default), binary16 or bfloat16.
    #[arg(long)]
    pub in_format: Option<String>,
    /// Rounding mode (rne, rna, rtp, rtn, rtz, rto, sra, srb, src) or `dyn` for an `rm_i`
    /// port (default rne). With --from: the modes of the core's rm_i port to run (a
    /// comma-separated list).
    #[arg(long, short = 'r')]
    pub rounding: Option<String>,
    /// Saturation mode (satfinite, satpropagate, satnone, satnone-v4) or `dyn` for `sat_i`
    /// (default satnone). With --from: the modes of sat_i to run (comma-separated).
    #[arg(long, short = 's')]
    pub saturation: Option<String>,
    /// Random bits for stochastic rounding (0 with `--rounding dyn` = no stochastic modes).
    #[arg(long)]
    pub sr_bits: Option<u32>,
    /// Pipeline stages (default 0 = combinational).
    #[arg(long)]
    pub stages: Option<u32>,
    /// Flush subnormals to zero: fma/mac the binary32 addend and result, mul the operands and
    /// result.
    #[arg(long)]
    pub ftz: bool,
    /// mul: no flags_o port (FloPoCo's interface).
    #[arg(long)]
    pub no_flags: bool,
    /// Tininess detection: after (default) or before rounding.
    #[arg(long)]
    pub tininess: Option<String>,
    /// Code written for NaN into a format without NaN (hex, default 0).
    #[arg(long, value_parser = crate::args::parse_hex_u32)]
    pub nan_code: Option<u32>,
    /// add: subtract, r = x - y (`--sub`), or `--sub dyn` for a run-time `sub_i` port.
    #[arg(long, num_args = 0..=1, default_missing_value = "fixed", value_name = "dyn")]
    pub sub: Option<String>,
}

/// The help of `--unit`: every unit ([`Unit::ALL`]).
pub fn unit_help() -> String {
    format!("Unit: {}", Unit::list())
}

fn parse_unit(u: &str) -> Result<Unit, CliError> {
    Unit::parse(u).ok_or_else(|| {
        CliError::usage(format!(
            "--unit: unknown unit '{u}'; expected {}",
            Unit::list()
        ))
    })
}

fn parse_tininess(t: &str) -> Result<bool, CliError> {
    match t.to_ascii_lowercase().as_str() {
        "after" => Ok(false),
        "before" => Ok(true),
        t => Err(CliError::usage(format!(
            "--tininess: unknown value '{t}'; expected after or before"
        ))),
    }
}

impl GenRest {
    /// The generation request for `unit` (defaults applied).
    pub fn request(&self, unit: &str) -> Result<GenRequest, CliError> {
        let unit = parse_unit(unit)?;
        let f = self.format.resolve()?;
        let fy = match &self.format_y {
            Some(n) => Some(parse_named("--format-y", n)?),
            None => None,
        };
        let fr = match &self.out_format {
            Some(n) => Some(parse_named("--out-format", n)?),
            None => None,
        };
        if !matches!(unit, Unit::Mul | Unit::Dot | Unit::Add) && fr.is_some() {
            return Err(CliError::usage(
                "--out-format applies to --unit mul, dot and add only (decode and fma/mac produce binary32, project produces --format)",
            ));
        }
        if unit != Unit::Dot && (self.dot_n.is_some() || self.addend) {
            return Err(CliError::usage("--n and --addend apply to --unit dot only"));
        }
        let scale = match (&self.scale_format, self.scaled) {
            (Some(n), _) => Some(crate::args::scale_named(n)?),
            (None, true) => Some(Format::E8M0),
            (None, false) => None,
        };
        if scale.is_some() && !matches!(unit, Unit::Project | Unit::Mul | Unit::Fma | Unit::Dot) {
            return Err(CliError::usage(
                "--scaled / --scale-format apply to --unit project, mul, fma and dot",
            ));
        }
        let acc_guard = match self.acc.as_deref().map(|a| a.to_ascii_lowercase()) {
            None if self.guard_bits.is_some() => {
                return Err(CliError::usage("--guard-bits applies to --acc exact only"))
            }
            None => 0,
            Some(a) if unit != Unit::Mac => {
                return Err(CliError::usage(format!(
                    "--acc {a} applies to --unit mac only"
                )))
            }
            Some(a) if a == "binary32" => {
                if self.guard_bits.is_some() {
                    return Err(CliError::usage("--guard-bits applies to --acc exact only"));
                }
                0
            }
            Some(a) if a == "exact" => match self.guard_bits {
                // acc_guard 0 means the binary32 accumulator: never a silent swap.
                Some(0) => {
                    return Err(CliError::usage(
                        "--guard-bits 0 is out of range; use 1..=32 (0 guard bits is no exact accumulator; --acc binary32 is the rounding one)",
                    ))
                }
                g => g.unwrap_or(golden::dot::DEFAULT_GUARD_BITS),
            },
            Some(a) => {
                return Err(CliError::usage(format!(
                    "--acc: unknown accumulator '{a}'; expected binary32 or exact"
                )))
            }
        };
        let dot = if unit == Unit::Dot {
            iface::DotShape {
                n: self.dot_n.ok_or_else(|| {
                    CliError::usage("--unit dot needs --n N, the number of elements (1..=64)")
                })?,
                addend: self.addend,
            }
        } else {
            iface::DotShape::default()
        };
        if unit != Unit::Project && self.in_format.is_some() {
            return Err(CliError::usage(
                "--in-format applies to --unit project only",
            ));
        }
        let formats = match unit {
            Unit::Decode => iface::Formats {
                x: f,
                y: None,
                r: Format::BINARY32,
                scale: None,
            },
            Unit::Project => {
                let inf = parse_named(
                    "--in-format",
                    self.in_format.as_deref().unwrap_or("binary32"),
                )?;
                iface::Formats {
                    x: inf,
                    y: None,
                    r: f,
                    scale,
                }
            }
            Unit::Mul => iface::Formats {
                x: f,
                y: Some(fy.unwrap_or(f)),
                r: fr.unwrap_or(f),
                scale,
            },
            Unit::Fma | Unit::Mac => iface::Formats {
                x: f,
                y: Some(fy.unwrap_or(f)),
                r: Format::BINARY32,
                scale,
            },
            Unit::Dot => iface::Formats {
                x: f,
                y: Some(fy.unwrap_or(f)),
                r: fr.unwrap_or(Format::BINARY32),
                scale,
            },
            Unit::Add => iface::Formats {
                x: f,
                y: Some(fy.unwrap_or(f)),
                r: fr.unwrap_or(f),
                scale,
            },
        };
        let r = self.rounding.as_deref().unwrap_or("rne");
        let (rounding, sr_bits) = if r.eq_ignore_ascii_case("dyn") {
            (RoundingSel::Dynamic, self.sr_bits.unwrap_or(0))
        } else {
            let n = self.sr_bits.unwrap_or(8);
            if n > 255 {
                return Err(CliError::usage(format!(
                    "--sr-bits {n} is out of range; stochastic rounding uses 1..=32 random bits"
                )));
            }
            let r = Rounding::parse(r, n as u8)
                .map_err(|e| CliError::usage(format!("--rounding: {e}")))?;
            (RoundingSel::Fixed(r), r.random_bits())
        };
        let s = self.saturation.as_deref().unwrap_or("satnone");
        let saturation = if s.eq_ignore_ascii_case("dyn") {
            SaturationSel::Dynamic
        } else {
            SaturationSel::Fixed(
                Saturation::parse(s).map_err(|e| CliError::usage(format!("--saturation: {e}")))?,
            )
        };
        let tb = match &self.tininess {
            Some(t) => parse_tininess(t)?,
            None => false,
        };
        let req = GenRequest {
            unit,
            formats,
            rounding,
            saturation,
            sr_bits,
            stages: self.stages.unwrap_or(0),
            options: GenOptions {
                tininess: if tb {
                    Tininess::BeforeRounding
                } else {
                    Tininess::AfterRounding
                },
                nonan_code: self.nan_code.unwrap_or(0),
                ftz: self.ftz,
                no_flags: self.no_flags,
                signaling_nan: false,
                dot,
                acc_guard,
                interleave: self.interleave.unwrap_or(0),
                add_op: match &self.sub {
                    None => rtl::units::add::AddOp::Add,
                    Some(_) if unit != Unit::Add => {
                        return Err(CliError::usage("--sub applies to --unit add only"))
                    }
                    Some(s) => rtl::units::add::AddOp::parse(s).map_err(CliError::usage)?,
                },
            },
        };
        rtl::validate(&req).map_err(|e| CliError::usage(e.to_string()))?;
        Ok(req)
    }

    /// The options given next to `--from DIR` (each must agree with the manifest).
    fn overrides(&self, signaling_nan: bool) -> Result<Overrides, CliError> {
        if self.dot_n.is_some() || self.scale_format.is_some() || self.scaled || self.addend {
            return Err(CliError::usage(
                "--n, --scale-format, --scaled and --addend describe a core to generate; with --from DIR the manifest gives them (\"dot\", formats.scale)",
            ));
        }
        if self.acc.is_some() || self.guard_bits.is_some() || self.interleave.is_some() {
            return Err(CliError::usage(
                "--acc, --guard-bits and --interleave describe a core to generate; with --from DIR the manifest's modes give the accumulator",
            ));
        }
        if self.sub.is_some() {
            return Err(CliError::usage(
                "--sub describes an add core to generate; with --from DIR the manifest (modes.subtract, a sub_i port) gives it",
            ));
        }
        let any_format = self.format.format.is_some()
            || self.format.k.is_some()
            || self.format.p.is_some()
            || self.format.specials.is_some()
            || self.format.bias.is_some();
        let named = |flag: &str, v: &Option<String>| -> Result<Option<Format>, CliError> {
            v.as_deref().map(|n| parse_named(flag, n)).transpose()
        };
        Ok(Overrides {
            format: if any_format {
                Some(self.format.resolve()?)
            } else {
                None
            },
            format_y: named("--format-y", &self.format_y)?,
            out_format: named("--out-format", &self.out_format)?,
            in_format: named("--in-format", &self.in_format)?,
            stages: self.stages,
            sr_bits: self.sr_bits,
            ftz: self.ftz,
            no_flags: self.no_flags,
            tininess_before: self.tininess.as_deref().map(parse_tininess).transpose()?,
            nan_code: self.nan_code,
            signaling_nan,
        })
    }
}

/// `fp8gen gen`.
pub fn gen(args: &GenArgs, out: &Path, force: bool, json: bool) -> Result<(), CliError> {
    let req = args.request()?;
    let core = rtl::generate(&req).map_err(|e| CliError::usage(e.to_string()))?;
    rtl::write_core_with_testbench(out, &core, &req, force).map_err(|e| match e {
        rtl::GenError::Io(..) | rtl::GenError::Internal(_) => CliError::failed(e.to_string()),
        _ => CliError::usage(e.to_string()),
    })?;
    if json {
        crate::out::println(core.manifest.to_json().trim_end())?;
    } else {
        crate::out::println(&format!(
            "wrote {}/{}.v, manifest.json, {}.core and its testbench {}_tb.sv (FuseSoC targets lint, sim): {} {}, latency {}, {} ports",
            out.display(),
            core.top,
            core.top,
            core.top,
            core.manifest.unit.name(),
            verify::format_desc(&req),
            core.manifest.latency,
            core.manifest.ports.len()
        ))?;
    }
    Ok(())
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

/// How `verify` runs.
#[derive(Args, Debug, Clone)]
pub struct VerifyArgs {
    /// Every input vector (every code pair for mul; every binary32 input for project; every
    /// random-bit value of a stochastic core when the space allows).
    #[arg(long, conflicts_with = "random")]
    pub exhaustive: bool,
    /// N random vectors per mode combination (mac: N cycles), e.g. 1e9.
    #[arg(long, value_parser = parse_count)]
    pub random: Option<u64>,
    /// Seed of every random choice (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run part i of n (0-based) of the space: `--shard 3/16`.
    #[arg(long)]
    pub shard: Option<String>,
    /// Check a core on disk (a directory with manifest.json and its Verilog) instead of
    /// generating one.
    #[arg(long)]
    pub from: Option<PathBuf>,
    /// Rounding modes of an rm_i port to run (comma-separated; default: all the core has).
    #[arg(long, value_delimiter = ',')]
    pub run_rounding: Vec<String>,
    /// Saturation modes of a sat_i port to run (comma-separated; default: all).
    #[arg(long, value_delimiter = ',')]
    pub run_saturation: Vec<String>,
    /// Outputs not to compare, by role (e.g. `--ignore flags`).
    #[arg(long, value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Small IEEE-style NaNs with a clear top trailing bit are signaling and raise invalid
    /// (IEEE 754 §6.2; CVFPU does this). For checking other cores.
    #[arg(long)]
    pub signaling_nan: bool,
    /// Counterexamples to keep and print (default 8).
    #[arg(long)]
    pub max_counterexamples: Option<usize>,
    /// Lanes per model evaluation (core instances side by side, 1..=256).
    #[arg(long)]
    pub lanes: Option<u32>,
    /// Worker threads (0 = one per core; with --prove: parallel solver processes).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Refuse runs estimated to take longer than this (hours, default 24).
    #[arg(long)]
    pub max_hours: Option<f64>,
    /// Where to write the VCD replay of the first counterexample (default
    /// fp8gen-counterexample.vcd; a given path is checked before the run).
    #[arg(long)]
    pub vcd: Option<PathBuf>,
    /// Print only the JSON summary.
    #[arg(long)]
    pub json: bool,
    /// With --from: prove the core equal to fp8gen's independent reference RTL on every input
    /// (yosys SAT) instead of simulating vectors.
    #[arg(long, requires = "from")]
    pub prove: bool,
    /// --prove: solver time limit in seconds (default 600).
    #[arg(long)]
    pub timeout: Option<u64>,
}

/// Where the VCD of a counterexample goes when --vcd is not given.
const DEFAULT_VCD: &str = "fp8gen-counterexample.vcd";

impl VerifyArgs {
    /// The VCD path: a given one must be writable now, not after an hour of simulation.
    fn vcd_path(&self) -> Result<PathBuf, CliError> {
        match &self.vcd {
            Some(p) => {
                check_writable("--vcd", p)?;
                Ok(p.clone())
            }
            None => Ok(PathBuf::from(DEFAULT_VCD)),
        }
    }
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

fn verr(e: VerifyError) -> CliError {
    match e {
        VerifyError::Usage(m) => CliError::usage(m),
        VerifyError::Failed(m) => CliError::failed(m),
    }
}

fn mode_list<T: PartialEq>(
    flag: &str,
    v: &[String],
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Option<Vec<T>>, CliError> {
    if v.is_empty() {
        return Ok(None);
    }
    let mut out: Vec<T> = Vec::new();
    for s in v {
        let m = parse(s.trim()).map_err(|e| CliError::usage(format!("{flag}: {e}")))?;
        if out.contains(&m) {
            return Err(CliError::usage(format!(
                "{flag}: '{}' is listed twice; list each mode once (it would run twice)",
                crate::args::shown(s.trim())
            )));
        }
        out.push(m);
    }
    Ok(Some(out))
}

/// `fp8gen verify`: `unit` and `gen` generate the core, or `v.from` names one on disk.
pub fn verify(unit: Option<&str>, gen: &GenRest, v: &VerifyArgs) -> Result<(), CliError> {
    let mut sel_r = v.run_rounding.clone();
    let mut sel_s = v.run_saturation.clone();
    let dut = match (&v.from, unit) {
        (Some(_), Some(_)) => return Err(CliError::usage(
            "give either --from DIR (a core on disk) or --unit/--format (generate one), not both",
        )),
        (Some(dir), None) => {
            // -r/-s next to --from select the modes to run on the core's mode ports.
            for (opt, sel) in [(&gen.rounding, &mut sel_r), (&gen.saturation, &mut sel_s)] {
                if let Some(list) = opt {
                    sel.extend(list.split(',').map(|s| s.trim().to_string()));
                }
            }
            Dut::load(dir, &gen.overrides(v.signaling_nan)?).map_err(verr)?
        }
        (None, Some(u)) => {
            if v.signaling_nan {
                return Err(CliError::usage(
                    "--signaling-nan describes another core's NaN semantics; fp8gen's cores treat every small-format NaN as quiet. Use it with --from DIR",
                ));
            }
            Dut::generate(&gen.request(u)?).map_err(verr)?
        }
        (None, None) => {
            return Err(CliError::usage(
                "verify needs a core: --unit/--format to generate one, or --from DIR",
            ))
        }
    };
    if v.prove {
        return prove(&dut, v);
    }
    if v.timeout.is_some() {
        return Err(CliError::usage(
            "--timeout limits the solver of --prove; a simulation run is bounded by --max-hours (its estimate) instead",
        ));
    }
    let max_hours = v.max_hours.unwrap_or(24.0);
    if !(max_hours.is_finite() && max_hours > 0.0) {
        return Err(CliError::usage(format!(
            "--max-hours {max_hours}: give a positive number of hours (default 24)"
        )));
    }
    let vcd = v.vcd_path()?;
    let shard = match &v.shard {
        Some(s) => s
            .parse::<sim::Shard>()
            .map_err(|e| CliError::usage(format!("--shard: {e}")))?,
        None => sim::Shard::default(),
    };
    let ignore = v
        .ignore
        .iter()
        .map(|r| {
            Role::parse(r.trim()).ok_or_else(|| {
                CliError::usage(format!(
                    "--ignore: unknown role '{r}'; outputs have roles result, flags, class, sign, exponent, significand"
                ))
            })
        })
        .collect::<Result<Vec<Role>, CliError>>()?;
    let plan = Plan {
        choice: match (v.exhaustive, v.random) {
            (true, _) => Choice::Exhaustive,
            (false, Some(n)) => Choice::Random(n),
            (false, None) => Choice::Default,
        },
        seed: v.seed.unwrap_or(1),
        shard,
        threads: v.threads,
        lanes: v.lanes,
        roundings: mode_list("--rounding", &sel_r, |s| {
            Rounding::parse(s, dut.request.random_bits().max(1) as u8)
        })?,
        saturations: mode_list("--saturation", &sel_s, Saturation::parse)?,
        ignore,
        max_counterexamples: v.max_counterexamples.unwrap_or(8),
        vcd: Some(vcd),
        max_hours,
        ..Plan::default()
    };
    let bar = if v.json {
        None
    } else {
        let pb = indicatif::ProgressBar::new(0);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} vectors ({per_sec}, eta {eta}) {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(pb)
    };
    let progress = |p: &sim::Progress| {
        if let Some(pb) = &bar {
            pb.set_length(p.total);
            pb.set_position(p.done);
            if p.mismatches > 0 {
                pb.set_message(format!("{} mismatches", p.mismatches));
            }
        }
    };
    let json = v.json;
    let on_build = |m: &str| {
        if !json {
            eprintln!("{m}");
        }
    };
    let report = {
        let _quiet = crate::out::CoreOutputToStderr::new()?;
        verify::run(&dut, &plan, Some(&progress), &on_build).map_err(verr)?
    };
    if let Some(pb) = &bar {
        pb.finish_and_clear();
    }
    print_report(&report, v.json)
}

/// `verify --from DIR --prove`.
fn prove(dut: &Dut, v: &VerifyArgs) -> Result<(), CliError> {
    let sim_only = [
        (v.exhaustive, "--exhaustive"),
        (v.random.is_some(), "--random"),
        (v.shard.is_some(), "--shard"),
        (!v.ignore.is_empty(), "--ignore"),
        (
            !v.run_rounding.is_empty() || !v.run_saturation.is_empty(),
            "--run-rounding/--run-saturation",
        ),
        (v.lanes.is_some(), "--lanes"),
        (v.seed.is_some(), "--seed"),
        (v.max_counterexamples.is_some(), "--max-counterexamples"),
    ];
    if let Some((_, opt)) = sim_only.iter().find(|(given, _)| *given) {
        return Err(CliError::usage(format!(
            "{opt} selects simulation vectors; --prove covers every input and every legal mode value"
        )));
    }
    if v.max_hours.is_some() {
        return Err(CliError::usage(
            "--max-hours bounds a simulation run's estimate; --prove is bounded by --timeout (seconds)",
        ));
    }
    let timeout = check_timeout(v.timeout.unwrap_or(600))?;
    let opts = formal::ProveOptions {
        timeout_secs: timeout,
        work_dir: None,
        vcd: v.vcd_path()?,
        replay: true,
        engine: formal::Engine::default(),
        jobs: v.threads,
    };
    let r = {
        let _quiet = crate::out::CoreOutputToStderr::new()?;
        verify::prove(dut, &opts).map_err(verr)?
    };
    if v.json {
        let mut j = serde_json::to_value(&r).unwrap_or_default();
        report::stamp(
            &mut j,
            &dut.request.canonical_command(),
            &dut.sources.content_hash(),
        );
        crate::out::println(&serde_json::to_string_pretty(&j).unwrap_or_default())?;
    } else {
        crate::prove_cmd::print(&r);
    }
    match r.verdict {
        formal::Verdict::Proven => Ok(()),
        formal::Verdict::Refuted => Err(CliError::failed(format!(
            "{} is not equivalent to {}",
            r.gold, r.gate
        ))),
        _ => Err(CliError::failed(format!(
            "no verdict within {timeout} s: nothing was proven; a longer --timeout may reach one"
        ))),
    }
}

fn fmt_pv(p: &sim::PortValues) -> String {
    p.0.iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn print_report(r: &Report, json: bool) -> Result<(), CliError> {
    let s = &r.summary;
    if !json {
        for cx in &s.counterexamples {
            eprintln!(
                "MISMATCH #{}: inputs {} expected {} got {} (ports {})",
                cx.index,
                fmt_pv(&cx.inputs),
                fmt_pv(&cx.expected),
                fmt_pv(&cx.got),
                cx.mismatched_ports.join(",")
            );
        }
        if let Some(p) = &r.vcd {
            eprintln!("VCD of the first counterexample: {}", p.display());
        }
        if let Some(e) = &r.vcd_error {
            eprintln!("VCD of the first counterexample not written: {e}");
        }
        let get = |k: &str| s.meta.get(k).map(String::as_str).unwrap_or("-");
        eprintln!(
            "compared: outputs {}; inputs {}",
            s.compared.join(" "),
            get("inputs")
        );
        eprintln!(
            "modes:    {} ({} vectors per mode)",
            get("modes"),
            get("vectors_per_mode")
        );
        eprintln!("space:    {} (shards {})", get("space"), {
            let v: Vec<String> = s.shards.iter().map(|x| x.to_string()).collect();
            v.join(",")
        });
        match s.clocking() {
            Some(c) => eprintln!("clocked:  {c}"),
            None if s.bubbles > 0 => eprintln!(
                "handshake: {} bubble rows (valid_i = 0) checked for valid_o = 0",
                s.bubbles
            ),
            None => {}
        }
        if let Some(g) = s.meta.get("guard_overflow") {
            eprintln!("guard overflow {g}");
        }
        for (k, label) in [("compiled", "text:    "), ("xz_check", "x/z check:")] {
            if let Some(v) = s.meta.get(k) {
                eprintln!("{label} {v}");
            }
        }
        if !s.mismatches_per_port.is_empty() {
            let v: Vec<String> = s
                .mismatches_per_port
                .iter()
                .map(|(k, n)| format!("{k}: {n}"))
                .collect();
            eprintln!("mismatches per port: {}", v.join(", "));
        }
        eprintln!(
            "{}: {} vectors, {} mismatches, {:.2} s, {:.3e} vectors/s ({} threads x {} lanes; model {})",
            if s.passed() { "PASS" } else { "FAIL" },
            s.vectors,
            s.mismatches,
            s.seconds,
            s.vectors_per_second,
            s.threads,
            s.lanes,
            if r.cache_hit {
                "from cache".to_string()
            } else {
                format!("built in {:.1} s", r.build_seconds)
            }
        );
        if let Some(p) = &s.phases {
            eprintln!("time:     {}", p.per_vector(s.vectors));
        }
    }
    let mut j = serde_json::to_value(s).unwrap_or_default();
    if let (Some(p), Some(obj)) = (&r.vcd, j.as_object_mut()) {
        obj.insert(
            "vcd".into(),
            serde_json::Value::String(p.display().to_string()),
        );
    }
    crate::out::println(&serde_json::to_string_pretty(&j).unwrap_or_default())?;
    if s.passed() {
        Ok(())
    } else if s.mismatches > 0 {
        Err(CliError::failed(format!(
            "{} of {} vectors differ from the golden model",
            s.mismatches, s.vectors
        )))
    } else if s.vectors == 0 {
        Err(CliError::failed(
            "no vector was compared: nothing was checked",
        ))
    } else {
        Err(CliError::failed("verification did not complete"))
    }
}
