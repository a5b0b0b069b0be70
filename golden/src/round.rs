//! The one rounder: projection of an [`Exact`] value to a format
//! (P3109 §4.7.3: RoundToPrecision → Saturate → Encode), with IEEE-style exception flags.
//!
//! Every operation of the model (conversion, multiply, FMA, scaled variants) ends here.

use crate::format::{Format, Specials};
use crate::value::{Exact, ExactClass};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Rounding mode (P3109 §4.7.4). Stochastic modes carry N, the number of random bits
/// (1..=32); the random value `R < 2^N` is an explicit argument of every operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Rounding {
    /// NearestTiesToEven.
    Rne,
    /// NearestTiesToAway.
    Rna,
    /// TowardPositive.
    Rtp,
    /// TowardNegative.
    Rtn,
    /// TowardZero.
    Rtz,
    /// ToOdd.
    Rto,
    /// StochasticA with N random bits: away iff `⌊ν·2^N⌋ + R ≥ 2^N`.
    Sra(u8),
    /// StochasticB with N random bits: away iff `⌊ν·2^(N+1)⌋ + 2R + 1 ≥ 2^(N+1)`.
    Srb(u8),
    /// StochasticC with N random bits: away iff `RNITE(ν·2^N) + R ≥ 2^N`.
    Src(u8),
}

impl Rounding {
    /// The six deterministic modes.
    pub const DETERMINISTIC: [Rounding; 6] = [
        Rounding::Rne,
        Rounding::Rna,
        Rounding::Rtp,
        Rounding::Rtn,
        Rounding::Rtz,
        Rounding::Rto,
    ];

    /// The five IEEE 754 modes (RNE, RNA, RTP, RTN, RTZ).
    pub const IEEE: [Rounding; 5] = [
        Rounding::Rne,
        Rounding::Rna,
        Rounding::Rtp,
        Rounding::Rtn,
        Rounding::Rtz,
    ];

    /// Parses `rne`, `rna`, `rtp`, `rtn`, `rtz`, `rto`, `sra`/`srb`/`src` (with `sr_bits` random
    /// bits) — the names used on the command line.
    pub fn parse(s: &str, sr_bits: u8) -> Result<Rounding, String> {
        let l = s.to_ascii_lowercase();
        let sr = |f: fn(u8) -> Rounding| {
            if (1..=32).contains(&sr_bits) {
                Ok(f(sr_bits))
            } else {
                Err(format!(
                    "stochastic rounding needs 1..=32 random bits, got --sr-bits {sr_bits}"
                ))
            }
        };
        match l.as_str() {
            "rne" | "nearesttiestoeven" => Ok(Rounding::Rne),
            "rna" | "nearesttiestoaway" => Ok(Rounding::Rna),
            "rtp" | "towardpositive" => Ok(Rounding::Rtp),
            "rtn" | "towardnegative" => Ok(Rounding::Rtn),
            "rtz" | "towardzero" => Ok(Rounding::Rtz),
            "rto" | "toodd" => Ok(Rounding::Rto),
            "sra" => sr(Rounding::Sra),
            "srb" => sr(Rounding::Srb),
            "src" => sr(Rounding::Src),
            _ => Err(format!(
                "unknown rounding mode '{s}'; expected one of rne, rna, rtp, rtn, rtz, rto, sra, srb, src"
            )),
        }
    }

    /// Short name (`rne` …, stochastic modes without N).
    pub fn name(self) -> &'static str {
        match self {
            Rounding::Rne => "rne",
            Rounding::Rna => "rna",
            Rounding::Rtp => "rtp",
            Rounding::Rtn => "rtn",
            Rounding::Rtz => "rtz",
            Rounding::Rto => "rto",
            Rounding::Sra(_) => "sra",
            Rounding::Srb(_) => "srb",
            Rounding::Src(_) => "src",
        }
    }

    /// Number of random bits consumed (0 for deterministic modes).
    pub fn random_bits(self) -> u32 {
        match self {
            Rounding::Sra(n) | Rounding::Srb(n) | Rounding::Src(n) => n as u32,
            _ => 0,
        }
    }
}

impl fmt::Display for Rounding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rounding::Sra(n) | Rounding::Srb(n) | Rounding::Src(n) => {
                write!(f, "{}{}", self.name(), n)
            }
            _ => f.write_str(self.name()),
        }
    }
}

/// Saturation mode (P3109 v4.0 names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Saturation {
    /// All overflow and ±∞ clamp to the finite range.
    SatFinite,
    /// Finite overflow clamps; ±∞ stays ±∞ where the format has it.
    SatPropagate,
    /// Overflow → ±∞ where the format has it; where it has none → NaN (OCP / FNUZ conversions,
    /// the P3109 formal model since July 2026). Directed roundings toward the finite range still
    /// give the extreme finite value, as in P3109 §4.7.5.
    SatNone,
    /// SatNone exactly as printed in P3109 v4.0 §4.7.5: without ±∞, overflow gives M_hi / M_lo.
    SatNoneV4,
}

impl Saturation {
    /// All saturation modes.
    pub const ALL: [Saturation; 4] = [
        Saturation::SatFinite,
        Saturation::SatPropagate,
        Saturation::SatNone,
        Saturation::SatNoneV4,
    ];

    /// Parses `satfinite`, `satpropagate`, `satnone`, `satnone-v4`, and the older
    /// names `satmax` (→ satfinite) and `ovfinf` (→ satnone). An older "SatFinite" is
    /// today's `satpropagate`; the name `satfinite` always means the v4.0 mode.
    pub fn parse(s: &str) -> Result<Saturation, String> {
        match s.to_ascii_lowercase().as_str() {
            "satfinite" | "satmax" => Ok(Saturation::SatFinite),
            "satpropagate" => Ok(Saturation::SatPropagate),
            "satnone" | "ovfinf" => Ok(Saturation::SatNone),
            "satnone-v4" | "satnonev4" => Ok(Saturation::SatNoneV4),
            _ => Err(format!(
                "unknown saturation mode '{s}'; expected one of satfinite, satpropagate, satnone, satnone-v4"
            )),
        }
    }

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Saturation::SatFinite => "satfinite",
            Saturation::SatPropagate => "satpropagate",
            Saturation::SatNone => "satnone",
            Saturation::SatNoneV4 => "satnone-v4",
        }
    }
}

impl fmt::Display for Saturation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// IEEE-style exception flags, packed as `flags_o` = {invalid, overflow, underflow, inexact}
/// (bit 3 … bit 0, the RISC-V `fflags` order without divide-by-zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Flags(pub u8);

impl Flags {
    /// No flag.
    pub const NONE: Flags = Flags(0);
    /// Inexact (bit 0).
    pub const INEXACT: u8 = 1;
    /// Underflow: tiny and inexact (bit 1).
    pub const UNDERFLOW: u8 = 2;
    /// Overflow (bit 2).
    pub const OVERFLOW: u8 = 4;
    /// Invalid operation (bit 3).
    pub const INVALID: u8 = 8;

    /// Whether `invalid` is raised.
    pub fn invalid(self) -> bool {
        self.0 & Flags::INVALID != 0
    }
    /// Whether `overflow` is raised.
    pub fn overflow(self) -> bool {
        self.0 & Flags::OVERFLOW != 0
    }
    /// Whether `underflow` is raised.
    pub fn underflow(self) -> bool {
        self.0 & Flags::UNDERFLOW != 0
    }
    /// Whether `inexact` is raised.
    pub fn inexact(self) -> bool {
        self.0 & Flags::INEXACT != 0
    }
}

impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (Flags::INVALID, "invalid"),
            (Flags::OVERFLOW, "overflow"),
            (Flags::UNDERFLOW, "underflow"),
            (Flags::INEXACT, "inexact"),
        ];
        let v: Vec<&str> = names
            .iter()
            .filter(|(b, _)| self.0 & b != 0)
            .map(|(_, n)| *n)
            .collect();
        if v.is_empty() {
            f.write_str("-")
        } else {
            f.write_str(&v.join(","))
        }
    }
}

/// When tininess (for the underflow flag) is detected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Tininess {
    /// After rounding (IEEE 754 option, SoftFloat and RISC-V default).
    #[default]
    AfterRounding,
    /// Before rounding.
    BeforeRounding,
}

/// What round-to-odd gives on overflow under `satnone` (and `satnone-v4`).
///
/// P3109 §4.7.5 (the Saturate table) sends every rounding mode that does not round toward the
/// finite range to ±∞ on overflow, round-to-odd included. IEEE 754 defines no round-to-odd;
/// the hardware and libraries that implement it as a sticky rounding for double rounding
/// (SoftFloat's `softfloat_round_odd`, Berkeley HardFloat's `round_odd`) truncate and set the
/// last bit, so an overflowing result is the largest finite value (its last bit is odd):
/// overflow behaves as in round toward zero. `satfinite`/`satpropagate` clamp either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtoOverflow {
    /// ±∞ (where the format has it), as P3109 §4.7.5's table gives.
    #[default]
    P3109,
    /// The largest finite value with the sign (SoftFloat `round_odd` hardware).
    Ieee,
}

impl RtoOverflow {
    /// `p3109` or `ieee`.
    pub fn name(self) -> &'static str {
        match self {
            RtoOverflow::P3109 => "p3109",
            RtoOverflow::Ieee => "ieee",
        }
    }

    /// Parses `p3109` or `ieee`.
    pub fn parse(s: &str) -> Result<RtoOverflow, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "p3109" => Ok(RtoOverflow::P3109),
            "ieee" => Ok(RtoOverflow::Ieee),
            _ => Err(format!(
                "unknown round-to-odd overflow convention '{s}'; expected p3109 (±Inf, P3109 §4.7.5) or ieee (largest finite, SoftFloat round_odd)"
            )),
        }
    }
}

/// Everything that selects one projection: rounding, saturation and the options around them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Spec {
    /// Rounding mode.
    pub rounding: Rounding,
    /// Saturation mode.
    pub saturation: Saturation,
    /// Tininess detection for the underflow flag.
    pub tininess: Tininess,
    /// Code written for a NaN result in a format without NaN (nonan family), default +0.
    pub nonan_code: u32,
    /// Round-to-odd on overflow under `satnone`: ±∞ (P3109) or the largest finite value.
    #[serde(default)]
    pub rto_overflow: RtoOverflow,
}

impl Spec {
    /// A spec with the given modes, tininess after rounding and NaN → +0 for NaN-less formats.
    pub const fn new(rounding: Rounding, saturation: Saturation) -> Spec {
        Spec {
            rounding,
            saturation,
            tininess: Tininess::AfterRounding,
            nonan_code: 0,
            rto_overflow: RtoOverflow::P3109,
        }
    }

    /// IEEE 754 behaviour for binary32 results: overflow to ±∞ (or max finite for directed
    /// roundings toward zero), i.e. `satnone`.
    pub const fn ieee(rounding: Rounding) -> Spec {
        Spec::new(rounding, Saturation::SatNone)
    }
}

/// Result of one rounding step at a given quantum: `⌊S̃⌋` and the round-away decision.
struct Decision {
    s: u64,
    away: bool,
    inexact: bool,
}

/// Decide rounding of `|X| = sig·2^exp (+sticky)` to a multiple of `2^q`.
#[inline(always)]
fn decide(x: &Exact, q: i32, rounding: Rounding, rnd: u32, bias: i32, p: u32) -> Decision {
    let shift = q - x.exp;
    if shift <= 0 {
        // Exact: q ≤ exp. The producer contract guarantees no sticky here.
        debug_assert!(!x.sticky, "sticky set with too few significand bits");
        let s = x.sig << (-shift) as u32;
        return Decision {
            s,
            away: false,
            inexact: x.sticky,
        };
    }
    // Discarded fraction ν = rem / 2^shift (+ sticky below). Clamp huge shifts: every
    // decision only needs "nonzero, below half, top 33 bits zero" there.
    let (sig, shift) = if shift > 96 {
        (1u128, 96u32)
    } else {
        (x.sig as u128, shift as u32)
    };
    if shift < 64 && !rounding_is_stochastic(rounding) {
        return decide_u64(x, x.sig, shift, rounding, q, bias, p);
    }
    let s = (sig >> shift) as u64;
    let rem = sig & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let sticky = x.sticky;
    let nonzero = rem != 0 || sticky;
    let cmp = half_cmp(rem, half, sticky);
    let away = match rounding {
        Rounding::Sra(n) => {
            let (hi, _) = top_bits(rem, shift, sticky, n as u32);
            hi + rnd as u64 >= 1u64 << n
        }
        Rounding::Srb(n) => {
            let (hi, _) = top_bits(rem, shift, sticky, n as u32 + 1);
            hi + 2 * rnd as u64 + 1 >= 1u64 << (n + 1)
        }
        Rounding::Src(n) => {
            let (hi, lo) = top_bits(rem, shift, sticky, n as u32);
            let r = match lo {
                Lo::Above => hi + 1,
                Lo::Tie if hi & 1 == 1 => hi + 1,
                _ => hi,
            };
            r + rnd as u64 >= 1u64 << n
        }
        _ => round_away(rounding, x.sign, nonzero, cmp, odd_code(s, q, bias, p)),
    };
    Decision {
        s,
        away,
        inexact: nonzero,
    }
}

/// CodeIsEven's negation (P3109 §4.7.4): the parity of `⌊S̃⌋` for P > 1; for P = 1 the code
/// parity is that of the biased exponent `Q + B` (and a zero floor is even).
#[inline(always)]
fn odd_code(s: u64, q: i32, bias: i32, p: u32) -> bool {
    if p > 1 {
        s & 1 == 1
    } else {
        s != 0 && (q + bias) & 1 != 0
    }
}

/// RoundAway(µ) of P3109 §4.7.4 for the deterministic modes: `nonzero` is ν > 0, `cmp` is
/// ν compared with ½, `odd` is "not CodeIsEven".
#[inline(always)]
fn round_away(
    rounding: Rounding,
    sign: bool,
    nonzero: bool,
    cmp: std::cmp::Ordering,
    odd: bool,
) -> bool {
    use std::cmp::Ordering::*;
    match rounding {
        Rounding::Rtz => false,
        Rounding::Rtp => nonzero && !sign,
        Rounding::Rtn => nonzero && sign,
        Rounding::Rna => cmp != Less,
        Rounding::Rne => cmp == Greater || (cmp == Equal && odd),
        Rounding::Rto => nonzero && !odd,
        // Stochastic modes are decided by `decide` with their random bits.
        Rounding::Sra(_) | Rounding::Srb(_) | Rounding::Src(_) => false,
    }
}

/// ν compared with ½, where ν = rem/2^shift plus, with `sticky`, something strictly below
/// one unit of `rem` (so `rem == half` with sticky is above ½).
#[inline(always)]
fn half_cmp<T: Ord>(rem: T, half: T, sticky: bool) -> std::cmp::Ordering {
    match rem.cmp(&half) {
        std::cmp::Ordering::Equal if sticky => std::cmp::Ordering::Greater,
        o => o,
    }
}

#[inline(always)]
fn rounding_is_stochastic(r: Rounding) -> bool {
    matches!(r, Rounding::Sra(_) | Rounding::Srb(_) | Rounding::Src(_))
}

/// [`decide`] for deterministic modes when `1 ≤ shift < 64` (the common case), in u64.
#[inline(always)]
fn decide_u64(
    x: &Exact,
    sig: u64,
    shift: u32,
    rounding: Rounding,
    q: i32,
    bias: i32,
    p: u32,
) -> Decision {
    let s = sig >> shift;
    let rem = sig & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let sticky = x.sticky;
    let nonzero = rem != 0 || sticky;
    let cmp = half_cmp(rem, half, sticky);
    let away = round_away(rounding, x.sign, nonzero, cmp, odd_code(s, q, bias, p));
    Decision {
        s,
        away,
        inexact: nonzero,
    }
}

/// Position of the bits of ν below the top m, relative to half of their weight.
#[derive(PartialEq, Eq)]
enum Lo {
    Zero,
    Below,
    Tie,
    Above,
}

/// `(⌊ν·2^m⌋, the rest of ν·2^m compared with ½)` for ν = rem/2^shift (+ sticky below).
#[inline(always)]
fn top_bits(rem: u128, shift: u32, sticky: bool, m: u32) -> (u64, Lo) {
    if shift <= m {
        let hi = (rem << (m - shift)) as u64;
        (hi, if sticky { Lo::Below } else { Lo::Zero })
    } else {
        let d = shift - m;
        let hi = (rem >> d) as u64;
        let lo = rem & ((1u128 << d) - 1);
        let half = 1u128 << (d - 1);
        let c = if lo > half || (lo == half && sticky) {
            Lo::Above
        } else if lo == half {
            Lo::Tie
        } else if lo != 0 || sticky {
            Lo::Below
        } else {
            Lo::Zero
        };
        (hi, c)
    }
}

/// Everything the rounder needs about a result format, derived once from a [`Format`]
/// (so hot loops do not recompute it per value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The format.
    pub format: Format,
    man: u32,
    emin: i32,
    subn: bool,
    max_mag: u32,
    pos_inf: Option<u32>,
    neg_inf: Option<u32>,
    nan: Option<u32>,
}

impl Target {
    /// Derives the rounder's constants of `f`.
    pub const fn new(f: Format) -> Target {
        Target {
            format: f,
            man: f.man_bits(),
            emin: f.emin(),
            subn: f.has_subnormals(),
            max_mag: f.max_finite_mag(),
            pos_inf: f.pos_inf_code(),
            neg_inf: f.neg_inf_code(),
            nan: f.nan_code(),
        }
    }

    /// binary32 (the FMA result format).
    pub const BINARY32: Target = Target::new(Format::BINARY32);
}

/// Project an exact value to `f` (RoundToPrecision → Saturate → Encode) and return the code
/// and the exception flags. `rnd` holds the random bits of stochastic modes (ignored otherwise).
#[inline]
pub fn project(x: &Exact, f: &Format, spec: &Spec, rnd: u32) -> (u32, Flags) {
    project_to(x, &Target::new(*f), spec, rnd)
}

/// [`project`] with the target's constants derived beforehand.
#[inline(always)]
pub fn project_to(x: &Exact, t: &Target, spec: &Spec, rnd: u32) -> (u32, Flags) {
    match x.class {
        ExactClass::Finite => project_finite(x, t, spec, rnd),
        ExactClass::Zero => encode_zero(&t.format, x.sign),
        ExactClass::Inf => saturate_inf(&t.format, spec, x.sign),
        ExactClass::Nan => nan(&t.format, spec, 0),
    }
}

/// The NaN result of `f` with `extra` flags (invalid is added for NaN-less formats).
#[inline]
pub(crate) fn nan(f: &Format, spec: &Spec, extra: u8) -> (u32, Flags) {
    match f.nan_code() {
        Some(c) => (c, Flags(extra)),
        None => (
            spec.nonan_code & f.code_mask(),
            Flags(extra | Flags::INVALID),
        ),
    }
}

#[inline]
fn encode_zero(f: &Format, sign: bool) -> (u32, Flags) {
    if f.specials == Specials::E8m0 {
        // No zero in e8m0: an exact zero has no encoding.
        return (f.code_mask(), Flags(Flags::INVALID));
    }
    if sign && f.has_neg_zero() {
        (f.sign_bit(), Flags::NONE)
    } else {
        (0, Flags::NONE)
    }
}

/// Largest finite magnitude code with the sign applied (M_hi or M_lo).
#[inline]
fn max_finite(f: &Format, sign: bool) -> u32 {
    f.max_finite_mag() | if sign { f.sign_bit() } else { 0 }
}

/// Saturate an infinite operand (P3109 §4.7.5 rows for ±∞).
#[inline]
fn saturate_inf(f: &Format, spec: &Spec, sign: bool) -> (u32, Flags) {
    if sign && !f.signed {
        // −∞ into an unsigned format: M_lo (= the smallest value) or NaN under SatNone.
        return match spec.saturation {
            Saturation::SatNone | Saturation::SatNoneV4 if f.has_nan() => {
                nan(f, spec, Flags::INVALID)
            }
            _ => (0, Flags::NONE),
        };
    }
    let inf = if sign {
        f.neg_inf_code()
    } else {
        f.pos_inf_code()
    };
    match (spec.saturation, inf) {
        (Saturation::SatFinite, _) => (max_finite(f, sign), Flags::NONE),
        (_, Some(c)) => (c, Flags::NONE),
        (Saturation::SatNone, None) if f.has_nan() => nan(f, spec, Flags::INVALID),
        _ => (max_finite(f, sign), Flags::NONE),
    }
}

#[inline(always)]
fn project_finite(x: &Exact, t: &Target, spec: &Spec, rnd: u32) -> (u32, Flags) {
    let f = &t.format;
    let p = f.p;
    let man = t.man;
    let emin = t.emin;
    let e = x.log2_floor();
    let subn = t.subn;
    let q = if subn { e.max(emin) } else { e } - man as i32;
    let d = decide(x, q, spec.rounding, rnd, f.bias, p);
    let s = d.s + d.away as u64;
    let mut flags = if d.inexact { Flags::INEXACT } else { 0 };

    // Underflow: tiny and inexact.
    if d.inexact && e < emin {
        let tiny = match spec.tininess {
            Tininess::BeforeRounding => true,
            Tininess::AfterRounding => {
                if e < emin - 1 || !subn {
                    true
                } else {
                    // Round at precision P with unbounded exponent: tiny unless it carries to 2^emin.
                    let du = decide(x, e - man as i32, spec.rounding, rnd, f.bias, p);
                    du.s + (du.away as u64) < (1u64 << p)
                }
            }
        };
        if tiny {
            flags |= Flags::UNDERFLOW;
        }
    }

    // Magnitude code: (q − qmin)·2^(P−1) + S (subnormal formats), or with e8m0's offset.
    let qmin = emin - man as i32;
    let steps = ((q - qmin) as i64).min(1 << 30);
    let mut mag = (steps << man) + s as i64;
    let sign = x.sign;
    if !subn {
        mag -= 1i64 << man;
        if mag < 0 && !sign {
            // Below the smallest e8m0 value: clamp up to it.
            return (0, Flags(flags | Flags::UNDERFLOW | Flags::INEXACT));
        }
    }
    let max = t.max_mag as i64;
    if sign && !f.signed {
        // Negative value into an unsigned format: only a rounded zero is in range (and e8m0
        // has no zero, so nothing negative is).
        if mag == 0 && subn {
            return (0, Flags(flags));
        }
        let tow = matches!(spec.rounding, Rounding::Rtz | Rounding::Rtp);
        return match spec.saturation {
            Saturation::SatNone | Saturation::SatNoneV4 if !tow && f.has_nan() => {
                nan(f, spec, flags | Flags::INVALID | Flags::INEXACT)
            }
            _ => (0, Flags(flags | Flags::INEXACT)),
        };
    }
    if mag > max {
        flags |= Flags::OVERFLOW | Flags::INEXACT;
        let toward_finite = match spec.rounding {
            Rounding::Rtz => true,
            Rounding::Rtn => !sign,
            Rounding::Rtp => sign,
            Rounding::Rto => {
                (!f.signed && f.specials == Specials::P3109Extended)
                    || spec.rto_overflow == RtoOverflow::Ieee
            }
            _ => false,
        };
        let inf = if sign { t.neg_inf } else { t.pos_inf };
        return match spec.saturation {
            Saturation::SatFinite | Saturation::SatPropagate => (max_finite(f, sign), Flags(flags)),
            _ if toward_finite || t.nan.is_none() => (max_finite(f, sign), Flags(flags)),
            Saturation::SatNone | Saturation::SatNoneV4 if inf.is_some() => {
                (inf.unwrap_or(0), Flags(flags))
            }
            Saturation::SatNoneV4 => (max_finite(f, sign), Flags(flags)),
            _ => nan(f, spec, flags | Flags::INVALID),
        };
    }
    let mag = mag as u32;
    if mag == 0 && subn {
        let (c, _) = encode_zero(f, sign);
        return (c, Flags(flags));
    }
    (mag | if sign { f.sign_bit() } else { 0 }, Flags(flags))
}
