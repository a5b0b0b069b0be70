//! The reference of `dot`: `r = Σ (x_i·Sx)·(y_i·Sy) + z` written the obvious way (P3109
//! interim report §5.3.2 BlockDotProduct, OCP MX v1.0 §6.2 with E8M0 scales).
//!
//! Every element is decoded to `sig · 2^(qmin + sh)`; each product is one integer multiply of
//! the two significands placed by a plain left shift `x_sh + y_sh` in the product window
//! (LSB `2^(qmin_x + qmin_y)`), negated when its sign is set (`term<i>`), and the N terms
//! added pairwise into the exact two's-complement sum `ref_sum`. The block scales (powers
//! of two) are exponent offsets: without an addend `|ref_sum|` is shifted left by
//! `sx_sh + sy_sh` into one window of absolute positions and the plain rounder of [`super`]
//! rounds it once. With an addend the sum and z are added in a window placed relative to
//! the two operands (the LSB of the lower one, or G = P+2 bits below the LSB of the higher
//! one when the other lies wholly below that and becomes one sticky unit; the exactness
//! argument is at [`relative_sum`]); the result is the rounding input (the exact value's MSB
//! position, its P+1 bits from the MSB down and the sticky OR of the rest, IEEE 754 §4.3),
//! placed back in the absolute window of the same plain rounder. Specials follow P3109 /
//! IEEE 754 §7.2 as the golden model states
//! them (golden/src/dot.rs): a NaN anywhere or `0·∞` in a product gives NaN (`0·∞` and a
//! signaling addend raise invalid), `+∞ + −∞` gives NaN and invalid, an exact zero sum has the
//! common sign of all-zero terms of one sign, else +0 (−0 under rtn).

use super::{bits, decode_operand, k, modes, rounder, Text};
use crate::FormalError;
use golden::Format;
use rtl::GenRequest;

/// `e` (`from` bits) zero-extended to `to` bits.
pub(super) fn zx(e: &str, from: u32, to: u32) -> String {
    if to > from {
        format!("{{{{{}{{1'b0}}}}, {e}}}", to - from)
    } else {
        e.to_string()
    }
}

/// Class wires `<n>_nan`, `<n>_inv`, `<n>_inf`, `<n>_zero`, `<n>_sign` of the product of the
/// values with class wires `a_*` and `b_*` (IEEE 754 §7.2: NaN propagates, `0·∞` is invalid).
pub(super) fn class_product(t: &mut Text, n: &str, a: &str, b: &str) {
    t.wire(&format!("{n}_nanin"), 1, &format!("{a}_nan | {b}_nan"));
    t.wire(
        &format!("{n}_inv"),
        1,
        &format!("~{n}_nanin & (({a}_zero & {b}_inf) | ({a}_inf & {b}_zero))"),
    );
    t.wire(&format!("{n}_nan"), 1, &format!("{n}_nanin | {n}_inv"));
    t.wire(
        &format!("{n}_inf"),
        1,
        &format!("~{n}_nan & ({a}_inf | {b}_inf)"),
    );
    t.wire(
        &format!("{n}_zero"),
        1,
        &format!("~{n}_nan & ~{n}_inf & ({a}_zero | {b}_zero)"),
    );
    t.wire(&format!("{n}_sign"), 1, &format!("{a}_sign ^ {b}_sign"));
}

/// Opens the comment of the rounding input of a dot with an addend, followed by the window's
/// LSB exponent and `)` (read by [`crate::compose`]).
pub const WINDOW_MARK: &str = "Rounding input: value = c_m * 2^(";

/// Geometry of the exact sum of products: `(width of the two's-complement sum, LSB exponent)`.
pub fn sum_geometry(fx: &Format, fy: &Format, n: u32) -> (u32, i32) {
    let span = |f: &Format| {
        let eb = (1u64 << f.exp_bits()) - 1;
        if f.has_subnormals() {
            eb - 1
        } else {
            eb
        }
    };
    let wp = fx.p as u64 + fy.p as u64 + span(fx) + span(fy);
    let grow = 64 - (n as u64).saturating_sub(1).leading_zeros() as u64;
    let qx = fx.emin() - fx.man_bits() as i32;
    let qy = fy.emin() - fy.man_bits() as i32;
    ((wp + grow + 1) as u32, qx + qy)
}

/// Writes the reference body of the `dot` core `req`: wires from the element, scale and addend
/// ports to `r_o` and the rounder's `res_flags`; the exact sum of the products (without
/// scales) is the wire `ref_sum` ([`sum_geometry`]).
pub(super) fn body(t: &mut Text, req: &GenRequest) -> Result<(), FormalError> {
    let fx = req.formats.x;
    let fy = req.formats.y.unwrap_or(fx);
    let fr = req.formats.r;
    let shape = req.options.dot;
    let n = shape.n;
    if req.options.signaling_nan {
        return Err(FormalError::Unsupported(
            "the reference of dot does not implement --signaling-nan; verify such cores by simulation (fp8gen verify)".into(),
        ));
    }
    let mut ox = None;
    let mut oy = None;
    for i in 0..n {
        ox = Some(decode_operand(
            t,
            &fx,
            &format!("x{i}_i"),
            &format!("x{i}"),
        )?);
        oy = Some(decode_operand(
            t,
            &fy,
            &format!("y{i}_i"),
            &format!("y{i}"),
        )?);
    }
    let (ox, oy) = match (ox, oy) {
        (Some(a), Some(b)) => (a, b),
        _ => {
            return Err(FormalError::Unsupported(
                "a dot product of 0 elements".into(),
            ))
        }
    };
    let scales = match req.formats.scale {
        Some(sf) => Some((
            decode_operand(t, &sf, "sx_i", "sx")?,
            decode_operand(t, &sf, "sy_i", "sy")?,
        )),
        None => None,
    };
    let b32 = Format::BINARY32;
    if let Some(fz) = req.formats.z.filter(|f| *f != b32) {
        return Err(FormalError::Unsupported(format!(
            "the dot reference adds a binary32 addend, not {}; verify this core by simulation (fp8gen verify)",
            fz.name()
        )));
    }
    let oz = if shape.addend {
        let oz = decode_operand(t, &b32, "z_i", "z")?;
        t.wire("z_snan", 1, "z_nan & ~z_t[22]");
        Some(oz)
    } else {
        None
    };
    modes(t, req)?;

    // ---- the exact sum of the products on the product grid ----
    let (ws, lp) = sum_geometry(&fx, &fy, n);
    let pp = ox.p + oy.p;
    let shw = bits(ox.sh_max + oy.sh_max);
    t.comment(&format!(
        "Products: sig_x * sig_y (exact) placed by x_sh + y_sh, negated when negative: term<i> ({ws}-bit two's complement, LSB 2^({lp}))"
    ));
    for i in 0..n {
        let (x, y) = (format!("x{i}"), format!("y{i}"));
        if let Some(_s) = &scales {
            class_product(t, &format!("xs{i}"), &x, "sx");
            class_product(t, &format!("ys{i}"), &y, "sy");
            class_product(t, &format!("p{i}"), &format!("xs{i}"), &format!("ys{i}"));
            t.wire(
                &format!("p{i}_anyinv"),
                1,
                &format!("xs{i}_inv | ys{i}_inv | p{i}_inv"),
            );
        } else {
            class_product(t, &format!("p{i}"), &x, &y);
            t.wire(&format!("p{i}_anyinv"), 1, &format!("p{i}_inv"));
        }
        t.wire(
            &format!("p{i}_sig"),
            pp,
            &format!(
                "{{{{{}{{1'b0}}}}, {x}_sig}} * {{{{{}{{1'b0}}}}, {y}_sig}}",
                oy.p, ox.p
            ),
        );
        t.wire(
            &format!("p{i}_sh"),
            shw,
            &format!(
                "{} + {}",
                zx(&format!("{x}_sh"), ox.sh_width, shw),
                zx(&format!("{y}_sh"), oy.sh_width, shw)
            ),
        );
        t.wire(
            &format!("p{i}_live"),
            1,
            &format!("~p{i}_nan & ~p{i}_inf & ~p{i}_zero"),
        );
        t.wire(
            &format!("p{i}_mag"),
            ws,
            &format!(
                "p{i}_live ? ({} << p{i}_sh) : {}",
                zx(&format!("p{i}_sig"), pp, ws),
                k(ws, 0)
            ),
        );
        t.wire(
            &format!("term{i}"),
            ws,
            &format!("p{i}_sign ? ({} - p{i}_mag) : p{i}_mag", k(ws, 0)),
        );
    }
    t.comment("The exact sum: terms added pairwise, level by level (exact integers: any order gives the same sum)");
    let mut level: Vec<String> = (0..n).map(|i| format!("term{i}")).collect();
    let mut l = 0;
    while level.len() > 1 {
        let mut next = Vec::new();
        for (j, pair) in level.chunks(2).enumerate() {
            if let [a, b] = pair {
                let name = format!("t{l}_{j}");
                t.wire(&name, ws, &format!("{a} + {b}"));
                next.push(name);
            } else {
                next.push(pair[0].clone());
            }
        }
        level = next;
        l += 1;
    }
    t.wire("ref_sum", ws, &level[0]);
    t.wire("sum_neg", 1, &format!("ref_sum[{}]", ws - 1));
    t.wire(
        "sum_abs",
        ws,
        &format!("sum_neg ? ({} - ref_sum) : ref_sum", k(ws, 0)),
    );
    // |sum| <= N * max product < 2^(ws - 1)
    t.wire("sum_mag", ws - 1, &format!("sum_abs[{}:0]", ws - 2));

    // ---- the scaled sum and the addend in one window ----
    let mw = ws - 1;
    let (s_lsb, s_shift_max, s_shw) = match &scales {
        Some((a, b)) => (
            lp + a.qmin + b.qmin,
            a.sh_max + b.sh_max,
            bits(a.sh_max + b.sh_max),
        ),
        None => (lp, 0, 1),
    };
    let qr = fr.emin() - fr.man_bits() as i32;
    let mut lw = s_lsb.min(qr);
    if let Some(z) = &oz {
        lw = lw.min(z.qmin);
    }
    let offs = (s_lsb - lw) as u64;
    let mut w = mw as u64 + offs + s_shift_max;
    let offz = oz.as_ref().map(|z| (z.qmin - lw) as u64);
    if let (Some(z), Some(o)) = (&oz, offz) {
        w = w.max(z.p as u64 + z.sh_max + o) + 1;
    }
    let w = w as u32;
    let shift = match &scales {
        Some((a, b)) => format!(
            "{} + {}",
            zx("sx_sh", a.sh_width, s_shw),
            zx("sy_sh", b.sh_width, s_shw)
        ),
        None => k(1, 0),
    };
    t.comment(&format!(
        "Window of the rounder: value * 2^({lw}), {w} bits; {}",
        if oz.is_some() {
            format!(
                "|ref_sum| has its LSB at position sx_sh + sy_sh + {offs}, z_sig at z_sh + {}",
                offz.unwrap_or(0)
            )
        } else {
            format!("|ref_sum| shifted by the scale exponents sx_sh + sy_sh (+ {offs})")
        }
    ));
    t.wire("sc_shift", s_shw, &shift);
    if oz.is_none() {
        let sw = bits(offs + s_shift_max).max(s_shw) + 1;
        t.wire(
            "f_s",
            w,
            &format!(
                "{} << ({} + {})",
                zx("sum_mag", mw, w),
                zx("sc_shift", s_shw, sw),
                k(sw, offs)
            ),
        );
    }
    let n_terms = n + oz.is_some() as u32;
    let mut nans: Vec<String> = (0..n).map(|i| format!("p{i}_nan")).collect();
    let mut invs: Vec<String> = (0..n).map(|i| format!("p{i}_anyinv")).collect();
    let mut pinfs: Vec<String> = (0..n).map(|i| format!("(p{i}_inf & ~p{i}_sign)")).collect();
    let mut ninfs: Vec<String> = (0..n).map(|i| format!("(p{i}_inf & p{i}_sign)")).collect();
    let mut zeros: Vec<String> = (0..n).map(|i| format!("p{i}_zero")).collect();
    let mut zpos: Vec<String> = (0..n)
        .map(|i| format!("(p{i}_zero & ~p{i}_sign)"))
        .collect();
    let mut zneg: Vec<String> = (0..n).map(|i| format!("(p{i}_zero & p{i}_sign)")).collect();
    if let (Some(z), Some(o)) = (&oz, offz) {
        let geo = Relative {
            mw,
            pz: z.p,
            p1: fr.p + 1,
            w,
            offs,
            s_shw,
            offz: o,
            z_shw: z.sh_width,
        };
        relative_sum(t, &geo)?;
        placed_back(t, &fr, w, lw);
        nans.push("z_nan".into());
        invs.push("z_snan".into());
        pinfs.push("(z_inf & ~z_sign)".into());
        ninfs.push("(z_inf & z_sign)".into());
        zeros.push("z_zero".into());
        zpos.push("(z_zero & ~z_sign)".into());
        zneg.push("(z_zero & z_sign)".into());
    } else {
        t.wire("f_m", w, "f_s");
        t.wire("f_msign", 1, "sum_neg");
    }
    t.comment(&format!(
        "Specials: NaN anywhere or 0*Inf -> NaN; +Inf + -Inf -> NaN + invalid; zero sum of {n_terms} terms: their common sign if all are zeros of one sign, else +0 (-0 under rtn)"
    ));
    t.wire("d_anynan", 1, &nans.join(" | "));
    t.wire("d_inv", 1, &invs.join(" | "));
    t.wire("d_pinf", 1, &pinfs.join(" | "));
    t.wire("d_ninf", 1, &ninfs.join(" | "));
    t.wire("d_allzero", 1, &zeros.join(" & "));
    t.wire("d_zpos", 1, &zpos.join(" | "));
    t.wire("d_zneg", 1, &zneg.join(" | "));
    t.wire("a_nan", 1, "d_anynan | d_inv | (d_pinf & d_ninf)");
    t.wire("a_inv", 1, "d_inv | (~d_anynan & d_pinf & d_ninf)");
    t.wire("a_inf", 1, "~a_nan & (d_pinf | d_ninf)");
    if oz.is_some() {
        t.wire("a_zero", 1, "~a_nan & ~a_inf & c_zero");
    } else {
        t.wire(
            "a_zero",
            1,
            &format!("~a_nan & ~a_inf & (f_m == {})", k(w, 0)),
        );
    }
    t.wire(
        "a_sign",
        1,
        "a_inf ? d_ninf : (a_zero ? ((d_allzero & ~(d_zpos & d_zneg)) ? d_zneg : m_rtn) : f_msign)",
    );
    t.wire("a_m", w, if oz.is_some() { "c_m" } else { "f_m" });
    rounder(t, &fr, w, lw, req.options.tininess, req.options.nonan_code)?;
    if golden::fma_ieee_zero(&fx, &fy) || !fr.has_neg_zero() {
        t.line("  assign r_o = res_code;");
    } else {
        t.comment("Elements without -0 (P3109, FNUZ): every zero result is +0");
        t.line(&format!(
            "  assign r_o = (res_code == {}) ? {} : res_code;",
            k(fr.k, fr.sign_bit() as u64),
            k(fr.k, 0)
        ));
    }
    Ok(())
}

/// Geometry of the sum plus the addend in the relative window of [`relative_sum`].
pub(super) struct Relative {
    /// Bits of `sum_mag` (|ref_sum|).
    pub(super) mw: u32,
    /// Bits of `z_sig`.
    pub(super) pz: u32,
    /// P+1 of the result format: the kept bits and the round bit.
    pub(super) p1: u32,
    /// Width of the absolute window of the rounder (positions 0 … w-1 above 2^lw).
    pub(super) w: u32,
    /// Position of the sum's LSB above 2^lw at `sc_shift` = 0.
    pub(super) offs: u64,
    /// Bits of `sc_shift`.
    pub(super) s_shw: u32,
    /// Position of z's LSB above 2^lw at `z_sh` = 0.
    pub(super) offz: u64,
    /// Bits of `z_sh`.
    pub(super) z_shw: u32,
}

/// Writes the exact sum `±|ref_sum|·2^(eS) ± z_sig·2^(ez)` as the rounding input `c_pos`
/// (the MSB's position above 2^lw), `c_win` (the P+1 bits from the MSB down), `c_st` (the OR
/// of the rest), `c_zero` and its sign `f_msign`, in a window placed relative to the two
/// operands (not at absolute positions: the scales move the sum over hundreds of binades).
///
/// Both operands are first normalized (shifted up until the MSB is the top bit: `v_sn`,
/// `mw` bits, `v_zn`, `pz` bits; a plain priority loop finds each MSB), so that how they line
/// up is the difference of their MSB exponents. With `oS`, `oZ` the positions of the two
/// normalized LSBs and `G = P + 2`, the window of `W = mw + pz + G` bits has its LSB at
/// `base`:
///
/// * both nonzero and `oZ + pz <= oS - G` (z lies wholly below 2^(oS - G)): z is replaced by
///   one unit at 2^(oS - G) with z's sign, `base = oS - G`, the sum at bit G; and the same
///   the other way round (`oS + mw <= oZ - G`);
/// * otherwise both are placed exactly: `base` = the lower of the two LSBs (the LSB of the
///   nonzero one when the other is zero: a zero operand is never replaced), the other
///   shifted up by the difference (less than `pz + G`, resp. `mw + G`, so it fits with the
///   carry).
///
/// Why the replacement is exact for the rounding (IEEE 754 §4.3, P3109 v4.0 §4.7.4: a
/// rounding to precision P, also into the subnormal range where fewer bits are kept, reads
/// only the MSB's position, the P+1 bits from the MSB down and whether anything below them
/// is nonzero): let `h` be the larger operand (a nonzero multiple of 2^e, e its LSB
/// exponent), `b = e - G`, `0 < l < 2^b` the smaller. For `h + l` and `h + 2^b` the bits at
/// and above b+1 are h's and each has a nonzero bit at or below b; for `h - l` and `h - 2^b`
/// they are those of `h - 2^(b+1)` and bit b is 1 in both. Both values exceed
/// `2^e - 2^b >= 2^(e-1)`, so their MSB m >= e - 1 and the round bit m - P >= e - 1 - P =
/// b + 1: the P+1 bits read are equal and both sticky bits are 1. A sum with both operands
/// in the exact window is the exact value. The replaced operand has its bits at or above
/// 2^lw, so b > lw and no bit the rounding reads lies below 2^lw: the rounder's window holds
/// the rounding input (positions are kept `mw + pz` above 2^lw while a normalized LSB may lie
/// below it).
pub(super) fn relative_sum(t: &mut Text, g: &Relative) -> Result<(), FormalError> {
    let (mw, pz, p1) = (g.mw, g.pz, g.p1);
    let gd = p1 + 1;
    let ww = mw + pz + gd;
    let pw = bits(g.w as u64 - 1);
    // positions and their sums with the thresholds without overflow
    let ow = bits(g.w as u64 + 2 * (mw + pz + gd) as u64) + 1;
    let aw = bits(ww as u64);
    if g.w <= p1 + 1 {
        return Err(FormalError::Unsupported(format!(
            "the dot reference's {}-bit window is narrower than the rounding input ({p1} bits and a sticky bit)",
            g.w
        )));
    }
    let bc = (mw + pz) as u64;
    t.comment(&format!(
        "Sum + z in a window placed relative to the operands ({ww} bits = {mw} + {pz} + G, G = P+2 = {gd}): both normalized (MSB on top: v_sn, v_zn), v_os, v_oz = the positions of their LSBs above the rounder's window + {bc}; an operand wholly below the other's LSB by G or more is one unit at that LSB - G (its sign kept: a subtraction borrows), else both exact at base = the lower LSB"
    ));
    let (sw, zw) = (bits(mw as u64 - 1), bits(pz as u64 - 1));
    msb_index(t, "v_ms", "sum_mag", mw);
    msb_index(t, "v_mz", "z_sig", pz);
    t.wire(
        "v_sn",
        mw,
        &format!("sum_mag << ({} - v_ms)", k(sw, mw as u64 - 1)),
    );
    t.wire(
        "v_zn",
        pz,
        &format!("z_sig << ({} - v_mz)", k(zw, pz as u64 - 1)),
    );
    t.wire(
        "v_os",
        ow,
        &format!(
            "{} + {} + {}",
            zx("sc_shift", g.s_shw, ow),
            zx("v_ms", sw, ow),
            k(ow, g.offs + bc - (mw as u64 - 1))
        ),
    );
    t.wire(
        "v_oz",
        ow,
        &format!(
            "{} + {} + {}",
            zx("z_sh", g.z_shw, ow),
            zx("v_mz", zw, ow),
            k(ow, g.offz + bc - (pz as u64 - 1))
        ),
    );
    t.wire("v_sl", 1, &format!("sum_mag != {}", k(mw, 0)));
    t.wire("v_zl", 1, "~z_nan & ~z_inf & ~z_zero");
    t.wire(
        "v_fs",
        1,
        &format!("v_sl & v_zl & (v_os >= v_oz + {})", k(ow, (pz + gd) as u64)),
    );
    t.wire(
        "v_fz",
        1,
        &format!("v_sl & v_zl & (v_oz >= v_os + {})", k(ow, (mw + gd) as u64)),
    );
    t.wire(
        "v_base",
        ow,
        &format!(
            "v_fs ? v_os - {g} : (v_fz ? v_oz - {g} : ((v_sl & (~v_zl | (v_os <= v_oz))) ? v_os : v_oz))",
            g = k(ow, gd as u64)
        ),
    );
    t.wire("v_ds", ow, "v_os - v_base");
    t.wire("v_dz", ow, "v_oz - v_base");
    t.wire(
        "v_s",
        ww,
        &format!(
            "~v_sl ? {z} : (v_fz ? {one} : ({} << v_ds[{}:0]))",
            zx("v_sn", mw, ww),
            aw - 1,
            z = k(ww, 0),
            one = k(ww, 1)
        ),
    );
    t.wire(
        "v_z",
        ww,
        &format!(
            "~v_zl ? {z} : (v_fs ? {one} : ({} << v_dz[{}:0]))",
            zx("v_zn", pz, ww),
            aw - 1,
            z = k(ww, 0),
            one = k(ww, 1)
        ),
    );
    t.wire("f_same", 1, "sum_neg == z_sign");
    t.wire("f_sge", 1, "v_s >= v_z");
    t.wire(
        "v_m",
        ww,
        "f_same ? v_s + v_z : (f_sge ? v_s - v_z : v_z - v_s)",
    );
    t.wire(
        "f_msign",
        1,
        "f_same ? sum_neg : (f_sge ? sum_neg : z_sign)",
    );
    t.line(&format!("  reg [{}:0] v_at;", aw - 1));
    t.line("  integer vi;");
    t.line("  always @* begin");
    t.line(&format!("    v_at = {};", k(aw, 0)));
    t.line(&format!("    for (vi = 0; vi < {ww}; vi = vi + 1)"));
    t.line(&format!("      if (v_m[vi]) v_at = vi[{}:0];", aw - 1));
    t.line("  end");
    t.wire("c_zero", 1, &format!("v_m == {}", k(ww, 0)));
    t.wire(
        "v_pos",
        ow,
        &format!("v_base + {} - {}", zx("v_at", aw, ow), k(ow, bc)),
    );
    t.wire("c_pos", pw, &format!("v_pos[{}:0]", pw - 1));
    t.wire(
        "c_norm",
        ww,
        &format!("v_m << ({} - v_at)", k(aw, ww as u64 - 1)),
    );
    t.wire("c_win", p1, &format!("c_norm[{}:{}]", ww - 1, ww - p1));
    t.wire(
        "c_st",
        1,
        &format!("c_norm[{}:0] != {}", ww - p1 - 1, k(ww - p1, 0)),
    );
    Ok(())
}

/// Writes the register `name`: the index of the MSB of the wire `src` (`width` bits; 0 when
/// `src` is 0), a plain priority loop.
fn msb_index(t: &mut Text, name: &str, src: &str, width: u32) {
    let aw = bits(width as u64 - 1);
    t.line(&format!("  reg [{}:0] {name};", aw - 1));
    t.line(&format!("  integer {name}_i;"));
    t.line("  always @* begin");
    t.line(&format!("    {name} = {};", k(aw, 0)));
    t.line(&format!(
        "    for ({name}_i = 0; {name}_i < {width}; {name}_i = {name}_i + 1)"
    ));
    t.line(&format!(
        "      if ({src}[{name}_i]) {name} = {name}_i[{}:0];",
        aw - 1
    ));
    t.line("  end");
}

/// Writes `c_m`: the rounding input (`c_pos`, `c_win`, `c_st` of [`relative_sum`]) placed
/// back in the rounder's window of `w` bits (LSB 2^lw), the sticky bit one place below the
/// round bit. Rounding to precision P (also into the subnormal range, where fewer bits are
/// kept, and at precision P for tininess after rounding) reads only the bits above the round
/// bit, the round bit and whether anything below it is nonzero (IEEE 754 §4.3, P3109 v4.0
/// §4.7.4), so `c_m` rounds as the exact value does. `c_m` is exact as a value in the
/// window: a value whose MSB is below bit P+1 has no bit below bit 0 and its sticky bit is 0.
pub(super) fn placed_back(t: &mut Text, fr: &Format, w: u32, lw: i32) {
    let p1 = fr.p + 1;
    t.comment(&format!(
        "{WINDOW_MARK}{lw}): c_pos = the MSB position of the exact value, c_win = the {p1} bits from the MSB down (P kept + the round bit), c_st = the sticky OR of the rest; placed back in c_m (the sticky bit below the round bit)"
    ));
    t.wire(
        "c_wide",
        w + p1,
        &format!("{} << c_pos", zx("{c_win, c_st}", p1 + 1, w + p1)),
    );
    t.wire("c_m", w, &format!("c_wide[{}:{p1}]", w + p1 - 1));
}
