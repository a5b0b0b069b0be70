//! # fp8gen RTL generator
//!
//! Owns the typed Verilog AST ([`ast`]) and its deterministic emitter ([`emit`], which also
//! places pipeline registers), the reusable datapath blocks ([`blocks`]: unpack, leading-zero
//! count + normalize, alignment/denormalization shifter with sticky, THE ONE rounder,
//! saturation/encode), the hardware units ([`units`]) and `manifest.json` ([`manifest`]).
//!
//! Entry points: [`generate`] (a [`GenRequest`] → Verilog text + [`manifest::Manifest`]),
//! [`write_core`] (atomic write of `<top>.v` + `manifest.json`) and [`units::GoldenModel`]
//! (the expected value of every output port for an input vector, from the golden model).

pub mod ast;
pub mod blocks;
pub mod emit;
pub mod fusesoc;
pub mod manifest;
pub mod pipeline;
pub mod testbench;
pub mod units;

pub use units::interface;

use golden::{Format, Rounding, Saturation, Tininess};
use iface::{RFormat, UnitOption, XFormat};
use manifest::{Formats, Manifest, Unit};
use std::fmt;
use std::path::Path;

/// Rounding mode: fixed at generation (smallest logic) or chosen at run time by `rm_i`
/// (encoding [`manifest::ROUNDING_ENCODING`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundingSel {
    /// Fixed mode (stochastic modes carry their number of random bits).
    Fixed(Rounding),
    /// Run-time `rm_i` port.
    Dynamic,
}

/// Saturation mode: fixed, or chosen at run time by `sat_i`
/// (encoding [`manifest::SATURATION_ENCODING`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaturationSel {
    /// Fixed mode.
    Fixed(Saturation),
    /// Run-time `sat_i` port.
    Dynamic,
}

/// Options beyond the modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenOptions {
    /// Tininess detection for the underflow flag (default after rounding).
    pub tininess: Tininess,
    /// Code written for a NaN result in a format without NaN (default +0).
    pub nonan_code: u32,
    /// Flush subnormals to zero (mul, fma, mac; rejected for decode/project).
    pub ftz: bool,
    /// No `flags_o` port (`mul` only): a core with FloPoCo's interface; the flag logic is
    /// not generated.
    pub no_flags: bool,
    /// Golden semantics only (for verifying other cores, never generated): small IEEE-style
    /// operand NaNs with a clear top trailing bit are signaling and raise `invalid`
    /// ([`golden::is_small_signaling_nan`]).
    pub signaling_nan: bool,
    /// Shape of a `dot` unit (elements, block scales, addend); `n` is 0 for other units.
    pub dot: iface::DotShape,
    /// `mac` only: 0 = binary32 accumulator; N > 0 = exact accumulator with N guard bits
    /// ([`golden::ExactAcc`]).
    pub acc_guard: u32,
    /// `mac` only: L ≥ 2 interleaved binary32 accumulators, step k to accumulator k mod L
    /// (0 = one accumulator).
    pub interleave: u32,
    /// Shape of a `quantize` unit (block size, scale policy); `n` is 0 for other units.
    pub block: iface::BlockShape,
    /// `add` only: `x + y`, `x − y` (`--sub`) or chosen by a `sub_i` port (`--sub dyn`).
    pub add_op: units::add::AddOp,
    /// Round-to-odd on overflow under satnone (`--rto-overflow`; mul, fma, dot, project).
    pub rto_overflow: golden::RtoOverflow,
}

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenRequest {
    /// Unit kind.
    pub unit: Unit,
    /// Formats: decode — `x` is the decoded format, `r` is binary32; project — `x` is the
    /// input format (binary32, binary16 or bfloat16), `r` the result format.
    pub formats: Formats,
    /// Rounding mode.
    pub rounding: RoundingSel,
    /// Saturation mode.
    pub saturation: SaturationSel,
    /// Random bits of stochastic rounding (dynamic: 0 = no stochastic encodings; fixed
    /// stochastic: 0 or the mode's own N).
    pub sr_bits: u32,
    /// Pipeline stages (0 = combinational).
    pub stages: u32,
    /// Options.
    pub options: GenOptions,
}

impl GenRequest {
    /// A combinational decoder of `format`.
    pub fn decode(format: Format) -> GenRequest {
        GenRequest {
            unit: Unit::Decode,
            formats: Formats {
                x: format,
                y: None,
                r: Format::BINARY32,
                scale: None,
                z: None,
            },
            rounding: RoundingSel::Fixed(Rounding::Rne),
            saturation: SaturationSel::Fixed(Saturation::SatNone),
            sr_bits: 0,
            stages: 0,
            options: GenOptions::default(),
        }
    }

    /// A combinational binary32 → `format` projection.
    pub fn project(format: Format, rounding: RoundingSel, saturation: SaturationSel) -> GenRequest {
        GenRequest {
            unit: Unit::Project,
            formats: Formats {
                x: Format::BINARY32,
                y: None,
                r: format,
                scale: None,
                z: None,
            },
            rounding,
            saturation,
            sr_bits: match rounding {
                RoundingSel::Fixed(r) => r.random_bits(),
                RoundingSel::Dynamic => 0,
            },
            stages: 0,
            options: GenOptions::default(),
        }
    }

    /// The same request with `n` pipeline stages.
    pub fn with_stages(mut self, n: u32) -> GenRequest {
        self.stages = n;
        self
    }

    /// The same request with `n` random bits.
    pub fn with_sr_bits(mut self, n: u32) -> GenRequest {
        self.sr_bits = n;
        self
    }

    /// The canonical request: the `fp8gen gen` command that generates this core, with every
    /// option spelled out in a fixed order and nothing else (no output path, no verification
    /// option). Written into the Verilog header and the manifest, so the same core is always
    /// the same bytes (and the same simulation cache entry).
    pub fn canonical_command(&self) -> String {
        let f = &self.formats;
        let mut v = vec![
            "fp8gen gen".to_string(),
            format!("--unit {}", self.unit.name()),
        ];
        let spec = self.unit.spec();
        match spec.formats.x {
            XFormat::Format => v.push(format!("--format {}", f.x.name())),
            XFormat::InFormat(_) => {
                v.push(format!("--format {}", f.r.name()));
                v.push(format!("--in-format {}", f.x.name()));
            }
        }
        if spec.formats.y {
            v.push(format!("--format-y {}", f.y.unwrap_or(f.x).name()));
        }
        match spec.formats.r {
            RFormat::OutFormat(_) => v.push(format!("--out-format {}", f.r.name())),
            RFormat::OutFormatQuiet(d) if f.r != d => {
                v.push(format!("--out-format {}", f.r.name()))
            }
            _ => {}
        }
        if let Some(z) = f.z {
            v.push(format!("--addend-format {}", z.name()));
        }
        if self.unit.accepts(UnitOption::Sub) {
            v.extend(self.options.add_op.option().map(String::from));
        }
        if self.unit.accepts(UnitOption::DotShape) {
            let d = &self.options.dot;
            v.push(format!("--n {}", d.n));
            if d.addend {
                v.push("--addend".to_string());
            }
        }
        if self.unit.accepts(UnitOption::Block) {
            let q = &self.options.block;
            v.push(format!("--n {} --scale-policy {}", q.n, q.policy));
        }
        if let Some(s) = f.scale {
            v.push(format!("--scale-format {}", s.name()));
        }
        if spec.rounds {
            v.push(match self.rounding {
                RoundingSel::Fixed(r) => format!("--rounding {}", r.name()),
                RoundingSel::Dynamic => "--rounding dyn".to_string(),
            });
            v.push(match self.saturation {
                SaturationSel::Fixed(s) => format!("--saturation {}", s.name()),
                SaturationSel::Dynamic => "--saturation dyn".to_string(),
            });
            if self.random_bits() > 0 {
                v.push(format!("--sr-bits {}", self.random_bits()));
            }
            if self.options.tininess == Tininess::BeforeRounding {
                v.push("--tininess before".to_string());
            }
            if self.options.nonan_code != 0 {
                v.push(format!("--nan-code {:#x}", self.options.nonan_code));
            }
            if self.options.rto_overflow != golden::RtoOverflow::P3109 {
                v.push(format!(
                    "--rto-overflow {}",
                    self.options.rto_overflow.name()
                ));
            }
            if self.options.ftz {
                v.push("--ftz".to_string());
            }
            if self.options.no_flags {
                v.push("--no-flags".to_string());
            }
            if self.options.acc_guard > 0 {
                v.push(format!(
                    "--acc exact --guard-bits {}",
                    self.options.acc_guard
                ));
            }
            if self.options.interleave > 0 {
                v.push(format!("--interleave {}", self.options.interleave));
            }
        }
        v.push(format!("--stages {}", self.stages));
        v.join(" ")
    }

    /// Number of random bits the core consumes (0 when no stochastic mode is possible).
    pub fn random_bits(&self) -> u32 {
        match self.rounding {
            RoundingSel::Fixed(r) => r.random_bits(),
            RoundingSel::Dynamic => self.sr_bits,
        }
    }
}

/// Why a core could not be generated or written.
#[derive(Debug)]
pub enum GenError {
    /// The request is not supported (unit, format combination, option).
    Unsupported(String),
    /// A field of the request is invalid.
    BadRequest(String),
    /// Writing the output failed.
    Io(String, std::io::Error),
    /// The output directory cannot be used ([`iface::outdir`]): what and what to do.
    Output(String),
    /// A generator bug (width mismatch …); please report it.
    Internal(String),
}

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenError::Unsupported(m) => write!(f, "unsupported request: {m}"),
            GenError::BadRequest(m) => write!(f, "invalid request: {m}"),
            GenError::Io(what, e) => write!(f, "{what}: {e}"),
            GenError::Output(m) => f.write_str(m),
            GenError::Internal(m) => write!(f, "internal generator error (please report): {m}"),
        }
    }
}

impl std::error::Error for GenError {}

/// A generated core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedCore {
    /// The Verilog file text.
    pub verilog: String,
    /// The manifest.
    pub manifest: Manifest,
    /// Top module name (the Verilog file is `<top>.v`).
    pub top: String,
    /// Logic depth estimate of the combinational datapath (tenths of a logic level, the
    /// pipeliner's measure, [`ast::delay`]; the deepest part for a multi-module core): what
    /// `--fmax` divides into stages.
    pub depth: u32,
}

/// Largest pipeline depth accepted.
pub const MAX_STAGES: u32 = 32;

pub(crate) fn check_format(f: &Format, what: &str) -> Result<(), GenError> {
    Format::new(f.k, f.p, f.bias, f.signed, f.specials)
        .map(|_| ())
        .map_err(|e| GenError::BadRequest(format!("{what} format {}: {e}", f.name())))
}

/// Validates a request (everything [`generate`] checks before building logic).
pub fn validate(req: &GenRequest) -> Result<(), GenError> {
    if req.stages > MAX_STAGES {
        return Err(GenError::BadRequest(format!(
            "--stages {} is too deep; use 0..={MAX_STAGES}",
            req.stages
        )));
    }
    // Every option the unit's spec does not list is refused with the units that take it.
    let given = [
        (UnitOption::NoFlags, req.options.no_flags),
        (UnitOption::Ftz, req.options.ftz),
        (UnitOption::Scales, req.formats.scale.is_some()),
        (UnitOption::Accumulator, req.options.acc_guard > 0),
        (UnitOption::Interleave, req.options.interleave > 0),
        (
            UnitOption::DotShape,
            req.options.dot != iface::DotShape::default(),
        ),
        (
            UnitOption::Block,
            req.options.block != iface::BlockShape::default(),
        ),
        (
            UnitOption::Sub,
            req.options.add_op != units::add::AddOp::Add,
        ),
        (
            UnitOption::RtoOverflow,
            req.options.rto_overflow != golden::RtoOverflow::P3109,
        ),
    ];
    for (opt, on) in given {
        if on && !req.unit.accepts(opt) {
            return Err(GenError::Unsupported(format!(
                "{} {} only, not to the {} unit",
                opt.applies(),
                Unit::accepting(opt),
                req.unit.name()
            )));
        }
    }
    if let Some(z) = req.formats.z {
        if req.unit.spec().formats.z == iface::ZFormat::None {
            return Err(GenError::Unsupported(format!(
                "an addend format ({}: --addend-format, formats.z) applies to {} only, not to the {} unit",
                z.name(),
                Unit::with_formats(|u| u.z != iface::ZFormat::None),
                req.unit.name()
            )));
        }
    }
    if req.options.rto_overflow == golden::RtoOverflow::Ieee {
        if let RoundingSel::Fixed(r) = req.rounding {
            if r != Rounding::Rto {
                return Err(GenError::BadRequest(format!(
                    "--rto-overflow ieee changes round-to-odd only; this core rounds {} (use --rounding rto or dyn)",
                    r.name()
                )));
            }
        }
    }
    if !req.unit.spec().rounds
        && (req.rounding != RoundingSel::Fixed(Rounding::Rne)
            || req.saturation != SaturationSel::Fixed(Saturation::SatNone))
    {
        return Err(GenError::Unsupported(format!(
            "the {} unit does not round: it has no rounding or saturation mode",
            req.unit.name()
        )));
    }
    match req.rounding {
        RoundingSel::Fixed(r) => {
            let n = r.random_bits();
            if n > 0 && !(1..=32).contains(&n) {
                return Err(GenError::BadRequest(format!(
                    "stochastic rounding needs 1..=32 random bits, got {n}"
                )));
            }
            if req.sr_bits != 0 && req.sr_bits != n {
                return Err(GenError::BadRequest(format!(
                    "--sr-bits {} does not match the fixed rounding mode {r} ({} random bits)",
                    req.sr_bits, n
                )));
            }
        }
        RoundingSel::Dynamic => {
            if req.sr_bits > 32 {
                return Err(GenError::BadRequest(format!(
                    "--sr-bits {} is out of range; stochastic rounding uses 1..=32 random bits (0 = no stochastic modes on rm_i)",
                    req.sr_bits
                )));
            }
        }
    }
    units::def(req.unit).validate(req)?;
    if req.options.acc_guard > 0 {
        if req.options.ftz {
            return Err(GenError::Unsupported(
                "--ftz is not offered with --acc exact (subnormal products are exact in the fixed-point accumulator)".into(),
            ));
        }
        golden::ExactAcc::new(
            req.formats.x,
            req.formats.y.unwrap_or(req.formats.x),
            req.options.acc_guard,
        )
        .map_err(GenError::Unsupported)?;
    }
    if let Some(sf) = req.formats.scale {
        check_format(&sf, "scale")?;
        golden::Scale::check_format(&sf).map_err(GenError::Unsupported)?;
        if req.options.ftz {
            return Err(GenError::Unsupported(
                "--ftz and block scales exclude each other (a scaled operand's subnormal range is not defined)".into(),
            ));
        }
    }
    if req.options.interleave > 0 {
        if req.options.acc_guard > 0 {
            return Err(GenError::BadRequest(
                "--interleave applies to mac with the binary32 accumulator (the exact accumulator already takes a product every cycle)".into(),
            ));
        }
        if !(2..=16).contains(&req.options.interleave) {
            return Err(GenError::BadRequest(format!(
                "--interleave {}: give 2..=16 accumulators",
                req.options.interleave
            )));
        }
    }
    Ok(())
}

/// Generates a core: Verilog text, manifest and top module name. Same request → same bytes.
pub fn generate(req: &GenRequest) -> Result<GeneratedCore, GenError> {
    validate(req)?;
    if req.options.signaling_nan {
        return Err(GenError::Unsupported(
            "fp8gen's cores treat every small-format NaN as quiet (OCP, P3109); signaling-NaN semantics are a golden-model option for verifying other cores (verify --from DIR --signaling-nan)".into(),
        ));
    }
    units::def(req.unit).generate(req)
}

/// The first header line: `Generated by fp8gen <version>: <canonical request>. Do not edit.`
pub fn header_line(req: &GenRequest) -> String {
    format!(
        "Generated by fp8gen {}: {}. Do not edit.",
        golden::VERSION,
        req.canonical_command()
    )
}

/// Writes `<top>.v`, `manifest.json` and the FuseSoC `<top>.core` ([`fusesoc`]) into `dir`
/// atomically: the files are written into a temporary directory next to `dir`, which is then
/// renamed into place, so `dir` is never half-written. `dir` must be new or empty, or (with
/// `force`) hold only the files of an earlier `fp8gen gen` (those its `manifest.json` lists);
/// a directory holding anything else is refused ([`iface::outdir`]).
pub fn write_core(dir: &Path, core: &GeneratedCore, force: bool) -> Result<(), GenError> {
    write_core_files(dir, core, None, force)
}

/// [`write_core`] plus the self-checking testbench of the core ([`testbench`]):
/// `<top>_tb.sv` and `<top>_vectors.hex`, and a `sim` target in `<top>.core` that runs them.
/// `core` must be `generate(req)`.
pub fn write_core_with_testbench(
    dir: &Path,
    core: &GeneratedCore,
    req: &GenRequest,
    force: bool,
) -> Result<(), GenError> {
    let tb = testbench::testbench(req, core)?;
    write_core_files(dir, core, Some(&tb), force)
}

fn write_core_files(
    dir: &Path,
    core: &GeneratedCore,
    tb: Option<&testbench::Testbench>,
    force: bool,
) -> Result<(), GenError> {
    use iface::outdir::{OutDir, OutDirError, Rule};
    let out_err = |e: OutDirError| match e {
        OutDirError::Refused(m) => GenError::Output(m),
        OutDirError::Failed(m) => GenError::Io(
            "cannot write the output directory".into(),
            std::io::Error::other(m),
        ),
    };
    let rule = Rule {
        command: "gen",
        option: "-o",
        replace: if force {
            Ok(())
        } else {
            Err("pass --force to replace it")
        },
        listing: "manifest.json",
        earlier: &iface::outdir::read_gen_manifest,
        in_place: false,
    };
    let out = OutDir::prepare(dir, &rule).map_err(out_err)?;
    let tmp = out.stage().map_err(out_err)?;
    let io = |what: String| move |e: std::io::Error| GenError::Io(what, e);
    let written = (|| -> Result<(), GenError> {
        let vpath = tmp.join(format!("{}.v", core.top));
        std::fs::write(&vpath, &core.verilog)
            .map_err(io(format!("cannot write {}", vpath.display())))?;
        let mpath = tmp.join("manifest.json");
        std::fs::write(&mpath, core.manifest.to_json())
            .map_err(io(format!("cannot write {}", mpath.display())))?;
        let cpath = tmp.join(format!("{}.core", core.top));
        std::fs::write(&cpath, fusesoc::core_file_sim(&core.manifest, tb.is_some()))
            .map_err(io(format!("cannot write {}", cpath.display())))?;
        if let Some(tb) = tb {
            let (tv, th) = testbench::file_names(&core.top);
            for (name, text) in [(tv, &tb.verilog), (th, &tb.vectors)] {
                let p = tmp.join(name);
                std::fs::write(&p, text).map_err(io(format!("cannot write {}", p.display())))?;
            }
        }
        Ok(())
    })();
    if let Err(e) = written {
        tmp.remove();
        return Err(e);
    }
    out.install(&tmp, false).map_err(out_err)?;
    Ok(())
}

/// The Rust examples of `docs/rtl.md`, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/rtl.md")]
pub struct RtlDocExamples;
