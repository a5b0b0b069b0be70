//! The synthesis wrapper: a top module that gives any core registered inputs and outputs
//! with a pin count of three (`clk`, `si`, `so`), so that
//! * the measured Fmax is that of the core's own register-to-register paths
//!   (input register → core → output register), and
//! * a core with 80+ signal bits still fits the 39 I/Os of an iCE40 UP5K SG48.
//!
//! Inputs: every non-clock input bit of the core is a flip-flop of one shift chain fed by
//! `si` (no logic between the flip-flops). Outputs: every output bit is captured in a
//! flip-flop, then folded into `so` by a pipelined XOR tree (4 bits per level, one LUT per
//! level, registered), which keeps every output observable so nothing is optimised away.
//! The core instance carries `(* keep_hierarchy *)` so yosys reports its cells separately
//! from the wrapper's.

use std::fmt::Write as _;

use crate::{Core, Direction, Role};

/// Module name of the synthesis wrapper.
pub const WRAPPER_TOP: &str = "fp8gen_synth_top";

/// What the wrapper adds around the core (reported next to the core's own numbers).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WrapperCost {
    /// Input flip-flops (one per non-clock input bit).
    pub input_ffs: u32,
    /// Output flip-flops (one per output bit).
    pub output_ffs: u32,
    /// Flip-flops of the XOR tree (including the `so` register).
    pub xor_ffs: u32,
}

/// Widths of the XOR-tree levels after the output register (last level is 1 bit wide).
fn xor_levels(out_width: u32) -> Vec<u32> {
    let mut levels = Vec::new();
    let mut w = out_width;
    while w > 1 {
        w = w.div_ceil(4);
        levels.push(w);
    }
    if levels.is_empty() {
        levels.push(1);
    }
    levels
}

/// Writes the wrapper's Verilog (the core's source is read separately).
pub fn wrapper_verilog(core: &Core) -> (String, WrapperCost) {
    let ins: Vec<_> = core
        .ports
        .iter()
        .filter(|p| p.direction == Direction::Input && p.role != Role::Clock)
        .collect();
    let outs: Vec<_> = core
        .ports
        .iter()
        .filter(|p| p.direction == Direction::Output)
        .collect();
    let iw: u32 = ins.iter().map(|p| p.width).sum();
    let ow: u32 = outs.iter().map(|p| p.width).sum();
    let levels = xor_levels(ow);

    let mut v = String::new();
    let _ = writeln!(
        v,
        "// fp8gen synthesis wrapper for `{}`: {iw} input bits through a shift chain,\n\
         // {ow} output bits registered and XOR-folded to one pin. Generated; do not edit.",
        core.top
    );
    v.push_str("`default_nettype none\n");
    let _ = writeln!(
        v,
        "module {WRAPPER_TOP} (\n    input  wire clk,\n    input  wire si,\n    output wire so\n);"
    );
    let _ = writeln!(v, "    reg  [{}:0] in_r;", iw - 1);
    if iw == 1 {
        v.push_str("    always @(posedge clk) in_r <= si;\n");
    } else {
        let _ = writeln!(
            v,
            "    always @(posedge clk) in_r <= {{in_r[{}:0], si}};",
            iw - 2
        );
    }
    let _ = writeln!(v, "    wire [{}:0] core_out;", ow - 1);
    let _ = writeln!(v, "    (* keep_hierarchy *)\n    {} dut (", core.top);
    let mut conns = Vec::new();
    let (mut ilo, mut olo) = (0u32, 0u32);
    for p in &core.ports {
        let expr = if p.role == Role::Clock {
            "clk".to_string()
        } else if p.direction == Direction::Input {
            let e = format!("in_r[{}:{}]", ilo + p.width - 1, ilo);
            ilo += p.width;
            e
        } else {
            let e = format!("core_out[{}:{}]", olo + p.width - 1, olo);
            olo += p.width;
            e
        };
        conns.push(format!("        .{}({})", p.name, expr));
    }
    v.push_str(&conns.join(",\n"));
    v.push_str("\n    );\n");
    let _ = writeln!(v, "    reg  [{}:0] out_r;", ow - 1);
    v.push_str("    always @(posedge clk) out_r <= core_out;\n");
    let mut prev = ("out_r".to_string(), ow);
    for (k, &w) in levels.iter().enumerate() {
        let name = format!("x{k}");
        let _ = writeln!(v, "    reg  [{}:0] {name};", w - 1);
        v.push_str("    always @(posedge clk) begin\n");
        for i in 0..w {
            let lo = 4 * i;
            let hi = (lo + 3).min(prev.1 - 1);
            if prev.1 == 1 {
                let _ = writeln!(v, "        {name}[0] <= {}[0];", prev.0);
            } else {
                let _ = writeln!(v, "        {name}[{i}] <= ^{}[{hi}:{lo}];", prev.0);
            }
        }
        v.push_str("    end\n");
        prev = (name, w);
    }
    let _ = writeln!(v, "    assign so = {}[0];", prev.0);
    v.push_str("endmodule\n`default_nettype wire\n");
    let cost = WrapperCost {
        input_ffs: iw,
        output_ffs: ow,
        xor_ffs: levels.iter().sum(),
    };
    (v, cost)
}
