//! The `fma` unit: `r = x·y + z` with x in fx, y in fy (small formats), z in fz and r in fr
//! (binary32, binary16, bfloat16 or small formats; binary32 by default), computed exactly and
//! rounded once (P3109 FMA<fx, fy, fz, fr, ρ>).
//!
//! Golden meaning: `(r_o, flags_o) = golden::fma(fx, x_i, fy, y_i, z_i, spec, {ftz, fz, fr})`
//! with `spec` = the fixed modes or the modes selected by `rm_i` / `sat_i`. Data input ports,
//! in order: `x_i`, `y_i`, `z_i` (fz bits), `rm_i` (dynamic rounding), `sat_i` (dynamic
//! saturation); outputs `r_o` (fr bits), `flags_o`. Stochastic rounding is not offered (the
//! golden FMA has no random input).
//!
//! Datapath ([`fma_datapath`], shared with `mac`; [`add_round`] also serves `dot`):
//! ```text
//!   x, y ─ unpack ─ Px×Py multiply ─ 1-bit normalize ─┐ product P (Wp bits, exp ep)
//!   z ─ unpack fz (subnormals normalized when P can be smaller, else T.0 at −bias) ─┤ Z (Pz bits, exp ez)
//!   beside the multiply: ez − ep and ep − ez from z's exponent field, the clamped shift
//!   swap: H = operand with the larger exponent (a zero operand never is H), L = the other
//!   both left-aligned in F = max(Wp, Pz, Pr) bits, G = 3 guard bits below
//!   far path (additions; subtractions with eH − eL ≥ 2):
//!     align: {L, G'b0} >> min(eH − eL, F+G); sticky = trailing zeros of {L, G'b0} < shift
//!     H + L, or H − L − sticky (the exact value then lies strictly between the result and
//!     the result + 1, as in golden::add_exact); normalize by 0, 1 or 2 places
//!   near path (subtractions with eH − eL ≤ 1; a zero operand):
//!     H − (L >> 0 or 1) (no bit lost below the guard bits), or L − H when negative
//!     (eH = eL only); leading-zero count + normalize (F + G + 1 bits)
//!   → THE ONE rounder into fr
//!   then: ftz output flush, +0 for P3109 / FNUZ operand formats (golden::fma_ieee_zero)
//! ```
//! Exactness: a sticky bit can only appear when eH − eL > G, and then at most one leading bit
//! cancels, so at least F + G − 1 ≥ Pr + 2 significand bits lie above the sticky bit —
//! the rounder's contract for a single correct rounding in every deterministic mode. H's
//! MSB is set whenever both operands are nonzero, so a far-path sum keeps its MSB within its
//! top three bits.

use super::modes::{mode_lines, mode_ports, mode_tag, spec_from_ports, y_format, z_format};
use super::mul::{product_scaled, Product};
use super::{describe, finish_core};
use crate::ast::{any, concat, mask, sbits, ubits, Expr, ModuleBuilder};
use crate::blocks::{lzc_normalize_tree, round, unpack, Modes, RoundIn};
use crate::{GenError, GenRequest, GeneratedCore, RoundingSel};
use golden::{fma_ieee_zero, FmaOptions, Format, Rounding, Tininess};

/// Guard bits below the aligned significands.
const GUARD: u32 = 3;

/// Result of the shared FMA datapath.
#[derive(Clone, Debug)]
pub struct FmaOut {
    /// binary32 result code.
    pub code: Expr,
    /// `{invalid, overflow, underflow, inexact}`.
    pub flags: Expr,
}

/// Builds `x·y + z` (x in fx, y in fy, z in fz) rounded once to fr, with the golden FMA's
/// special cases, zero signs, `ftz` and flags.
#[allow(clippy::too_many_arguments)]
pub fn fma_datapath(
    b: &mut ModuleBuilder,
    fx: &Format,
    x: &Expr,
    fy: &Format,
    y: &Expr,
    z: &Expr,
    fz: &Format,
    fr: &Format,
    modes: &Modes,
    ftz: bool,
    scales: Option<(&Format, &Expr, &Expr)>,
) -> FmaOut {
    let p = product_scaled(b, fx, x, fy, y, false, scales);
    add_round(b, &p, z, fz, fr, fma_ieee_zero(fx, fy), modes, ftz)
}

/// `p + z` for an exact product-like operand `p` (the FMA's product, the dot product's sum)
/// and an addend `z` of format `fz` (binary32, binary16, bfloat16 or a small format, decoded
/// by [`unpack`]), rounded once to `fr` with the golden FMA's special cases, zero signs,
/// `ftz` (binary32 addend and result only) and flags; `ieee_zero` false makes every zero
/// result +0 (P3109 / FNUZ operands).
#[allow(clippy::too_many_arguments)]
pub fn add_round(
    b: &mut ModuleBuilder,
    p: &Product,
    z: &Expr,
    fz: &Format,
    fr: &Format,
    ieee_zero: bool,
    modes: &Modes,
    ftz: bool,
) -> FmaOut {
    let b32 = Format::BINARY32;
    debug_assert!((*fr == b32 && *fz == b32) || !ftz);
    // z's precision, trailing bits and smallest normal exponent
    let (pz, mz, zmin) = (fz.p, fz.man_bits(), fz.emin() as i64);
    b.comment_owned(vec![
        format!("Unpack z: {}", fz.name()),
        if ftz {
            "ftz: a subnormal z is flushed to zero (sign kept)".to_string()
        } else {
            "subnormal z exact (normalized only when products reach the subnormal range)"
                .to_string()
        },
    ]);
    // A subnormal z needs normalizing only if it can be the operand with the larger exponent,
    // i.e. if products can lie below 2^(emin_z + 1); otherwise it enters as 0.T * 2^emin_z
    // (exact, MSB not set) and only ever is the smaller, aligned operand.
    let (plo0, _) = p.exp_range;
    let z_sub = fz.has_subnormals() && mz > 0;
    let norm_z = !ftz && z_sub && plo0 <= zmin;
    let mut uz = unpack(b, fz, z, norm_z, "z");
    if !ftz && z_sub && !norm_z {
        // 0.T * 2^emin = T.0 * 2^(emin - 1), and emin - 1 = -bias: the exponent stays the
        // field minus the bias (no adder), only the significand moves.
        uz.sig = b.wire_note(
            "z_sig_sub",
            Expr::mux(
                &uz.sub,
                &concat(&[uz.sig.slice(mz - 1, 0), Expr::c(0, 1)]),
                &uz.sig,
            ),
            &format!("subnormal: T.0 at exponent {} (not normalized)", zmin - 1),
        );
    }
    let z_zero = if ftz {
        b.wire("z_zero_ftz", uz.zero.or(&uz.sub))
    } else {
        uz.zero.clone()
    };
    // ---- specials (golden::fma_tail) ----
    b.comment(&["Specials: NaN operand, 0*Inf, Inf-Inf -> canonical NaN; sNaN z raises invalid"]);
    let any_nan = b.wire("f_any_nan", p.nan.or(&uz.nan));
    let inf_inf = b.wire(
        "f_inf_minus_inf",
        p.inf.and(&uz.inf).and(&p.sign.xor(&uz.sign)),
    );
    let nan = b.wire("f_is_nan", any_nan.or(&inf_inf));
    let invalid = b.wire(
        "f_invalid",
        any(&[p.invalid.clone(), uz.snan.clone(), inf_inf.clone()]),
    );
    let inf = b.wire("f_is_inf", p.inf.or(&uz.inf).and(&nan.not()));
    let inf_sign = Expr::mux(&p.inf, &p.sign, &uz.sign);
    // ---- swap ----
    let wp = p.sig.width;
    // wide enough for either operand and for the result's precision + 2 above the sticky bit
    let f = wp.max(pz).max(fr.p);
    let g = GUARD;
    let (plo, phi) = p.exp_range;
    let (zlo, zhi) = uz.exp_range;
    // Wide enough for every difference, and never narrower than either exponent wire (a
    // product of a very wide-range format, e.g. Binary10p1se x E4M3, carries an exponent wire
    // wider than the difference range needs).
    let dw = sbits(zlo - phi, zhi - plo)
        .max(uz.exp.width)
        .max(p.exp.width);
    // ez - ep and ep - ez, and from them the alignment shift. With the product's exponent in
    // parts (ep = sum + offset + carry, carry = the multiply's normalization bit), both
    // candidates of each difference, and the clamped shift of each, are formed beside the
    // multiply from ez_c = ez - offset - c (the z side is shallow): the product's top bit
    // only selects.
    let parts = p.exp_parts.as_ref().filter(|e| e.sum.width <= dw);
    // z's exponent from its field: ez = ezb - bz with ezb = the field (a subnormal T.0 too:
    // field 0), when z is not normalized; bz is folded into the constant subtracted below.
    // A normalized z (subnormals by leading-zero count) enters with ezb = ez, bz = 0.
    let (ezb, bz) = if norm_z {
        (uz.exp.sext(dw), 0)
    } else {
        let ef = z.slice(fz.mag_bits() - 1, mz).zext(dw);
        (
            b.wire_note("al_ez_field", ef, "z's exponent field"),
            fz.bias as i64,
        )
    };
    // (ez - ep, ep - ez, suffix) per candidate
    let cands: Vec<(Expr, Expr, String)> = match parts {
        Some(ep) => {
            let sum = b.wire_note(
                "al_esum",
                ep.sum.sext(dw),
                "ep without the offset and carry",
            );
            (0..2)
                .map(|c| {
                    let ezc = b.wire_note(
                        &format!("al_ez_c{c}"),
                        ezb.sub(&Expr::ci(bz + ep.offset + c, dw)),
                        &format!("ez - ({} + {c})", ep.offset),
                    );
                    (
                        b.wire(&format!("al_dz_c{c}"), ezc.sub(&sum)),
                        b.wire(&format!("al_dp_c{c}"), sum.sub(&ezc)),
                        format!("_c{c}"),
                    )
                })
                .collect()
        }
        None => {
            let ez = if bz == 0 {
                ezb.clone()
            } else {
                b.wire_note("al_ez", ezb.sub(&Expr::ci(bz, dw)), "ez")
            };
            vec![(
                b.wire_note("al_dz", ez.sub(&p.exp.sext(dw)), "ez - ep"),
                b.wire_note("al_dp", p.exp.sext(dw).sub(&ez), "ep - ez"),
                String::new(),
            )]
        }
    };
    let pick = |v: Vec<Expr>| match (parts, v.as_slice()) {
        (Some(ep), [e0, e1]) => Expr::mux(&ep.carry, e1, e0),
        _ => v[0].clone(),
    };
    let dz = match parts {
        Some(_) => b.wire_note(
            "al_dz",
            pick(cands.iter().map(|c| c.0.clone()).collect()),
            "ez - ep",
        ),
        None => cands[0].0.clone(),
    };
    let z_big = b.wire_note(
        "al_z_big",
        p.zero.or(&z_zero.not().and(&dz.msb().not())),
        "z is the operand with the larger exponent",
    );
    let p_f = if f > wp {
        concat(&[p.sig.clone(), Expr::c(0, f - wp)])
    } else {
        p.sig.clone()
    };
    let z_f = if f > pz {
        concat(&[uz.sig.clone(), Expr::c(0, f - pz)])
    } else {
        uz.sig.clone()
    };
    let both_zero = b.wire("al_both_zero", p.zero.and(&z_zero));
    let h_sig = Expr::mux(&z_big, &z_f, &p_f).and(&Expr::repl(f, &both_zero.not()));
    let h_sig = b.wire("al_h_sig", h_sig);
    let l_live = p.zero.or(&z_zero).not();
    let l_sig = Expr::mux(&z_big, &p_f, &z_f).and(&Expr::repl(f, &l_live));
    let l_sig = b.wire("al_l_sig", l_sig);
    let ew = dw.max(p.exp.width).max(uz.exp.width) + 1;
    let e_h = b.wire_note(
        "al_e_h",
        Expr::mux(&z_big, &uz.exp.sext(ew), &p.exp.sext(ew)),
        "exponent of H's MSB",
    );
    let s_h = b.wire("al_s_h", Expr::mux(&z_big, &uz.sign, &p.sign));
    // ---- alignment shifter with sticky ----
    let fg = f + g;
    // |ez - ep| from two subtractions in parallel (ep - ez is not the negation of a finished
    // ez - ep), and the clamp decided on each before the select.
    let sw = ubits(fg as u128);
    // The clamp is needed only when an exponent difference can exceed F+G (it always can with
    // a binary32 addend; small addend formats may never reach it).
    let max_d = (zhi - plo).max(phi - zlo);
    let clamp = (dw > sw || (1u128 << (dw - 1)) > fg as u128) && max_d > fg as i64;
    let amts: Vec<Expr> = cands
        .iter()
        .map(|(dz, dp, sfx)| {
            let d = b.wire(&format!("al_d{sfx}"), Expr::mux(&dz.msb(), dp, dz));
            let amt = if clamp {
                // d > F+G from d's bits (d >= 0): a bit above the amount's, or the amount's
                // bits above F+G (LUT logic, no compare chain)
                let big = if dw - 1 > sw {
                    d.slice(dw - 2, sw).red_or()
                } else {
                    Expr::bit_c(false)
                };
                let big = big.or(&gt_const(&d.slice(sw.min(dw - 1) - 1, 0), fg as u128));
                let d_lo = d.slice(sw.min(dw - 1) - 1, 0).zext(sw);
                Expr::mux(&big, &Expr::c(fg as u128, sw), &d_lo)
            } else {
                d.slice(sw.min(dw) - 1, 0).zext(sw)
            };
            if sfx.is_empty() {
                amt
            } else {
                b.wire(&format!("al_amt{sfx}"), amt)
            }
        })
        .collect();
    let amt = pick(amts);
    let amt = b.wire_note("al_amt", amt, "alignment shift, clamped to F+G");
    // The sticky bit is the OR of the bits shifted out: {L, G'b0} has a nonzero bit among
    // its amt low ones when its trailing-zero count is below amt. The count of each
    // candidate L (the product's, z's) comes from the operand beside the exponent
    // difference, so the sticky bit is one compare after amt, beside the shifter.
    b.comment_owned(vec![
        format!("Alignment: {{L, {g}'b0}} >> amt in {fg} bits;"),
        format!("sticky = (trailing zeros of {{L, {g}'b0}}) < amt (a bit shifted out is 1)"),
    ]);
    let lg = concat(&[l_sig.clone(), Expr::c(0, g)]);
    let al = b.wire("al_shifted", lg.shr(&amt));
    let mut tz_of = |sig: &Expr, name: &str| {
        let w = sig.width;
        let rev = concat(&(0..w).map(|i| sig.bit(i)).collect::<Vec<_>>());
        let (cnt, _) = lzc_normalize_tree(b, &rev, &format!("{name}_tz"));
        let pad = (f - w + g) as u128;
        b.wire_note(
            &format!("{name}_tzc"),
            cnt.zext(sw).add(&Expr::c(pad, sw)),
            &format!("trailing zeros of {{{name}, {pad}'b0}} (nonzero {name})"),
        )
    };
    let tz_p = tz_of(&p.sig, "p_sig");
    let tz_z = tz_of(&uz.sig, "z_sig");
    let tz_l = Expr::mux(&z_big, &tz_p, &tz_z);
    let sticky = b.wire("al_sticky", l_live.and(&amt.gt(&tz_l)));
    // ---- add / subtract: far and near paths ----
    // H's MSB is set whenever both operands are nonzero (a product is normalized; a z that
    // could be H is normalized, see norm_z), so only a subtraction with eH - eL <= 1 can
    // cancel more than one leading bit. The far path (every addition, subtractions with
    // eH - eL >= 2) aligns through the shifter and normalizes by at most two places; the
    // near path (subtractions with eH - eL <= 1, and a zero operand: then the sum is H,
    // which may be a subnormal z) aligns by at most one place (no bit is lost below the
    // guard bits: no sticky) and normalizes by a leading-zero count.
    let ws = fg + 1;
    let sub = b.wire("add_sub", p.sign.xor(&uz.sign));
    let near = b.wire_note(
        "add_near",
        l_live.not().or(&sub.and(&amt.slice(sw - 1, 1).eq_c(0))),
        "near path: a subtraction with eH - eL <= 1, or a zero operand",
    );
    let hx = concat(&[Expr::c(0, 2), h_sig.clone(), Expr::c(0, g)]);
    // far: H + L, or H - L - sticky
    let lx = concat(&[Expr::c(0, 2), al.clone()]);
    let lx = lx.xor(&Expr::repl(ws + 1, &sub));
    let cin = sub.and(&sticky.not());
    let s = b.wire_note(
        "far_sum",
        hx.add(&lx).add(&cin.zext(ws + 1)),
        "H + L, or H - L - sticky (two's complement)",
    );
    b.comment(&[
        "Far path: the sum's MSB is one of its top three bits (addition: carry or H's MSB;",
        "subtraction with eH - eL >= 2: H's MSB or the bit below)",
    ]);
    let (s1, s2) = (s.bit(ws - 1), s.bit(ws - 2));
    let far_lz = b.wire(
        "far_lz",
        Expr::mux(
            &s1,
            &Expr::c(0, 2),
            &Expr::mux(&s2, &Expr::c(1, 2), &Expr::c(2, 2)),
        ),
    );
    let far_norm = Expr::mux(
        &s1,
        &s.slice(ws - 1, 0),
        &Expr::mux(
            &s2,
            &concat(&[s.slice(ws - 2, 0), Expr::c(0, 1)]),
            &concat(&[s.slice(ws - 3, 0), Expr::c(0, 2)]),
        ),
    );
    let far_norm = b.wire("far_norm", far_norm);
    // near: H - (L >> amt) with amt <= 1, from the unshifted L
    let lg1 = Expr::mux(
        &amt.bit(0),
        &concat(&[Expr::c(0, 3), l_sig.clone(), Expr::c(0, g - 1)]),
        &concat(&[Expr::c(0, 2), l_sig.clone(), Expr::c(0, g)]),
    );
    let lg1 = b.wire_note("near_l", lg1, "L >> (amt & 1)");
    let near_d = b.wire_note("near_diff", hx.sub(&lg1), "H - (L >> amt)");
    // The difference is negative only for a subtraction with eH = eL (amt = 0) and L > H
    // (its sign bit; for amt = 1, L >> 1 < H), and then -(H - L) = L - H, from the
    // unshifted L beside the subtractor.
    let neg = b.wire_note(
        "near_neg_sel",
        sub.and(&amt.eq_c(0)).and(&near_d.msb()),
        "H - L < 0",
    );
    let lp = concat(&[Expr::c(0, 2), l_sig.clone(), Expr::c(0, g)]);
    let neg_s = b.wire("near_neg", lp.sub(&hx));
    let mag = b.wire(
        "near_mag",
        Expr::mux(&neg, &neg_s.slice(ws - 1, 0), &near_d.slice(ws - 1, 0)),
    );
    let r_sign = b.wire("add_sign", s_h.xor(&neg));
    // a far sum is never zero (H is nonzero and at least 2^(eH - 1) remains)
    let mag_zero = b.wire("add_zero", near.and(&mag.eq_c(0)));
    // ---- normalize ----
    b.comment_owned(vec![format!(
        "Near path: leading-zero count of the {ws}-bit difference"
    )]);
    let (nlz, nnorm) = lzc_normalize_tree(b, &mag, "nrm");
    let nlz = b.wire("near_lzc", nlz);
    let norm = b.wire("nrm_sig", Expr::mux(&near, &nnorm, &far_norm));
    let e_lo = plo.min(zlo) + 1 - (ws as i64 - 1);
    let e_hi = phi.max(zhi) + 1;
    let rw = sbits(e_lo, e_hi).max(ew).max(nlz.width.max(2) + 1);
    // eH + 1 - lz: the far path's three candidates beside its adder, the near path's after
    // its count
    let eh = e_h.sext(rw);
    let far_exp = Expr::mux(
        &far_lz.bit(1),
        &eh.sub(&Expr::c(1, rw)),
        &Expr::mux(&far_lz.bit(0), &eh, &eh.add(&Expr::c(1, rw))),
    );
    let far_exp = b.wire_note("far_exp", far_exp, "eH + 1 - far_lz");
    let near_exp = b.wire_note(
        "near_exp",
        eh.add(&Expr::c(1, rw)).sub(&nlz.zext(rw)),
        "eH + 1 - near_lzc",
    );
    let r_exp = b.wire_note(
        "nrm_exp",
        Expr::mux(&near, &near_exp, &far_exp),
        "exponent of the sum's MSB",
    );
    // ---- zero sign (IEEE 754 §6.3, golden::add_exact) ----
    let rtn = modes.rm[3].clone();
    let zero_sign = Expr::mux(&both_zero.and(&p.sign.xnor_(&uz.sign)), &p.sign, &rtn);
    let zero = b.wire("f_is_zero", mag_zero.and(&nan.not()).and(&inf.not()));
    let sign = Expr::mux(&inf, &inf_sign, &Expr::mux(&zero, &zero_sign, &r_sign));
    let sign = b.wire("f_sign", sign);
    // Tiny sums (z and r of one format with subnormals, emin = emin_z). When every nonzero
    // product lies at 2^(plo-1) or above and its quantum and that of a z near it
    // (2^(plo-Wp+1), 2^(plo-Pz)) are at least 2^emin, a nonzero x·y ± z is never below 2^emin
    // (no cancellation: at least 2^(max(ep, ez) - 1); heavy cancellation: a nonzero multiple
    // of the common quantum). Then only 0·y + z with z subnormal is tiny, and that sum is
    // exactly z (flags 0; under ftz such a z is zero): the rounder needs no denormalization,
    // and this one case passes z through.
    let tiny_free = fr == fz && z_sub && plo0 > zmin && plo0 - wp as i64 - pz as i64 >= zmin;
    let z_pass = (tiny_free && !ftz).then(|| b.wire("f_z_pass", p.zero.and(&uz.sub)));
    // z = {sign, exponent 0, T} with T = the top bits of H = T.0 in the (unnormalized) sum.
    let z_code = if tiny_free {
        let mut parts = vec![];
        if fz.signed {
            parts.push(sign.clone());
        }
        parts.push(Expr::c(0, fz.exp_bits()));
        parts.push(mag.slice(g + f - 1, g + f - pz + 1));
        concat(&parts)
    } else {
        Expr::c(0, fr.k)
    };
    let r_lo = if tiny_free { e_lo.max(zmin) } else { e_lo };
    let rin = RoundIn {
        nan,
        inf,
        zero,
        sign,
        exp: r_exp,
        exp_range: (r_lo, e_hi),
        sig: norm,
        sticky,
        invalid,
        exp_inc: None,
        ftz: false,
        exp_offset: 0,
    };
    let out = round(b, fr, modes, &rin);
    let (mut code, mut flags) = match &z_pass {
        Some(zp) => (
            Expr::mux(zp, &z_code, &out.code),
            Expr::mux(zp, &Expr::c(0, out.flags.width), &out.flags),
        ),
        None => (out.code, out.flags),
    };
    code = b.wire("round_code", code);
    if ftz {
        b.comment(&["ftz: a subnormal result is flushed to zero (sign kept), underflow + inexact"]);
        let subr = b.wire(
            "ftz_sub",
            code.slice(30, 23).eq_c(0).and(&code.slice(22, 0).red_or()),
        );
        let flushed = concat(&[code.bit(31), Expr::c(0, 31)]);
        code = b.wire("ftz_code", Expr::mux(&subr, &flushed, &code));
        flags = concat(&[
            flags.slice(3, 2),
            flags.slice(1, 0).or(&Expr::repl(2, &subr)),
        ]);
    }
    let code = plus_zero_results(b, fr, ieee_zero, code);
    FmaOut { code, flags }
}

/// `x > c` for a constant `c` as a sum of products of `x`'s bits (LUT logic, no carry
/// chain): some bit of `x` is 1 where `c`'s is 0, with the bits above it equal.
fn gt_const(x: &Expr, c: u128) -> Expr {
    let w = x.width;
    if c >= mask(w) {
        return Expr::bit_c(false);
    }
    let terms: Vec<Expr> = (0..w)
        .filter(|&i| (c >> i) & 1 == 0)
        .map(|i| {
            if i + 1 < w {
                x.bit(i).and(&x.slice(w - 1, i + 1).eq_c(c >> (i + 1)))
            } else {
                x.bit(i)
            }
        })
        .collect();
    any(&terms)
}

/// Without `ieee_zero` (P3109 / FNUZ operands) a zero result of a format with −0 becomes +0
/// (golden::fma_ieee_zero).
pub(crate) fn plus_zero_results(
    b: &mut ModuleBuilder,
    fr: &Format,
    ieee_zero: bool,
    code: Expr,
) -> Expr {
    if ieee_zero || !fr.has_neg_zero() {
        return code;
    }
    b.comment(&["P3109 / FNUZ operands: zero results are +0 (no -0 in the extended reals)"]);
    let k = fr.k;
    let z = code.slice(k - 2, 0).eq_c(0);
    b.wire(
        "pz_code",
        concat(&[code.bit(k - 1).and(&z.not()), code.slice(k - 2, 0)]),
    )
}

trait Xnor {
    fn xnor_(&self, o: &Expr) -> Expr;
}
impl Xnor for Expr {
    fn xnor_(&self, o: &Expr) -> Expr {
        self.xor(o).not()
    }
}

/// Validates an `fma` / `mac` request.
pub fn validate(req: &GenRequest) -> Result<(), GenError> {
    let fy = y_format(req);
    for (f, what) in [(req.formats.x, "x"), (fy, "y")] {
        if f.k > 16 {
            return Err(GenError::Unsupported(format!(
                "the {what} operand of {} must be a small format (k <= 16), not {}",
                req.unit.name(),
                f.name()
            )));
        }
        Format::new(f.k, f.p, f.bias, f.signed, f.specials)
            .map_err(|e| GenError::BadRequest(format!("{what} format {}: {e}", f.name())))?;
    }
    let (fz, fr) = (z_format(req), req.formats.r);
    if req.unit != iface::Unit::Fma && (fr != Format::BINARY32 || fz != Format::BINARY32) {
        return Err(GenError::Unsupported(format!(
            "{} accumulates in binary32; result format {} is not supported",
            req.unit.name(),
            fr.name()
        )));
    }
    check_addend_result(req, &fz, &fr)?;
    if req.options.ftz && (fz != Format::BINARY32 || fr != Format::BINARY32) {
        return Err(GenError::Unsupported(format!(
            "--ftz flushes a binary32 addend and result; this {} has addend {} and result {} (subnormals are exact without --ftz)",
            req.unit.name(),
            fz.name(),
            fr.name()
        )));
    }
    if req.random_bits() > 0
        || matches!(
            req.rounding,
            RoundingSel::Fixed(Rounding::Sra(_) | Rounding::Srb(_) | Rounding::Src(_))
        )
    {
        return Err(GenError::Unsupported(format!(
            "{} supports the deterministic rounding modes (rne, rna, rtp, rtn, rtz, rto); stochastic rounding is available for mul and project",
            req.unit.name()
        )));
    }
    Ok(())
}

/// Checks the addend and result formats of an `fma` or `dot`: binary32, binary16, bfloat16
/// or a valid small format; the result of at most 30 bits of precision; a `--nan-code` that
/// fits a NaN-less result.
pub(crate) fn check_addend_result(
    req: &GenRequest,
    fz: &Format,
    fr: &Format,
) -> Result<(), GenError> {
    let ieee = [Format::BINARY32, Format::BINARY16, Format::BFLOAT16];
    for (f, what) in [(fz, "addend"), (fr, "result")] {
        if !ieee.contains(f) {
            Format::new(f.k, f.p, f.bias, f.signed, f.specials).map_err(|e| {
                GenError::BadRequest(format!(
                    "{what} format {}: {e}; use binary32, binary16, bfloat16 or a small format",
                    f.name()
                ))
            })?;
        }
    }
    if !fr.has_nan() && req.options.nonan_code > fr.code_mask() {
        return Err(GenError::BadRequest(format!(
            "--nan-code {:#x} does not fit in the {}-bit format {}",
            req.options.nonan_code,
            fr.k,
            fr.name()
        )));
    }
    Ok(())
}

/// The golden model of a generated `fma` core.
#[derive(Clone, Debug)]
pub struct FmaModel {
    fx: Format,
    fy: Format,
    rounding: RoundingSel,
    saturation: crate::SaturationSel,
    tininess: Tininess,
    signaling_nan: bool,
    /// Exact products of every code pair, prepared once (golden::FmaUnit).
    unit: golden::FmaUnit,
    scale: Option<Format>,
    rto_overflow: golden::RtoOverflow,
    nonan_code: u32,
}

/// The golden FMA options of a request: ftz, addend and result formats.
fn opts(req: &GenRequest) -> FmaOptions {
    FmaOptions {
        ftz: req.options.ftz,
        z: z_format(req),
        r: req.formats.r,
    }
}

impl FmaModel {
    /// The model of the core `req` generates (`req.unit` must be `fma` or `mac`).
    pub fn new(req: &GenRequest) -> Result<FmaModel, GenError> {
        validate(req)?;
        Ok(FmaModel {
            fx: req.formats.x,
            fy: y_format(req),
            rounding: req.rounding,
            saturation: req.saturation,
            tininess: req.options.tininess,
            signaling_nan: req.options.signaling_nan,
            unit: golden::FmaUnit::new(
                req.formats.x,
                y_format(req),
                golden::Spec::ieee(golden::Rounding::Rne),
                opts(req),
            ),
            nonan_code: req.options.nonan_code,
            scale: req.formats.scale,
            rto_overflow: req.options.rto_overflow,
        })
    }

    /// Mask of the x code bits.
    pub fn x_mask(&self) -> u32 {
        self.fx.code_mask()
    }

    /// Mask of the y code bits.
    pub fn y_mask(&self) -> u32 {
        self.fy.code_mask()
    }

    /// `[r_o, flags_o]` for the data inputs `x, y, [sx, sy], z, [rm], [sat]`.
    #[inline]
    pub fn eval(&self, inputs: &[u64]) -> [u64; 2] {
        let mut it = inputs.iter().copied();
        let x = it.next().unwrap_or(0) as u32 & self.fx.code_mask();
        let y = it.next().unwrap_or(0) as u32 & self.fy.code_mask();
        if let Some((sx, sy)) = super::modes::read_scales(&mut it, self.scale) {
            let z = it.next().unwrap_or(0) as u32;
            let (spec, _) = spec_from_ports(
                &mut it,
                self.rounding,
                self.saturation,
                0,
                self.tininess,
                self.nonan_code,
                self.rto_overflow,
            );
            // block scales exclude ftz (crate::validate)
            let (c, fl) = golden::fma_scaled(
                &self.fx,
                x,
                sx,
                &self.fy,
                y,
                sy,
                z,
                &spec,
                FmaOptions {
                    ftz: false,
                    ..*self.unit.options()
                },
            );
            return [c as u64, fl.0 as u64];
        }
        let z = it.next().unwrap_or(0) as u32;
        self.eval_xyz(x, y, z, &mut it)
    }

    /// One FMA with the mode ports (if any) read from `modes`.
    #[inline]
    pub fn eval_xyz(
        &self,
        x: u32,
        y: u32,
        z: u32,
        modes: &mut impl Iterator<Item = u64>,
    ) -> [u64; 2] {
        let (spec, _) = spec_from_ports(
            modes,
            self.rounding,
            self.saturation,
            0,
            self.tininess,
            self.nonan_code,
            self.rto_overflow,
        );
        let (c, mut fl) = self.unit.eval_spec(x, y, z, &spec);
        if self.signaling_nan
            && (golden::is_small_signaling_nan(&self.fx, x)
                || golden::is_small_signaling_nan(&self.fy, y))
        {
            fl.0 |= golden::Flags::INVALID;
        }
        [c as u64, fl.0 as u64]
    }
}

/// Expected `[r_o, flags_o]` of the `fma` core `req` generates for one input vector.
pub fn golden_outputs(req: &GenRequest, inputs: &[u64]) -> Result<Vec<u64>, GenError> {
    Ok(FmaModel::new(req)?.eval(inputs).to_vec())
}

/// Top module name:
/// `fp8_fma_<x>[_x_<y>][_z_<addend>][_to_<result>]_<rounding>_<saturation>[_ftz]_s<N>`
/// (addend and result named when they are not binary32).
pub fn top_name(req: &GenRequest, unit: &str) -> String {
    let fx = req.formats.x;
    let fy = y_format(req);
    let mut name = format!("fp8_{unit}_{}", fx.ident());
    if fy != fx {
        name.push_str(&format!("_x_{}", fy.ident()));
    }
    let (fz, fr) = (z_format(req), req.formats.r);
    if fz != Format::BINARY32 {
        name.push_str(&format!("_z_{}", fz.ident()));
    }
    if fr != Format::BINARY32 {
        name.push_str(&format!("_to_{}", fr.ident()));
    }
    name.push_str(&format!("_{}", mode_tag(req)));
    if req.options.ftz {
        name.push_str("_ftz");
    }
    name.push_str(&super::modes::scale_tag(req));
    name.push_str(&format!("_s{}", req.stages));
    name
}

/// Header lines shared by fma and mac.
pub(crate) fn header_lines(req: &GenRequest) -> Vec<String> {
    let fx = req.formats.x;
    let fy = y_format(req);
    let mut h = vec![
        format!("x:           {}", describe(&fx)),
        format!("y:           {}", describe(&fy)),
    ];
    let (fz, fr) = (z_format(req), req.formats.r);
    if fz == Format::BINARY32 && fr == Format::BINARY32 {
        h.push("z, r:        binary32 (IEEE 754), canonical NaN 0x7fc00000".to_string());
    } else {
        h.push(format!("z:           {}", describe(&fz)));
        h.push(format!("r:           {}", describe(&fr)));
    }
    h.extend(mode_lines(req));
    h.push(format!(
        "Options:     tininess {}; {}; zero results: {}",
        match req.options.tininess {
            Tininess::AfterRounding => "after rounding",
            Tininess::BeforeRounding => "before rounding",
        },
        if req.options.ftz {
            "ftz (subnormal z and results flushed to zero)"
        } else {
            "subnormal z and results exact"
        },
        if fma_ieee_zero(&fx, &fy) {
            "IEEE 754 sign rules"
        } else {
            "always +0 (P3109 / FNUZ operands)"
        }
    ));
    h.push(
        "Datapath:    exact product -> swap -> far: align (sticky), add, normalize <= 2 | near: sub, lzc normalize -> round"
            .to_string(),
    );
    h
}

/// Generates the FMA core.
pub fn generate(req: &GenRequest) -> Result<GeneratedCore, GenError> {
    validate(req)?;
    let fx = req.formats.x;
    let fy = y_format(req);
    let top = top_name(req, "fma");
    let mut b = ModuleBuilder::new();
    let x = b.input("x_i", fx.k);
    let y = b.input("y_i", fy.k);
    let scales = req
        .formats
        .scale
        .map(|f| (f, b.input("sx_i", f.k), b.input("sy_i", f.k)));
    let (fz, fr) = (z_format(req), req.formats.r);
    let z = b.input("z_i", fz.k);
    let modes = mode_ports(&mut b, req);
    let out = fma_datapath(
        &mut b,
        &fx,
        &x,
        &fy,
        &y,
        &z,
        &fz,
        &fr,
        &modes,
        req.options.ftz,
        scales.as_ref().map(|(f, a, c)| (f, a, c)),
    );
    b.output("r_o", out.code);
    b.output("flags_o", out.flags);
    let mut header = vec!["Unit:        fma  r = x * y + z, one rounding".to_string()];
    header.extend(header_lines(req));
    header.push(format!(
        "Outputs:     r_o = {}, flags_o = {{invalid, overflow, underflow, inexact}}",
        fr.name()
    ));
    finish_core(req, b, &top, header)
}

/// The `fma` unit in the registry ([`super::def`]).
#[derive(Debug)]
pub struct Fma;

impl super::ResultFlags for FmaModel {
    #[inline]
    fn result_flags(&self, inputs: &[u64]) -> [u64; 2] {
        FmaModel::eval(self, inputs)
    }
}

impl super::UnitDef for Fma {
    fn validate(&self, req: &GenRequest) -> Result<(), GenError> {
        validate(req)
    }

    fn ports(&self, req: &GenRequest, v: &mut Vec<iface::Port>) {
        use super::{input, output, FLAGS_WIDTH};
        use iface::Role;
        super::operand_ports(req, v);
        super::scale_ports(req, v);
        v.push(input("z_i", z_format(req).k, Role::Z));
        super::mode_ports(req, v, false);
        v.push(output("r_o", req.formats.r.k, Role::Result));
        v.push(output("flags_o", FLAGS_WIDTH, Role::Flags));
    }

    fn generate(&self, req: &GenRequest) -> Result<GeneratedCore, GenError> {
        generate(req)
    }

    fn model(&self, req: &GenRequest) -> Result<super::GoldenModel, GenError> {
        Ok(super::GoldenModel::of(FmaModel::new(req)?))
    }
}
