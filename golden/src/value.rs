//! Exact values: decoding a code to its exact value ([`Decoded`]) and the one unrounded
//! intermediate ([`Exact`]) that every operation hands to the one rounder.

use crate::format::Format;
use serde::Serialize;

/// Class of a decoded code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// ±0.
    Zero,
    /// Nonzero with biased exponent 0.
    Subnormal,
    /// Nonzero finite with biased exponent ≥ 1 (all finite values of e8m0).
    Normal,
    /// ±∞.
    Inf,
    /// NaN.
    Nan,
}

/// The exact value of a code: `(−1)^sign · sig · 2^exp` for finite classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Decoded {
    /// Class of the value.
    pub class: Class,
    /// Sign (true = negative); false for NaN of sign-less families.
    pub sign: bool,
    /// Exponent of the least significant significand bit.
    pub exp: i32,
    /// Integer significand (hidden bit included for normals); 0 for zero/Inf/NaN.
    pub sig: u32,
}

impl Decoded {
    /// Whether the value is NaN.
    pub fn is_nan(&self) -> bool {
        self.class == Class::Nan
    }

    /// The exact value as an unrounded intermediate.
    #[inline]
    pub fn exact(&self) -> Exact {
        match self.class {
            Class::Nan => Exact::NAN,
            Class::Inf => Exact::inf(self.sign),
            Class::Zero => Exact::zero(self.sign),
            _ => Exact::finite(self.sign, self.exp, self.sig as u64),
        }
    }

    /// The exact value as a C99 hex float (`0x1.cp+8`, `-0x1p-9`, `0x0p+0`, `inf`, `nan`),
    /// normalized with a leading `1.` for nonzero values.
    pub fn to_hex_float(&self) -> String {
        let s = if self.sign { "-" } else { "" };
        match self.class {
            Class::Nan => "nan".into(),
            Class::Inf => format!("{s}inf"),
            Class::Zero => format!("{s}0x0p+0"),
            _ => {
                let nb = 32 - self.sig.leading_zeros();
                let e = self.exp + nb as i32 - 1;
                // Fraction bits after the leading 1, padded to whole hex digits.
                let frac_bits = nb - 1;
                let digits = frac_bits.div_ceil(4);
                let frac =
                    (self.sig as u64 & ((1u64 << frac_bits) - 1)) << (digits * 4 - frac_bits);
                let mut f = if digits == 0 {
                    String::new()
                } else {
                    format!("{:0width$x}", frac, width = digits as usize)
                };
                while f.ends_with('0') {
                    f.pop();
                }
                if f.is_empty() {
                    format!("{s}0x1p{e:+}")
                } else {
                    format!("{s}0x1.{f}p{e:+}")
                }
            }
        }
    }

    /// The value as an f64 (exact: every value of a K ≤ 16 format or binary32 fits in f64).
    /// For display and tests only; no arithmetic in the model goes through f64.
    pub fn to_f64(&self) -> f64 {
        let s = if self.sign { -1.0 } else { 1.0 };
        match self.class {
            Class::Nan => f64::NAN,
            Class::Inf => s * f64::INFINITY,
            Class::Zero => s * 0.0,
            _ => s * self.sig as f64 * pow2(self.exp),
        }
    }
}

/// 2^e as f64 (exact for the exponent range in use; saturates to 0/∞ outside).
pub fn pow2(e: i32) -> f64 {
    if e > 1023 {
        f64::INFINITY
    } else if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else if e >= -1074 {
        f64::from_bits(1u64 << (e + 1074))
    } else {
        0.0
    }
}

impl Format {
    /// Decodes a code to its exact value (P3109 §4.7.2 for P3109 formats, the family table of
    /// the families of docs/semantics.md otherwise). Bits above K are ignored.
    #[inline(always)]
    pub fn decode(&self, code: u32) -> Decoded {
        let code = code & self.code_mask();
        if self.has_nan() && Some(code) == self.nan_code_any(code) {
            return Decoded {
                class: Class::Nan,
                sign: false,
                exp: 0,
                sig: 0,
            };
        }
        let sign = code & self.sign_bit() != 0;
        let mag = code & !self.sign_bit();
        if self.has_inf() && (Some(mag) == self.pos_inf_code()) {
            return Decoded {
                class: Class::Inf,
                sign,
                exp: 0,
                sig: 0,
            };
        }
        let man = self.man_bits();
        let eb = (mag >> man) as i32;
        let t = mag & ((1u32 << man) - 1);
        if eb == 0 && self.has_subnormals() {
            Decoded {
                class: if t == 0 {
                    Class::Zero
                } else {
                    Class::Subnormal
                },
                sign,
                exp: self.emin() - man as i32,
                sig: t,
            }
        } else {
            Decoded {
                class: Class::Normal,
                sign,
                exp: eb - self.bias - man as i32,
                sig: t | (1u32 << man),
            }
        }
    }

    /// `Some(code)` if `code` is one of the format's NaN encodings, else `None`.
    #[inline(always)]
    fn nan_code_any(&self, code: u32) -> Option<u32> {
        use crate::format::Specials::*;
        let is_nan = match self.specials {
            Ieee => {
                let mag = code & !self.sign_bit();
                let inf = self.pos_inf_code().unwrap_or(u32::MAX);
                mag > inf
            }
            Fn => code & !self.sign_bit() == self.code_mask() & !self.sign_bit(),
            Fnuz | P3109Finite | P3109Extended | E8m0 => Some(code) == self.nan_code(),
            NoNan => false,
        };
        if is_nan {
            Some(code)
        } else {
            None
        }
    }

    /// Whether `code` is a NaN of this format.
    pub fn is_nan_code(&self, code: u32) -> bool {
        self.nan_code_any(code & self.code_mask()).is_some()
    }
}

/// Class of an unrounded intermediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExactClass {
    /// Not a number.
    Nan,
    /// ±∞.
    Inf,
    /// ±0 (exact).
    Zero,
    /// A nonzero finite value, see [`Exact`].
    Finite,
}

/// The one exact, unrounded intermediate: sign, exponent, significand, class (HardFloat's
/// RawFloat). For `Finite`, the magnitude is `sig · 2^exp` exactly when `sticky` is false,
/// and lies strictly between `sig · 2^exp` and `(sig + 1) · 2^exp` when `sticky` is true.
///
/// A producer that sets `sticky` must supply at least `P + 34` significant bits in `sig`
/// (P = target precision) so that the sticky bit sits below every rounding position and
/// below the 32 random bits used by stochastic rounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exact {
    /// Class.
    pub class: ExactClass,
    /// Sign (true = negative). Meaningful for Zero, Inf and Finite.
    pub sign: bool,
    /// Exponent of the least significant bit of `sig`.
    pub exp: i32,
    /// Significand; nonzero for `Finite`.
    pub sig: u64,
    /// Something nonzero lies below the least significant bit of `sig`.
    pub sticky: bool,
}

impl Exact {
    /// NaN.
    pub const NAN: Exact = Exact {
        class: ExactClass::Nan,
        sign: false,
        exp: 0,
        sig: 0,
        sticky: false,
    };

    /// ±∞.
    pub const fn inf(sign: bool) -> Exact {
        Exact {
            class: ExactClass::Inf,
            sign,
            exp: 0,
            sig: 0,
            sticky: false,
        }
    }

    /// ±0.
    pub const fn zero(sign: bool) -> Exact {
        Exact {
            class: ExactClass::Zero,
            sign,
            exp: 0,
            sig: 0,
            sticky: false,
        }
    }

    /// `(−1)^sign · sig · 2^exp` exactly (zero when `sig == 0`).
    #[inline]
    pub const fn finite(sign: bool, exp: i32, sig: u64) -> Exact {
        if sig == 0 {
            return Exact::zero(sign);
        }
        Exact {
            class: ExactClass::Finite,
            sign,
            exp,
            sig,
            sticky: false,
        }
    }

    /// `⌊log2 |X|⌋` of a finite nonzero value.
    #[inline]
    pub fn log2_floor(&self) -> i32 {
        self.exp + 63 - self.sig.leading_zeros() as i32
    }
}
