//! The self-checking testbench fp8gen writes next to a generated core (FuseSoC `sim` target,
//! [`crate::fusesoc`]): `<top>_tb.sv` (SystemVerilog for `$fatal`; not `.v`, so globs of a
//! core directory's `*.v` find only the core) replays `<top>_vectors.hex`, one line per clock
//! cycle (or per combinational step) of inputs and the outputs the golden model expects, lists
//! the first ten cycles that differ and ends with `$fatal` (non-zero exit) if any did, else
//! prints `PASS`.
//!
//! Stimulus: [`SIM_CYCLES`] cycles of random operands, modes and (for clocked cores) random
//! bubbles (`valid_i = 0`); a `mac` gets streams with random `clear_i` that respect the
//! initiation interval. Expected outputs: [`crate::units::GoldenModel`] (pure units) or
//! [`crate::units::mac::MacModel`] (the cycle-level `mac` model). A line holds
//! `{valid_i, data inputs…, valid_o, data outputs…}` of one cycle (ports in manifest order,
//! clock and reset left out); the outputs of a cycle are those of the inputs `latency` cycles
//! earlier, so `valid_o` is checked in every cycle and the data outputs whenever `valid_o` is
//! expected. Both files are a pure function of the request (same request → same bytes).

use crate::manifest::{Direction, Port, Role};
use crate::units::{mac::MacModel, GoldenModel};
use crate::{GenError, GenRequest, GeneratedCore};

/// Cycles of stimulus in `<top>_vectors.hex` (the pipeline drain comes on top).
pub const SIM_CYCLES: usize = 256;

/// `<top>_tb.sv` and `<top>_vectors.hex` of a generated core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Testbench {
    /// Top module of the testbench (`<top>_tb`), also the file stem.
    pub top: String,
    /// SystemVerilog text of `<top>_tb.sv`.
    pub verilog: String,
    /// `$readmemh` text of `<top>_vectors.hex`.
    pub vectors: String,
    /// Lines (cycles) in the vector file.
    pub lines: usize,
}

/// The file names of the testbench of the core `top`: (`<top>_tb.sv`, `<top>_vectors.hex`).
pub fn file_names(top: &str) -> (String, String) {
    (format!("{top}_tb.sv"), format!("{top}_vectors.hex"))
}

/// splitmix64: a fixed, portable pseudo-random sequence (the files must not change between
/// runs or platforms).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn bits(&mut self, w: u32) -> u64 {
        if w >= 64 {
            self.next()
        } else {
            self.next() & ((1u64 << w) - 1)
        }
    }
}

/// A random value for data input `p`.
fn stimulus(rng: &mut Rng, p: &Port) -> u64 {
    match p.role {
        Role::Rounding => rng.below(iface::DETERMINISTIC_ROUNDINGS as u64),
        Role::Saturation => rng.below(iface::SATURATION_ENCODING.len() as u64),
        Role::Clear => (rng.below(12) == 0) as u64,
        // binary32 addends: random bits, values near the products, and specials.
        Role::Z if p.width == 32 => match rng.below(8) {
            0 => [0, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 1][rng.below(6) as usize],
            1 | 2 => rng.bits(32),
            _ => (rng.bits(1) << 31) | ((112 + rng.below(32)) << 23) | rng.bits(23),
        },
        _ => rng.bits(p.width),
    }
}

/// Bits of `v` (width `w`) appended MSB first.
fn push_bits(bits: &mut Vec<bool>, v: u64, w: u32) {
    bits.extend((0..w).rev().map(|i| i < 64 && (v >> i) & 1 == 1));
}

fn hex_line(bits: &[bool]) -> String {
    let pad = (4 - bits.len() % 4) % 4;
    let all: Vec<bool> = std::iter::repeat_n(false, pad)
        .chain(bits.iter().copied())
        .collect();
    all.chunks(4)
        .map(|c| {
            let n = c.iter().fold(0u32, |a, &b| (a << 1) | b as u32);
            char::from_digit(n, 16).unwrap_or('0')
        })
        .collect()
}

fn decl(kind: &str, p: &Port, name: &str) -> String {
    if p.width == 1 {
        format!("  {kind} {name};\n")
    } else {
        format!("  {kind} [{}:0] {name};\n", p.width - 1)
    }
}

/// The testbench of `core`, generated from `req` (`core` must be `generate(req)`).
pub fn testbench(req: &GenRequest, core: &GeneratedCore) -> Result<Testbench, GenError> {
    let ports = &core.manifest.ports;
    let latency = core.manifest.latency as usize;
    let ii = core.manifest.initiation_interval.max(1) as usize;
    let find = |r: Role| ports.iter().find(|p| p.role == r);
    let clock = find(Role::Clock);
    let valid_in = find(Role::ValidIn).ok_or_else(|| GenError::Internal("no valid_i".into()))?;
    let valid_out = find(Role::ValidOut).ok_or_else(|| GenError::Internal("no valid_o".into()))?;
    if clock.is_none() && latency > 0 {
        return Err(GenError::Internal(
            "a pipelined core without a clock".into(),
        ));
    }
    let ins: Vec<&Port> = ports
        .iter()
        .filter(|p| p.direction == Direction::Input && !p.role.is_control())
        .collect();
    let outs: Vec<&Port> = ports
        .iter()
        .filter(|p| p.direction == Direction::Output && !p.role.is_control())
        .collect();

    // ---- stimulus and expected outputs ----
    enum Model {
        Pure(GoldenModel),
        Mac(Box<MacModel>),
    }
    let mut model = match req.unit {
        u if u.is_stateful() => Model::Mac(Box::new(MacModel::new(req)?)),
        _ => Model::Pure(GoldenModel::new(req)?),
    };
    let mut rng = Rng(0x5EED_F86E ^ core.top.len() as u64);
    let cycles = SIM_CYCLES + latency;
    let mut inputs: Vec<(bool, Vec<u64>)> = Vec::with_capacity(cycles);
    let mut results: Vec<(bool, Vec<u64>)> = Vec::with_capacity(cycles);
    let mut last_issue: Option<usize> = None;
    let mut first = true;
    for c in 0..cycles {
        let mut data: Vec<u64> = ins.iter().map(|p| stimulus(&mut rng, p)).collect();
        let may = c < SIM_CYCLES && last_issue.is_none_or(|l| c - l >= ii);
        // Clocked cores get ~25% bubbles; combinational ones one in eight.
        let valid = may && rng.below(if clock.is_some() { 4 } else { 8 }) != 0;
        if valid {
            last_issue = Some(c);
        }
        let out = match &mut model {
            Model::Pure(m) => {
                if valid {
                    m.eval(&data)
                } else {
                    vec![0; outs.len()]
                }
            }
            Model::Mac(m) => {
                if valid && first {
                    // Every stream starts with a clear (the reset state is +0 anyway).
                    if let Some(i) = ins.iter().position(|p| p.role == Role::Clear) {
                        data[i] = 1;
                    }
                    first = false;
                }
                let mut row = vec![valid as u64];
                row.extend(&data);
                let o = m.step(&row);
                o[..outs.len()].to_vec()
            }
        };
        inputs.push((valid, data));
        results.push((valid, out));
    }
    // Line c: the inputs of cycle c and the outputs of the inputs of cycle c - latency.
    let mut hex = String::new();
    for (c, (v, d)) in inputs.iter().enumerate() {
        let mut bits = Vec::new();
        push_bits(&mut bits, *v as u64, 1);
        for (p, x) in ins.iter().zip(d) {
            push_bits(&mut bits, *x, p.width);
        }
        let (ev, eo) = match c.checked_sub(latency) {
            Some(k) => (results[k].0, results[k].1.clone()),
            None => (false, vec![0; outs.len()]),
        };
        push_bits(&mut bits, ev as u64, 1);
        for (p, x) in outs.iter().zip(&eo) {
            push_bits(&mut bits, if ev { *x } else { 0 }, p.width);
        }
        hex.push_str(&hex_line(&bits));
        hex.push('\n');
    }

    // ---- Verilog ----
    let top = &core.top;
    let tb = format!("{top}_tb");
    let (_, hex_name) = file_names(top);
    let width: u32 = 2 + ins.iter().chain(&outs).map(|p| p.width).sum::<u32>();
    let mut v = String::new();
    v.push_str(&format!(
        "// Generated by fp8gen {}: {}. Do not edit.\n\
         // Self-checking testbench of {top}: replays {hex_name},\n\
         // {cycles} cycles of inputs and of the outputs fp8gen's golden model expects {latency}\n\
         // cycle(s) later; $fatal on a mismatch, else PASS (FuseSoC target sim).\n\
         module {tb};\n\
         \x20 localparam integer N = {cycles};\n\
         \x20 reg [{}:0] vec [0:N-1];\n",
        golden::VERSION,
        core.manifest.command,
        width - 1
    ));
    for p in ports {
        let kind = if p.direction == Direction::Input {
            "reg"
        } else {
            "wire"
        };
        v.push_str(&decl(kind, p, &p.name));
    }
    v.push_str(&decl("reg", valid_out, "exp_valid"));
    for p in &outs {
        v.push_str(&decl("reg", p, &format!("exp_{}", p.name)));
    }
    v.push_str("  integer i, errors, checked;\n\n");
    let conns: Vec<String> = ports
        .iter()
        .map(|p| format!("    .{0}({0})", p.name))
        .collect();
    v.push_str(&format!("  {top} dut (\n{}\n  );\n\n", conns.join(",\n")));
    if let Some(c) = clock {
        v.push_str(&format!(
            "  initial {} = 1'b0;\n  always #5 {0} <= ~{0};\n\n",
            c.name
        ));
    }
    let mut lhs = vec![valid_in.name.clone()];
    lhs.extend(ins.iter().map(|p| p.name.clone()));
    lhs.push("exp_valid".into());
    lhs.extend(outs.iter().map(|p| format!("exp_{}", p.name)));
    let got: Vec<&str> = outs.iter().map(|p| p.name.as_str()).collect();
    let want: Vec<String> = outs.iter().map(|p| format!("exp_{}", p.name)).collect();
    let mut fmt_s = format!("MISMATCH cycle %0d: {} %b (expected %b)", valid_out.name);
    let mut fmt_a = format!("i, {}, exp_valid", valid_out.name);
    for (g, w) in got.iter().zip(&want) {
        fmt_s.push_str(&format!(", {g} %h (expected %h)"));
        fmt_a.push_str(&format!(", {g}, {w}"));
    }
    let data_ne = if outs.is_empty() {
        "1'b0".to_string()
    } else {
        format!("{{{}}} !== {{{}}}", got.join(", "), want.join(", "))
    };
    v.push_str("  initial begin\n");
    v.push_str(&format!("    $readmemh(\"{hex_name}\", vec);\n"));
    v.push_str("    errors = 0;\n    checked = 0;\n");
    v.push_str(&format!("    {} = 1'b0;\n", valid_in.name));
    for p in &ins {
        v.push_str(&format!("    {} = 0;\n", p.name));
    }
    if let Some(r) = find(Role::ResetN) {
        v.push_str(&format!("    {} = 1'b0;\n", r.name));
    }
    if let Some(r) = find(Role::Reset) {
        v.push_str(&format!("    {} = 1'b1;\n", r.name));
    }
    if let Some(c) = clock {
        // Inputs change at falling edges; outputs are checked 1 ns before the rising edge.
        v.push_str(&format!("    repeat (3) @(negedge {});\n", c.name));
    }
    if let Some(r) = find(Role::ResetN) {
        v.push_str(&format!("    {} = 1'b1;\n", r.name));
    }
    if let Some(r) = find(Role::Reset) {
        v.push_str(&format!("    {} = 1'b0;\n", r.name));
    }
    v.push_str("    for (i = 0; i < N; i = i + 1) begin\n");
    v.push_str(&format!("      {{{}}} = vec[i];\n", lhs.join(", ")));
    v.push_str(if clock.is_some() {
        "      #4;\n"
    } else {
        "      #1;\n"
    });
    v.push_str(&format!(
        "      if ({} !== exp_valid || (exp_valid && {data_ne})) begin\n",
        valid_out.name
    ));
    v.push_str("        errors = errors + 1;\n");
    v.push_str(&format!(
        "        if (errors <= 10) $display(\"{fmt_s}\", {fmt_a});\n"
    ));
    v.push_str("      end\n      if (exp_valid) checked = checked + 1;\n");
    match clock {
        Some(c) => v.push_str(&format!("      @(negedge {});\n", c.name)),
        None => v.push_str("      #1;\n"),
    }
    v.push_str("    end\n");
    v.push_str(&format!(
        "    if (errors != 0)\n      $fatal(1, \"FAIL: %0d of %0d cycles of {top} differ from the fp8gen golden model\", errors, N);\n"
    ));
    v.push_str(&format!(
        "    if (checked == 0)\n      $fatal(1, \"FAIL: no result of {top} was checked\");\n"
    ));
    v.push_str(&format!(
        "    $display(\"PASS: %0d results of {top} match the fp8gen golden model ({} checked in every one of %0d cycles)\", checked, N);\n",
        std::iter::once(valid_out.name.as_str()).chain(got.iter().copied()).collect::<Vec<_>>().join(", ")
    ));
    v.push_str("    $finish;\n  end\nendmodule\n");
    Ok(Testbench {
        top: tb,
        verilog: v,
        vectors: hex,
        lines: cycles,
    })
}
