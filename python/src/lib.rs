//! `fp8gen._native`: the golden model of fp8gen for numpy arrays.
//!
//! Every element loop runs here, with the GIL released; the Python package `fp8gen`
//! (`pysrc/fp8gen/__init__.py`) only checks arguments, dtypes and shapes, makes arrays
//! contiguous and one-dimensional, and reshapes the results. Formats are validated by
//! `golden::Format::new`, so the messages are the CLI's (`invalid format field `p`: …`) with
//! the CLI's option names replaced by the Python argument names ([`py_text`]). No input may
//! reach a panic: every size, code and integer argument is checked here or in the package
//! and refused with a ValueError/TypeError naming the argument.

use golden::{
    Class, Decoded, Exact, Flags, FmaOptions, FmaUnit, Format, Projector, Rounding, Saturation,
    Spec, Specials, Target,
};
use numpy::{Element, PyArray1, PyReadonlyArray1};
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString, PyType};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A small-float format (a validated `golden::Format`).
#[pyclass(frozen, module = "fp8gen", name = "Format")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct PyFormat {
    f: Format,
}

/// The golden model's messages name the CLI's options; Python callers see the argument names.
fn py_text(s: &str) -> String {
    s.replace(
        "a custom format via --k/--p/--bias/--signed/--specials (see `fp8gen formats`)",
        "a custom format Format(k=…, p=…, bias=…, signed=…, specials=…) (fp8gen.presets() lists the presets)",
    )
    .replace("use --signed or --specials p3109-finite", "use signed=True or specials=\"p3109-finite\"")
    .replace("use --unsigned", "use signed=False")
    .replace("--sr-bits", "sr_bits")
}

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(py_text(&e.to_string()))
}

/// An integer argument in `lo..=hi`: TypeError for a non-integer (bool included), ValueError
/// naming the argument and the range otherwise; never pyo3's OverflowError.
fn int_arg(obj: &Bound<'_, PyAny>, what: &str, lo: i64, hi: i64) -> PyResult<i64> {
    let type_err = || {
        PyTypeError::new_err(format!(
            "{what}: expected an int, got {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into())
        ))
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(type_err());
    }
    match obj.extract::<i64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        Ok(v) => Err(PyValueError::new_err(format!(
            "{what}: {v} is out of range {lo}..={hi}"
        ))),
        Err(_) if obj.is_instance_of::<PyInt>() => Err(PyValueError::new_err(format!(
            "{what}: {} is out of range {lo}..={hi}",
            obj.str().map(|s| s.to_string()).unwrap_or_default()
        ))),
        Err(_) => Err(type_err()),
    }
}

/// Names numpy and ml_dtypes give formats that the golden model spells otherwise.
const PY_ALIASES: &[(&str, &str)] = &[
    ("float6_e3m2fn", "e3m2"),
    ("float6_e2m3fn", "e2m3"),
    ("float4_e2m1fn", "e2m1"),
    ("float16", "binary16"),
    ("float32", "binary32"),
];

fn parse_format(name: &str) -> PyResult<Format> {
    let l = name.trim().to_ascii_lowercase();
    if matches!(
        l.as_str(),
        "float64" | "binary64" | "double" | "fp64" | "f64"
    ) {
        return Err(PyValueError::new_err(format!(
            "invalid format field `format`: '{name}' (binary64) is not an fp8gen format (formats have at most 16 bits, and binary32); float64 arrays are accepted as values to project"
        )));
    }
    let n = PY_ALIASES
        .iter()
        .find(|(a, _)| *a == l)
        .map(|(_, c)| *c)
        .unwrap_or(name);
    Format::parse(n).map_err(value_error)
}

/// A format given as a name, a `Format`, or a numpy dtype / scalar type (ml_dtypes types
/// included): `np.dtype(obj).name` is then the format name.
fn format_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Format> {
    if let Ok(f) = obj.cast::<PyFormat>() {
        return Ok(f.get().f);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let name = s.to_cow().map_err(|_| {
            PyValueError::new_err(format!(
                "{what}: not a format name (the string is not valid Unicode text)"
            ))
        })?;
        return parse_format(&name);
    }
    let py = obj.py();
    let bad = || {
        PyTypeError::new_err(format!(
            "{what}: expected an fp8gen.Format or a format name (or a numpy/ml_dtypes dtype), got {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into())
        ))
    };
    if obj.is_none() || !(obj.is_instance_of::<PyType>() || obj.hasattr("kind").unwrap_or(false)) {
        return Err(bad());
    }
    let dtype = py
        .import("numpy")?
        .getattr("dtype")?
        .call1((obj,))
        .map_err(|_| bad())?;
    let name: String = dtype.getattr("name")?.extract()?;
    parse_format(&name)
}

/// Whether every finite value of `f` is `sig·2^exp` with at most `prec` significant bits,
/// `exp ≥ min_exp` (quantum of the smallest subnormal) and magnitude below `2^(max_e + 1)`:
/// exactly the values an IEEE format with that precision and range represents.
/// Formats wider than 16 bits (binary32) are IEEE-style with subnormals: the precision, the
/// smallest subnormal and the exponent of the largest finite value decide, without visiting
/// 2^32 codes.
fn fits(f: &Format, prec: u32, min_exp: i32, max_e: i32) -> bool {
    if f.k > 16 {
        return f.p <= prec && f.decode(1).exp >= min_exp && f.emax() <= max_e;
    }
    (0..f.num_codes() as u32).all(|c| {
        let d = f.decode(c);
        if d.is_nan() || d.sig == 0 {
            return true;
        }
        let tz = d.sig.trailing_zeros();
        let sig = d.sig >> tz;
        let exp = d.exp + tz as i32;
        let bits = u32::BITS - sig.leading_zeros();
        bits <= prec && exp >= min_exp && exp + bits as i32 - 1 <= max_e
    })
}

fn fits_f32(f: &Format) -> bool {
    fits(f, 24, -149, 127)
}

fn fits_f64(f: &Format) -> bool {
    fits(f, 53, -1074, 1023)
}

/// The smallest positive value of `f` (a normal one with `normal_only`): the first such code
/// in ascending order, since every family orders its positive codes by value. Formats wider
/// than 16 bits are IEEE-style: code 1 is the smallest subnormal, `1 << man_bits` the
/// smallest normal.
fn smallest_positive(f: &Format, normal_only: bool) -> Decoded {
    if f.k > 16 {
        return f.decode(if normal_only { 1u32 << f.man_bits() } else { 1 });
    }
    (0..f.num_codes() as u32)
        .map(|c| f.decode(c))
        .find(|d| {
            !d.sign && (d.class == Class::Normal || (!normal_only && d.class == Class::Subnormal))
        })
        .unwrap_or(Decoded {
            class: Class::Nan,
            sign: false,
            exp: 0,
            sig: 0,
        })
}

/// The exact value of `d` as a Python float; ValueError naming `what` when binary64 cannot
/// hold it (formats of up to 16 bits can reach 2^±32767).
fn exact_f64(f: &Format, d: Decoded, what: &str) -> PyResult<f64> {
    if matches!(d.class, Class::Normal | Class::Subnormal) {
        let tz = d.sig.trailing_zeros();
        let bits = u32::BITS - (d.sig >> tz).leading_zeros();
        let exp = d.exp + tz as i32;
        if exp < -1074 || exp + bits as i32 - 1 > 1023 {
            return Err(PyValueError::new_err(format!(
                "{what}: {} of {} is beyond binary64 (a Python float); use Format.hex for the exact value",
                d.to_hex_float(),
                f.name()
            )));
        }
    }
    Ok(d.to_f64())
}

#[pymethods]
impl PyFormat {
    /// `Format(name)` (a preset, alias or P3109 name; `bias=` adjusts a named format) or
    /// `Format(k=…, p=…, bias=…, signed=…, specials=…)` (bias defaults to the family's).
    #[new]
    #[pyo3(signature = (name=None, *, k=None, p=None, bias=None, signed=None, specials=None))]
    fn new(
        name: Option<&Bound<'_, PyAny>>,
        k: Option<&Bound<'_, PyAny>>,
        p: Option<&Bound<'_, PyAny>>,
        bias: Option<&Bound<'_, PyAny>>,
        signed: Option<&Bound<'_, PyAny>>,
        specials: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let type_name = |o: &Bound<'_, PyAny>| {
            o.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into())
        };
        let signed = signed
            .map(|o| {
                o.extract::<bool>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "signed: expected True or False, got {}",
                        type_name(o)
                    ))
                })
            })
            .transpose()?;
        let specials = specials
            .map(|o| match o.cast::<PyString>() {
                Ok(s) => s.to_cow().map(|c| c.into_owned()).map_err(|_| {
                    PyValueError::new_err(
                        "specials: not a family name (the string is not valid Unicode text)",
                    )
                }),
                Err(_) => Err(PyTypeError::new_err(format!(
                    "specials: expected a family name (str), got {}",
                    type_name(o)
                ))),
            })
            .transpose()?;
        let specials = specials.as_deref();
        let k = k
            .map(|v| int_arg(v, "k", 0, u32::MAX as i64))
            .transpose()?
            .map(|v| v as u32);
        let p = p
            .map(|v| int_arg(v, "p", 0, u32::MAX as i64))
            .transpose()?
            .map(|v| v as u32);
        let bias = bias
            .map(|v| int_arg(v, "bias", i32::MIN as i64, i32::MAX as i64))
            .transpose()?
            .map(|v| v as i32);
        let custom = k.is_some() || p.is_some() || specials.is_some();
        let f = match (name, custom) {
            (Some(_), true) => {
                return Err(PyValueError::new_err(
                    "give either a format name or a custom format (k, p, specials), not both; bias may adjust a named format",
                ))
            }
            (Some(name), false) => {
                let f = format_of(name, "name")?;
                if signed.is_some() {
                    return Err(PyValueError::new_err(
                        "signed describes a custom format; a named format fixes its signedness",
                    ));
                }
                match bias {
                    Some(b) => Format::new(f.k, f.p, b, f.signed, f.specials).map_err(value_error)?,
                    None => f,
                }
            }
            (None, true) => {
                let k = k.ok_or_else(|| {
                    PyValueError::new_err(
                        "invalid format field `k`: a custom format needs k (total bits, 2..=16)",
                    )
                })?;
                let p = p.ok_or_else(|| {
                    PyValueError::new_err(
                        "invalid format field `p`: a custom format needs p (precision including the hidden bit)",
                    )
                })?;
                let specials = match specials {
                    Some(s) => Specials::parse(s).map_err(value_error)?,
                    None => return Err(PyValueError::new_err(
                        "invalid format field `specials`: a custom format needs specials (ieee, fn, fnuz, p3109-finite, p3109-extended, nonan, e8m0)",
                    )),
                };
                let signed = signed.unwrap_or(true);
                let bias = bias.unwrap_or_else(|| Format::default_bias(k, p, signed, specials));
                Format::new(k, p, bias, signed, specials).map_err(value_error)?
            }
            (None, false) => {
                return Err(PyValueError::new_err(
                    "no format given: use Format(\"e4m3\") (fp8gen.presets() lists them) or Format(k=…, p=…, specials=…)",
                ))
            }
        };
        Ok(PyFormat { f })
    }

    /// `Format(name) == other`: equal to a Format with the same fields, or to a name (str) of
    /// the same format; any other object compares unequal.
    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> Py<PyAny> {
        let py = other.py();
        let eq = if let Ok(o) = other.cast::<PyFormat>() {
            Some(o.get().f == self.f)
        } else if let Ok(s) = other.cast::<PyString>() {
            Some(
                s.to_cow()
                    .ok()
                    .and_then(|s| parse_format(&s).ok())
                    .is_some_and(|f| f == self.f),
            )
        } else {
            None
        };
        match (op, eq) {
            (CompareOp::Eq, Some(e)) => PyBool::new(py, e).to_owned().into_any().unbind(),
            (CompareOp::Ne, Some(e)) => PyBool::new(py, !e).to_owned().into_any().unbind(),
            _ => py.NotImplemented(),
        }
    }

    /// The hash of the canonical name, so that `hash(Format(n)) == hash(Format(n).name)`.
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        PyString::new(py, &self.f.name()).hash()
    }

    /// Pickling: the canonical name rebuilds the format (every name round-trips).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyType>, (String,)) {
        (slf.get_type(), (slf.get().f.name(),))
    }

    /// Total bits K.
    #[getter]
    fn k(&self) -> u32 {
        self.f.k
    }
    /// Precision P (including the hidden bit).
    #[getter]
    fn p(&self) -> u32 {
        self.f.p
    }
    /// Exponent bias.
    #[getter]
    fn bias(&self) -> i32 {
        self.f.bias
    }
    /// Whether the format has a sign bit.
    #[getter]
    fn signed(&self) -> bool {
        self.f.signed
    }
    /// NaN/Inf family name (ieee, fn, fnuz, p3109-finite, p3109-extended, nonan, e8m0).
    #[getter]
    fn specials(&self) -> &'static str {
        self.f.specials.name()
    }
    /// Canonical name (preset, P3109 name or k{K}p{P}b{B}{s|u}-{family}).
    #[getter]
    fn name(&self) -> String {
        self.f.name()
    }
    /// Exponent field bits.
    #[getter]
    fn exp_bits(&self) -> u32 {
        self.f.exp_bits()
    }
    /// Trailing significand bits (P − 1).
    #[getter]
    fn man_bits(&self) -> u32 {
        self.f.man_bits()
    }
    /// Number of codes, 2^K.
    #[getter]
    fn num_codes(&self) -> u64 {
        self.f.num_codes()
    }
    /// Mask of the K code bits.
    #[getter]
    fn code_mask(&self) -> u32 {
        self.f.code_mask()
    }
    /// Largest finite value (as a Python float; exact).
    #[getter]
    fn max_finite(&self) -> PyResult<f64> {
        exact_f64(
            &self.f,
            self.f.decode(self.f.max_finite_mag()),
            "max_finite",
        )
    }
    /// Smallest positive value (subnormal where the format has subnormals; exact).
    #[getter]
    fn min_positive(&self) -> PyResult<f64> {
        exact_f64(&self.f, smallest_positive(&self.f, false), "min_positive")
    }
    /// numpy.finfo-style: the largest finite value (= `max_finite`; exact).
    #[getter]
    fn max(&self) -> PyResult<f64> {
        exact_f64(&self.f, self.f.decode(self.f.max_finite_mag()), "max")
    }
    /// numpy.finfo-style: 2^(1 − P), the distance from 1.0 to the next larger value at
    /// precision P (exact; 1.0 need not be a value of the format).
    #[getter]
    fn eps(&self) -> f64 {
        golden::pow2(1 - self.f.p as i32)
    }
    /// numpy.finfo-style: the smallest positive normal value (exact).
    #[getter]
    fn smallest_normal(&self) -> PyResult<f64> {
        exact_f64(&self.f, smallest_positive(&self.f, true), "smallest_normal")
    }
    /// numpy.finfo-style alias of `smallest_normal`.
    #[getter]
    fn tiny(&self) -> PyResult<f64> {
        exact_f64(&self.f, smallest_positive(&self.f, true), "tiny")
    }
    /// numpy.finfo-style: the smallest positive value (= `min_positive`: the smallest
    /// subnormal, or the smallest normal in a format without subnormals; exact).
    #[getter]
    fn smallest_subnormal(&self) -> PyResult<f64> {
        exact_f64(
            &self.f,
            smallest_positive(&self.f, false),
            "smallest_subnormal",
        )
    }
    /// Code of the largest finite value.
    #[getter]
    fn max_finite_code(&self) -> u32 {
        self.f.max_finite_mag()
    }
    /// Whether ±Inf (or +Inf for unsigned P3109 extended) exists.
    #[getter]
    fn has_inf(&self) -> bool {
        self.f.has_inf()
    }
    /// Whether a NaN code exists (False for the nonan family: NaN results become `nan_code`).
    #[getter]
    fn has_nan(&self) -> bool {
        self.f.has_nan()
    }
    /// Whether −0 is a distinct code.
    #[getter]
    fn has_neg_zero(&self) -> bool {
        self.f.has_neg_zero()
    }
    /// The canonical NaN code written by operations, or None.
    #[getter]
    fn nan_code(&self) -> Option<u32> {
        self.f.nan_code()
    }
    /// Code of +Inf, or None.
    #[getter]
    fn pos_inf_code(&self) -> Option<u32> {
        self.f.pos_inf_code()
    }
    /// Code of −Inf, or None.
    #[getter]
    fn neg_inf_code(&self) -> Option<u32> {
        self.f.neg_inf_code()
    }
    /// numpy dtype name of code arrays: uint8 (K ≤ 8), uint16 (K ≤ 16), uint32.
    #[getter]
    fn code_dtype(&self) -> &'static str {
        code_dtype(&self.f)
    }
    /// numpy dtype name of `decode`'s result: float32 when every value is exact in binary32,
    /// float64 when exact in binary64, None when neither holds (decode raises ValueError).
    #[getter]
    fn value_dtype(&self) -> Option<&'static str> {
        if fits_f32(&self.f) {
            Some("float32")
        } else if fits_f64(&self.f) {
            Some("float64")
        } else {
            None
        }
    }
    /// Exact value of one code as a Python float (NaN, ±inf included).
    fn value(&self, code: &Bound<'_, PyAny>) -> PyResult<f64> {
        let code = int_arg(code, "code", 0, self.f.code_mask() as i64)? as u32;
        exact_f64(&self.f, self.f.decode(code), "code")
    }
    /// Exact value of one code as a hexadecimal float string (any range).
    fn hex(&self, code: &Bound<'_, PyAny>) -> PyResult<String> {
        let code = int_arg(code, "code", 0, self.f.code_mask() as i64)? as u32;
        Ok(self.f.decode(code).to_hex_float())
    }
    fn __repr__(&self) -> String {
        format!(
            "Format('{}': k={}, p={}, bias={}, signed={}, specials='{}')",
            self.f.name(),
            self.f.k,
            self.f.p,
            self.f.bias,
            if self.f.signed { "True" } else { "False" },
            self.f.specials.name()
        )
    }
    fn __str__(&self) -> String {
        self.f.name()
    }
}

fn code_dtype(f: &Format) -> &'static str {
    if f.k <= 8 {
        "uint8"
    } else if f.k <= 16 {
        "uint16"
    } else {
        "uint32"
    }
}

fn check_code(f: &Format, code: u32, what: &str) -> PyResult<()> {
    if code & !f.code_mask() != 0 {
        Err(PyValueError::new_err(format!(
            "{what}: 0x{code:x} is not a code of {} ({} bits)",
            f.name(),
            f.k
        )))
    } else {
        Ok(())
    }
}

/// The first element of `v` that is not a code of `f`, as a ValueError.
fn check_codes(f: &Format, v: &[u32], what: &str) -> PyResult<()> {
    check_codes_any(f, v, what)
}

/// [`check_codes`] for any code width: one OR over the array (a vectorized pass; nothing to
/// do when the element type cannot hold a bit beyond the format's K), the search for the
/// first bad element only when some bit is set beyond K.
fn check_codes_any<T: Copy + Into<u64>>(f: &Format, v: &[T], what: &str) -> PyResult<()> {
    let m = !(f.code_mask() as u64);
    if std::mem::size_of::<T>() * 8 <= f.k as usize {
        return Ok(());
    }
    let any = v
        .chunks(1 << 12)
        .map(|c| c.iter().fold(0u64, |a, &x| a | x.into()))
        .fold(0u64, |a, x| a | x);
    if any & m == 0 {
        return Ok(());
    }
    match v.iter().map(|&c| c.into()).find(|&c| c & m != 0) {
        Some(c) => check_code(f, c as u32, what),
        None => Ok(()),
    }
}

fn make_spec(
    rounding: &str,
    sr_bits: u8,
    saturation: &str,
    tininess: &str,
    nan_code: u32,
    to: &Format,
) -> PyResult<Spec> {
    if nan_code & !to.code_mask() != 0 {
        return Err(PyValueError::new_err(format!(
            "nan_code: 0x{nan_code:x} is not a code of {} (0..=0x{:x}, {} bits)",
            to.name(),
            to.code_mask(),
            to.k
        )));
    }
    let rounding = Rounding::parse(rounding, sr_bits)
        .map_err(|e| PyValueError::new_err(format!("rounding: {}", py_text(&e))))?;
    let saturation = Saturation::parse(saturation)
        .map_err(|e| PyValueError::new_err(format!("saturation: {e}")))?;
    let tininess = match tininess.to_ascii_lowercase().as_str() {
        "after" => golden::Tininess::AfterRounding,
        "before" => golden::Tininess::BeforeRounding,
        t => {
            return Err(PyValueError::new_err(format!(
                "tininess: unknown value '{t}'; expected after or before"
            )))
        }
    };
    Ok(Spec {
        rounding,
        saturation,
        tininess,
        nonan_code: nan_code,
        rto_overflow: golden::RtoOverflow::P3109,
    })
}

/// Checks the random operand against the rounding mode: required (and < 2^N) for stochastic
/// modes, refused otherwise.
/// The `rto_overflow` argument: "p3109" (±Inf, P3109 v4.0 §4.7.5) or "ieee" (the largest
/// finite value).
fn rto_overflow_arg(s: &str) -> PyResult<golden::RtoOverflow> {
    golden::RtoOverflow::parse(s).map_err(|e| PyValueError::new_err(format!("rto_overflow: {e}")))
}

fn check_rnd(spec: &Spec, rnd: Option<&[u32]>, n: usize) -> PyResult<()> {
    let bits = spec.rounding.random_bits();
    match (bits, rnd) {
        (0, None) => Ok(()),
        (0, Some(_)) => Err(PyValueError::new_err(format!(
            "rnd is only used by stochastic rounding (sra, srb, src); rounding is {}",
            spec.rounding.name()
        ))),
        (_, None) => Err(PyValueError::new_err(format!(
            "rounding {} is stochastic: pass rnd= (a uint32 array of {bits}-bit random values, the shape of the result)",
            spec.rounding.name()
        ))),
        (_, Some(r)) => {
            if r.len() != n {
                return Err(PyValueError::new_err(format!(
                    "rnd has {} elements, the result has {n}",
                    r.len()
                )));
            }
            if bits < 32 {
                if let Some(v) = r.iter().find(|&&v| v >> bits != 0) {
                    return Err(PyValueError::new_err(format!(
                        "rnd: 0x{v:x} does not fit in sr_bits = {bits} bits"
                    )));
                }
            }
            Ok(())
        }
    }
}

/// Output code element types.
trait Code: Element + Copy + Send + Sync + Default {
    fn from_code(c: u32) -> Self;
}
impl Code for u8 {
    #[inline(always)]
    fn from_code(c: u32) -> Self {
        c as u8
    }
}
impl Code for u16 {
    #[inline(always)]
    fn from_code(c: u32) -> Self {
        c as u16
    }
}
impl Code for u32 {
    #[inline(always)]
    fn from_code(c: u32) -> Self {
        c
    }
}

/// Arrays of at least this many elements are split over the worker threads; shorter ones
/// run on the calling thread (a thread hand-off costs more than they take).
const PAR_MIN: usize = 1 << 16;
/// Elements per parallel task.
const PAR_CHUNK: usize = 1 << 14;

/// Worker threads of the element loops: 0 = every core (the default), 1 = the calling thread.
static THREADS: AtomicUsize = AtomicUsize::new(0);

fn threads() -> usize {
    match THREADS.load(Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        t => t,
    }
}

/// The thread pool of `t` workers, built once per count.
fn pool(t: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut g = pools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = g.get(&t) {
        return Some(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .thread_name(|i| format!("fp8gen-{i}"))
            .build()
            .ok()?,
    );
    g.insert(t, p.clone());
    Some(p)
}

/// Sets the number of worker threads of the element loops (0 = every core).
#[pyfunction]
fn _set_threads(n: usize) {
    THREADS.store(n, Ordering::Relaxed);
}

/// The number of worker threads a large array is split over.
#[pyfunction]
fn _get_threads() -> usize {
    threads()
}

/// Runs `op(i) -> (code, flags)` over `n` elements into a code vector and an optional flags
/// vector: on the calling thread for short arrays, in chunks over the worker threads for
/// long ones (each element is computed by the same `op` either way, so the results do not
/// depend on the split).
fn run_elements<O: Code>(
    n: usize,
    want_flags: bool,
    op: impl Fn(usize) -> (u32, Flags) + Sync + Send,
) -> (Vec<O>, Option<Vec<u8>>) {
    let t = threads();
    let pool = if t > 1 && n >= PAR_MIN { pool(t) } else { None };
    let Some(pool) = pool else {
        let mut codes: Vec<O> = Vec::with_capacity(n);
        if want_flags {
            let mut flags: Vec<u8> = Vec::with_capacity(n);
            for i in 0..n {
                let (c, f) = op(i);
                codes.push(O::from_code(c));
                flags.push(f.0);
            }
            return (codes, Some(flags));
        }
        codes.extend((0..n).map(|i| O::from_code(op(i).0)));
        return (codes, None);
    };
    let mut codes: Vec<O> = vec![O::default(); n];
    if want_flags {
        let mut flags = vec![0u8; n];
        pool.install(|| {
            codes
                .par_chunks_mut(PAR_CHUNK)
                .zip(flags.par_chunks_mut(PAR_CHUNK))
                .enumerate()
                .for_each(|(k, (cs, fs))| {
                    let base = k * PAR_CHUNK;
                    for (j, (c, f)) in cs.iter_mut().zip(fs.iter_mut()).enumerate() {
                        let (cc, ff) = op(base + j);
                        *c = O::from_code(cc);
                        *f = ff.0;
                    }
                })
        });
        (codes, Some(flags))
    } else {
        pool.install(|| {
            codes
                .par_chunks_mut(PAR_CHUNK)
                .enumerate()
                .for_each(|(k, cs)| {
                    let base = k * PAR_CHUNK;
                    for (j, c) in cs.iter_mut().enumerate() {
                        *c = O::from_code(op(base + j).0);
                    }
                })
        });
        (codes, None)
    }
}

/// Runs `op(i) -> (code, flags)` over `n` elements ([`run_elements`], GIL released) and
/// hands the codes and the optional flags to Python as 1-D arrays.
fn collect<'py, O: Code>(
    py: Python<'py>,
    n: usize,
    want_flags: bool,
    op: impl Fn(usize) -> (u32, Flags) + Sync + Send,
) -> (Bound<'py, PyAny>, Option<Bound<'py, PyAny>>) {
    let (codes, flags) = py.detach(|| run_elements::<O>(n, want_flags, op));
    (
        PyArray1::from_vec(py, codes).into_any(),
        flags.map(|f| PyArray1::from_vec(py, f).into_any()),
    )
}

fn collect_for<'py>(
    py: Python<'py>,
    to: &Format,
    n: usize,
    want_flags: bool,
    op: impl Fn(usize) -> (u32, Flags) + Sync + Send,
) -> (Bound<'py, PyAny>, Option<Bound<'py, PyAny>>) {
    match code_dtype(to) {
        "uint8" => collect::<u8>(py, n, want_flags, op),
        "uint16" => collect::<u16>(py, n, want_flags, op),
        _ => collect::<u32>(py, n, want_flags, op),
    }
}

type ProjKey = (Format, Format, Spec);

/// A projector prepared for arrays: the golden [`Projector`] plus, for deterministic modes, a
/// table indexed directly by input bits. Every table entry is `Projector::convert`'s answer
/// for one input of a class of inputs that the rounder cannot tell apart (see below), so the
/// table only re-indexes the golden model's own results.
struct Prepared {
    pr: Projector,
    /// binary32 sources, target P ≤ 8: indexed by (sign, exponent field, the P trailing
    /// significand bits below the hidden one, sticky of the rest); normal inputs only. This is
    /// exactly the class of the projector's memo (sign, exponent, P bits after the leading
    /// one, sticky), addressed without normalizing.
    f32_shift: u32,
    f32_codes: Vec<u16>,
    f32_flags: Vec<u8>,
    /// binary16 / bfloat16 sources: every one of the 2^16 inputs.
    u16_codes: Vec<u16>,
    u16_flags: Vec<u8>,
}

/// Largest target precision with a direct binary32 table (2^(10+P) entries).
const FAST_MAX_P: u32 = 8;

impl Prepared {
    fn new(from: Format, to: Format, spec: Spec) -> Prepared {
        let pr = Projector::new(from, to, spec);
        let det = spec.rounding.random_bits() == 0 && to.k <= 16;
        let (mut f32_codes, mut f32_flags, mut u16_codes, mut u16_flags) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut f32_shift = 0;
        if det && from.k == 32 && to.p <= FAST_MAX_P {
            f32_shift = 23 - to.p;
            let n = 1usize << (10 + to.p);
            f32_codes = vec![0; n];
            f32_flags = vec![0; n];
            for i in 0..n {
                let x = (((i >> 1) as u32) << f32_shift) | (i as u32 & 1);
                let e = (x >> 23) & 0xFF;
                if e != 0 && e != 0xFF {
                    let (c, f) = pr.convert(x, 0);
                    f32_codes[i] = c as u16;
                    f32_flags[i] = f.0;
                }
            }
        }
        if det && from.k == 16 {
            u16_codes = vec![0; 1 << 16];
            u16_flags = vec![0; 1 << 16];
            for x in 0..1u32 << 16 {
                let (c, f) = pr.convert(x, 0);
                u16_codes[x as usize] = c as u16;
                u16_flags[x as usize] = f.0;
            }
        }
        Prepared {
            pr,
            f32_shift,
            f32_codes,
            f32_flags,
            u16_codes,
            u16_flags,
        }
    }

    /// The code of one binary32 input: `(shift, table)` hoisted by the caller so that the
    /// loop keeps them in registers (u8 stores may alias any memory the loop reads).
    #[inline(always)]
    fn f32_code_with(&self, shift: u32, table: &[u16], x: u32) -> u32 {
        let e = (x >> 23) & 0xFF;
        if e.wrapping_sub(1) < 254 {
            let low = (1u32 << shift) - 1;
            let idx = ((x >> shift) << 1) | (x & low != 0) as u32;
            table[idx as usize] as u32
        } else {
            self.special(x)
        }
    }

    /// Zeros, subnormals, ±Inf and NaN: the golden projector.
    #[inline(never)]
    fn special(&self, x: u32) -> u32 {
        self.pr.convert(x, 0).0
    }

    #[inline(always)]
    fn f32_both(&self, x: u32) -> (u32, Flags) {
        let e = (x >> 23) & 0xFF;
        if e.wrapping_sub(1) < 254 {
            let low = (1u32 << self.f32_shift) - 1;
            let idx = (((x >> self.f32_shift) << 1) | (x & low != 0) as u32) as usize;
            (self.f32_codes[idx] as u32, Flags(self.f32_flags[idx]))
        } else {
            self.pr.convert(x, 0)
        }
    }
}

/// Stochastic rounding SRA(N) of binary32 inputs (P3109 §4.7.3: round away from zero when
/// the top N discarded bits plus the random value reach 2^N) from the golden model's own
/// deterministic answers: the result is either the round-toward-zero projection or the
/// round-away-from-zero one (rtp for positive inputs, rtn for negative), both read from the
/// prepared tables with their flags. Only where neither has an overflow, underflow or invalid
/// flag — the result is a normal value of the target, so the discarded bits are exactly the
/// low 24 − P bits of the input's significand and saturation and tininess play no part; every
/// other input (and every input outside the tables) goes through the golden rounder.
struct SraTables {
    rtz: Arc<Prepared>,
    rtp: Arc<Prepared>,
    rtn: Arc<Prepared>,
    discard: u32,
    n: u32,
}

impl SraTables {
    fn new(from: Format, to: Format, spec: Spec, n: u32) -> Option<SraTables> {
        if from.k != 32 || to.p > FAST_MAX_P || !(1..=32).contains(&n) {
            return None;
        }
        let with = |r| {
            prepared(
                from,
                to,
                Spec {
                    rounding: r,
                    ..spec
                },
            )
        };
        let t = SraTables {
            rtz: with(Rounding::Rtz),
            rtp: with(Rounding::Rtp),
            rtn: with(Rounding::Rtn),
            discard: 24 - to.p,
            n,
        };
        (!t.rtz.f32_codes.is_empty() && !t.rtp.f32_codes.is_empty() && !t.rtn.f32_codes.is_empty())
            .then_some(t)
    }

    #[inline(always)]
    fn convert(&self, x: u32, rnd: u32) -> Option<(u32, Flags)> {
        let e = (x >> 23) & 0xFF;
        if e.wrapping_sub(1) >= 254 {
            return None; // zero, subnormal, ∞, NaN input
        }
        let (ct, ft) = self.rtz.f32_both(x);
        let away = if x >> 31 != 0 { &self.rtn } else { &self.rtp };
        let (ca, fa) = away.f32_both(x);
        if (ft.0 | fa.0) & (Flags::OVERFLOW | Flags::UNDERFLOW | Flags::INVALID) != 0 {
            return None;
        }
        let d = self.discard;
        let rem = (x & ((1u32 << d) - 1)) as u64;
        let hi = if self.n <= d {
            rem >> (d - self.n)
        } else {
            rem << (self.n - d)
        };
        Some(if hi + rnd as u64 >= 1u64 << self.n {
            (ca, fa)
        } else {
            (ct, ft)
        })
    }
}

/// Prepared projectors are built once per (from, to, spec) and kept for later calls.
fn prepared(from: Format, to: Format, spec: Spec) -> Arc<Prepared> {
    static CACHE: OnceLock<Mutex<HashMap<ProjKey, Arc<Prepared>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(p) = cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(from, to, spec))
    {
        return p.clone();
    }
    let p = Arc::new(Prepared::new(from, to, spec));
    let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
    if c.len() >= 64 {
        c.clear();
    }
    c.insert((from, to, spec), p.clone());
    p
}

/// Element-wise `out[i] = O(code(v[i]))` without bounds checks in the loop (GIL released;
/// long arrays in chunks over the worker threads).
fn map_codes<I: Copy + Sync, O: Code + Sync>(
    py: Python<'_>,
    v: &[I],
    code: impl Fn(I) -> u32 + Sync + Send,
) -> Vec<O> {
    py.detach(|| {
        let t = threads();
        let pool = if t > 1 && v.len() >= PAR_MIN {
            pool(t)
        } else {
            None
        };
        match pool {
            None => v.iter().map(|&x| O::from_code(code(x))).collect(),
            Some(pool) => {
                let mut out: Vec<O> = vec![O::default(); v.len()];
                pool.install(|| {
                    out.par_chunks_mut(PAR_CHUNK)
                        .zip(v.par_chunks(PAR_CHUNK))
                        .for_each(|(o, x)| {
                            for (o, &x) in o.iter_mut().zip(x) {
                                *o = O::from_code(code(x));
                            }
                        })
                });
                out
            }
        }
    })
}

fn fast_project<'py, I: Copy + Sync>(
    py: Python<'py>,
    to: &Format,
    v: &[I],
    code: impl Fn(I) -> u32 + Sync + Send,
) -> Bound<'py, PyAny> {
    match code_dtype(to) {
        "uint8" => PyArray1::from_vec(py, map_codes::<I, u8>(py, v, code)).into_any(),
        "uint16" => PyArray1::from_vec(py, map_codes::<I, u16>(py, v, code)).into_any(),
        _ => PyArray1::from_vec(py, map_codes::<I, u32>(py, v, code)).into_any(),
    }
}

fn source_format(src: &str) -> PyResult<Format> {
    match src {
        "binary32" => Ok(Format::BINARY32),
        "binary16" => Ok(Format::BINARY16),
        "bfloat16" => Ok(Format::BFLOAT16),
        _ => Err(PyTypeError::new_err(format!(
            "unsupported source format {src}"
        ))),
    }
}

/// The exact value of binary64 bits `x` (IEEE 754 §3.4), and whether it is a signaling NaN
/// (trailing significand MSB clear; it raises `invalid` as a binary32 one does).
fn f64_exact(x: u64) -> (Exact, bool) {
    let sign = x >> 63 != 0;
    let e = ((x >> 52) & 0x7FF) as i32;
    let m = x & ((1u64 << 52) - 1);
    match e {
        0x7FF if m == 0 => (Exact::inf(sign), false),
        0x7FF => (Exact::NAN, m >> 51 == 0),
        0 => (Exact::finite(sign, -1074, m), false),
        _ => (Exact::finite(sign, e - 1075, m | 1u64 << 52), false),
    }
}

/// Arrays shorter than this (and `tables=False`) go element by element through
/// `golden::convert`, the direct path (no table build).
const TABLE_MIN_N: usize = 1 << 14;

/// Projection of binary32 (u32 bits) or binary16/bfloat16 (u16 bits) values to `fmt`.
#[pyfunction]
#[pyo3(signature = (bits, src, fmt, rounding, sr_bits, saturation, tininess, nan_code, rnd, flags, tables=true, rto_overflow="p3109"))]
#[allow(clippy::too_many_arguments)]
fn _project<'py>(
    py: Python<'py>,
    bits: &Bound<'py, PyAny>,
    src: &str,
    fmt: &PyFormat,
    rounding: &str,
    sr_bits: u8,
    saturation: &str,
    tininess: &str,
    nan_code: u32,
    rnd: Option<PyReadonlyArray1<'py, u32>>,
    flags: bool,
    tables: bool,
    rto_overflow: &str,
) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let mut spec = make_spec(rounding, sr_bits, saturation, tininess, nan_code, &fmt.f)?;
    spec.rto_overflow = rto_overflow_arg(rto_overflow)?;
    let rnd = rnd.as_ref().map(|r| r.as_slice()).transpose()?;
    let to = fmt.f;
    if src == "binary64" {
        // binary64 is not a golden format; its values are exact intermediates, projected once.
        let a: PyReadonlyArray1<'py, u64> = bits.extract()?;
        let v = a.as_slice()?;
        py.detach(|| check_rnd(&spec, rnd, v.len()))?;
        let t = Target::new(to);
        return Ok(collect_for(py, &to, v.len(), flags, |i| {
            let (x, snan) = f64_exact(v[i]);
            let (c, fl) = golden::project_to(&x, &t, &spec, rnd.map_or(0, |r| r[i]));
            if snan {
                (c, Flags(fl.0 | Flags::INVALID))
            } else {
                (c, fl)
            }
        }));
    }
    let from = source_format(src)?;
    if from.k == 32 {
        let a: PyReadonlyArray1<'py, u32> = bits.extract()?;
        let v = a.as_slice()?;
        py.detach(|| check_rnd(&spec, rnd, v.len()))?;
        if let Some(r) = rnd {
            let p = prepared(from, to, spec);
            if let (Rounding::Sra(nb), true) = (spec.rounding, tables && v.len() >= TABLE_MIN_N) {
                if let Some(sr) = SraTables::new(from, to, spec, nb as u32) {
                    return Ok(collect_for(py, &to, v.len(), flags, |i| {
                        sr.convert(v[i], r[i])
                            .unwrap_or_else(|| p.pr.convert_direct(v[i], r[i]))
                    }));
                }
            }
            return Ok(collect_for(py, &to, v.len(), flags, |i| {
                p.pr.convert_direct(v[i], r[i])
            }));
        }
        if !tables || v.len() < TABLE_MIN_N {
            return Ok(collect_for(py, &to, v.len(), flags, |i| {
                golden::convert(&from, v[i], &to, &spec, 0)
            }));
        }
        let p = prepared(from, to, spec);
        if p.f32_codes.is_empty() {
            return Ok(collect_for(py, &to, v.len(), flags, |i| {
                p.pr.convert(v[i], 0)
            }));
        }
        if flags {
            return Ok(collect_for(py, &to, v.len(), true, |i| p.f32_both(v[i])));
        }
        let (shift, table) = (p.f32_shift, &p.f32_codes[..]);
        let pp = &*p;
        Ok((
            fast_project(py, &to, v, move |x| pp.f32_code_with(shift, table, x)),
            None,
        ))
    } else {
        let a: PyReadonlyArray1<'py, u16> = bits.extract()?;
        let v = a.as_slice()?;
        py.detach(|| check_rnd(&spec, rnd, v.len()))?;
        if let Some(r) = rnd {
            let p = prepared(from, to, spec);
            return Ok(collect_for(py, &to, v.len(), flags, |i| {
                p.pr.convert_direct(v[i] as u32, r[i])
            }));
        }
        if !tables || v.len() < TABLE_MIN_N {
            return Ok(collect_for(py, &to, v.len(), flags, |i| {
                golden::convert(&from, v[i] as u32, &to, &spec, 0)
            }));
        }
        let p = prepared(from, to, spec);
        if p.u16_codes.is_empty() {
            return Ok(collect_for(py, &to, v.len(), flags, |i| {
                p.pr.convert(v[i] as u32, 0)
            }));
        }
        if flags {
            return Ok(collect_for(py, &to, v.len(), true, |i| {
                let x = v[i] as usize;
                (p.u16_codes[x] as u32, Flags(p.u16_flags[x]))
            }));
        }
        Ok((
            {
                let table = &p.u16_codes[..];
                fast_project(py, &to, v, move |x| table[x as usize] as u32)
            },
            None,
        ))
    }
}

/// Conversion of codes of any format to any other (P3109 Convert: the exact input value,
/// one rounding), through `golden::convert`; a table of every input code when the input
/// format has at most 16 bits and the modes are deterministic.
#[pyfunction]
#[pyo3(signature = (codes, from, to, rounding, sr_bits, saturation, tininess, nan_code, rnd, flags, rto_overflow="p3109"))]
#[allow(clippy::too_many_arguments)]
fn _convert<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray1<'py, u32>,
    from: &PyFormat,
    to: &PyFormat,
    rounding: &str,
    sr_bits: u8,
    saturation: &str,
    tininess: &str,
    nan_code: u32,
    rnd: Option<PyReadonlyArray1<'py, u32>>,
    flags: bool,
    rto_overflow: &str,
) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let (from, to) = (from.f, to.f);
    let mut spec = make_spec(rounding, sr_bits, saturation, tininess, nan_code, &to)?;
    spec.rto_overflow = rto_overflow_arg(rto_overflow)?;
    let v = codes.as_slice()?;
    py.detach(|| check_codes(&from, v, "codes"))?;
    let rnd = rnd.as_ref().map(|r| r.as_slice()).transpose()?;
    py.detach(|| check_rnd(&spec, rnd, v.len()))?;
    let n = v.len();
    Ok(match rnd {
        Some(r) => collect_for(py, &to, n, flags, |i| {
            golden::convert(&from, v[i], &to, &spec, r[i])
        }),
        None if from.k <= 16 && n >= 4096 => {
            let table: Vec<(u32, Flags)> = py.detach(|| {
                (0..1u32 << from.k)
                    .map(|c| golden::convert(&from, c, &to, &spec, 0))
                    .collect()
            });
            collect_for(py, &to, n, flags, |i| table[v[i] as usize])
        }
        None => collect_for(py, &to, n, flags, |i| {
            golden::convert(&from, v[i], &to, &spec, 0)
        }),
    })
}

/// Element codes, scale codes and (optionally) block flags of [`_quantize_block`].
type Quantized<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Option<Bound<'py, PyAny>>,
);

/// The MX block quantizer (`golden::quantize_block`): `bits` (binary32, binary16 or bfloat16
/// codes, `src`) in blocks of `block` consecutive elements → (element codes, one scale code
/// per block, the OR of each block's element flags when `flags`). Blocks run in parallel.
#[pyfunction]
#[pyo3(signature = (bits, src, block, fmt, scale_fmt, policy, rounding, sr_bits, saturation, tininess, nan_code, rnd, flags, rto_overflow="p3109"))]
#[allow(clippy::too_many_arguments)]
fn _quantize_block<'py>(
    py: Python<'py>,
    bits: &Bound<'py, PyAny>,
    src: &str,
    block: usize,
    fmt: &PyFormat,
    scale_fmt: &PyFormat,
    policy: &str,
    rounding: &str,
    sr_bits: u8,
    saturation: &str,
    tininess: &str,
    nan_code: u32,
    rnd: Option<PyReadonlyArray1<'py, u32>>,
    flags: bool,
    rto_overflow: &str,
) -> PyResult<Quantized<'py>> {
    let (to, sf) = (fmt.f, scale_fmt.f);
    let mut spec = make_spec(rounding, sr_bits, saturation, tininess, nan_code, &to)?;
    spec.rto_overflow = rto_overflow_arg(rto_overflow)?;
    let policy = golden::ScalePolicy::parse(policy).map_err(PyValueError::new_err)?;
    golden::quantize::check_scale_format(&sf)
        .map_err(|e| PyValueError::new_err(format!("scale_format: {e}")))?;
    if !(1..=golden::MAX_BLOCK).contains(&block) {
        return Err(PyValueError::new_err(format!(
            "block: {block} is out of range; a block has 1..={} elements",
            golden::MAX_BLOCK
        )));
    }
    let from = source_format(src)?;
    if !matches!(from.k, 16 | 32) {
        return Err(PyTypeError::new_err(format!(
            "values: the quantizer reads binary32, binary16 or bfloat16, not {src}"
        )));
    }
    let v: Vec<u32> = if from.k == 32 {
        let a: PyReadonlyArray1<'py, u32> = bits.extract()?;
        a.as_slice()?.to_vec()
    } else {
        let a: PyReadonlyArray1<'py, u16> = bits.extract()?;
        a.as_slice()?.iter().map(|&c| c as u32).collect()
    };
    if !v.len().is_multiple_of(block) {
        return Err(PyValueError::new_err(format!(
            "values: the last axis ({} elements in all) is not a multiple of block = {block}",
            v.len()
        )));
    }
    let rnd = rnd.as_ref().map(|r| r.as_slice()).transpose()?;
    py.detach(|| check_rnd(&spec, rnd, v.len()))?;
    // binary32 inputs, deterministic modes: an element divided by a power-of-two scale whose
    // quotient is a normal binary32 is that binary32 (the exponent field moved), projected
    // through the prepared tables of `project` (the golden projector's own answers); every
    // other element (and every element of a NaN-scaled block) goes through
    // golden::convert_scaled.
    let fast = (from.k == 32 && rnd.is_none())
        .then(|| prepared(from, to, spec))
        .filter(|p| !p.f32_codes.is_empty());
    let (codes, scales, fl) = py.detach(|| {
        let nb = v.len() / block;
        let mut codes = vec![0u32; v.len()];
        let mut scales = vec![0u8; nb];
        let mut fl = vec![0u8; nb];
        let one = |b: usize, blk: &[u32], out: &mut [u32], sc: &mut u8, f: &mut u8| {
            let code = golden::quantize::block_scale(blk, &from, &to, &sf, policy);
            *sc = code as u8;
            let s = golden::Scale { format: sf, code };
            let se = sf.decode(code).exact();
            let shift = (se.class == golden::ExactClass::Finite && !se.sign)
                .then(|| se.exp + se.sig.trailing_zeros() as i32);
            let mut acc = 0u8;
            for (i, (&x, o)) in blk.iter().zip(out.iter_mut()).enumerate() {
                let e = ((x >> 23) & 0xFF) as i32;
                let (c, fx) = match (&fast, shift) {
                    (Some(p), Some(k))
                        if (1..=254).contains(&e) && (1..=254).contains(&(e - k)) =>
                    {
                        p.f32_both((x & 0x807F_FFFF) | (((e - k) as u32) << 23))
                    }
                    _ => {
                        let r = rnd.map_or(0, |r| r[b * block + i]);
                        golden::convert_scaled(&from, x, s, &to, &spec, r)
                    }
                };
                *o = c;
                acc |= fx.0;
            }
            *f = acc;
        };
        let run = || {
            codes
                .par_chunks_mut(block)
                .zip(v.par_chunks(block))
                .zip(scales.par_iter_mut().zip(fl.par_iter_mut()))
                .enumerate()
                .for_each(|(b, ((out, blk), (sc, f)))| one(b, blk, out, sc, f));
        };
        let t = threads();
        match (t > 1 && v.len() >= PAR_MIN).then(|| pool(t)).flatten() {
            Some(pool) => pool.install(run),
            None => codes
                .chunks_mut(block)
                .zip(v.chunks(block))
                .zip(scales.iter_mut().zip(fl.iter_mut()))
                .enumerate()
                .for_each(|(b, ((out, blk), (sc, f)))| one(b, blk, out, sc, f)),
        }
        (codes, scales, fl)
    });
    let codes = match code_dtype(&to) {
        "uint8" => PyArray1::from_vec(py, codes.iter().map(|&c| c as u8).collect()).into_any(),
        "uint16" => PyArray1::from_vec(py, codes.iter().map(|&c| c as u16).collect()).into_any(),
        _ => PyArray1::from_vec(py, codes).into_any(),
    };
    Ok((
        codes,
        PyArray1::from_vec(py, scales).into_any(),
        flags.then(|| PyArray1::from_vec(py, fl).into_any()),
    ))
}

/// Exact values of codes: float32 where every value of the format is exact in binary32, else
/// float64; ValueError when binary64 cannot hold every value either.
#[pyfunction]
fn _decode<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray1<'py, u32>,
    fmt: &PyFormat,
) -> PyResult<Bound<'py, PyAny>> {
    let f = fmt.f;
    let v = codes.as_slice()?;
    py.detach(|| check_codes(&f, v, "codes"))?;
    if f.k > 16 {
        // binary32: every value is exact in float32; decode element by element (a table
        // would have 2^32 entries).
        let out = py.detach(|| {
            v.iter()
                .map(|&c| f.decode(c).to_f64() as f32)
                .collect::<Vec<f32>>()
        });
        return Ok(PyArray1::from_vec(py, out).into_any());
    }
    // One table of the format's values (at most 2^16 entries), then a gather.
    let table: Vec<f64> = (0..f.num_codes() as u32)
        .map(|c| f.decode(c).to_f64())
        .collect();
    if fits_f32(&f) {
        let t32: Vec<f32> = table.iter().map(|&x| x as f32).collect();
        let out = py.detach(|| v.iter().map(|&c| t32[c as usize]).collect::<Vec<f32>>());
        Ok(PyArray1::from_vec(py, out).into_any())
    } else if fits_f64(&f) {
        let out = py.detach(|| v.iter().map(|&c| table[c as usize]).collect::<Vec<f64>>());
        Ok(PyArray1::from_vec(py, out).into_any())
    } else {
        Err(PyValueError::new_err(format!(
            "fmt: some values of {} are beyond binary64, so decode cannot return them exactly (use Format.hex for exact values)",
            f.name()
        )))
    }
}

/// `x·y` rounded once to `out`.
#[pyfunction]
#[pyo3(signature = (x, y, fx, fy, fr, rounding, sr_bits, saturation, tininess, nan_code, rnd, flags, rto_overflow="p3109"))]
#[allow(clippy::too_many_arguments)]
fn _mul<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, u32>,
    y: PyReadonlyArray1<'py, u32>,
    fx: &PyFormat,
    fy: &PyFormat,
    fr: &PyFormat,
    rounding: &str,
    sr_bits: u8,
    saturation: &str,
    tininess: &str,
    nan_code: u32,
    rnd: Option<PyReadonlyArray1<'py, u32>>,
    flags: bool,
    rto_overflow: &str,
) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let (fx, fy, fr) = (fx.f, fy.f, fr.f);
    let mut spec = make_spec(rounding, sr_bits, saturation, tininess, nan_code, &fr)?;
    spec.rto_overflow = rto_overflow_arg(rto_overflow)?;
    let (xv, yv) = (x.as_slice()?, y.as_slice()?);
    if xv.len() != yv.len() {
        return Err(PyValueError::new_err(format!(
            "x has {} elements, y has {}",
            xv.len(),
            yv.len()
        )));
    }
    py.detach(|| check_codes(&fx, xv, "x").and_then(|_| check_codes(&fy, yv, "y")))?;
    let rnd = rnd.as_ref().map(|r| r.as_slice()).transpose()?;
    py.detach(|| check_rnd(&spec, rnd, xv.len()))?;
    let n = xv.len();
    let direct = |i: usize, r: u32| golden::mul(&fx, xv[i], &fy, yv[i], &fr, &spec, r);
    Ok(match rnd {
        Some(r) => collect_for(py, &fr, n, flags, |i| direct(i, r[i])),
        None if fx.k + fy.k <= 16 && n >= 4096 => {
            // Deterministic, small operand space: one table of every product, then look-ups.
            let table: Vec<(u32, Flags)> = py.detach(|| {
                (0..1u32 << (fx.k + fy.k))
                    .map(|i| {
                        let (a, b) = (i & fx.code_mask(), i >> fx.k);
                        golden::mul(&fx, a, &fy, b, &fr, &spec, 0)
                    })
                    .collect()
            });
            collect_for(py, &fr, n, flags, |i| {
                table[((yv[i] << fx.k) | xv[i]) as usize]
            })
        }
        None => collect_for(py, &fr, n, flags, |i| direct(i, 0)),
    })
}

/// `x + y` (`x − y` when `sub`) rounded once to `out` (golden::add).
#[pyfunction]
#[pyo3(signature = (x, y, fx, fy, fr, sub, rounding, sr_bits, saturation, tininess, nan_code, rnd, flags, rto_overflow="p3109"))]
#[allow(clippy::too_many_arguments)]
fn _add<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, u32>,
    y: PyReadonlyArray1<'py, u32>,
    fx: &PyFormat,
    fy: &PyFormat,
    fr: &PyFormat,
    sub: bool,
    rounding: &str,
    sr_bits: u8,
    saturation: &str,
    tininess: &str,
    nan_code: u32,
    rnd: Option<PyReadonlyArray1<'py, u32>>,
    flags: bool,
    rto_overflow: &str,
) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let (fx, fy, fr) = (fx.f, fy.f, fr.f);
    let mut spec = make_spec(rounding, sr_bits, saturation, tininess, nan_code, &fr)?;
    spec.rto_overflow = rto_overflow_arg(rto_overflow)?;
    let (xv, yv) = (x.as_slice()?, y.as_slice()?);
    if xv.len() != yv.len() {
        return Err(PyValueError::new_err(format!(
            "x has {} elements, y has {}",
            xv.len(),
            yv.len()
        )));
    }
    py.detach(|| check_codes(&fx, xv, "x").and_then(|_| check_codes(&fy, yv, "y")))?;
    let rnd = rnd.as_ref().map(|r| r.as_slice()).transpose()?;
    py.detach(|| check_rnd(&spec, rnd, xv.len()))?;
    let n = xv.len();
    let direct = |i: usize, r: u32| golden::add(&fx, xv[i], &fy, yv[i], sub, &fr, &spec, r);
    Ok(match rnd {
        Some(r) => collect_for(py, &fr, n, flags, |i| direct(i, r[i])),
        None if fx.k + fy.k <= 16 && n >= 4096 => {
            // Deterministic, small operand space: one table of every sum, then look-ups.
            let table: Vec<(u32, Flags)> = py.detach(|| {
                (0..1u32 << (fx.k + fy.k))
                    .map(|i| {
                        let (a, b) = (i & fx.code_mask(), i >> fx.k);
                        golden::add(&fx, a, &fy, b, sub, &fr, &spec, 0)
                    })
                    .collect()
            });
            collect_for(py, &fr, n, flags, |i| {
                table[((yv[i] << fx.k) | xv[i]) as usize]
            })
        }
        None => collect_for(py, &fr, n, flags, |i| direct(i, 0)),
    })
}

/// The RNE fast path of binary32 results shared by `fma` and `dot`: `s` is the exact value
/// (`err` = 0: the f64 sum that produced it was exact). Answers only where rounding `s` to
/// binary32 is the f64 → f32 conversion of IEEE 754 §5.4.2 (round to nearest even) and no
/// flag but `inexact` can arise: `s` finite, nonzero, at least 2^−126 in magnitude (never
/// tiny, before or after rounding) and rounding to a finite binary32 (no overflow, so the
/// saturation mode plays no part). Everything else — NaN, ∞, zeros (their sign rules),
/// tiny and overflowing results, inexact f64 sums — returns None: the golden path answers.
///
/// `err` ≠ 0 (the exact value is `s + err`, |err| ≤ half an ulp of `s` in binary64: TwoSum's
/// pair): rounding `s + err` and rounding `s` to binary32 agree, inexact, unless `s` is a
/// binary32 midpoint (its low 29 significand bits 1 << 28: then `err` decides the
/// direction) or `s` is 2^−126 itself (`s + err` may be tiny): those return None too.
#[inline(always)]
fn rne_f32(s: f64, err: f64) -> Option<(u32, Flags)> {
    let r = s as f32;
    if !rne_f32_taken(s, err, r) {
        return None;
    }
    let inexact = (r as f64 != s) | (err != 0.0);
    Some((r.to_bits(), Flags(if inexact { Flags::INEXACT } else { 0 })))
}

/// Whether [`rne_f32`] answers for `s + err` and `r = s as f32`: `s` not NaN, at least
/// 2^−126 in magnitude (above it when `err` ≠ 0), `r` finite; with `err` ≠ 0 `s` no binary32
/// midpoint. Branch-free, so that loops over many sums vectorize.
#[inline(always)]
fn rne_f32_taken(s: f64, err: f64, r: f32) -> bool {
    const MIN_NORMAL: f64 = 1.1754943508222875e-38; // 2^-126
    let midpoint = s.to_bits() & ((1 << 29) - 1) == 1 << 28;
    let a = s.abs();
    (a >= MIN_NORMAL) & (r.abs() <= f32::MAX) & ((err == 0.0) | (!midpoint & (a > MIN_NORMAL)))
}

/// `a + b` in f64 and its exact error (Knuth's TwoSum; `err` = 0 iff the sum is exact, for
/// finite operands and a finite sum; NaN when the sum overflows or an operand is ∞/NaN).
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let aa = s - bb;
    (s, (a - aa) + (b - bb))
}

/// Exact f64 values of every code of a format of at most 16 bits (NaN and ±∞ included), for
/// the fma and dot fast paths, with the range of its finite nonzero values: every one is a
/// multiple of 2^`lsb` below 2^`top` with at most `prec` significant bits.
struct ValueTable {
    v: Vec<f64>,
    lsb: i32,
    top: i32,
    prec: u32,
}

/// [`ValueTable`] of `f`, built once per format; None for formats wider than 16 bits, with a
/// value binary64 cannot hold, or without a finite nonzero value.
fn value_table(f: Format) -> Option<Arc<ValueTable>> {
    type Tables = HashMap<Format, Option<Arc<ValueTable>>>;
    static CACHE: OnceLock<Mutex<Tables>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
    if c.len() >= 32 {
        c.clear();
    }
    c.entry(f)
        .or_insert_with(|| {
            if f.k > 16 || !fits_f64(&f) {
                return None;
            }
            let (mut lsb, mut top, mut prec) = (i32::MAX, i32::MIN, 0);
            let v = (0..f.num_codes() as u32)
                .map(|c| {
                    let d = f.decode(c);
                    if matches!(d.class, Class::Normal | Class::Subnormal) {
                        let tz = d.sig.trailing_zeros();
                        let bits = u32::BITS - d.sig.leading_zeros();
                        lsb = lsb.min(d.exp + tz as i32);
                        top = top.max(d.exp + bits as i32);
                        prec = prec.max(bits - tz);
                    }
                    d.to_f64()
                })
                .collect();
            (lsb <= top).then(|| Arc::new(ValueTable { v, lsb, top, prec }))
        })
        .clone()
}

/// The first 256 entries of a value table (NaN-padded): indexed by a u8 code with no bounds
/// check (codes were checked against the format before).
fn table256(t: &[f64]) -> Box<[f64; 256]> {
    let mut a = Box::new([f64::NAN; 256]);
    let k = t.len().min(256);
    a[..k].copy_from_slice(&t[..k]);
    a
}

/// Value tables of `fx` and `fy` whose every product x·y is exact in f64 (normal range:
/// at most 53 significant bits, exponents within ±1000).
fn exact_product_tables(fx: Format, fy: Format) -> Option<(Arc<ValueTable>, Arc<ValueTable>)> {
    let (tx, ty) = (value_table(fx)?, value_table(fy)?);
    (tx.prec + ty.prec <= 53 && tx.lsb + ty.lsb >= -1000 && tx.top + ty.top <= 1000)
        .then_some((tx, ty))
}

/// Code arrays of any unsigned width (uint8, uint16, uint32): the package passes uint8 and
/// uint16 codes as they are, with no widening copy.
enum CodesArg<'py> {
    U8(PyReadonlyArray1<'py, u8>),
    U16(PyReadonlyArray1<'py, u16>),
    U32(PyReadonlyArray1<'py, u32>),
}

impl<'py> FromPyObject<'_, 'py> for CodesArg<'py> {
    type Error = PyErr;
    fn extract(ob: pyo3::Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = ob.extract::<PyReadonlyArray1<'py, u8>>() {
            return Ok(CodesArg::U8(a));
        }
        if let Ok(a) = ob.extract::<PyReadonlyArray1<'py, u16>>() {
            return Ok(CodesArg::U16(a));
        }
        Ok(CodesArg::U32(
            ob.extract::<PyReadonlyArray1<'py, u32>>().map_err(|_| {
                PyTypeError::new_err("code arrays are 1-D uint8, uint16 or uint32 arrays")
            })?,
        ))
    }
}

#[derive(Clone, Copy)]
enum Codes<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
}

impl CodesArg<'_> {
    fn slice(&self) -> PyResult<Codes<'_>> {
        Ok(match self {
            CodesArg::U8(a) => Codes::U8(a.as_slice()?),
            CodesArg::U16(a) => Codes::U16(a.as_slice()?),
            CodesArg::U32(a) => Codes::U32(a.as_slice()?),
        })
    }
}

impl Codes<'_> {
    fn len(&self) -> usize {
        match self {
            Codes::U8(v) => v.len(),
            Codes::U16(v) => v.len(),
            Codes::U32(v) => v.len(),
        }
    }
    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        match self {
            Codes::U8(v) => v[i] as u32,
            Codes::U16(v) => v[i] as u32,
            Codes::U32(v) => v[i],
        }
    }
    /// The first element that is not a code of `f`, as a ValueError.
    fn check(&self, f: &Format, what: &str) -> PyResult<()> {
        match self {
            Codes::U8(v) => check_codes_any(f, v, what),
            Codes::U16(v) => check_codes_any(f, v, what),
            Codes::U32(v) => check_codes_any(f, v, what),
        }
    }
}

/// `x·y + z` with z in `fz` and the result in `fr` (binary32 when not given), rounded once.
/// With `fast` (the default), a binary32 addend and result and
/// round-to-nearest-even, formats whose products are exact in f64 ([`exact_product_tables`]:
/// the 8-bit ones, binary16, bfloat16, …) take the product of two f64 values, one f64
/// addition checked exact ([`two_sum`]) and one f64 → binary32 rounding ([`rne_f32`]);
/// every other element goes through the golden `FmaUnit`.
#[pyfunction]
#[pyo3(signature = (x, y, z, fx, fy, rounding, saturation, tininess, ftz, flags, fast=true, rto_overflow="p3109", fz=None, fr=None, nan_code=0))]
#[allow(clippy::too_many_arguments)]
fn _fma<'py>(
    py: Python<'py>,
    x: CodesArg<'py>,
    y: CodesArg<'py>,
    z: PyReadonlyArray1<'py, u32>,
    fx: &PyFormat,
    fy: &PyFormat,
    rounding: &str,
    saturation: &str,
    tininess: &str,
    ftz: bool,
    flags: bool,
    fast: bool,
    rto_overflow: &str,
    fz: Option<&PyFormat>,
    fr: Option<&PyFormat>,
    nan_code: u32,
) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let (fx, fy) = (fx.f, fy.f);
    let to = fr.map_or(Format::BINARY32, |f| f.f);
    let fz = fz.map_or(to, |f| f.f);
    if ftz && (fz != Format::BINARY32 || to != Format::BINARY32) {
        return Err(PyValueError::new_err(format!(
            "ftz: flushes a binary32 addend and result; this fma has addend {} and result {} (subnormals are exact without ftz)",
            fz.name(),
            to.name()
        )));
    }
    let mut spec = make_spec(rounding, 8, saturation, tininess, nan_code, &to)?;
    spec.rto_overflow = rto_overflow_arg(rto_overflow)?;
    if spec.rounding.random_bits() > 0 {
        return Err(PyValueError::new_err(
            "rounding: fma rounds in a deterministic mode (rne, rna, rtp, rtn, rtz, rto)",
        ));
    }
    let (xv, yv, zv) = (x.slice()?, y.slice()?, z.as_slice()?);
    if fz != Format::BINARY32 {
        py.detach(|| check_codes(&fz, zv, "z"))?;
    }
    if xv.len() != yv.len() || xv.len() != zv.len() {
        return Err(PyValueError::new_err(format!(
            "x, y, z have {}, {}, {} elements",
            xv.len(),
            yv.len(),
            zv.len()
        )));
    }
    py.detach(|| xv.check(&fx, "x").and_then(|_| yv.check(&fy, "y")))?;
    let n = xv.len();
    let opts = FmaOptions { ftz, z: fz, r: to };
    let unit = py.detach(|| FmaUnit::new(fx, fy, spec, opts));
    let golden = |i: usize| unit.eval(xv.get(i), yv.get(i), zv[i]);
    if to != Format::BINARY32 || fz != Format::BINARY32 {
        return Ok(collect_for(py, &to, n, flags, golden));
    }
    let tables = if fast && spec.rounding == Rounding::Rne && n >= 1024 {
        exact_product_tables(fx, fy)
    } else {
        None
    };
    let Some((tx, ty)) = tables else {
        return Ok(collect::<u32>(py, n, flags, golden));
    };
    let (tx, ty) = (&tx.v[..], &ty.v[..]);
    // x·y exact in f64, + z in f64 checked exact, one rounding to binary32.
    let fast_op = |x: u32, y: u32, i: usize| {
        let zb = zv[i];
        if ftz && zb & 0x7F80_0000 == 0 && zb & 0x007F_FFFF != 0 {
            return golden(i); // subnormal z, flushed on input
        }
        let p = tx[x as usize] * ty[y as usize];
        let (s, err) = two_sum(p, f32::from_bits(zb) as f64);
        rne_f32(s, err).unwrap_or_else(|| golden(i))
    };
    Ok(match (xv, yv) {
        (Codes::U8(a), Codes::U8(b)) => {
            let (px, py8) = (table256(tx), table256(ty));
            collect::<u32>(py, n, flags, |i| {
                let zb = zv[i];
                if ftz && zb & 0x7F80_0000 == 0 && zb & 0x007F_FFFF != 0 {
                    return golden(i);
                }
                let p = px[a[i] as usize] * py8[b[i] as usize];
                let (s, err) = two_sum(p, f32::from_bits(zb) as f64);
                rne_f32(s, err).unwrap_or_else(|| golden(i))
            })
        }
        _ => collect::<u32>(py, n, flags, |i| fast_op(xv.get(i), yv.get(i), i)),
    })
}

/// `x·y + z` with a binary64 z (`z` holds its bits) and a binary32 result, computed exactly
/// and rounded once by the golden model (`golden::fma_exact_addend`: no second rounding of z
/// to binary32 first). A signaling binary64 NaN raises invalid. With `fast` and
/// round-to-nearest-even, [`_fma`]'s fast path (an f64 product exact by
/// [`exact_product_tables`], a TwoSum-checked f64 addition, [`rne_f32`]) answers where it
/// can.
#[pyfunction]
#[pyo3(signature = (x, y, z, fx, fy, rounding, saturation, tininess, flags, rto_overflow="p3109", fast=true))]
#[allow(clippy::too_many_arguments)]
fn _fma_f64<'py>(
    py: Python<'py>,
    x: CodesArg<'py>,
    y: CodesArg<'py>,
    z: PyReadonlyArray1<'py, u64>,
    fx: &PyFormat,
    fy: &PyFormat,
    rounding: &str,
    saturation: &str,
    tininess: &str,
    flags: bool,
    rto_overflow: &str,
    fast: bool,
) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let (fx, fy) = (fx.f, fy.f);
    let mut spec = make_spec(rounding, 8, saturation, tininess, 0, &Format::BINARY32)?;
    spec.rto_overflow = rto_overflow_arg(rto_overflow)?;
    if spec.rounding.random_bits() > 0 {
        return Err(PyValueError::new_err(
            "rounding: fma rounds to binary32 in an IEEE mode or rto; stochastic modes are for small-float results",
        ));
    }
    let (xv, yv, zv) = (x.slice()?, y.slice()?, z.as_slice()?);
    if xv.len() != yv.len() || xv.len() != zv.len() {
        return Err(PyValueError::new_err(format!(
            "x, y, z have {}, {}, {} elements",
            xv.len(),
            yv.len(),
            zv.len()
        )));
    }
    py.detach(|| xv.check(&fx, "x").and_then(|_| yv.check(&fy, "y")))?;
    let golden = |i: usize| {
        let (ze, snan) = f64_exact(zv[i]);
        golden::fma_exact_addend(&fx, xv.get(i), &fy, yv.get(i), &ze, snan, &spec)
    };
    let tables = if fast && spec.rounding == Rounding::Rne && xv.len() >= 1024 {
        exact_product_tables(fx, fy)
    } else {
        None
    };
    let Some((tx, ty)) = tables else {
        return Ok(collect::<u32>(py, xv.len(), flags, golden));
    };
    Ok(collect::<u32>(py, xv.len(), flags, |i| {
        let p = tx.v[xv.get(i) as usize] * ty.v[yv.get(i) as usize];
        let (s, err) = two_sum(p, f64::from_bits(zv[i]));
        rne_f32(s, err).unwrap_or_else(|| cold(|| golden(i)))
    }))
}

/// Dot products of rows: `x`, `y` hold `m` rows of `n` codes (row-major), `sx`, `sy` one
/// scale code per row (or empty), `z` one binary32 per row (or empty), or `z64` one binary64
/// per row (its bits; added exactly, `DotUnit::eval_exact_addend`); one rounding to `fr`.
/// With `fast` (the default), a binary32 result and round-to-nearest-even, formats whose
/// n-term sums are exact in f64 (E4M3, E2M1, … but not E5M2) sum f64 products (rows of 32k
/// uint8 codes in the AVX-512 kernel of [`simd`] where the CPU has it), scale by Sx·Sy when
/// those are powers of two (E8M0), add the addend in f64 checked exact ([`two_sum`]) and
/// round once f64 → binary32 ([`rne_f32`]); every other row goes through the golden
/// `DotUnit`. `fz`: the format of `z`'s codes (binary32 when not given; the fast path only
/// then).
#[pyfunction]
#[pyo3(signature = (x, y, n, sx, sy, z, fx, fy, fs, fr, rounding, saturation, tininess, flags, fast=true, z64=None, fz=None, rto_overflow="p3109", nan_code=0))]
#[allow(clippy::too_many_arguments)]
fn _dot<'py>(
    py: Python<'py>,
    x: CodesArg<'py>,
    y: CodesArg<'py>,
    n: usize,
    sx: CodesArg<'py>,
    sy: CodesArg<'py>,
    z: PyReadonlyArray1<'py, u32>,
    fx: &PyFormat,
    fy: &PyFormat,
    fs: Option<&PyFormat>,
    fr: &PyFormat,
    rounding: &str,
    saturation: &str,
    tininess: &str,
    flags: bool,
    fast: bool,
    z64: Option<PyReadonlyArray1<'py, u64>>,
    fz: Option<&PyFormat>,
    rto_overflow: &str,
    nan_code: u32,
) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let fz = fz.map_or(Format::BINARY32, |f| f.f);
    let mut spec = make_spec(rounding, 8, saturation, tininess, nan_code, &fr.f)?;
    spec.rto_overflow = rto_overflow_arg(rto_overflow)?;
    if spec.rounding.random_bits() > 0 {
        return Err(PyValueError::new_err(
            "rounding: dot rounds in a deterministic mode (rne, rna, rtp, rtn, rtz, rto)",
        ));
    }
    let (xv, yv, sxv, syv, zv) = (
        x.slice()?,
        y.slice()?,
        sx.slice()?,
        sy.slice()?,
        z.as_slice()?,
    );
    if n == 0 || xv.len() % n != 0 || xv.len() != yv.len() {
        return Err(PyValueError::new_err(format!(
            "x and y must hold rows of n = {n} codes each; got {} and {} codes",
            xv.len(),
            yv.len()
        )));
    }
    let m = xv.len() / n;
    let fsf = fs.map(|f| f.f);
    if fsf.is_some() && (sxv.len() != m || syv.len() != m) {
        return Err(PyValueError::new_err(format!(
            "scale_x and scale_y need one code per row ({m}); got {} and {}",
            sxv.len(),
            syv.len()
        )));
    }
    let z64v = z64
        .as_ref()
        .map(|z| z.as_slice())
        .transpose()?
        .unwrap_or(&[]);
    for zl in [zv.len(), z64v.len()] {
        if zl != 0 && zl != m {
            return Err(PyValueError::new_err(format!(
                "z needs one value per row ({m}); got {zl}"
            )));
        }
    }
    py.detach(|| xv.check(&fx.f, "x").and_then(|_| yv.check(&fy.f, "y")))?;
    if fz != Format::BINARY32 {
        check_codes(&fz, zv, "z")?;
    }
    if let Some(f) = &fsf {
        py.detach(|| {
            sxv.check(f, "scale_x")
                .and_then(|_| syv.check(f, "scale_y"))
        })?;
    }
    let addend = (!zv.is_empty()).then_some(fz);
    let unit = golden::DotUnit::new(fx.f, fy.f, n, fsf, addend, fr.f).map_err(|e| {
        // name the argument the golden model's message is about
        let arg = if e.starts_with("block scale format") || e.starts_with("scale format") {
            "scale_fmt"
        } else if e.starts_with("result format") {
            "out_fmt"
        } else if e.starts_with("a dot product has") {
            "x, y"
        } else {
            "fmt, fmt_y"
        };
        PyValueError::new_err(format!("{arg}: {e}"))
    })?;
    let to = fr.f;
    let golden = |i: usize| {
        let (a, c) = if fsf.is_some() {
            (sxv.get(i), syv.get(i))
        } else {
            (0, 0)
        };
        let zz = zv.get(i).copied().unwrap_or(0);
        let (mut xs, mut ys) = ([0u32; golden::MAX_DOT_N], [0u32; golden::MAX_DOT_N]);
        for j in 0..n {
            xs[j] = xv.get(i * n + j);
            ys[j] = yv.get(i * n + j);
        }
        match z64v.get(i) {
            Some(&z) => {
                let (ze, snan) = f64_exact(z);
                unit.eval_exact_addend(&xs[..n], &ys[..n], a, c, &ze, snan, &spec)
            }
            None => unit.eval(&xs[..n], &ys[..n], a, c, zz, &spec),
        }
    };
    let tables = if fast
        && to == Format::BINARY32
        && fz == Format::BINARY32
        && spec.rounding == Rounding::Rne
        && m >= 64
    {
        exact_product_tables(fx.f, fy.f).filter(|(tx, ty)| {
            // every partial sum of n products is a multiple of 2^(lsb_x + lsb_y) below
            // n·2^(top_x + top_y): exact in f64 when that span is at most 53 bits
            let log2n = usize::BITS - (n - 1).leading_zeros();
            log2n as i32 + tx.top + ty.top - (tx.lsb + ty.lsb) <= 53
        })
    } else {
        None
    };
    // Scale factors Sx·Sy as f64 powers of two (E8M0 and every scale format of at most 8 bits
    // whose values are powers of two): multiplying the exact sum by one is exact unless the
    // result leaves the f64 normal range, and then it is tiny or infinite for binary32 too.
    let scales = match fsf {
        None => Some(None),
        Some(f) => pow2_table(f).map(Some),
    };
    let (Some((tx, ty)), Some(scales)) = (tables, scales) else {
        return Ok(collect_for(py, &to, m, flags, golden));
    };
    // The products and their sum exact in f64 (a NaN or ∞ operand or scale makes the sum NaN
    // or ∞: the golden path answers), scaled exactly, + z checked exact, one rounding to
    // binary32.
    // s: the row's sum, already scaled
    let (px, py8) = (table256(&tx.v), table256(&ty.v));
    let simd = simd::Dot8::pair(&tx, &ty).filter(|_| n.is_multiple_of(32));
    let sums = |r0: usize, out: &mut [f64]| match (xv, yv) {
        (Codes::U8(a), Codes::U8(b)) => {
            let rows = r0..r0 + out.len();
            let (ra, rb) = (
                &a[rows.start * n..rows.end * n],
                &b[rows.start * n..rows.end * n],
            );
            // The vector kernel sums 32 products at a time: a row of n = 32·h is h of them.
            let done = match &simd {
                Some((dx, dy)) if n == 32 => simd::sums32(ra, rb, dx, dy, out),
                Some((dx, dy)) => {
                    let h = n / 32;
                    let mut part = vec![0.0f64; out.len() * h];
                    let done = simd::sums32(ra, rb, dx, dy, &mut part) / h;
                    for (s, p) in out.iter_mut().zip(part.chunks_exact(h)).take(done) {
                        *s = p.iter().sum();
                    }
                    done
                }
                None => 0,
            };
            for (k, s) in out.iter_mut().enumerate().skip(done) {
                let (xr, yr) = (&ra[k * n..(k + 1) * n], &rb[k * n..(k + 1) * n]);
                *s = sum_u8(xr, yr, &px, &py8);
            }
        }
        _ => {
            for (k, s) in out.iter_mut().enumerate() {
                let j0 = (r0 + k) * n;
                *s = (j0..j0 + n)
                    .map(|j| tx.v[xv.get(j) as usize] * ty.v[yv.get(j) as usize])
                    .sum();
            }
        }
    };
    // one chunk of rows: sums in (scaled here), codes and flags (when wanted) out
    let finish_rows =
        |r0: usize, sums: &mut [f64], err: &mut [f64], codes: &mut [u32], fl: &mut [u8]| {
            if let Some(t) = &scales {
                let rows = r0..r0 + sums.len();
                match (sxv, syv) {
                    (Codes::U8(a), Codes::U8(b)) => {
                        for ((s, &a), &b) in sums.iter_mut().zip(&a[rows.clone()]).zip(&b[rows]) {
                            *s *= t[a as usize] * t[b as usize];
                        }
                    }
                    _ => {
                        for (s, i) in sums.iter_mut().zip(rows) {
                            *s *= t[(sxv.get(i) & 0xFF) as usize] * t[(syv.get(i) & 0xFF) as usize];
                        }
                    }
                }
            }
            // + z in f64, then the binary32 rounding of every row in branch-free passes (the
            // rule of [`rne_f32`]); rows it does not answer are marked and go to the golden path
            let rows = r0..r0 + sums.len();
            let has_z = !zv.is_empty() || !z64v.is_empty();
            if !zv.is_empty() {
                for ((s, e), &z) in sums.iter_mut().zip(err.iter_mut()).zip(&zv[rows.clone()]) {
                    (*s, *e) = two_sum(*s, f32::from_bits(z) as f64);
                }
            } else if !z64v.is_empty() {
                for ((s, e), &z) in sums.iter_mut().zip(err.iter_mut()).zip(&z64v[rows.clone()]) {
                    (*s, *e) = two_sum(*s, f64::from_bits(z));
                }
            }
            if !fl.is_empty() {
                for ((f, &s), &e) in fl.iter_mut().zip(sums.iter()).zip(err.iter()) {
                    let e = if has_z { e } else { 0.0 };
                    let inexact = (s as f32 as f64 != s) | (e != 0.0);
                    *f = if inexact { Flags::INEXACT } else { 0 };
                }
            }
            let mut golden_rows = false;
            for ((c, &s), e) in codes.iter_mut().zip(sums.iter()).zip(err.iter_mut()) {
                let r = s as f32;
                *c = r.to_bits();
                let taken = rne_f32_taken(s, if has_z { *e } else { 0.0 }, r);
                golden_rows |= !taken;
                *e = if taken { 0.0 } else { 1.0 };
            }
            if golden_rows {
                for (j, _) in err.iter().enumerate().filter(|(_, &e)| e != 0.0) {
                    let (c, f) = cold(|| golden(r0 + j));
                    codes[j] = c;
                    if let Some(d) = fl.get_mut(j) {
                        *d = f.0;
                    }
                }
            }
        };
    let (codes, fl) = py.detach(|| dot_rows(m, n, flags, sums, finish_rows));
    Ok((
        PyArray1::from_vec(py, codes).into_any(),
        fl.map(|f| PyArray1::from_vec(py, f).into_any()),
    ))
}

/// The exact f64 sum of the products of two rows of u8 codes (value tables `tx`, `ty` whose
/// n-term sums are exact in f64): eight independent partial sums, since every order gives
/// the same exact sum.
#[inline]
fn sum_u8(ra: &[u8], rb: &[u8], tx: &[f64; 256], ty: &[f64; 256]) -> f64 {
    let mut acc = [0.0f64; 8];
    let (ca, cb) = (ra.chunks_exact(8), rb.chunks_exact(8));
    let (ta, tb) = (ca.remainder(), cb.remainder());
    for (xa, yb) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += tx[xa[k] as usize] * ty[yb[k] as usize];
        }
    }
    for (&x, &y) in ta.iter().zip(tb) {
        acc[0] += tx[x as usize] * ty[y as usize];
    }
    acc.iter().sum()
}

/// `f()`, kept out of line: the golden fallback of a fast path's loop, which then inlines
/// the fast path itself.
#[cold]
#[inline(never)]
fn cold<T>(f: impl FnOnce() -> T) -> T {
    f()
}

/// Rows of the dot fast path per parallel task.
const ROW_CHUNK: usize = 1 << 11;

/// The binary32 results (and flags) of `m` dot products of `n` elements: `sums(first_row,
/// out)` fills the exact sums of consecutive rows, `finish(first_row, sums, scratch, codes,
/// flags)` rounds them (flags empty when not wanted; scratch: one f64 per row, any values).
/// Chunks of
/// [`ROW_CHUNK`] rows are summed then finished while in cache: on the calling thread for
/// short inputs, over the worker threads for long ones (each row is computed by the same
/// functions either way).
fn dot_rows(
    m: usize,
    n: usize,
    want_flags: bool,
    sums: impl Fn(usize, &mut [f64]) + Sync,
    finish: impl Fn(usize, &mut [f64], &mut [f64], &mut [u32], &mut [u8]) + Sync,
) -> (Vec<u32>, Option<Vec<u8>>) {
    let mut codes = vec![0u32; m];
    let mut flags = vec![0u8; if want_flags { m } else { 0 }];
    // scratch of a worker (sums and a second row of f64), allocated once per worker
    type Scratch = (Vec<f64>, Vec<f64>);
    let scratch = || -> Scratch { (vec![0.0; ROW_CHUNK], vec![0.0; ROW_CHUNK]) };
    let chunk = |(s, e): &mut Scratch, k: usize, cs: &mut [u32], fs: &mut [u8]| {
        let r0 = k * ROW_CHUNK;
        let (s, e) = (&mut s[..cs.len()], &mut e[..cs.len()]);
        sums(r0, s);
        finish(r0, s, e, cs, fs);
    };
    let t = threads();
    match (t > 1 && m * n >= PAR_MIN).then(|| pool(t)).flatten() {
        Some(p) => p.install(|| {
            let fl: Vec<&mut [u8]> = if want_flags {
                flags.chunks_mut(ROW_CHUNK).collect()
            } else {
                codes.chunks(ROW_CHUNK).map(|_| &mut [][..]).collect()
            };
            codes
                .par_chunks_mut(ROW_CHUNK)
                .zip(fl)
                .enumerate()
                .for_each_init(scratch, |sc, (k, (cs, fs))| chunk(sc, k, cs, fs))
        }),
        None => {
            let mut sc = scratch();
            let mut fl = flags.chunks_mut(ROW_CHUNK);
            for (k, cs) in codes.chunks_mut(ROW_CHUNK).enumerate() {
                chunk(&mut sc, k, cs, fl.next().unwrap_or(&mut []));
            }
        }
    }
    (codes, want_flags.then_some(flags))
}

/// The values of a scale format of at most 8 bits whose every finite nonzero value is a power
/// of two (E8M0, …), as f64 (NaN-padded to 256 entries); None for other formats.
fn pow2_table(f: Format) -> Option<Box<[f64; 256]>> {
    let t = value_table(f).filter(|t| f.k <= 8 && t.prec == 1)?;
    Some(table256(&t.v))
}

/// The AVX-512 (VBMI) dot kernel: 64 codes per step, each code's binary32 value looked up as
/// its two high bytes (`vpermi2b`, 128-entry byte tables; formats whose values are binary32
/// with at most 8 significant bits), products of two binary32 values (exact: at most 16
/// significant bits, in range), widened to f64 and summed (exact: the span check of the
/// caller). Other machines and formats take [`sum_u8`].
mod simd {
    use super::ValueTable;

    /// Bytes 3 and 2 of the binary32 value of every code (canonical NaN for NaN codes), and
    /// whether code bit 7 is the sign of the value of the other seven (`c | 0x80` is −c, a NaN
    /// for a NaN): then the kernel looks up the 128 magnitudes and ORs the sign in.
    pub struct Dot8 {
        hi: [u8; 256],
        mid: [u8; 256],
        sign7: bool,
    }

    impl Dot8 {
        fn new(t: &ValueTable) -> Option<Dot8> {
            let mut d = Dot8 {
                hi: [0; 256],
                mid: [0; 256],
                sign7: t.v.len() == 256,
            };
            for (c, &v) in t.v.iter().enumerate().take(256) {
                let b = if v.is_nan() {
                    0x7FC0_0000
                } else {
                    (v as f32).to_bits()
                };
                if !v.is_nan() && f32::from_bits(b) as f64 != v || b & 0xFFFF != 0 {
                    return None;
                }
                (d.hi[c], d.mid[c]) = ((b >> 24) as u8, (b >> 16) as u8);
            }
            for c in (0..128).filter(|_| t.v.len() == 256) {
                let (p, n) = (t.v[c], t.v[c | 0x80]);
                d.sign7 &= (p.is_nan() && n.is_nan()) || (n == -p && n.is_sign_negative());
            }
            Some(d)
        }

        /// Tables of `tx` and `ty` when this machine has the kernel's instructions and every
        /// product of a value of one and of the other is exact in binary32.
        pub fn pair(tx: &ValueTable, ty: &ValueTable) -> Option<(Dot8, Dot8)> {
            let exact =
                tx.prec + ty.prec <= 24 && tx.lsb + ty.lsb >= -149 && tx.top + ty.top <= 128;
            if !(exact && available()) {
                return None;
            }
            let (dx, dy) = (Dot8::new(tx)?, Dot8::new(ty)?);
            Some((dx, dy))
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn available() -> bool {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vbmi")
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn available() -> bool {
        false
    }

    /// `out[k]` = the exact sum of the products `a[j]·b[j]`, `32k ≤ j < 32k + 32`, for the
    /// first `8·⌊len/256⌋` values of k (returned; the caller sums the rest). Only with tables
    /// from [`Dot8::pair`].
    #[cfg(target_arch = "x86_64")]
    pub fn sums32(a: &[u8], b: &[u8], tx: &Dot8, ty: &Dot8, out: &mut [f64]) -> usize {
        // SAFETY: Dot8::pair returned tables only after checking that the CPU has AVX-512 F,
        // BW and VBMI.
        unsafe {
            match (tx.sign7, ty.sign7) {
                (true, true) => x86::sums32::<true, true>(a, b, tx, ty, out),
                (true, false) => x86::sums32::<true, false>(a, b, tx, ty, out),
                (false, true) => x86::sums32::<false, true>(a, b, tx, ty, out),
                (false, false) => x86::sums32::<false, false>(a, b, tx, ty, out),
            }
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub fn sums32(_: &[u8], _: &[u8], _: &Dot8, _: &Dot8, _: &mut [f64]) -> usize {
        0
    }

    #[cfg(target_arch = "x86_64")]
    mod x86 {
        use super::Dot8;
        use std::arch::x86_64::*;

        /// The byte of table `t` (4 × 64 entries) at every code of `x`; with `SIGN7` from the
        /// first 128 entries, ORed with code bit 7 when `or_sign`.
        #[inline]
        #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
        fn look<const SIGN7: bool>(x: __m512i, t: &[__m512i; 4], or_sign: bool) -> __m512i {
            let lo = _mm512_permutex2var_epi8(t[0], x, t[1]);
            if SIGN7 {
                if !or_sign {
                    return lo;
                }
                // lo | (x & 0x80)
                return _mm512_ternarylogic_epi32::<0xF8>(lo, x, _mm512_set1_epi8(-128));
            }
            let hi = _mm512_permutex2var_epi8(t[2], x, t[3]);
            _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi)
        }

        #[inline]
        #[target_feature(enable = "avx512f")]
        fn load(t: &[u8; 256]) -> [__m512i; 4] {
            // SAFETY: offsets 0..256 of a 256-byte array
            [0, 64, 128, 192].map(|o| unsafe { _mm512_loadu_si512(t.as_ptr().add(o).cast()) })
        }

        /// 64 codes of x and of y: the products of codes 0..32 summed in the eight f64 lanes
        /// of the first vector, of codes 32..64 in the second (unpacking stays within
        /// 128-bit lanes: lanes 0 and 1 hold codes 0..32).
        #[inline]
        #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
        fn block<const SX: bool, const SY: bool>(
            x: __m512i,
            y: __m512i,
            t: &[[__m512i; 4]; 4],
        ) -> (__m512d, __m512d) {
            let z = _mm512_setzero_si512();
            let (xh, xm) = (look::<SX>(x, &t[0], true), look::<SX>(x, &t[1], false));
            let (yh, ym) = (look::<SY>(y, &t[2], true), look::<SY>(y, &t[3], false));
            let (mut lo, mut hi) = (_mm512_setzero_pd(), _mm512_setzero_pd());
            for (xw, yw) in [
                (_mm512_unpacklo_epi8(xm, xh), _mm512_unpacklo_epi8(ym, yh)),
                (_mm512_unpackhi_epi8(xm, xh), _mm512_unpackhi_epi8(ym, yh)),
            ] {
                for (fx, fy) in [
                    (_mm512_unpacklo_epi16(z, xw), _mm512_unpacklo_epi16(z, yw)),
                    (_mm512_unpackhi_epi16(z, xw), _mm512_unpackhi_epi16(z, yw)),
                ] {
                    let p = _mm512_mul_ps(_mm512_castsi512_ps(fx), _mm512_castsi512_ps(fy));
                    lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(p)));
                    let ph = _mm512_extractf64x4_pd::<1>(_mm512_castps_pd(p));
                    hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_castpd_ps(ph)));
                }
            }
            (lo, hi)
        }

        /// Lane-pair sums: lane 2i of the result = a[2i] + a[2i+1], lane 2i+1 = b[2i] + b[2i+1].
        #[inline]
        #[target_feature(enable = "avx512f")]
        fn pairs(a: __m512d, b: __m512d) -> __m512d {
            _mm512_add_pd(_mm512_unpacklo_pd(a, b), _mm512_unpackhi_pd(a, b))
        }

        /// 128-bit lane sums: lane i of the result = lanes 2i and 2i+1 of a (i < 2), of b (i ≥ 2).
        #[inline]
        #[target_feature(enable = "avx512f")]
        fn lanes(a: __m512d, b: __m512d) -> __m512d {
            _mm512_add_pd(
                _mm512_shuffle_f64x2::<0b10_00_10_00>(a, b),
                _mm512_shuffle_f64x2::<0b11_01_11_01>(a, b),
            )
        }

        #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
        pub(super) fn sums32<const SX: bool, const SY: bool>(
            a: &[u8],
            b: &[u8],
            tx: &Dot8,
            ty: &Dot8,
            out: &mut [f64],
        ) -> usize {
            let t = [load(&tx.hi), load(&tx.mid), load(&ty.hi), load(&ty.mid)];
            // eight sums (256 codes) per step
            let steps = a.len().min(b.len()).min(out.len() * 32) / 256;
            for g in 0..steps {
                let mut v = [_mm512_setzero_pd(); 8];
                for k in 0..4 {
                    let off = g * 256 + k * 64;
                    // SAFETY: off + 64 <= 256·steps <= a.len(), b.len()
                    let (x, y) = unsafe {
                        (
                            _mm512_loadu_si512(a.as_ptr().add(off).cast()),
                            _mm512_loadu_si512(b.as_ptr().add(off).cast()),
                        )
                    };
                    (v[2 * k], v[2 * k + 1]) = block::<SX, SY>(x, y, &t);
                }
                let r = lanes(
                    lanes(pairs(v[0], v[1]), pairs(v[2], v[3])),
                    lanes(pairs(v[4], v[5]), pairs(v[6], v[7])),
                );
                // SAFETY: 8·g + 8 <= 8·steps <= out.len()
                unsafe { _mm512_storeu_pd(out.as_mut_ptr().add(8 * g), r) };
            }
            8 * steps
        }
    }
}

/// `fmt` given as a Format, a name or a numpy/ml_dtypes dtype, as a Format; errors name `what`.
#[pyfunction]
fn _format_of(fmt: &Bound<'_, PyAny>, what: &str) -> PyResult<PyFormat> {
    format_of(fmt, what).map(|f| PyFormat { f }).map_err(|e| {
        let py = fmt.py();
        let msg = e.value(py).to_string();
        let msg = if msg.starts_with(&format!("{what}:")) {
            msg
        } else {
            format!("{what}: {msg}")
        };
        if e.is_instance_of::<PyTypeError>(py) {
            PyTypeError::new_err(msg)
        } else {
            PyValueError::new_err(msg)
        }
    })
}

/// Presets: (name, description) in the order `fp8gen formats` lists them.
#[pyfunction]
fn presets() -> Vec<(&'static str, &'static str)> {
    golden::PRESETS.iter().map(|(n, _, d)| (*n, *d)).collect()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyFormat>()?;
    m.add_function(wrap_pyfunction!(_project, m)?)?;
    m.add_function(wrap_pyfunction!(_decode, m)?)?;
    m.add_function(wrap_pyfunction!(_mul, m)?)?;
    m.add_function(wrap_pyfunction!(_convert, m)?)?;
    m.add_function(wrap_pyfunction!(_quantize_block, m)?)?;
    m.add_function(wrap_pyfunction!(_add, m)?)?;
    m.add_function(wrap_pyfunction!(_fma, m)?)?;
    m.add_function(wrap_pyfunction!(_fma_f64, m)?)?;
    m.add_function(wrap_pyfunction!(_dot, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(_format_of, m)?)?;
    m.add_function(wrap_pyfunction!(_set_threads, m)?)?;
    m.add_function(wrap_pyfunction!(_get_threads, m)?)?;
    m.add("VERSION", golden::VERSION)?;
    Ok(())
}
