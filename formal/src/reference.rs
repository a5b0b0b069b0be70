//! The independent reference: `decode`, `mul`, `fma`, `project`, `convert`, `add` (module `add`) and `quantize`, written the obvious way,
//! with every generator option of these units (stochastic rounding with `rnd_i`, block scales,
//! `--ftz`, `--no-flags`, `--rto-overflow ieee`, tininess before rounding, run-time modes).
//!
//! Every operand is decoded to an integer significand and a shift, `v = sig · 2^(qmin + sh)`,
//! and placed into one fixed-point window whose least significant bit `2^L` lies at or below
//! the smallest quantum of every operand and of the result, and which is wide enough for every
//! finite value (plus one carry bit for the sum). The product is one integer multiply, placed
//! exactly. A sum of two values (the FMA's product and addend, a dot product's sum and addend)
//! is added in a narrower window placed relative to the two operands (`dot::relative_sum`:
//! both normalized, then the lower LSB, or one sticky unit for an operand wholly P + 2 bits
//! below the other's LSB, with the exactness argument there) and handed on as the rounding
//! input (MSB position, P + 1 bits, sticky) placed back in the rounder's window: a SAT
//! solver proves an optimized core's relative alignment equal to that in a third less time
//! than to a sum over absolute positions. The plain rounder then
//! finds the binade of the exact integer with a loop over its bits, computes the quantum
//! `q = max(e, emin) − (P − 1)`, divides by `2^q` with a right shift, compares the exact
//! remainder with the exact half quantum, and applies the decision table of P3109 v4.0 §4.7.4
//! (RoundToPrecision), then Saturate (§4.7.5) and Encode, with the flags of IEEE 754 §7 in the
//! golden model's priority (docs/semantics.md).
//!
//! Nothing here is shared with the optimized datapath of `rtl-gen` (no `blocks`, no AST): the
//! Verilog is written as text by this module, from [`golden::Format`]'s description of the
//! formats only. The optimized core is read for its port list, so the reference has the same
//! ports, names and roles. It is deliberately large and slow (a 300-bit window for binary32);
//! it exists to be obviously right, and to be proven equal to the fast core.

use golden::{Format, Saturation, Specials, Tininess};
use iface::{index_bits, DETERMINISTIC_ROUNDINGS, ROUNDING_ENCODING, SATURATION_ENCODING};
use rtl::manifest::{Manifest, Unit};
use rtl::{GenRequest, GeneratedCore, RoundingSel, SaturationSel};
use std::fmt::Write as _;

use crate::FormalError;

mod add;
mod dot;
pub mod mac;

pub use dot::sum_geometry as dot_sum_geometry;
pub use dot::WINDOW_MARK as DOT_WINDOW_MARK;

/// Bits needed to hold the unsigned value `v` (at least 1).
fn bits(v: u64) -> u32 {
    (64 - v.leading_zeros()).max(1)
}

/// A sized decimal constant.
fn k(width: u32, v: u64) -> String {
    format!("{width}'d{v}")
}

fn b(v: bool) -> &'static str {
    if v {
        "1'b1"
    } else {
        "1'b0"
    }
}

/// The reference module under construction: declarations and logic as text.
struct Text {
    body: String,
    /// Every declared helper signal, so that bits left unread are collected in `unused_ok`.
    declared: Vec<String>,
    /// Random bits of the stochastic modes (set by [`modes`]; 0: no `m_sra`/`m_srb`/`m_src`
    /// wires and no `rnd_i` port).
    sr_bits: u32,
    /// Round-to-odd overflows to the largest finite value (`--rto-overflow ieee`, set by
    /// [`modes`]).
    rto_ieee: bool,
}

impl Text {
    fn new() -> Text {
        Text {
            body: String::new(),
            declared: Vec::new(),
            sr_bits: 0,
            rto_ieee: false,
        }
    }

    fn comment(&mut self, c: &str) {
        let _ = writeln!(self.body, "\n  // {c}");
    }

    fn wire(&mut self, name: &str, width: u32, expr: &str) {
        if width == 1 {
            let _ = writeln!(self.body, "  wire {name} = {expr};");
        } else {
            let _ = writeln!(self.body, "  wire [{}:0] {name} = {expr};", width - 1);
        }
        self.declared.push(name.to_string());
    }

    fn line(&mut self, l: &str) {
        self.body.push_str(l);
        self.body.push('\n');
    }
}

/// An operand decoded to its class and `sig · 2^(qmin + sh)`.
struct Operand {
    p: u32,
    sh_max: u64,
    sh_width: u32,
    qmin: i32,
}

/// Decodes the code on `port` (format `f`) into wires `<n>_nan`, `<n>_inf`, `<n>_zero`,
/// `<n>_sign`, `<n>_sig` (P bits) and `<n>_sh` (exponent offset above `qmin`).
fn decode_operand(t: &mut Text, f: &Format, port: &str, n: &str) -> Result<Operand, FormalError> {
    decode_operand_ftz(t, f, port, n, false)
}

/// [`decode_operand`]; with `ftz` a subnormal is read as zero of its sign (`--ftz`: class
/// zero and `<n>_sig` = 0).
fn decode_operand_ftz(
    t: &mut Text,
    f: &Format,
    port: &str,
    n: &str,
    ftz: bool,
) -> Result<Operand, FormalError> {
    let man = f.man_bits();
    let eb_w = f.exp_bits();
    let mb = f.mag_bits();
    if f.specials == Specials::Ieee && man == 0 {
        return Err(FormalError::Unsupported(format!(
            "the reference does not decode the IEEE-style format {} without trailing bits",
            f.name()
        )));
    }
    t.comment(&format!(
        "{n} = {port}: {} (K={} P={} bias={} {}, family {}), value = {n}_sig * 2^({} + {n}_sh)",
        f.name(),
        f.k,
        f.p,
        f.bias,
        if f.signed { "signed" } else { "unsigned" },
        f.specials.name(),
        f.emin() - man as i32
    ));
    t.wire(
        &format!("{n}_eb"),
        eb_w,
        &format!("{port}[{}:{man}]", mb - 1),
    );
    if man > 0 {
        t.wire(&format!("{n}_t"), man, &format!("{port}[{}:0]", man - 1));
    }
    t.wire(&format!("{n}_mag"), mb, &format!("{port}[{}:0]", mb - 1));
    let sign = if f.signed {
        format!("{port}[{}]", f.k - 1)
    } else {
        "1'b0".to_string()
    };
    t.wire(&format!("{n}_sign"), 1, &sign);
    let all_ones_eb = (1u64 << eb_w) - 1;
    let nan = match f.specials {
        // IEEE 754 §3.4: exponent all ones with a nonzero trailing significand.
        Specials::Ieee => format!(
            "({n}_eb == {}) & ({n}_t != {})",
            k(eb_w, all_ones_eb),
            k(man, 0)
        ),
        // OCP E4M3: S.1111.111 only.
        Specials::Fn => format!("{n}_mag == {}", k(mb, (1u64 << mb) - 1)),
        // FNUZ, P3109 §4.7.2, E8M0: one NaN code.
        Specials::Fnuz | Specials::P3109Finite | Specials::P3109Extended | Specials::E8m0 => {
            format!("{port} == {}", k(f.k, f.nan_code().unwrap_or(0) as u64))
        }
        Specials::NoNan => "1'b0".to_string(),
    };
    t.wire(&format!("{n}_nan"), 1, &nan);
    let inf = match f.pos_inf_code() {
        Some(c) => format!("~{n}_nan & ({n}_mag == {})", k(mb, c as u64)),
        None => "1'b0".to_string(),
    };
    t.wire(&format!("{n}_inf"), 1, &inf);
    let sub = f.has_subnormals();
    let flush = ftz && sub && man > 0;
    let zero = if flush {
        t.comment(&format!(
            "--ftz: a subnormal {n} (exponent field 0) is zero of its sign"
        ));
        format!("~{n}_nan & ({n}_eb == {})", k(eb_w, 0))
    } else if sub {
        format!("~{n}_nan & ({n}_mag == {})", k(mb, 0))
    } else {
        "1'b0".to_string()
    };
    t.wire(&format!("{n}_zero"), 1, &zero);
    let p = f.p;
    let lead = if sub {
        format!("({n}_eb != {})", k(eb_w, 0))
    } else {
        "1'b1".to_string()
    };
    let sig = if flush {
        format!("{lead} ? {{1'b1, {n}_t}} : {}", k(p, 0))
    } else if man > 0 {
        format!("{{{lead}, {n}_t}}")
    } else {
        lead
    };
    t.wire(&format!("{n}_sig"), p, &sig);
    let (sh, sh_max) = if sub {
        (
            format!(
                "({n}_eb == {z}) ? {z} : {n}_eb - {one}",
                z = k(eb_w, 0),
                one = k(eb_w, 1)
            ),
            all_ones_eb.saturating_sub(1),
        )
    } else {
        (format!("{n}_eb"), all_ones_eb)
    };
    t.wire(&format!("{n}_sh"), eb_w, &sh);
    Ok(Operand {
        p,
        sh_max,
        sh_width: eb_w,
        qmin: f.emin() - man as i32,
    })
}

/// The reference's wire for a saturation mode.
fn sat_wire(s: Saturation) -> &'static str {
    match s {
        Saturation::SatFinite => "s_fin",
        Saturation::SatPropagate => "s_prop",
        Saturation::SatNone => "s_none",
        Saturation::SatNoneV4 => "s_nonev4",
    }
}

/// One-hot mode wires `m_rne … m_rto` (and `m_sra`, `m_srb`, `m_src` when the core takes
/// random bits), `s_fin`, `s_prop`, `s_none`, `s_nonev4`; the port values are the indices
/// into `iface::ROUNDING_ENCODING` / `iface::SATURATION_ENCODING`.
fn modes(t: &mut Text, req: &GenRequest) -> Result<(), FormalError> {
    let n = req.random_bits();
    let count = if n > 0 {
        ROUNDING_ENCODING.len()
    } else {
        DETERMINISTIC_ROUNDINGS
    };
    let enc = &ROUNDING_ENCODING[..count];
    let rm: Vec<String> = enc
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{i} {n}"))
        .collect();
    let sat: Vec<String> = SATURATION_ENCODING
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{i} {n}"))
        .collect();
    t.comment(&format!(
        "Modes (rm_i: {}, other values {}; sat_i: {}){}",
        rm.join(", "),
        enc[0],
        sat.join(", "),
        if n > 0 {
            format!("; rnd_i: {n} random bits")
        } else {
            String::new()
        }
    ));
    // Every mode but the first (rne, the value of the other encodings).
    let first = format!("m_{}", enc[0]);
    match req.rounding {
        RoundingSel::Dynamic => {
            let mut names = Vec::new();
            for (i, m) in enc.iter().enumerate().skip(1) {
                let w = format!("m_{m}");
                t.wire(
                    &w,
                    1,
                    &format!("rm_i == {}", k(index_bits(count), i as u64)),
                );
                names.push(w);
            }
            t.wire(&first, 1, &format!("~({})", names.join(" | ")));
        }
        RoundingSel::Fixed(r) => {
            if r.random_bits() != n {
                return Err(FormalError::Unsupported(format!(
                    "rounding {r} with {n} random bits"
                )));
            }
            for m in enc.iter().skip(1) {
                t.wire(&format!("m_{m}"), 1, b(r.name() == *m));
            }
            t.wire(&first, 1, b(r.name() == enc[0]));
        }
    }
    t.sr_bits = n;
    t.rto_ieee = req.options.rto_overflow == golden::RtoOverflow::Ieee;
    let smodes = SATURATION_ENCODING
        .iter()
        .filter_map(|n| Saturation::parse(n).ok());
    for (i, m) in smodes.enumerate() {
        let rhs = match req.saturation {
            SaturationSel::Dynamic => format!(
                "sat_i == {}",
                k(index_bits(SATURATION_ENCODING.len()), i as u64)
            ),
            SaturationSel::Fixed(s) => b(s == m).to_string(),
        };
        t.wire(sat_wire(m), 1, &rhs);
    }
    Ok(())
}

/// The plain rounder: projects `a_m · 2^lw` (class wires `a_nan`, `a_inv`, `a_inf`, `a_zero`,
/// sign `a_sign`, `w`-bit magnitude `a_m`) to `f`, writing regs `res_code` and `res_flags`.
fn rounder(
    t: &mut Text,
    f: &Format,
    w: u32,
    lw: i32,
    tininess: Tininess,
    nonan_code: u32,
) -> Result<(), FormalError> {
    if !f.has_subnormals() {
        return Err(FormalError::Unsupported(format!(
            "the reference rounder does not cover the e8m0 family (result format {}): e8m0 has no zero and no subnormal range, so the plain rounder's quantum max(e, emin) - (P-1) does not apply; verify such cores by simulation (fp8gen verify)",
            f.name()
        )));
    }
    let man = f.man_bits();
    let p = f.p;
    let emin = f.emin();
    let qmin = emin - man as i32;
    assert!(lw <= qmin, "window LSB above the result quantum");
    // Bit position of 2^emin in the window.
    let pe = (emin - lw) as u64;
    let pw = bits((w as u64).max(pe + 1));
    let mw = pw + p + 2;
    let max = f.max_finite_mag() as u64;
    assert!(bits(max) < mw);
    let kk = f.k;
    t.comment(&format!(
        "Plain rounder to {} (P3109 v4.0 §4.7.3-4.7.5): value = a_m * 2^({lw}); e = floor(log2 value) = r_pos + ({lw})",
        f.name()
    ));
    t.line(&format!("  reg [{}:0] r_pos;", pw - 1));
    t.line("  integer i;");
    t.line("  always @* begin");
    t.line(&format!("    r_pos = {};", k(pw, 0)));
    t.line(&format!("    for (i = 0; i < {w}; i = i + 1)"));
    t.line(&format!("      if (a_m[i]) r_pos = i[{}:0];", pw - 1));
    t.line("  end");
    t.comment(&format!(
        "quantum q = max(e, emin) - (P-1): bit r_sh of the window; emin = {emin} is bit {pe}"
    ));
    t.wire(
        "r_qp",
        pw,
        &format!("(r_pos > {pe}) ? r_pos : {pe}", pe = k(pw, pe)),
    );
    t.wire("r_sh", pw, &format!("r_qp - {}", k(pw, man as u64)));
    t.wire("r_s_full", w, "a_m >> r_sh");
    t.wire("r_rem", w, &format!("a_m & ~({{{w}{{1'b1}}}} << r_sh)"));
    t.wire(
        "r_half",
        w,
        &format!(
            "(r_sh == {z}) ? {{{w}{{1'b0}}}} : ({{{{{wm1}{{1'b0}}}}, 1'b1}} << (r_sh - {one}))",
            z = k(pw, 0),
            one = k(pw, 1),
            wm1 = w - 1
        ),
    );
    t.wire("r_nz", 1, &format!("r_rem != {{{w}{{1'b0}}}}"));
    t.wire("r_gt", 1, "r_rem > r_half");
    t.wire("r_eq", 1, "r_nz & (r_rem == r_half)");
    t.wire("r_s", p, &format!("r_s_full[{}:0]", p - 1));
    // Not CodeIsEven (P3109 §4.7.4): parity of the floor, or for P = 1 of the biased exponent.
    let odd = if p > 1 {
        "r_s[0]".to_string()
    } else {
        let c = ((lw + f.bias) & 1) != 0;
        format!("(r_s != 1'b0) & (r_qp[0] ^ {})", b(c))
    };
    t.wire("r_odd", 1, &odd);
    let mut away = "(m_rne & (r_gt | (r_eq & r_odd))) | (m_rna & (r_gt | r_eq)) | (m_rtp & r_nz & ~a_sign) | (m_rtn & r_nz & a_sign) | (m_rto & r_nz & ~r_odd)".to_string();
    if t.sr_bits > 0 {
        let sr = stochastic_away(t, "r", "r_rem", w, "r_sh");
        away.push_str(&format!(" | {sr}"));
    }
    t.wire("r_away", 1, &away);
    t.wire(
        "r_sr",
        p + 1,
        &format!("{{1'b0, r_s}} + {{{{{p}{{1'b0}}}}, r_away}}"),
    );
    t.comment(
        "magnitude code = (q - qmin) * 2^(P-1) + rounded significand (a carry bumps the exponent)",
    );
    t.wire(
        "r_mag",
        mw,
        &format!(
            "({{{{{hi}{{1'b0}}}}, r_qp - {pe}}} << {man}) + {{{{{hi2}{{1'b0}}}}, r_sr}}",
            hi = mw - pw,
            pe = k(pw, pe),
            hi2 = mw - p - 1
        ),
    );
    // Tininess after rounding: rounding at precision P with an unbounded exponent carries
    // the value (in binade emin-1) to 2^emin.
    let tiny = match tininess {
        Tininess::BeforeRounding => "1'b1".to_string(),
        Tininess::AfterRounding => {
            if pe == 0 || pe > w as u64 || (pe - 1) < man as u64 {
                // The binade emin-1 is not in the window, or is exact there.
                "1'b1".to_string()
            } else {
                let shu = (pe - 1 - man as u64) as u32;
                t.comment(
                    "tininess after rounding (IEEE 754 §7.5): binade emin-1 rounded at precision P",
                );
                t.wire("u_s", p, &format!("a_m[{}:{shu}]", shu + p - 1));
                if shu == 0 {
                    t.wire("u_away", 1, "1'b0");
                } else {
                    t.wire("u_rem", shu, &format!("a_m[{}:0]", shu - 1));
                    let half = if shu == 1 {
                        "1'b1".to_string()
                    } else {
                        format!("{{1'b1, {{{}{{1'b0}}}}}}", shu - 1)
                    };
                    t.wire("u_nz", 1, &format!("u_rem != {}", k(shu, 0)));
                    t.wire("u_gt", 1, &format!("u_rem > {half}"));
                    t.wire("u_eq", 1, &format!("u_rem == {half}"));
                    let odd_u = if p > 1 {
                        "u_s[0]".to_string()
                    } else {
                        let q = emin - 1 - man as i32;
                        b(((q + f.bias) & 1) != 0).to_string()
                    };
                    t.wire("u_odd", 1, &odd_u);
                    let mut away = "(m_rne & (u_gt | (u_eq & u_odd))) | (m_rna & (u_gt | u_eq)) | (m_rtp & u_nz & ~a_sign) | (m_rtn & u_nz & a_sign) | (m_rto & u_nz & ~u_odd)".to_string();
                    if t.sr_bits > 0 {
                        let sr =
                            stochastic_away(t, "u", "u_rem", shu, &k(bits(shu as u64), shu as u64));
                        away.push_str(&format!(" | {sr}"));
                    }
                    t.wire("u_away", 1, &away);
                }
                t.wire(
                    "u_sum",
                    p + 1,
                    &format!("{{1'b0, u_s}} + {{{{{p}{{1'b0}}}}, u_away}}"),
                );
                format!("(r_pos != {}) | ~u_sum[{p}]", k(pw, pe - 1))
            }
        }
    };
    t.wire("r_tiny", 1, &tiny);
    let below = if pe == 0 {
        "1'b0".to_string()
    } else {
        format!("r_pos < {}", k(pw, pe))
    };
    t.wire("r_uf", 1, &format!("r_nz & ({below}) & r_tiny"));

    // Encodings.
    let sb = f.sign_bit() as u64;
    let nan_code = match f.nan_code() {
        Some(c) => c as u64,
        None => (nonan_code & f.code_mask()) as u64,
    };
    let nonan = !f.has_nan();
    let maxc = |sign: &str| {
        if f.signed {
            format!("{} | ({sign} ? {} : {})", k(kk, max), k(kk, sb), k(kk, 0))
        } else {
            k(kk, max)
        }
    };
    let mag_code = if f.signed {
        format!("{{a_sign, r_mag[{}:0]}}", kk - 2)
    } else {
        format!("r_mag[{}:0]", kk - 1)
    };
    let zero_code = if f.has_neg_zero() {
        format!("a_sign ? {} : {}", k(kk, sb), k(kk, 0))
    } else {
        k(kk, 0)
    };
    // NaN result with extra invalid `inv`: NaN-less formats return the NaN code and raise invalid.
    let nan_stmt = |inv: &str| {
        format!(
            "begin res_code = {}; res_flags[3] = {}; end",
            k(kk, nan_code),
            if nonan {
                "1'b1".to_string()
            } else {
                inv.to_string()
            }
        )
    };
    let inf_code = match (f.pos_inf_code(), f.neg_inf_code()) {
        (Some(pc), Some(nc)) => Some(format!(
            "a_sign ? {} : {}",
            k(kk, nc as u64),
            k(kk, pc as u64)
        )),
        (Some(pc), None) => Some(k(kk, pc as u64)),
        _ => None,
    };
    let has_nan = f.has_nan();
    let tow_extra = if (!f.signed && f.specials == Specials::P3109Extended) || t.rto_ieee {
        // Round-to-odd toward the finite range: unsigned extended formats (P3109 §4.7.5), or
        // every format with `--rto-overflow ieee` (SoftFloat `round_odd`: the largest finite).
        " | m_rto"
    } else {
        ""
    };
    t.wire(
        "r_toward",
        1,
        &format!("m_rtz | (m_rtn & ~a_sign) | (m_rtp & a_sign){tow_extra}"),
    );
    t.comment(
        "Result and flags {invalid, overflow, underflow, inexact}, in the golden model's priority",
    );
    t.line(&format!("  reg [{}:0] res_code;", kk - 1));
    t.line("  reg [3:0] res_flags;");
    t.line("  always @* begin");
    t.line(&format!("    res_code = {};", k(kk, 0)));
    t.line("    res_flags = 4'b0000;");
    t.line(&format!("    if (a_nan) {}", nan_stmt("a_inv")));
    // ±Inf operand.
    t.line("    else if (a_inf) begin");
    let mut inf_lines: Vec<String> = Vec::new();
    if !f.signed {
        inf_lines.push(format!(
            "if (a_sign) begin if ((s_none | s_nonev4) & {}) {} else res_code = {}; end",
            b(has_nan),
            nan_stmt("1'b1"),
            k(kk, 0)
        ));
    }
    inf_lines.push(format!("if (s_fin) res_code = {};", maxc("a_sign")));
    match &inf_code {
        Some(ic) => inf_lines.push(format!("else res_code = {ic};")),
        None => {
            if has_nan {
                inf_lines.push(format!("else if (s_none) {}", nan_stmt("1'b1")));
            }
            inf_lines.push(format!("else res_code = {};", maxc("a_sign")));
        }
    }
    if !f.signed {
        // The unsigned rule first; the others under `else`.
        let first = inf_lines.remove(0);
        t.line(&format!("      {first}"));
        t.line("      else begin");
        for l in &inf_lines {
            t.line(&format!("        {l}"));
        }
        t.line("      end");
    } else {
        for l in &inf_lines {
            t.line(&format!("      {l}"));
        }
    }
    t.line("    end");
    t.line(&format!("    else if (a_zero) res_code = {zero_code};"));
    t.line("    else begin");
    t.line("      res_flags = {1'b0, 1'b0, r_uf, r_nz};");
    let mut chain = String::from("      ");
    if !f.signed {
        let _ = writeln!(
            chain,
            "if (a_sign) begin\n        if (r_mag == {z}) res_code = {zk};\n        else if ((s_none | s_nonev4) & ~(m_rtz | m_rtp) & {hn}) begin res_code = {nc}; res_flags = res_flags | 4'b1001; end\n        else begin res_code = {zk}; res_flags[0] = 1'b1; end\n      end else ",
            z = k(mw, 0),
            zk = k(kk, 0),
            hn = b(has_nan),
            nc = k(kk, nan_code)
        );
    }
    let _ = writeln!(chain, "if (r_mag > {}) begin", k(mw, max));
    chain.push_str("        res_flags = res_flags | 4'b0101;\n");
    let _ = writeln!(
        chain,
        "        if (s_fin | s_prop | r_toward | {}) res_code = {};",
        b(!has_nan),
        maxc("a_sign")
    );
    if let Some(ic) = &inf_code {
        let _ = writeln!(
            chain,
            "        else if (s_none | s_nonev4) res_code = {ic};"
        );
    }
    let _ = writeln!(
        chain,
        "        else if (s_nonev4) res_code = {};",
        maxc("a_sign")
    );
    let _ = writeln!(
        chain,
        "        else begin res_code = {}; res_flags[3] = 1'b1; end",
        k(kk, nan_code)
    );
    let _ = writeln!(
        chain,
        "      end else if (r_mag == {}) res_code = {zero_code};",
        k(mw, 0)
    );
    let _ = write!(chain, "      else res_code = {mag_code};");
    t.line(&chain);
    t.line("    end");
    t.line("  end");
    Ok(())
}

/// The stochastic roundings' away decisions (P3109 v4.0 §4.7.4, StochasticA/B/C with N random
/// bits `rnd_i`) for the discarded fraction ν = `rem` / 2^`sh` (`rem` has `w` bits, `sh` is
/// a Verilog expression): wires `<pre>_sra`, `<pre>_srb`, `<pre>_src`; returns their
/// disjunction under the mode wires.
///
/// * A: away iff ⌊ν·2^N⌋ + R ≥ 2^N;
/// * B: away iff ⌊ν·2^(N+1)⌋ + 2R + 1 ≥ 2^(N+1);
/// * C: away iff RoundNearestTiesEven(ν·2^N) + R ≥ 2^N.
fn stochastic_away(t: &mut Text, pre: &str, rem: &str, w: u32, sh: &str) -> String {
    let n = t.sr_bits;
    let ww = w + n + 1;
    t.comment(&format!(
        "Stochastic rounding (P3109 §4.7.4): {pre}_hi = floor(nu * 2^(N+1)) for nu = {rem} / 2^{pre}_sh, N = {n}"
    ));
    t.wire(
        &format!("{pre}_rn"),
        ww,
        &format!("{{{rem}, {}}}", k(n + 1, 0)),
    );
    t.wire(&format!("{pre}_hi"), ww, &format!("{pre}_rn >> ({sh})"));
    t.wire(
        &format!("{pre}_below"),
        1,
        &format!("({pre}_rn & ~({{{ww}{{1'b1}}}} << ({sh}))) != {}", k(ww, 0)),
    );
    // floor(nu * 2^N) is {pre}_hi[N:1]; {pre}_hi[0] is the half bit of nu * 2^N.
    t.wire(
        &format!("{pre}_suma"),
        n + 1,
        &format!("{{1'b0, {pre}_hi[{n}:1]}} + {{1'b0, rnd_i}}"),
    );
    t.wire(&format!("{pre}_sra"), 1, &format!("{pre}_suma[{n}]"));
    t.wire(
        &format!("{pre}_sumb"),
        n + 2,
        &format!("{{1'b0, {pre}_hi[{n}:0]}} + {{1'b0, rnd_i, 1'b1}}"),
    );
    t.wire(&format!("{pre}_srb"), 1, &format!("{pre}_sumb[{}]", n + 1));
    t.wire(
        &format!("{pre}_rnite"),
        n + 1,
        &format!(
            "{{1'b0, {pre}_hi[{n}:1]}} + {{{n}'d0, {pre}_hi[0] & ({pre}_below | {pre}_hi[1])}}"
        ),
    );
    t.wire(
        &format!("{pre}_sumc"),
        n + 2,
        &format!("{{1'b0, {pre}_rnite}} + {{2'b00, rnd_i}}"),
    );
    t.wire(
        &format!("{pre}_src"),
        1,
        &format!("{pre}_sumc[{}] | {pre}_sumc[{n}]", n + 1),
    );
    format!("(m_sra & {pre}_sra) | (m_srb & {pre}_srb) | (m_src & {pre}_src)")
}

/// `a · S` of an operand `a` and a power-of-two block scale `S` (golden::mul_exact of the
/// two decoded values): wires `<o>_nan`, `<o>_inv` (0 · Inf), `<o>_inf`, `<o>_zero`,
/// `<o>_sign`, `<o>_sig` = a_sig · s_sig and `<o>_sh` = a_sh + s_sh.
fn scaled_operand(
    t: &mut Text,
    o: &str,
    (a, oa): (&str, &Operand),
    (s, os): (&str, &Operand),
) -> Operand {
    t.comment(&format!(
        "{o} = {a} * {s} (block scale, P3109 §5.5): exact, NaN for 0 * Inf"
    ));
    t.wire(&format!("{o}_nan"), 1, &format!("{a}_nan | {s}_nan"));
    t.wire(
        &format!("{o}_inv"),
        1,
        &format!("~{o}_nan & (({a}_inf & {s}_zero) | ({a}_zero & {s}_inf))"),
    );
    t.wire(
        &format!("{o}_inf"),
        1,
        &format!("~{o}_nan & ~{o}_inv & ({a}_inf | {s}_inf)"),
    );
    t.wire(
        &format!("{o}_zero"),
        1,
        &format!("~{o}_nan & ~{o}_inv & ~{o}_inf & ({a}_zero | {s}_zero)"),
    );
    t.wire(&format!("{o}_sign"), 1, &format!("{a}_sign ^ {s}_sign"));
    let p = oa.p + os.p;
    t.wire(
        &format!("{o}_sig"),
        p,
        &format!(
            "{{{{{}{{1'b0}}}}, {a}_sig}} * {{{{{}{{1'b0}}}}, {s}_sig}}",
            os.p, oa.p
        ),
    );
    let sw = oa.sh_width.max(os.sh_width) + 1;
    t.wire(
        &format!("{o}_sh"),
        sw,
        &format!(
            "{{{{{}{{1'b0}}}}, {a}_sh}} + {{{{{}{{1'b0}}}}, {s}_sh}}",
            sw - oa.sh_width,
            sw - os.sh_width
        ),
    );
    Operand {
        p,
        sh_max: oa.sh_max + os.sh_max,
        sh_width: sw,
        qmin: oa.qmin + os.qmin,
    }
}

/// P3109 §5.1.2 ωBlockProject's value (golden::convert_scaled): the element `z` divided by
/// the scale `s` (decoded operands `z`, `s`, with `z_snan`), as the rounder's inputs `a_*`
/// in a window `a_m · 2^lw` holding every quotient and 1. Returns `(w, lw)`.
///
/// NaN element or scale: NaN; S = 0: +0; S = ±Inf: ±1 for a nonzero element, +0 for a zero
/// one; an infinite element: ±Inf; otherwise `z_sig · 2^(qz + z_sh − qs − s_sh)` (a nonzero
/// scale has significand 1).
fn scaled_quotient(t: &mut Text, oz: &Operand, os: &Operand, qr: i32) -> (u32, i32) {
    let s_top = os.qmin as i64 + os.sh_max as i64;
    let lw = (oz.qmin as i64 - s_top).min(qr as i64).min(0);
    let c = oz.qmin as i64 - os.qmin as i64 - lw; // shift of z_sig when z_sh = s_sh = 0
    let max_shift = oz.sh_max as i64 + c;
    let w = (oz.p + max_shift as u32).max((-lw) as u32 + 1);
    let shw = bits(max_shift as u64 + os.sh_max) + 1;
    t.comment(&format!(
        "Quotient z / S in a window: a_m * 2^({lw}), {w} bits; shift = z_sh + {c} - s_sh (never negative)"
    ));
    t.wire(
        "q_shift",
        shw,
        &format!(
            "{{{{{}{{1'b0}}}}, z_sh}} + {} - {{{{{}{{1'b0}}}}, s_sh}}",
            shw - oz.sh_width,
            k(shw, c as u64),
            shw - os.sh_width
        ),
    );
    t.wire(
        "q_m",
        w,
        &format!("{{{{{}{{1'b0}}}}, z_sig}} << q_shift", w - oz.p),
    );
    t.comment("P3109 §5.1.2: NaN if S or z is NaN; +0 if S = 0 or (z = 0 and S = Inf); +-1 if S = Inf; else z / S");
    t.wire("a_nan", 1, "z_nan | s_nan");
    t.wire("a_inv", 1, "z_snan");
    t.wire("q_pos0", 1, "s_zero | (z_zero & s_inf)");
    t.wire("q_one", 1, "~a_nan & s_inf & ~z_zero");
    t.wire("a_zero", 1, "~a_nan & (s_zero | z_zero)");
    t.wire("a_inf", 1, "~a_nan & ~a_zero & ~s_inf & z_inf");
    t.wire("a_sign", 1, "q_pos0 ? 1'b0 : (z_sign ^ s_sign)");
    let one = format!("{{{{{}{{1'b0}}}}, 1'b1}} << {}", w - 1, -lw);
    t.wire("a_m", w, &format!("q_one ? ({one}) : q_m"));
    (w, lw as i32)
}

/// The `--ftz` output flush (golden::flush_result): a subnormal code of `f` in `code`
/// (exponent field 0, trailing field nonzero) becomes zero, of its sign when `f` has −0,
/// with underflow and inexact. Wires `ftz_code`, `ftz_flags` (from `res_flags`).
fn flush_result(t: &mut Text, f: &Format, code: &str) {
    let man = f.man_bits();
    let mb = f.mag_bits();
    let kk = f.k;
    t.comment(&format!(
        "--ftz: a subnormal result code of {} is flushed to zero with underflow and inexact",
        f.name()
    ));
    let sub = if f.has_subnormals() && man > 0 {
        format!(
            "({code}[{}:{man}] == {}) & ({code}[{}:0] != {})",
            mb - 1,
            k(mb - man, 0),
            man - 1,
            k(man, 0)
        )
    } else {
        "1'b0".to_string()
    };
    t.wire("ftz_sub", 1, &sub);
    let zero = if f.has_neg_zero() {
        format!("{code} & {}", k(kk, f.sign_bit() as u64))
    } else {
        k(kk, 0)
    };
    t.wire("ftz_code", kk, &format!("ftz_sub ? ({zero}) : {code}"));
    t.wire(
        "ftz_flags",
        4,
        "ftz_sub ? (res_flags | 4'b0011) : res_flags",
    );
}

/// Places `<n>_sig << (<n>_sh + off)` into a `w`-bit window, as wire `name`.
fn place(t: &mut Text, name: &str, n: &str, (p, shw, sh_max): (u32, u32, u64), off: u64, w: u32) {
    let sw = bits(sh_max + off).max(shw);
    let sh = if sw > shw {
        format!("{{{{{}{{1'b0}}}}, {n}_sh}} + {}", sw - shw, k(sw, off))
    } else {
        format!("{n}_sh + {}", k(sw, off))
    };
    let sig = if w > p {
        format!("{{{{{}{{1'b0}}}}, {n}_sig}}", w - p)
    } else {
        format!("{n}_sig")
    };
    t.wire(name, w, &format!("{sig} << ({sh})"));
}

/// Whether the reference covers `unit`: the one statement of which units `prove` takes (an
/// exhaustive `match`, so a new unit must say here whether it has a reference).
pub fn check_unit(unit: Unit) -> Result<(), FormalError> {
    match unit {
        Unit::Decode
        | Unit::Mul
        | Unit::Fma
        | Unit::Project
        | Unit::Convert
        | Unit::Add
        | Unit::Quantize
        | Unit::Dot
        | Unit::Mac => Ok(()),
    }
}

/// Generates the reference core of `req` (every unit [`check_unit`] accepts; every rounding,
/// stochastic ones included; any saturation; fixed or run-time modes; block scales; `--ftz`,
/// `--no-flags`, `--rto-overflow`, `--tininess`; result formats with subnormals, i.e. every
/// family but e8m0). It is combinational and has the ports of the optimized 0-stage core of
/// the same request (same names, widths, roles, order).
pub fn generate_reference(req: &GenRequest) -> Result<GeneratedCore, FormalError> {
    let comb = GenRequest {
        stages: 0,
        ..req.clone()
    };
    let opt = rtl::generate(&comb).map_err(|e| FormalError::Generate(e.to_string()))?;
    check_unit(req.unit)?;
    match req.unit {
        Unit::Quantize => return quantize_reference(req, &opt),
        Unit::Decode => return decode_reference(req, &opt),
        _ => {}
    }
    let top = format!("ref_{}", opt.top);
    let mut t = Text::new();
    let fr = req.formats.r;
    // The flags output: the rounder's, or after a --ftz flush.
    let mut flags = "res_flags";
    match req.unit {
        Unit::Mul | Unit::Fma => {
            let fx = req.formats.x;
            let fy = req.formats.y.unwrap_or(fx);
            // mul --ftz flushes the operands; fma --ftz the addend z only (golden::fma_tail).
            let ftz_xy = req.options.ftz && req.unit == Unit::Mul;
            let ox = decode_operand_ftz(&mut t, &fx, "x_i", "x", ftz_xy)?;
            let oy = decode_operand_ftz(&mut t, &fy, "y_i", "y", ftz_xy)?;
            // With block scales the operands are x·Sx and y·Sy (wires `xs_*`, `ys_*`).
            let (xn, yn, ox, oy) = match req.formats.scale {
                Some(sf) => {
                    let osx = decode_operand(&mut t, &sf, "sx_i", "sx")?;
                    let osy = decode_operand(&mut t, &sf, "sy_i", "sy")?;
                    let a = scaled_operand(&mut t, "xs", ("x", &ox), ("sx", &osx));
                    let b = scaled_operand(&mut t, "ys", ("y", &oy), ("sy", &osy));
                    ("xs", "ys", a, b)
                }
                None => ("x", "y", ox, oy),
            };
            let scaled = req.formats.scale.is_some();
            modes(&mut t, req)?;
            t.comment("Exact product: integer significands multiplied, shifts added (IEEE 754 §7.2 for 0 * Inf)");
            let pp = ox.p + oy.p;
            t.wire(
                "p_sig",
                pp,
                &format!(
                    "{{{{{}{{1'b0}}}}, {xn}_sig}} * {{{{{}{{1'b0}}}}, {yn}_sig}}",
                    oy.p, ox.p
                ),
            );
            let psw = ox.sh_width.max(oy.sh_width) + 1;
            t.wire(
                "p_sh",
                psw,
                &format!(
                    "{{{{{}{{1'b0}}}}, {xn}_sh}} + {{{{{}{{1'b0}}}}, {yn}_sh}}",
                    psw - ox.sh_width,
                    psw - oy.sh_width
                ),
            );
            if scaled {
                // golden::mul_scaled: x·Sx and y·Sy are NaN (invalid for 0 · Inf) on their
                // own; the product of two non-NaN factors as for plain operands.
                t.wire("p_nan_in", 1, "xs_nan | ys_nan | xs_inv | ys_inv");
                t.wire(
                    "p_inv",
                    1,
                    "xs_inv | ys_inv | (~p_nan_in & ((xs_inf & ys_zero) | (xs_zero & ys_inf)))",
                );
            } else {
                t.wire("p_nan_in", 1, "x_nan | y_nan");
                t.wire(
                    "p_inv",
                    1,
                    "~p_nan_in & ((x_inf & y_zero) | (x_zero & y_inf))",
                );
            }
            t.wire(
                "p_inf",
                1,
                &format!("~p_nan_in & ~p_inv & ({xn}_inf | {yn}_inf)"),
            );
            t.wire(
                "p_zero",
                1,
                &format!("~p_nan_in & ~p_inv & ~p_inf & ({xn}_zero | {yn}_zero)"),
            );
            t.wire("p_sign", 1, &format!("{xn}_sign ^ {yn}_sign"));
            let lp = ox.qmin + oy.qmin;
            let p_sh_max = ox.sh_max + oy.sh_max;
            if req.unit == Unit::Mul {
                let qr = fr.emin() - fr.man_bits() as i32;
                let lw = lp.min(qr);
                let off = (lp - lw) as u64;
                let w = (pp as u64 + p_sh_max + off) as u32;
                t.comment(&format!(
                    "Window: a_m * 2^({lw}), {w} bits (every product of finite operands is exact in it)"
                ));
                place(&mut t, "a_m", "p", (pp, psw, p_sh_max), off, w);
                t.wire("a_nan", 1, "p_nan_in | p_inv");
                t.wire("a_inv", 1, "p_inv");
                t.wire("a_inf", 1, "p_inf");
                t.wire("a_zero", 1, "p_zero");
                t.wire("a_sign", 1, "p_sign");
                rounder(
                    &mut t,
                    &fr,
                    w,
                    lw,
                    req.options.tininess,
                    req.options.nonan_code,
                )?;
                if req.options.ftz {
                    flush_result(&mut t, &fr, "res_code");
                    t.line("  assign r_o = ftz_code;");
                    flags = "ftz_flags";
                } else {
                    t.line("  assign r_o = res_code;");
                }
            } else {
                // z in its format (P3109 FMA<fx, fy, fz, fr>), the result rounded to fr; --ftz
                // (binary32 z and result only, rtl::validate) flushes a subnormal z to zero
                let fz = rtl::units::modes::z_format(req);
                let oz = decode_operand_ftz(&mut t, &fz, "z_i", "z", req.options.ftz)?;
                if fz.specials == Specials::Ieee && fz.k >= 16 {
                    // binary32/16, bfloat16: a NaN with a clear top trailing bit is signaling
                    t.wire("z_snan", 1, &format!("z_nan & ~z_t[{}]", fz.man_bits() - 1));
                } else {
                    t.comment("Small formats: every NaN is quiet (OCP, P3109)");
                    t.wire("z_snan", 1, "1'b0");
                }
                let qr = fr.emin() - fr.man_bits() as i32;
                let lw = lp.min(oz.qmin).min(qr);
                let offp = (lp - lw) as u64;
                let offz = (oz.qmin - lw) as u64;
                let w =
                    ((pp as u64 + p_sh_max + offp).max(oz.p as u64 + oz.sh_max + offz) + 1) as u32;
                t.comment(&format!(
                    "Rounder's window: value * 2^({lw}), {w} bits; the product's LSB at p_sh + {offp}, z's at z_sh + {offz}"
                ));
                t.wire("sum_mag", pp, "p_sig");
                t.wire("sc_shift", psw, "p_sh");
                t.wire("sum_neg", 1, "p_sign");
                dot::relative_sum(
                    &mut t,
                    &dot::Relative {
                        mw: pp,
                        pz: oz.p,
                        p1: fr.p + 1,
                        w,
                        offs: offp,
                        s_shw: psw,
                        offz,
                        z_shw: oz.sh_width,
                    },
                )?;
                dot::placed_back(&mut t, &fr, w, lw);
                t.comment("Specials (IEEE 754 §7.2): NaN operand, 0 * Inf, Inf - Inf; signaling z");
                t.wire("f_infinf", 1, "p_inf & z_inf & (p_sign != z_sign)");
                t.wire("a_nan", 1, "p_nan_in | p_inv | z_nan | f_infinf");
                t.wire("a_inv", 1, "p_inv | z_snan | f_infinf");
                t.wire("a_inf", 1, "~a_nan & (p_inf | z_inf)");
                t.wire("a_zero", 1, "~a_nan & ~a_inf & c_zero");
                t.comment("Sign of an exact zero sum (IEEE 754 §6.3): equal signs keep it, else -0 only under rtn");
                t.wire(
                    "a_sign",
                    1,
                    "a_inf ? (p_inf ? p_sign : z_sign) : (a_zero ? ((p_zero & z_zero & f_same) ? p_sign : m_rtn) : f_msign)",
                );
                t.wire("a_m", w, "c_m");
                rounder(
                    &mut t,
                    &fr,
                    w,
                    lw,
                    req.options.tininess,
                    req.options.nonan_code,
                )?;
                let code = if req.options.ftz {
                    flush_result(&mut t, &fr, "res_code");
                    flags = "ftz_flags";
                    "ftz_code"
                } else {
                    "res_code"
                };
                let ieee_zero = fx.has_neg_zero() && fy.has_neg_zero();
                if ieee_zero || !fr.has_neg_zero() {
                    t.line(&format!("  assign r_o = {code};"));
                } else {
                    t.comment("Operands without -0 (P3109, FNUZ): every zero result is +0");
                    t.line(&format!(
                        "  assign r_o = ({code}[{}:0] == {}) ? {} : {code};",
                        fr.k - 2,
                        k(fr.k - 1, 0),
                        k(fr.k, 0)
                    ));
                }
            }
        }
        Unit::Project | Unit::Convert => {
            let fi = req.formats.x;
            let oz = decode_operand(&mut t, &fi, "z_i", "z")?;
            if fi.specials == Specials::Ieee && fi.k >= 16 {
                // binary32/16, bfloat16: a NaN with a clear top trailing bit is signaling
                // (IEEE 754 §6.2.1) and raises invalid.
                t.wire("z_snan", 1, &format!("z_nan & ~z_t[{}]", fi.man_bits() - 1));
            } else {
                t.comment("Small formats: every NaN is quiet (OCP, P3109)");
                t.wire("z_snan", 1, "1'b0");
            }
            let scale = match req.formats.scale {
                Some(sf) => Some(decode_operand(&mut t, &sf, "s_i", "s")?),
                None => None,
            };
            modes(&mut t, req)?;
            let qr = fr.emin() - fr.man_bits() as i32;
            let w = if let Some(os) = scale {
                scaled_quotient(&mut t, &oz, &os, qr)
            } else {
                let lw = oz.qmin.min(qr);
                let off = (oz.qmin - lw) as u64;
                let w = (oz.p as u64 + oz.sh_max + off) as u32;
                t.comment(&format!("Window: a_m * 2^({lw}), {w} bits"));
                place(&mut t, "a_m", "z", (oz.p, oz.sh_width, oz.sh_max), off, w);
                t.wire("a_nan", 1, "z_nan");
                t.wire("a_inv", 1, "z_snan");
                t.wire("a_inf", 1, "z_inf");
                t.wire("a_zero", 1, "z_zero");
                t.wire("a_sign", 1, "z_sign");
                (w, lw)
            };
            let (w, lw) = w;
            rounder(
                &mut t,
                &fr,
                w,
                lw,
                req.options.tininess,
                req.options.nonan_code,
            )?;
            t.line("  assign r_o = res_code;");
        }
        Unit::Add => add::body(&mut t, req)?,
        Unit::Dot => dot::body(&mut t, req)?,
        Unit::Decode | Unit::Mac | Unit::Quantize => {
            return Err(FormalError::Unsupported(format!(
                "the combinational reference does not cover {}",
                req.unit
            )))
        }
    }
    if req.options.no_flags {
        t.comment("--no-flags: the core has no flags_o port");
        t.declared.push(flags.to_string());
    } else {
        t.line(&format!("  assign flags_o = {flags};"));
    }
    t.line("  assign valid_o = valid_i;");
    let unused: Vec<String> = t.declared.clone();
    t.line("\n  // Helper bits a configuration does not read.");
    t.line("  /* verilator lint_off UNUSEDSIGNAL */");
    t.line(&format!("  wire unused_ok = ^{{{}}};", unused.join(", ")));
    t.line("  /* verilator lint_on UNUSEDSIGNAL */");

    let mut v = String::new();
    let _ = writeln!(
        v,
        "// Independent reference of {} (fp8gen-formal {}): exact fixed-point arithmetic and a plain rounder.",
        opt.top,
        golden::VERSION
    );
    let _ = writeln!(
        v,
        "// Deliberately naive; shares nothing with the optimized datapath. Do not edit."
    );
    v.push_str("`default_nettype none\n");
    let _ = writeln!(v, "module {top} (");
    let decls: Vec<String> = opt
        .manifest
        .ports
        .iter()
        .map(|p| {
            let dir = match p.direction {
                rtl::manifest::Direction::Input => "input ",
                rtl::manifest::Direction::Output => "output",
            };
            if p.width == 1 {
                format!("  {dir} wire {}", p.name)
            } else {
                format!("  {dir} wire [{}:0] {}", p.width - 1, p.name)
            }
        })
        .collect();
    v.push_str(&decls.join(",\n"));
    v.push_str("\n);\n");
    v.push_str(&t.body);
    v.push_str("endmodule\n`default_nettype wire\n");
    let manifest = Manifest {
        generator: format!("fp8gen-formal {} (reference)", golden::VERSION),
        top: top.clone(),
        verilog: rtl::manifest::FileList(vec![format!("{top}.v")]),
        ..opt.manifest
    };
    Ok(GeneratedCore {
        verilog: v,
        manifest,
        top,
        depth: 0,
    })
}

/// The reference of a `decode` core: the class from the family's codes, the exact value
/// `sig · 2^(qmin + sh)` of [`decode_operand`], `⌊log2 |v|⌋` from a loop over the
/// significand's bits, and `r_o` (when the core has it: every value exact in binary32) as the
/// projection of the exact value to binary32 by the plain rounder (rne, satnone, so exact).
fn decode_reference(req: &GenRequest, opt: &GeneratedCore) -> Result<GeneratedCore, FormalError> {
    let f = req.formats.x;
    let top = format!("ref_{}", opt.top);
    let port = |name: &str| opt.manifest.ports.iter().find(|p| p.name == name);
    let ew = port("exp_o")
        .map(|p| p.width)
        .ok_or_else(|| FormalError::Generate("the decode core has no exp_o port".into()))?;
    let mut t = Text::new();
    let o = decode_operand(&mut t, &f, "x_i", "x")?;
    let man = f.man_bits();
    let p = f.p;
    let sub = if f.has_subnormals() && man > 0 {
        format!(
            "~x_nan & (x_eb == {}) & (x_t != {})",
            k(f.exp_bits(), 0),
            k(man, 0)
        )
    } else {
        "1'b0".to_string()
    };
    t.comment("Class {nan, inf, zero, subnormal} (normal = 0)");
    t.wire("x_sub", 1, &sub);
    t.wire("x_finite_nz", 1, "~x_nan & ~x_inf & ~x_zero");
    t.line("  assign class_o = {x_nan, x_inf, x_zero, x_sub};");
    t.line("  assign sign_o = x_sign & ~x_nan;");
    let pw = bits(p as u64) + 1;
    t.comment("floor(log2 |v|) = qmin + x_sh + (position of the leading one of x_sig)");
    if p == 1 {
        t.wire("x_msb", pw, &k(pw, 0));
    } else {
        t.line(&format!("  reg [{}:0] x_msb;", pw - 1));
        t.line("  integer d;");
        t.line("  always @* begin");
        t.line(&format!("    x_msb = {};", k(pw, 0)));
        t.line(&format!("    for (d = 0; d < {p}; d = d + 1)"));
        t.line(&format!("      if (x_sig[d]) x_msb = d[{}:0];", pw - 1));
        t.line("  end");
        t.declared.push("x_msb".into());
    }
    let ewide = 32;
    t.wire(
        "x_log2",
        ewide,
        &format!(
            "$signed({{{{{}{{1'b0}}}}, x_sh}}) + $signed({{{{{}{{1'b0}}}}, x_msb}}) + $signed({})",
            ewide - o.sh_width,
            ewide - pw,
            if o.qmin < 0 {
                format!("-{ewide}'sd{}", -(o.qmin as i64))
            } else {
                format!("{ewide}'sd{}", o.qmin)
            }
        ),
    );
    t.line(&format!(
        "  assign exp_o = x_finite_nz ? x_log2[{}:0] : {};",
        ew - 1,
        k(ew, 0)
    ));
    t.line(&format!(
        "  assign sig_o = x_finite_nz ? (x_sig << ({} - x_msb)) : {};",
        k(pw, (p - 1) as u64),
        k(p, 0)
    ));
    if port("r_o").is_some() {
        let b32 = Format::BINARY32;
        modes(&mut t, req)?;
        let qr = b32.emin() - b32.man_bits() as i32;
        let lw = o.qmin.min(qr);
        let off = (o.qmin - lw) as u64;
        let w = (o.p as u64 + o.sh_max + off) as u32;
        t.comment(&format!(
            "r_o: the exact value projected to binary32 (rne, satnone); window a_m * 2^({lw}), {w} bits"
        ));
        place(&mut t, "a_m", "x", (o.p, o.sh_width, o.sh_max), off, w);
        t.wire("a_nan", 1, "x_nan");
        t.wire("a_inv", 1, "1'b0");
        t.wire("a_inf", 1, "x_inf");
        t.wire("a_zero", 1, "x_zero");
        t.wire("a_sign", 1, "x_sign");
        rounder(&mut t, &b32, w, lw, Tininess::AfterRounding, 0)?;
        t.declared.push("res_flags".into());
        t.line("  assign r_o = res_code;");
    }
    t.line("  assign valid_o = valid_i;");
    unused_line(&mut t);
    let ports: Vec<(bool, u32, String)> = opt
        .manifest
        .ports
        .iter()
        .map(|p| {
            (
                p.direction == rtl::manifest::Direction::Input,
                p.width,
                p.name.clone(),
            )
        })
        .collect();
    let mut v = String::new();
    let _ = writeln!(
        v,
        "// Independent reference of {} (fp8gen-formal {}): the code's class and exact value, written from the format description.",
        opt.top,
        golden::VERSION
    );
    let _ = writeln!(
        v,
        "// Deliberately naive; shares nothing with the optimized datapath. Do not edit."
    );
    v.push_str("`default_nettype none\n");
    v.push_str(&module_header(&top, &ports));
    v.push_str(&t.body);
    v.push_str("endmodule\n`default_nettype wire\n");
    let manifest = Manifest {
        generator: format!("fp8gen-formal {} (reference)", golden::VERSION),
        top: top.clone(),
        verilog: rtl::manifest::FileList(vec![format!("{top}.v")]),
        ..opt.manifest.clone()
    };
    Ok(GeneratedCore {
        verilog: v,
        manifest,
        top,
        depth: 0,
    })
}

/// The `module … ( ports );` header of a reference module.
fn module_header(name: &str, ports: &[(bool, u32, String)]) -> String {
    let decls: Vec<String> = ports
        .iter()
        .map(|(input, w, n)| {
            let dir = if *input { "input " } else { "output" };
            if *w == 1 {
                format!("  {dir} wire {n}")
            } else {
                format!("  {dir} wire [{}:0] {n}", w - 1)
            }
        })
        .collect();
    format!("module {name} (\n{}\n);\n", decls.join(",\n"))
}

/// The `unused_ok` line of a reference module's body.
fn unused_line(t: &mut Text) {
    let unused: Vec<String> = t.declared.clone();
    t.line("\n  // Helper bits a configuration does not read.");
    t.line("  /* verilator lint_off UNUSEDSIGNAL */");
    t.line(&format!("  wire unused_ok = ^{{{}}};", unused.join(", ")));
    t.line("  /* verilator lint_on UNUSEDSIGNAL */");
}

/// The reference of a `quantize` core: a naive block maximum (a linear scan comparing
/// decoded (exponent, significand) pairs), the scale exponent by the policy's definition on
/// the exact maximum (golden/src/quantize.rs), and one element module per input computing
/// P3109 §5.1.2 ωBlockProject: the exact quotient z / S placed in a window wide enough for
/// every scale, then the plain rounder.
fn quantize_reference(req: &GenRequest, opt: &GeneratedCore) -> Result<GeneratedCore, FormalError> {
    let fin = req.formats.x;
    let fr = req.formats.r;
    let sf = req.formats.scale.unwrap_or(Format::E8M0);
    if sf.has_inf() {
        return Err(FormalError::Unsupported(format!(
            "the reference of quantize covers scale formats without infinities (e8m0, binary8p1uf), not {}",
            sf.name()
        )));
    }
    let n = req.options.block.n;
    let top = format!("ref_{}", opt.top);
    let elem = format!("{top}_elem");
    let dyn_rm = req.rounding == RoundingSel::Dynamic;
    let dyn_sat = req.saturation == SaturationSel::Dynamic;

    // The element module: z_i / 2^(s_i) rounded once.
    let mut t = Text::new();
    let oz = decode_operand(&mut t, &fin, "z_i", "z")?;
    t.wire(
        "z_snan",
        1,
        &format!("z_nan & ~z_t[{}]", fin.man_bits() - 1),
    );
    let os = decode_operand(&mut t, &sf, "s_i", "s")?;
    modes(&mut t, req)?;
    // z = z_sig * 2^(qz + z_sh), S = s_sig * 2^(qs + s_sh) (s_sig = 1 for a nonzero scale):
    // the quotient's LSB is 2^(qz + z_sh - qs - s_sh) >= 2^(qz - qs - s_sh_max).
    let s_top = os.qmin as i64 + os.sh_max as i64;
    let qr = (fr.emin() - fr.man_bits() as i32) as i64;
    let lw = (oz.qmin as i64 - s_top).min(qr);
    let c = oz.qmin as i64 - os.qmin as i64 - lw; // shift of z_sig when z_sh = s_sh = 0
    let max_shift = oz.sh_max as i64 + c;
    let w = oz.p + max_shift as u32;
    let shw = bits(max_shift as u64 + os.sh_max) + 1;
    t.comment(&format!(
        "Quotient z / S in a window: a_m * 2^({lw}), {w} bits; shift = z_sh + {c} - s_sh (never negative)"
    ));
    t.wire(
        "q_shift",
        shw,
        &format!(
            "{{{{{}{{1'b0}}}}, z_sh}} + {} - {{{{{}{{1'b0}}}}, s_sh}}",
            shw - oz.sh_width,
            k(shw, c as u64),
            shw - os.sh_width
        ),
    );
    t.wire(
        "q_m",
        w,
        &format!("{{{{{}{{1'b0}}}}, z_sig}} << q_shift", w - oz.p),
    );
    t.comment("P3109 §5.1.2: NaN if S or z is NaN; 0 if S = 0 (+0); else z / S");
    t.wire("a_nan", 1, "z_nan | s_nan");
    t.wire("a_inv", 1, "z_snan");
    t.wire("a_zero", 1, "~a_nan & (s_zero | z_zero)");
    t.wire("a_inf", 1, "~a_nan & ~a_zero & z_inf");
    t.wire("a_sign", 1, "s_zero ? 1'b0 : (z_sign ^ s_sign)");
    t.wire("a_m", w, "q_m");
    rounder(
        &mut t,
        &fr,
        w,
        lw as i32,
        req.options.tininess,
        req.options.nonan_code,
    )?;
    t.line("  assign r_o = res_code;");
    t.line("  assign flags_o = res_flags;");
    unused_line(&mut t);
    let mut eports = vec![
        (true, fin.k, "z_i".to_string()),
        (true, sf.k, "s_i".to_string()),
    ];
    let sr = req.random_bits();
    if dyn_rm {
        let count = if sr > 0 {
            ROUNDING_ENCODING.len()
        } else {
            DETERMINISTIC_ROUNDINGS
        };
        eports.push((true, index_bits(count), "rm_i".to_string()));
    }
    if dyn_sat {
        eports.push((true, 2, "sat_i".to_string()));
    }
    if sr > 0 {
        eports.push((true, sr, "rnd_i".to_string()));
    }
    eports.push((false, fr.k, "r_o".to_string()));
    eports.push((false, 4, "flags_o".to_string()));
    let mut v = String::new();
    let _ = writeln!(
        v,
        "// Independent reference of {} (fp8gen-formal {}): a naive block maximum, the scale by its definition, exact quotients and a plain rounder.",
        opt.top,
        golden::VERSION
    );
    let _ = writeln!(
        v,
        "// Deliberately naive; shares nothing with the optimized datapath. Do not edit."
    );
    v.push_str("`default_nettype none\n");
    v.push_str(&module_header(&elem, &eports));
    v.push_str(&t.body);
    v.push_str("endmodule\n\n");

    // The top: the block maximum and the scale.
    let mut t = Text::new();
    let p = fin.p;
    let mut ops = Vec::new();
    for i in 0..n {
        ops.push(decode_operand(
            &mut t,
            &fin,
            &format!("z{i}_i"),
            &format!("z{i}"),
        )?);
    }
    let o = &ops[0];
    let keyw = o.sh_width + p;
    t.comment("Block maximum: a linear scan over {sh, sig} of the finite elements (value = sig * 2^(qmin + sh), so the pair orders like the value); NaN and Inf count as 0");
    for i in 0..n {
        t.wire(
            &format!("k{i}"),
            keyw,
            &format!(
                "(z{i}_nan | z{i}_inf) ? {} : {{z{i}_sh, z{i}_sig}}",
                k(keyw, 0)
            ),
        );
        let prev = if i == 0 {
            k(keyw, 0)
        } else {
            format!("m{}", i - 1)
        };
        t.wire(
            &format!("m{i}"),
            keyw,
            &format!("(k{i} > {prev}) ? k{i} : {prev}"),
        );
    }
    let last = format!("m{}", n - 1);
    let nans: Vec<String> = (0..n).map(|i| format!("z{i}_nan")).collect();
    let fins: Vec<String> = (0..n).map(|i| format!("~z{i}_nan & ~z{i}_inf")).collect();
    t.wire("any_nan", 1, &nans.join(" | "));
    t.wire("any_fin", 1, &fins.join(" | "));
    t.wire("amax_sh", o.sh_width, &format!("{last}[{}:{p}]", keyw - 1));
    t.wire("amax_sig", p, &format!("{last}[{}:0]", p - 1));
    t.wire("amax_zero", 1, &format!("amax_sig == {}", k(p, 0)));
    let pw = bits(p as u64);
    t.line(&format!("  reg [{}:0] amax_msb;", pw - 1));
    t.line("  integer j;");
    t.line("  always @* begin");
    t.line(&format!("    amax_msb = {};", k(pw, 0)));
    t.line(&format!("    for (j = 0; j < {p}; j = j + 1)"));
    t.line(&format!(
        "      if (amax_sig[j]) amax_msb = j[{}:0];",
        pw - 1
    ));
    t.line("  end");
    t.declared.push("amax_msb".into());
    t.wire(
        "amax_norm",
        p,
        &format!("amax_sig << ({} - amax_msb)", k(pw, (p - 1) as u64)),
    );
    let policy = req.options.block.policy;
    let up = match policy {
        golden::ScalePolicy::Floor => "1'b0".to_string(),
        // not a power of two: a bit besides the leading one
        golden::ScalePolicy::Ceil => "(amax_sig & (amax_sig - 1'b1)) != 0".to_string(),
        golden::ScalePolicy::Even => {
            let m = fr.man_bits();
            if m + 1 >= p {
                "1'b0".to_string()
            } else {
                // amax rounded half up to m + 1 bits reaches the next power of two
                format!(
                    "(({{1'b0, amax_norm}} + {}) >> {p}) != 0",
                    k(p + 1, 1u64 << (p - m - 2))
                )
            }
        }
        golden::ScalePolicy::Rceil => {
            let d = fr.decode(fr.max_finite_mag());
            let s = d.sig as u64;
            let lead = 63 - s.leading_zeros();
            let norm = if lead < p {
                s << (p - 1 - lead)
            } else {
                // more significant bits than the input has: amax (p bits) exceeds the
                // constant iff it exceeds the constant truncated to p bits
                s >> (lead + 1 - p)
            };
            format!("amax_norm > {}", k(p, norm))
        }
    };
    t.wire("amax_up", 1, &up);
    // e = floor(log2 amax) + up - emax_r = qmin + sh + msb + up - emax_r
    let ew = 12;
    let base = o.qmin as i64 - fr.emax() as i64;
    t.wire(
        "scale_e",
        ew,
        &format!(
            "$signed({{{{{}{{1'b0}}}}, amax_sh}}) + $signed({{{{{}{{1'b0}}}}, amax_msb}}) + $signed({{{{{}{{1'b0}}}}, amax_up}}) + $signed({ew}'sd{}) - $signed({ew}'sd{})",
            ew - o.sh_width,
            ew - pw,
            ew - 1,
            base.max(0),
            (-base).max(0)
        ),
    );
    let (slo, shi) = (sf.emin() as i64, sf.emax() as i64);
    let sk = sf.k;
    let enc = |e: i64| k(sk, (e + sf.bias as i64) as u64);
    t.wire(
        "scale_c",
        ew,
        &format!(
            "($signed(scale_e) < $signed({ew}'sd0) - $signed({ew}'sd{lo})) ? ($signed({ew}'sd0) - $signed({ew}'sd{lo})) : ($signed(scale_e) > $signed({ew}'sd{hi})) ? {ew}'sd{hi} : scale_e",
            lo = -slo,
            hi = shi
        ),
    );
    t.wire(
        "s_code",
        sk,
        &format!(
            "any_nan ? {} : ~any_fin ? {} : amax_zero ? {} : (scale_c[{}:0] + {})",
            k(sk, sf.nan_code().unwrap_or(0) as u64),
            enc(shi),
            enc(slo),
            sk - 1,
            k(sk, sf.bias as u64)
        ),
    );
    t.line("  assign s_o = s_code;");
    let mut flags = Vec::new();
    for i in 0..n {
        let mut conns = vec![format!(".z_i(z{i}_i)"), ".s_i(s_code)".to_string()];
        if dyn_rm {
            conns.push(".rm_i(rm_i)".into());
        }
        if dyn_sat {
            conns.push(".sat_i(sat_i)".into());
        }
        if sr > 0 {
            conns.push(format!(".rnd_i(rnd{i}_i)"));
        }
        conns.push(format!(".r_o(r{i}_o)"));
        conns.push(format!(".flags_o(fe{i})"));
        t.line(&format!("  wire [3:0] fe{i};"));
        t.line(&format!("  {elem} u_elem{i} ({});", conns.join(", ")));
        // a wire with a driver of its own: the compositional proof cuts the flags here
        t.wire(&format!("f{i}"), 4, &format!("fe{i}"));
        flags.push(format!("f{i}"));
    }
    t.line(&format!("  assign flags_o = {};", flags.join(" | ")));
    t.line("  assign valid_o = valid_i;");
    unused_line(&mut t);
    let ports: Vec<(bool, u32, String)> = opt
        .manifest
        .ports
        .iter()
        .map(|p| {
            (
                p.direction == rtl::manifest::Direction::Input,
                p.width,
                p.name.clone(),
            )
        })
        .collect();
    v.push_str(&module_header(&top, &ports));
    v.push_str(&t.body);
    v.push_str("endmodule\n`default_nettype wire\n");
    let manifest = Manifest {
        generator: format!("fp8gen-formal {} (reference)", golden::VERSION),
        top: top.clone(),
        verilog: rtl::manifest::FileList(vec![format!("{top}.v")]),
        ..opt.manifest.clone()
    };
    Ok(GeneratedCore {
        verilog: v,
        manifest,
        top,
        depth: 0,
    })
}

/// Whether `prove` covers the request `req` (the check before any solver runs): the reference
/// can be built for it (for `mac`, the reference accumulator of its core).
pub fn check_request(req: &GenRequest) -> Result<(), FormalError> {
    check_unit(req.unit)?;
    if req.unit == Unit::Mac {
        // A pipelined mac is proven through its 0-stage twin (crate::induct, lemma P).
        let twin = GenRequest {
            stages: 0,
            ..req.clone()
        };
        let core = rtl::generate(&twin).map_err(|e| FormalError::Generate(e.to_string()))?;
        return mac::reference(&twin, &core.top, &core.manifest.ports).map(|_| ());
    }
    generate_reference(req).map(|_| ())
}
