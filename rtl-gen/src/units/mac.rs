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
//! generator) and `<top>` (the accumulator wrapper).

use super::finish_core;
use super::fma::{header_lines, top_name, FmaModel};
use crate::ast::ModuleBuilder;
use crate::manifest::{Direction, Unit};
use crate::{GenError, GenRequest, GeneratedCore, RoundingSel, SaturationSel};
use std::fmt::Write as _;

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
            let (spec, _) =
                super::modes::spec_from_ports(&mut it, e.rounding, e.saturation, 0, e.tininess, 0);
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
    let out = super::fma::fma_datapath(&mut b, &fx, &x, &fy, &y, &z, &modes, req.options.ftz, None);
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
    let dyn_rm = req.rounding == RoundingSel::Dynamic;
    let dyn_sat = req.saturation == SaturationSel::Dynamic;
    // Wrapper ports: the unit's interface.
    let ports = super::interface(req);
    let mut v = String::new();
    let _ = writeln!(v, "// {}", crate::header_line(req));
    v.push_str("//\n");
    let _ = writeln!(
        v,
        "// Unit:        mac  acc <- x * y + acc (binary32 accumulator, one rounding per step)"
    );
    for l in header_lines(req) {
        let _ = writeln!(v, "// {l}");
    }
    let _ = writeln!(
        v,
        "// Protocol:    valid_i issues a step with z = clear_i ? +0 : acc; clear_i without valid_i is ignored"
    );
    let _ = writeln!(
        v,
        "//              acc_o/flags_o = accumulator and flags of the last completed step (held); valid_o pulses"
    );
    let _ = writeln!(
        v,
        "//              when a step completes; rst_ni = 0 (synchronous) sets acc = +0, flags = 0"
    );
    let _ = writeln!(
        v,
        "// Pipeline:    fma stages {n}; latency {lat} cycle(s); initiation interval {ii} (issue at most one step every {ii} cycle(s))"
    );
    module_open(&mut v, &top, &ports);
    v.push_str("  reg  [31:0] acc_q;\n  reg  [3:0] flags_q;\n  reg  done_q;\n");
    if nl > 1 {
        interleave_decl(&mut v, nl, n);
    } else {
        v.push_str("  wire [31:0] fma_z = clear_i ? 32'h0 : acc_q;\n");
    }
    v.push_str("  wire [31:0] fma_r;\n  wire [3:0] fma_flags;\n  wire fma_valid;\n");
    let _ = writeln!(v, "  {fma_top} u_fma (");
    let mut conns = Vec::new();
    if n > 0 {
        conns.push(".clk_i(clk_i)".to_string());
        conns.push(".rst_ni(rst_ni)".to_string());
    }
    conns.push(".valid_i(valid_i)".to_string());
    conns.push(".x_i(x_i)".to_string());
    conns.push(".y_i(y_i)".to_string());
    conns.push(".z_i(fma_z)".to_string());
    if dyn_rm {
        conns.push(".rm_i(rm_i)".to_string());
    }
    if dyn_sat {
        conns.push(".sat_i(sat_i)".to_string());
    }
    conns.push(".r_o(fma_r)".to_string());
    conns.push(".flags_o(fma_flags)".to_string());
    conns.push(".valid_o(fma_valid)".to_string());
    let _ = writeln!(v, "    {}\n  );", conns.join(",\n    "));
    if nl > 1 {
        interleave_regs(&mut v, nl, n);
    }
    v.push_str(
        "  always @(posedge clk_i) begin
    if (!rst_ni) begin
      acc_q <= 32'h0;
      flags_q <= 4'h0;
      done_q <= 1'b0;
    end else begin
      done_q <= fma_valid;
      if (fma_valid) begin
        acc_q <= fma_r;
        flags_q <= fma_flags;
      end
    end
  end
  assign acc_o = acc_q;
  assign flags_o = flags_q;
  assign valid_o = done_q;
endmodule

`default_nettype wire
",
    );
    // The FMA core shares the file with the wrapper (named after the file).
    let mut verilog = String::from("/* verilator lint_off DECLFILENAME */\n");
    verilog.push_str(&core.verilog);
    verilog.push_str("/* verilator lint_on DECLFILENAME */\n\n");
    verilog.push_str(&v);
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

/// `` `default_nettype none`` and the wrapper's module header with its port list.
fn module_open(v: &mut String, top: &str, ports: &[crate::manifest::Port]) {
    v.push_str("\n`default_nettype none\n\n");
    let _ = writeln!(v, "module {top} (");
    for (i, p) in ports.iter().enumerate() {
        let d = if p.direction == Direction::Input {
            "input "
        } else {
            "output"
        };
        let r = if p.width == 1 {
            String::new()
        } else {
            format!("[{}:0] ", p.width - 1)
        };
        let comma = if i + 1 < ports.len() { "," } else { "" };
        let _ = writeln!(v, "    {d} wire {r:<7}{}{comma}", p.name);
    }
    v.push_str(");\n");
}

/// Pipeline stages of the exact MAC's product half (the rest go after the accumulator).
pub fn exact_front_stages(stages: u32) -> u32 {
    stages / 2
}

/// The exact-accumulator MAC (`--acc exact`): `<top>_term` (product → two's-complement term,
/// `stages / 2` pipeline stages), the accumulator register (the only loop: one adder, so a
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
    use crate::blocks::{lzc_normalize, round, RoundIn};
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
    let (sf, sb) = (exact_front_stages(n), n - exact_front_stages(n));
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
    let l = super::dot::product_lane(&mut b, &fx, &x, &fy, &y, None, 0, bits);
    b.output("term_o", l.term);
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
        format!("Product half of the exact mac {top}: x * y as a {bits}-bit two's-complement term"),
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
    let nan = b.wire("o_is_nan", nan_i.or(inv_i).or(&inf_inf));
    let invalid = b.wire("o_invalid", inv_i.or(&nan_i.not().and(&inf_inf)));
    let inf = b.wire("o_is_inf", pinf.or(ninf).and(&nan.not()));
    let neg = acc.msb();
    let abs = b.wire("o_abs", Expr::mux(&neg, &Expr::c(0, bits).sub(&acc), &acc));
    // |acc| needs all `bits` bits: the most negative register value -2^(bits-1) is a sum
    // the register holds exactly.
    let mag = abs;
    let zero = b.wire("o_is_zero", mag.eq_c(0).and(&nan.not()).and(&inf.not()));
    b.comment(&[
        "zero sum: the common sign when every term was a zero of one sign, else +0 (-0 for rtn)",
    ]);
    let zsign = Expr::mux(&allz.and(&zpos.and(zneg).not()), zneg, &modes.rm[3]);
    let sign = b.wire(
        "o_sign",
        Expr::mux(&inf, ninf, &Expr::mux(&zero, &zsign, &neg)),
    );
    let (lz, norm) = lzc_normalize(&mut b, &mag, "onrm");
    let lz = b.wire("onrm_lzc", lz);
    let norm = b.wire("onrm_sig", norm);
    let (lo, hi) = (lsb, lsb + bits as i64 - 1);
    let ew = crate::ast::sbits(lo.min(-(bits as i64)), hi.max(bits as i64)).max(lz.width + 1);
    let exp = b.wire_note(
        "onrm_exp",
        Expr::ci(hi, ew).sub(&lz.zext(ew)),
        "exponent of the sum's MSB",
    );
    let rin = RoundIn {
        nan,
        inf,
        zero,
        sign,
        exp,
        exp_range: (lo, hi),
        sig: norm,
        sticky: Expr::bit_c(false),
        invalid,
        exp_inc: None,
        ftz: false,
        exp_offset: 0,
    };
    let b32 = golden::Format::BINARY32;
    let out = round(&mut b, &b32, &modes, &rin);
    let code = b.wire("round_code", out.code);
    let code = super::fma::plus_zero_results(&mut b, &b32, golden::fma_ieee_zero(&fx, &fy), code);
    b.output("r_o", Expr::mux(ovf, &Expr::c(0x7FC0_0000, 32), &code));
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

    // ---- wrapper ----
    let ports = super::interface(req);
    let lat = n + 1;
    let mut v = String::new();
    let _ = writeln!(v, "// {}", crate::header_line(req));
    v.push_str("//\n");
    let _ = writeln!(
        v,
        "// Unit:        mac  acc <- acc + x * y, EXACT ({bits}-bit two's-complement accumulator, LSB 2^{lsb}; {guard} guard bits: 2^{guard} products of any magnitude), one rounding on output"
    );
    for l in header_lines(req) {
        let _ = writeln!(v, "// {l}");
    }
    let _ = writeln!(
        v,
        "// Protocol:    valid_i issues a step: acc <- (clear_i ? 0 : acc) + x*y, every cycle (initiation interval 1)"
    );
    let _ = writeln!(
        v,
        "//              acc_o/flags_o = the sum so far rounded once (modes of the last step); valid_o pulses when a step lands"
    );
    let _ = writeln!(
        v,
        "//              guard overflow: acc_o = NaN, flags_o = invalid | overflow until the next clear"
    );
    let _ = writeln!(
        v,
        "// Pipeline:    {sf} stage(s) before the accumulator, {sb} after; latency {lat} cycle(s); initiation interval 1"
    );
    module_open(&mut v, &top, &ports);
    let bw = bits - 1;
    let _ = writeln!(v, "  wire [{bw}:0] t_term;");
    v.push_str("  wire t_nan, t_inv, t_pinf, t_ninf, t_zero, t_sign, t_clear, t_valid;\n");
    if dyn_rm {
        let _ = writeln!(
            v,
            "  wire [{}:0] t_rm;\n  reg  [{}:0] rm_q;",
            rmw - 1,
            rmw - 1
        );
    }
    if dyn_sat {
        v.push_str("  wire [1:0] t_sat;\n  reg  [1:0] sat_q;\n");
    }
    let _ = writeln!(v, "  {front_top} u_term (");
    let mut c = Vec::new();
    if sf > 0 {
        c.push(".clk_i(clk_i)".to_string());
        c.push(".rst_ni(rst_ni)".to_string());
    }
    c.extend(
        [
            ".valid_i(valid_i)",
            ".x_i(x_i)",
            ".y_i(y_i)",
            ".clear_i(clear_i)",
        ]
        .map(String::from),
    );
    if dyn_rm {
        c.push(".rm_i(rm_i)".into());
    }
    if dyn_sat {
        c.push(".sat_i(sat_i)".into());
    }
    c.extend(
        [
            ".term_o(t_term)",
            ".nan_o(t_nan)",
            ".inv_o(t_inv)",
            ".pinf_o(t_pinf)",
            ".ninf_o(t_ninf)",
            ".zero_o(t_zero)",
            ".sign_o(t_sign)",
            ".clear_o(t_clear)",
        ]
        .map(String::from),
    );
    if dyn_rm {
        c.push(".rm_o(t_rm)".into());
    }
    if dyn_sat {
        c.push(".sat_o(t_sat)".into());
    }
    c.push(".valid_o(t_valid)".into());
    let _ = writeln!(v, "    {}\n  );", c.join(",\n    "));
    let _ = writeln!(
        v,
        "  // The loop: one {bits}-bit adder. Signed overflow (operands of one sign, a sum of the other) is sticky."
    );
    let _ = writeln!(v, "  reg  [{bw}:0] acc_q;");
    v.push_str("  reg  nan_q, inv_q, pinf_q, ninf_q, ovf_q, allz_q, zpos_q, zneg_q, done_q;\n");
    let _ = writeln!(v, "  wire [{bw}:0] a_base = t_clear ? {bits}'h0 : acc_q;");
    let _ = writeln!(v, "  wire [{bw}:0] a_sum = a_base + t_term;");
    let _ = writeln!(
        v,
        "  wire a_ovf = (a_base[{bw}] == t_term[{bw}]) & (a_sum[{bw}] != a_base[{bw}]);"
    );
    v.push_str("  always @(posedge clk_i) begin\n    if (!rst_ni) begin\n");
    let _ = writeln!(v, "      acc_q <= {bits}'h0;");
    v.push_str(
        "      {nan_q, inv_q, pinf_q, ninf_q, ovf_q, zpos_q, zneg_q, done_q} <= 8'h0;\n      allz_q <= 1'b1;\n",
    );
    if dyn_rm {
        let _ = writeln!(v, "      rm_q <= {rmw}'h0;");
    }
    if dyn_sat {
        v.push_str("      sat_q <= 2'h0;\n");
    }
    v.push_str("    end else begin\n      done_q <= t_valid;\n      if (t_valid) begin\n");
    v.push_str("        acc_q  <= a_sum;\n");
    v.push_str("        nan_q  <= (~t_clear & nan_q) | t_nan;\n");
    v.push_str("        inv_q  <= (~t_clear & inv_q) | t_inv;\n");
    v.push_str("        pinf_q <= (~t_clear & pinf_q) | t_pinf;\n");
    v.push_str("        ninf_q <= (~t_clear & ninf_q) | t_ninf;\n");
    v.push_str("        ovf_q  <= (~t_clear & ovf_q) | a_ovf;\n");
    v.push_str("        allz_q <= (t_clear | allz_q) & t_zero;\n");
    v.push_str("        zpos_q <= (~t_clear & zpos_q) | (t_zero & ~t_sign);\n");
    v.push_str("        zneg_q <= (~t_clear & zneg_q) | (t_zero & t_sign);\n");
    if dyn_rm {
        v.push_str("        rm_q   <= t_rm;\n");
    }
    if dyn_sat {
        v.push_str("        sat_q  <= t_sat;\n");
    }
    v.push_str("      end\n    end\n  end\n");
    let _ = writeln!(v, "  {back_top} u_round (");
    let mut c = Vec::new();
    if sb > 0 {
        c.push(".clk_i(clk_i)".to_string());
        c.push(".rst_ni(rst_ni)".to_string());
    }
    c.extend(
        [
            ".valid_i(done_q)",
            ".acc_i(acc_q)",
            ".nan_i(nan_q)",
            ".inv_i(inv_q)",
            ".pinf_i(pinf_q)",
            ".ninf_i(ninf_q)",
            ".ovf_i(ovf_q)",
            ".allz_i(allz_q)",
            ".zpos_i(zpos_q)",
            ".zneg_i(zneg_q)",
        ]
        .map(String::from),
    );
    if dyn_rm {
        c.push(".rm_i(rm_q)".into());
    }
    if dyn_sat {
        c.push(".sat_i(sat_q)".into());
    }
    c.extend([".r_o(acc_o)", ".flags_o(flags_o)", ".valid_o(valid_o)"].map(String::from));
    let _ = writeln!(v, "    {}\n  );", c.join(",\n    "));
    v.push_str("endmodule\n\n`default_nettype wire\n");
    let mut verilog = String::from("/* verilator lint_off DECLFILENAME */\n");
    verilog.push_str(&front.emit());
    verilog.push('\n');
    verilog.push_str(&back.emit());
    verilog.push_str("/* verilator lint_on DECLFILENAME */\n\n");
    verilog.push_str(&v);
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
        ports,
    };
    Ok(GeneratedCore {
        verilog,
        manifest,
        top,
        depth: front_depth.max(back_depth),
    })
}

/// Declarations of the interleaved accumulators (`--interleave L`): the accumulator of the
/// issuing step (`clear ? 0 : k_q`), its value (+0 when it starts fresh), the lane index
/// delayed alongside the FMA pipeline.
fn interleave_decl(v: &mut String, nl: u32, stages: u32) {
    let lw = lane_width(nl);
    let r = |w: u32| {
        if w == 1 {
            String::new()
        } else {
            format!("[{}:0] ", w - 1)
        }
    };
    let _ = writeln!(
        v,
        "  // {nl} interleaved accumulators: step k after a clear goes to accumulator k mod {nl};"
    );
    let _ = writeln!(
        v,
        "  // a clear starts all of them afresh (lane 0 with its product, the others at their next step)"
    );
    for j in 0..nl {
        let _ = writeln!(v, "  reg  [31:0] lacc{j}_q;");
    }
    let _ = writeln!(v, "  reg  {}fresh_q;", r(nl));
    let _ = writeln!(v, "  reg  {}k_q;", r(lw));
    let _ = writeln!(v, "  reg  {}lane_q;", r(lw));
    let _ = writeln!(v, "  wire {}lane_in = clear_i ? {lw}'h0 : k_q;", r(lw));
    let mut sel = String::from("32'h0");
    for j in (0..nl).rev() {
        sel = format!("(lane_in == {lw}'h{j:x}) ? lacc{j}_q :\n                          {sel}");
    }
    let _ = writeln!(v, "  wire [31:0] lane_acc = {sel};");
    let _ = writeln!(
        v,
        "  wire [31:0] fma_z = (clear_i | fresh_q[lane_in]) ? 32'h0 : lane_acc;"
    );
    for d in 1..=stages {
        let _ = writeln!(v, "  reg  {}lane_d{d}_q;", r(lw));
    }
    let done = if stages == 0 {
        "lane_in".to_string()
    } else {
        format!("lane_d{stages}_q")
    };
    let _ = writeln!(v, "  wire {}lane_done = {done};", r(lw));
}

/// The always block of the interleaved accumulators.
fn interleave_regs(v: &mut String, nl: u32, stages: u32) {
    let lw = lane_width(nl);
    v.push_str("  always @(posedge clk_i) begin\n");
    if stages > 0 {
        let _ = writeln!(v, "    lane_d1_q <= lane_in;");
        for d in 2..=stages {
            let _ = writeln!(v, "    lane_d{d}_q <= lane_d{}_q;", d - 1);
        }
    }
    v.push_str("    if (!rst_ni) begin\n");
    for j in 0..nl {
        let _ = writeln!(v, "      lacc{j}_q <= 32'h0;");
    }
    let _ = writeln!(
        v,
        "      fresh_q <= {nl}'h0;\n      k_q <= {lw}'h0;\n      lane_q <= {lw}'h0;"
    );
    v.push_str("    end else begin\n      if (valid_i) begin\n");
    let _ = writeln!(
        v,
        "        k_q <= (lane_in == {lw}'h{:x}) ? {lw}'h0 : lane_in + {lw}'h1;",
        nl - 1
    );
    let _ = writeln!(
        v,
        "        if (clear_i) fresh_q <= {{{{{}{{1'b1}}}}, 1'b0}};\n        else fresh_q[lane_in] <= 1'b0;",
        nl - 1
    );
    v.push_str("      end\n      if (fma_valid) begin\n        lane_q <= lane_done;\n        case (lane_done)\n");
    for j in 0..nl {
        let _ = writeln!(v, "          {lw}'h{j:x}: lacc{j}_q <= fma_r;");
    }
    v.push_str("          default: ;\n        endcase\n      end\n    end\n  end\n  assign lane_o = lane_q;\n");
}
