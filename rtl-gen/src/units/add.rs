//! The `add` unit: `r = x + y` or `r = x − y` with x in format fx, y in fy and the result in
//! fr (any small format, binary16, bfloat16 or binary32): exact sum, ONE rounding through THE
//! ONE rounder ([`crate::blocks::round`]), `flags_o`.
//!
//! Golden meaning: `(r_o, flags_o) = golden::add(fx, x_i, fy, y_i, sub, fr, spec, rnd_i)` with
//! `sub` fixed at generation (`--sub`) or the `sub_i` port (`--sub dyn`), and `spec` = the
//! fixed modes or the modes selected by `rm_i` / `sat_i`. Data input ports, in order: `x_i`,
//! `y_i`, `sub_i` (`--sub dyn`), `rm_i` (dynamic rounding), `sat_i` (dynamic saturation),
//! `rnd_i` (when a stochastic mode is possible); outputs `r_o`, `flags_o`.
//!
//! Datapath ([`generate`]):
//! ```text
//!   x, y ─ unpack (subnormals normalized) ─ significands left-aligned in F = max(Px, Py) bits
//!   swap by magnitude: H = the larger of |x|, |y| (exponent, then significand; a zero
//!        operand never is H), L = the other, d = eH − eL ≥ 0
//!   align: {L, G'b0} >> min(d, F+G), bits shifted out → sticky   (blocks::shift_right_sticky)
//!   add/sub: {0, H, G'b0} ± aligned; a subtraction with sticky borrows one unit, so the exact
//!            value lies strictly between the result and the result + 1 (golden::add_exact);
//!            H ≥ L, so the difference is never negative
//!   leading-zero count + normalize (F + G + 1 bits)               (blocks::lzc_normalize)
//!   THE ONE rounder into fr                                       (blocks::round)
//! ```
//! Window width: a sticky bit appears only when d > G (L's lowest bit starts G places below
//! H's). With G ≥ 2 and d > G, L < 2^(F+G−d) ≤ 2^(F+G−3) against H ≥ 2^(F+G−1), so at most one
//! leading bit cancels and at least F + G − 1 significand bits lie above the sticky bit. The
//! rounder needs Pr + sr_bits + 2 of them (its RoundIn contract) for a single correct rounding
//! in every mode, stochastic ones included; hence G = max(2, Pr + sr_bits + 3 − F). When
//! d ≤ G (in particular d ≤ 1, where a subtraction can cancel many bits) nothing is shifted out
//! and the F + G + 1-bit sum is exact.
//!
//! Specials ([`SPECIALS`], golden::add_any_exact): see the decision table in the generated
//! Verilog.

use super::modes::{mode_lines, mode_ports, mode_tag, spec_from_ports, y_format};
use super::{describe, finish_core, layout};
use crate::ast::{any, concat, sbits, Expr, ModuleBuilder};
use crate::blocks::{lzc_normalize, round, rounding_index, shift_right_sticky, unpack, RoundIn};
use crate::{GenError, GenRequest, GeneratedCore, RoundingSel, SaturationSel};
use golden::{Format, Rounding, Tininess};

/// The operation of an `add` core.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AddOp {
    /// `r = x + y`.
    #[default]
    Add,
    /// `r = x − y` (`--sub`).
    Sub,
    /// `sub_i` selects at run time: 1 = `x − y` (`--sub dyn`).
    Dynamic,
}

impl AddOp {
    /// Parses the value of `--sub`: empty or `fixed` → [`AddOp::Sub`], `dyn` →
    /// [`AddOp::Dynamic`].
    pub fn parse(s: &str) -> Result<AddOp, String> {
        match s.to_ascii_lowercase().as_str() {
            "" | "fixed" | "sub" => Ok(AddOp::Sub),
            "dyn" => Ok(AddOp::Dynamic),
            _ => Err(format!(
                "--sub: unknown value '{}'; give --sub (x - y) or --sub dyn (a sub_i port)",
                iface::shown(s)
            )),
        }
    }

    /// The operation a manifest describes: a `sub_i` port (role `sub`) → [`AddOp::Dynamic`],
    /// `modes.subtract` → [`AddOp::Sub`], else [`AddOp::Add`]; both, or either on another
    /// unit, is an error.
    pub fn from_manifest(m: &crate::manifest::Manifest) -> Result<AddOp, String> {
        use crate::manifest::{Role, Unit};
        let port = m.port(Role::Sub).is_some();
        let fixed = m.modes.subtract;
        if m.unit != Unit::Add && (port || fixed) {
            return Err(format!(
                "manifest of `{}`: a sub port (role sub) and modes.subtract describe add cores, not {}; remove them",
                m.top, m.unit
            ));
        }
        match (port, fixed) {
            (true, true) => Err(format!(
                "manifest of `{}`: modes.subtract and a sub port (role sub) both given; a core with a sub port chooses at run time: drop modes.subtract",
                m.top
            )),
            (true, false) => Ok(AddOp::Dynamic),
            (false, true) => Ok(AddOp::Sub),
            (false, false) => Ok(AddOp::Add),
        }
    }

    /// The canonical option (`--sub`, `--sub dyn`), `None` for an adder.
    pub fn option(self) -> Option<&'static str> {
        match self {
            AddOp::Add => None,
            AddOp::Sub => Some("--sub"),
            AddOp::Dynamic => Some("--sub dyn"),
        }
    }
}

/// The decision table of the special cases (y after negation for `x − y`), as printed in
/// the generated Verilog.
pub const SPECIALS: [&str; 9] = [
    "Specials (golden::add_any_exact; y' = -y when subtracting):",
    "  x        y'        | result",
    "  NaN      any       | NaN (no flag: operand NaNs are quiet, as in mul)",
    "  any      NaN       | NaN",
    "  +-Inf    -+Inf     | NaN + invalid",
    "  +-Inf    finite/same Inf | +-Inf (then saturated by the mode)",
    "  finite   +-Inf     | +-Inf",
    "  +-0      +-0 (same sign) | that zero",
    "  finite   finite, exact sum 0 | +0; -0 when rm = rtn (IEEE 754 6.3)",
];

/// Validates an `add` request (formats, NaN code, options); called by [`crate::validate`].
pub fn validate(req: &GenRequest) -> Result<(), GenError> {
    let fy = y_format(req);
    for (f, what) in [(req.formats.x, "x"), (fy, "y")] {
        if f.k > 16 {
            return Err(GenError::Unsupported(format!(
                "the {what} operand of add must be a small format, binary16 or bfloat16 (k <= 16), not {}",
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
    if req.formats.scale.is_some() {
        return Err(GenError::Unsupported(
            "block scales (--scale-format) apply to project, mul, fma and dot, not to add".into(),
        ));
    }
    Ok(())
}

fn check(f: &Format, what: &str) -> Result<(), GenError> {
    Format::new(f.k, f.p, f.bias, f.signed, f.specials)
        .map(|_| ())
        .map_err(|e| GenError::BadRequest(format!("{what} format {}: {e}", f.name())))
}

/// The golden model of a generated `add` core.
#[derive(Clone, Debug)]
pub struct AddModel {
    fx: Format,
    fy: Format,
    fr: Format,
    op: AddOp,
    rounding: RoundingSel,
    saturation: SaturationSel,
    sr_bits: u32,
    tininess: Tininess,
    nonan_code: u32,
    signaling_nan: bool,
    rto_overflow: golden::RtoOverflow,
}

impl AddModel {
    /// The model of the core `req` generates (`req.unit` must be `add`).
    pub fn new(req: &GenRequest) -> Result<AddModel, GenError> {
        validate(req)?;
        Ok(AddModel {
            fx: req.formats.x,
            fy: y_format(req),
            fr: req.formats.r,
            op: req.options.add_op,
            rounding: req.rounding,
            saturation: req.saturation,
            sr_bits: req.random_bits(),
            tininess: req.options.tininess,
            nonan_code: req.options.nonan_code,
            signaling_nan: req.options.signaling_nan,
            rto_overflow: req.options.rto_overflow,
        })
    }

    /// `[r_o, flags_o]` for the data inputs in port order.
    #[inline]
    pub fn eval(&self, inputs: &[u64]) -> [u64; 2] {
        let mut it = inputs.iter().copied();
        let x = it.next().unwrap_or(0) as u32 & self.fx.code_mask();
        let y = it.next().unwrap_or(0) as u32 & self.fy.code_mask();
        let sub = match self.op {
            AddOp::Add => false,
            AddOp::Sub => true,
            AddOp::Dynamic => it.next().unwrap_or(0) & 1 == 1,
        };
        let (spec, rnd) = spec_from_ports(
            &mut it,
            self.rounding,
            self.saturation,
            self.sr_bits,
            self.tininess,
            self.nonan_code,
            self.rto_overflow,
        );
        let (c, mut fl) = golden::add(&self.fx, x, &self.fy, y, sub, &self.fr, &spec, rnd);
        if self.signaling_nan
            && (golden::is_small_signaling_nan(&self.fx, x)
                || golden::is_small_signaling_nan(&self.fy, y))
        {
            fl.0 |= golden::Flags::INVALID;
        }
        [c as u64, fl.0 as u64]
    }
}

/// Top module name:
/// `fp8_add_<x>[_and_<y>]_to_<r>[_sub|_subdyn]_<rounding>_<saturation>[_tb][_nc<code>]_s<N>`.
pub fn top_name(req: &GenRequest) -> String {
    let fx = req.formats.x;
    let fy = y_format(req);
    let fr = req.formats.r;
    let mut name = format!("fp8_add_{}", fx.ident());
    if fy != fx {
        name.push_str(&format!("_and_{}", fy.ident()));
    }
    name.push_str(&format!("_to_{}", fr.ident()));
    match req.options.add_op {
        AddOp::Add => {}
        AddOp::Sub => name.push_str("_sub"),
        AddOp::Dynamic => name.push_str("_subdyn"),
    }
    name.push_str(&format!("_{}", mode_tag(req)));
    if !fr.has_nan() && req.options.nonan_code != 0 {
        name.push_str(&format!("_nc{:x}", req.options.nonan_code));
    }
    name.push_str(&format!("_s{}", req.stages));
    name
}

/// Guard bits below the left-aligned significands (see the module documentation).
pub fn guard_bits(f_bits: u32, fr: &Format, sr_bits: u32) -> u32 {
    (fr.p + sr_bits + 3).saturating_sub(f_bits).max(2)
}

/// Generates the adder.
pub fn generate(req: &GenRequest) -> Result<GeneratedCore, GenError> {
    validate(req)?;
    let fx = req.formats.x;
    let fy = y_format(req);
    let fr = req.formats.r;
    let top = top_name(req);
    let mut b = ModuleBuilder::new();
    let x = b.input("x_i", fx.k);
    let y = b.input("y_i", fy.k);
    let sub_port = (req.options.add_op == AddOp::Dynamic).then(|| b.input("sub_i", 1));
    let modes = mode_ports(&mut b, req);

    b.comment_owned(vec![format!("Unpack x: {}", describe(&fx)), layout(&fx)]);
    let ux = unpack(&mut b, &fx, &x, true, "x");
    b.comment_owned(vec![format!("Unpack y: {}", describe(&fy)), layout(&fy)]);
    let uy = unpack(&mut b, &fy, &y, true, "y");
    let sy = match (req.options.add_op, &sub_port) {
        (AddOp::Add, _) => uy.sign.clone(),
        (AddOp::Sub, _) => uy.sign.not(),
        (AddOp::Dynamic, Some(s)) => uy.sign.xor(s),
        (AddOp::Dynamic, None) => uy.sign.clone(),
    };
    let sy = if req.options.add_op == AddOp::Add {
        sy
    } else {
        b.wire_note("y_sign_eff", sy, "sign of y' = -y when subtracting")
    };
    b.comment_owned(SPECIALS.iter().map(|s| s.to_string()).collect());
    let inf_inf = b.wire(
        "s_inf_minus_inf",
        ux.inf.and(&uy.inf).and(&ux.sign.xor(&sy)),
    );
    let nan = b.wire(
        "s_is_nan",
        any(&[ux.nan.clone(), uy.nan.clone(), inf_inf.clone()]),
    );
    let inf = b.wire("s_is_inf", ux.inf.or(&uy.inf).and(&nan.not()));
    let inf_sign = Expr::mux(&ux.inf, &ux.sign, &sy);
    let both_zero = b.wire("s_both_zero", ux.zero.and(&uy.zero));

    // ---- swap by magnitude ----
    let (px, py) = (fx.p, fy.p);
    let f = px.max(py);
    let g = guard_bits(f, &fr, req.random_bits());
    let align = |s: &Expr, p: u32| {
        if f > p {
            concat(&[s.clone(), Expr::c(0, f - p)])
        } else {
            s.clone()
        }
    };
    let sx_f = align(&ux.sig, px);
    let sy_f = align(&uy.sig, py);
    let (xlo, xhi) = ux.exp_range;
    let (ylo, yhi) = uy.exp_range;
    let dw = sbits(ylo - xhi, yhi - xlo)
        .max(sbits(xlo - yhi, xhi - ylo))
        .max(ux.exp.width + 1)
        .max(uy.exp.width + 1);
    let dyx = b.wire_note("al_dyx", uy.exp.sext(dw).sub(&ux.exp.sext(dw)), "ey - ex");
    let dxy = b.wire_note("al_dxy", ux.exp.sext(dw).sub(&uy.exp.sext(dw)), "ex - ey");
    b.comment(&[
        "Swap by magnitude: H = the larger of |x|, |y| (exponent, then significand); a zero",
        "operand never is H; H >= L, so H - L is never negative",
    ]);
    let y_exp_big = dyx.eq_c(0).not().and(&dyx.msb().not());
    let y_sig_big = dyx.eq_c(0).and(&sy_f.gt(&sx_f));
    let y_big = b.wire_note(
        "al_y_big",
        ux.zero.or(&uy.zero.not().and(&y_exp_big.or(&y_sig_big))),
        "y is H",
    );
    let h_sig = Expr::mux(&y_big, &sy_f, &sx_f).and(&Expr::repl(f, &both_zero.not()));
    let h_sig = b.wire("al_h_sig", h_sig);
    let l_live = ux.zero.or(&uy.zero).not();
    let l_sig = Expr::mux(&y_big, &sx_f, &sy_f).and(&Expr::repl(f, &l_live));
    let l_sig = b.wire("al_l_sig", l_sig);
    let ew = ux.exp.width.max(uy.exp.width) + 1;
    let e_h = b.wire_note(
        "al_e_h",
        Expr::mux(&y_big, &uy.exp.sext(ew), &ux.exp.sext(ew)),
        "exponent of H's MSB",
    );
    let s_h = b.wire("al_s_h", Expr::mux(&y_big, &sy, &ux.sign));
    let d = b.wire_note(
        "al_d",
        Expr::mux(&y_big, &dyx, &dxy),
        "eH - eL (>= 0 when both are nonzero)",
    );

    // ---- alignment with sticky ----
    let fg = f + g;
    b.comment_owned(vec![format!(
        "Alignment: {{L, {g}'b0}} >> d in {fg} bits (F = {f} significand bits, G = {g} guard bits: \
         Pr + sr_bits + 3 - F, at least 2), bits shifted out -> sticky"
    )]);
    // A negative d (L is zero: H = the only nonzero operand) reads as a large unsigned
    // shift; the clamp then shifts the zero L out entirely.
    let l_g = concat(&[l_sig, Expr::c(0, g)]);
    let (al, sticky) = shift_right_sticky(&mut b, &l_g, &d, (1u128 << dw) - 1, "al_shifted");
    let sticky = b.wire("al_sticky", sticky);

    // ---- add / subtract ----
    let ws = fg + 1;
    let sub = b.wire_note("add_sub", ux.sign.xor(&sy), "effective subtraction");
    let hx = concat(&[Expr::c(0, 1), h_sig, Expr::c(0, g)]);
    let lx = concat(&[Expr::c(0, 1), al]).xor(&Expr::repl(ws, &sub));
    let cin = sub.and(&sticky.not());
    let mag = b.wire_note(
        "add_mag",
        hx.add(&lx).add(&cin.zext(ws)),
        "H + L, or H - L - sticky (H >= L: never negative)",
    );
    let mag_zero = b.wire("add_zero", mag.eq_c(0));

    // ---- normalize ----
    b.comment_owned(vec![format!(
        "Normalize: leading-zero count of the {ws}-bit sum"
    )]);
    let (lz, norm) = lzc_normalize(&mut b, &mag, "nrm");
    let lz = b.wire("nrm_lzc", lz);
    let norm = b.wire("nrm_sig", norm);
    let e_lo = xlo.min(ylo) + 1 - (ws as i64 - 1);
    let e_hi = xhi.max(yhi) + 1;
    let rw = sbits(e_lo, e_hi).max(ew).max(lz.width + 1);
    let r_exp = e_h.sext(rw).add(&Expr::c(1, rw)).sub(&lz.zext(rw));
    let r_exp = b.wire_note("nrm_exp", r_exp, "exponent of the sum's MSB");

    // ---- zero sign (IEEE 754 §6.3, golden::add_exact) ----
    let rtn = modes.rm[rounding_index(Rounding::Rtn)].clone();
    let same_zero = both_zero.and(&ux.sign.xor(&sy).not());
    let zero_sign = Expr::mux(&same_zero, &ux.sign, &rtn);
    let zero = b.wire("s_is_zero", mag_zero.and(&nan.not()).and(&inf.not()));
    let sign = Expr::mux(&inf, &inf_sign, &Expr::mux(&zero, &zero_sign, &s_h));
    let sign = b.wire("s_sign", sign);
    let rin = RoundIn {
        nan,
        inf,
        zero,
        sign,
        exp: r_exp,
        exp_range: (e_lo, e_hi),
        sig: norm,
        sticky,
        invalid: inf_inf,
        exp_inc: None,
        ftz: false,
        exp_offset: 0,
    };
    let out = round(&mut b, &fr, &modes, &rin);
    b.output("r_o", out.code);
    b.output("flags_o", out.flags);

    let op = match req.options.add_op {
        AddOp::Add => "r = x + y",
        AddOp::Sub => "r = x - y (--sub)",
        AddOp::Dynamic => "r = sub_i ? x - y : x + y (--sub dyn)",
    };
    let mut header = vec![
        format!("Unit:        add  {op}, exact sum, one rounding"),
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
        "Specials:    NaN in -> NaN; Inf - Inf -> NaN + invalid; exact zero sum +0, -0 under rtn (golden::add)"
            .to_string(),
    );
    header.push(format!(
        "Datapath:    swap by magnitude, align in {f}+{g} bits with sticky, add/sub, normalize, one rounding"
    ));
    header.push(
        "Outputs:     r_o = code, flags_o = {invalid, overflow, underflow, inexact}".to_string(),
    );
    if sub_port.is_some() {
        header.push("Inputs:      sub_i = 1: x - y, 0: x + y".to_string());
    }
    if req.random_bits() > 0 {
        header.push(format!(
            "Random:      rnd_i = {} random bits for stochastic rounding",
            req.random_bits()
        ));
    }
    finish_core(req, b, &top, header)
}

/// The `add` unit in the registry ([`super::def`]).
#[derive(Debug)]
pub struct Add;

impl super::ResultFlags for AddModel {
    #[inline]
    fn result_flags(&self, inputs: &[u64]) -> [u64; 2] {
        AddModel::eval(self, inputs)
    }
}

impl super::UnitDef for Add {
    fn validate(&self, req: &GenRequest) -> Result<(), GenError> {
        validate(req)
    }

    fn ports(&self, req: &GenRequest, v: &mut Vec<iface::Port>) {
        use super::{input, output, FLAGS_WIDTH};
        use iface::Role;
        let f = &req.formats;
        super::operand_ports(req, v);
        if req.options.add_op == AddOp::Dynamic {
            v.push(input("sub_i", 1, Role::Sub));
        }
        super::mode_ports(req, v, true);
        v.push(output("r_o", f.r.k, Role::Result));
        v.push(output("flags_o", FLAGS_WIDTH, Role::Flags));
    }

    fn generate(&self, req: &GenRequest) -> Result<GeneratedCore, GenError> {
        generate(req)
    }

    fn model(&self, req: &GenRequest) -> Result<super::GoldenModel, GenError> {
        Ok(super::GoldenModel::of(AddModel::new(req)?))
    }
}
