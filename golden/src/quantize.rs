//! The MX block quantizer: N elements of an input format (binary32, bfloat16, binary16)
//! → one shared power-of-two scale computed from the block's largest magnitude, and N
//! elements of a small format, each the input divided by the scale and rounded once by THE
//! ONE rounder ([`crate::convert_scaled`], P3109 §5.1.2 ωBlockProject).
//!
//! # The scale
//!
//! `amax` is the largest magnitude of the block's finite elements, `L = ⌊log2 amax⌋`,
//! `emax_r` the exponent of the element format's largest finite value ([`Format::emax`]:
//! E4M3 8, E5M2 15, E3M2 4, E2M3 2, E2M1 2) and `m_r` its trailing significand bits. The
//! scale is `2^e`, `e` by the policy:
//!
//! | policy  | e                                                          | source |
//! |---------|------------------------------------------------------------|--------|
//! | `floor` | `L − emax_r`                                               | OCP MX v1.0 §6.3 (X = 2^(⌊log2 max\|V_i\|⌋ − emax_elem)); gfloat `compute_scale_amax`; torchao `ScaleCalculationMode.FLOOR` |
//! | `ceil`  | `⌈log2 amax⌉ − emax_r` (`L`, plus 1 when amax is not a power of two) | torchao `ScaleCalculationMode.CEIL` (exponent + 1 when the binary32 trailing significand is nonzero) |
//! | `even`  | `L' − emax_r`, `L' = ⌊log2 amax'⌋`, amax' = amax rounded to `m_r + 1` significant bits, ties away from zero | torchao `ScaleCalculationMode.EVEN` (adds half an element ulp to the binary32 bits, keeps the exponent) |
//! | `rceil` | the smallest `e` with `amax ≤ MaxFinite_r · 2^e`: `L − emax_r`, plus 1 when amax's significand exceeds MaxFinite_r's | torchao `ScaleCalculationMode.RCEIL` / cuBLAS MX block quantization (E8M0 of amax / MaxFinite_r rounded up) |
//!
//! Under `floor` and `even` the largest element may exceed the element format's range
//! and saturates (or overflows) by the element saturation mode; under `rceil` no finite
//! element overflows; `ceil` also never overflows and loses up to one binade more than
//! `rceil`. torchao computes `ceil`, `even` and `rceil` in binary32 arithmetic; this model is
//! exact. The two differ only for `rceil` where amax / MaxFinite_r is a binary32 subnormal:
//! torchao keeps 2^−127 where amax / 2^−127 exceeds MaxFinite_r (scripts/xcheck/README.md).
//!
//! `e` is clamped to the scale format's powers of two `[emin_s, emax_s]` (E8M0: −127..=127,
//! OCP MX v1.0 §5.4.1), and the scale code is `e + bias_s`.
//!
//! Special blocks:
//!
//! * any NaN element → the scale is the scale format's NaN (OCP MX v1.0 §6.3: a NaN
//!   element makes X NaN; torchao `test_exponent_nan_in`), and every element is NaN
//!   (ωBlockProject with a NaN scale, P3109 §5.1.2; formats without NaN get the
//!   `nonan_code` with `invalid`);
//! * `amax = 0` (every finite element zero) → the smallest scale `2^emin_s` (E8M0 code 0,
//!   2^−127, as gfloat `compute_scale_amax` returns for an all-zero block);
//! * ±∞ elements do not take part in amax (P3109 §5.2.3 ConvertToBlockMaxAbsFinite, NOTE 3:
//!   infinities do not influence the scale of finite elements); they are projected like
//!   any element (±∞ / scale = ±∞, then saturated or not by the saturation mode). A block of
//!   infinities only (and no NaN) gets the largest scale `2^emax_s` (P3109 §5.2.3 NOTE 2:
//!   the scale is MaxFiniteOf(fs)). gfloat and torchao differ here: gfloat takes amax = ∞
//!   (scale 2^127 for any block holding an infinity), torchao makes the scale NaN.
//!
//! All arithmetic is on integers (exponents and significands of the decoded codes).

use crate::format::Format;
use crate::ops::{convert_scaled, Scale};
use crate::round::{Flags, Spec};
use crate::value::Class;
use std::fmt;

/// Largest block size of [`quantize_block`].
pub const MAX_BLOCK: usize = 64;

/// How the shared scale is derived from the block's largest magnitude (see the module
/// documentation for the definitions and their sources).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalePolicy {
    /// `⌊log2 amax⌋ − emax_r` (OCP MX v1.0 §6.3).
    #[default]
    Floor,
    /// `⌈log2 amax⌉ − emax_r`.
    Ceil,
    /// `⌊log2 amax'⌋ − emax_r`, amax rounded to the element precision first.
    Even,
    /// The smallest scale with `amax / scale ≤ MaxFinite_r`.
    Rceil,
}

impl ScalePolicy {
    /// Every policy.
    pub const ALL: [ScalePolicy; 4] = [
        ScalePolicy::Floor,
        ScalePolicy::Ceil,
        ScalePolicy::Even,
        ScalePolicy::Rceil,
    ];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            ScalePolicy::Floor => "floor",
            ScalePolicy::Ceil => "ceil",
            ScalePolicy::Even => "even",
            ScalePolicy::Rceil => "rceil",
        }
    }

    /// Parses a name (case-insensitive).
    pub fn parse(s: &str) -> Result<ScalePolicy, String> {
        ScalePolicy::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!("unknown scale policy '{s}'; expected floor, ceil, even or rceil")
            })
    }
}

impl fmt::Display for ScalePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether `sf` can be the scale of [`quantize_block`]: a power-of-two scale format
/// ([`Scale::check_format`]) with a NaN code (for blocks holding a NaN).
pub fn check_scale_format(sf: &Format) -> Result<(), String> {
    Scale::check_format(sf)?;
    if sf.nan_code().is_none() {
        return Err(format!(
            "scale format {} has no NaN, which a block holding a NaN needs (e8m0, binary8p1uf)",
            sf.name()
        ));
    }
    Ok(())
}

/// What the scale is computed from: `(⌊log2 amax⌋, amax's significand normalized to bit 63)`
/// of the finite elements, or the special cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockMax {
    /// Some element is NaN.
    Nan,
    /// No finite element (all ±∞).
    Inf,
    /// Every finite element is zero.
    Zero,
    /// `amax = sig · 2^(log2 − 63)`, `sig` with bit 63 set.
    Finite {
        /// `⌊log2 amax⌋`.
        log2: i32,
        /// Significand, MSB at bit 63.
        sig: u64,
    },
}

/// The largest magnitude of the block `values` (codes of `in_fmt`).
pub fn block_max(values: &[u32], in_fmt: &Format) -> BlockMax {
    let mut best: Option<(i32, u64)> = None;
    let mut finite = false;
    for &c in values {
        let d = in_fmt.decode(c);
        match d.class {
            Class::Nan => return BlockMax::Nan,
            Class::Inf => {}
            Class::Zero => finite = true,
            Class::Normal | Class::Subnormal => {
                finite = true;
                let sig = d.sig as u64;
                let lz = sig.leading_zeros();
                let l = d.exp + 63 - lz as i32;
                let n = sig << lz;
                if best.is_none_or(|b| (l, n) > b) {
                    best = Some((l, n));
                }
            }
        }
    }
    match (best, finite) {
        (Some((log2, sig)), _) => BlockMax::Finite { log2, sig },
        (None, true) => BlockMax::Zero,
        (None, false) => BlockMax::Inf,
    }
}

/// The unclamped scale exponent of a finite nonzero amax under `policy` for elements of
/// `elem_fmt`.
pub fn scale_exponent(log2: i32, sig: u64, elem_fmt: &Format, policy: ScalePolicy) -> i32 {
    let emax = elem_fmt.emax();
    let frac = sig << 1; // the trailing significand, MSB first (the leading 1 dropped)
    let up = match policy {
        ScalePolicy::Floor => false,
        ScalePolicy::Ceil => frac != 0,
        ScalePolicy::Even => {
            // Round to m_r + 1 significant bits, ties away: a carry out of the fraction.
            let m = elem_fmt.man_bits();
            m < 63 && (frac as u128 + (1u128 << (63 - m))) >> 64 != 0
        }
        ScalePolicy::Rceil => {
            // MaxFinite_r's significand, normalized the same way.
            let d = elem_fmt.decode(elem_fmt.max_finite_mag());
            let s = d.sig as u64;
            let smax = s << s.leading_zeros();
            sig > smax
        }
    };
    log2 + up as i32 - emax
}

/// The scale code of a block: [`block_max`], the policy's exponent, clamped to the scale
/// format (see the module documentation).
pub fn block_scale(
    values: &[u32],
    in_fmt: &Format,
    elem_fmt: &Format,
    scale_fmt: &Format,
    policy: ScalePolicy,
) -> u32 {
    let (lo, hi) = (scale_fmt.emin(), scale_fmt.emax());
    let e = match block_max(values, in_fmt) {
        BlockMax::Nan => return scale_fmt.nan_code().unwrap_or(0),
        BlockMax::Inf => hi,
        BlockMax::Zero => lo,
        BlockMax::Finite { log2, sig } => scale_exponent(log2, sig, elem_fmt, policy).clamp(lo, hi),
    };
    (e + scale_fmt.bias) as u32
}

/// Quantizes one block: `values` (codes of `in_fmt`, 1..=[`MAX_BLOCK`] of them) → the scale
/// code (of `scale_fmt`), the element codes (of `elem_fmt`) and the OR of the elements'
/// flags. Element i is `convert_scaled(in_fmt, values[i], scale, elem_fmt, spec, rnd[i])`
/// (`rnd[i]` its random bits for stochastic rounding; missing entries are 0).
pub fn quantize_block(
    values: &[u32],
    in_fmt: &Format,
    elem_fmt: &Format,
    scale_fmt: &Format,
    policy: ScalePolicy,
    spec: &Spec,
    rnd: &[u32],
) -> (u32, Vec<u32>, Flags) {
    let code = block_scale(values, in_fmt, elem_fmt, scale_fmt, policy);
    let s = Scale {
        format: *scale_fmt,
        code,
    };
    let mut flags = 0u8;
    let elems = values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let (c, fl) = convert_scaled(
                in_fmt,
                v,
                s,
                elem_fmt,
                spec,
                rnd.get(i).copied().unwrap_or(0),
            );
            flags |= fl.0;
            c
        })
        .collect();
    (code, elems, Flags(flags))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::round::{Rounding, Saturation};

    const B32: Format = Format::BINARY32;
    const E8M0: Format = Format::E8M0;

    fn f(x: f32) -> u32 {
        x.to_bits()
    }

    fn scale(vals: &[f32], elem: Format, p: ScalePolicy) -> i32 {
        let v: Vec<u32> = vals.iter().map(|&x| f(x)).collect();
        block_scale(&v, &B32, &elem, &E8M0, p) as i32 - 127
    }

    #[test]
    fn policies_at_binade_edges() {
        use ScalePolicy::*;
        let e4 = Format::E4M3; // emax 8, MaxFinite 448 = 1.75 · 2^8
        assert_eq!(scale(&[256.0, 1.0], e4, Floor), 0);
        assert_eq!(scale(&[256.0, 1.0], e4, Ceil), 0);
        assert_eq!(scale(&[257.0], e4, Ceil), 1);
        assert_eq!(scale(&[448.0], e4, Rceil), 0);
        assert_eq!(scale(&[449.0], e4, Rceil), 1);
        assert_eq!(scale(&[449.0], e4, Floor), 0);
        // even: 1.1111b·2^8 = 496 rounds to 10.00b at 4 bits (m = 3) → binade 9; 1.111b·2^8
        // = 480 is exact at 4 bits and 495 = 1.11101111b·2^8 rounds down.
        assert_eq!(scale(&[496.0], e4, Even), 1);
        assert_eq!(scale(&[480.0], e4, Even), 0);
        assert_eq!(scale(&[495.0], e4, Even), 0);
        assert_eq!(scale(&[-6.0, 1.0], Format::E2M1, Rceil), 0);
        assert_eq!(scale(&[6.5], Format::E2M1, Rceil), 1);
        // amax = 0 → 2^-127; tiny amax clamps there too; a NaN → NaN (code 255).
        assert_eq!(scale(&[0.0, -0.0], e4, Floor), -127);
        assert_eq!(scale(&[f32::from_bits(1)], e4, Floor), -127);
        assert_eq!(scale(&[1.0, f32::NAN], e4, Floor), 128);
        // infinities do not count; only infinities → 2^127.
        assert_eq!(scale(&[f32::INFINITY, 2.0], e4, Floor), 1 - 8);
        assert_eq!(scale(&[f32::INFINITY, f32::NEG_INFINITY], e4, Floor), 127);
    }

    #[test]
    fn elements_go_through_the_one_rounder() {
        let spec = Spec::new(Rounding::Rne, Saturation::SatFinite);
        let v = [f(448.0), f(1.0), f(-3.0), f(0.0)];
        let (s, e, fl) = quantize_block(
            &v,
            &B32,
            &Format::E4M3,
            &E8M0,
            ScalePolicy::Floor,
            &spec,
            &[],
        );
        assert_eq!(s, 127);
        assert_eq!(e, vec![0x7e, 0x38, 0xc4, 0x00]);
        assert_eq!(fl, Flags::NONE);
        let (s, e, _) = quantize_block(
            &[f(1.0), f(f32::NAN)],
            &B32,
            &Format::E2M1,
            &E8M0,
            ScalePolicy::Floor,
            &spec,
            &[],
        );
        assert_eq!(s, 255);
        assert_eq!(e, vec![0, 0]); // E2M1 has no NaN: the nonan code 0
    }

    #[test]
    fn binary8p1uf_scales() {
        let p1 = Format::p3109(8, 1, false, false).unwrap();
        check_scale_format(&p1).unwrap();
        let v = [f(1.0)];
        let c = block_scale(&v, &B32, &Format::E4M3, &p1, ScalePolicy::Floor);
        assert_eq!(p1.decode(c).exact().log2_floor(), -8);
        let z = block_scale(&[0], &B32, &Format::E4M3, &p1, ScalePolicy::Floor);
        assert_eq!(p1.decode(z).exact().log2_floor(), p1.emin());
    }
}
