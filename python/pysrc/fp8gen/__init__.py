"""fp8gen: the bit-exact golden model of fp8gen for numpy arrays.

Formats are ``Format`` objects (``Format("e4m3")``, P3109 names such as
``Format("binary8p3se")``, or custom ``Format(k=7, p=3, bias=5, signed=False,
specials="p3109-extended")``); any function taking a format also takes its name (ml_dtypes'
names included) or a numpy / ml_dtypes dtype (``ml_dtypes.float8_e4m3fn``, ``np.float16``).
``Format("e4m3") == "e4m3"``; formats hash as their canonical name and pickle.

Every element loop runs in Rust (``fp8gen._native``) with the GIL released, arrays of 64 Ki
elements or more split over every core (``set_num_threads(1)`` keeps them on the calling
thread; results never depend on the split); this module only
checks arguments, dtypes and shapes, makes arrays contiguous and reshapes the results, so
results keep the shape of the inputs (``mul``/``fma``/``dot`` operands broadcast against each
other). Arrays may be given as array-likes (``__array__``, ``__dlpack__``), lists or Python
scalars; float64 values are projected exactly, with one rounding. Every bad argument raises
ValueError or TypeError naming it.

Every function but ``decode`` returns codes of its result format by default: dtype uint8
(K <= 8), uint16 (K <= 16) or uint32 (binary32; ``fma`` and ``dot`` included). With
``as_values=True`` it returns values instead (one rule, ``value_dtype_of``):

* binary32: float32 (a view of the codes);
* binary16: float16 (a view of the codes);
* a format ml_dtypes has, when it is installed (e4m3, e5m2, e4m3fnuz, e5m2fnuz, e4m3b11fnuz,
  e4m3-ieee, e3m4, e3m2, e2m3, e2m1, e8m0, bfloat16): that ml_dtypes type (float8_e4m3fn, ...,
  bfloat16), a zero-copy view of the codes;
* other formats whose values are all exact in binary32 (``Format.value_dtype``): float32;
* other formats exact in binary64: float64;
* other formats: ValueError (use the codes).

``decode`` always returns values (float32 when every value of the format is exact in binary32,
else float64). Scalars in, scalars out: when every array argument is a Python or numpy scalar
(0-d), results (and flags) are numpy scalars, e.g. ``project(1.0, "e4m3") == np.uint8(0x38)``.
With ``flags=True`` a second uint8 array holds the IEEE-style flags
{invalid, overflow, underflow, inexact} as bits 3..0 (``INVALID`` ... ``INEXACT``).
Formats without NaN (the ``nonan`` family: OCP MX E2M1/E2M3/E3M2) write ``nan_code``
(default +0) for a NaN result and raise ``invalid``.
"""

import numpy as np

try:  # optional: the as_values=True dtypes of the formats it has
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is in python/requirements.txt
    _ml_dtypes = None

from ._native import VERSION, Format, presets
from ._native import _add, _convert, _decode, _dot, _fma, _fma_f64, _format_of, _get_threads, _mul, _project, _quantize_block, _set_threads

__all__ = [
    "Format",
    "presets",
    "project",
    "convert",
    "quantize_block",
    "dequantize_block",
    "decode",
    "mul",
    "add",
    "fma",
    "dot",
    "INVALID",
    "OVERFLOW",
    "UNDERFLOW",
    "INEXACT",
    "MAX_DOT_N",
    "set_num_threads",
    "get_num_threads",
    "value_dtype_of",
    "__version__",
]

__version__ = VERSION

def set_num_threads(n):
    """Worker threads of the element loops: 0 (the default) = every core, 1 = the calling
    thread only. Arrays shorter than 64 Ki elements always run on the calling thread."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n: expected an int, got {type(n).__name__}")
    if not 0 <= int(n) <= 1024:
        raise ValueError(f"n: {int(n)} is out of range 0..=1024 (0 = every core)")
    _set_threads(int(n))


def get_num_threads():
    """The number of worker threads long arrays are split over."""
    return _get_threads()


#: Flag bits of the flags arrays (the RISC-V ``fflags`` order without divide-by-zero).
INVALID = 8
OVERFLOW = 4
UNDERFLOW = 2
INEXACT = 1


def _format(fmt, what="fmt"):
    """A Format from a Format, a name, or a numpy / ml_dtypes dtype; errors name ``what``."""
    if isinstance(fmt, Format):
        return fmt
    return _format_of(fmt, what)


def _typename(a):
    return type(a).__name__


def _array(a, what):
    """An ndarray view of ``a`` (no copy where possible): ndarrays, Python scalars, lists and
    tuples, numpy scalars, objects with ``__array__`` or ``__dlpack__``. Masked arrays are
    refused: their mask would be silently dropped."""
    if isinstance(a, np.ma.MaskedArray):
        raise TypeError(
            f"{what}: masked arrays are not supported (the mask would be dropped); "
            f"pass {what}.filled(value) or {what}.data"
        )
    if isinstance(a, np.ndarray):
        return a
    try:
        if isinstance(a, (list, tuple, int, float, bool, np.generic)) or hasattr(a, "__array__"):
            return np.asarray(a)
        if hasattr(a, "__dlpack__"):
            return np.from_dlpack(a)
    except (ValueError, TypeError, RuntimeError, BufferError) as e:
        raise ValueError(f"{what}: cannot make a numpy array of it ({e})") from None
    raise TypeError(
        f"{what}: expected a numpy array (or an array-like, a list or a scalar), got {_typename(a)}"
    )


def _native_order(a):
    if a.dtype.byteorder not in "=|" and not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return a


def _python_ints_as_float64(a, src, what):
    """Integers given as Python scalars/lists: their exact binary64 values (|v| <= 2^53)."""
    if not isinstance(src, np.ndarray) and a.dtype == object and a.size and \
            all(isinstance(v, int) and not isinstance(v, bool) for v in a.reshape(-1).tolist()):
        m = max(abs(v) for v in a.reshape(-1).tolist())
        raise ValueError(f"{what}: integer {m} is not exact in binary64 (at most 2^53 in magnitude)")
    if not isinstance(src, np.ndarray) and a.dtype.kind in "iu":
        m = max((abs(int(v)) for v in a.reshape(-1).tolist()), default=0)
        if m > 2**53:
            raise ValueError(f"{what}: integer {m} is not exact in binary64 (at most 2^53 in magnitude)")
        return a.astype(np.float64)
    return a


def _float_bits(values, what="values"):
    """(1-D contiguous bit array, source format name) of a float64/float32/float16/bfloat16
    array."""
    a = _native_order(values)
    dt = a.dtype
    if dt == np.float64:
        src, view = "binary64", np.uint64
    elif dt == np.float32:
        src, view = "binary32", np.uint32
    elif dt == np.float16:
        src, view = "binary16", np.uint16
    elif dt.name == "bfloat16" and dt.itemsize == 2:
        # ml_dtypes.bfloat16 (or any 2-byte dtype named bfloat16): reinterpret the bits.
        src, view = "bfloat16", np.uint16
    else:
        raise TypeError(
            f"{what}: unsupported dtype {dt}; expected float64, float32, float16 or bfloat16 "
            f"(convert others first, e.g. {what}.astype(np.float32))"
        )
    return np.ascontiguousarray(a).reshape(-1).view(view), src


def _float32_operand(z, what):
    """``z`` as float32 without rounding: float32 as is, float16/bfloat16 and Python numbers
    widened exactly; float64 only where every value is exact in binary32 (the golden FMA and
    dot product add a binary32 addend; rounding z first would be a second rounding)."""
    src = z
    za = _python_ints_as_float64(_native_order(_array(z, what)), src, what)
    if za.dtype == np.float32:
        return za
    if za.dtype == np.float16 or (za.dtype.name == "bfloat16" and za.dtype.itemsize == 2):
        return za.astype(np.float32)
    if za.dtype == np.float64:
        with np.errstate(all="ignore"):
            z32 = za.astype(np.float32)
        bad = ~((z32 == za) | (np.isnan(za) & np.isnan(z32)))
        if bad.any():
            v = za[bad].reshape(-1)[0]
            raise ValueError(
                f"{what}: float64 value {float(v)!r} is not exact in binary32; the addend is binary32 "
                f"(fp8gen's model has no binary64 addend): round it yourself, e.g. "
                f"{what}.astype(np.float32), or pass float32"
            )
        snan = np.isnan(za) & ((za.view(np.uint64) >> np.uint64(51)) & np.uint64(1) == 0)
        if snan.any():
            raise ValueError(
                f"{what}: a signaling float64 NaN has no binary32 counterpart (converting it is "
                f"an invalid operation); pass float32 (a signaling binary32 NaN raises invalid)"
            )
        return z32
    raise TypeError(f"{what}: expected a float32 array (or float16, bfloat16, or float64 exact in binary32), got {za.dtype}")


def _addend(z, what):
    """``z`` without rounding: float32 as is, float16/bfloat16 widened exactly, float64 (and
    Python numbers) as float32 where every value is exact in binary32 (the fast binary32
    path), else as float64, added exactly (no rounding of z to binary32 first)."""
    src = z
    za = _python_ints_as_float64(_native_order(_array(z, what)), src, what)
    if za.dtype == np.float32:
        return za
    if za.dtype == np.float16 or (za.dtype.name == "bfloat16" and za.dtype.itemsize == 2):
        return za.astype(np.float32)
    if za.dtype == np.float64:
        with np.errstate(all="ignore"):
            z32 = za.astype(np.float32)
        exact = (z32 == za) | (np.isnan(za) & np.isnan(z32))
        # a signaling float64 NaN stays float64: it raises invalid, as a binary32 one does
        snan = np.isnan(za) & ((za.view(np.uint64) >> np.uint64(51)) & np.uint64(1) == 0)
        return z32 if exact.all() and not snan.any() else za
    raise TypeError(f"{what}: expected a float32 array (or float64, float16, bfloat16), got {za.dtype}")


def _codes(a, fmt, what, narrow=False):
    """1-D contiguous uint32 copy/view of an integer code array (range checked in Rust); with
    ``narrow``, uint8 and uint16 arrays are passed as they are (no widening copy)."""
    a = _array(a, what)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        with np.errstate(all="ignore"):
            f = a.astype(np.float64)
        bad = ~np.isfinite(f) | (f != np.round(f))
        if bad.any():
            raise ValueError(f"{what}: {float(f[bad].reshape(-1)[0])!r} is not a code of {fmt.name} (codes are integers)")
    if a.dtype.kind not in "ui":
        raise TypeError(
            f"{what}: code arrays must have an integer dtype (uint8/uint16/uint32), got {a.dtype}"
        )
    if a.size:
        if a.dtype.kind == "i" and a.min() < 0:
            raise ValueError(f"{what}: negative value {int(a.min())} is not a code of {fmt.name}")
        if a.dtype.itemsize > 4 and a.max() > 0xFFFFFFFF:
            raise ValueError(f"{what}: 0x{int(a.max()):x} is not a code of {fmt.name} ({fmt.k} bits)")
    a = _native_order(a)
    if narrow and a.dtype in (np.uint8, np.uint16, np.uint32):
        return np.ascontiguousarray(a).reshape(-1)
    return np.ascontiguousarray(a, dtype=np.uint32).reshape(-1)


def _rnd(rnd, shape):
    if rnd is None:
        return None
    r = _array(rnd, "rnd")
    if r.dtype.kind not in "ui":
        raise TypeError(f"rnd: expected an unsigned integer array (uint32), got {r.dtype}")
    if r.shape != tuple(shape):
        raise ValueError(f"rnd has shape {r.shape}, the result has shape {tuple(shape)}")
    if r.size:
        if r.dtype.kind == "i" and r.min() < 0:
            raise ValueError("rnd: random values must be non-negative")
        if r.dtype.itemsize > 4 and r.max() > 0xFFFFFFFF:
            raise ValueError("rnd: random values must fit in 32 bits")
    r = _native_order(r)
    return np.ascontiguousarray(r, dtype=np.uint32).reshape(-1)


#: fp8gen formats with the same encoding as an ml_dtypes type (scripts/xcheck/check_refs.py
#: ML_TYPES); their codes are viewed as that type by ``as_values=True``.
_ML_TYPES = (
    ("e4m3", "float8_e4m3fn"),
    ("e5m2", "float8_e5m2"),
    ("e4m3fnuz", "float8_e4m3fnuz"),
    ("e5m2fnuz", "float8_e5m2fnuz"),
    ("e4m3b11fnuz", "float8_e4m3b11fnuz"),
    ("e4m3-ieee", "float8_e4m3"),
    ("e3m4", "float8_e3m4"),
    ("e3m2", "float6_e3m2fn"),
    ("e2m3", "float6_e2m3fn"),
    ("e2m1", "float4_e2m1fn"),
    ("e8m0", "float8_e8m0fnu"),
    ("bfloat16", "bfloat16"),
)


def _ml_type(fr):
    """The ml_dtypes type with the encoding of ``fr``, or None."""
    if _ml_dtypes is None:
        return None
    for name, ml in _ML_TYPES:
        if fr == name and hasattr(_ml_dtypes, ml):
            return np.dtype(getattr(_ml_dtypes, ml))
    return None


def value_dtype_of(fmt):
    """The dtype ``as_values=True`` returns for results in ``fmt`` (see the module docs), or
    None when no dtype holds every value of ``fmt`` exactly (``as_values=True`` raises)."""
    fr = _format(fmt)
    if fr == "binary32":
        return np.dtype(np.float32)
    if fr == "binary16":
        return np.dtype(np.float16)
    ml = _ml_type(fr)
    if ml is not None:
        return ml
    vd = fr.value_dtype
    return None if vd is None else np.dtype(vd)


def _values(codes, fr):
    """The values of the result codes ``codes`` (any shape) of ``fr`` (module docs' table)."""
    dt = value_dtype_of(fr)
    if dt is None:
        raise ValueError(
            f"as_values: the values of {fr.name} are not all exact in binary64, so no numpy "
            f"dtype holds them; use the codes (as_values=False)"
        )
    if fr == "binary32" or fr == "binary16" or _ml_type(fr) is not None:
        return codes.view(dt)  # same encoding: a zero-copy view
    flat = np.ascontiguousarray(codes, dtype=np.uint32).reshape(-1)
    return _decode(flat, fr).reshape(codes.shape)


def _result(codes, flags, shape, want_flags, fr=None, as_values=False, scalar=False):
    codes = codes.reshape(shape)
    if as_values:
        codes = _values(codes, fr)
    if scalar:
        codes = codes[()]
    if want_flags:
        flags = flags.reshape(shape)
        return codes, (flags[()] if scalar else flags)
    return codes


def _int(v, what):
    if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{what}: expected an int, got {_typename(v)}")
    return int(v)


def _sr_bits(sr_bits):
    v = _int(sr_bits, "sr_bits")
    if not 0 <= v <= 32:
        raise ValueError(f"sr_bits: {v} is out of range; stochastic rounding uses 1..=32 random bits")
    return v


def _nan_code(nan_code, fr):
    """``nan_code`` checked against the result format ``fr``: it must fit its K bits."""
    v = _int(nan_code, "nan_code")
    if not 0 <= v <= fr.code_mask:
        raise ValueError(
            f"nan_code: {v} is not a code of {fr.name}; expected 0..={fr.code_mask} ({fr.k} bits)"
        )
    return v


def _bool(v, what):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{what}: expected True or False, got {_typename(v)}")
    return bool(v)


def _str(v, what):
    if not isinstance(v, str):
        raise TypeError(f"{what}: expected a mode name (str), got {_typename(v)}")
    if not v.isascii():
        raise ValueError(f"{what}: unknown mode {v!r}; mode names are ASCII (e.g. rne, satfinite, after)")
    return v


def _modes(rounding, saturation, tininess):
    return _str(rounding, "rounding"), _str(saturation, "saturation"), _str(tininess, "tininess")


def project(
    values,
    fmt,
    rounding="rne",
    saturation="satfinite",
    flags=False,
    rnd=None,
    tininess="after",
    nan_code=0,
    sr_bits=8,
    as_values=False,
    rto_overflow="p3109",
):
    """Round float64 / float32 / float16 / bfloat16 ``values`` to ``fmt`` (RoundToPrecision ->
    Saturate -> Encode, P3109 v4.0 section 4.7), one rounding from the exact input value.
    Returns the code array (uint8 for K <= 8, uint16 for K <= 16, uint32 for binary32), or
    the values with ``as_values=True`` (module docs' table), and the flags array with
    ``flags=True``. ``values`` may be an array-like (``__array__``/``__dlpack__``), a list or
    a Python scalar (Python numbers are binary64); a scalar gives numpy scalars.

    ``rounding``: rne, rna, rtp, rtn, rtz, rto, or stochastic sra/srb/src with ``sr_bits``
    random bits per element given in ``rnd`` (uint32, same shape as ``values``).
    ``saturation``: satfinite, satpropagate, satnone, satnone-v4. ``tininess``: after/before
    (underflow flag). ``nan_code``: code written for NaN into a format without NaN.
    ``rto_overflow``: what rto gives on overflow under satnone, "p3109" (±Inf, P3109 §4.7.5)
    or "ieee" (the largest finite value, as SoftFloat's round_odd).
    """
    f = _format(fmt)
    rounding, saturation, tininess = _modes(rounding, saturation, tininess)
    want = _bool(flags, "flags")
    nc, sb = _nan_code(nan_code, f), _sr_bits(sr_bits)
    a = _python_ints_as_float64(_array(values, "values"), values, "values")
    bits, src = _float_bits(a)
    r = _rnd(rnd, a.shape)
    av = _bool(as_values, "as_values")
    codes, fl = _project(
        bits, src, f, rounding, sb, saturation, tininess, nc, r, want, rto_overflow=rto_overflow
    )
    return _result(codes, fl, a.shape, want, f, av, a.ndim == 0)


def convert(
    codes,
    from_fmt,
    fmt,
    rounding="rne",
    saturation="satfinite",
    flags=False,
    rnd=None,
    tininess="after",
    nan_code=0,
    sr_bits=8,
    as_values=False,
    rto_overflow="p3109",
):
    """Convert ``codes`` of ``from_fmt`` to ``fmt`` (any format to any other: e5m2 -> e4m3,
    e4m3 -> bfloat16, P3109 <-> OCP): the exact value of each code rounded once (P3109
    Convert), the function of the ``convert`` core (``fp8gen gen -u convert --in-format
    FROM -f FMT``). Modes, ``flags``, ``rnd``, ``as_values`` and ``rto_overflow`` as in
    :func:`project`."""
    fi = _format(from_fmt, "from_fmt")
    f = _format(fmt)
    rounding, saturation, tininess = _modes(rounding, saturation, tininess)
    want = _bool(flags, "flags")
    nc, sb = _nan_code(nan_code, f), _sr_bits(sr_bits)
    av = _bool(as_values, "as_values")
    a = _array(codes, "codes")
    r = _rnd(rnd, a.shape)
    c, fl = _convert(
        _codes(a, fi, "codes"), fi, f, rounding, sb, saturation, tininess, nc, r, want,
        rto_overflow=rto_overflow,
    )
    return _result(c, fl, a.shape, want, f, av, a.ndim == 0)


def quantize_block(
    values,
    fmt,
    block=32,
    scale_format="e8m0",
    policy="floor",
    rounding="rne",
    saturation="satfinite",
    flags=False,
    rnd=None,
    tininess="after",
    nan_code=0,
    sr_bits=8,
    rto_overflow="p3109",
):
    """MX block quantization (the function of the ``quantize`` core, ``fp8gen gen -u quantize
    -f FMT --n BLOCK``): the last axis of ``values`` (float32, float16 or bfloat16; float64
    and Python numbers only where exact in binary32) is split into blocks of ``block``
    elements; each block gets one power-of-two scale of ``scale_format`` (e8m0 or
    binary8p1uf) from its largest finite magnitude by ``policy`` (floor = OCP MX v1.0 section
    6.3, ceil, even, rceil = no element overflows; docs in golden/src/quantize.rs), and each
    element is divided by the scale and rounded once to ``fmt``. Returns ``(codes, scales)``
    (``codes`` the shape of ``values``, ``scales`` uint8 of shape ``values.shape[:-1] +
    (values.shape[-1] // block,)``), plus the OR of each block's element flags with
    ``flags=True``. Modes, ``rnd`` (one random word per element), ``tininess``, ``nan_code``,
    ``sr_bits`` and ``rto_overflow`` as in :func:`project`."""
    f = _format(fmt)
    sf = _format(scale_format, "scale_format")
    if not isinstance(block, (int, np.integer)) or isinstance(block, bool):
        raise TypeError(f"block: expected an int, got {_typename(block)}")
    if not isinstance(policy, str):
        raise TypeError(f"policy: expected floor, ceil, even or rceil (str), got {_typename(policy)}")
    rounding, saturation, tininess = _modes(rounding, saturation, tininess)
    want = _bool(flags, "flags")
    nc, sb = _nan_code(nan_code, f), _sr_bits(sr_bits)
    a = _native_order(_array(values, "values"))
    if not (a.dtype == np.float16 or (a.dtype.name == "bfloat16" and a.dtype.itemsize == 2)):
        a = _float32_operand(values, "values")
    if a.ndim == 0:
        raise ValueError("values: expected an array whose last axis holds the blocks, got a scalar")
    block = int(block)
    if block < 1 or a.shape[-1] % block != 0:
        raise ValueError(f"values: the last axis has {a.shape[-1]} elements, not a multiple of block = {block}")
    bits, src = _float_bits(a)
    r = _rnd(rnd, a.shape)
    codes, scales, fl = _quantize_block(
        bits, src, block, f, sf, policy, rounding, sb, saturation, tininess, nc, r, want,
        rto_overflow=rto_overflow,
    )
    sshape = a.shape[:-1] + (a.shape[-1] // block,)
    out = (codes.reshape(a.shape), scales.reshape(sshape))
    return out + (fl.reshape(sshape),) if want else out


def dequantize_block(codes, scales, fmt, block=32, scale_format="e8m0"):
    """The values of MX blocks: ``decode(codes, fmt)`` times ``2 ** scale`` per block of
    ``block`` elements along the last axis (``scales`` of shape ``codes.shape[:-1] +
    (codes.shape[-1] // block,)``, codes of ``scale_format``). float64 (every product is exact
    in it); a NaN scale makes its block NaN."""
    f = _format(fmt)
    sf = _format(scale_format, "scale_format")
    c = _array(codes, "codes")
    s = _array(scales, "scales")
    block = int(block)
    if c.ndim == 0 or block < 1 or c.shape[-1] % block != 0:
        raise ValueError(f"codes: the last axis must be a multiple of block = {block}")
    want = c.shape[:-1] + (c.shape[-1] // block,)
    if s.shape != want:
        raise ValueError(f"scales: expected shape {want} for codes of shape {c.shape}, got {s.shape}")
    v = decode(c, f).astype(np.float64)
    sv = decode(s, sf).astype(np.float64)
    return (v.reshape(want + (block,)) * sv[..., None]).reshape(c.shape)


def decode(codes, fmt):
    """Exact values of ``codes`` (integer array) in ``fmt``. The result is float32 when every
    value of the format is exact in binary32 (all 8-bit formats but E8M0 and the wide-range
    P3109 ones, and binary32/binary16/bfloat16), else float64 (``Format.value_dtype`` tells
    which); NaN codes give NaN; a scalar code gives a numpy scalar. Raises ValueError for
    formats whose values binary64 cannot hold exactly."""
    f = _format(fmt)
    a = _array(codes, "codes")
    c = _codes(a, f, "codes")
    v = _decode(c, f).reshape(a.shape)
    return v[()] if a.ndim == 0 else v


def _broadcast(*arrays, names):
    try:
        return np.broadcast_arrays(*arrays)
    except ValueError:
        shapes = ", ".join(f"{n} {a.shape}" for n, a in zip(names, arrays))
        raise ValueError(f"operand shapes do not broadcast: {shapes}") from None


def _broadcast_to(a, shape, what, one):
    try:
        return np.broadcast_to(a, shape)
    except ValueError:
        raise ValueError(
            f"{what}: shape {a.shape} does not broadcast to {tuple(shape)} ({one})"
        ) from None


def mul(
    x,
    y,
    fmt,
    fmt_y=None,
    out_fmt=None,
    rounding="rne",
    saturation="satfinite",
    flags=False,
    rnd=None,
    tininess="after",
    nan_code=0,
    sr_bits=8,
    as_values=False,
    rto_overflow="p3109",
):
    """``x * y`` rounded once to ``out_fmt`` (default ``fmt``). ``x`` holds codes of ``fmt``,
    ``y`` codes of ``fmt_y`` (default ``fmt``); they broadcast against each other. ``out_fmt``
    may be "binary32" (uint32 codes). Returns codes, or values with ``as_values=True``
    (module docs' table); numpy scalars when ``x`` and ``y`` are scalars. ``rto_overflow``:
    as :func:`project`."""
    fx = _format(fmt)
    fy = fx if fmt_y is None else _format(fmt_y, "fmt_y")
    fr = fx if out_fmt is None else _format(out_fmt, "out_fmt")
    rounding, saturation, tininess = _modes(rounding, saturation, tininess)
    want = _bool(flags, "flags")
    nc, sb = _nan_code(nan_code, fr), _sr_bits(sr_bits)
    av = _bool(as_values, "as_values")
    xa, ya = _broadcast(_array(x, "x"), _array(y, "y"), names=("x", "y"))
    shape = xa.shape
    r = _rnd(rnd, shape)
    codes, fl = _mul(
        _codes(xa, fx, "x"), _codes(ya, fy, "y"), fx, fy, fr,
        rounding, sb, saturation, tininess, nc, r, want, rto_overflow=rto_overflow,
    )
    return _result(codes, fl, shape, want, fr, av, len(shape) == 0)


def add(
    x,
    y,
    fmt,
    fmt_y=None,
    out_fmt=None,
    rounding="rne",
    saturation="satfinite",
    flags=False,
    rnd=None,
    tininess="after",
    nan_code=0,
    sr_bits=8,
    as_values=False,
    sub=False,
    rto_overflow="p3109",
):
    """``x + y`` (``x - y`` with ``sub=True``) computed exactly and rounded once to ``out_fmt``
    (default ``fmt``). ``x`` holds codes of ``fmt``, ``y`` codes of ``fmt_y`` (default ``fmt``);
    they broadcast against each other. ``out_fmt`` may be "binary16", "bfloat16" or "binary32".
    An exact zero sum is +0, or -0 under rounding "rtn" (IEEE 754 §6.3); Inf - Inf is NaN with
    invalid. Returns codes, or values with ``as_values=True`` (module docs' table); numpy
    scalars when ``x`` and ``y`` are scalars. The arguments are those of :func:`mul`."""
    fx = _format(fmt)
    fy = fx if fmt_y is None else _format(fmt_y, "fmt_y")
    fr = fx if out_fmt is None else _format(out_fmt, "out_fmt")
    rounding, saturation, tininess = _modes(rounding, saturation, tininess)
    want = _bool(flags, "flags")
    sb_ = _bool(sub, "sub")
    nc, sb = _nan_code(nan_code, fr), _sr_bits(sr_bits)
    av = _bool(as_values, "as_values")
    xa, ya = _broadcast(_array(x, "x"), _array(y, "y"), names=("x", "y"))
    shape = xa.shape
    r = _rnd(rnd, shape)
    codes, fl = _add(
        _codes(xa, fx, "x"), _codes(ya, fy, "y"), fx, fy, fr, sb_,
        rounding, sb, saturation, tininess, nc, r, want, rto_overflow=rto_overflow,
    )
    return _result(codes, fl, shape, want, fr, av, len(shape) == 0)


def fma(
    x,
    y,
    z,
    fmt,
    fmt_y=None,
    rounding="rne",
    saturation="satnone",
    flags=False,
    tininess="after",
    ftz=False,
    as_values=False,
    rto_overflow="p3109",
):
    """``x * y + z`` with x, y codes of ``fmt`` / ``fmt_y``, computed exactly and rounded once
    to binary32: uint32 codes (binary32 bit patterns), or float32 values with
    ``as_values=True``; numpy scalars when x, y and z are all scalars. ``z`` is float32
    (float16 and bfloat16 widened exactly) or float64 / Python numbers, added exactly (never
    rounded to binary32 first; a signaling float64 NaN raises invalid). ``rounding``: rne,
    rna, rtp, rtn, rtz, rto; ``saturation`` applies to the binary32 result (satnone = IEEE 754
    overflow to infinity). ``ftz``: subnormal (binary32) z reads as zero and subnormal results
    flush to zero (not with a float64 z). ``rto_overflow``: as :func:`project`."""
    fx = _format(fmt)
    fy = fx if fmt_y is None else _format(fmt_y, "fmt_y")
    rounding, saturation, tininess = _modes(rounding, saturation, tininess)
    want, ftz = _bool(flags, "flags"), _bool(ftz, "ftz")
    av = _bool(as_values, "as_values")
    za = _addend(z, "z")
    xa, ya, za = _broadcast(_array(x, "x"), _array(y, "y"), za, names=("x", "y", "z"))
    shape = xa.shape
    if za.dtype == np.float64:
        if ftz:
            raise ValueError("ftz: flush-to-zero reads a binary32 z (its subnormals); a float64 z "
                             "is added exactly: pass z as float32, or ftz=False")
        zb = np.ascontiguousarray(za).reshape(-1).view(np.uint64)
        r, fl = _fma_f64(_codes(xa, fx, "x", True), _codes(ya, fy, "y", True), zb, fx, fy,
                         rounding, saturation, tininess, want, rto_overflow=rto_overflow)
        return _result(r, fl, shape, want, _format("binary32"), av, len(shape) == 0)
    zb = np.ascontiguousarray(_native_order(za)).reshape(-1).view(np.uint32)
    r, fl = _fma(
        _codes(xa, fx, "x", True), _codes(ya, fy, "y", True), zb, fx, fy,
        rounding, saturation, tininess, ftz, want, rto_overflow=rto_overflow,
    )
    return _result(r, fl, shape, want, _format("binary32"), av, len(shape) == 0)


#: Largest number of elements of one dot product (golden::MAX_DOT_N).
MAX_DOT_N = 64


def dot(
    x,
    y,
    fmt,
    fmt_y=None,
    scale_x=None,
    scale_y=None,
    scale_fmt="e8m0",
    z=None,
    out_fmt="binary32",
    rounding="rne",
    saturation="satnone",
    flags=False,
    tininess="after",
    as_values=False,
):
    """Dot products along the last axis: ``sum(x[..., i] * y[..., i]) * 2^(sx + sy) + z``,
    every product and the sum exact, rounded once to ``out_fmt`` (P3109 BlockDotProduct, the
    OCP MX dot product). ``x``, ``y``: codes of ``fmt`` / ``fmt_y`` that broadcast against
    each other to a shape ``(..., N)``, N = 1..64; ``scale_x``, ``scale_y``: codes of
    ``scale_fmt`` broadcasting to ``(...)`` (one per dot product), or None; ``z``: addends
    broadcasting to ``(...)`` (as fma's z: float32, or float64 added exactly), or None.
    Returns the codes of ``out_fmt`` (uint32 for binary32), or values with ``as_values=True``
    (module docs' table); the result has shape ``(...)`` (a 0-d array for 1-D operands)."""
    fx = _format(fmt)
    fy = fx if fmt_y is None else _format(fmt_y, "fmt_y")
    fr = _format(out_fmt, "out_fmt")
    rounding, saturation, tininess = _modes(rounding, saturation, tininess)
    want = _bool(flags, "flags")
    av = _bool(as_values, "as_values")
    xa, ya = _broadcast(_array(x, "x"), _array(y, "y"), names=("x", "y"))
    if xa.ndim == 0:
        raise ValueError("x, y: dot needs arrays of shape (..., N); got 0-d operands")
    n = xa.shape[-1]
    if n == 0:
        raise ValueError("x, y: n = 0 elements: dot needs at least one element per row")
    if n > MAX_DOT_N:
        raise ValueError(f"x, y: n = {n} elements: dot takes 1..={MAX_DOT_N} elements per row")
    shape = xa.shape[:-1]
    empty = np.zeros(0, dtype=np.uint32)
    if (scale_x is None) != (scale_y is None):
        raise ValueError("scale_x, scale_y: give both scale_x and scale_y, or neither")
    fs = _format(scale_fmt, "scale_fmt")  # checked even when unused
    if scale_x is not None:
        sxa = _broadcast_to(_array(scale_x, "scale_x"), shape, "scale_x", "one scale code per dot product")
        sya = _broadcast_to(_array(scale_y, "scale_y"), shape, "scale_y", "one scale code per dot product")
        sx, sy = _codes(sxa, fs, "scale_x", True), _codes(sya, fs, "scale_y", True)
    else:
        fs, sx, sy = None, empty, empty
    z64 = None
    if z is not None:
        za = _broadcast_to(_addend(z, "z"), shape, "z", "one addend per dot product")
        if za.dtype == np.float64:
            zb, z64 = empty, np.ascontiguousarray(za).reshape(-1).view(np.uint64)
        else:
            zb = np.ascontiguousarray(za).reshape(-1).view(np.uint32)
    else:
        zb = empty
    r, fl = _dot(
        _codes(xa, fx, "x", True), _codes(ya, fy, "y", True), int(n), sx, sy, zb, fx, fy, fs, fr,
        rounding, saturation, tininess, want, z64=z64,
    )
    return _result(r, fl, shape, want, fr, av)
