//! The reference accumulators of `mac` (sequential; proven by induction in [`crate::induct`]).
//!
//! * `--acc exact`: a naive exact accumulator written from golden/src/dot.rs `ExactAcc`: the
//!   product of the decoded significands placed by a plain shift on the product grid, added
//!   to (or subtracted from) the register in a sum one bit wider than the register, guard
//!   overflow = that wider sum does not fit the register's two's-complement range (sticky until
//!   the next clear), class state beside it, and the register projected once by the plain
//!   rounder of [`super`] with the modes of the last step; NaN with flags invalid | overflow
//!   after a guard overflow.
//! * binary32 accumulator: `acc ← fma(x, y, clear ? +0 : acc)` on each valid step, with the
//!   result and flags registered, around an instance of the core's own FMA module (that
//!   module is proven against the independent FMA reference separately, lemma F); with
//!   `--interleave L`, L such accumulators, the lane of each step chosen as the golden model's
//!   `MacModel` does.
//!
//! The reference is the 0-stage core's: a pipelined mac is compared with its 0-stage twin
//! ([`crate::induct::prove_mac_pipeline`], lemma P).
//!
//! Both have the core's ports and expose their state as `st<i>_o` ports (the names in
//! [`MacRef::state`]) for the equality invariant.

use super::{decode_operand, k, modes, rounder, Text};
use crate::FormalError;
use golden::Format;
use rtl::manifest::{Direction, Port, Role};
use rtl::{GenRequest, RoundingSel, SaturationSel};
use std::fmt::Write as _;

/// A reference accumulator: Verilog text (it may instantiate modules of the core's file),
/// top, and the state correspondence `(core register, reference register, width)`.
#[derive(Clone, Debug)]
pub struct MacRef {
    /// Verilog text.
    pub verilog: String,
    /// Top module.
    pub top: String,
    /// Corresponding registers.
    pub state: Vec<(String, String, u32)>,
}

fn decl(p: &Port) -> String {
    let dir = match p.direction {
        Direction::Input => "input ",
        Direction::Output => "output",
    };
    if p.width == 1 {
        format!("  {dir} wire {}", p.name)
    } else {
        format!("  {dir} wire [{}:0] {}", p.width - 1, p.name)
    }
}

/// The reference of the `mac` core `req` whose ports are `ports` (its manifest's) and whose
/// top is `core_top`.
pub fn reference(req: &GenRequest, core_top: &str, ports: &[Port]) -> Result<MacRef, FormalError> {
    if req.stages != 0 {
        return Err(FormalError::Unsupported(
            "the mac reference is the 0-stage core's; a pipelined mac is compared with its 0-stage twin (lemma P)".into(),
        ));
    }
    let nl = req.options.interleave;
    if nl > 1 && req.options.acc_guard > 0 {
        return Err(FormalError::Unsupported(
            "interleaved accumulators are binary32 accumulators; the exact mac has one".into(),
        ));
    }
    // --ftz of the binary32 accumulator lives in its FMA module (lemma F); the generator
    // offers neither stochastic rounding for mac nor --ftz with the exact accumulator.
    if req.random_bits() > 0 || (req.options.ftz && req.options.acc_guard > 0) {
        return Err(FormalError::Unsupported(
            "the mac reference covers the deterministic rounding modes, and --ftz only with the binary32 accumulator".into(),
        ));
    }
    let top = format!("ref_{core_top}");
    let dyn_rm = req.rounding == RoundingSel::Dynamic;
    let dyn_sat = req.saturation == SaturationSel::Dynamic;
    let mode_ports: Vec<&Port> = ports
        .iter()
        .filter(|p| matches!(p.role, Role::Rounding | Role::Saturation))
        .collect();
    if mode_ports.len() != dyn_rm as usize + dyn_sat as usize {
        return Err(FormalError::Unsupported(
            "the mac core's mode ports do not match its request".into(),
        ));
    }
    let mut v = String::new();
    let _ = writeln!(
        v,
        "// Independent reference accumulator of {core_top} (fp8gen-formal {}). Deliberately naive. Do not edit.",
        golden::VERSION
    );
    v.push_str("`default_nettype none\n");
    let mut state: Vec<(String, String, u32)> = Vec::new();
    let mut body = String::new();
    let fx = req.formats.x;
    let fy = req.formats.y.unwrap_or(fx);
    let mode_regs: Vec<(String, u32)> = mode_ports
        .iter()
        .map(|p| (p.name.trim_end_matches("_i").to_string(), p.width))
        .collect();
    if req.options.acc_guard > 0 {
        let ea = golden::ExactAcc::new(fx, fy, req.options.acc_guard)
            .map_err(FormalError::Unsupported)?;
        let bits = ea.bits();
        let lsb = ea.lsb();
        // ---- the output projection: a combinational module ----
        let round_top = format!("{top}_round");
        let mut t = Text::new();
        t.comment(&format!(
            "The accumulator {bits}-bit two's complement, LSB 2^({lsb}); class state as in golden ExactAcc"
        ));
        t.wire("a_neg", 1, &format!("acc_i[{}]", bits - 1));
        t.wire(
            "a_abs",
            bits,
            &format!("a_neg ? ({} - acc_i) : acc_i", k(bits, 0)),
        );
        modes(&mut t, req)?;
        t.wire("a_nan", 1, "nan_i | inv_i | (pinf_i & ninf_i)");
        t.wire("a_inv", 1, "inv_i | (~nan_i & pinf_i & ninf_i)");
        t.wire("a_inf", 1, "~a_nan & (pinf_i | ninf_i)");
        t.wire(
            "a_zero",
            1,
            &format!("~a_nan & ~a_inf & (a_abs == {})", k(bits, 0)),
        );
        t.comment("zero sum (IEEE 754 §6.3): every term a zero of one sign keeps it, else +0 (-0 under rtn)");
        t.wire(
            "a_sign",
            1,
            "a_inf ? ninf_i : (a_zero ? ((allz_i & ~(zpos_i & zneg_i)) ? zneg_i : m_rtn) : a_neg)",
        );
        let b32 = Format::BINARY32;
        let lw = lsb.min(b32.emin() - b32.man_bits() as i32);
        let off = (lsb - lw) as u32;
        let (w, am) = if off > 0 {
            (bits + off, format!("{{a_abs, {}}}", k(off, 0)))
        } else {
            (bits, "a_abs".to_string())
        };
        t.comment(&format!("Window: a_m * 2^({lw}), {w} bits"));
        t.wire("a_m", w, &am);
        rounder(&mut t, &b32, w, lw, req.options.tininess, 0)?;
        let zero_fix = if golden::fma_ieee_zero(&fx, &fy) {
            "res_code".to_string()
        } else {
            "((res_code == 32'h80000000) ? 32'h0 : res_code)".to_string()
        };
        t.comment("Guard overflow: NaN with flags invalid | overflow (a combination no arithmetic result has)");
        t.line(&format!(
            "  assign r_o = ovf_i ? 32'h7fc00000 : {zero_fix};"
        ));
        t.line("  assign flags_o = ovf_i ? 4'b1100 : res_flags;");
        super::unused_line(&mut t);
        let mut rports = vec![(true, bits, "acc_i".to_string())];
        for n in [
            "nan_i", "inv_i", "pinf_i", "ninf_i", "ovf_i", "allz_i", "zpos_i", "zneg_i",
        ] {
            rports.push((true, 1, n.to_string()));
        }
        for p in &mode_ports {
            rports.push((true, p.width, p.name.clone()));
        }
        rports.push((false, 32, "r_o".into()));
        rports.push((false, 4, "flags_o".into()));
        v.push_str(&super::module_header(&round_top, &rports));
        v.push_str(&t.body);
        v.push_str("endmodule\n\n");

        // ---- the accumulator ----
        let mut t = Text::new();
        let ox = decode_operand(&mut t, &fx, "x_i", "x")?;
        let oy = decode_operand(&mut t, &fy, "y_i", "y")?;
        super::dot::class_product(&mut t, "p", "x", "y");
        let pp = ox.p + oy.p;
        let shw = super::bits(ox.sh_max + oy.sh_max);
        t.comment(&format!(
            "The product exact on the grid 2^({lsb}): sig_x * sig_y << (x_sh + y_sh), 0 unless finite nonzero"
        ));
        t.wire(
            "p_sig",
            pp,
            &format!(
                "{} * {}",
                super::dot::zx("x_sig", ox.p, pp),
                super::dot::zx("y_sig", oy.p, pp)
            ),
        );
        t.wire(
            "p_sh",
            shw,
            &format!(
                "{} + {}",
                super::dot::zx("x_sh", ox.sh_width, shw),
                super::dot::zx("y_sh", oy.sh_width, shw)
            ),
        );
        t.wire("p_live", 1, "~p_nan & ~p_inf & ~p_zero");
        t.wire(
            "p_mag",
            bits + 1,
            &format!(
                "p_live ? ({} << p_sh) : {}",
                super::dot::zx("p_sig", pp, bits + 1),
                k(bits + 1, 0)
            ),
        );
        t.line(&format!("  reg [{}:0] acc;", bits - 1));
        for r in [
            "nan", "inv", "pinf", "ninf", "ovf", "allz", "zpos", "zneg", "done",
        ] {
            t.line(&format!("  reg {r};"));
        }
        for (m, w) in &mode_regs {
            t.line(&format!("  reg [{}:0] {m};", w - 1));
        }
        t.comment(&format!(
            "acc + (-1)^sign * product in {} bits (exact); guard overflow: the sum is outside the {bits}-bit range",
            bits + 1
        ));
        t.wire("base", bits, &format!("clear_i ? {} : acc", k(bits, 0)));
        t.wire(
            "wide",
            bits + 1,
            &format!(
                "p_sign ? ({{base[{m}], base}} - p_mag) : ({{base[{m}], base}} + p_mag)",
                m = bits - 1
            ),
        );
        t.wire(
            "wide_out",
            1,
            &format!("wide[{}] != wide[{}]", bits, bits - 1),
        );
        t.line("  always @(posedge clk_i) begin");
        t.line("    if (!rst_ni) begin");
        t.line(&format!(
            "      acc <= {}; nan <= 1'b0; inv <= 1'b0; pinf <= 1'b0; ninf <= 1'b0; ovf <= 1'b0;",
            k(bits, 0)
        ));
        t.line("      allz <= 1'b1; zpos <= 1'b0; zneg <= 1'b0; done <= 1'b0;");
        for (m, w) in &mode_regs {
            t.line(&format!("      {m} <= {};", k(*w, 0)));
        }
        t.line("    end else begin");
        t.line("      done <= valid_i;");
        t.line("      if (valid_i) begin");
        t.line(&format!("        acc <= wide[{}:0];", bits - 1));
        t.line("        nan <= (clear_i ? 1'b0 : nan) | p_nan;");
        t.line("        inv <= (clear_i ? 1'b0 : inv) | p_inv;");
        t.line("        pinf <= (clear_i ? 1'b0 : pinf) | (p_inf & ~p_sign);");
        t.line("        ninf <= (clear_i ? 1'b0 : ninf) | (p_inf & p_sign);");
        t.line("        ovf <= (clear_i ? 1'b0 : ovf) | wide_out;");
        t.line("        allz <= (clear_i ? 1'b1 : allz) & p_zero;");
        t.line("        zpos <= (clear_i ? 1'b0 : zpos) | (p_zero & ~p_sign);");
        t.line("        zneg <= (clear_i ? 1'b0 : zneg) | (p_zero & p_sign);");
        for (m, _) in &mode_regs {
            t.line(&format!("        {m} <= {m}_i;"));
        }
        t.line("      end");
        t.line("    end");
        t.line("  end");
        let mut conns = vec![".acc_i(acc)".to_string()];
        for r in ["nan", "inv", "pinf", "ninf", "ovf", "allz", "zpos", "zneg"] {
            conns.push(format!(".{r}_i({r})"));
        }
        for (m, _) in &mode_regs {
            conns.push(format!(".{m}_i({m})"));
        }
        conns.push(".r_o(acc_o)".into());
        conns.push(".flags_o(flags_o)".into());
        t.line(&format!("  {round_top} u_round ({});", conns.join(", ")));
        t.line("  assign valid_o = done;");
        super::unused_line(&mut t);
        body.push_str(&t.body);
        // The core's registers of the same meaning (rtl-gen/src/units/mac.rs).
        state.push(("acc_q".into(), "acc".into(), bits));
        for r in [
            "nan", "inv", "pinf", "ninf", "ovf", "allz", "zpos", "zneg", "done",
        ] {
            state.push((format!("{r}_q"), r.into(), 1));
        }
        for (m, w) in &mode_regs {
            state.push((format!("{m}_q"), m.clone(), *w));
        }
    } else if nl > 1 {
        interleaved(
            &mut body,
            &mut state,
            &format!("{core_top}_fma"),
            nl,
            &mode_ports,
        );
    } else {
        // The binary32 accumulator around the core's FMA module.
        let fma = format!("{core_top}_fma");
        let mut t = Text::new();
        t.line("  reg [31:0] acc;");
        t.line("  reg [3:0] flags;");
        t.line("  reg done;");
        t.comment("A step: acc <- fma(x, y, clear ? +0 : acc), rounded once; clear without valid is ignored");
        t.wire("z", 32, "clear_i ? 32'h0 : acc");
        t.line("  wire [31:0] f_r;");
        t.line("  wire [3:0] f_flags;");
        t.line("  wire f_valid;");
        let mut conns = vec![
            ".valid_i(valid_i)".to_string(),
            ".x_i(x_i)".into(),
            ".y_i(y_i)".into(),
            ".z_i(z)".into(),
        ];
        for p in &mode_ports {
            conns.push(format!(".{0}({0})", p.name));
        }
        conns.push(".r_o(f_r)".into());
        conns.push(".flags_o(f_flags)".into());
        conns.push(".valid_o(f_valid)".into());
        t.line(&format!("  {fma} u_fma ({});", conns.join(", ")));
        t.line("  always @(posedge clk_i) begin");
        t.line("    if (!rst_ni) begin acc <= 32'h0; flags <= 4'h0; done <= 1'b0; end");
        t.line("    else begin");
        t.line("      done <= valid_i;");
        t.line("      if (valid_i) begin acc <= f_r; flags <= f_flags; end");
        t.line("    end");
        t.line("  end");
        t.line("  assign acc_o = acc;");
        t.line("  assign flags_o = flags;");
        t.line("  assign valid_o = done;");
        t.line("  /* verilator lint_off UNUSEDSIGNAL */");
        t.line("  wire unused_ok = f_valid;");
        t.line("  /* verilator lint_on UNUSEDSIGNAL */");
        body.push_str(&t.body);
        state.push(("acc_q".into(), "acc".into(), 32));
        state.push(("flags_q".into(), "flags".into(), 4));
        state.push(("done_q".into(), "done".into(), 1));
    }
    let mut decls: Vec<String> = ports.iter().map(decl).collect();
    for (i, (_, _, w)) in state.iter().enumerate() {
        decls.push(decl(&Port::new(
            format!("st{i}_o"),
            Direction::Output,
            *w,
            Role::Data,
        )));
    }
    let _ = writeln!(v, "module {top} (\n{}\n);", decls.join(",\n"));
    v.push_str(&body);
    for (i, (_, r, _)) in state.iter().enumerate() {
        let _ = writeln!(v, "  assign st{i}_o = {r};");
    }
    v.push_str("endmodule\n`default_nettype wire\n");
    Ok(MacRef {
        verilog: v,
        top,
        state,
    })
}

/// The `nl` interleaved binary32 accumulators (`--interleave`, golden `MacModel` lanes) around
/// the core's FMA module `fma`, written the obvious way: a step goes to lane `clear ? 0 :
/// next` and reads `+0` when it clears or its lane starts fresh, else the lane's accumulator;
/// it writes that lane, the result, flags and the lane of the last step; `next` counts on
/// modulo `nl`; a clear marks every lane but 0 fresh, any other step its own lane used.
fn interleaved(
    body: &mut String,
    state: &mut Vec<(String, String, u32)>,
    fma: &str,
    nl: u32,
    mode_ports: &[&Port],
) {
    let lw = rtl::units::mac::lane_width(nl);
    let mut t = Text::new();
    for j in 0..nl {
        t.line(&format!("  reg [31:0] acc{j};"));
    }
    t.line(&format!("  reg [{}:0] fresh;", nl - 1));
    t.line(&format!("  reg [{}:0] next;", lw - 1));
    t.line(&format!("  reg [{}:0] last;", lw - 1));
    t.line("  reg [31:0] acc;");
    t.line("  reg [3:0] flags;");
    t.line("  reg done;");
    t.comment(&format!(
        "A step: lane = clear ? 0 : next; acc<lane> <- fma(x, y, (clear | fresh[lane]) ? +0 : acc<lane>); {nl} lanes"
    ));
    t.wire("lane", lw, &format!("clear_i ? {} : next", k(lw, 0)));
    let mut sel = k(32, 0);
    for j in (0..nl).rev() {
        sel = format!("(lane == {}) ? acc{j} : {sel}", k(lw, j as u64));
    }
    t.wire("lane_acc", 32, &sel);
    t.wire("lane_fresh", 1, "fresh[lane]");
    t.wire("z", 32, "(clear_i | lane_fresh) ? 32'h0 : lane_acc");
    t.line("  wire [31:0] f_r;");
    t.line("  wire [3:0] f_flags;");
    t.line("  wire f_valid;");
    let mut conns = vec![
        ".valid_i(valid_i)".to_string(),
        ".x_i(x_i)".into(),
        ".y_i(y_i)".into(),
        ".z_i(z)".into(),
    ];
    for p in mode_ports {
        conns.push(format!(".{0}({0})", p.name));
    }
    conns.push(".r_o(f_r)".into());
    conns.push(".flags_o(f_flags)".into());
    conns.push(".valid_o(f_valid)".into());
    t.line(&format!("  {fma} u_fma ({});", conns.join(", ")));
    t.line("  always @(posedge clk_i) begin");
    let mut rst = String::from("acc <= 32'h0; flags <= 4'h0; done <= 1'b0;");
    for j in 0..nl {
        let _ = write!(rst, " acc{j} <= 32'h0;");
    }
    let _ = write!(
        rst,
        " fresh <= {}; next <= {}; last <= {};",
        k(nl, 0),
        k(lw, 0),
        k(lw, 0)
    );
    t.line(&format!("    if (!rst_ni) begin {rst} end"));
    t.line("    else begin");
    t.line("      done <= valid_i;");
    t.line("      if (valid_i) begin");
    t.line("        acc <= f_r; flags <= f_flags; last <= lane;");
    for j in 0..nl {
        t.line(&format!(
            "        if (lane == {}) acc{j} <= f_r;",
            k(lw, j as u64)
        ));
    }
    t.line(&format!(
        "        next <= (lane == {}) ? {} : lane + {};",
        k(lw, nl as u64 - 1),
        k(lw, 0),
        k(lw, 1)
    ));
    t.line(&format!(
        "        if (clear_i) fresh <= {}; else fresh[lane] <= 1'b0;",
        k(nl, ((1u64 << nl) - 1) & !1)
    ));
    t.line("      end");
    t.line("    end");
    t.line("  end");
    t.line("  assign acc_o = acc;");
    t.line("  assign flags_o = flags;");
    t.line("  assign lane_o = last;");
    t.line("  assign valid_o = done;");
    t.line("  /* verilator lint_off UNUSEDSIGNAL */");
    t.line("  wire unused_ok = f_valid;");
    t.line("  /* verilator lint_on UNUSEDSIGNAL */");
    body.push_str(&t.body);
    state.push(("acc_q".into(), "acc".into(), 32));
    state.push(("flags_q".into(), "flags".into(), 4));
    state.push(("done_q".into(), "done".into(), 1));
    for j in 0..nl {
        state.push((format!("lacc{j}_q"), format!("acc{j}"), 32));
    }
    state.push(("fresh_q".into(), "fresh".into(), nl));
    state.push(("k_q".into(), "next".into(), lw));
    state.push(("lane_q".into(), "last".into(), lw));
}
