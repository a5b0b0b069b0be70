//! # fp8gen golden model
//!
//! The bit-exact reference that every generated core is proven against. It owns formats
//! ([`Format`], a run-time value with a NaN/Inf/zero family), decoding ([`Format::decode`]),
//! the one unrounded intermediate ([`Exact`]) and the one rounder ([`project`]: P3109
//! RoundToPrecision → Saturate → Encode, with IEEE-style [`Flags`]), and the operations built
//! on them: conversion ([`convert`], [`project_f32`]), addition ([`add()`]), multiply ([`mul`]), FMA with a binary32
//! accumulator ([`fma`]), dot products with block scales ([`DotUnit`]) and their power-of-two scaled variants.
//!
//! All arithmetic is exact integer arithmetic; nothing goes through f64. The crate does no I/O.

pub mod add;
pub mod dot;
pub mod format;
pub mod ops;
pub mod quantize;
pub mod round;
pub mod value;

pub use add::{add, add_any_exact};
pub use dot::{DotUnit, ExactAcc, MAX_DOT_N};
pub use format::{Format, FormatError, Specials, PRESETS};
pub use ops::{
    add_exact, convert, convert_scaled, flush_result, fma, fma_exact_addend, fma_ieee_zero,
    fma_scaled, is_signaling_nan, is_small_signaling_nan, mul, mul_exact, mul_ftz, mul_scaled,
    project_f32, FmaOptions, FmaUnit, Projector, Scale,
};
pub use quantize::{quantize_block, ScalePolicy, MAX_BLOCK};
pub use round::{
    project, project_to, Flags, Rounding, RtoOverflow, Saturation, Spec, Target, Tininess,
};
pub use value::{pow2, Class, Decoded, Exact, ExactClass};

/// Version of the generator and model, written into every generated file and manifest.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
