//! The reference of `add`: both operands placed exactly into one fixed-point window by their
//! exponents, one integer add or subtract of the two window-wide magnitudes (exact), then the
//! plain rounder of [`super`]. Nothing of `rtl-gen`'s adder (swap, alignment shifter, sticky,
//! leading-zero count) is used.

use super::{decode_operand, k, modes, place, rounder, Text};
use crate::FormalError;
use rtl::units::add::AddOp;
use rtl::GenRequest;

/// Writes the reference body of the `add` core `req`: wires from `x_i`, `y_i` (and `sub_i`)
/// to `r_o` and the rounder's `res_flags`.
pub(super) fn body(t: &mut Text, req: &GenRequest) -> Result<(), FormalError> {
    let fx = req.formats.x;
    let fy = req.formats.y.unwrap_or(fx);
    let fr = req.formats.r;
    let ox = decode_operand(t, &fx, "x_i", "x")?;
    let oy = decode_operand(t, &fy, "y_i", "y")?;
    t.comment("y' = -y when subtracting: only the sign changes");
    let ns = match req.options.add_op {
        AddOp::Add => "y_sign",
        AddOp::Sub => "~y_sign",
        AddOp::Dynamic => "y_sign ^ sub_i",
    };
    t.wire("y_nsign", 1, ns);
    modes(t, req)?;
    let qr = fr.emin() - fr.man_bits() as i32;
    let lw = ox.qmin.min(oy.qmin).min(qr);
    let offx = (ox.qmin - lw) as u64;
    let offy = (oy.qmin - lw) as u64;
    let w = ((ox.p as u64 + ox.sh_max + offx).max(oy.p as u64 + oy.sh_max + offy) + 1) as u32;
    t.comment(&format!(
        "Window: value * 2^({lw}), {w} bits: x and y placed exactly, the sum exact"
    ));
    place(t, "f_x", "x", (ox.p, ox.sh_width, ox.sh_max), offx, w);
    place(t, "f_y", "y", (oy.p, oy.sh_width, oy.sh_max), offy, w);
    t.wire("f_same", 1, "x_sign == y_nsign");
    t.wire("f_xge", 1, "f_x >= f_y");
    t.wire(
        "f_m",
        w,
        "f_same ? f_x + f_y : (f_xge ? f_x - f_y : f_y - f_x)",
    );
    t.wire("f_msign", 1, "f_same ? x_sign : (f_xge ? x_sign : y_nsign)");
    t.comment("Specials (IEEE 754 §7.2): NaN operand (quiet, no flag), Inf - Inf");
    t.wire("f_infinf", 1, "x_inf & y_inf & (x_sign != y_nsign)");
    t.wire("a_nan", 1, "x_nan | y_nan | f_infinf");
    t.wire("a_inv", 1, "f_infinf");
    t.wire("a_inf", 1, "~a_nan & (x_inf | y_inf)");
    t.wire(
        "a_zero",
        1,
        &format!("~a_nan & ~a_inf & (f_m == {})", k(w, 0)),
    );
    t.comment(
        "Sign of an exact zero sum (IEEE 754 §6.3): two zeros of equal sign keep it, else -0 only under rtn",
    );
    t.wire(
        "a_sign",
        1,
        "a_inf ? (x_inf ? x_sign : y_nsign) : (a_zero ? ((x_zero & y_zero & f_same) ? x_sign : m_rtn) : f_msign)",
    );
    t.wire("a_m", w, "f_m");
    rounder(t, &fr, w, lw, req.options.tininess, req.options.nonan_code)?;
    t.line("  assign r_o = res_code;");
    Ok(())
}
