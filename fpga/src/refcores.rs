//! Reference cores for the QoR table and the board-flow tests: an unsigned integer
//! multiplier (the "what does an 8×8 multiply cost on this device" row), written here in
//! plain Verilog-2005 so that the FPGA flow can be exercised without any fp8gen unit.

use crate::{Core, FpgaError, Port, Role};

/// Unsigned `wa × wb` integer multiplier `a_i * b_i → p_o`.
///
/// * `stages = 0`: combinational.
/// * `stages = 1`: the two half-width partial products `a·b[lo]` and `a·b[hi]` are
///   registered, their shifted sum is combinational (latency 1).
/// * `stages = 2`: as 1, with the sum registered too (latency 2).
///
/// Clocked variants have a `clk` port; there is no reset (every stage is overwritten each
/// cycle).
pub fn int_mul(wa: u32, wb: u32, stages: u32) -> Result<Core, FpgaError> {
    if !(1..=32).contains(&wa) || !(2..=32).contains(&wb) {
        return Err(FpgaError::BadRequest(format!(
            "integer multiplier {wa}x{wb}: widths must be 1..=32 (a) and 2..=32 (b)"
        )));
    }
    if stages > 2 {
        return Err(FpgaError::BadRequest(format!(
            "integer multiplier: {stages} stages requested, 0, 1 or 2 are available"
        )));
    }
    let wp = wa + wb;
    let top = format!("int_mul{wa}x{wb}_s{stages}");
    let mut v = format!(
        "// Unsigned {wa}x{wb} integer multiplier, {stages} pipeline stage(s). \
         Reference core of fp8gen's FPGA flow.\n"
    );
    let mut ports = Vec::new();
    if stages == 0 {
        v.push_str(&format!(
            "module {top} (\n    input  wire [{}:0] a_i,\n    input  wire [{}:0] b_i,\n    \
             output wire [{}:0] p_o\n);\n    assign p_o = a_i * b_i;\nendmodule\n",
            wa - 1,
            wb - 1,
            wp - 1
        ));
    } else {
        ports.push(Port::control("clk", Role::Clock));
        let lo = wb / 2;
        let hi = wb - lo;
        v.push_str(&format!(
            "module {top} (\n    input  wire clk,\n    input  wire [{a}:0] a_i,\n    \
             input  wire [{b}:0] b_i,\n    output {kind} [{p}:0] p_o\n);\n",
            a = wa - 1,
            b = wb - 1,
            p = wp - 1,
            kind = if stages == 2 { "reg " } else { "wire" }
        ));
        v.push_str(&format!(
            "    reg [{}:0] pp_lo;\n    reg [{}:0] pp_hi;\n    always @(posedge clk) begin\n        \
             pp_lo <= a_i * b_i[{}:0];\n        pp_hi <= a_i * b_i[{}:{}];\n    end\n",
            wa + lo - 1,
            wa + hi - 1,
            lo - 1,
            wb - 1,
            lo
        ));
        let sum = format!("{{{{{hi}{{1'b0}}}}, pp_lo}} + {{pp_hi, {lo}'b0}}");
        if stages == 1 {
            v.push_str(&format!("    assign p_o = {sum};\n"));
        } else {
            v.push_str(&format!("    always @(posedge clk) p_o <= {sum};\n"));
        }
        v.push_str("endmodule\n");
    }
    ports.push(Port::input("a_i", wa));
    ports.push(Port::input("b_i", wb));
    ports.push(Port::output("p_o", wp));
    Ok(Core {
        verilog: v,
        top,
        ports,
        latency: stages,
    })
}
