//! Hardware units (`decode`, `project`, `mul`, `fma`, `mac`, `dot`, `add`) and their golden meaning: for every unit a
//! generator (`generate`) and a function from an input vector (one `u64` per data input
//! port, in port order) to the expected value of every data output port, built on the
//! golden model ([`GoldenModel`]).

pub mod add;
pub mod decode;
pub mod dot;
pub mod fma;
pub mod mac;
pub mod modes;
pub mod mul;
pub mod project;

use crate::ast::{ModuleBuilder, PortDecl};
use crate::blocks::rm_port_width;
use crate::emit::Netlist;
use crate::manifest::{Direction, FileList, Manifest, Modes, Port, Role, Unit, MANIFEST_SCHEMA};
use crate::{GenError, GenRequest, GeneratedCore, RoundingSel, SaturationSel};
use golden::{Format, Specials};

/// Width of the `sat_i` port: an index into [`crate::manifest::SATURATION_ENCODING`].
pub const SAT_PORT_WIDTH: u32 = 2;

/// Width of `flags_o` ({invalid, overflow, underflow, inexact}) and of decode's `class_o`.
pub const FLAGS_WIDTH: u32 = 4;

/// The interface of the core `req` generates: every port with its role and width, in
/// declaration order. This is the one place that says which ports a unit has; the
/// generators declare exactly these (checked by [`finish_core`]) and the golden models read
/// their inputs and write their outputs in this order (the data ports, skipping clock, reset
/// and valid).
pub fn interface(req: &GenRequest) -> Vec<Port> {
    let inp = |n: &str, w: u32, r: Role| Port::new(n, Direction::Input, w, r);
    let out = |n: &str, w: u32, r: Role| Port::new(n, Direction::Output, w, r);
    let clocked = req.stages > 0 || req.unit == Unit::Mac;
    let mut v = Vec::new();
    if clocked {
        v.push(Port::control("clk_i", Role::Clock));
        v.push(Port::control("rst_ni", Role::ResetN));
    }
    v.push(Port::control("valid_i", Role::ValidIn));
    let n = req.random_bits();
    let modes = |v: &mut Vec<Port>, random: bool| {
        if req.rounding == RoundingSel::Dynamic {
            v.push(inp("rm_i", rm_port_width(n), Role::Rounding));
        }
        if req.saturation == SaturationSel::Dynamic {
            v.push(inp("sat_i", SAT_PORT_WIDTH, Role::Saturation));
        }
        if random && n > 0 {
            v.push(inp("rnd_i", n, Role::Random));
        }
    };
    let f = &req.formats;
    let scales = |v: &mut Vec<Port>| {
        if let Some(sf) = f.scale {
            v.push(inp("sx_i", sf.k, Role::ScaleX));
            v.push(inp("sy_i", sf.k, Role::ScaleY));
        }
    };
    match req.unit {
        Unit::Decode => {
            v.push(inp("x_i", f.x.k, Role::X));
            v.push(out("class_o", FLAGS_WIDTH, Role::Class));
            if decode::exact_in_binary32(&f.x) {
                v.push(out("r_o", 32, Role::Result));
            }
            v.push(out("sign_o", 1, Role::Sign));
            v.push(out("exp_o", decode::exp_width(&f.x), Role::Exponent));
            v.push(out("sig_o", f.x.p, Role::Significand));
        }
        Unit::Project => {
            v.push(inp("z_i", f.x.k, Role::Z));
            if let Some(sf) = f.scale {
                v.push(inp("s_i", sf.k, Role::ScaleX));
            }
            modes(&mut v, true);
            v.push(out("r_o", f.r.k, Role::Result));
            v.push(out("flags_o", FLAGS_WIDTH, Role::Flags));
        }
        Unit::Mul => {
            v.push(inp("x_i", f.x.k, Role::X));
            v.push(inp("y_i", f.y.unwrap_or(f.x).k, Role::Y));
            scales(&mut v);
            modes(&mut v, true);
            v.push(out("r_o", f.r.k, Role::Result));
            if !req.options.no_flags {
                v.push(out("flags_o", FLAGS_WIDTH, Role::Flags));
            }
        }
        Unit::Fma => {
            v.push(inp("x_i", f.x.k, Role::X));
            v.push(inp("y_i", f.y.unwrap_or(f.x).k, Role::Y));
            scales(&mut v);
            v.push(inp("z_i", 32, Role::Z));
            modes(&mut v, false);
            v.push(out("r_o", 32, Role::Result));
            v.push(out("flags_o", FLAGS_WIDTH, Role::Flags));
        }
        Unit::Mac => {
            v.push(inp("clear_i", 1, Role::Clear));
            v.push(inp("x_i", f.x.k, Role::X));
            v.push(inp("y_i", f.y.unwrap_or(f.x).k, Role::Y));
            modes(&mut v, false);
            v.push(out("acc_o", 32, Role::Result));
            v.push(out("flags_o", FLAGS_WIDTH, Role::Flags));
            if req.options.interleave > 1 {
                v.push(out(
                    "lane_o",
                    mac::lane_width(req.options.interleave),
                    Role::Lane,
                ));
            }
        }
        Unit::Dot => {
            let s = req.options.dot;
            let fy = f.y.unwrap_or(f.x);
            for (role, fmt, name) in [(Role::X, f.x, "x"), (Role::Y, fy, "y")] {
                for i in 0..s.n {
                    v.push(Port::element(
                        format!("{name}{i}_i"),
                        Direction::Input,
                        fmt.k,
                        role,
                        i,
                    ));
                }
            }
            scales(&mut v);
            if s.addend {
                v.push(inp("z_i", 32, Role::Z));
            }
            modes(&mut v, false);
            v.push(out("r_o", f.r.k, Role::Result));
            v.push(out("flags_o", FLAGS_WIDTH, Role::Flags));
        }
        Unit::Add => {
            v.push(inp("x_i", f.x.k, Role::X));
            v.push(inp("y_i", f.y.unwrap_or(f.x).k, Role::Y));
            if req.options.add_op == add::AddOp::Dynamic {
                v.push(inp("sub_i", 1, Role::Sub));
            }
            modes(&mut v, true);
            v.push(out("r_o", f.r.k, Role::Result));
            v.push(out("flags_o", FLAGS_WIDTH, Role::Flags));
        }
    }
    v.push(Port::control("valid_o", Role::ValidOut));
    v
}

/// The expected outputs of a generated core, from the golden model.
#[derive(Clone, Debug)]
pub enum GoldenModel {
    /// `decode` of a format.
    Decode(Format),
    /// `project`.
    Project(project::ProjectModel),
    /// `mul`.
    Mul(mul::MulModel),
    /// `fma` (the stateful `mac` has its own stream model, [`mac::MacModel`]).
    Fma(fma::FmaModel),
    /// `dot`.
    Dot(dot::DotModel),
    /// `add`.
    Add(add::AddModel),
}

impl GoldenModel {
    /// The model of the core that `req` generates.
    pub fn new(req: &GenRequest) -> Result<GoldenModel, GenError> {
        crate::validate(req)?;
        match req.unit {
            crate::manifest::Unit::Decode => Ok(GoldenModel::Decode(req.formats.x)),
            crate::manifest::Unit::Project => {
                Ok(GoldenModel::Project(project::ProjectModel::new(req)?))
            }
            crate::manifest::Unit::Mul => Ok(GoldenModel::Mul(mul::MulModel::new(req)?)),
            crate::manifest::Unit::Fma => Ok(GoldenModel::Fma(fma::FmaModel::new(req)?)),
            crate::manifest::Unit::Dot => Ok(GoldenModel::Dot(dot::DotModel::new(req)?)),
            crate::manifest::Unit::Add => Ok(GoldenModel::Add(add::AddModel::new(req)?)),
            u => Err(GenError::Unsupported(format!("unit {}", u.name()))),
        }
    }

    /// Expected data outputs (port order) for the data inputs `inputs` (port order).
    pub fn eval(&self, inputs: &[u64]) -> Vec<u64> {
        match self {
            GoldenModel::Decode(f) => {
                decode::golden_outputs(f, inputs.first().copied().unwrap_or(0))
            }
            GoldenModel::Project(m) => m.eval(inputs).to_vec(),
            GoldenModel::Mul(m) => m.eval(inputs).to_vec(),
            GoldenModel::Fma(m) => m.eval(inputs).to_vec(),
            GoldenModel::Dot(m) => m.eval(inputs).to_vec(),
            GoldenModel::Add(m) => m.eval(inputs).to_vec(),
        }
    }
}

/// Expected data outputs of the core `req` generates, for one input vector.
pub fn golden_outputs(req: &GenRequest, inputs: &[u64]) -> Result<Vec<u64>, GenError> {
    Ok(GoldenModel::new(req)?.eval(inputs))
}

/// One line describing a format for headers.
pub fn describe(f: &Format) -> String {
    let fam = match f.specials {
        Specials::Ieee => "ieee (exp all ones: Inf / NaN)".to_string(),
        Specials::Fn => "fn (NaN = S.1..1, no Inf)".to_string(),
        Specials::Fnuz => format!("fnuz (NaN = {:#x}, no Inf, no -0)", f.sign_bit()),
        Specials::P3109Finite => format!(
            "p3109 finite (NaN = {:#x}, no Inf, no -0)",
            f.nan_code().unwrap_or(0)
        ),
        Specials::P3109Extended => format!(
            "p3109 extended (NaN = {:#x}, +Inf = {:#x}, no -0)",
            f.nan_code().unwrap_or(0),
            f.pos_inf_code().unwrap_or(0)
        ),
        Specials::NoNan => "nonan (no NaN, no Inf)".to_string(),
        Specials::E8m0 => "e8m0 (NaN = all ones, no zero, no subnormals)".to_string(),
    };
    format!(
        "{}: K={} P={} bias={} {}, family {}, emin={} emax={}",
        f.name(),
        f.k,
        f.p,
        f.bias,
        if f.signed { "signed" } else { "unsigned" },
        fam,
        f.emin(),
        f.emax()
    )
}

/// The code bit layout of a format as a comment line.
pub fn layout(f: &Format) -> String {
    let man = f.man_bits();
    let mb = f.mag_bits();
    let mut parts = Vec::new();
    if f.signed {
        parts.push(format!("sign [{}]", f.k - 1));
    }
    parts.push(format!("exponent [{}:{}]", mb - 1, man));
    if man > 0 {
        parts.push(format!("trailing significand [{}:0]", man - 1));
    }
    format!("code layout: {}", parts.join(" | "))
}

/// Manifest mode fields of a request.
pub(crate) fn manifest_modes(req: &GenRequest) -> Modes {
    Modes {
        rounding: match req.rounding {
            RoundingSel::Fixed(r) => Some(r.name().to_string()),
            RoundingSel::Dynamic => None,
        },
        saturation: match req.saturation {
            SaturationSel::Fixed(s) => Some(s.name().to_string()),
            SaturationSel::Dynamic => None,
        },
        sr_bits: req.random_bits(),
        ftz: req.options.ftz,
        tininess_before: req.options.tininess == golden::Tininess::BeforeRounding,
        nonan_code: req.options.nonan_code,
        signaling_nan: req.options.signaling_nan,
        acc_guard_bits: req.options.acc_guard,
        interleave: req.options.interleave,
        subtract: req.options.add_op == add::AddOp::Sub,
    }
}

/// Pipelines and prints `b`, and builds the manifest. The ports the builder declared must be
/// exactly those of [`interface`] (names, order, widths); their roles come from there.
pub(crate) fn finish_core(
    req: &GenRequest,
    b: ModuleBuilder,
    top: &str,
    mut header: Vec<String>,
) -> Result<GeneratedCore, GenError> {
    header.insert(0, crate::header_line(req));
    header.insert(1, String::new());
    let stages = req.stages;
    let pipe = if stages == 0 {
        "0 stages (combinational), latency 0 cycles".to_string()
    } else {
        format!(
            "{stages} stage(s), latency {stages} cycles; registers cut the datapath at depth multiples of the per-stage budget (see docs/rtl.md)"
        )
    };
    header.push(format!("Pipeline:    {pipe}"));
    let net = b.finish(top, header, stages).map_err(GenError::Internal)?;
    let mut net = net;
    if stages > 0 {
        net.header.push(format!(
            "Depth estimate {} levels, budget {} levels per stage.",
            net.depth, net.budget
        ));
    }
    let ports = check_interface(req, &net)?;
    let depth = net.depth;
    let verilog = net.emit();
    let manifest = Manifest {
        schema: MANIFEST_SCHEMA,
        generator: format!("fp8gen {}", golden::VERSION),
        command: req.canonical_command(),
        unit: req.unit,
        top: top.to_string(),
        verilog: FileList(vec![format!("{top}.v")]),
        include_dirs: Vec::new(),
        defines: Default::default(),
        parameters: Default::default(),
        formats: req.formats.clone(),
        modes: manifest_modes(req),
        stages,
        latency: stages,
        initiation_interval: 1,
        dot: (req.unit == Unit::Dot).then_some(req.options.dot),
        ports,
    };
    Ok(GeneratedCore {
        verilog,
        manifest,
        top: top.to_string(),
        depth,
    })
}

/// The interface of `req` ([`interface`]) after checking that the finished module `net`
/// declares exactly these ports (names, order, directions, widths).
pub(crate) fn check_interface(req: &GenRequest, net: &Netlist) -> Result<Vec<Port>, GenError> {
    let ports = interface(req);
    let declared: Vec<(&str, bool, u32)> = net
        .ports
        .iter()
        .map(|p| (p.name.as_str(), p.input, p.width))
        .collect();
    let expected: Vec<(&str, bool, u32)> = ports
        .iter()
        .map(|p| (p.name.as_str(), p.direction == Direction::Input, p.width))
        .collect();
    if declared != expected {
        return Err(GenError::Internal(format!(
            "the {} generator declared ports {declared:?}, its interface says {expected:?}",
            req.unit.name()
        )));
    }
    Ok(ports)
}

/// The ports of a manifest as the port list [`ModuleBuilder::instance`] takes.
pub(crate) fn port_decls(ports: &[Port]) -> Vec<PortDecl> {
    ports
        .iter()
        .map(|p| PortDecl {
            name: p.name.clone(),
            input: p.direction == Direction::Input,
            width: p.width,
        })
        .collect()
}
