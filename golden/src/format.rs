//! Formats as data: one [`Format`] value describes any small float (and the IEEE
//! interchange formats binary32 / binary16 / bfloat16 used as external formats).
//!
//! Every derived width is a small documented function: [`Format::exp_bits`],
//! [`Format::man_bits`], [`Format::precision`] (`= man_bits + 1`).
//!
//! Code layout (all families): `[sign] [exponent: exp_bits] [trailing significand: man_bits]`,
//! the sign bit present only for signed formats. A positive finite code is
//! `Ebiased · 2^(P−1) + T`, so the magnitude codes of finite values are ordered like the values.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How NaN, ±Inf and zero are encoded: the format family (README "Units and formats").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Specials {
    /// IEEE 754 style: exponent all ones is ±Inf (trailing 0) or NaN (trailing ≠ 0); −0 exists.
    Ieee,
    /// "Finite" (OCP E4M3 / E4M3FN): only S.1…1.1…1 is NaN; no Inf; −0 exists.
    Fn,
    /// FNUZ: the code with only the sign bit set is the single NaN; no Inf; no −0.
    Fnuz,
    /// IEEE P3109 v4.0 §4.7.2, finite domain: NaN at 2^(K−1) (signed) / 2^K−1 (unsigned).
    P3109Finite,
    /// IEEE P3109 v4.0 §4.7.2, extended domain: as finite plus +Inf at 2^(K−1)−1 (signed) /
    /// 2^K−2 (unsigned) and −Inf at 2^K−1 (signed).
    P3109Extended,
    /// No specials at all (OCP MX E2M1 / E2M3 / E3M2); −0 exists when signed.
    NoNan,
    /// OCP MX E8M0 style: unsigned, all ones is NaN, no zero, no subnormals
    /// (biased exponent 0 is the normal value 2^−B).
    E8m0,
}

impl Specials {
    /// The name used on the command line and in manifests (whose serde spelling of `NoNan`,
    /// `no-nan`, [`Specials::parse`] accepts too).
    pub fn name(self) -> &'static str {
        match self {
            Specials::Ieee => "ieee",
            Specials::Fn => "fn",
            Specials::Fnuz => "fnuz",
            Specials::P3109Finite => "p3109-finite",
            Specials::P3109Extended => "p3109-extended",
            Specials::NoNan => "nonan",
            Specials::E8m0 => "e8m0",
        }
    }

    /// All families, in a fixed order.
    pub const ALL: [Specials; 7] = [
        Specials::Ieee,
        Specials::Fn,
        Specials::Fnuz,
        Specials::P3109Finite,
        Specials::P3109Extended,
        Specials::NoNan,
        Specials::E8m0,
    ];

    /// Parses a family name as accepted by `--specials`.
    pub fn parse(s: &str) -> Result<Specials, FormatError> {
        let l = s.to_ascii_lowercase();
        Ok(match l.as_str() {
            "ieee" => Specials::Ieee,
            "fn" | "finite-nan" => Specials::Fn,
            "fnuz" => Specials::Fnuz,
            "p3109-finite" | "p3109f" | "p3109-f" => Specials::P3109Finite,
            "p3109-extended" | "p3109e" | "p3109-e" | "p3109" => Specials::P3109Extended,
            "nonan" | "none" | "no-specials" | "no-nan" => Specials::NoNan,
            "e8m0" => Specials::E8m0,
            _ => {
                return Err(FormatError::new(
                    "specials",
                    format!(
                        "unknown NaN/Inf family '{s}'; expected one of ieee, fn, fnuz, p3109-finite, p3109-extended, nonan, e8m0"
                    ),
                ))
            }
        })
    }
}

/// An invalid format description: names the offending field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// The field (`k`, `p`, `bias`, `signed`, `specials`, `format`) that is wrong.
    pub field: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl FormatError {
    pub(crate) fn new(field: &'static str, message: impl Into<String>) -> Self {
        FormatError {
            field,
            message: message.into(),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid format field `{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for FormatError {}

/// A floating-point format chosen at run time.
///
/// Construct with [`Format::new`] (validated, user formats: `k` in 2..=16), a preset constant
/// ([`Format::E4M3`] …), [`Format::parse`] (preset names and `binary{K}p{P}{s|u}{e|f}`), or the
/// external IEEE formats [`Format::BINARY32`], [`Format::BINARY16`], [`Format::BFLOAT16`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Format {
    /// Total bits K.
    pub k: u32,
    /// Precision P in bits, including the hidden bit.
    pub p: u32,
    /// Exponent bias B.
    pub bias: i32,
    /// Sign-magnitude with a sign bit (true) or unsigned.
    pub signed: bool,
    /// NaN / Inf / zero family.
    pub specials: Specials,
}

/// Named presets, in the order `fp8gen formats` lists them (name, format, description).
pub const PRESETS: &[(&str, Format, &str)] = &[
    (
        "e4m3",
        Format::E4M3,
        "OCP FP8 E4M3 (= E4M3FN): no Inf, NaN S.1111.111, max 448",
    ),
    (
        "e5m2",
        Format::E5M2,
        "OCP FP8 E5M2: IEEE-like, ±Inf, NaN, max 57344",
    ),
    (
        "e4m3fnuz",
        Format::E4M3FNUZ,
        "E4M3FNUZ (bias 8): NaN 0x80, no Inf, no -0, max 240",
    ),
    (
        "e5m2fnuz",
        Format::E5M2FNUZ,
        "E5M2FNUZ (bias 16): NaN 0x80, no Inf, no -0, max 57344",
    ),
    (
        "e4m3b11fnuz",
        Format::E4M3B11FNUZ,
        "E4M3B11FNUZ (bias 11): NaN 0x80, no -0, max 30",
    ),
    (
        "e4m3-ieee",
        Format::E4M3_IEEE,
        "ml_dtypes float8_e4m3: IEEE-like, ±Inf, max 240",
    ),
    (
        "e3m4",
        Format::E3M4,
        "ml_dtypes float8_e3m4: IEEE-like, ±Inf, max 15.5",
    ),
    ("e3m2", Format::E3M2, "OCP MX FP6 E3M2: no Inf/NaN, max 28"),
    ("e2m3", Format::E2M3, "OCP MX FP6 E2M3: no Inf/NaN, max 7.5"),
    ("e2m1", Format::E2M1, "OCP MX FP4 E2M1: no Inf/NaN, max 6"),
    (
        "e8m0",
        Format::E8M0,
        "OCP MX scale E8M0: unsigned powers of two 2^-127..2^127, NaN 0xFF",
    ),
];

/// Aliases accepted by [`Format::parse`].
const ALIASES: &[(&str, &str)] = &[
    ("e4m3fn", "e4m3"),
    ("float8_e4m3fn", "e4m3"),
    ("float8_e5m2", "e5m2"),
    ("float8_e4m3fnuz", "e4m3fnuz"),
    ("float8_e5m2fnuz", "e5m2fnuz"),
    ("float8_e4m3b11fnuz", "e4m3b11fnuz"),
    ("float8_e4m3", "e4m3-ieee"),
    ("float8_e3m4", "e3m4"),
    ("fp6_e3m2", "e3m2"),
    ("fp6_e2m3", "e2m3"),
    ("fp4_e2m1", "e2m1"),
    ("float8_e8m0fnu", "e8m0"),
];

impl Format {
    /// OCP FP8 E4M3 (E4M3FN).
    pub const E4M3: Format = Format::raw(8, 4, 7, true, Specials::Fn);
    /// OCP FP8 E5M2.
    pub const E5M2: Format = Format::raw(8, 3, 15, true, Specials::Ieee);
    /// E4M3FNUZ, bias 8 (= P3109 Binary8p4sf).
    pub const E4M3FNUZ: Format = Format::raw(8, 4, 8, true, Specials::Fnuz);
    /// E5M2FNUZ, bias 16 (= P3109 Binary8p3sf).
    pub const E5M2FNUZ: Format = Format::raw(8, 3, 16, true, Specials::Fnuz);
    /// E4M3B11FNUZ, bias 11.
    pub const E4M3B11FNUZ: Format = Format::raw(8, 4, 11, true, Specials::Fnuz);
    /// IEEE-like E4M3 (ml_dtypes float8_e4m3), bias 7.
    pub const E4M3_IEEE: Format = Format::raw(8, 4, 7, true, Specials::Ieee);
    /// IEEE-like E3M4 (ml_dtypes float8_e3m4), bias 3.
    pub const E3M4: Format = Format::raw(8, 5, 3, true, Specials::Ieee);
    /// OCP MX FP6 E3M2, bias 3.
    pub const E3M2: Format = Format::raw(6, 3, 3, true, Specials::NoNan);
    /// OCP MX FP6 E2M3, bias 1.
    pub const E2M3: Format = Format::raw(6, 4, 1, true, Specials::NoNan);
    /// OCP MX FP4 E2M1, bias 1.
    pub const E2M1: Format = Format::raw(4, 2, 1, true, Specials::NoNan);
    /// OCP MX scale E8M0, bias 127.
    pub const E8M0: Format = Format::raw(8, 1, 127, false, Specials::E8m0);
    /// IEEE 754 binary32 (external format).
    pub const BINARY32: Format = Format::raw(32, 24, 127, true, Specials::Ieee);
    /// IEEE 754 binary16 (external format).
    pub const BINARY16: Format = Format::raw(16, 11, 15, true, Specials::Ieee);
    /// bfloat16 (external format).
    pub const BFLOAT16: Format = Format::raw(16, 8, 127, true, Specials::Ieee);

    /// A format without validation (for constants).
    pub const fn raw(k: u32, p: u32, bias: i32, signed: bool, specials: Specials) -> Format {
        Format {
            k,
            p,
            bias,
            signed,
            specials,
        }
    }

    /// The P3109 format `Binary{K}p{P}{s|u}{e|f}` with its standard bias
    /// `2^(K−P−1)` (signed) or `2^(K−P)` (unsigned).
    pub fn p3109(k: u32, p: u32, signed: bool, extended: bool) -> Result<Format, FormatError> {
        let specials = if extended {
            Specials::P3109Extended
        } else {
            Specials::P3109Finite
        };
        check_kp(k, p, signed)?;
        Format::new(
            k,
            p,
            Format::default_bias(k, p, signed, specials),
            signed,
            specials,
        )
    }

    /// The family's default bias: P3109 `2^(K−P−1)` signed / `2^(K−P)` unsigned; FNUZ
    /// `2^(E−1)`; all others IEEE `2^(E−1) − 1`, where E = exponent bits.
    pub fn default_bias(k: u32, p: u32, signed: bool, specials: Specials) -> i32 {
        let e = k as i32 - p as i32 + 1 - signed as i32; // exp_bits
        match specials {
            Specials::P3109Finite | Specials::P3109Extended => {
                1i32 << (k as i32 - p as i32 - signed as i32).max(0)
            }
            Specials::Fnuz => 1i32 << (e - 1).max(0),
            _ => {
                if e >= 1 {
                    (1i32 << (e - 1)) - 1
                } else {
                    0
                }
            }
        }
    }

    /// A validated user format (k in 2..=16).
    pub fn new(
        k: u32,
        p: u32,
        bias: i32,
        signed: bool,
        specials: Specials,
    ) -> Result<Format, FormatError> {
        check_kp(k, p, signed)?;
        let f = Format::raw(k, p, bias, signed, specials);
        match specials {
            Specials::Fnuz if !signed => {
                return Err(FormatError::new(
                    "signed",
                    "the fnuz family puts its NaN at the sign bit, so it must be signed; use --signed or --specials p3109-finite for an unsigned format",
                ))
            }
            Specials::E8m0 if signed => {
                return Err(FormatError::new(
                    "signed",
                    "the e8m0 family is unsigned; use --unsigned",
                ))
            }
            Specials::Ieee if p < 2 => {
                return Err(FormatError::new(
                    "p",
                    "the ieee family needs at least one trailing significand bit (p >= 2) to encode NaN",
                ))
            }
            Specials::Ieee | Specials::Fn if f.exp_bits() == 0 => {
                return Err(FormatError::new(
                    "p",
                    format!(
                        "the {} family needs at least one exponent bit; p = {p} leaves none in k = {k}",
                        specials.name()
                    ),
                ))
            }
            _ => {}
        }
        if f.max_finite_mag() == 0 && specials != Specials::E8m0 {
            return Err(FormatError::new(
                "specials",
                format!("format has no positive finite value with k = {k}, p = {p}"),
            ));
        }
        // Every value must be representable in binary32's exponent range? No: formats may
        // exceed binary32; only the bias magnitude is bounded so that exact arithmetic fits.
        // `unsigned_abs`: `i32::MIN.abs()` overflows (and wraps to a negative in release).
        let lim = 1i32 << 20;
        if bias.unsigned_abs() > lim.unsigned_abs() {
            return Err(FormatError::new(
                "bias",
                format!("bias {bias} is out of range; |bias| must be at most {lim}"),
            ));
        }
        Ok(f)
    }

    /// Parses a preset name (case-insensitive), an alias, or `binary{K}p{P}{s|u}{e|f}`.
    pub fn parse(name: &str) -> Result<Format, FormatError> {
        let l = name.trim().to_ascii_lowercase();
        let canonical = ALIASES
            .iter()
            .find(|(a, _)| *a == l)
            .map(|(_, c)| *c)
            .unwrap_or(l.as_str());
        if let Some((_, f, _)) = PRESETS.iter().find(|(n, _, _)| *n == canonical) {
            return Ok(*f);
        }
        match canonical {
            "binary32" | "fp32" | "f32" => return Ok(Format::BINARY32),
            "binary16" | "fp16" | "f16" => return Ok(Format::BINARY16),
            "bfloat16" | "bf16" => return Ok(Format::BFLOAT16),
            _ => {}
        }
        if let Some(rest) = canonical.strip_prefix("binary") {
            return parse_p3109(rest, name);
        }
        if let Some(f) = parse_custom_name(canonical) {
            return f;
        }
        Err(FormatError::new(
            "format",
            format!(
                "unknown format '{name}'; expected a preset ({}), binary{{K}}p{{P}}{{s|u}}{{e|f}} such as binary8p4se, or a custom format via --k/--p/--bias/--signed/--specials (see `fp8gen formats`)",
                PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
            ),
        ))
    }

    /// A short canonical name: the preset name if this is a preset, the P3109 name if it is a
    /// standard P3109 format, else `k{K}p{P}b{B}{s|u}-{family}`.
    pub fn name(&self) -> String {
        if let Some((n, _, _)) = PRESETS.iter().find(|(_, f, _)| f == self) {
            return (*n).to_string();
        }
        if *self == Format::BINARY32 {
            return "binary32".into();
        }
        if *self == Format::BINARY16 {
            return "binary16".into();
        }
        if *self == Format::BFLOAT16 {
            return "bfloat16".into();
        }
        let su = if self.signed { 's' } else { 'u' };
        match self.specials {
            Specials::P3109Finite | Specials::P3109Extended
                if self.bias
                    == Format::default_bias(self.k, self.p, self.signed, self.specials) =>
            {
                let d = if self.specials == Specials::P3109Extended {
                    'e'
                } else {
                    'f'
                };
                format!("binary{}p{}{}{}", self.k, self.p, su, d)
            }
            _ => format!(
                "k{}p{}b{}{}-{}",
                self.k,
                self.p,
                self.bias,
                su,
                self.specials.name()
            ),
        }
    }

    /// An identifier-safe version of [`Format::name`] (for Verilog module names).
    pub fn ident(&self) -> String {
        self.name()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    }

    /// Number of trailing significand bits, `P − 1`.
    pub const fn man_bits(&self) -> u32 {
        self.p - 1
    }

    /// Precision P (significand bits including the hidden bit) = `man_bits + 1`.
    pub const fn precision(&self) -> u32 {
        self.p
    }

    /// Number of exponent field bits, `K − P + 1 − signed`.
    pub const fn exp_bits(&self) -> u32 {
        self.k + 1 - self.p - self.signed as u32
    }

    /// Number of magnitude bits (everything but the sign), `K − signed`.
    pub const fn mag_bits(&self) -> u32 {
        self.k - self.signed as u32
    }

    /// Mask of all K code bits.
    pub const fn code_mask(&self) -> u32 {
        if self.k >= 32 {
            u32::MAX
        } else {
            (1u32 << self.k) - 1
        }
    }

    /// The sign bit (0 for unsigned formats).
    pub const fn sign_bit(&self) -> u32 {
        if self.signed {
            1u32 << (self.k - 1)
        } else {
            0
        }
    }

    /// Number of codes, 2^K (as u64 so binary32 fits).
    pub const fn num_codes(&self) -> u64 {
        1u64 << self.k
    }

    /// Whether the format has ±Inf (only +Inf for unsigned P3109 extended).
    pub const fn has_inf(&self) -> bool {
        matches!(self.specials, Specials::Ieee | Specials::P3109Extended)
    }

    /// Whether −Inf exists.
    pub const fn has_neg_inf(&self) -> bool {
        self.has_inf() && self.signed
    }

    /// Whether the format has a NaN encoding.
    pub const fn has_nan(&self) -> bool {
        !matches!(self.specials, Specials::NoNan)
    }

    /// Whether −0 is a distinct code (IEEE, fn, nonan families when signed).
    pub const fn has_neg_zero(&self) -> bool {
        self.signed
            && matches!(
                self.specials,
                Specials::Ieee | Specials::Fn | Specials::NoNan
            )
    }

    /// Whether biased exponent 0 encodes zero and subnormals (all families but e8m0).
    pub const fn has_subnormals(&self) -> bool {
        !matches!(self.specials, Specials::E8m0)
    }

    /// Largest magnitude code of a finite value (the code of `MaxFinite`).
    pub const fn max_finite_mag(&self) -> u32 {
        let m = self.mag_bits();
        let all = if m >= 32 { u32::MAX } else { (1u32 << m) - 1 };
        match self.specials {
            Specials::Ieee => {
                ((((1u32 << self.exp_bits()) - 1) as u64) << self.man_bits()) as u32 - 1
            }
            Specials::Fn => all - 1,
            Specials::Fnuz => all,
            Specials::P3109Finite => {
                if self.signed {
                    all
                } else {
                    all - 1
                }
            }
            Specials::P3109Extended => {
                if self.signed {
                    all - 1
                } else {
                    all - 2
                }
            }
            Specials::NoNan => all,
            Specials::E8m0 => all - 1,
        }
    }

    /// The canonical NaN code (what projection writes), if the format has a NaN.
    pub const fn nan_code(&self) -> Option<u32> {
        match self.specials {
            Specials::Ieee => Some(
                ((((1u32 << self.exp_bits()) - 1) as u64) << self.man_bits()) as u32
                    | (1u32 << (self.man_bits() - 1)),
            ),
            Specials::Fn => Some(self.code_mask() >> 1),
            Specials::Fnuz => Some(self.sign_bit()),
            Specials::P3109Finite | Specials::P3109Extended => {
                if self.signed {
                    Some(self.sign_bit())
                } else {
                    Some(self.code_mask())
                }
            }
            Specials::NoNan => None,
            Specials::E8m0 => Some(self.code_mask()),
        }
    }

    /// The code of +Inf, if any.
    pub const fn pos_inf_code(&self) -> Option<u32> {
        match self.specials {
            Specials::Ieee => {
                Some((((1u32 << self.exp_bits()) - 1) as u64) as u32 * (1u32 << self.man_bits()))
            }
            Specials::P3109Extended => {
                if self.signed {
                    Some(self.sign_bit() - 1)
                } else {
                    Some(self.code_mask() - 1)
                }
            }
            _ => None,
        }
    }

    /// The code of −Inf, if any.
    pub const fn neg_inf_code(&self) -> Option<u32> {
        match self.specials {
            Specials::Ieee => match self.pos_inf_code() {
                Some(c) => Some(c | self.sign_bit()),
                None => None,
            },
            Specials::P3109Extended if self.signed => Some(self.code_mask()),
            _ => None,
        }
    }

    /// Smallest exponent of a normal number, `emin = 1 − B` (for e8m0: `−B`).
    pub const fn emin(&self) -> i32 {
        if self.has_subnormals() {
            1 - self.bias
        } else {
            -self.bias
        }
    }

    /// Exponent of the largest finite value: `⌊log2 MaxFinite⌋`.
    pub fn emax(&self) -> i32 {
        let m = self.max_finite_mag();
        let eb = (m >> self.man_bits()) as i32;
        if self.has_subnormals() && eb == 0 {
            // only subnormals (p large relative to k): value = m · 2^(emin − man_bits)
            self.emin() - self.man_bits() as i32 + (31 - m.leading_zeros() as i32)
        } else {
            eb - self.bias
        }
    }
}

fn check_kp(k: u32, p: u32, signed: bool) -> Result<(), FormatError> {
    if !(2..=16).contains(&k) {
        return Err(FormatError::new(
            "k",
            format!("k = {k} is out of range; total bits must be 2..=16"),
        ));
    }
    let pmax = if signed { k - 1 } else { k };
    if p < 1 || p > pmax {
        return Err(FormatError::new(
            "p",
            format!(
                "p = {p} is out of range for a {} {k}-bit format; precision (including the hidden bit) must be 1..={pmax}",
                if signed { "signed" } else { "unsigned" }
            ),
        ));
    }
    Ok(())
}

/// Parses the canonical custom name `k{K}p{P}b{B}{s|u}-{family}` written by [`Format::name`].
fn parse_custom_name(s: &str) -> Option<Result<Format, FormatError>> {
    let rest = s.strip_prefix('k')?;
    let (k, rest) = rest.split_once('p')?;
    let (p, rest) = rest.split_once('b')?;
    let (head, fam) = rest.split_once('-')?;
    let signed = match head.chars().last()? {
        's' => true,
        'u' => false,
        _ => return None,
    };
    let bias: i32 = head[..head.len() - 1].parse().ok()?;
    let k: u32 = k.parse().ok()?;
    let p: u32 = p.parse().ok()?;
    Some(Specials::parse(fam).and_then(|sp| Format::new(k, p, bias, signed, sp)))
}

fn parse_p3109(rest: &str, orig: &str) -> Result<Format, FormatError> {
    let bad = || {
        FormatError::new(
            "format",
            format!(
                "'{orig}' is not a P3109 name; expected binary{{K}}p{{P}}{{s|u}}{{e|f}}, e.g. binary8p4se"
            ),
        )
    };
    let (k_str, rest) = rest.split_once('p').ok_or_else(bad)?;
    if rest.len() < 3 {
        return Err(bad());
    }
    let (p_str, sd) = rest.split_at(rest.len() - 2);
    let k: u32 = k_str.parse().map_err(|_| bad())?;
    let p: u32 = p_str.parse().map_err(|_| bad())?;
    let mut c = sd.chars();
    let signed = match c.next() {
        Some('s') => true,
        Some('u') => false,
        _ => return Err(bad()),
    };
    let extended = match c.next() {
        Some('e') => true,
        Some('f') => false,
        _ => return Err(bad()),
    };
    Format::p3109(k, p, signed, extended)
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}
