//! `verify --from DIR --prove`: a user's core as it is (docs/byo.md) proven against the
//! independent formal reference. The core is seen through a small wrapper with the
//! reference's ports: the rounding port driven in the core's own encoding for each legal
//! mode, the flag bits picked from where the core puts them (bits the unit never raises
//! checked 0), tied ports held at their value, the manifest's parameters given to the
//! instance exactly as the simulation wrapper gives them. Combinational cores go through the
//! pair miter; clocked (feed-forward) cores are unrolled from an arbitrary register state.
//! The text is Verilator's preprocessed text, read by yosys-slang (`read_slang`).
//!
//! Every reason a core cannot be proven is collected before anything runs and reported in
//! one error.

use iface::native::CANONICAL_FLAGS;
use iface::{Direction, Manifest, Port, Role};
use std::fmt::Write as _;

use crate::native::{flag_bits, rounding_table};
use crate::{compiled_text, sim_err, usage, Dut, VerifyError};

/// The wrapper's name around core `top`.
fn wrapper_name(top: &str) -> String {
    format!("fp8gen_byo_{top}")
}

/// Outputs and flag bits a proof leaves out (`--ignore`, as in simulation).
#[derive(Clone, Debug, Default)]
pub struct Waivers {
    /// Whole outputs, by role.
    pub roles: Vec<Role>,
    /// Flag bits, by name (`underflow`, `divzero`, …).
    pub flags: Vec<String>,
}

/// Every reason `dut` cannot be proven with these waivers (empty: it can be).
pub fn refusals(dut: &Dut, w: &Waivers) -> Vec<String> {
    let m = &dut.manifest;
    let mut why = Vec::new();
    if dut.request.unit.is_stateful() {
        why.push(format!(
            "a {} core keeps state across inputs (an accumulator): a proof of a user's {} core is out of reach; verify it by simulation (streams from reset)",
            dut.request.unit, dut.request.unit
        ));
    } else if m.is_clocked() && m.latency == 0 {
        why.push(format!(
            "`{}` has a clock but latency 0: give the manifest's \"latency\" (cycles from input to output) of the pipeline",
            m.top
        ));
    }
    if let Err(e) = formal::generate_reference(&proof_request(dut)) {
        let t = e.to_string();
        why.push(t.strip_prefix("not supported: ").unwrap_or(&t).to_string());
    }
    for r in &w.roles {
        if !m
            .ports
            .iter()
            .any(|p| p.role == *r && p.direction == Direction::Output)
        {
            why.push(format!(
                "--ignore {r}: `{}` has no output with role {r}; waive an output the core has",
                m.top
            ));
        }
    }
    if !w.flags.is_empty() && m.port(Role::Flags).is_none() {
        why.push(format!(
            "--ignore flags.{}: `{}` has no flags port",
            w.flags[0], m.top
        ));
    }
    why
}

/// The request the reference is built for: the core's semantics, with the flags the golden
/// model computes even where the core has no flags port (they are then not compared).
fn proof_request(dut: &Dut) -> rtl::GenRequest {
    let mut req = dut.request.clone();
    req.options.no_flags = false;
    req.stages = 0;
    req
}

/// The wrapper around the user's core, what to compare, the legal-mode assumptions and the
/// words of the port map.
struct Wrapped {
    verilog: String,
    ports: Vec<Port>,
    cmp: formal::Compare,
    assumptions: Vec<String>,
    map: Vec<String>,
}

const ZERO_PORT: &str = "fp8gen_zero_o";

fn lit(width: u32, v: u64) -> String {
    format!("{width}'h{v:x}")
}

fn vdecl(p: &Port) -> String {
    let dir = match p.direction {
        Direction::Input => "input ",
        Direction::Output => "output",
    };
    if p.width == 1 {
        format!("{dir} wire {}", p.name)
    } else {
        format!("{dir} wire [{}:0] {}", p.width - 1, p.name)
    }
}

fn wrap(dut: &Dut, reference: &rtl::GeneratedCore, w: &Waivers) -> Result<Wrapped, VerifyError> {
    let m: &Manifest = &dut.manifest;
    let rports = &reference.manifest.ports;
    let mut ports: Vec<Port> = Vec::new();
    let clocked = m.is_clocked();
    if clocked {
        ports.push(Port::new("clk_i", Direction::Input, 1, Role::Clock));
        if m.port(Role::Reset).is_some() || m.port(Role::ResetN).is_some() {
            ports.push(Port::new("rst_ni", Direction::Input, 1, Role::ResetN));
        }
    }
    ports.extend(rports.iter().cloned());
    let mut body = String::new();
    let mut conns: Vec<String> = Vec::new();
    let mut map: Vec<String> = Vec::new();
    let mut driven: Vec<String> = Vec::new();
    let mut masks: Vec<(String, u64)> = Vec::new();
    let mut zero_mask = 0u64;
    let mut zero_width = 0;
    let mut assumptions = formal::prove::mode_assumptions(&proof_request(dut));
    let table = rounding_table(m)?;
    for p in &m.ports {
        let counterpart = rports
            .iter()
            .find(|r| r.role == p.role && r.index == p.index && r.direction == p.direction);
        let expr = match (p.direction, p.role) {
            (_, Role::Clock) => {
                map.push(format!("{} = clk_i", p.name));
                "clk_i".to_string()
            }
            (_, Role::ResetN) => {
                map.push(format!("{} = rst_ni", p.name));
                "rst_ni".to_string()
            }
            (_, Role::Reset) => {
                map.push(format!("{} = ~rst_ni (active high)", p.name));
                "~rst_ni".to_string()
            }
            (Direction::Input, _) if p.tie.is_some() => {
                let v = p.tie.unwrap_or(0);
                map.push(format!("{} tied to {v:#x}", p.name));
                lit(p.width, v)
            }
            (Direction::Input, Role::Rounding) if m.modes.rounding_encoding.is_some() => {
                let r = counterpart.ok_or_else(|| {
                    usage(format!(
                        "the reference of {} has no rounding port; drop modes.rounding_encoding",
                        crate::describe_request(&dut.request)
                    ))
                })?;
                let wire = format!("core_{}", p.name);
                let mut e = lit(p.width, table.first().map_or(0, |t| t.0));
                let mut legal = Vec::new();
                let mut words = Vec::new();
                for (v, mode) in table.iter().rev() {
                    let c = rtl::blocks::rounding_index(*mode) as u64;
                    e = format!(
                        "({} == {}) ? {} : {e}",
                        r.name,
                        lit(r.width, c),
                        lit(p.width, *v)
                    );
                    legal.push(format!("({} == {})", r.name, lit(r.width, c)));
                    words.push(format!("{} {v}", mode.name()));
                }
                words.reverse();
                legal.reverse();
                let _ = writeln!(
                    body,
                    "  // {} in the core's encoding for each legal mode of {}",
                    p.name, r.name
                );
                let _ = writeln!(body, "  wire [{}:0] {wire} = {e};", p.width - 1);
                // The legal modes are exactly those the encoding names (simulation drives
                // no other value).
                assumptions.retain(|a| !a.starts_with(&format!("{} ", r.name)));
                assumptions.push(legal.join(" || "));
                map.push(format!(
                    "{} = {} in the core's encoding ({})",
                    p.name,
                    r.name,
                    words.join(", ")
                ));
                wire
            }
            (Direction::Input, _) => {
                let r = counterpart.ok_or_else(|| {
                    usage(format!(
                        "input `{}` of `{}` has no counterpart in the reference",
                        p.name, m.top
                    ))
                })?;
                if p.width > r.width {
                    map.push(format!("{} = {} (zero-extended)", p.name, r.name));
                    format!("{{{}'d0, {}}}", p.width - r.width, r.name)
                } else {
                    if r.name != p.name {
                        map.push(format!("{} = {}", p.name, r.name));
                    }
                    r.name.clone()
                }
            }
            (Direction::Output, Role::Flags) if m.modes.flags.is_some() => {
                let r = counterpart.ok_or_else(|| {
                    usage(format!("the reference of `{}` has no flags port", m.top))
                })?;
                let fb = flag_bits(m);
                let wire = format!("core_{}", p.name);
                let _ = writeln!(body, "  wire [{}:0] {wire};", p.width - 1);
                let mut bits = Vec::new();
                let mut words = Vec::new();
                for cb in (0..r.width).rev() {
                    let name = CANONICAL_FLAGS
                        .iter()
                        .find(|(_, b)| *b == cb)
                        .map(|(n, _)| *n)
                        .unwrap_or("");
                    match fb.bit(name) {
                        Some(kb) => {
                            bits.push(format!("{wire}[{kb}]"));
                            words.push(format!("{name} = {}[{kb}]", p.name));
                        }
                        None => bits.push("1'b0".into()),
                    }
                }
                let _ = writeln!(
                    body,
                    "  // {} {{invalid, overflow, underflow, inexact}} from the core's layout",
                    r.name
                );
                let _ = writeln!(body, "  assign {} = {{{}}};", r.name, bits.join(", "));
                driven.push(r.name.clone());
                let mut zero = Vec::new();
                for b in 0..p.width {
                    let name = fb.name(b);
                    let canonical = CANONICAL_FLAGS.iter().any(|(c, _)| *c == name);
                    if !canonical && !w.flags.contains(&name) && !w.roles.contains(&Role::Flags) {
                        zero_mask |= 1 << b;
                        zero.push(format!("{b} ({name})"));
                    }
                }
                zero_width = p.width;
                map.push(format!(
                    "{} = {}: {}{}",
                    r.name,
                    p.name,
                    words.join(", "),
                    if zero.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; {} bits {} never raised: checked 0",
                            p.name,
                            zero.join(", ")
                        )
                    }
                ));
                wire
            }
            (Direction::Output, _) => {
                let r = counterpart.ok_or_else(|| {
                    usage(format!(
                        "output `{}` of `{}` has no counterpart in the reference",
                        p.name, m.top
                    ))
                })?;
                driven.push(r.name.clone());
                if r.name != p.name {
                    map.push(format!("{} = {}", r.name, p.name));
                }
                r.name.clone()
            }
        };
        conns.push(format!(".{}({expr})", p.name));
    }
    // Reference outputs the core does not have (valid_o of a combinational core, flags of a
    // core without a flags port): driven 0 and not compared.
    for r in rports.iter().filter(|r| r.direction == Direction::Output) {
        if !driven.contains(&r.name) {
            let _ = writeln!(body, "  assign {} = {};", r.name, lit(r.width, 0));
            masks.push((r.name.clone(), 0));
            map.push(format!("{} not compared (the core has none)", r.name));
        }
    }
    // Waivers.
    for role in &w.roles {
        for r in rports.iter().filter(|r| r.role == *role) {
            masks.push((r.name.clone(), 0));
        }
    }
    if let Some(r) = rports.iter().find(|r| r.role == Role::Flags) {
        let mut mask = iface::width_mask(r.width);
        for n in &w.flags {
            if let Some((_, cb)) = CANONICAL_FLAGS.iter().find(|(c, _)| c == n) {
                mask &= !(1u64 << cb);
            }
        }
        if mask != iface::width_mask(r.width) && !masks.iter().any(|(n, _)| *n == r.name) {
            masks.push((r.name.clone(), mask));
        }
    }
    let mut zero = Vec::new();
    if zero_mask != 0 {
        let fp = m
            .port(Role::Flags)
            .map(|p| p.name.clone())
            .unwrap_or_default();
        ports.push(Port::new(
            ZERO_PORT,
            Direction::Output,
            zero_width,
            Role::Data,
        ));
        let _ = writeln!(
            body,
            "  // {fp} bits the unit never raises, checked 0\n  assign {ZERO_PORT} = core_{fp} & {};",
            lit(zero_width, zero_mask)
        );
        zero.push((ZERO_PORT.to_string(), zero_mask));
    }
    let params = if m.parameters.is_empty() {
        String::new()
    } else {
        let p: Vec<String> = m
            .parameters
            .iter()
            .map(|(k, v)| format!(".{k}({v})"))
            .collect();
        format!(" #({})", p.join(", "))
    };
    let top = wrapper_name(&m.top);
    let mut v = String::new();
    let _ = writeln!(
        v,
        "// fp8gen verify --prove: `{}` as it is, seen through the ports of the reference\n// (docs/byo.md)",
        m.top
    );
    let decls: Vec<String> = ports.iter().map(|p| format!("  {}", vdecl(p))).collect();
    let _ = writeln!(v, "module {top} (\n{}\n);", decls.join(",\n"));
    v.push_str(&body);
    let _ = writeln!(
        v,
        "  {}{params} u_core (\n    {}\n  );\nendmodule",
        m.top,
        conns.join(",\n    ")
    );
    Ok(Wrapped {
        verilog: v,
        ports,
        cmp: formal::Compare {
            masks,
            zero,
            slang_top: Some(top),
        },
        assumptions,
        map,
    })
}

/// `verify --from DIR --prove`: `dut` against the reference of its request, with outputs
/// and flag bits waived as `w` says.
pub fn prove(
    dut: &Dut,
    w: &Waivers,
    opts: &formal::ProveOptions,
) -> Result<formal::ProofReport, VerifyError> {
    let m = &dut.manifest;
    let why = refusals(dut, w);
    if !why.is_empty() {
        return Err(usage(format!(
            "--prove cannot prove `{}`; every reason:\n  - {}",
            m.top,
            why.join("\n  - ")
        )));
    }
    let req = proof_request(dut);
    let reference = formal::generate_reference(&req).map_err(|e| usage(e.to_string()))?;
    let tc = sim::Toolchain::detect().map_err(sim_err)?;
    let pre = dut
        .sources
        .preprocess(&tc, &sim::default_cache_dir())
        .map_err(sim_err)?;
    let wrapped = wrap(dut, &reference, w)?;
    let top = wrapper_name(&m.top);
    let text = format!("{}\n{}", pre.text, wrapped.verilog);
    let (z, x) = formal::prove::undef_reach_with(&text, &top, true)
        .map_err(|e| VerifyError::Failed(e.to_string()))?;
    // The wrapper's port names, as the core's.
    let core_name = |n: &String| -> String {
        wrapped
            .ports
            .iter()
            .find(|p| p.name == *n)
            .and_then(|p| {
                m.ports
                    .iter()
                    .find(|q| q.role == p.role && q.index == p.index && q.direction == p.direction)
            })
            .map_or_else(|| n.clone(), |q| q.name.clone())
    };
    let z: Vec<String> = z.iter().map(core_name).collect();
    let x: Vec<String> = x.iter().map(core_name).collect();
    if !z.is_empty() {
        return Err(VerifyError::Failed(format!(
            "core `{}` drives z (high impedance) on {}: simulation reads z as 0 and the solver cannot prove a tristate value; drive defined values (nothing was proven)",
            m.top,
            z.join(", ")
        )));
    }
    let mut manifest = reference.manifest.clone();
    manifest.top = top.clone();
    manifest.ports = wrapped.ports.clone();
    manifest.latency = m.latency;
    let core = rtl::GeneratedCore {
        verilog: text,
        manifest,
        top: top.clone(),
        depth: 0,
    };
    let fe = |e: formal::FormalError| match e {
        formal::FormalError::Unsupported(_) => VerifyError::Usage(e.to_string()),
        e => VerifyError::Failed(e.to_string()),
    };
    let mut r = if m.is_clocked() {
        let mut r =
            formal::prove_unrolled(&core, &reference, &wrapped.assumptions, &wrapped.cmp, opts)
                .map_err(fe)?;
        if let Some(c) = &mut r.counterexample {
            golden_of_cycle_one(&req, &reference, c);
        }
        r
    } else {
        let spec = formal::PairSpec {
            gold_verilog: core.verilog.clone(),
            gold_top: top.clone(),
            gold_ports: core.manifest.ports.clone(),
            gate_verilog: reference.verilog.clone(),
            gate_top: reference.top.clone(),
            gate_ports: reference.manifest.ports.clone(),
            assumptions: wrapped.assumptions.clone(),
            split: formal::prove::default_split(&req),
        };
        let mut r = formal::prove_pair_with(&spec, &wrapped.cmp, opts).map_err(fe)?;
        if opts.replay {
            if let Some(c) = &r.counterexample {
                let mut rc =
                    formal::prove::replay(&req, &[&core, &reference], &c.inputs, &opts.vcd)
                        .map_err(fe)?;
                rc.yosys_vcd = c.yosys_vcd.clone();
                r.counterexample = Some(rc);
            }
        }
        r
    };
    // A replay compares every output of the wrapper; the core differs from the golden model
    // only in what the proof compares.
    if let Some(c) = &mut r.counterexample {
        if !m.is_clocked() {
            let differs = replay_differs(c, &top, &wrapped);
            c.differs_from_golden.retain(|d| *d != top);
            if differs {
                c.differs_from_golden.insert(0, top.clone());
            }
        }
    }
    // The report names the user's core, not its wrapper.
    r.gold = m.top.clone();
    r.statement = r.statement.replace(&top, &format!("`{}`", m.top));
    if let Some(c) = &mut r.counterexample {
        for d in &mut c.differs_from_golden {
            if *d == top {
                *d = m.top.clone();
            }
        }
        for t in &mut c.replayed {
            if t.0 == top {
                t.0 = m.top.clone();
            }
        }
    }
    let params: Vec<String> = m
        .parameters
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let modes = mode_words(dut);
    let _ = write!(
        r.statement,
        "; port map: {}; modes: {modes}; parameters: {}; waived: {}; compiled text: {}, read by yosys-slang (read_slang)",
        if wrapped.map.is_empty() {
            "by role, same names".to_string()
        } else {
            wrapped.map.join("; ")
        },
        if params.is_empty() {
            "none".to_string()
        } else {
            params.join(" ")
        },
        waived_words(w),
        compiled_text(&dut.sources, &pre)
    );
    if let Some(c) = &r.counterexample {
        // The solver refutes with values for the x bits the replay's 2-state simulation fixes.
        if !m.is_clocked() && !c.differs_from_golden.contains(&m.top) && !c.replayed.is_empty() {
            let outs: Vec<String> = if x.is_empty() {
                m.ports
                    .iter()
                    .filter(|p| p.direction == Direction::Output)
                    .map(|p| p.name.clone())
                    .collect()
            } else {
                x.clone()
            };
            r.detail = Some(format!(
                "core `{}` drives x/z on {}: the solver may choose any value for an x, and for these inputs some choice is wrong; Verilator's 2-state replay happened to pick a right one",
                m.top,
                outs.join(", ")
            ));
        }
    }
    Ok(r)
}

/// Whether the replayed wrapper `top` differs from the golden model in a compared bit.
fn replay_differs(c: &formal::CexReport, top: &str, w: &Wrapped) -> bool {
    let hex = |v: &str| u64::from_str_radix(&v.replace(['x', 'z'], "0"), 16).unwrap_or(0);
    c.replayed
        .iter()
        .filter(|t| t.0 == top)
        .any(|(_, name, v)| {
            let Some(p) = w.ports.iter().find(|p| p.name == *name) else {
                return false;
            };
            let mask = w
                .cmp
                .masks
                .iter()
                .find(|(n, _)| n == name)
                .map_or(p.mask(), |(_, m)| *m);
            let want = match p.role {
                Role::Data => Some(0),
                Role::ValidOut => c
                    .golden
                    .iter()
                    .find(|g| g.0 == "valid_out")
                    .map(|g| hex(&g.1)),
                r => {
                    let key = format!("{r:?}").to_lowercase();
                    c.golden.iter().find(|g| g.0 == key).map(|g| hex(&g.1))
                }
            };
            want.is_some_and(|g| (g ^ hex(v)) & mask != 0)
        })
}

/// The modes the proof covers, in words.
fn mode_words(dut: &Dut) -> String {
    let req = &dut.request;
    let m = &dut.manifest;
    let r = match req.rounding {
        rtl::RoundingSel::Fixed(r) => format!("rounding {} (fixed)", r.name()),
        rtl::RoundingSel::Dynamic => {
            let names: Vec<&str> = match rounding_table(m) {
                Ok(t) if !t.is_empty() => t.iter().map(|(_, r)| r.name()).collect(),
                _ => iface::ROUNDING_ENCODING[..iface::DETERMINISTIC_ROUNDINGS].to_vec(),
            };
            format!(
                "rounding {} (every legal value of the rounding port)",
                names.join(", ")
            )
        }
    };
    let s = match req.saturation {
        rtl::SaturationSel::Fixed(s) => format!("saturation {} (fixed)", s.name()),
        rtl::SaturationSel::Dynamic => "every saturation mode (sat_i: every value)".into(),
    };
    format!("{r}, {s}")
}

fn waived_words(w: &Waivers) -> String {
    let mut v: Vec<String> = w.roles.iter().map(|r| r.to_string()).collect();
    v.extend(w.flags.iter().map(|f| format!("flags.{f}")));
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// A sequential counterexample's golden outputs for its cycle-1 inputs (the reference's
/// port names), the values the core should show in the last cycle.
fn golden_of_cycle_one(
    req: &rtl::GenRequest,
    reference: &rtl::GeneratedCore,
    c: &mut formal::CexReport,
) {
    let Ok(model) = rtl::units::GoldenModel::new(req) else {
        return;
    };
    let ins: Vec<&Port> = reference
        .manifest
        .ports
        .iter()
        .filter(|p| p.direction == Direction::Input && p.role != Role::ValidIn)
        .collect();
    let val = |name: &str| {
        c.inputs
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| u64::from_str_radix(&v.replace(['x', 'z'], "0"), 16).ok())
            .unwrap_or(0)
    };
    let data: Vec<u64> = ins.iter().map(|p| val(&p.name) & p.mask()).collect();
    let out = model.eval(&data);
    c.golden = reference
        .manifest
        .ports
        .iter()
        .filter(|p| p.direction == Direction::Output && p.role != Role::ValidOut)
        .zip(&out)
        .map(|(p, v)| (p.name.clone(), format!("{v:x}")))
        .collect();
}
