//! The board test shell: a UART (8N1) front end that lets a host replay vectors through a
//! core on a real board.
//!
//! Protocol (all multi-byte values little-endian, i.e. least significant byte first):
//!
//! * host → board: `0xA5`, then `in_bytes` bytes holding the core's operands
//!   ([`Core::operands`]: the data inputs, without `valid_in`) concatenated in port order,
//!   first port in the least significant bits;
//! * the shell loads them into the core's input register and holds them. A clocked core's
//!   `valid_in` is pulsed for one cycle and the outputs are captured `latency + 1` cycles
//!   later; a combinational core's `valid_in` is tied to 1 and the outputs are captured 16
//!   cycles later (so a core slower than the board clock works as a multicycle path);
//! * board → host: `0x5A`, a status byte (bit 0: `valid_out` at capture, or 1 if the core
//!   has no `valid_out`; bit 1: a frame was abandoned since the last answer), then
//!   `out_bytes` bytes holding the results ([`Core::results`]: the data outputs, without
//!   `valid_out`) packed like the operands.
//!
//! A frame whose bytes stop arriving for 16 byte times is abandoned (the shell goes back to
//! waiting for `0xA5`). Resets of the core (`reset`/`reset_n` roles) are asserted for 16
//! cycles after configuration. `led[0]` blinks (heartbeat), `led[1]` toggles per frame.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::{Core, Direction, FpgaError, Port, Role};

/// Top module of a board build.
pub const SHELL_TOP: &str = "fp8gen_board_top";
/// UART module of the shell.
pub const SHELL_UART_MODULE: &str = "fp8gen_uart";
/// First byte of a request frame.
pub const REQ_HEADER: u8 = 0xA5;
/// First byte of a response frame.
pub const RESP_HEADER: u8 = 0x5A;

/// Everything the host needs to talk to a shell: written as `shell.json` by board builds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellLayout {
    /// Core top module.
    pub core: String,
    /// The operands of a vector ([`Core::operands`]), in order.
    pub inputs: Vec<Port>,
    /// The results of a vector ([`Core::results`]), in order.
    pub outputs: Vec<Port>,
    /// Bytes of input payload per request.
    pub in_bytes: u32,
    /// Bytes of output payload per response.
    pub out_bytes: u32,
    /// Core latency in cycles.
    pub latency: u32,
    /// Whether the core has a `valid_out` that the status byte reports.
    pub has_valid_out: bool,
    /// Board clock, Hz.
    pub clk_hz: u64,
    /// Serial baud rate.
    pub baud: u32,
    /// Clock cycles per UART bit (`clk_hz / baud`, rounded).
    pub clks_per_bit: u32,
}

impl ShellLayout {
    /// The layout of `core` behind a shell clocked at `clk_hz` talking at `baud`.
    pub fn new(core: &Core, clk_hz: u64, baud: u32) -> Result<ShellLayout, FpgaError> {
        if baud == 0 {
            return Err(FpgaError::BadRequest("baud rate must be positive".into()));
        }
        let cpb = ((clk_hz + u64::from(baud) / 2) / u64::from(baud)) as u32;
        if cpb < 4 {
            return Err(FpgaError::BadRequest(format!(
                "{baud} baud is too fast for a {clk_hz} Hz clock (need at least 4 clocks per bit)"
            )));
        }
        let err_ppm = (i128::from(cpb) * i128::from(baud) - i128::from(clk_hz)).abs() * 1_000_000
            / i128::from(clk_hz);
        if err_ppm > 20_000 {
            return Err(FpgaError::BadRequest(format!(
                "{baud} baud cannot be made from a {clk_hz} Hz clock within 2% \
                 (divider {cpb}); choose another baud rate"
            )));
        }
        let inputs: Vec<Port> = core.operands().cloned().collect();
        let outputs: Vec<Port> = core.results().cloned().collect();
        let iw: u32 = inputs.iter().map(|p| p.width).sum();
        let ow: u32 = outputs.iter().map(|p| p.width).sum();
        if iw.div_ceil(8) > 255 || ow.div_ceil(8) > 253 || core.latency > 250 {
            return Err(FpgaError::BadRequest(format!(
                "the UART shell carries at most 255 input bytes, 253 output bytes and a \
                 latency of 250 cycles; `{}` has {} input bytes, {} output bytes, latency {}",
                core.top,
                iw.div_ceil(8),
                ow.div_ceil(8),
                core.latency
            )));
        }
        Ok(ShellLayout {
            core: core.top.clone(),
            in_bytes: iw.div_ceil(8),
            out_bytes: ow.max(1).div_ceil(8),
            inputs,
            outputs,
            latency: core.latency,
            has_valid_out: core.with_role(Role::ValidOut).is_some(),
            clk_hz,
            baud,
            clks_per_bit: cpb,
        })
    }

    /// Cycles from loading the inputs to capturing the outputs.
    pub fn wait_cycles(&self, clocked: bool) -> u32 {
        if clocked {
            self.latency + 1
        } else {
            16
        }
    }

    /// Encodes one request frame (header + packed inputs). `values` has one entry per
    /// operand; each must fit its port.
    pub fn encode_request(&self, values: &[u64]) -> Result<Vec<u8>, FpgaError> {
        if values.len() != self.inputs.len() {
            return Err(FpgaError::BadRequest(format!(
                "vector has {} values but `{}` takes {} operands ({})",
                values.len(),
                self.core,
                self.inputs.len(),
                self.inputs
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let mut bits = vec![0u8; self.in_bytes as usize];
        let mut pos = 0u32;
        for (p, &v) in self.inputs.iter().zip(values) {
            if p.width < 64 && v >> p.width != 0 {
                return Err(FpgaError::BadRequest(format!(
                    "value {v:#x} does not fit the {}-bit input `{}`",
                    p.width, p.name
                )));
            }
            for b in 0..p.width {
                if (v >> b) & 1 == 1 {
                    let at = pos + b;
                    bits[(at / 8) as usize] |= 1 << (at % 8);
                }
            }
            pos += p.width;
        }
        let mut frame = vec![REQ_HEADER];
        frame.extend(bits);
        Ok(frame)
    }

    /// Length of a response frame in bytes.
    pub fn response_len(&self) -> usize {
        2 + self.out_bytes as usize
    }

    /// Decodes a response frame into (status byte, one value per result port).
    pub fn decode_response(&self, frame: &[u8]) -> Result<(u8, Vec<u64>), FpgaError> {
        if frame.len() != self.response_len() {
            return Err(FpgaError::Link(format!(
                "response has {} bytes, expected {}",
                frame.len(),
                self.response_len()
            )));
        }
        if frame[0] != RESP_HEADER {
            return Err(FpgaError::Link(format!(
                "response starts with {:#04x}, expected {RESP_HEADER:#04x}; \
                 wrong bitstream, port or baud rate?",
                frame[0]
            )));
        }
        let payload = &frame[2..];
        let mut out = Vec::with_capacity(self.outputs.len());
        let mut pos = 0u32;
        for p in &self.outputs {
            let mut v = 0u64;
            for b in 0..p.width {
                let at = pos + b;
                if (payload[(at / 8) as usize] >> (at % 8)) & 1 == 1 {
                    v |= 1 << b;
                }
            }
            out.push(v);
            pos += p.width;
        }
        Ok((frame[1], out))
    }
}

/// Board-specific settings of the shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShellOptions {
    /// Number of LED outputs driven (`led[0]` heartbeat, `led[1]` frame toggle, rest off).
    pub leds: u32,
    /// LEDs light on a low level.
    pub leds_active_low: bool,
    /// Heartbeat divider: `led[0]` toggles every 2^this cycles.
    pub heartbeat_log2: u32,
}

/// Writes the shell's Verilog (top [`SHELL_TOP`] and [`SHELL_UART_MODULE`]); the core's
/// source is read separately.
pub fn shell_verilog(core: &Core, layout: &ShellLayout, opt: &ShellOptions) -> String {
    let iw: u32 = layout.inputs.iter().map(|p| p.width).sum();
    let ow: u32 = layout.outputs.iter().map(|p| p.width).sum();
    let ib = layout.in_bytes * 8;
    let ob = layout.out_bytes * 8;
    let clocked = core.is_clocked();
    let wait = layout.wait_cycles(clocked);
    let frames = layout.out_bytes + 2;
    let leds = opt.leds.max(2);
    let inv = if opt.leds_active_low { "~" } else { "" };
    // 16 byte times (10 bits each) without a byte abandons a frame.
    let timeout = u64::from(layout.clks_per_bit) * 10 * 16;
    let tbits = 64 - timeout.leading_zeros();

    let mut v = String::new();
    let _ = writeln!(
        v,
        "// fp8gen UART test shell for `{}`: {} baud 8N1 at {} Hz ({} clocks/bit).\n\
         // Request: 0xA5 + {} input byte(s); response: 0x5A + status + {} output byte(s).\n\
         // Generated by fp8gen; do not edit.",
        core.top,
        layout.baud,
        layout.clk_hz,
        layout.clks_per_bit,
        layout.in_bytes,
        layout.out_bytes
    );
    v.push_str("`default_nettype none\n");
    let _ = writeln!(
        v,
        "module {SHELL_TOP} (\n    input  wire clk,\n    input  wire uart_rx,\n    \
         output wire uart_tx,\n    output wire [{}:0] led\n);",
        leds - 1
    );
    // Power-on reset.
    v.push_str(
        "    reg [4:0] por = 5'd0;\n    wire rst = ~por[4];\n    \
         always @(posedge clk) if (!por[4]) por <= por + 5'd1;\n",
    );
    let _ = writeln!(
        v,
        "    wire [7:0] rx_data;\n    wire rx_valid;\n    reg  [7:0] tx_data = 8'd0;\n    \
         reg  tx_start = 1'b0;\n    wire tx_busy;\n    \
         {SHELL_UART_MODULE} #(.CLKS_PER_BIT({cpb})) uart (\n        .clk(clk), .rst(rst), \
         .rx(uart_rx), .tx(uart_tx),\n        .rx_data(rx_data), .rx_valid(rx_valid),\n        \
         .tx_data(tx_data), .tx_start(tx_start), .tx_busy(tx_busy)\n    );",
        cpb = layout.clks_per_bit
    );
    // Core hookup.
    let _ = writeln!(v, "    reg  [{}:0] in_buf = {ib}'d0;", ib - 1);
    let _ = writeln!(v, "    reg  [{}:0] core_in = {iw}'d0;", iw - 1);
    if ib == 8 {
        v.push_str("    wire [7:0] in_next = rx_data;\n");
    } else {
        let _ = writeln!(
            v,
            "    wire [{}:0] in_next = {{rx_data, in_buf[{}:8]}};",
            ib - 1,
            ib - 1
        );
    }
    let _ = writeln!(v, "    wire [{}:0] core_out;", ow.max(1) - 1);
    if ow == 0 {
        v.push_str("    assign core_out = 1'b0;\n");
    }
    v.push_str("    reg  valid_pulse = 1'b0;\n    wire valid_o;\n");
    if core.with_role(Role::ValidOut).is_none() {
        v.push_str("    assign valid_o = 1'b1;\n");
    }
    let _ = writeln!(v, "    {} dut (", core.top);
    let mut conns = Vec::new();
    let (mut ilo, mut olo) = (0u32, 0u32);
    for p in &core.ports {
        let expr = match (p.role, p.direction) {
            (Role::Clock, _) => "clk".to_string(),
            (Role::Reset, _) => "rst".to_string(),
            (Role::ResetN, _) => "~rst".to_string(),
            // A combinational core computes all the time: its valid_in is held high.
            (Role::ValidIn, _) if clocked => "valid_pulse".to_string(),
            (Role::ValidIn, _) => "1'b1".to_string(),
            (Role::ValidOut, _) => "valid_o".to_string(),
            (_, Direction::Input) => {
                let e = format!("core_in[{}:{}]", ilo + p.width - 1, ilo);
                ilo += p.width;
                e
            }
            (_, Direction::Output) => {
                let e = format!("core_out[{}:{}]", olo + p.width - 1, olo);
                olo += p.width;
                e
            }
        };
        conns.push(format!("        .{}({})", p.name, expr));
    }
    v.push_str(&conns.join(",\n"));
    v.push_str("\n    );\n");
    // Frame controller.
    let _ = writeln!(
        v,
        "    localparam S_IDLE = 3'd0, S_RECV = 3'd1, S_WAIT = 3'd2, S_SEND = 3'd3, S_GAP = 3'd4;\n    \
         reg [2:0] state = S_IDLE;\n    reg [7:0] count = 8'd0;\n    \
         reg [{tb}:0] idle_timer = {tw}'d0;\n    reg [{sw}:0] send_sr = {sbits}'d0;\n    \
         reg abandoned = 1'b0;\n    reg frame_led = 1'b0;",
        tb = tbits - 1,
        tw = tbits,
        sw = ob + 16 - 1,
        sbits = ob + 16
    );
    v.push_str("    always @(posedge clk) begin\n");
    v.push_str("        tx_start <= 1'b0;\n        valid_pulse <= 1'b0;\n");
    v.push_str("        if (rst) begin\n            state <= S_IDLE;\n        end else begin\n");
    v.push_str("            case (state)\n");
    let _ = writeln!(
        v,
        "            S_IDLE: if (rx_valid && rx_data == 8'h{REQ_HEADER:02X}) begin\n                \
         state <= S_RECV; count <= 8'd0; idle_timer <= {tbits}'d0;\n            end"
    );
    let _ = writeln!(
        v,
        "            S_RECV: if (rx_valid) begin\n                in_buf <= in_next;\n                \
         idle_timer <= {tbits}'d0;\n                \
         if (count == 8'd{last}) begin\n                    state <= S_WAIT;\n                    \
         count <= 8'd{wait_m1};\n                    core_in <= in_next[{iw_m1}:0];\n                    \
         valid_pulse <= 1'b1;\n                end else begin\n                    count <= count + 8'd1;\n                \
         end\n            end else if (idle_timer == {tbits}'d{timeout}) begin\n                \
         state <= S_IDLE; abandoned <= 1'b1;\n            end else begin\n                \
         idle_timer <= idle_timer + {tbits}'d1;\n            end",
        last = layout.in_bytes - 1,
        wait_m1 = wait - 1,
        iw_m1 = iw - 1,
    );
    let out_ext = if ob > ow.max(1) {
        format!("{{{}'d0, core_out}}", ob - ow.max(1))
    } else {
        "core_out".to_string()
    };
    let _ = writeln!(
        v,
        "            S_WAIT: if (count == 8'd0) begin\n                \
         send_sr <= {{{out_ext}, 6'd0, abandoned, valid_o, 8'h{RESP_HEADER:02X}}};\n                \
         abandoned <= 1'b0; frame_led <= ~frame_led;\n                \
         count <= 8'd{frames}; state <= S_SEND;\n            end else begin\n                \
         count <= count - 8'd1;\n            end"
    );
    v.push_str(
        "            S_SEND: if (count == 8'd0) begin\n                state <= S_IDLE;\n            \
         end else if (!tx_busy) begin\n                tx_data <= send_sr[7:0];\n                \
         tx_start <= 1'b1;\n",
    );
    let _ = writeln!(
        v,
        "                send_sr <= {{8'd0, send_sr[{}:8]}};\n                \
         count <= count - 8'd1;\n                state <= S_GAP;\n            end",
        ob + 15
    );
    // One cycle for tx_busy to rise after tx_start.
    v.push_str("            S_GAP: state <= S_SEND;\n            default: state <= S_IDLE;\n");
    v.push_str("            endcase\n        end\n    end\n");
    // LEDs.
    let _ = writeln!(
        v,
        "    reg [{h}:0] heartbeat = {w}'d0;\n    always @(posedge clk) heartbeat <= heartbeat + {w}'d1;",
        h = opt.heartbeat_log2,
        w = opt.heartbeat_log2 + 1
    );
    let mut led_bits = vec![
        format!("heartbeat[{}]", opt.heartbeat_log2),
        "frame_led".to_string(),
    ];
    while led_bits.len() < leds as usize {
        led_bits.push("1'b0".to_string());
    }
    led_bits.reverse();
    let _ = writeln!(v, "    assign led = {inv}{{{}}};", led_bits.join(", "));
    v.push_str("endmodule\n\n");
    v.push_str(UART_VERILOG);
    v.push_str("`default_nettype wire\n");
    v
}

/// 8N1 UART: receiver with a two-flop synchroniser sampling at bit centres, transmitter
/// with a 10-bit shift register. `tx_busy` rises the cycle after `tx_start`.
const UART_VERILOG: &str = r#"module fp8gen_uart #(parameter CLKS_PER_BIT = 104) (
    input  wire clk,
    input  wire rst,
    input  wire rx,
    output wire tx,
    output reg  [7:0] rx_data = 8'd0,
    output reg  rx_valid = 1'b0,
    input  wire [7:0] tx_data,
    input  wire tx_start,
    output wire tx_busy
);
    localparam CW = $clog2(CLKS_PER_BIT + 1);
    // Receiver.
    reg rx_m = 1'b1, rx_s = 1'b1;
    always @(posedge clk) begin rx_m <= rx; rx_s <= rx_m; end
    reg [1:0] rx_state = 2'd0;
    reg [CW-1:0] rx_cnt = {CW{1'b0}};
    reg [2:0] rx_bit = 3'd0;
    reg [7:0] rx_sh = 8'd0;
    always @(posedge clk) begin
        rx_valid <= 1'b0;
        if (rst) begin
            rx_state <= 2'd0;
        end else case (rx_state)
            2'd0: if (!rx_s) begin rx_state <= 2'd1; rx_cnt <= CLKS_PER_BIT / 2; end
            2'd1: if (rx_cnt == 0) begin
                      if (!rx_s) begin rx_state <= 2'd2; rx_cnt <= CLKS_PER_BIT - 1; rx_bit <= 3'd0; end
                      else rx_state <= 2'd0;
                  end else rx_cnt <= rx_cnt - 1'b1;
            2'd2: if (rx_cnt == 0) begin
                      rx_sh <= {rx_s, rx_sh[7:1]};
                      rx_cnt <= CLKS_PER_BIT - 1;
                      if (rx_bit == 3'd7) rx_state <= 2'd3;
                      rx_bit <= rx_bit + 3'd1;
                  end else rx_cnt <= rx_cnt - 1'b1;
            2'd3: if (rx_cnt == 0) begin
                      if (rx_s) begin rx_data <= rx_sh; rx_valid <= 1'b1; end
                      rx_state <= 2'd0;
                  end else rx_cnt <= rx_cnt - 1'b1;
        endcase
    end
    // Transmitter.
    reg [9:0] tx_sh = 10'h3FF;
    reg [3:0] tx_left = 4'd0;
    reg [CW-1:0] tx_cnt = {CW{1'b0}};
    assign tx = tx_sh[0];
    assign tx_busy = tx_left != 4'd0;
    always @(posedge clk) begin
        if (rst) begin
            tx_sh <= 10'h3FF; tx_left <= 4'd0;
        end else if (tx_left == 4'd0) begin
            if (tx_start) begin
                tx_sh <= {1'b1, tx_data, 1'b0}; tx_left <= 4'd10; tx_cnt <= CLKS_PER_BIT - 1;
            end
        end else if (tx_cnt == 0) begin
            tx_sh <= {1'b1, tx_sh[9:1]}; tx_left <= tx_left - 4'd1; tx_cnt <= CLKS_PER_BIT - 1;
        end else begin
            tx_cnt <= tx_cnt - 1'b1;
        end
    end
endmodule
"#;
