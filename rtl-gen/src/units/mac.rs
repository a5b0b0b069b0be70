//! The `mac` unit: the binary32-accumulator FMA ([`super::fma`]) wrapped as a streaming
//! accumulator, `acc ← x·y + acc` (one rounding per step).
//!
//! Semantics (cycle level; see also [`MacModel`]):
//!
//! * a step is issued in a cycle with `valid_i = 1`; it computes
//!   `golden::fma(x_i, y_i, z)` with `z = clear_i ? +0 : acc` (so `clear_i` with `valid_i`
//!   starts a new sum: `acc ← x·y + (+0)`, rounded once; `clear_i` without `valid_i` is
//!   ignored — use `rst_ni` to zero the accumulator without a product);
//! * `acc_o` / `flags_o` are registers: they show the accumulator and the flags of the last
//!   completed step and hold between steps; `valid_o` pulses for one cycle when a step
//!   completes; a synchronous reset (`rst_ni = 0`) sets `acc = +0`, `flags = 0`;
//! * latency `L = stages + 1` cycles (the FMA's `stages` pipeline registers plus the
//!   accumulator register) from a step's input cycle to the cycle in which `acc_o` shows it;
//! * initiation interval `II = stages + 1`: the accumulator is a loop-carried dependency, so a
//!   new step may be issued only when the previous one has reached the accumulator, i.e. at
//!   least `II` cycles after it (steps issued earlier read a stale accumulator). With
//!   `stages = 0` the whole FMA is combinational inside the loop and `II = 1`; pipelining
//!   raises Fmax but not the throughput of one accumulator (interleave `II` independent MACs,
//!   e.g. for `II` dot products, to use every cycle).
//!
//! The Verilog file holds two modules: `<top>_fma` (the generated FMA core, pipelined by the
//! generator) and `<top>` (the accumulator wrapper: state registers around an instance of the
//! core, built with the same [`ModuleBuilder`] as every datapath, with 0 stages).

use super::fma::{header_lines, top_name, FmaModel};
use super::{check_interface, finish_core, port_decls};
use crate::ast::{Expr, ModuleBuilder, StateReg};
use crate::manifest::{Role, Unit};
use crate::{GenError, GenRequest, GeneratedCore, RoundingSel, SaturationSel};

/// Latency and initiation interval of the `mac` core with `stages` FMA pipeline stages.
pub fn latency(stages: u32) -> u32 {
    stages + 1
}

/// Initiation interval of a binary32-accumulator `mac` with `stages` stages and `lanes`
/// interleaved accumulators: a step every `⌈(stages + 1) / lanes⌉` cycles.
pub fn initiation_interval(stages: u32, lanes: u32) -> u32 {
    latency(stages).div_ceil(lanes.max(1))
}

/// Width of `lane_o` for `lanes` interleaved accumulators.
pub fn lane_width(lanes: u32) -> u32 {
    crate::ast::ubits(lanes.saturating_sub(1) as u128)
}

/// The interleaved accumulators of the golden model (`--interleave L`).
#[derive(Clone, Debug)]
struct Lanes {
    acc: Vec<u32>,
    fresh: Vec<bool>,
    next: usize,
    last: usize,
}

/// The golden stream model of a `mac` core: one [`MacModel::step`] per cycle.
#[derive(Clone, Debug)]
pub struct MacModel {
    fma: FmaModel,
    dyn_rm: bool,
    dyn_sat: bool,
    acc: u32,
    flags: u8,
    /// `--interleave L`: the L accumulators, which start fresh, the next one to use.
    lanes: Option<Lanes>,
    /// `--acc exact`: the exact accumulator and the mode port values of the last step (the
    /// output projection uses them).
    exact: Option<ExactState>,
}

#[derive(Clone, Debug)]
struct ExactState {
    acc: golden::ExactAcc,
    modes: [u64; 2],
    rounding: RoundingSel,
    saturation: SaturationSel,
    tininess: golden::Tininess,
}

impl MacModel {
    /// The model of the core `req` generates (`req.unit` must be `mac`), in its reset state.
    pub fn new(req: &GenRequest) -> Result<MacModel, GenError> {
        Ok(MacModel {
            fma: FmaModel::new(req)?,
            dyn_rm: req.rounding == RoundingSel::Dynamic,
            dyn_sat: req.saturation == SaturationSel::Dynamic,
            acc: 0,
            flags: 0,
            lanes: (req.options.interleave > 1).then(|| Lanes {
                acc: vec![0; req.options.interleave as usize],
                fresh: vec![false; req.options.interleave as usize],
                next: 0,
                last: 0,
            }),
            exact: if req.options.acc_guard > 0 {
                Some(ExactState {
                    acc: golden::ExactAcc::new(
                        req.formats.x,
                        super::modes::y_format(req),
                        req.options.acc_guard,
                    )
                    .map_err(GenError::Unsupported)?,
                    modes: [0, 0],
                    rounding: req.rounding,
                    saturation: req.saturation,
                    tininess: req.options.tininess,
                })
            } else {
                None
            },
        })
    }

    /// Number of data inputs per cycle: `valid_i, clear_i, x_i, y_i, [rm_i], [sat_i]`.
    pub fn n_inputs(&self) -> usize {
        4 + self.dyn_rm as usize + self.dyn_sat as usize
    }

    /// Back to the reset state (`acc = +0`, `flags = 0`).
    pub fn reset(&mut self) {
        self.acc = 0;
        self.flags = 0;
        if let Some(l) = &mut self.lanes {
            l.acc.iter_mut().for_each(|a| *a = 0);
            l.fresh.iter_mut().for_each(|f| *f = false);
            l.next = 0;
            l.last = 0;
        }
        if let Some(e) = &mut self.exact {
            e.acc.clear();
            e.modes = [0, 0];
        }
    }

    /// Processes one input cycle `[valid_i, clear_i, x_i, y_i, (rm_i), (sat_i)]` and returns
    /// what the core shows `L` cycles later in output port order: `[acc_o, flags_o, valid_o,
    /// 0]`, or `[acc_o, flags_o, lane_o, valid_o]` with interleaved accumulators (inputs must
    /// respect the initiation interval).
    pub fn step(&mut self, inputs: &[u64]) -> [u64; 4] {
        let valid = inputs.first().copied().unwrap_or(0) & 1 == 1;
        if let Some(e) = &mut self.exact {
            if valid {
                let clear = inputs.get(1).copied().unwrap_or(0) & 1 == 1;
                let x = inputs.get(2).copied().unwrap_or(0) as u32;
                let y = inputs.get(3).copied().unwrap_or(0) as u32;
                e.acc.step(clear, x, y);
                e.modes = [
                    inputs.get(4).copied().unwrap_or(0),
                    inputs.get(5).copied().unwrap_or(0),
                ];
            }
            let mut it = e.modes.iter().copied();
            let (spec, _) = super::modes::spec_from_ports(
                &mut it,
                e.rounding,
                e.saturation,
                0,
                e.tininess,
                0,
                golden::RtoOverflow::P3109,
            );
            let (c, f) = e.acc.result(&golden::Format::BINARY32, &spec);
            return [c as u64, f.0 as u64, valid as u64, 0];
        }
        if valid {
            let clear = inputs.get(1).copied().unwrap_or(0) & 1 == 1;
            // Interleaved: step k since the clear goes to accumulator k mod L; a clear starts
            // every accumulator afresh (lane 0 with this product, the others at their next
            // step).
            let (lane, z) = match &self.lanes {
                Some(l) => {
                    let lane = if clear { 0 } else { l.next };
                    let fresh = clear || l.fresh[lane];
                    (lane, if fresh { 0 } else { l.acc[lane] })
                }
                None => (0, if clear { 0 } else { self.acc }),
            };
            let mut modes = inputs.iter().skip(4).copied();
            let x = inputs.get(2).copied().unwrap_or(0);
            let y = inputs.get(3).copied().unwrap_or(0);
            let [r, f] = self.fma.eval_xyz(
                x as u32 & self.fma_x_mask(),
                y as u32 & self.fma_y_mask(),
                z,
                &mut modes,
            );
            self.acc = r as u32;
            self.flags = f as u8;
            if let Some(l) = &mut self.lanes {
                let n = l.acc.len();
                l.acc[lane] = r as u32;
                if clear {
                    l.fresh
                        .iter_mut()
                        .enumerate()
                        .for_each(|(i, f)| *f = i != 0);
                } else {
                    l.fresh[lane] = false;
                }
                l.next = (lane + 1) % n;
                l.last = lane;
            }
        }
        match &self.lanes {
            Some(l) => [
                self.acc as u64,
                self.flags as u64,
                l.last as u64,
                valid as u64,
            ],
            None => [self.acc as u64, self.flags as u64, valid as u64, 0],
        }
    }

    fn fma_x_mask(&self) -> u32 {
        self.fma.x_mask()
    }
    fn fma_y_mask(&self) -> u32 {
        self.fma.y_mask()
    }

    /// Runs a whole stream from the reset state; one output row per input row.
    pub fn run(req: &GenRequest, cycles: &[Vec<u64>]) -> Result<Vec<[u64; 4]>, GenError> {
        let mut m = MacModel::new(req)?;
        Ok(cycles.iter().map(|c| m.step(c)).collect())
    }
}

/// The wrapper's data inputs `clear_i`, `x_i`, `y_i` and the mode ports of `req` (`rm_i`,
/// `sat_i`, as the unit's interface declares them): (`clear_i`, `x_i`, `y_i`, modes by name).
fn wrapper_inputs(
    b: &mut ModuleBuilder,
    req: &GenRequest,
) -> (Expr, Expr, Expr, Vec<(String, Expr)>) {
    let clear = b.input("clear_i", 1);
    let x = b.input("x_i", req.formats.x.k);
    let y = b.input("y_i", super::modes::y_format(req).k);
    let modes = super::interface(req)
        .iter()
        .filter(|p| matches!(p.role, Role::Rounding | Role::Saturation))
        .map(|p| (p.name.clone(), b.input(&p.name, p.width)))
        .collect();
    (clear, x, y, modes)
}

/// Generates the MAC core (FMA module + accumulator wrapper in one file).
pub fn generate(req: &GenRequest) -> Result<GeneratedCore, GenError> {
    super::fma::validate(req)?;
    if req.options.acc_guard > 0 {
        return generate_exact(req);
    }
    let fx = req.formats.x;
    let fy = super::modes::y_format(req);
    let top = top_name(req, "mac");
    let nl = req.options.interleave;
    let top = match (nl > 1, top.rfind("_s")) {
        (true, Some(i)) => format!("{}_il{nl}{}", &top[..i], &top[i..]),
        _ => top,
    };
    let fma_top = format!("{top}_fma");
    let mut freq = req.clone();
    freq.unit = Unit::Fma;
    freq.options.interleave = 0;
    let mut b = ModuleBuilder::new();
    let x = b.input("x_i", fx.k);
    let y = b.input("y_i", fy.k);
    let z = b.input("z_i", 32);
    let modes = super::modes::mode_ports(&mut b, &freq);
    let out = super::fma::fma_datapath(
        &mut b,
        &fx,
        &x,
        &fy,
        &y,
        &z,
        &golden::Format::BINARY32,
        &golden::Format::BINARY32,
        &modes,
        req.options.ftz,
        None,
    );
    b.output("r_o", out.code);
    b.output("flags_o", out.flags);
    let mut fh = vec![format!(
        "Unit:        fma core of the mac {top} (acc <- x * y + acc)"
    )];
    fh.extend(header_lines(req));
    let core = finish_core(&freq, b, &fma_top, fh)?;
    let n = req.stages;
    let lat = latency(n);
    let ii = initiation_interval(n, nl.max(1));

    // ---- wrapper: the accumulator around the fma core ----
    let mut header = vec![
        crate::header_line(req),
        String::new(),
        "Unit:        mac  acc <- x * y + acc (binary32 accumulator, one rounding per step)".into(),
    ];
    header.extend(header_lines(req));
    header.extend([
        "Protocol:    valid_i issues a step with z = clear_i ? +0 : acc; clear_i without valid_i is ignored".to_string(),
        "             acc_o/flags_o = accumulator and flags of the last completed step (held); valid_o pulses".to_string(),
        "             when a step completes; rst_ni = 0 (synchronous) sets acc = +0, flags = 0".to_string(),
        format!("Pipeline:    fma stages {n}; latency {lat} cycle(s); initiation interval {ii} (issue at most one step every {ii} cycle(s))"),
    ]);
    let mut b = ModuleBuilder::new();
    let valid = b.valid_in();
    let (clear, x, y, modes) = wrapper_inputs(&mut b, req);
    let acc = b.state("acc_q", 32, Some(0));
    let flags = b.state("flags_q", 4, Some(0));
    let done = b.state("done_q", 1, Some(0));
    let lanes = (nl > 1).then(|| Interleave::declare(&mut b, nl, n, &clear));
    let z = match &lanes {
        Some(l) => l.z.clone(),
        None => b.wire("fma_z", Expr::mux(&clear, &Expr::c(0, 32), &acc.q())),
    };
    let mut inputs = vec![
        ("valid_i", valid.clone()),
        ("x_i", x),
        ("y_i", y),
        ("z_i", z),
    ];
    inputs.extend(modes.iter().map(|(p, e)| (p.as_str(), e.clone())));
    let o = b.instance(
        &fma_top,
        "u_fma",
        &port_decls(&core.manifest.ports),
        &inputs,
        &[
            ("r_o", "fma_r"),
            ("flags_o", "fma_flags"),
            ("valid_o", "fma_valid"),
        ],
    );
    let (fma_r, fma_flags, fma_valid) = (&o[0], &o[1], &o[2]);
    b.set_next(&done, fma_valid.clone(), None);
    b.set_next(&acc, fma_r.clone(), Some(fma_valid.clone()));
    b.set_next(&flags, fma_flags.clone(), Some(fma_valid.clone()));
    if let Some(l) = &lanes {
        l.update(&mut b, &valid, &clear, fma_r, fma_valid);
    }
    b.output("acc_o", acc.q());
    b.output("flags_o", flags.q());
    if let Some(l) = &lanes {
        b.output("lane_o", l.lane.q());
    }
    b.set_valid_out(done.q());
    let net = b.finish(&top, header, 0).map_err(GenError::Internal)?;
    let ports = check_interface(req, &net)?;
    // The FMA core shares the file with the wrapper (named after the file).
    let verilog = crate::emit::file(&[&core.verilog], &net.emit());
    let mut manifest = core.manifest.clone();
    manifest.unit = Unit::Mac;
    manifest.top = top.clone();
    manifest.verilog = crate::manifest::FileList(vec![format!("{top}.v")]);
    manifest.command = req.canonical_command();
    manifest.latency = lat;
    manifest.initiation_interval = ii;
    manifest.modes = super::manifest_modes(req);
    manifest.ports = ports;
    Ok(GeneratedCore {
        verilog,
        manifest,
        top,
        depth: core.depth,
    })
}

/// Pipeline stages of the exact MAC: `(front, term register, back)` with `front + term + back
/// = stages`. From 2 stages on, one stage is a register between the product half and the
/// accumulator, so the loop holds only the adder; the product half (product and placement,
/// a few levels) gets one internal stage per four, the output projection (negate, count,
/// normalize, round: the deep part) the rest.
pub fn exact_stage_split(stages: u32) -> (u32, u32, u32) {
    if stages < 2 {
        return (0, 0, stages);
    }
    let front = (stages - 1) / 3;
    (front, 1, stages - 1 - front)
}

/// The exact-accumulator MAC (`--acc exact`): `<top>_term` (product → two's-complement term,
/// the front and term-register stages of [`exact_stage_split`]), the accumulator register (the only loop: one adder, so a
/// step every cycle at every depth), `<top>_round` (the sum projected once to binary32, the
/// remaining stages).
///
/// ```text
///   x_i, y_i ─ term (S_f stages) ─┐ clear, modes delayed alongside
///                                 ▼
///   acc_q ← (clear ? 0 : acc_q) + term     state: nan, invalid, +inf, -inf, guard overflow,
///                                          all-zero, +0 seen, -0 seen; modes of the step
///   acc_q, state ─ round (S_b stages) ─ acc_o, flags_o          latency S_f + 1 + S_b = S + 1
/// ```
fn generate_exact(req: &GenRequest) -> Result<GeneratedCore, GenError> {
    use crate::ast::{concat, Expr};
    use crate::blocks::{round, RoundIn};
    let fx = req.formats.x;
    let fy = super::modes::y_format(req);
    let guard = req.options.acc_guard;
    let ea = golden::ExactAcc::new(fx, fy, guard).map_err(GenError::Unsupported)?;
    let bits = ea.bits();
    let lsb = ea.lsb() as i64;
    let top = {
        let t = top_name(req, "mac");
        // fp8_mac_<x>..._s<N> → fp8_mac_<x>..._accx<G>_s<N>
        match t.rfind("_s") {
            Some(i) => format!("{}_accx{guard}{}", &t[..i], &t[i..]),
            None => t,
        }
    };
    let n = req.stages;
    let (sf, treg, sb) = exact_stage_split(n);
    let dyn_rm = req.rounding == RoundingSel::Dynamic;
    let dyn_sat = req.saturation == SaturationSel::Dynamic;
    let rmw = crate::blocks::rm_port_width(0);

    // ---- front: product term ----
    let mut b = ModuleBuilder::new();
    let x = b.input("x_i", fx.k);
    let y = b.input("y_i", fy.k);
    let clear = b.input("clear_i", 1);
    let rm = dyn_rm.then(|| b.input("rm_i", rmw));
    let sat = dyn_sat.then(|| b.input("sat_i", 2));
    let l = super::dot::product_lane(
        &mut b,
        &fx,
        &x,
        &fy,
        &y,
        None,
        0,
        bits,
        super::dot::LaneForm::Magnitude,
    );
    b.output("mag_o", l.term);
    b.output("nan_o", l.nan);
    b.output("inv_o", l.invalid);
    b.output("pinf_o", l.inf.and(&l.sign.not()));
    b.output("ninf_o", l.inf.and(&l.sign));
    b.output("zero_o", l.zero);
    b.output("sign_o", l.sign);
    b.output("clear_o", clear);
    if let Some(r) = rm {
        b.output("rm_o", r);
    }
    if let Some(s) = sat {
        b.output("sat_o", s);
    }
    let front_top = format!("{top}_term");
    let fh = vec![
        crate::header_line(req),
        String::new(),
        format!("Product half of the exact mac {top}: |x * y| as a {bits}-bit magnitude and its sign"),
        format!(
            "on the grid 2^{lsb} (product bits {}, guard bits {guard}, sign 1); class bits; clear and modes delayed alongside",
            golden::dot::product_bits(&fx, &fy)
        ),
    ];
    let front = b.finish(&front_top, fh, sf).map_err(GenError::Internal)?;
    let front_depth = front.depth;

    // ---- back: one projection of the exact sum ----
    let mut b = ModuleBuilder::new();
    let acc = b.input("acc_i", bits);
    let st: Vec<Expr> = [
        "nan_i", "inv_i", "pinf_i", "ninf_i", "ovf_i", "allz_i", "zpos_i", "zneg_i",
    ]
    .iter()
    .map(|nm| b.input(nm, 1))
    .collect();
    let (nan_i, inv_i, pinf, ninf, ovf, allz, zpos, zneg) = (
        &st[0], &st[1], &st[2], &st[3], &st[4], &st[5], &st[6], &st[7],
    );
    let modes = super::modes::mode_ports(&mut b, req);
    b.comment(&[
        "State -> specials: a NaN product (or 0*Inf) -> NaN; +Inf and -Inf -> NaN + invalid",
        "guard overflow -> NaN with flags invalid | overflow (golden::ExactAcc)",
    ]);
    let inf_inf = pinf.and(ninf);
    // The guard overflow's NaN goes in as a NaN operand of the rounder (its NaN is
    // BINARY32_NAN), not as a mux after it; its flags replace the rounder's below.
    let nan = b.wire("o_is_nan", nan_i.or(inv_i).or(&inf_inf).or(ovf));
    let invalid = b.wire("o_invalid", inv_i.or(&nan_i.not().and(&inf_inf)));
    let inf = b.wire("o_is_inf", pinf.or(ninf).and(&nan.not()));
    let neg = acc.msb();
    let abs = b.wire("o_abs", Expr::mux(&neg, &Expr::c(0, bits).sub(&acc), &acc));
    // |acc| needs all `bits` bits: the most negative register value -2^(bits-1) is a sum
    // the register holds exactly.
    let zero = b.wire("o_is_zero", acc.eq_c(0).and(&nan.not()).and(&inf.not()));
    b.comment(&[
        "zero sum: the common sign when every term was a zero of one sign, else +0 (-0 for rtn)",
    ]);
    let zsign = Expr::mux(&allz.and(&zpos.and(zneg).not()), zneg, &modes.rm[3]);
    let sign = b.wire(
        "o_sign",
        Expr::mux(&inf, ninf, &Expr::mux(&zero, &zsign, &neg)),
    );
    let b32 = golden::Format::BINARY32;
    // The rounder reads P + G bits and a sticky: the lower bits are OR-ed beside the shifter.
    let keep = b32.p + crate::blocks::guard_bits(&modes);
    let nrm = super::dot::normalize_signed(&mut b, &acc, &abs, Some(keep), "onrm");
    let (lo, hi) = (lsb, lsb + bits as i64 - 1);
    let ew = crate::ast::sbits(lo.min(-(bits as i64)), hi.max(bits as i64)).max(nrm.lz.width + 1);
    // TOP - 1 - lzc + over = TOP + ~lzc + over: one carry chain, `over` its carry-in.
    let exp = b.wire_note(
        "onrm_exp",
        Expr::named_i(
            "ACC_TOP_EXP",
            hi,
            ew,
            "exponent of the accumulator's top bit; MSB = this + ~lzc + over",
        )
        .add(&nrm.lz.zext(ew).not())
        .add(&nrm.over.zext(ew)),
        "exponent of the sum's MSB",
    );
    let rin = RoundIn {
        nan,
        inf,
        zero,
        sign,
        exp,
        exp_range: (lo, hi),
        sig: nrm.sig,
        sticky: nrm.sticky,
        invalid,
        exp_inc: None,
        ftz: false,
        exp_offset: 0,
    };
    let out = round(&mut b, &b32, &modes, &rin);
    let code = b.wire("round_code", out.code);
    let code = super::fma::plus_zero_results(&mut b, &b32, golden::fma_ieee_zero(&fx, &fy), code);
    b.output("r_o", code);
    b.output(
        "flags_o",
        Expr::mux(ovf, &concat(&[Expr::c(0b11, 2), Expr::c(0, 2)]), &out.flags),
    );
    let back_top = format!("{top}_round");
    let bh = vec![
        crate::header_line(req),
        String::new(),
        format!("Output half of the exact mac {top}: the {bits}-bit sum (LSB 2^{lsb}) projected once to binary32"),
    ];
    let back = b.finish(&back_top, bh, sb).map_err(GenError::Internal)?;
    let back_depth = back.depth;

    // ---- wrapper: the accumulator between the two cores ----
    let lat = n + 1;
    let mut header = vec![
        crate::header_line(req),
        String::new(),
        format!("Unit:        mac  acc <- acc + x * y, EXACT ({bits}-bit two's-complement accumulator, LSB 2^{lsb}; {guard} guard bits: 2^{guard} products of any magnitude), one rounding on output"),
    ];
    header.extend(header_lines(req));
    header.extend([
        "Protocol:    valid_i issues a step: acc <- (clear_i ? 0 : acc) + x*y, every cycle (initiation interval 1)".to_string(),
        "             acc_o/flags_o = the sum so far rounded once (modes of the last step); valid_o pulses when a step lands".to_string(),
        "             guard overflow: acc_o = NaN, flags_o = invalid | overflow until the next clear".to_string(),
        format!("Pipeline:    {sf} stage(s) in the product half, {treg} term register, {sb} after the accumulator; latency {lat} cycle(s); initiation interval 1"),
    ]);
    let mut b = ModuleBuilder::new();
    let valid = b.valid_in();
    let (clear, x, y, modes) = wrapper_inputs(&mut b, req);
    let mut inputs = vec![
        ("valid_i", valid),
        ("x_i", x),
        ("y_i", y),
        ("clear_i", clear),
    ];
    inputs.extend(modes.iter().map(|(p, e)| (p.as_str(), e.clone())));
    // The term core's outputs: (port, wire), the mode ports delayed alongside.
    let mut outs: Vec<(String, String)> =
        ["mag", "nan", "inv", "pinf", "ninf", "zero", "sign", "clear"]
            .iter()
            .map(|p| (format!("{p}_o"), format!("t_{p}")))
            .collect();
    for (p, _) in &modes {
        let m = p.trim_end_matches("_i");
        outs.push((format!("{m}_o"), format!("t_{m}")));
    }
    outs.push(("valid_o".into(), "t_valid".into()));
    let out_refs: Vec<(&str, &str)> = outs.iter().map(|(p, w)| (p.as_str(), w.as_str())).collect();
    let t = b.instance(&front_top, "u_term", &front.ports, &inputs, &out_refs);
    // With a term register, the product half's outputs are registered before the loop.
    let t: Vec<Expr> = if treg > 0 {
        b.comment(&["Term register: the product half's outputs, one cycle before the loop"]);
        let last = t.len() - 1;
        t.iter()
            .zip(&outs)
            .enumerate()
            .map(|(i, (e, (_, w)))| {
                let r = b.state(&format!("{w}_q"), e.width, (i == last).then_some(0));
                b.set_next(&r, e.clone(), None);
                r.q()
            })
            .collect()
    } else {
        t
    };
    let (mag, t_nan, t_inv, t_pinf, t_ninf, t_zero, t_sign, t_clear) =
        (&t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7]);
    let t_modes = &t[8..8 + modes.len()];
    let t_valid = &t[8 + modes.len()];
    b.comment_owned(vec![
        format!("The loop: one {bits}-bit adder, acc + (sign ? ~mag + 1 : mag) (the negation in the adder's"),
        "operand and carry-in). Signed overflow (operands of one sign, a sum of the other) is sticky;".into(),
        "a nonzero term's sign bit is its sign (|term| < 2^(bits-2): at least one guard bit).".into(),
    ]);
    let acc = b.state("acc_q", bits, Some(0));
    // The state beside the sum: sticky class flags (allz: every term so far was a zero).
    let flag = |b: &mut ModuleBuilder, name: &str, reset: u128| b.state(name, 1, Some(reset));
    let nan = flag(&mut b, "nan_q", 0);
    let inv = flag(&mut b, "inv_q", 0);
    let pinf = flag(&mut b, "pinf_q", 0);
    let ninf = flag(&mut b, "ninf_q", 0);
    let ovf = flag(&mut b, "ovf_q", 0);
    let allz = flag(&mut b, "allz_q", 1);
    let zpos = flag(&mut b, "zpos_q", 0);
    let zneg = flag(&mut b, "zneg_q", 0);
    let done = flag(&mut b, "done_q", 0);
    let mode_q: Vec<StateReg> = modes
        .iter()
        .map(|(p, e)| b.state(&format!("{}_q", p.trim_end_matches("_i")), e.width, Some(0)))
        .collect();
    let base = b.wire("a_base", Expr::mux(t_clear, &Expr::c(0, bits), &acc.q()));
    let addend = b.wire_note(
        "a_addend",
        mag.xor(&Expr::repl(bits, t_sign)),
        "term - sign: mag or ~mag",
    );
    let sum = b.wire("a_sum", base.add(&addend).add(&t_sign.zext(bits)));
    let a_ovf = b.wire(
        "a_ovf",
        base.msb().eq(t_sign).and(&sum.msb().ne(&base.msb())),
    );
    let keep = t_clear.not();
    let en = Some(t_valid.clone());
    b.set_next(&done, t_valid.clone(), None);
    b.set_next(&acc, sum, en.clone());
    for (r, set) in [
        (&nan, t_nan.clone()),
        (&inv, t_inv.clone()),
        (&pinf, t_pinf.clone()),
        (&ninf, t_ninf.clone()),
        (&ovf, a_ovf),
    ] {
        b.set_next(r, keep.and(&r.q()).or(&set), en.clone());
    }
    b.set_next(&allz, t_clear.or(&allz.q()).and(t_zero), en.clone());
    b.set_next(
        &zpos,
        keep.and(&zpos.q()).or(&t_zero.and(&t_sign.not())),
        en.clone(),
    );
    b.set_next(
        &zneg,
        keep.and(&zneg.q()).or(&t_zero.and(t_sign)),
        en.clone(),
    );
    for (r, e) in mode_q.iter().zip(t_modes) {
        b.set_next(r, e.clone(), en.clone());
    }
    let mut inputs = vec![("valid_i", done.q()), ("acc_i", acc.q())];
    for (p, r) in [
        ("nan_i", &nan),
        ("inv_i", &inv),
        ("pinf_i", &pinf),
        ("ninf_i", &ninf),
        ("ovf_i", &ovf),
        ("allz_i", &allz),
        ("zpos_i", &zpos),
        ("zneg_i", &zneg),
    ] {
        inputs.push((p, r.q()));
    }
    inputs.extend(
        modes
            .iter()
            .zip(&mode_q)
            .map(|((p, _), r)| (p.as_str(), r.q())),
    );
    let o = b.instance(
        &back_top,
        "u_round",
        &back.ports,
        &inputs,
        &[
            ("r_o", "round_acc"),
            ("flags_o", "round_flags"),
            ("valid_o", "round_valid"),
        ],
    );
    b.output("acc_o", o[0].clone());
    b.output("flags_o", o[1].clone());
    b.set_valid_out(o[2].clone());
    let net = b.finish(&top, header, 0).map_err(GenError::Internal)?;
    let ports = check_interface(req, &net)?;
    let verilog = crate::emit::file(&[&front.emit(), &back.emit()], &net.emit());
    let manifest = crate::manifest::Manifest {
        schema: crate::manifest::MANIFEST_SCHEMA,
        generator: format!("fp8gen {}", golden::VERSION),
        command: req.canonical_command(),
        unit: Unit::Mac,
        top: top.clone(),
        verilog: crate::manifest::FileList(vec![format!("{top}.v")]),
        include_dirs: Vec::new(),
        defines: Default::default(),
        parameters: Default::default(),
        formats: req.formats.clone(),
        modes: super::manifest_modes(req),
        stages: n,
        latency: lat,
        initiation_interval: 1,
        dot: None,
        block: None,
        ports,
    };
    Ok(GeneratedCore {
        verilog,
        manifest,
        top,
        depth: front_depth.max(back_depth),
    })
}

/// The interleaved accumulators of a binary32 mac (`--interleave L`): `L` accumulator
/// registers, which of them start fresh, the lane counter, the lane index delayed alongside
/// the FMA pipeline, and the lane of the last completed step (`lane_o`).
struct Interleave {
    lacc: Vec<StateReg>,
    fresh: StateReg,
    k: StateReg,
    lane: StateReg,
    /// The lane of the issuing step (`clear_i ? 0 : k`).
    lane_in: Expr,
    /// `lane_in` one-hot.
    onehot: Expr,
    /// The lane of the step leaving the FMA (`lane_in` delayed by the FMA's stages).
    lane_done: Expr,
    /// The FMA's addend: the issuing lane's accumulator, +0 when it starts fresh.
    z: Expr,
}

impl Interleave {
    /// The registers and the addend selection, before the FMA instance.
    fn declare(b: &mut ModuleBuilder, nl: u32, stages: u32, clear: &Expr) -> Interleave {
        let lw = lane_width(nl);
        b.comment_owned(vec![
            format!("{nl} interleaved accumulators: step k after a clear goes to accumulator k mod {nl};"),
            "a clear starts all of them afresh (lane 0 with its product, the others at their next step)".into(),
        ]);
        let lacc: Vec<StateReg> = (0..nl)
            .map(|j| b.state(&format!("lacc{j}_q"), 32, Some(0)))
            .collect();
        let fresh = b.state("fresh_q", nl, Some(0));
        let k = b.state("k_q", lw, Some(0));
        let lane = b.state("lane_q", lw, Some(0));
        let lane_in = b.wire("lane_in", Expr::mux(clear, &Expr::c(0, lw), &k.q()));
        let onehot = b.wire("lane_onehot", Expr::c(1, nl).shl(&lane_in));
        let arms = (0..nl).map(|j| (j as u128, lacc[j as usize].q())).collect();
        let lane_acc = b.wire("lane_acc", Expr::case(&lane_in, arms, &Expr::c(0, 32)));
        let lane_fresh = b.wire("lane_fresh", fresh.q().and(&onehot).red_or());
        let z = b.wire(
            "fma_z",
            Expr::mux(&clear.or(&lane_fresh), &Expr::c(0, 32), &lane_acc),
        );
        // The lane index travels beside the FMA pipeline (no reset: fma_valid qualifies it).
        let mut lane_done = lane_in.clone();
        for d in 1..=stages {
            let r = b.state(&format!("lane_d{d}_q"), lw, None);
            b.set_next(&r, lane_done, None);
            lane_done = r.q();
        }
        Interleave {
            lacc,
            fresh,
            k,
            lane,
            lane_in,
            onehot,
            lane_done,
            z,
        }
    }

    /// The register updates, once the FMA's result is known: an issued step advances the
    /// lane counter and marks its lane used (a clear marks every other lane fresh); a
    /// completed step writes its lane's accumulator and `lane_q`.
    fn update(&self, b: &mut ModuleBuilder, valid: &Expr, clear: &Expr, r: &Expr, done: &Expr) {
        let nl = self.lacc.len() as u32;
        let lw = lane_width(nl);
        let last = self.lane_in.eq_c(nl as u128 - 1);
        let k_next = Expr::mux(&last, &Expr::c(0, lw), &self.lane_in.add(&Expr::c(1, lw)));
        b.set_next(&self.k, k_next, Some(valid.clone()));
        let all_but_0 = crate::ast::mask(nl) & !1;
        let fresh_next = Expr::mux(
            clear,
            &Expr::c(all_but_0, nl),
            &self.fresh.q().and(&self.onehot.not()),
        );
        b.set_next(&self.fresh, fresh_next, Some(valid.clone()));
        b.set_next(&self.lane, self.lane_done.clone(), Some(done.clone()));
        let we = b.wire(
            "lacc_we",
            Expr::repl(nl, done).and(&Expr::c(1, nl).shl(&self.lane_done)),
        );
        for (j, l) in self.lacc.iter().enumerate() {
            b.set_next(l, r.clone(), Some(we.bit(j as u32)));
        }
    }
}

/// The `mac` unit in the registry ([`super::def`]).
#[derive(Debug)]
pub struct Mac;

impl super::UnitDef for Mac {
    fn validate(&self, req: &GenRequest) -> Result<(), GenError> {
        super::fma::validate(req)
    }

    fn ports(&self, req: &GenRequest, v: &mut Vec<iface::Port>) {
        use super::{input, output, FLAGS_WIDTH};
        v.push(input("clear_i", 1, Role::Clear));
        super::operand_ports(req, v);
        super::mode_ports(req, v, false);
        v.push(output("acc_o", 32, Role::Result));
        v.push(output("flags_o", FLAGS_WIDTH, Role::Flags));
        if req.options.interleave > 1 {
            v.push(output(
                "lane_o",
                lane_width(req.options.interleave),
                Role::Lane,
            ));
        }
    }

    fn generate(&self, req: &GenRequest) -> Result<GeneratedCore, GenError> {
        generate(req)
    }

    fn model(&self, _req: &GenRequest) -> Result<super::GoldenModel, GenError> {
        Err(GenError::Unsupported(
            "mac keeps state between inputs: its golden model is the stream model (units::mac::MacModel), not a function of one vector".into(),
        ))
    }
}
