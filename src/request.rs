//! What to generate, from the command line: [`GenArgs`] (shared by `gen`, `verify`, `synth`,
//! `board`, `prove` and `sweep`) and the request it builds. What each format option means for
//! a unit, and which options a unit takes, come from the unit registry
//! ([`iface::Unit::spec`]); nothing here is written per unit.

use crate::args::{parse_named, CliError, FormatArgs};
use clap::Args;
use golden::{Format, Rounding, Saturation, Tininess};
use iface::{RFormat, Unit, UnitOption, XFormat};
use rtl::{GenOptions, GenRequest, RoundingSel, SaturationSel};
use verify::Overrides;

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
    /// Result format of mul (default: the format of x; may be binary32), of fma and of dot
    /// (default binary32).
    #[arg(long)]
    pub out_format: Option<String>,
    /// Format of the addend z_i of fma (default: the result format, --out-format) and dot
    /// (default binary32; implies --addend): binary32, binary16, bfloat16 or any small
    /// format.
    #[arg(long)]
    pub addend_format: Option<String>,
    /// dot: elements per operand, 1..=64 (ports x0_i … x{N-1}_i, y0_i …); quantize:
    /// elements per block, 1..=64 (ports z0_i … z{N-1}_i, r0_o …).
    #[arg(long = "n", value_name = "N")]
    pub dot_n: Option<u32>,
    /// quantize: how the shared scale follows from the block maximum: floor (OCP MX v1.0
    /// §6.3, default), ceil, even or rceil (no element overflows).
    #[arg(long)]
    pub scale_policy: Option<String>,
    /// Power-of-two block scales of this format (e8m0 for OCP MX, binary8p1uf for P3109):
    /// mul, fma, dot get ports sx_i, sy_i ((x·Sx)·(y·Sy)); project gets s_i and divides by
    /// it (P3109 §5.1.2, the MX quantizer).
    #[arg(long)]
    pub scale_format: Option<String>,
    /// Block scales in E8M0 (the same as --scale-format e8m0).
    #[arg(long)]
    pub scaled: bool,
    /// dot: add an addend z_i (binary32, or --addend-format) to the sum (one rounding).
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
    /// Round-to-odd on overflow under satnone: p3109 (±Inf, P3109 §4.7.5; default) or ieee
    /// (the largest finite value, as SoftFloat's round_odd hardware; mul, fma, dot, project).
    #[arg(long)]
    pub rto_overflow: Option<String>,
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
        let uses = unit.spec().formats;
        let f = self.format.resolve()?;
        let named = |flag: &str, v: &Option<String>| -> Result<Option<Format>, CliError> {
            v.as_deref().map(|n| parse_named(flag, n)).transpose()
        };
        let fy = named("--format-y", &self.format_y)?;
        let fr = named("--out-format", &self.out_format)?;
        let fin = named("--in-format", &self.in_format)?;
        let fz = named("--addend-format", &self.addend_format)?;
        // An option the unit does not take is refused, naming the units that take it.
        let only = |applies: &str, units: String| {
            Err(CliError::usage(format!(
                "{applies} --unit {units} only, not to {unit}"
            )))
        };
        let in_format = |u: &iface::FormatUse| matches!(u.x, XFormat::InFormat(_));
        let out_format = |u: &iface::FormatUse| u.r.takes_out_format();
        let addend_format = |u: &iface::FormatUse| u.z != iface::ZFormat::None;
        if fy.is_some() && !uses.y {
            return only("--format-y applies to", Unit::with_formats(|u| u.y));
        }
        if fr.is_some() && !out_format(&uses) {
            return only("--out-format applies to", Unit::with_formats(out_format));
        }
        if fz.is_some() && !addend_format(&uses) {
            return only(
                "--addend-format applies to",
                Unit::with_formats(addend_format),
            );
        }
        if fin.is_some() && !in_format(&uses) {
            return only("--in-format applies to", Unit::with_formats(in_format));
        }
        // --n is shared by dot (elements per operand) and quantize (elements per block).
        let takes_n = |u: Unit| u.accepts(UnitOption::DotShape) || u.accepts(UnitOption::Block);
        if self.dot_n.is_some() && !takes_n(unit) {
            let units: Vec<Unit> = Unit::ALL.into_iter().filter(|u| takes_n(*u)).collect();
            let names: Vec<&str> = units.iter().map(|u| u.name()).collect();
            let list = match names.split_last() {
                Some((last, init)) if !init.is_empty() => format!("{} or {last}", init.join(", ")),
                _ => names.join(""),
            };
            return only("--n applies to", list);
        }
        if self.addend && !unit.accepts(UnitOption::DotShape) {
            return only("--addend applies to", Unit::accepting(UnitOption::DotShape));
        }
        for (opt, given) in [
            (
                UnitOption::DotShape,
                self.dot_n.is_some() && !unit.accepts(UnitOption::Block),
            ),
            (UnitOption::Block, self.scale_policy.is_some()),
            (
                UnitOption::Scales,
                self.scale_format.is_some() || self.scaled,
            ),
            (
                UnitOption::Accumulator,
                self.acc.is_some() || self.guard_bits.is_some(),
            ),
            (UnitOption::Interleave, self.interleave.is_some()),
            (UnitOption::Sub, self.sub.is_some()),
        ] {
            if given && !unit.accepts(opt) {
                return only(&opt.applies(), Unit::accepting(opt));
            }
        }
        let scale = match (&self.scale_format, self.scaled) {
            (Some(n), _) => Some(crate::args::scale_named(n)?),
            (None, true) => Some(Format::E8M0),
            // A block quantizer always writes a scale: E8M0 unless given.
            (None, false) if unit.accepts(UnitOption::Block) => Some(Format::E8M0),
            (None, false) => None,
        };
        let acc_guard = match self.acc.as_deref().map(|a| a.to_ascii_lowercase()) {
            None if self.guard_bits.is_some() => {
                return Err(CliError::usage("--guard-bits applies to --acc exact only"))
            }
            None => 0,
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
        let dot = if unit.accepts(UnitOption::DotShape) {
            iface::DotShape {
                n: self.dot_n.ok_or_else(|| {
                    CliError::usage(format!(
                        "--unit {unit} needs --n N, the number of elements (1..=64)"
                    ))
                })?,
                addend: self.addend || fz.is_some(),
            }
        } else {
            iface::DotShape::default()
        };
        let block = if unit.accepts(UnitOption::Block) {
            iface::BlockShape {
                n: self.dot_n.ok_or_else(|| {
                    CliError::usage(format!(
                        "--unit {unit} needs --n N, the number of elements per block (1..=64)"
                    ))
                })?,
                policy: match &self.scale_policy {
                    Some(p) => golden::ScalePolicy::parse(p)
                        .map_err(|e| CliError::usage(format!("--scale-policy: {e}")))?,
                    None => golden::ScalePolicy::Floor,
                },
            }
        } else {
            iface::BlockShape::default()
        };
        // What the format options mean for this unit (its registry entry).
        let x = match uses.x {
            XFormat::Format => f,
            XFormat::InFormat(default) => match fin.or(default) {
                Some(x) => x,
                None => {
                    return Err(CliError::usage(format!(
                        "--unit {unit} needs --in-format F, the format it reads (--format is the result format)"
                    )))
                }
            },
        };
        let r = match uses.r {
            RFormat::Fixed(r) => r,
            RFormat::Format => f,
            RFormat::OutFormat(default) => fr.or(default).unwrap_or(x),
            RFormat::OutFormatQuiet(default) => fr.unwrap_or(default),
        };
        let formats = iface::Formats {
            x,
            y: uses.y.then(|| fy.unwrap_or(x)),
            r,
            scale,
            // The addend format is recorded (manifest formats.z, the canonical command) unless
            // it is binary32 by default: `--addend-format binary32` on a dot is the same core
            // as no option, and the cores of earlier versions keep their bytes.
            z: uses.default_addend(r).and_then(|d| {
                let z = fz.unwrap_or(d);
                let has_addend = !unit.accepts(UnitOption::DotShape) || self.addend || fz.is_some();
                (has_addend && !(z == Format::BINARY32 && d == Format::BINARY32)).then_some(z)
            }),
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
                block,
                add_op: match &self.sub {
                    None => rtl::units::add::AddOp::Add,
                    Some(s) => rtl::units::add::AddOp::parse(s).map_err(CliError::usage)?,
                },
                rto_overflow: self.rto_overflow()?.unwrap_or_default(),
            },
        };
        rtl::validate(&req).map_err(|e| CliError::usage(e.to_string()))?;
        Ok(req)
    }

    /// `--rto-overflow`, parsed.
    fn rto_overflow(&self) -> Result<Option<golden::RtoOverflow>, CliError> {
        self.rto_overflow
            .as_deref()
            .map(|s| {
                golden::RtoOverflow::parse(s)
                    .map_err(|e| CliError::usage(format!("--rto-overflow: {e}")))
            })
            .transpose()
    }

    /// The options given next to `--from DIR` (each must agree with the manifest).
    pub(crate) fn overrides(&self, signaling_nan: bool) -> Result<Overrides, CliError> {
        if self.dot_n.is_some()
            || self.scale_format.is_some()
            || self.scaled
            || self.addend
            || self.addend_format.is_some()
            || self.scale_policy.is_some()
        {
            return Err(CliError::usage(
                "--n, --scale-format, --scaled, --addend, --addend-format and --scale-policy describe a core to generate; with --from DIR the manifest gives them (\"dot\", \"block\", formats.scale, formats.z)",
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
            rto_overflow: self.rto_overflow()?,
        })
    }
}
