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

/// The golden stream model of a `mac` core: one [`MacModel::step`] per cycle.
#[derive(Clone, Debug)]
pub struct MacModel {
    fma: FmaModel,
    dyn_rm: bool,
    dyn_sat: bool,
    acc: u32,
    flags: u8,
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
    }

    /// Processes one input cycle `[valid_i, clear_i, x_i, y_i, (rm_i), (sat_i)]` and returns
    /// what the core shows `L` cycles later: `[acc_o, flags_o, valid_o]` (inputs must respect
    /// the initiation interval).
    pub fn step(&mut self, inputs: &[u64]) -> [u64; 3] {
        let valid = inputs.first().copied().unwrap_or(0) & 1 == 1;
        if valid {
            let clear = inputs.get(1).copied().unwrap_or(0) & 1 == 1;
            let z = if clear { 0 } else { self.acc };
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
        }
        [self.acc as u64, self.flags as u64, valid as u64]
    }

    fn fma_x_mask(&self) -> u32 {
        self.fma.x_mask()
    }
    fn fma_y_mask(&self) -> u32 {
        self.fma.y_mask()
    }

    /// Runs a whole stream from the reset state; one output row per input row.
    pub fn run(req: &GenRequest, cycles: &[Vec<u64>]) -> Result<Vec<[u64; 3]>, GenError> {
        let mut m = MacModel::new(req)?;
        Ok(cycles.iter().map(|c| m.step(c)).collect())
    }
}

/// Generates the MAC core (FMA module + accumulator wrapper in one file).
pub fn generate(req: &GenRequest) -> Result<GeneratedCore, GenError> {
    super::fma::validate(req)?;
    let fx = req.formats.x;
    let fy = super::mul::y_format(req);
    let top = top_name(req, "mac");
    let fma_top = format!("{top}_fma");
    let mut freq = req.clone();
    freq.unit = Unit::Fma;
    let mut b = ModuleBuilder::new();
    let x = b.input("x_i", fx.k);
    let y = b.input("y_i", fy.k);
    let z = b.input("z_i", 32);
    let modes = super::mul::mode_ports(&mut b, &freq);
    let out = super::fma::fma_datapath(&mut b, &fx, &x, &fy, &y, &z, &modes, req.options.ftz);
    b.output("r_o", out.code);
    b.output("flags_o", out.flags);
    let mut fh = vec![format!(
        "Unit:        fma core of the mac {top} (acc <- x * y + acc)"
    )];
    fh.extend(header_lines(req));
    let core = finish_core(&freq, b, &fma_top, fh)?;
    let n = req.stages;
    let lat = latency(n);
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
        "// Pipeline:    fma stages {n}; latency {lat} cycle(s); initiation interval {lat} (issue at most one step every {lat} cycle(s))"
    );
    v.push_str("\n`default_nettype none\n\n");
    let _ = writeln!(v, "module {top} (");
    for (i, p) in ports.iter().enumerate() {
        let (name, w) = (&p.name, p.width);
        let d = if p.direction == Direction::Input {
            "input "
        } else {
            "output"
        };
        let r = if w == 1 {
            String::new()
        } else {
            format!("[{}:0] ", w - 1)
        };
        let comma = if i + 1 < ports.len() { "," } else { "" };
        let _ = writeln!(v, "    {d} wire {r:<7}{name}{comma}");
    }
    v.push_str(");\n");
    v.push_str("  reg  [31:0] acc_q;\n  reg  [3:0] flags_q;\n  reg  done_q;\n");
    v.push_str("  wire [31:0] fma_z = clear_i ? 32'h0 : acc_q;\n");
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
    manifest.initiation_interval = lat;
    manifest.ports = ports;
    Ok(GeneratedCore {
        verilog,
        manifest,
        top,
    })
}
