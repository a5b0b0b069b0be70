"""fp8gen: the bit-exact golden model of fp8gen for numpy arrays.

Formats are ``Format`` objects (``Format("e4m3")``, P3109 names such as
``Format("binary8p3se")``, or custom ``Format(k=7, p=3, bias=5, signed=False,
specials="p3109-extended")``); any function taking a format also takes its name.

Every element loop runs in Rust (``fp8gen._native``) with the GIL released; this module only
checks dtypes and shapes, makes arrays contiguous and reshapes the results, so results keep the
shape of the inputs (``mul``/``fma`` operands broadcast against each other).

Results are code arrays of dtype uint8 (K <= 8), uint16 (K <= 16) or uint32 (binary32).
With ``flags=True`` a second uint8 array holds the IEEE-style flags
{invalid, overflow, underflow, inexact} as bits 3..0 (``INVALID`` ... ``INEXACT``).
Formats without NaN (the ``nonan`` family: OCP MX E2M1/E2M3/E3M2) write ``nan_code``
(default +0) for a NaN result and raise ``invalid``.
"""

import numpy as np

from ._native import VERSION, Format, presets
from ._native import _decode, _dot, _fma, _mul, _project

__all__ = [
    "Format",
    "presets",
    "project",
    "decode",
    "mul",
    "fma",
    "dot",
    "INVALID",
    "OVERFLOW",
    "UNDERFLOW",
    "INEXACT",
    "__version__",
]

__version__ = VERSION

#: Flag bits of the flags arrays (the RISC-V ``fflags`` order without divide-by-zero).
INVALID = 8
OVERFLOW = 4
UNDERFLOW = 2
INEXACT = 1


def _format(fmt, what="fmt"):
    if isinstance(fmt, Format):
        return fmt
    if isinstance(fmt, str):
        return Format(fmt)
    raise TypeError(f"{what}: expected an fp8gen.Format or a format name, got {type(fmt).__name__}")


def _array(a, what):
    if isinstance(a, np.ndarray):
        return a
    if isinstance(a, (list, tuple)) or np.isscalar(a):
        return np.asarray(a)
    raise TypeError(f"{what}: expected a numpy array, got {type(a).__name__}")


def _native_order(a):
    if a.dtype.byteorder not in "=|" and not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return a


def _float_bits(values):
    """(1-D contiguous bit array, source format name) of a float32/float16/bfloat16 array."""
    a = _native_order(_array(values, "values"))
    dt = a.dtype
    if dt == np.float32:
        src, view = "binary32", np.uint32
    elif dt == np.float16:
        src, view = "binary16", np.uint16
    elif dt.name == "bfloat16" and dt.itemsize == 2:
        # ml_dtypes.bfloat16 (or any 2-byte dtype named bfloat16): reinterpret the bits.
        src, view = "bfloat16", np.uint16
    else:
        raise TypeError(
            f"values: unsupported dtype {dt}; expected float32, float16 or bfloat16 "
            "(convert others first, e.g. values.astype(np.float32))"
        )
    return np.ascontiguousarray(a).reshape(-1).view(view), src


def _codes(a, fmt, what):
    """1-D contiguous uint32 copy/view of an integer code array (range checked in Rust)."""
    a = _array(a, what)
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


def _result(codes, flags, shape, want_flags):
    codes = codes.reshape(shape)
    if want_flags:
        return codes, flags.reshape(shape)
    return codes


def _sr_bits(sr_bits):
    if not isinstance(sr_bits, (int, np.integer)) or isinstance(sr_bits, bool):
        raise TypeError("sr_bits: expected an int (1..=32)")
    if not 0 <= sr_bits <= 255:
        raise ValueError(f"rounding: stochastic rounding needs 1..=32 random bits, got sr_bits {sr_bits}")
    return int(sr_bits)


def _nan_code(nan_code):
    if not isinstance(nan_code, (int, np.integer)) or isinstance(nan_code, bool):
        raise TypeError("nan_code: expected an int code")
    if not 0 <= nan_code <= 0xFFFFFFFF:
        raise ValueError(f"nan_code: 0x{nan_code:x} is out of range")
    return int(nan_code)


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
):
    """Round float32 / float16 / bfloat16 ``values`` to ``fmt`` (RoundToPrecision -> Saturate ->
    Encode, P3109 v4.0 section 4.7). Returns the code array (uint8 for K <= 8, uint16 for
    K <= 16), and the flags array with ``flags=True``.

    ``rounding``: rne, rna, rtp, rtn, rtz, rto, or stochastic sra/srb/src with ``sr_bits``
    random bits per element given in ``rnd`` (uint32, same shape as ``values``).
    ``saturation``: satfinite, satpropagate, satnone, satnone-v4. ``tininess``: after/before
    (underflow flag). ``nan_code``: code written for NaN into a format without NaN.
    """
    f = _format(fmt)
    a = _array(values, "values")
    bits, src = _float_bits(a)
    r = _rnd(rnd, a.shape)
    codes, fl = _project(
        bits, src, f, rounding, _sr_bits(sr_bits), saturation, tininess, _nan_code(nan_code), r, bool(flags)
    )
    return _result(codes, fl, a.shape, flags)


def decode(codes, fmt):
    """Exact values of ``codes`` (integer array) in ``fmt``. The result is float32 when every
    value of the format is exact in binary32 (all 8-bit formats but E8M0 and the wide-range
    P3109 ones), else float64 (``Format.value_dtype`` tells which); NaN codes give NaN.
    Raises ValueError for formats whose values binary64 cannot hold exactly."""
    f = _format(fmt)
    a = _array(codes, "codes")
    c = _codes(a, f, "codes")
    return _decode(c, f).reshape(a.shape)


def _broadcast(*arrays, names):
    try:
        return np.broadcast_arrays(*arrays)
    except ValueError:
        shapes = ", ".join(f"{n} {a.shape}" for n, a in zip(names, arrays))
        raise ValueError(f"operand shapes do not broadcast: {shapes}") from None


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
):
    """``x * y`` rounded once to ``out_fmt`` (default ``fmt``). ``x`` holds codes of ``fmt``,
    ``y`` codes of ``fmt_y`` (default ``fmt``); they broadcast against each other. ``out_fmt``
    may be "binary32" (uint32 bit patterns; view them as float32)."""
    fx = _format(fmt)
    fy = fx if fmt_y is None else _format(fmt_y, "fmt_y")
    fr = fx if out_fmt is None else _format(out_fmt, "out_fmt")
    xa, ya = _broadcast(_array(x, "x"), _array(y, "y"), names=("x", "y"))
    shape = xa.shape
    r = _rnd(rnd, shape)
    codes, fl = _mul(
        _codes(xa, fx, "x"),
        _codes(ya, fy, "y"),
        fx,
        fy,
        fr,
        rounding,
        _sr_bits(sr_bits),
        saturation,
        tininess,
        _nan_code(nan_code),
        r,
        bool(flags),
    )
    return _result(codes, fl, shape, flags)


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
):
    """``x * y + z`` with x, y codes of ``fmt`` / ``fmt_y`` and z float32, computed exactly and
    rounded once to binary32 (float32 result). ``rounding``: rne, rna, rtp, rtn, rtz, rto;
    ``saturation`` applies to the binary32 result (satnone = IEEE 754 overflow to infinity).
    ``ftz``: subnormal z reads as zero and subnormal results flush to zero."""
    fx = _format(fmt)
    fy = fx if fmt_y is None else _format(fmt_y, "fmt_y")
    za = _native_order(_array(z, "z"))
    if za.dtype != np.float32:
        raise TypeError(f"z: expected a float32 array, got {za.dtype}")
    xa, ya, za = _broadcast(_array(x, "x"), _array(y, "y"), za, names=("x", "y", "z"))
    shape = xa.shape
    zb = np.ascontiguousarray(_native_order(za)).reshape(-1).view(np.uint32)
    r, fl = _fma(
        _codes(xa, fx, "x"),
        _codes(ya, fy, "y"),
        zb,
        fx,
        fy,
        rounding,
        saturation,
        tininess,
        bool(ftz),
        bool(flags),
    )
    r = r.view(np.float32)
    return _result(r, fl, shape, flags)


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
):
    """Dot products along the last axis: ``sum(x[..., i] * y[..., i]) * 2^(sx + sy) + z``,
    every product and the sum exact, rounded once to ``out_fmt`` (P3109 BlockDotProduct, the
    OCP MX dot product). ``x``, ``y``: codes of ``fmt`` / ``fmt_y`` with the same shape
    ``(..., N)``, N = 1..64; ``scale_x``, ``scale_y``: one code of ``scale_fmt`` per dot
    product (shape ``(...)``), or None; ``z``: float32 addends of shape ``(...)``, or None.
    A binary32 result is returned as float32, a small format as codes."""
    fx = _format(fmt)
    fy = fx if fmt_y is None else _format(fmt_y, "fmt_y")
    fr = _format(out_fmt, "out_fmt")
    xa, ya = _array(x, "x"), _array(y, "y")
    if xa.shape != ya.shape or xa.ndim == 0:
        raise ValueError(f"x and y must have one shape (..., N); got {xa.shape} and {ya.shape}")
    n = xa.shape[-1]
    shape = xa.shape[:-1]
    empty = np.zeros(0, dtype=np.uint32)
    if (scale_x is None) != (scale_y is None):
        raise ValueError("give both scale_x and scale_y, or neither")
    if scale_x is not None:
        fs = _format(scale_fmt, "scale_fmt")
        sxa, sya = _broadcast(_array(scale_x, "scale_x"), _array(scale_y, "scale_y"),
                              names=("scale_x", "scale_y"))
        sxa, sya = np.broadcast_to(sxa, shape), np.broadcast_to(sya, shape)
        sx, sy = _codes(sxa, fs, "scale_x"), _codes(sya, fs, "scale_y")
    else:
        fs, sx, sy = None, empty, empty
    if z is not None:
        za = _native_order(_array(z, "z"))
        if za.dtype != np.float32:
            raise TypeError(f"z: expected a float32 array, got {za.dtype}")
        za = np.broadcast_to(za, shape)
        zb = np.ascontiguousarray(za).reshape(-1).view(np.uint32)
    else:
        zb = empty
    r, fl = _dot(
        _codes(xa, fx, "x"),
        _codes(ya, fy, "y"),
        int(n),
        sx,
        sy,
        zb,
        fx,
        fy,
        fs,
        fr,
        rounding,
        saturation,
        tininess,
        bool(flags),
    )
    if fr.name == "binary32":
        r = r.view(np.float32)
    return _result(r, fl, shape, flags)
