//! The `decode` unit: small-float code `x_i` → class flags, the exact value as binary32
//! (when every value of the format is a binary32 value) and the raw normalized fields.
//!
//! Golden meaning of each output (port order after `x_i`):
//!
//! | port | width | value for code `x` with `d = format.decode(x)` |
//! |---|---|---|
//! | `class_o` | 4 | `{nan, inf, zero, subnormal}` (bit 3..0) of `d.class` (normal = 0) |
//! | `r_o` | 32 | only when [`exact_in_binary32`]: `golden::convert(format, x, binary32, rne, satnone)` (NaN → 0x7FC00000) |
//! | `sign_o` | 1 | `d.sign` (0 for NaN and for unsigned formats) |
//! | `exp_o` | [`exp_width`] | finite nonzero: `⌊log2 |v|⌋` (two's complement); else 0 |
//! | `sig_o` | P | finite nonzero: `d.sig` shifted so its MSB (the hidden 1) is bit P−1; else 0 |
//!
//! so that `|v| = sig_o · 2^(exp_o − (P−1))` exactly, also for formats whose range exceeds
//! binary32 (e.g. P3109 binary10p1se).

use super::{describe, finish_core, layout};
use crate::ast::{concat, sbits, Expr, ModuleBuilder};
use crate::blocks::{const_name, unpack};
use crate::{GenError, GenRequest, GeneratedCore};
use golden::{convert, Class, Format, Rounding, Saturation, Spec};

/// Whether every value of `f` is exactly a binary32 value (then `decode` has `r_o`):
/// P ≤ 24, the smallest quantum `2^(emin − (P−1))` ≥ 2^−149 and `emax` ≤ 127.
pub fn exact_in_binary32(f: &Format) -> bool {
    f.p <= 24 && (f.emin() as i64 - f.man_bits() as i64) >= -149 && f.emax() <= 127
}

/// Range of `⌊log2 |v|⌋` over the finite nonzero values of `f`.
pub fn exp_range(f: &Format) -> (i64, i64) {
    let lo = if f.has_subnormals() && f.man_bits() > 0 {
        f.emin() as i64 - f.man_bits() as i64
    } else {
        f.emin() as i64
    };
    (lo, f.emax() as i64)
}

/// Width of `exp_o`: two's complement bits holding [`exp_range`].
pub fn exp_width(f: &Format) -> u32 {
    let (lo, hi) = exp_range(f);
    sbits(lo, hi)
}

/// Expected data outputs of the decoder of `f` for `code`, in port order:
/// `class_o`, `r_o` (only when [`exact_in_binary32`]), `sign_o`, `exp_o`, `sig_o`.
pub fn golden_outputs(f: &Format, code: u64) -> Vec<u64> {
    let code = (code as u32) & f.code_mask();
    let d = f.decode(code);
    let class = match d.class {
        Class::Nan => 8,
        Class::Inf => 4,
        Class::Zero => 2,
        Class::Subnormal => 1,
        Class::Normal => 0,
    };
    let finite_nz = matches!(d.class, Class::Normal | Class::Subnormal);
    let sign = (d.sign && d.class != Class::Nan) as u64;
    let ew = exp_width(f);
    let (exp, sig) = if finite_nz {
        let bl = 32 - d.sig.leading_zeros();
        let e = d.exp as i64 + bl as i64 - 1;
        let m = if ew >= 64 { u64::MAX } else { (1u64 << ew) - 1 };
        ((e as u64) & m, (d.sig as u64) << (f.p - bl))
    } else {
        (0, 0)
    };
    let mut out = vec![class];
    if exact_in_binary32(f) {
        let spec = Spec::new(Rounding::Rne, Saturation::SatNone);
        out.push(convert(f, code, &Format::BINARY32, &spec, 0).0 as u64);
    }
    out.extend([sign, exp, sig]);
    out
}

/// Generates the decoder.
pub fn generate(req: &GenRequest) -> Result<GeneratedCore, GenError> {
    let f = req.formats.x;
    let top = format!("fp8_decode_{}_s{}", f.ident(), req.stages);
    let p = f.p;
    let mut b = ModuleBuilder::new();
    let x = b.input("x_i", f.k);
    b.comment_owned(vec![format!("Unpack {}", describe(&f)), layout(&f)]);
    let u = unpack(&mut b, &f, &x, true, "x");
    let finite_nz = b.wire("x_finite_nz", u.nan.or(&u.inf).or(&u.zero).not());
    let ew = exp_width(&f);
    let exact = exact_in_binary32(&f);
    let class = concat(&[u.nan.clone(), u.inf.clone(), u.zero.clone(), u.sub.clone()]);
    let sign = u.sign.and(&u.nan.not());
    let sign = b.wire("sign", sign);
    let exp_out = Expr::mux(&finite_nz, &u.exp.slice(ew - 1, 0), &Expr::c(0, ew));
    let sig_out = Expr::mux(&finite_nz, &u.sig, &Expr::c(0, p));
    let r = if exact {
        b.comment(&[
            "binary32 image: [31] sign | [30:23] exponent + 127 | [22:0] fraction",
            "values below 2^-126 become binary32 subnormals (fraction shifted right)",
        ]);
        let (lo, _) = exp_range(&f);
        let iw = u.exp.width.max(10);
        let e = b.wire("b32_e", u.exp.sext(iw));
        let s24 = if p < 24 {
            concat(&[u.sig.clone(), Expr::c(0, 24 - p)])
        } else {
            u.sig.clone()
        };
        let s24 = b.wire("b32_sig", s24);
        let ebiased = e.add(&Expr::named_i(
            &const_name(&Format::BINARY32, "BIAS"),
            127,
            iw,
            "exponent bias of binary32: exponent field = e + bias",
        ));
        let b32_emin = Expr::named_i(
            &const_name(&Format::BINARY32, "EMIN"),
            -126,
            iw,
            "emin of binary32: a binary32 subnormal below it",
        );
        let (ef, frac) = if lo >= -126 {
            let eb = b.wire("b32_ebiased", ebiased);
            (eb.slice(7, 0), s24.slice(22, 0))
        } else {
            let small = b.wire("b32_small", e.slt(&b32_emin));
            let sh = b.wire("b32_shift", b32_emin.sub(&e));
            let shifted = b.wire("b32_den", s24.shr(&sh.slice(4, 0)));
            let eb = b.wire("b32_ebiased", ebiased);
            (
                Expr::mux(&small, &Expr::c(0, 8), &eb.slice(7, 0)),
                Expr::mux(&small, &shifted.slice(22, 0), &s24.slice(22, 0)),
            )
        };
        let fin = concat(&[sign.clone(), ef, frac]);
        let r = Expr::mux(
            &u.nan,
            &Expr::c(0x7FC0_0000, 32),
            &Expr::mux(
                &u.inf,
                &concat(&[sign.clone(), Expr::c(0xFF, 8), Expr::c(0, 23)]),
                &Expr::mux(&u.zero, &concat(&[sign.clone(), Expr::c(0, 31)]), &fin),
            ),
        );
        Some(r)
    } else {
        None
    };
    b.output("class_o", class);
    if let Some(r) = r {
        b.output("r_o", r);
    }
    b.output("sign_o", sign);
    b.output("exp_o", exp_out);
    b.output("sig_o", sig_out);
    let (lo, hi) = exp_range(&f);
    let header = vec![
        format!("Unit:        decode {}", describe(&f)),
        layout(&f),
        format!(
            "Outputs:     class_o = {{nan, inf, zero, subnormal}}; {}sign_o; exp_o = floor(log2|v|) in [{lo}, {hi}] ({ew}-bit two's complement); sig_o = {p}-bit significand, MSB = hidden 1",
            if exact { "r_o = exact binary32; " } else { "no r_o (values not all exact in binary32); " }
        ),
        format!("             |v| = sig_o * 2^(exp_o - {})", p - 1),
    ];
    finish_core(req, b, &top, header)
}

/// The `decode` unit in the registry ([`super::def`]).
#[derive(Debug)]
pub struct Decode;

/// The golden function of a decoder of a format.
#[derive(Debug)]
struct DecodeModel(Format);

impl super::Eval for DecodeModel {
    fn eval(&self, inputs: &[u64]) -> Vec<u64> {
        golden_outputs(&self.0, inputs.first().copied().unwrap_or(0))
    }
}

impl super::UnitDef for Decode {
    fn validate(&self, req: &GenRequest) -> Result<(), GenError> {
        crate::check_format(&req.formats.x, "decoded")?;
        if req.formats.r != Format::BINARY32 {
            return Err(GenError::Unsupported(format!(
                "decode produces binary32 (r_o) plus the exact fields; result format {} is not supported",
                req.formats.r.name()
            )));
        }
        Ok(())
    }

    fn ports(&self, req: &GenRequest, v: &mut Vec<iface::Port>) {
        use super::{input, output, FLAGS_WIDTH};
        use iface::Role;
        let f = &req.formats.x;
        v.push(input("x_i", f.k, Role::X));
        v.push(output("class_o", FLAGS_WIDTH, Role::Class));
        if exact_in_binary32(f) {
            v.push(output("r_o", 32, Role::Result));
        }
        v.push(output("sign_o", 1, Role::Sign));
        v.push(output("exp_o", exp_width(f), Role::Exponent));
        v.push(output("sig_o", f.p, Role::Significand));
    }

    fn generate(&self, req: &GenRequest) -> Result<GeneratedCore, GenError> {
        generate(req)
    }

    fn model(&self, req: &GenRequest) -> Result<super::GoldenModel, GenError> {
        Ok(super::GoldenModel::of(DecodeModel(req.formats.x)))
    }
}
