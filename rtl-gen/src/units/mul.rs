//! The `mul` unit: `r = x·y` with x in format fx, y in fy and the result in fr (any small
//! format or binary32): exact product (significand multiply, exponent add), ONE rounding
//! through THE ONE rounder ([`crate::blocks::round`]), `flags_o`.
//!
//! Golden meaning: `(r_o, flags_o) = golden::mul(fx, x_i, fy, y_i, fr, spec, rnd_i)` with
//! `spec` = the fixed modes or the modes selected by `rm_i` / `sat_i`
//! ([`crate::blocks::rounding_from_port`], [`crate::blocks::saturation_from_port`]).
//! Data input ports, in order: `x_i`, `y_i`, `rm_i` (dynamic rounding), `sat_i` (dynamic
//! saturation), `rnd_i` (when a stochastic mode is possible); outputs `r_o`, `flags_o`.
//!
//! The exact product block ([`product`]) is shared with `fma` / `mac`.

use super::modes::{
    mode_lines, mode_ports, mode_tag, read_scales, scale_tag, spec_from_ports, y_format,
};
use super::{describe, finish_core, layout};
use crate::ast::{any, concat, sbits, ubits, Expr, ModuleBuilder};
use crate::blocks::{round, unpack, RoundIn};
use crate::{GenError, GenRequest, GeneratedCore, RoundingSel, SaturationSel};
use golden::{mul, mul_ftz, Format, Tininess};

/// Unsigned multiplier `a · c` (width `a.width + c.width`) as a balanced tree of shifted,
/// gated partial products (one per bit of `c`). Constant bits of `c` fold away. With
/// `chains` each sum is kept as its own carry chain ([`ModuleBuilder::wire_keep`]); without,
/// yosys merges the tree into one multi-operand adder of LUT full adders. Measured on ECP5
/// (E4M3): chains win in the dot lanes; merged wins in the full mul and the fma, and in the
/// flush-to-zero mul chains save cells (94 against 122 at 1 stage) but lose clock (146 against
/// 177 MHz, below FloPoCo's 154), so every mul keeps the merged tree.
pub fn umul(b: &mut ModuleBuilder, a: &Expr, c: &Expr, name: &str, chains: bool) -> Expr {
    let w = a.width + c.width;
    let mut terms: Vec<Expr> = Vec::new();
    for i in 0..c.width {
        let bit = c.bit(i);
        if bit.is_const(0) {
            continue;
        }
        let gated = if bit.is_const(1) {
            a.clone()
        } else {
            a.and(&Expr::repl(a.width, &bit))
        };
        let hi = w - a.width - i;
        let mut parts = Vec::new();
        if hi > 0 {
            parts.push(Expr::c(0, hi));
        }
        parts.push(gated);
        if i > 0 {
            parts.push(Expr::c(0, i));
        }
        terms.push(concat(&parts));
    }
    if terms.is_empty() {
        return Expr::c(0, w);
    }
    let mut level = 0;
    while terms.len() > 1 {
        let mut next = Vec::new();
        for (j, pair) in terms.chunks(2).enumerate() {
            if pair.len() == 2 {
                let pp = format!("{name}_pp{level}_{j}");
                let sum = pair[0].add(&pair[1]);
                next.push(if chains {
                    b.wire_keep(&pp, sum)
                } else {
                    b.wire(&pp, sum)
                });
            } else {
                next.push(pair[0].clone());
            }
        }
        terms = next;
        level += 1;
    }
    b.wire(name, terms.remove(0))
}

/// The exact product of two small-float codes, in the rounder's form.
#[derive(Clone, Debug)]
pub struct Product {
    /// NaN operand or 0·∞.
    pub nan: Expr,
    /// 0·∞ (invalid operation; NaN operands excluded, as in `golden::mul_exact`).
    pub invalid: Expr,
    /// ±∞ (and no NaN, no 0·∞).
    pub inf: Expr,
    /// ±0 (and no NaN, no ∞).
    pub zero: Expr,
    /// Sign `sx ^ sy`.
    pub sign: Expr,
    /// Exponent of the MSB of `sig` (two's complement).
    pub exp: Expr,
    /// Range of `exp`.
    pub exp_range: (i64, i64),
    /// Normalized product significand (`Px + Py` bits, MSB = 1 for finite nonzero).
    pub sig: Expr,
    /// `exp` in parts for the rounder's exponent tables ([`crate::blocks::RoundIn::exp_inc`],
    /// [`crate::blocks::RoundIn::exp_offset`]); `None` for scaled products.
    pub exp_parts: Option<ExpParts>,
}

/// A product's exponent as `sum + offset + carry`: the operand exponents' sum (or, without
/// subnormal operands, their biased fields' sum with `offset = −(bias_x + bias_y)`) and the
/// multiply's normalization bit.
#[derive(Clone, Debug)]
pub struct ExpParts {
    /// Sum of the operand exponents (two's complement; biased fields: nonnegative).
    pub sum: Expr,
    /// The normalization bit (the product significand's top bit).
    pub carry: Expr,
    /// Added to `sum`.
    pub offset: i64,
}

/// Unpacks `x` (format `fx`) and `y` (format `fy`) and forms their exact product:
/// subnormals normalized exactly, `Px × Py` significand multiply, one-bit normalize,
/// exponent add. Specials follow `golden::mul_exact`.
///
/// `ftz` (`mul --ftz`): subnormal operands are ±0 (`golden::mul_ftz`): they are not
/// normalized (no leading-zero count), only detected and folded into the zero flags.
pub fn product(
    b: &mut ModuleBuilder,
    fx: &Format,
    x: &Expr,
    fy: &Format,
    y: &Expr,
    ftz: bool,
) -> Product {
    product_scaled(b, fx, x, fy, y, ftz, None)
}

/// [`product`] of scaled operands `(x·Sx)·(y·Sy)` (golden::mul_scaled) when `scales` gives
/// the power-of-two scale format and the `sx`, `sy` codes: the classes follow each factor's
/// product (`0·∞` anywhere is invalid), the scale exponents add to the product's.
pub fn product_scaled(
    b: &mut ModuleBuilder,
    fx: &Format,
    x: &Expr,
    fy: &Format,
    y: &Expr,
    ftz: bool,
    scales: Option<(&Format, &Expr, &Expr)>,
) -> Product {
    product_impl(b, fx, x, fy, y, ftz, scales, false, false)
}

/// Whether [`product_fields`] builds the product of operands in format `f`: subnormals (they
/// are what it saves on), a trailing significand of 1 to [`FIELD_TABLE_MAN_BITS`] bits (the
/// subnormal exponent table has `2^man` entries) and a positive bias.
fn fields_apply(f: &Format) -> bool {
    f.has_subnormals() && (1..=FIELD_TABLE_MAN_BITS).contains(&f.man_bits()) && f.bias > 0
}

/// Largest trailing significand for which `mul` takes a subnormal's exponent from a table.
const FIELD_TABLE_MAN_BITS: u32 = 4;

/// Widest exponent field for which [`product_fields`] hands the rounder the biased sum. The
/// rounder's exponent tables are then functions of the biased sum rather than of the
/// exponent: measured on ECP5 (yosys + nextpnr, 0 stages), E4M3 201 -> 182 cells, but E5M2
/// 173 -> 247 (its 8-bit table selector maps worse with the thresholds moved by the bias).
const BIASED_EXP_BITS: u32 = 4;

/// [`product`] for the `mul` unit with subnormal operands (not `--ftz`): the same function,
/// built with fewer cells. The significand's hidden bit is the constant 1 (a subnormal
/// operand is normalized, so its MSB is 1 too; zeros, NaN and infinities are decided by the
/// flags, never by the significand), which folds one row of the multiplier's gates; and, for
/// exponent fields of at most `BIASED_EXP_BITS` (4) bits, the exponent goes to the rounder as
/// the sum of the operands' **biased** exponents with the biases as an offset
/// ([`ExpParts::offset`]): `eb = exponent field` for a normal operand and `eb = −lz` for a
/// subnormal one with `lz` leading zeros in its trailing significand (its MSB weighs
/// `2^(emin − 1 − lz) = 2^(−lz − bias)`; a table of the trailing field), so no operand
/// subtracts its bias and one adder forms the sum. Other formats, and `ftz`, take
/// [`product`].
pub fn product_fields(
    b: &mut ModuleBuilder,
    fx: &Format,
    x: &Expr,
    fy: &Format,
    y: &Expr,
    ftz: bool,
) -> Product {
    let fields = !ftz && fields_apply(fx) && fields_apply(fy);
    let biased = fields && fx.exp_bits() <= BIASED_EXP_BITS && fy.exp_bits() <= BIASED_EXP_BITS;
    product_impl(b, fx, x, fy, y, ftz, None, fields, biased)
}

/// The biased exponent of an operand with subnormals (see [`product_fields`]):
/// `field == 0 ? −lz(trailing) : field` in two's complement, and its range.
fn biased_exp(b: &mut ModuleBuilder, f: &Format, code: &Expr, prefix: &str) -> (Expr, (i64, i64)) {
    let (man, eb) = (f.man_bits(), f.exp_bits());
    let field = code.slice(man + eb - 1, man);
    let t = code.slice(man - 1, 0);
    let (lo, hi) = (-(man as i64 - 1), (1i64 << eb) - 1);
    let w = sbits(lo, hi);
    // −(leading zeros) for each nonzero trailing significand with some; 0 for the others
    // (and for 0: a zero operand's exponent is not used)
    let arms: Vec<(u128, Expr)> = (1u128..1 << man)
        .filter_map(|m| {
            let lz = (man - 1 - (127 - m.leading_zeros())) as i64;
            (lz != 0).then(|| (m, Expr::c((-lz) as u128 & crate::ast::mask(w), w)))
        })
        .collect();
    let sub_eb = b.wire_note(
        &format!("{prefix}_sub_eb"),
        Expr::case(&t, arms, &Expr::c(0, w)),
        "subnormal: biased exponent of the normalized MSB = -(leading zeros of the trailing significand)",
    );
    let eb_w = Expr::mux(&field.eq_c(0), &sub_eb, &field.zext(w));
    let eb_w = b.wire_note(
        &format!("{prefix}_eb"),
        eb_w,
        "biased exponent of the MSB (two's complement): the field, or the subnormal's",
    );
    (eb_w, (lo, hi))
}

#[allow(clippy::too_many_arguments)]
fn product_impl(
    b: &mut ModuleBuilder,
    fx: &Format,
    x: &Expr,
    fy: &Format,
    y: &Expr,
    ftz: bool,
    scales: Option<(&Format, &Expr, &Expr)>,
    fields: bool,
    biased_fields: bool,
) -> Product {
    b.comment_owned(vec![format!("Unpack x: {}", describe(fx)), layout(fx)]);
    let mut ux = unpack(b, fx, x, !ftz, "x");
    b.comment_owned(vec![format!("Unpack y: {}", describe(fy)), layout(fy)]);
    let mut uy = unpack(b, fy, y, !ftz, "y");
    if fields {
        // the hidden bit of every finite nonzero significand is 1 (normalized subnormals too)
        for (u, f, n) in [(&mut ux, fx, "x"), (&mut uy, fy, "y")] {
            let m = f.man_bits();
            u.sig = b.wire_note(
                &format!("{n}_sig1"),
                concat(&[Expr::c(1, 1), u.sig.slice(m - 1, 0)]),
                "significand with the hidden bit 1 (zero operands are flagged)",
            );
        }
    }
    if ftz {
        b.comment(&["ftz: a subnormal operand is +-0 (sign kept, no flag)"]);
        ux.zero = b.wire("x_zero_ftz", ux.zero.or(&ux.sub));
        uy.zero = b.wire("y_zero_ftz", uy.zero.or(&uy.sub));
    }
    let sc = scales.map(|(f, sx, sy)| {
        b.comment_owned(vec![format!("Unpack the scales: {}", describe(f))]);
        (unpack(b, f, sx, true, "sx"), unpack(b, f, sy, true, "sy"))
    });
    b.comment(&[
        "Exact product: significand multiply, one-bit normalize, exponent add",
        "NaN operand -> NaN; 0 * Inf -> NaN + invalid; sign = sx ^ sy",
    ]);
    let (nan, inv, inf, zero, sign) = match &sc {
        None => {
            let any_nan = b.wire("p_any_nan", ux.nan.or(&uy.nan));
            let inv = any(&[ux.inf.and(&uy.zero), ux.zero.and(&uy.inf)]).and(&any_nan.not());
            let inv = b.wire("p_invalid", inv);
            let nan = b.wire("p_is_nan", any_nan.or(&inv));
            let inf = b.wire("p_is_inf", ux.inf.or(&uy.inf).and(&nan.not()));
            let zero = b.wire(
                "p_is_zero",
                ux.zero.or(&uy.zero).and(&nan.not()).and(&inf.not()),
            );
            let sign = b.wire("p_sign", ux.sign.xor(&uy.sign));
            (nan, inv, inf, zero, sign)
        }
        Some((usx, usy)) => {
            use crate::blocks::{class_mul, class_of};
            b.comment(&[
                "Scaled: (x * Sx) * (y * Sy), each product's specials as golden::mul_exact",
            ]);
            let a = class_mul(&class_of(&ux), &class_of(usx));
            let c = class_mul(&class_of(&uy), &class_of(usy));
            let p = class_mul(&a, &c);
            let inv = b.wire("p_invalid", p.invalid);
            let nan = b.wire("p_is_nan", p.nan);
            let inf = b.wire("p_is_inf", p.inf);
            let zero = b.wire("p_is_zero", p.zero);
            let sign = b.wire(
                "p_sign",
                ux.sign.xor(&uy.sign).xor(&usx.sign).xor(&usy.sign),
            );
            (nan, inv, inf, zero, sign)
        }
    };
    let raw = umul(b, &ux.sig, &uy.sig, "p_raw", false);
    let w = raw.width;
    let top = raw.msb();
    let sig = Expr::mux(&top, &raw, &concat(&[raw.slice(w - 2, 0), Expr::c(0, 1)]));
    let sig = b.wire_note("p_sig", sig, "normalized product significand");
    let lo = ux.exp_range.0 + uy.exp_range.0;
    let hi = ux.exp_range.1 + uy.exp_range.1 + 1;
    let ew = sbits(lo, hi).max(ux.exp.width + 1).max(uy.exp.width + 1);
    // Both candidate exponents are formed in parallel with the multiply; the product's top
    // bit only selects.
    let esum = b.wire("p_esum", ux.exp.sext(ew).add(&uy.exp.sext(ew)));
    let exp = Expr::mux(&top, &esum.add(&Expr::c(1, ew)), &esum);
    let exp = b.wire_note("p_exp", exp, "exponent of the product MSB");
    // Without subnormal operands (ftz), a finite nonzero operand's exponent is its biased
    // field minus the bias: the rounder gets the sum of the fields and the biases as an
    // offset, one adder instead of three.
    let biased = ftz && sc.is_none() && fx.bias > 0 && fy.bias > 0;
    let exp_parts = sc.is_none().then(|| {
        if biased_fields {
            let (ex, rx) = biased_exp(b, fx, x, "x");
            let (ey, ry) = biased_exp(b, fy, y, "y");
            let bw = sbits(rx.0 + ry.0, rx.1 + ry.1);
            let bsum = b.wire_note(
                "p_ebsum",
                ex.sext(bw).add(&ey.sext(bw)),
                "sum of the biased exponents (two's complement)",
            );
            ExpParts {
                sum: bsum,
                carry: top.clone(),
                offset: -(fx.bias as i64 + fy.bias as i64),
            }
        } else if biased {
            let (ex, ey) = (fx.exp_bits(), fy.exp_bits());
            let bw = ubits(((1u128 << ex) - 1) + ((1u128 << ey) - 1)) + 1;
            let field = |c: &Expr, f: &Format, w: u32| c.slice(f.man_bits() + w - 1, f.man_bits());
            let bsum = field(x, fx, ex).zext(bw).add(&field(y, fy, ey).zext(bw));
            let bsum = b.wire_note("p_ebsum", bsum, "sum of the biased exponent fields");
            ExpParts {
                sum: bsum,
                carry: top.clone(),
                offset: -(fx.bias as i64 + fy.bias as i64),
            }
        } else {
            ExpParts {
                sum: esum.clone(),
                carry: top.clone(),
                offset: 0,
            }
        }
    });
    let (exp, lo, hi) = match &sc {
        None => (exp, lo, hi),
        Some((usx, usy)) => {
            let (slo, shi) = (
                lo + usx.exp_range.0 + usy.exp_range.0,
                hi + usx.exp_range.1 + usy.exp_range.1,
            );
            let w = sbits(slo, shi)
                .max(ew + 1)
                .max(usx.exp.width + 1)
                .max(usy.exp.width + 1)
                + 1;
            let e = exp.sext(w).add(&usx.exp.sext(w)).add(&usy.exp.sext(w));
            (
                b.wire_note("p_exp_scaled", e, "plus the scale exponents"),
                slo,
                shi,
            )
        }
    };
    Product {
        nan,
        invalid: inv,
        inf,
        zero,
        sign,
        exp,
        exp_range: (lo, hi),
        sig,
        exp_parts,
    }
}

/// Validates a `mul` request (formats, NaN code); called by [`crate::validate`].
pub fn validate(req: &GenRequest) -> Result<(), GenError> {
    let fy = y_format(req);
    for (f, what) in [(req.formats.x, "x"), (fy, "y")] {
        if f.k > 16 {
            return Err(GenError::Unsupported(format!(
                "the {what} operand of mul must be a small format (k <= 16), not {}",
                f.name()
            )));
        }
        check(&f, what)?;
    }
    let r = req.formats.r;
    if r != Format::BINARY32 {
        check(&r, "result")?;
    }
    if !r.has_nan() && req.options.nonan_code > r.code_mask() {
        return Err(GenError::BadRequest(format!(
            "--nan-code {:#x} does not fit in the {}-bit format {}",
            req.options.nonan_code,
            r.k,
            r.name()
        )));
    }
    Ok(())
}

fn check(f: &Format, what: &str) -> Result<(), GenError> {
    Format::new(f.k, f.p, f.bias, f.signed, f.specials)
        .map(|_| ())
        .map_err(|e| GenError::BadRequest(format!("{what} format {}: {e}", f.name())))
}

/// The golden model of a generated `mul` core.
#[derive(Clone, Debug)]
pub struct MulModel {
    fx: Format,
    fy: Format,
    fr: Format,
    rounding: RoundingSel,
    saturation: SaturationSel,
    sr_bits: u32,
    tininess: Tininess,
    nonan_code: u32,
    signaling_nan: bool,
    ftz: bool,
    scale: Option<Format>,
    rto_overflow: golden::RtoOverflow,
}

impl MulModel {
    /// The model of the core `req` generates (`req.unit` must be `mul`).
    pub fn new(req: &GenRequest) -> Result<MulModel, GenError> {
        validate(req)?;
        Ok(MulModel {
            fx: req.formats.x,
            fy: y_format(req),
            fr: req.formats.r,
            rounding: req.rounding,
            saturation: req.saturation,
            sr_bits: req.random_bits(),
            tininess: req.options.tininess,
            nonan_code: req.options.nonan_code,
            signaling_nan: req.options.signaling_nan,
            ftz: req.options.ftz,
            scale: req.formats.scale,
            rto_overflow: req.options.rto_overflow,
        })
    }

    /// Number of data inputs: x, y, then sx, sy, rm, sat, rnd where present.
    pub fn n_inputs(&self) -> usize {
        2 + 2 * self.scale.is_some() as usize
            + (self.rounding == RoundingSel::Dynamic) as usize
            + (self.saturation == SaturationSel::Dynamic) as usize
            + (self.sr_bits > 0) as usize
    }

    /// `[r_o, flags_o]` for the data inputs in port order.
    #[inline]
    pub fn eval(&self, inputs: &[u64]) -> [u64; 2] {
        let mut it = inputs.iter().copied();
        let x = it.next().unwrap_or(0) as u32 & self.fx.code_mask();
        let y = it.next().unwrap_or(0) as u32 & self.fy.code_mask();
        let scales = read_scales(&mut it, self.scale);
        let (spec, rnd) = spec_from_ports(
            &mut it,
            self.rounding,
            self.saturation,
            self.sr_bits,
            self.tininess,
            self.nonan_code,
            self.rto_overflow,
        );
        let (c, mut fl) = if let Some((sx, sy)) = scales {
            golden::mul_scaled(&self.fx, x, sx, &self.fy, y, sy, &self.fr, &spec, rnd)
        } else if self.ftz {
            mul_ftz(&self.fx, x, &self.fy, y, &self.fr, &spec, rnd)
        } else {
            mul(&self.fx, x, &self.fy, y, &self.fr, &spec, rnd)
        };
        if self.signaling_nan
            && (golden::is_small_signaling_nan(&self.fx, x)
                || golden::is_small_signaling_nan(&self.fy, y))
        {
            fl.0 |= golden::Flags::INVALID;
        }
        [c as u64, fl.0 as u64]
    }
}

/// Expected `[r_o, flags_o]` of the `mul` core `req` generates for one input vector.
pub fn golden_outputs(req: &GenRequest, inputs: &[u64]) -> Result<Vec<u64>, GenError> {
    Ok(MulModel::new(req)?.eval(inputs).to_vec())
}

/// Top module name: `fp8_mul_<x>[_x_<y>]_to_<r>_<rounding>_<saturation>[_tb][_nc<code>][_ftz][_nf]_s<N>`.
pub fn top_name(req: &GenRequest) -> String {
    let fx = req.formats.x;
    let fy = y_format(req);
    let fr = req.formats.r;
    let mut name = format!("fp8_mul_{}", fx.ident());
    if fy != fx {
        name.push_str(&format!("_x_{}", fy.ident()));
    }
    name.push_str(&format!("_to_{}_{}", fr.ident(), mode_tag(req)));
    if !fr.has_nan() && req.options.nonan_code != 0 {
        name.push_str(&format!("_nc{:x}", req.options.nonan_code));
    }
    if req.options.ftz {
        name.push_str("_ftz");
    }
    if req.options.no_flags {
        name.push_str("_nf");
    }
    name.push_str(&scale_tag(req));
    name.push_str(&format!("_s{}", req.stages));
    name
}

/// Generates the multiplier.
pub fn generate(req: &GenRequest) -> Result<GeneratedCore, GenError> {
    validate(req)?;
    let fx = req.formats.x;
    let fy = y_format(req);
    let fr = req.formats.r;
    let top = top_name(req);
    let mut b = ModuleBuilder::new();
    let x = b.input("x_i", fx.k);
    let y = b.input("y_i", fy.k);
    let scales = req
        .formats
        .scale
        .map(|f| (f, b.input("sx_i", f.k), b.input("sy_i", f.k)));
    let modes = mode_ports(&mut b, req);
    let ftz = req.options.ftz;
    let p = match &scales {
        None => product_fields(&mut b, &fx, &x, &fy, &y, ftz),
        Some((f, a, c)) => product_scaled(&mut b, &fx, &x, &fy, &y, ftz, Some((f, a, c))),
    };
    // The exponent goes to the rounder as the operands' sum plus the normalization bit.
    let (exp, exp_inc, exp_offset) = match &p.exp_parts {
        Some(e) => (e.sum.clone(), Some(e.carry.clone()), e.offset),
        None => (p.exp.clone(), None, 0),
    };
    let rin = RoundIn {
        nan: p.nan.clone(),
        inf: p.inf.clone(),
        zero: p.zero.clone(),
        sign: p.sign.clone(),
        exp,
        exp_range: p.exp_range,
        sig: p.sig.clone(),
        sticky: Expr::bit_c(false),
        invalid: p.invalid.clone(),
        exp_inc,
        ftz,
        exp_offset,
    };
    let out = round(&mut b, &fr, &modes, &rin);
    b.output("r_o", out.code);
    if !req.options.no_flags {
        b.output("flags_o", out.flags);
    }
    let mut header = vec![
        "Unit:        mul  r = x * y, exact product, one rounding".to_string(),
        format!("x:           {}", describe(&fx)),
        format!("y:           {}", describe(&fy)),
        format!("r:           {}", describe(&fr)),
        layout(&fr),
    ];
    header.extend(mode_lines(req));
    header.push(format!(
        "Options:     tininess {}{}",
        match req.options.tininess {
            Tininess::AfterRounding => "after rounding",
            Tininess::BeforeRounding => "before rounding",
        },
        if fr.has_nan() {
            String::new()
        } else {
            format!(
                "; NaN result -> code {:#x} with invalid (format has no NaN)",
                req.options.nonan_code
            )
        }
    ));
    header.push(
        "Specials:    NaN in -> NaN; 0*Inf -> NaN + invalid; sign = sx ^ sy (golden::mul)"
            .to_string(),
    );
    if ftz {
        header.push(
            "FTZ:         subnormal x, y -> +-0 (no flag); subnormal result -> zero with underflow + inexact (golden::mul_ftz)"
                .to_string(),
        );
    }
    header.push(if req.options.no_flags {
        "Outputs:     r_o = code (--no-flags: no flags_o port)".to_string()
    } else {
        "Outputs:     r_o = code, flags_o = {invalid, overflow, underflow, inexact}".to_string()
    });
    if req.random_bits() > 0 {
        header.push(format!(
            "Random:      rnd_i = {} random bits for stochastic rounding",
            req.random_bits()
        ));
    }
    finish_core(req, b, &top, header)
}

/// The `mul` unit in the registry ([`super::def`]).
#[derive(Debug)]
pub struct Mul;

impl super::ResultFlags for MulModel {
    #[inline]
    fn result_flags(&self, inputs: &[u64]) -> [u64; 2] {
        MulModel::eval(self, inputs)
    }
}

impl super::UnitDef for Mul {
    fn validate(&self, req: &GenRequest) -> Result<(), GenError> {
        validate(req)
    }

    fn ports(&self, req: &GenRequest, v: &mut Vec<iface::Port>) {
        use super::{output, FLAGS_WIDTH};
        use iface::Role;
        let f = &req.formats;
        super::operand_ports(req, v);
        super::scale_ports(req, v);
        super::mode_ports(req, v, true);
        v.push(output("r_o", f.r.k, Role::Result));
        if !req.options.no_flags {
            v.push(output("flags_o", FLAGS_WIDTH, Role::Flags));
        }
    }

    fn generate(&self, req: &GenRequest) -> Result<GeneratedCore, GenError> {
        generate(req)
    }

    fn model(&self, req: &GenRequest) -> Result<super::GoldenModel, GenError> {
        Ok(super::GoldenModel::of(MulModel::new(req)?))
    }
}
