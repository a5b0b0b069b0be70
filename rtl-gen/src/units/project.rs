//! The `project` unit: binary32 (or binary16 / bfloat16) `z_i` → small-float code `r_o` and
//! `flags_o` = {invalid, overflow, underflow, inexact}, through THE ONE rounder.
//!
//! Golden meaning: `(r_o, flags_o) = golden::convert(input, z_i, format, spec, rnd_i)` with
//! `spec` = the fixed modes, or the modes selected by `rm_i` / `sat_i`
//! ([`crate::blocks::rounding_from_port`], [`crate::blocks::saturation_from_port`]).
//! Data input ports, in order: `z_i`, `rm_i` (dynamic rounding), `sat_i` (dynamic
//! saturation), `rnd_i` (when a stochastic mode is possible).

use super::{describe, finish_core, layout};
use crate::ast::{concat, Expr, ModuleBuilder};
use crate::blocks::{guard_bits, round, unpack, RoundIn, Unpacked};
use crate::{GenError, GenRequest, GeneratedCore, RoundingSel, SaturationSel};
use golden::{convert, Format, Rounding, Saturation, Tininess};

/// The golden model of a generated projection core.
#[derive(Clone, Debug)]
pub struct ProjectModel {
    input: Format,
    format: Format,
    rounding: RoundingSel,
    saturation: SaturationSel,
    sr_bits: u32,
    tininess: Tininess,
    nonan_code: u32,
    scale: Option<Format>,
    rto_overflow: golden::RtoOverflow,
}

impl ProjectModel {
    /// The model of the core `req` generates (`req.unit` must be `project`).
    pub fn new(req: &GenRequest) -> Result<ProjectModel, GenError> {
        crate::validate(req)?;
        Ok(ProjectModel {
            input: req.formats.x,
            format: req.formats.r,
            rounding: req.rounding,
            saturation: req.saturation,
            sr_bits: req.random_bits(),
            tininess: req.options.tininess,
            nonan_code: req.options.nonan_code,
            scale: req.formats.scale,
            rto_overflow: req.options.rto_overflow,
        })
    }

    /// Number of data inputs: z, then s, rm, sat, rnd where present.
    pub fn n_inputs(&self) -> usize {
        1 + self.scale.is_some() as usize
            + (self.rounding == RoundingSel::Dynamic) as usize
            + (self.saturation == SaturationSel::Dynamic) as usize
            + (self.sr_bits > 0) as usize
    }

    /// `[r_o, flags_o]` for the data inputs in port order.
    #[inline]
    pub fn eval(&self, inputs: &[u64]) -> [u64; 2] {
        let mut it = inputs.iter().copied();
        let z = it.next().unwrap_or(0) as u32;
        let sc = self.scale.map(|format| golden::Scale {
            format,
            code: it.next().unwrap_or(0) as u32 & format.code_mask(),
        });
        let (spec, rnd) = super::modes::spec_from_ports(
            &mut it,
            self.rounding,
            self.saturation,
            self.sr_bits,
            self.tininess,
            self.nonan_code,
            self.rto_overflow,
        );
        let z = z & self.input.code_mask();
        let (c, fl) = match sc {
            Some(s) => golden::convert_scaled(&self.input, z, s, &self.format, &spec, rnd),
            None => convert(&self.input, z, &self.format, &spec, rnd),
        };
        [c as u64, fl.0 as u64]
    }
}

/// Expected `[r_o, flags_o]` of the core `req` generates for one input vector.
pub fn golden_outputs(req: &GenRequest, inputs: &[u64]) -> Result<Vec<u64>, GenError> {
    Ok(ProjectModel::new(req)?.eval(inputs).to_vec())
}

/// P3109 §5.1.2 ωBlockProject of one element (golden::convert_scaled): the input divided by
/// the power-of-two scale `s` before the rounder.
///
/// ```text
///   NaN input or NaN scale -> NaN     S = 0 -> +0     S = +-Inf -> +-1 (+0 for a zero input)
///   otherwise: exponent e(X) - e(S), sign s(X) ^ s(S), significand unchanged (exact)
/// ```
fn scaled_input(b: &mut ModuleBuilder, u: &Unpacked, sf: &Format, s: &Expr) -> RoundIn {
    b.comment_owned(vec![format!(
        "Block scale (divisor): {}",
        super::describe(sf)
    )]);
    let us = unpack(b, sf, s, true, "sc");
    scaled_by(b, u, &us)
}

/// [`scaled_input`] with the scale already unpacked (`us`), for units whose elements share
/// one scale (the block quantizer).
pub(crate) fn scaled_by(b: &mut ModuleBuilder, u: &Unpacked, us: &Unpacked) -> RoundIn {
    use crate::ast::{concat, sbits};
    let nan = b.wire("q_is_nan", u.nan.or(&us.nan));
    let zero = b.wire("q_is_zero", nan.not().and(&us.zero.or(&u.zero)));
    let one = b.wire("q_is_one", nan.not().and(&zero.not()).and(&us.inf));
    let inf = b.wire(
        "q_is_inf",
        nan.not().and(&zero.not()).and(&one.not()).and(&u.inf),
    );
    let plus_zero = us.zero.or(&us.inf);
    let sign = b.wire(
        "q_sign",
        Expr::mux(
            &zero.and(&plus_zero),
            &Expr::bit_c(false),
            &u.sign.xor(&us.sign),
        ),
    );
    let (lo, hi) = (
        u.exp_range.0 - us.exp_range.1,
        u.exp_range.1 - us.exp_range.0,
    );
    let w = sbits(lo.min(0), hi.max(0))
        .max(u.exp.width + 1)
        .max(us.exp.width + 1)
        + 1;
    let q = u.exp.sext(w).sub(&us.exp.sext(w));
    let exp = b.wire_note(
        "q_exp",
        Expr::mux(&one, &Expr::c(0, w), &q),
        "exponent of the quotient's MSB (0 for +-1)",
    );
    let sw = u.sig.width;
    let sig = Expr::mux(&one, &concat(&[Expr::c(1, 1), Expr::c(0, sw - 1)]), &u.sig);
    let sig = b.wire("q_sig", sig);
    RoundIn {
        nan,
        inf,
        zero,
        sign,
        exp,
        exp_range: (lo.min(0), hi.max(0)),
        sig,
        sticky: Expr::bit_c(false),
        invalid: u.snan.clone(),
        exp_inc: None,
        ftz: false,
        exp_offset: 0,
    }
}

/// Top module name: `fp8_<unit>_<format>_<rounding>_<saturation>[_from_<in>][_tb][_nc<code>]_s<N>`
/// (`<unit>` is `project` or `convert`).
pub fn top_name(req: &GenRequest) -> String {
    let f = req.formats.r;
    let mut name = format!(
        "fp8_{}_{}_{}",
        req.unit.name(),
        f.ident(),
        super::modes::rm_sat_tag(req)
    );
    if req.formats.x != Format::BINARY32 {
        name.push_str(&format!("_from_{}", req.formats.x.ident()));
    }
    name.push_str(super::modes::tininess_tag(req));
    name.push_str(super::modes::rto_overflow_tag(req));
    if !f.has_nan() && req.options.nonan_code != 0 {
        name.push_str(&format!("_nc{:x}", req.options.nonan_code));
    }
    name.push_str(&super::modes::scale_tag(req));
    name.push_str(&format!("_s{}", req.stages));
    name
}

/// Generates the projection core (also the `convert` core: the same datapath from any
/// input format).
pub fn generate(req: &GenRequest) -> Result<GeneratedCore, GenError> {
    let fin = req.formats.x;
    let f = req.formats.r;
    let top = top_name(req);
    let mut b = ModuleBuilder::new();
    let z = b.input("z_i", fin.k);
    let scale = req.formats.scale.map(|f| (f, b.input("s_i", f.k)));
    let modes = super::modes::mode_ports(&mut b, req);
    let n = req.random_bits();
    // Subnormal inputs need exact normalization unless all of them lie so far below the
    // result's smallest quantum that only "nonzero and tiny" matters (see docs/rtl.md).
    let l = (f.p + guard_bits(&modes)) as i64;
    let far =
        scale.is_none() && f.has_subnormals() && (f.emin() as i64) - (fin.emin() as i64 - 1) >= l;
    b.comment_owned(vec![
        format!("Unpack the {} input: {}", fin.name(), layout(&fin)),
        if far {
            format!(
                "{} subnormals lie below 2^{} and only set the sticky bit: no normalization needed",
                fin.name(),
                fin.emin()
            )
        } else {
            format!("{} subnormals are normalized exactly", fin.name())
        },
    ]);
    let u = unpack(&mut b, &fin, &z, !far, "in");
    // Without normalization every finite input's exponent is its biased field minus the
    // bias (a subnormal's field 0 stands for emin - 1): the rounder gets the field and the
    // bias as an offset, so its decisions are tables over the field (no subtraction first).
    let (exp, exp_offset) = if far && fin.bias > 0 {
        let (m, e) = (fin.man_bits(), fin.exp_bits());
        (
            concat(&[Expr::c(0, 1), z.slice(m + e - 1, m)]),
            -(fin.bias as i64),
        )
    } else {
        (u.exp.clone(), 0)
    };
    let x = match &scale {
        None => RoundIn {
            nan: u.nan.clone(),
            inf: u.inf.clone(),
            zero: u.zero.clone(),
            sign: u.sign.clone(),
            exp,
            exp_range: u.exp_range,
            sig: u.sig.clone(),
            sticky: crate::ast::Expr::bit_c(false),
            invalid: u.snan.clone(),
            exp_inc: None,
            ftz: false,
            exp_offset,
        },
        Some((sf, s)) => scaled_input(&mut b, &u, sf, s),
    };
    let out = round(&mut b, &f, &modes, &x);
    b.output("r_o", out.code);
    b.output("flags_o", out.flags);
    let mut header = vec![
        format!(
            "Unit:        {} {} -> {}",
            req.unit.name(),
            fin.name(),
            describe(&f)
        ),
        layout(&f),
    ];
    header.extend(super::modes::mode_lines(req));
    header.extend([
        format!(
            "Options:     tininess {}{}",
            match req.options.tininess {
                Tininess::AfterRounding => "after rounding",
                Tininess::BeforeRounding => "before rounding",
            },
            if f.has_nan() {
                String::new()
            } else {
                format!(
                    "; NaN input -> code {:#x} with invalid (format has no NaN)",
                    req.options.nonan_code
                )
            }
        ),
        "Outputs:     r_o = code, flags_o = {invalid, overflow, underflow, inexact}".to_string(),
    ]);
    if n > 0 {
        header.push(format!(
            "Random:      rnd_i = {n} random bits for stochastic rounding"
        ));
    }
    let _ = (Rounding::Rne, Saturation::SatFinite);
    finish_core(req, b, &top, header)
}

/// The `project` unit in the registry ([`super::def`]).
#[derive(Debug)]
pub struct Project;

impl super::ResultFlags for ProjectModel {
    #[inline]
    fn result_flags(&self, inputs: &[u64]) -> [u64; 2] {
        ProjectModel::eval(self, inputs)
    }
}

/// The checks of a projection's result format (shared with `convert`).
pub(crate) fn validate_result(req: &GenRequest) -> Result<(), GenError> {
    crate::check_format(&req.formats.r, "result")?;
    let r = req.formats.r;
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

/// The ports of a projection `z_i [s_i] [modes] -> r_o flags_o` (shared with `convert`).
pub(crate) fn ports(req: &GenRequest, v: &mut Vec<iface::Port>) {
    use super::{input, output, FLAGS_WIDTH};
    use iface::Role;
    let f = &req.formats;
    v.push(input("z_i", f.x.k, Role::Z));
    if let Some(sf) = f.scale {
        v.push(input("s_i", sf.k, Role::ScaleX));
    }
    super::mode_ports(req, v, true);
    v.push(output("r_o", f.r.k, Role::Result));
    v.push(output("flags_o", FLAGS_WIDTH, Role::Flags));
}

impl super::UnitDef for Project {
    fn validate(&self, req: &GenRequest) -> Result<(), GenError> {
        let x = req.formats.x;
        if ![Format::BINARY32, Format::BINARY16, Format::BFLOAT16].contains(&x) {
            return Err(GenError::Unsupported(format!(
                "project reads binary32, binary16 or bfloat16; input format {} is not supported (convert reads any format)",
                x.name()
            )));
        }
        validate_result(req)
    }

    fn ports(&self, req: &GenRequest, v: &mut Vec<iface::Port>) {
        ports(req, v)
    }

    fn generate(&self, req: &GenRequest) -> Result<GeneratedCore, GenError> {
        generate(req)
    }

    fn model(&self, req: &GenRequest) -> Result<super::GoldenModel, GenError> {
        Ok(super::GoldenModel::of(ProjectModel::new(req)?))
    }
}
