//! Hardware units (`decode`, `project`, `mul`, `fma`, `mac`, `dot`, `add`) and their golden meaning: for every unit a
//! generator (`generate`) and a function from an input vector (one `u64` per data input
//! port, in port order) to the expected value of every data output port, built on the
//! golden model ([`GoldenModel`]).

pub mod add;
pub mod convert;
pub mod decode;
pub mod dot;
pub mod fma;
pub mod mac;
pub mod modes;
pub mod mul;
pub mod project;
pub mod quantize;

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

/// How a unit is built and what it computes: one implementation per unit, next to its
/// generator, registered in [`def`]. What is true of a unit as data (its name, the meaning of
/// its formats, the options it accepts, its vector space) is its [`iface::UnitSpec`]; this
/// trait adds the code: the unit's own checks, its ports, its generator and its golden model.
pub trait UnitDef: Sync {
    /// The unit's own checks of a request (formats, shapes), after the generic ones of
    /// [`crate::validate`] (stages, modes, and every option the unit's spec does not list).
    fn validate(&self, req: &GenRequest) -> Result<(), GenError>;
    /// Appends the unit's ports between `valid_i` and `valid_o`, in declaration order
    /// ([`interface`] adds the clock, reset and valid ports).
    fn ports(&self, req: &GenRequest, v: &mut Vec<Port>);
    /// Builds the core (called after [`crate::validate`]).
    fn generate(&self, req: &GenRequest) -> Result<GeneratedCore, GenError>;
    /// The golden model: the expected data outputs for the data inputs, in port order
    /// (called after [`crate::validate`]). A stateful unit has a stream model of its own and
    /// says so here.
    fn model(&self, req: &GenRequest) -> Result<GoldenModel, GenError>;
}

/// The registry: every unit's [`UnitDef`]. The `match` is exhaustive, so a unit added to
/// [`Unit`] and not registered here fails to compile.
pub fn def(unit: Unit) -> &'static dyn UnitDef {
    match unit {
        Unit::Decode => &decode::Decode,
        Unit::Project => &project::Project,
        Unit::Convert => &convert::Convert,
        Unit::Add => &add::Add,
        Unit::Mul => &mul::Mul,
        Unit::Fma => &fma::Fma,
        Unit::Mac => &mac::Mac,
        Unit::Dot => &dot::Dot,
        Unit::Quantize => &quantize::Quantize,
    }
}

/// An input port of role `r`.
pub(crate) fn input(name: &str, width: u32, r: Role) -> Port {
    Port::new(name, Direction::Input, width, r)
}

/// An output port of role `r`.
pub(crate) fn output(name: &str, width: u32, r: Role) -> Port {
    Port::new(name, Direction::Output, width, r)
}

/// The run-time mode ports of `req`: `rm_i`, `sat_i`, and `rnd_i` when `random` and a
/// stochastic mode is possible (the generators declare them through [`modes::mode_ports`]).
pub(crate) fn mode_ports(req: &GenRequest, v: &mut Vec<Port>, random: bool) {
    let n = req.random_bits();
    if req.rounding == RoundingSel::Dynamic {
        v.push(input("rm_i", rm_port_width(n), Role::Rounding));
    }
    if req.saturation == SaturationSel::Dynamic {
        v.push(input("sat_i", SAT_PORT_WIDTH, Role::Saturation));
    }
    if random && n > 0 {
        v.push(input("rnd_i", n, Role::Random));
    }
}

/// The operand ports `x_i`, `y_i` of a two-operand unit (formats x and y).
pub(crate) fn operand_ports(req: &GenRequest, v: &mut Vec<Port>) {
    let f = &req.formats;
    v.push(input("x_i", f.x.k, Role::X));
    v.push(input("y_i", f.y.unwrap_or(f.x).k, Role::Y));
}

/// The block-scale ports `sx_i`, `sy_i` of a scaled two-operand unit.
pub(crate) fn scale_ports(req: &GenRequest, v: &mut Vec<Port>) {
    if let Some(sf) = req.formats.scale {
        v.push(input("sx_i", sf.k, Role::ScaleX));
        v.push(input("sy_i", sf.k, Role::ScaleY));
    }
}

/// The interface of the core `req` generates: every port with its role and width, in
/// declaration order. This is the one place that says which ports a core has (the unit's
/// own ports come from its [`UnitDef::ports`]); the generators declare exactly these (checked
/// by `finish_core`) and the golden models read their inputs and write their outputs in
/// this order (the data ports, skipping clock, reset and valid).
pub fn interface(req: &GenRequest) -> Vec<Port> {
    let clocked = req.stages > 0 || req.unit.is_stateful();
    let mut v = Vec::new();
    if clocked {
        v.push(Port::control("clk_i", Role::Clock));
        v.push(Port::control("rst_ni", Role::ResetN));
    }
    v.push(Port::control("valid_i", Role::ValidIn));
    def(req.unit).ports(req, &mut v);
    v.push(Port::control("valid_o", Role::ValidOut));
    v
}

/// A unit's golden function: the expected data outputs (port order) for the data inputs
/// (port order).
pub trait Eval: Send + Sync + std::fmt::Debug {
    /// Expected data outputs for `inputs`.
    fn eval(&self, inputs: &[u64]) -> Vec<u64>;

    /// The same into `out` (as many outputs as it holds), without allocating where the
    /// unit allows: the verification loop's path.
    fn eval_into(&self, inputs: &[u64], out: &mut [u64]) {
        let v = self.eval(inputs);
        let n = out.len().min(v.len());
        out[..n].copy_from_slice(&v[..n]);
    }
}

/// A golden function whose data outputs are `[result, flags]` (every unit but `decode`): its
/// [`Eval`] needs no allocation.
pub trait ResultFlags: Send + Sync + std::fmt::Debug {
    /// `[result, flags]` for the data inputs `inputs`.
    fn result_flags(&self, inputs: &[u64]) -> [u64; 2];
}

impl<T: ResultFlags> Eval for T {
    fn eval(&self, inputs: &[u64]) -> Vec<u64> {
        self.result_flags(inputs).to_vec()
    }

    #[inline]
    fn eval_into(&self, inputs: &[u64], out: &mut [u64]) {
        result_and_flags(out, self.result_flags(inputs))
    }
}

/// The expected outputs of a generated core, from the golden model (cheap to clone).
#[derive(Clone, Debug)]
pub struct GoldenModel(std::sync::Arc<dyn Eval>);

impl GoldenModel {
    /// The model of the core that `req` generates.
    pub fn new(req: &GenRequest) -> Result<GoldenModel, GenError> {
        crate::validate(req)?;
        def(req.unit).model(req)
    }

    /// Wraps a unit's golden function.
    pub fn of(f: impl Eval + 'static) -> GoldenModel {
        GoldenModel(std::sync::Arc::new(f))
    }

    /// Expected data outputs (port order) for the data inputs `inputs` (port order).
    #[inline]
    pub fn eval(&self, inputs: &[u64]) -> Vec<u64> {
        self.0.eval(inputs)
    }

    /// Expected data outputs into `out` (as many as it holds), without allocating where the
    /// unit allows.
    #[inline]
    pub fn eval_into(&self, inputs: &[u64], out: &mut [u64]) {
        self.0.eval_into(inputs, out)
    }
}

/// `[result, flags]` into `out` (a core without a flags port takes the result only).
#[inline(always)]
pub(crate) fn result_and_flags(out: &mut [u64], v: [u64; 2]) {
    let n = out.len().min(2);
    out[..n].copy_from_slice(&v[..n]);
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
        rto_overflow: (req.options.rto_overflow != golden::RtoOverflow::P3109)
            .then_some(req.options.rto_overflow),
        ..Modes::default()
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
            "{stages} stage(s), latency {stages} cycles; registers cut the datapath where its longest stage is shortest (see docs/rtl.md)"
        )
    };
    header.push(format!("Pipeline:    {pipe}"));
    let net = b.finish(top, header, stages).map_err(GenError::Internal)?;
    let mut net = net;
    if stages > 0 {
        net.header.push(format!(
            "Depth estimate {:.1} levels, longest stage {:.1} levels.",
            net.depth as f64 / 10.0,
            net.budget as f64 / 10.0
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
        block: req
            .unit
            .accepts(iface::UnitOption::Block)
            .then_some(req.options.block),
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
