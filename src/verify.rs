//! `fp8gen gen` and `fp8gen verify`: generation requests from the command line, and the glue
//! between a core (generated, or brought by the user with a manifest), the Verilator engine of
//! `sim`, and the golden model: vector spaces per unit and a golden function per core.

use crate::args::{parse_named, CliError, FormatArgs};
use clap::Args;
use golden::{Format, Projector, Rounding, Saturation, Spec, Tininess};
use rtl::manifest::{Direction, Manifest, Role, Unit};
use rtl::units::GoldenModel;
use rtl::{GenOptions, GenRequest, RoundingSel, SaturationSel};
use sim::{
    check_equivalence, BuildOptions, CoreSpec, EquivConfig, FnSpace, ModelLibrary, Port, PortRole,
    Shard, Summary, Toolchain,
};
use std::path::{Path, PathBuf};

/// What to generate (shared by `gen`, `verify`, `synth` and `board`).
#[derive(Args, Debug, Clone)]
pub struct GenArgs {
    /// Unit: decode, project, mul, fma, mac.
    #[arg(long, short = 'u')]
    pub unit: String,
    #[command(flatten)]
    pub rest: GenRest,
}

impl GenArgs {
    /// Assembles the arguments from a unit name and the rest.
    pub fn from_rest(unit: String, rest: GenRest) -> GenArgs {
        GenArgs { unit, rest }
    }
}

/// Everything of [`GenArgs`] but the unit.
#[derive(Args, Debug, Clone)]
pub struct GenRest {
    #[command(flatten)]
    pub format: FormatArgs,
    /// Format of y (mul/fma/mac; default: the format of x).
    #[arg(long)]
    pub format_y: Option<String>,
    /// Result format of mul (default: the format of x; may be binary32).
    #[arg(long)]
    pub out_format: Option<String>,
    /// Input format of project: binary32, binary16 or bfloat16.
    #[arg(long, default_value = "binary32")]
    pub in_format: String,
    /// Rounding mode (rne, rna, rtp, rtn, rtz, rto, sra, srb, src) or `dyn` for an `rm_i` port.
    #[arg(long, short = 'r', default_value = "rne")]
    pub rounding: String,
    /// Saturation mode (satfinite, satpropagate, satnone, satnone-v4) or `dyn` for `sat_i`.
    #[arg(long, short = 's', default_value = "satnone")]
    pub saturation: String,
    /// Random bits for stochastic rounding (0 with `--rounding dyn` = no stochastic modes).
    #[arg(long)]
    pub sr_bits: Option<u32>,
    /// Pipeline stages (0 = combinational).
    #[arg(long, default_value_t = 0)]
    pub stages: u32,
    /// Flush subnormal binary32 inputs/results to zero (fma/mac).
    #[arg(long)]
    pub ftz: bool,
    /// Tininess detection: after (default) or before rounding.
    #[arg(long, default_value = "after")]
    pub tininess: String,
    /// Code written for NaN into a format without NaN (hex, default 0).
    #[arg(long, value_parser = crate::args::parse_hex_u32, default_value = "0")]
    pub nan_code: u32,
}

impl GenArgs {
    /// The generation request; `command` is the command line for the header.
    pub fn request(&self, command: &str) -> Result<GenRequest, CliError> {
        self.rest.request(&self.unit, command)
    }
}

impl GenRest {
    /// The generation request for `unit`.
    pub fn request(&self, unit: &str, command: &str) -> Result<GenRequest, CliError> {
        let unit = match unit.to_ascii_lowercase().as_str() {
            "decode" => Unit::Decode,
            "project" => Unit::Project,
            "mul" => Unit::Mul,
            "fma" => Unit::Fma,
            "mac" => Unit::Mac,
            u => {
                return Err(CliError::usage(format!(
                    "--unit: unknown unit '{u}'; expected decode, project, mul, fma or mac"
                )))
            }
        };
        let f = self.format.resolve()?;
        let fy = match &self.format_y {
            Some(n) => Some(parse_named("--format-y", n)?),
            None => None,
        };
        let fr = match &self.out_format {
            Some(n) => Some(parse_named("--out-format", n)?),
            None => None,
        };
        if unit != Unit::Mul && fr.is_some() {
            return Err(CliError::usage(
                "--out-format applies to --unit mul only (decode and fma/mac produce binary32, project produces --format)",
            ));
        }
        let formats = match unit {
            Unit::Decode => rtl::manifest::Formats {
                x: f,
                y: None,
                r: Format::BINARY32,
            },
            Unit::Project => {
                let inf = parse_named("--in-format", &self.in_format)?;
                rtl::manifest::Formats {
                    x: inf,
                    y: None,
                    r: f,
                }
            }
            Unit::Mul => rtl::manifest::Formats {
                x: f,
                y: Some(fy.unwrap_or(f)),
                r: fr.unwrap_or(f),
            },
            Unit::Fma | Unit::Mac => rtl::manifest::Formats {
                x: f,
                y: Some(fy.unwrap_or(f)),
                r: Format::BINARY32,
            },
        };
        let sr_default = 8;
        let (rounding, sr_bits) = if self.rounding.eq_ignore_ascii_case("dyn") {
            (RoundingSel::Dynamic, self.sr_bits.unwrap_or(0))
        } else {
            let n = self.sr_bits.unwrap_or(sr_default);
            let r = Rounding::parse(&self.rounding, n.min(255) as u8)
                .map_err(|e| CliError::usage(format!("--rounding: {e}")))?;
            (RoundingSel::Fixed(r), r.random_bits())
        };
        let saturation = if self.saturation.eq_ignore_ascii_case("dyn") {
            SaturationSel::Dynamic
        } else {
            SaturationSel::Fixed(
                Saturation::parse(&self.saturation)
                    .map_err(|e| CliError::usage(format!("--saturation: {e}")))?,
            )
        };
        let tininess = match self.tininess.to_ascii_lowercase().as_str() {
            "after" => Tininess::AfterRounding,
            "before" => Tininess::BeforeRounding,
            t => {
                return Err(CliError::usage(format!(
                    "--tininess: unknown value '{t}'; expected after or before"
                )))
            }
        };
        let req = GenRequest {
            unit,
            formats,
            rounding,
            saturation,
            sr_bits,
            stages: self.stages,
            options: GenOptions {
                tininess,
                nonan_code: self.nan_code,
                ftz: self.ftz,
            },
            command: command.to_string(),
        };
        rtl::validate(&req).map_err(|e| CliError::usage(e.to_string()))?;
        Ok(req)
    }
}

/// The command line as typed, for headers and manifests (program name normalized).
pub fn command_line() -> String {
    let mut v: Vec<String> = std::env::args().collect();
    if !v.is_empty() {
        v[0] = "fp8gen".into();
    }
    v.iter()
        .map(|a| {
            if a.is_empty() || a.contains(' ') {
                format!("'{a}'")
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `fp8gen gen`.
pub fn gen(args: &GenArgs, out: &Path, force: bool, json: bool) -> Result<(), CliError> {
    let req = args.request(&command_line())?;
    let core = rtl::generate(&req).map_err(|e| CliError::failed(e.to_string()))?;
    rtl::write_core(out, &core, force).map_err(|e| CliError::failed(e.to_string()))?;
    if json {
        println!("{}", core.manifest.to_json().trim_end());
    } else {
        println!(
            "wrote {}/{}.v and {}/manifest.json: {} {} → {}, latency {}, {} ports",
            out.display(),
            core.top,
            out.display(),
            core.manifest.unit.name(),
            core.manifest.formats.x.name(),
            core.manifest.formats.r.name(),
            core.manifest.latency,
            core.manifest.ports.len()
        );
    }
    Ok(())
}

/// How many vectors `verify` runs.
#[derive(Args, Debug, Clone)]
pub struct VerifyArgs {
    /// Every input vector (every code pair for mul; every binary32 input for project).
    #[arg(long, conflicts_with = "random")]
    pub exhaustive: bool,
    /// N uniformly random vectors (with --seed).
    #[arg(long)]
    pub random: Option<u64>,
    /// Seed of --random.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run part i of n (0-based) of the space: `--shard 3/16`.
    #[arg(long)]
    pub shard: Option<String>,
    /// Check a core on disk (its manifest.json and Verilog) instead of generating one.
    #[arg(long)]
    pub from: Option<PathBuf>,
    /// Lanes per model evaluation (core instances side by side).
    #[arg(long)]
    pub lanes: Option<u32>,
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Where to write the VCD replay of the first counterexample.
    #[arg(long, default_value = "fp8gen-counterexample.vcd")]
    pub vcd: PathBuf,
    /// Print only the JSON summary.
    #[arg(long)]
    pub json: bool,
}

/// Maps between a core's data ports and the canonical port order of the golden model.
struct PortMap {
    /// For each simulated data input: the canonical input index, or `None` for a constant 1
    /// (`valid_i` of a combinational core).
    inputs: Vec<Option<usize>>,
    /// For each simulated data output: the canonical output index, or `None` for an expected
    /// constant 1 (`valid_o` of a combinational core).
    outputs: Vec<Option<usize>>,
}

/// The data ports the simulator sees: on a combinational core, `valid_i`/`valid_o` are plain
/// data (driven 1, expected 1).
fn sim_data_ports(m: &Manifest, dir: Direction) -> Vec<&rtl::manifest::Port> {
    let clk = clocked(m);
    m.ports
        .iter()
        .filter(|p| {
            p.direction == dir
                && !matches!(p.role, Role::Clock | Role::ResetN)
                && (!clk || !matches!(p.role, Role::ValidIn | Role::ValidOut))
        })
        .collect()
}

fn data_ports(m: &Manifest, dir: Direction) -> Vec<&rtl::manifest::Port> {
    m.ports
        .iter()
        .filter(|p| {
            p.direction == dir
                && !matches!(
                    p.role,
                    Role::Clock | Role::ResetN | Role::ValidIn | Role::ValidOut
                )
        })
        .collect()
}

fn port_map(core: &Manifest, canon: &Manifest) -> Result<PortMap, CliError> {
    // For each simulated data port of one direction: its canonical index, or None for the
    // pass-through valid port of a combinational core.
    let map = |dir: Direction, valid: Role| -> Result<Vec<Option<usize>>, CliError> {
        let canon_ports = data_ports(canon, dir);
        let core_ports = sim_data_ports(core, dir);
        if let Some(c) = canon_ports
            .iter()
            .find(|c| !core_ports.iter().any(|p| p.role == c.role))
        {
            return Err(CliError::usage(format!(
                "manifest of `{}` has no {dir:?} port with role {:?}; the golden model of this unit and these modes needs one",
                core.top, c.role
            )));
        }
        core_ports
            .iter()
            .map(|p| {
                if p.role == valid {
                    return Ok(None);
                }
                canon_ports
                    .iter()
                    .position(|c| c.role == p.role)
                    .map(Some)
                    .ok_or_else(|| {
                        CliError::usage(format!(
                            "{dir:?} port `{}` (role {:?}) of `{}` has no meaning for this unit and these modes",
                            p.name, p.role, core.top
                        ))
                    })
            })
            .collect()
    };
    let inputs = map(Direction::Input, Role::ValidIn)?;
    let outputs = map(Direction::Output, Role::ValidOut)?;
    Ok(PortMap { inputs, outputs })
}

/// The request that reproduces a manifest's semantics (for `--from`).
fn request_from_manifest(m: &Manifest) -> Result<GenRequest, CliError> {
    let rounding = match &m.modes.rounding {
        None => RoundingSel::Dynamic,
        Some(r) => RoundingSel::Fixed(
            Rounding::parse(r, m.modes.sr_bits.min(255) as u8)
                .map_err(|e| CliError::usage(format!("manifest modes.rounding: {e}")))?,
        ),
    };
    let saturation = match &m.modes.saturation {
        None => SaturationSel::Dynamic,
        Some(s) => SaturationSel::Fixed(
            Saturation::parse(s)
                .map_err(|e| CliError::usage(format!("manifest modes.saturation: {e}")))?,
        ),
    };
    Ok(GenRequest {
        unit: m.unit,
        formats: m.formats.clone(),
        rounding,
        saturation,
        sr_bits: m.modes.sr_bits,
        stages: 0,
        options: GenOptions {
            tininess: if m.modes.tininess_before {
                Tininess::BeforeRounding
            } else {
                Tininess::AfterRounding
            },
            nonan_code: m.modes.nonan_code,
            ftz: m.modes.ftz,
        },
        command: String::new(),
    })
}

/// Whether the core is clocked (has a clock port).
fn clocked(m: &Manifest) -> bool {
    m.ports.iter().any(|p| p.role == Role::Clock)
}

fn sim_spec(m: &Manifest) -> CoreSpec {
    let clk = clocked(m);
    let ports = m
        .ports
        .iter()
        .map(|p| Port {
            name: p.name.clone(),
            direction: match p.direction {
                Direction::Input => sim::Direction::Input,
                Direction::Output => sim::Direction::Output,
            },
            width: p.width,
            role: match p.role {
                Role::Clock => PortRole::Clock,
                Role::ResetN => PortRole::ResetN,
                Role::ValidIn if clk => PortRole::ValidIn,
                Role::ValidOut if clk => PortRole::ValidOut,
                _ => PortRole::Data,
            },
        })
        .collect();
    if !clk {
        CoreSpec::combinational(m.top.clone(), ports)
    } else {
        CoreSpec::pipelined(m.top.clone(), ports, m.latency)
    }
}

/// A golden function in the canonical port order: fast paths where the unit allows.
enum Golden {
    /// Fixed-mode binary32 → small projection through the memoized projector.
    Project(Box<[Projector]>, usize, usize, u32),
    /// Any unit, through the rtl crate's golden model.
    General(GoldenModel),
}

impl Golden {
    fn new(req: &GenRequest) -> Result<Golden, CliError> {
        let g = GoldenModel::new(req).map_err(|e| CliError::usage(e.to_string()))?;
        if req.unit == Unit::Project && req.random_bits() == 0 {
            // One projector per (rounding, saturation) port value.
            let rms: Vec<Rounding> = match req.rounding {
                RoundingSel::Fixed(r) => vec![r],
                RoundingSel::Dynamic => Rounding::DETERMINISTIC.to_vec(),
            };
            let sats: Vec<Saturation> = match req.saturation {
                SaturationSel::Fixed(s) => vec![s],
                SaturationSel::Dynamic => Saturation::ALL.to_vec(),
            };
            let mut v = Vec::new();
            for r in &rms {
                for s in &sats {
                    let spec = Spec {
                        rounding: *r,
                        saturation: *s,
                        tininess: req.options.tininess,
                        nonan_code: req.options.nonan_code,
                    };
                    v.push(Projector::new(req.formats.x, req.formats.r, spec));
                }
            }
            let dyn_r = (req.rounding == RoundingSel::Dynamic) as usize;
            let dyn_s = (req.saturation == SaturationSel::Dynamic) as usize;
            // Only the six deterministic encodings are valid rm_i values without random bits.
            let _ = g;
            return Ok(Golden::Project(
                v.into_boxed_slice(),
                dyn_r,
                dyn_s,
                sats.len() as u32,
            ));
        }
        Ok(Golden::General(g))
    }

    #[inline]
    fn eval(&self, inp: &[u64], out: &mut [u64]) {
        match self {
            Golden::Project(ps, dyn_r, dyn_s, nsat) => {
                let r = if *dyn_r == 1 { inp[1] as usize } else { 0 };
                let s = if *dyn_s == 1 {
                    inp[1 + dyn_r] as usize
                } else {
                    0
                };
                let p = &ps[(r * *nsat as usize + s).min(ps.len() - 1)];
                let (c, f) = p.convert(inp[0] as u32, 0);
                out[0] = c as u64;
                out[1] = f.0 as u64;
            }
            Golden::General(GoldenModel::Project(m)) => out[..2].copy_from_slice(&m.eval(inp)),
            Golden::General(GoldenModel::Mul(m)) => out[..2].copy_from_slice(&m.eval(inp)),
            Golden::General(GoldenModel::Fma(m)) => out[..2].copy_from_slice(&m.eval(inp)),
            Golden::General(g) => {
                let v = g.eval(inp);
                out[..v.len()].copy_from_slice(&v);
            }
        }
    }
}

/// Vector generator in canonical input order.
struct Space {
    len: u64,
    /// Number of values of each dynamic mode port (rounding, saturation); 1 when fixed.
    n_rm: u64,
    n_sat: u64,
    /// Widths of the operand inputs (x/y/z/clear) in canonical order.
    roles: Vec<(Role, u32)>,
    kind: SpaceKind,
    seed: u64,
    /// Whether any input is drawn from the hash of the index (random ports or a random space).
    needs_hash: bool,
    /// Product table of the structured FMA space (empty otherwise).
    products: Vec<(u32, u8)>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SpaceKind {
    /// Every combination of operand bits.
    Exhaustive,
    /// Operands from the structured table (project: every exponent × round/sticky patterns).
    Structured(u64),
    /// Uniform random operands.
    Random(u64),
    /// FMA: every (x, y) pair × [`FMA_Z_PER_PAIR`] addends placed around the product.
    FmaStructured(Format, Format),
    /// FMA: N random (x, y) pairs, each with a random addend of the structured classes.
    FmaRandom(Format, Format, u64),
}

/// The binary32 product (rounded toward zero) and its flags for every (x, y) code pair,
/// index `y << K_x | x`: where the structured FMA space places its addends.
fn product_table(fx: &Format, fy: &Format) -> Vec<(u32, u8)> {
    let spec = Spec::ieee(Rounding::Rtz);
    let mut v = Vec::with_capacity(1 << (fx.k + fy.k));
    for y in 0..fy.num_codes() as u32 {
        for x in 0..fx.num_codes() as u32 {
            let (p, fl) = golden::mul(fx, x, fy, y, &Format::BINARY32, &spec, 0);
            v.push((p, fl.0));
        }
    }
    v
}

/// Addends per (x, y) pair in the structured FMA space.
const FMA_Z_PER_PAIR: u64 = 128;

/// Structured addend number `j` (< [`FMA_Z_PER_PAIR`]) for the product of `x` and `y`:
/// specials; every alignment distance from −40 to +40 binades around the product with random
/// mantissas; exact and near cancellation; ties and sticky patterns just below the product's
/// last bit; subnormal and overflow boundaries.
fn fma_z(products: &[(u32, u8)], kx: u32, x: u32, y: u32, j: u64, h: u64) -> u32 {
    const SPECIALS: [u32; 16] = [
        0x0000_0000,
        0x8000_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0x7FA0_0000,
        0x0000_0001,
        0x8000_0001,
        0x007F_FFFF,
        0x807F_FFFF,
        0x0080_0000,
        0x8080_0000,
        0x7F7F_FFFF,
        0xFF7F_FFFF,
        0x3F80_0000,
        0xBF80_0000,
    ];
    if j < 16 {
        return SPECIALS[j as usize];
    }
    let (p, fl) = products[((y << kx) | x) as usize];
    let pe = ((p >> 23) & 0xFF) as i64;
    let sign = (h as u32) & 0x8000_0000;
    let rnd_man = (h >> 32) as u32 & 0x7F_FFFF;
    let at = |d: i64, m: u32, s: u32| -> u32 {
        let e = (pe + d).clamp(0, 254) as u32;
        s | (e << 23) | (m & 0x7F_FFFF)
    };
    match j {
        16..=96 => at(j as i64 - 56, rnd_man, sign),
        97..=104 if fl == 0 => {
            // −product and its neighbours: massive cancellation.
            let neg = p ^ 0x8000_0000;
            let off = [0i32, 1, -1, 2, -2, 3, -3, 5][(j - 97) as usize];
            neg.wrapping_add_signed(off)
        }
        105..=116 => {
            // Just below the product's last bit: round, tie and sticky patterns.
            let d = [-24i64, -25, -26, -23, -22, -30][((j - 105) / 2) as usize];
            let m = [0x40_0000u32, 0, 0x7F_FFFF, 1, 0x40_0001, 0x3F_FFFF][((j - 105) % 6) as usize];
            at(
                d,
                m,
                if j % 2 == 0 {
                    sign
                } else {
                    (p & 0x8000_0000) ^ 0x8000_0000
                },
            )
        }
        117..=120 => {
            [0x0080_0000u32, 0x007F_FFFF, 0x0000_0001, 0x0040_0000][(j - 117) as usize] | sign
        }
        121..=124 => {
            [0x7F7F_FFFF, 0x7F7F_FFFE, 0x7F00_0000, 0x7E80_0000][(j - 121) as usize]
                | (p & 0x8000_0000)
        }
        _ => (h >> 16) as u32,
    }
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Structured binary32 value number `j`: each exponent and sign with mantissas on, beside and
/// between every rounding boundary, then the specials.
fn structured_f32(j: u64) -> u32 {
    const PAT: u64 = 8;
    let per_exp = 23 * PAT;
    let e = (j / per_exp) % 256;
    let r = j % per_exp;
    let sh = (r / PAT) as u32;
    let half = 1u32 << sh;
    let m = match r % PAT {
        0 => half,
        1 => half - 1,
        2 => half + 1,
        3 => half.wrapping_mul(3),
        4 => (half << 1).wrapping_sub(1),
        5 => 0,
        6 => 0x7F_FFFF,
        _ => mix(j) as u32,
    } & 0x7F_FFFF;
    let sign = ((j / (per_exp * 256)) & 1) as u32;
    (sign << 31) | ((e as u32) << 23) | m
}

/// Number of structured binary32 values.
const STRUCTURED_F32: u64 = 23 * 8 * 256 * 2;

impl Space {
    #[inline]
    fn vector(&self, i: u64, out: &mut [u64]) {
        // Fast path: one operand, fixed modes, exhaustive (e.g. project over all binary32).
        if self.roles.len() == 1 && self.kind == SpaceKind::Exhaustive {
            out[0] = i;
            return;
        }
        let combos = self.n_rm * self.n_sat;
        let mode = i % combos;
        let mut j = i / combos;
        let mut k = 0;
        if let SpaceKind::FmaStructured(fx, fy) | SpaceKind::FmaRandom(fx, fy, _) = &self.kind {
            let h = mix(i ^ self.seed);
            if let SpaceKind::FmaRandom(..) = self.kind {
                // Random pair and random addend class, drawn from the index's hash.
                j = mix(h ^ 0x5555);
            }
            let x = (j & fx.code_mask() as u64) as u32;
            let y = ((j >> fx.k) & fy.code_mask() as u64) as u32;
            let zj = (j >> (fx.k + fy.k)) % FMA_Z_PER_PAIR;
            let z = fma_z(&self.products, fx.k, x, y, zj, h);
            let mut rs = h;
            for (idx, (role, w)) in self.roles.iter().enumerate() {
                let mask = if *w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
                out[idx] = match role {
                    Role::X => x as u64,
                    Role::Y => y as u64,
                    Role::Z => z as u64,
                    Role::Rounding => mode / self.n_sat,
                    Role::Saturation => mode % self.n_sat,
                    _ => {
                        rs = mix(rs);
                        rs & mask
                    }
                };
            }
            return;
        }
        let h = if self.needs_hash {
            mix(i ^ self.seed)
        } else {
            0
        };
        let mut rnd_state = h;
        for (idx, (role, w)) in self.roles.iter().enumerate() {
            let mask = if *w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
            out[idx] = match role {
                Role::Rounding => mode / self.n_sat,
                Role::Saturation => mode % self.n_sat,
                Role::Random | Role::Clear => {
                    rnd_state = mix(rnd_state);
                    rnd_state & mask
                }
                _ => match self.kind {
                    SpaceKind::Exhaustive => {
                        let v = j & mask;
                        j >>= w;
                        v
                    }
                    SpaceKind::Structured(_) if *w == 32 && *role == Role::Z => {
                        let v = structured_f32(j % STRUCTURED_F32) as u64;
                        j /= STRUCTURED_F32;
                        v
                    }
                    SpaceKind::Structured(_)
                    | SpaceKind::FmaStructured(..)
                    | SpaceKind::FmaRandom(..) => {
                        let v = j & mask;
                        j >>= w;
                        v
                    }
                    SpaceKind::Random(_) => {
                        k += 1;
                        mix(h.wrapping_add(k)) & mask
                    }
                },
            };
        }
    }
}

fn build_space(req: &GenRequest, canon: &Manifest, v: &VerifyArgs) -> Result<Space, CliError> {
    let roles: Vec<(Role, u32)> = data_ports(canon, Direction::Input)
        .iter()
        .map(|p| (p.role, p.width))
        .collect();
    let n_rm = match req.rounding {
        RoundingSel::Dynamic if req.random_bits() > 0 => 9,
        RoundingSel::Dynamic => 6,
        _ => 1,
    };
    let n_sat = match req.saturation {
        SaturationSel::Dynamic => 4,
        _ => 1,
    };
    let operand_bits: u32 = roles
        .iter()
        .filter(|(r, _)| matches!(r, Role::X | Role::Y | Role::Z))
        .map(|(_, w)| *w)
        .sum();
    let combos = n_rm * n_sat;
    let fma = matches!(req.unit, Unit::Fma | Unit::Mac);
    let (fx, fy) = (req.formats.x, req.formats.y.unwrap_or(req.formats.x));
    let (kind, per_mode) = if let Some(n) = v.random {
        if fma && fx.k + fy.k <= 20 {
            (SpaceKind::FmaRandom(fx, fy, n), n)
        } else {
            (SpaceKind::Random(n), n)
        }
    } else if fma && !v.exhaustive {
        if fx.k + fy.k > 20 {
            return Err(CliError::usage(
                "the structured FMA set enumerates every (x, y) pair and needs K_x + K_y ≤ 20; use --random N",
            ));
        }
        (
            SpaceKind::FmaStructured(fx, fy),
            FMA_Z_PER_PAIR << (fx.k + fy.k),
        )
    } else if v.exhaustive || operand_bits <= 24 {
        if operand_bits > 40 {
            return Err(CliError::usage(format!(
                "--exhaustive: {operand_bits} operand bits is too large to enumerate; use --random N (fma) or the default structured set"
            )));
        }
        (SpaceKind::Exhaustive, 1u64 << operand_bits)
    } else {
        // Structured default: every structured binary32 value × every code of the other
        // operands (project: 94k vectors per mode; fma: every x, y pair).
        let other: u32 = operand_bits.saturating_sub(32);
        if other > 20 {
            return Err(CliError::usage(
                "no structured set for operands this wide; use --random N",
            ));
        }
        let n = STRUCTURED_F32 << other;
        (SpaceKind::Structured(n), n)
    };
    let needs_hash = matches!(
        kind,
        SpaceKind::Random(_) | SpaceKind::FmaStructured(..) | SpaceKind::FmaRandom(..)
    ) || roles
        .iter()
        .any(|(r, _)| matches!(r, Role::Random | Role::Clear));
    let products = match &kind {
        SpaceKind::FmaStructured(fx, fy) | SpaceKind::FmaRandom(fx, fy, _) => product_table(fx, fy),
        _ => Vec::new(),
    };
    Ok(Space {
        products,
        needs_hash,
        len: per_mode * combos,
        n_rm,
        n_sat,
        roles,
        kind,
        seed: v.seed,
    })
}

fn parse_shard(s: &str) -> Result<Shard, CliError> {
    s.parse::<Shard>()
        .map_err(|e| CliError::usage(format!("--shard: {e}; write it as i/n, e.g. 0/4")))
}

/// `fp8gen verify`.
pub fn verify(gen: Option<&GenArgs>, v: &VerifyArgs) -> Result<(), CliError> {
    // The core: generated now, or read from disk.
    let (verilog, manifest) = match (&v.from, gen) {
        (Some(dir), _) => {
            let mpath = dir.join("manifest.json");
            let text = std::fs::read_to_string(&mpath).map_err(|e| {
                CliError::usage(format!(
                    "--from: cannot read {}: {e}; point --from at a directory written by `fp8gen gen` (or with a manifest in the same schema)",
                    mpath.display()
                ))
            })?;
            let m: Manifest = serde_json::from_str(&text).map_err(|e| {
                CliError::usage(format!(
                    "--from: {} is not a valid manifest: {e}",
                    mpath.display()
                ))
            })?;
            let vpath = dir.join(&m.verilog);
            let vt = std::fs::read_to_string(&vpath).map_err(|e| {
                CliError::usage(format!(
                    "--from: cannot read the Verilog file {} named by the manifest: {e}",
                    vpath.display()
                ))
            })?;
            (vt, m)
        }
        (None, Some(g)) => {
            let req = g.request(&command_line())?;
            let core = rtl::generate(&req).map_err(|e| CliError::failed(e.to_string()))?;
            (core.verilog, core.manifest)
        }
        (None, None) => {
            return Err(CliError::usage(
                "verify needs a core: --unit/--format to generate one, or --from DIR",
            ))
        }
    };
    let req = request_from_manifest(&manifest)?;
    if req.unit == Unit::Mac {
        return verify_mac(&req, &verilog, &manifest, v);
    }
    let canon = rtl::generate(&req)
        .map_err(|e| CliError::usage(format!("manifest describes an unsupported core: {e}")))?
        .manifest;
    let map = port_map(&manifest, &canon)?;
    let golden = Golden::new(&req)?;
    let space = build_space(&req, &canon, v)?;
    let n_canon_out = data_ports(&canon, Direction::Output).len();
    let n_canon_in = data_ports(&canon, Direction::Input).len();

    let tc = Toolchain::detect().map_err(|e| CliError::failed(e.to_string()))?;
    let spec = sim_spec(&manifest);
    let lanes = v.lanes.unwrap_or(match manifest.unit {
        Unit::Decode | Unit::Project => 16,
        Unit::Mul => 8,
        Unit::Fma | Unit::Mac => 4,
    });
    if !v.json {
        eprintln!(
            "building {} with Verilator ({} lanes)…",
            manifest.top, lanes
        );
    }
    let lib = ModelLibrary::build(
        &tc,
        &verilog,
        &spec,
        &BuildOptions::default().with_lanes(lanes),
    )
    .map_err(|e| CliError::failed(e.to_string()))?;

    let vspace = FnSpace::new(space.len, |i, out: &mut [u64]| {
        let mut canon_in = [0u64; 8];
        space.vector(i, &mut canon_in[..n_canon_in]);
        for (o, src) in out.iter_mut().zip(&map.inputs) {
            *o = src.map_or(1, |ci| canon_in[ci]);
        }
    });
    let gold = |inp: &[u64], out: &mut [u64]| {
        let mut canon_in = [0u64; 8];
        for (v, src) in inp.iter().zip(&map.inputs) {
            if let Some(ci) = src {
                canon_in[*ci] = *v;
            }
        }
        let mut canon_out = [0u64; 8];
        golden.eval(&canon_in[..n_canon_in], &mut canon_out[..n_canon_out]);
        for (o, src) in out.iter_mut().zip(&map.outputs) {
            *o = src.map_or(1, |ci| canon_out[ci]);
        }
    };
    let mut cfg = EquivConfig {
        threads: v.threads,
        unit: manifest.unit.name().to_string(),
        format: format_desc(&manifest),
        ..EquivConfig::default()
    };
    if let Some(s) = &v.shard {
        cfg.shard = parse_shard(s)?;
    }
    cfg.meta
        .insert("generator".into(), manifest.generator.clone());
    cfg.meta.insert(
        "rounding".into(),
        manifest.modes.rounding.clone().unwrap_or("dyn".into()),
    );
    cfg.meta.insert(
        "saturation".into(),
        manifest.modes.saturation.clone().unwrap_or("dyn".into()),
    );
    cfg.meta
        .insert("stages".into(), manifest.stages.to_string());
    cfg.meta.insert(
        "space".into(),
        match space.kind {
            SpaceKind::Exhaustive => "exhaustive".into(),
            SpaceKind::Structured(_) => "structured".into(),
            SpaceKind::FmaStructured(..) => "structured fma (every x, y pair x 128 z)".into(),
            SpaceKind::FmaRandom(_, _, n) => format!(
                "random fma: {n} random pairs with structured z, seed {}",
                v.seed
            ),
            SpaceKind::Random(n) => format!("random {n} seed {}", v.seed),
        },
    );
    let bar = if v.json {
        None
    } else {
        let (lo, hi) = cfg.shard.range(space.len);
        let pb = indicatif::ProgressBar::new(hi - lo);
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
            pb.set_position(p.done);
            if p.mismatches > 0 {
                pb.set_message(format!("{} mismatches", p.mismatches));
            }
        }
    };
    let summary = check_equivalence(&lib, &vspace, gold, &cfg, Some(&progress))
        .map_err(|e| CliError::failed(e.to_string()))?;
    if let Some(pb) = &bar {
        pb.finish_and_clear();
    }
    report(&summary, &lib, v)
}

fn format_desc(m: &Manifest) -> String {
    match m.formats.y {
        Some(y) if y != m.formats.x => format!(
            "{} x {} -> {}",
            m.formats.x.name(),
            y.name(),
            m.formats.r.name()
        ),
        _ => format!("{} -> {}", m.formats.x.name(), m.formats.r.name()),
    }
}

fn report(summary: &Summary, lib: &ModelLibrary, v: &VerifyArgs) -> Result<(), CliError> {
    let mut vcd = None;
    if let Some(cx) = summary.counterexamples.first() {
        if let Ok(words) = cx.inputs.words() {
            match lib.replay_vcd(&words, &v.vcd) {
                Ok(p) => vcd = Some(p),
                Err(e) => eprintln!("warning: VCD replay failed: {e}"),
            }
        }
    }
    if !v.json {
        for cx in &summary.counterexamples {
            eprintln!(
                "MISMATCH #{}: inputs {} expected {} got {} (ports {})",
                cx.index,
                fmt_pv(&cx.inputs),
                fmt_pv(&cx.expected),
                fmt_pv(&cx.got),
                cx.mismatched_ports.join(",")
            );
        }
        if let Some(p) = &vcd {
            eprintln!("VCD of the first counterexample: {}", p.display());
        }
        eprintln!(
            "{}: {} vectors, {} mismatches, {:.2} s, {:.3e} vectors/s ({} threads × {} lanes)",
            if summary.passed() { "PASS" } else { "FAIL" },
            summary.vectors,
            summary.mismatches,
            summary.seconds,
            summary.vectors_per_second,
            summary.threads,
            summary.lanes
        );
    }
    let mut j = serde_json::to_value(summary).unwrap_or_default();
    if let (Some(p), Some(obj)) = (&vcd, j.as_object_mut()) {
        obj.insert(
            "vcd".into(),
            serde_json::Value::String(p.display().to_string()),
        );
    }
    println!("{}", serde_json::to_string_pretty(&j).unwrap_or_default());
    if summary.passed() {
        Ok(())
    } else if summary.mismatches > 0 {
        Err(CliError::failed(format!(
            "{} of {} vectors differ from the golden model",
            summary.mismatches, summary.vectors
        )))
    } else {
        Err(CliError::failed("verification did not complete"))
    }
}

fn fmt_pv(p: &sim::PortValues) -> String {
    p.0.iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `verify` of a `mac` core: random streams (valid gaps, clears, operands, modes) run through
/// the core lane by lane and compared cycle by cycle with the golden stream model.
fn verify_mac(
    req: &GenRequest,
    verilog: &str,
    m: &Manifest,
    v: &VerifyArgs,
) -> Result<(), CliError> {
    use rtl::units::mac::MacModel;
    if v.exhaustive {
        return Err(CliError::usage(
            "--exhaustive does not apply to mac (its accumulator makes every stream a new case); use --random N (cycles per lane)",
        ));
    }
    let canon = rtl::generate(req)
        .map_err(|e| CliError::usage(format!("manifest describes an unsupported core: {e}")))?
        .manifest;
    // Raw stream: valid and clear are data, one row per cycle.
    let raw = |man: &Manifest| -> Vec<rtl::manifest::Port> {
        man.ports
            .iter()
            .filter(|p| !matches!(p.role, Role::Clock | Role::ResetN))
            .cloned()
            .collect()
    };
    let (core_ports, canon_ports) = (raw(m), raw(&canon));
    let pos = |dir: Direction, role: Role| -> Result<usize, CliError> {
        core_ports
            .iter()
            .filter(|p| p.direction == dir)
            .position(|p| p.role == role)
            .ok_or_else(|| {
                CliError::usage(format!(
                    "mac core `{}` has no {dir:?} port with role {role:?}",
                    m.top
                ))
            })
    };
    let canon_in: Vec<Role> = canon_ports
        .iter()
        .filter(|p| p.direction == Direction::Input)
        .map(|p| p.role)
        .collect();
    let canon_out: Vec<Role> = canon_ports
        .iter()
        .filter(|p| p.direction == Direction::Output)
        .map(|p| p.role)
        .collect();
    let in_map: Vec<usize> = canon_in
        .iter()
        .map(|r| pos(Direction::Input, *r))
        .collect::<Result<_, _>>()?;
    let out_map: Vec<usize> = canon_out
        .iter()
        .map(|r| pos(Direction::Output, *r))
        .collect::<Result<_, _>>()?;
    let ports: Vec<Port> = m
        .ports
        .iter()
        .map(|p| Port {
            name: p.name.clone(),
            direction: match p.direction {
                Direction::Input => sim::Direction::Input,
                Direction::Output => sim::Direction::Output,
            },
            width: p.width,
            role: match p.role {
                Role::Clock => PortRole::Clock,
                Role::ResetN => PortRole::ResetN,
                _ => PortRole::Data,
            },
        })
        .collect();
    let spec = CoreSpec::pipelined(m.top.clone(), ports, m.latency);
    let tc = Toolchain::detect().map_err(|e| CliError::failed(e.to_string()))?;
    let lanes = v.lanes.unwrap_or(8) as usize;
    let lib = ModelLibrary::build(
        &tc,
        verilog,
        &spec,
        &BuildOptions::default().with_lanes(lanes as u32),
    )
    .map_err(|e| CliError::failed(e.to_string()))?;
    let mut model = lib
        .instantiate()
        .map_err(|e| CliError::failed(e.to_string()))?;
    let (ni, no) = (model.n_inputs(), model.n_outputs());
    let ii = m.initiation_interval.max(1) as u64;
    let cycles = v.random.unwrap_or(100_000) as usize;
    let (kx, ky) = (req.formats.x.k, req.formats.y.unwrap_or(req.formats.x).k);
    let n_rm = if req.rounding == RoundingSel::Dynamic {
        6
    } else {
        1
    };
    let t0 = std::time::Instant::now();
    let mut inputs = vec![0u64; cycles * lanes * ni];
    let mut canon_rows = vec![0u64; cycles * lanes * canon_in.len()];
    for c in 0..cycles {
        for l in 0..lanes {
            let i = c * lanes + l;
            let h = mix(v.seed ^ mix(i as u64));
            let crow = &mut canon_rows[i * canon_in.len()..(i + 1) * canon_in.len()];
            for (k, role) in canon_in.iter().enumerate() {
                crow[k] = match role {
                    // Issue every II cycles, with random gaps.
                    Role::ValidIn => (c as u64 % ii == 0 && h % 8 != 0) as u64,
                    Role::Clear => ((h >> 3) % 16 == 0) as u64,
                    Role::X => (h >> 8) & ((1 << kx) - 1),
                    Role::Y => (h >> 24) & ((1 << ky) - 1),
                    Role::Rounding => (h >> 40) % n_rm,
                    Role::Saturation => (h >> 48) & 3,
                    _ => 0,
                };
            }
            let row = &mut inputs[i * ni..(i + 1) * ni];
            for (k, &pi) in in_map.iter().enumerate() {
                row[pi] = crow[k];
            }
        }
    }
    let mut outputs = vec![0u64; cycles * lanes * no];
    model
        .eval(&inputs, &mut outputs)
        .map_err(|e| CliError::failed(e.to_string()))?;
    let mut mismatches = 0u64;
    let mut cex = Vec::new();
    for l in 0..lanes {
        let mut gm = MacModel::new(req).map_err(|e| CliError::usage(e.to_string()))?;
        for c in 0..cycles {
            let i = c * lanes + l;
            let exp = gm.step(&canon_rows[i * canon_in.len()..(i + 1) * canon_in.len()]);
            let got: Vec<u64> = out_map.iter().map(|&po| outputs[i * no + po]).collect();
            if got[..] != exp[..got.len().min(3)] {
                mismatches += 1;
                if cex.len() < 8 {
                    cex.push(serde_json::json!({
                        "lane": l, "cycle": c,
                        "inputs": canon_in.iter().zip(&canon_rows[i * canon_in.len()..(i + 1) * canon_in.len()])
                            .map(|(r, x)| format!("{r:?}={x:#x}")).collect::<Vec<_>>(),
                        "expected": exp.iter().map(|x| format!("{x:#x}")).collect::<Vec<_>>(),
                        "got": got.iter().map(|x| format!("{x:#x}")).collect::<Vec<_>>(),
                    }));
                }
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let n = (cycles * lanes) as u64;
    let j = serde_json::json!({
        "unit": "mac", "format": format_desc(m), "top": m.top,
        "space": format!("random streams: {cycles} cycles x {lanes} lanes, seed {}", v.seed),
        "vectors": n, "mismatches": mismatches, "counterexamples": cex, "complete": true,
        "seconds": secs, "vectors_per_second": n as f64 / secs,
        "latency": m.latency, "initiation_interval": m.initiation_interval,
    });
    if !v.json {
        for c in &cex {
            eprintln!("MISMATCH {c}");
        }
        eprintln!(
            "{}: {n} cycles checked step by step, {mismatches} mismatches, {secs:.2} s (II = {}, latency {})",
            if mismatches == 0 { "PASS" } else { "FAIL" },
            m.initiation_interval,
            m.latency
        );
    }
    println!("{}", serde_json::to_string_pretty(&j).unwrap_or_default());
    if mismatches == 0 {
        Ok(())
    } else {
        Err(CliError::failed(format!(
            "{mismatches} of {n} mac cycles differ from the golden stream model"
        )))
    }
}
