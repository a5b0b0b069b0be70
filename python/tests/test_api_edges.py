"""Edges of the Python API: no Rust panic reaches Python, every bad argument is a ValueError
or TypeError naming it, array-likes and Python numbers are accepted, float64 values are
projected with one rounding, and formats compare, hash and pickle by name."""

import copy
import pickle

import ml_dtypes
import numpy as np
import pytest

import fp8gen
from fp8gen import Format


# ---- Bugs: no panic, decode of the wide formats, nan_code range --------------------------

def test_decode_binary32_binary16_bfloat16_exact():
    """binary32 has 2^32 codes: decode must not build a table of them (it panicked)."""
    c = np.uint32([0x3F800000, 0x7F800000, 0xFF800000, 0x00000001, 0x80800000, 0x7F7FFFFF, 0x7FC00000])
    v = fp8gen.decode(c, "binary32")
    assert v.dtype == np.float32 and np.array_equal(v.view(np.uint32)[:6], c[:6]) and np.isnan(v[6])
    # every binary16 / bfloat16 code: the float32 of the same value
    h = np.arange(1 << 16, dtype=np.uint32)
    v16 = fp8gen.decode(h, "binary16")
    assert v16.dtype == np.float32
    assert np.array_equal(v16, h.astype(np.uint16).view(np.float16).astype(np.float32), equal_nan=True)
    vb = fp8gen.decode(h, "bfloat16")
    assert np.array_equal(vb.view(np.uint32)[~np.isnan(vb)], (h << 16)[~np.isnan(vb)])
    f = Format("binary32")
    assert f.value_dtype == "float32"
    assert (f.min_positive, f.smallest_normal, f.max) == (2.0 ** -149, 2.0 ** -126, float(np.finfo(np.float32).max))
    with pytest.raises(ValueError, match=r"^codes: negative value -1"):
        fp8gen.decode([-1], "binary32")


@pytest.mark.parametrize("code,msg", [
    (16, "nan_code: 16 is not a code of e2m1; expected 0..=15 (4 bits)"),
    (300, "nan_code: 300 is not a code of e2m1; expected 0..=15 (4 bits)"),
    (-1, "nan_code: -1 is not a code of e2m1; expected 0..=15 (4 bits)"),
])
def test_nan_code_fits_the_result_format(code, msg):
    x = np.float32([np.nan, 1.0])
    with pytest.raises(ValueError) as e:
        fp8gen.project(x, "e2m1", nan_code=code)
    assert str(e.value) == msg
    with pytest.raises(ValueError, match="^nan_code: .* is not a code of e2m1"):
        fp8gen.mul([0, 1], [2, 3], "e4m3", out_fmt="e2m1", nan_code=code)
    # checked against the result format, not the operand format
    assert fp8gen.mul([0x7F], [0x38], "e4m3", out_fmt="e2m1", nan_code=15).tolist() == [15]
    assert fp8gen.project(x, "e2m1", nan_code=15).tolist() == [15, 2]
    with pytest.raises(TypeError, match="^nan_code: expected an int, got float"):
        fp8gen.project(x, "e2m1", nan_code=1.0)


def test_format_int_arguments_never_overflow_error():
    for bad in (-1, 2 ** 70):
        with pytest.raises(ValueError, match=r"^code: -?\d+ is out of range 0..=255"):
            Format("e4m3").value(bad)
        with pytest.raises(ValueError, match=r"^code: "):
            Format("e4m3").hex(bad)
    with pytest.raises(ValueError, match=r"^k: \d+ is out of range"):
        Format(k=2 ** 70, p=3, specials="ieee")
    with pytest.raises(ValueError, match=r"^bias: \d+ is out of range"):
        Format("e4m3", bias=2 ** 40)
    with pytest.raises(TypeError, match="^k: expected an int, got bool"):
        Format(k=True, p=1, specials="ieee")
    with pytest.raises(TypeError, match="^p: expected an int, got str"):
        Format(k=8, p="4", specials="ieee")


# ---- Inputs: array-likes, Python numbers, float64, format names and dtypes -----------------

class ArrayLike:
    """Only ``__array__`` (as xarray, pandas, ... objects)."""

    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


class DLPackOnly:
    """Only the DLPack protocol (as torch / jax / cupy-on-host tensors)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_array_likes_scalars_and_lists():
    v = np.float32([0.3, 448.0, -1e-4, 2.0])
    want = fp8gen.project(v, "e4m3")
    for like in (ArrayLike(v), DLPackOnly(v)):
        assert np.array_equal(fp8gen.project(like, "e4m3"), want)
        # no copy: the array the bindings read is a view of the caller's memory
        assert np.shares_memory(fp8gen._array(like, "values"), v)
    codes = np.uint8([0x38, 0x40, 0x7E])
    assert np.array_equal(fp8gen.mul(DLPackOnly(codes), ArrayLike(codes), "e4m3"), fp8gen.mul(codes, codes, "e4m3"))
    assert np.array_equal(fp8gen.decode(DLPackOnly(codes), "e4m3"), fp8gen.decode(codes, "e4m3"))
    # Python numbers are binary64 values; Python ints too (exact)
    assert fp8gen.project(0.3, "e4m3") == 42 and type(fp8gen.project(0.3, "e4m3")) is np.uint8
    assert fp8gen.project([0.3, 448, -1e-4, 2], "e4m3").tolist() == want.tolist()
    assert fp8gen.decode([0x38, 0x40], "e4m3").tolist() == [1.0, 2.0]
    assert fp8gen.mul(0x38, [0x40, 0x38], "e4m3").tolist() == [0x40, 0x38]
    assert fp8gen.fma([0x38], [0x40], 0.5, "e4m3", as_values=True).tolist() == [2.5]
    assert fp8gen.dot([[0x38, 0x40]], [[0x40, 0x40]], "e4m3", z=[1], as_values=True).tolist() == [7.0]
    # float64 addends are added exactly (never rounded first); quiet NaN is NaN, a signaling
    # one raises invalid as a signaling binary32 one does
    assert np.isnan(fp8gen.fma([0x38], [0x38], np.float64([np.nan]), "e4m3", as_values=True)).all()
    snan64 = np.uint64([0x7FF0000000000001]).view(np.float64)
    assert fp8gen.fma([0x38], [0x38], snan64, "e4m3", flags=True)[1].tolist() == [fp8gen.INVALID]
    assert fp8gen.dot([[0x38]], [[0x38]], "e4m3", z=snan64, flags=True)[1].tolist() == [fp8gen.INVALID]
    snan32 = np.uint32([0x7F800001]).view(np.float32)
    assert fp8gen.fma([0x38], [0x38], snan32, "e4m3", flags=True)[1].tolist() == [fp8gen.INVALID]
    r, f = fp8gen.dot([[0x38]], [[0x38]], "e4m3", z=1e-50, flags=True)
    assert (r.tolist(), f.tolist()) == ([0x3F800000], [fp8gen.INEXACT])
    with pytest.raises(ValueError, match="^values: cannot make a numpy array of it"):
        fp8gen.project([[1.0], [1.0, 2.0]], "e4m3")


def test_float64_values_are_rounded_once():
    """float64 values go to the rounder exactly (no float32 step): 1.0625 + 2^-40 lies above the
    E4M3 midpoint 1.0625 of 1.0 and 1.125, so it rounds up; through float32 it would become
    the midpoint and round to even (1.0)."""
    x = np.float64([1.0625 + 2.0 ** -40, -(1.0625 + 2.0 ** -40), 1.0625])
    c, fl = fp8gen.project(x, "e4m3", flags=True)
    assert c.tolist() == [0x39, 0xB9, 0x38] and fl.tolist() == [1, 1, 1]
    assert fp8gen.project(x.astype(np.float32), "e4m3").tolist() == [0x38, 0xB8, 0x38]
    # rtz and stochastic rounding see the exact value too
    assert fp8gen.project(x[:1], "e4m3", rounding="rtz").tolist() == [0x38]
    # values beyond binary32's range and precision
    big = np.float64([1e300, 2.0 ** -140, -np.inf, np.nan, -0.0])
    assert fp8gen.project(big, "e4m3", saturation="satnone").tolist() == [0x7F, 0x00, 0x7F, 0x7F, 0x80]
    with np.errstate(over="ignore"):
        big32 = big.astype(np.float32)
    assert fp8gen.project(big, "binary8p3se", saturation="satnone").tolist() == \
        fp8gen.project(big32, "binary8p3se", saturation="satnone").tolist()
    # a signaling binary64 NaN raises invalid, a quiet one does not
    snan = np.uint64([0x7FF0000000000001, 0x7FF8000000000000]).view(np.float64)
    assert fp8gen.project(snan, "e5m2", flags=True)[1].tolist() == [fp8gen.INVALID, 0]


@pytest.mark.parametrize("fmt,ml", [("e4m3", ml_dtypes.float8_e4m3fn), ("e5m2", ml_dtypes.float8_e5m2),
                                    ("e3m4", ml_dtypes.float8_e3m4), ("e2m1", ml_dtypes.float4_e2m1fn),
                                    ("e3m2", ml_dtypes.float6_e3m2fn)])
def test_float64_rounded_once(fmt, ml):
    """Random binary64 values: equal to ml_dtypes' casts but for NaN results (ml_dtypes keeps
    the NaN's sign, and writes a zero into FP4/FP6). Values just above and below every
    midpoint of neighbouring values: the nearest value, checked with exact binary64
    differences (Sterbenz); ml_dtypes goes through binary32 there and rounds twice."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(1 << 16) * 2.0 ** rng.integers(-30, 12, 1 << 16),
                        rng.integers(0, 2 ** 63, 1 << 14, dtype=np.uint64).view(np.float64)])
    c = fp8gen.project(x, fmt, saturation="satnone")
    with np.errstate(all="ignore"):
        r = x.astype(ml)
    nan = np.isnan(fp8gen.decode(c, fmt)) | np.isnan(x)
    assert np.array_equal(c[~nan], r.view(np.uint8)[~nan])

    v = np.unique(fp8gen.decode(np.arange(Format(fmt).num_codes), fmt).astype(np.float64))
    v = v[np.isfinite(v) & (v >= 0)]
    mid = (v[1:] + v[:-1]) / 2
    lo = np.concatenate([v[:-1], v[:-1]])
    hi = np.concatenate([v[1:], v[1:]])
    x = np.concatenate([mid * (1 + 2.0 ** -40), mid * (1 - 2.0 ** -40)])
    assert ((lo < x) & (x < hi)).all()
    want = np.where(x - lo < hi - x, lo, hi)
    for sign in (1.0, -1.0):
        got = fp8gen.decode(fp8gen.project(sign * x, fmt, saturation="satnone"), fmt).astype(np.float64)
        assert np.array_equal(got, sign * want)
    # through binary32 these become midpoints: a second rounding changes some of them
    twice = fp8gen.decode(fp8gen.project(x.astype(np.float32), fmt, saturation="satnone"), fmt)
    assert (twice != want).sum() >= len(mid) // 4


def test_formats_from_ml_dtypes_and_numpy():
    names = {
        "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2", "float8_e4m3fnuz": "e4m3fnuz",
        "float8_e5m2fnuz": "e5m2fnuz", "float8_e4m3b11fnuz": "e4m3b11fnuz", "float8_e4m3": "e4m3-ieee",
        "float8_e3m4": "e3m4", "float6_e3m2fn": "e3m2", "float6_e2m3fn": "e2m3",
        "float4_e2m1fn": "e2m1", "float8_e8m0fnu": "e8m0", "bfloat16": "bfloat16",
        "float16": "binary16", "float32": "binary32",
    }
    for ml_name, canon in names.items():
        assert Format(ml_name).name == canon, ml_name
        t = getattr(ml_dtypes, ml_name, None) or getattr(np, ml_name)
        assert Format(t).name == canon and Format(np.dtype(t)).name == canon
        assert fp8gen._format(np.dtype(t), "fmt") == canon
    v = np.float32([0.3, -2.5])
    assert np.array_equal(fp8gen.project(v, ml_dtypes.float8_e4m3fn), fp8gen.project(v, "e4m3"))
    assert np.array_equal(fp8gen.project(v, np.float16).view(np.float16), v.astype(np.float16))
    assert np.array_equal(fp8gen.decode(fp8gen.project(v, "float32"), np.float32), v)
    with pytest.raises(ValueError, match="^fmt: invalid format field `format`: 'float64' .binary64. is not an fp8gen format"):
        fp8gen.project(v, np.float64)
    with pytest.raises(TypeError, match="^fmt_y: expected an fp8gen.Format or a format name"):
        fp8gen.mul([1], [1], "e4m3", fmt_y=3.5)


def test_format_eq_hash_pickle():
    f = Format("e4m3")
    assert f == "e4m3" and "e4m3" == f and f == "E4M3FN" and f == "float8_e4m3fn"
    assert f != "e5m2" and not (f == "no such format") and f != 8 and f != None  # noqa: E711
    assert hash(f) == hash("e4m3") == hash(Format("float8_e4m3fn"))
    assert {f: 1}["e4m3"] == 1 and {"e4m3": 1}[f] == 1
    fmts = [Format(n) for n, _ in fp8gen.presets()] + [
        Format("binary32"), Format("bfloat16"), Format("binary16"), Format("binary8p3se"),
        Format("binary12p5uf"), Format(k=7, p=3, bias=5, signed=False, specials="p3109-extended"),
        Format("e4m3", bias=9), Format(k=5, p=2, specials="nonan", signed=False)]
    for g in fmts:
        for proto in range(pickle.HIGHEST_PROTOCOL + 1):
            h = pickle.loads(pickle.dumps(g, protocol=proto))
            assert h == g and type(h) is Format and (h.k, h.p, h.bias, h.signed, h.specials) == \
                (g.k, g.p, g.bias, g.signed, g.specials)
        assert g == g.name and hash(g) == hash(g.name)
        assert copy.deepcopy(g) == g and copy.copy(g) == g


@pytest.mark.parametrize("fmt,eps,tiny,sub,mx", [
    ("e4m3", 2.0 ** -3, 2.0 ** -6, 2.0 ** -9, 448.0),
    ("e5m2", 2.0 ** -2, 2.0 ** -14, 2.0 ** -16, 57344.0),
    ("e2m1", 2.0 ** -1, 1.0, 0.5, 6.0),
    ("e8m0", 1.0, 2.0 ** -127, 2.0 ** -127, 2.0 ** 127),
    ("binary8p3se", 2.0 ** -2, 2.0 ** -15, 2.0 ** -17, 49152.0),
    ("binary16", 2.0 ** -10, 2.0 ** -14, 2.0 ** -24, 65504.0),
    ("bfloat16", 2.0 ** -7, 2.0 ** -126, 2.0 ** -133, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
    ("binary32", 2.0 ** -23, 2.0 ** -126, 2.0 ** -149, float(np.finfo(np.float32).max)),
])
def test_finfo_properties(fmt, eps, tiny, sub, mx):
    f = Format(fmt)
    assert (f.eps, f.smallest_normal, f.tiny, f.smallest_subnormal, f.max) == (eps, tiny, tiny, sub, mx)
    assert all(type(v) is float for v in (f.eps, f.smallest_normal, f.tiny, f.smallest_subnormal, f.max))
    ml = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "e2m1": ml_dtypes.float4_e2m1fn,
          "binary16": np.float16, "bfloat16": ml_dtypes.bfloat16, "binary32": np.float32}.get(fmt)
    if ml is not None:
        fi = ml_dtypes.finfo(ml)
        assert (f.eps, f.smallest_normal, f.smallest_subnormal, f.max) == \
            (float(fi.eps), float(fi.smallest_normal), float(fi.smallest_subnormal), float(fi.max))


# ---- API edges ----------------------------------------------------------------------------

def test_dot_broadcasts_and_checks_shapes():
    x = np.uint8([[0x38, 0x40], [0x40, 0x40], [0x30, 0x38]])
    y = np.uint8([0x40, 0x38])  # one row for every x row, as mul/fma broadcast
    assert fp8gen.dot(x, y, "e4m3", as_values=True).tolist() == [4.0, 6.0, 2.0]
    assert np.array_equal(fp8gen.dot(x, y, "e4m3"), fp8gen.dot(x, np.broadcast_to(y, x.shape), "e4m3"))
    assert fp8gen.dot(y, x, "e4m3").shape == (3,)
    # scales and z broadcast to the result shape (one per dot product)
    assert fp8gen.dot(x, y, "e4m3", scale_x=128, scale_y=[127, 128, 127], z=0.5, as_values=True).tolist() == [8.5, 24.5, 4.5]
    with pytest.raises(ValueError) as e:
        fp8gen.dot(np.zeros((3, 0), np.uint8), np.zeros((3, 0), np.uint8), "e4m3")
    assert str(e.value) == "x, y: n = 0 elements: dot needs at least one element per row"
    with pytest.raises(ValueError, match=r"^x, y: n = 65 elements: dot takes 1..=64 elements per row"):
        fp8gen.dot(np.zeros(65, np.uint8), np.zeros(65, np.uint8), "e4m3")
    with pytest.raises(ValueError, match=r"^operand shapes do not broadcast: x \(3, 2\), y \(3,\)"):
        fp8gen.dot(x, np.zeros(3, np.uint8), "e4m3")
    with pytest.raises(ValueError) as e:
        fp8gen.dot(x, y, "e4m3", scale_x=[1, 2], scale_y=[1, 2])
    assert str(e.value) == "scale_x: shape (2,) does not broadcast to (3,) (one scale code per dot product)"
    with pytest.raises(ValueError, match=r"^z: shape \(2,\) does not broadcast to \(3,\)"):
        fp8gen.dot(x, y, "e4m3", z=np.float32([1, 2]))
    with pytest.raises(ValueError, match=r"^scale_y: nan is not a code of e8m0 \(codes are integers\)"):
        fp8gen.dot(x, y, "e4m3", scale_x=127, scale_y=np.nan)
    with pytest.raises(ValueError, match=r"^scale_x: 127.5 is not a code of e8m0"):
        fp8gen.dot(x, y, "e4m3", scale_x=[127.5] * 3, scale_y=127)
    with pytest.raises(TypeError, match=r"^scale_x: code arrays must have an integer dtype"):
        fp8gen.dot(x, y, "e4m3", scale_x=127.0, scale_y=127)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: fp8gen.project([1.0], "e4m3", flags="no"), TypeError, "flags: expected True or False, got str"),
    (lambda: fp8gen.mul([1], [1], "e4m3", flags=1), TypeError, "flags: expected True or False, got int"),
    (lambda: fp8gen.fma([1], [1], [1.0], "e4m3", ftz="yes"), TypeError, "ftz: expected True or False, got str"),
    (lambda: fp8gen.project([1.0], "e4m3", saturation=True), TypeError, "saturation: expected a mode name (str), got bool"),
    (lambda: fp8gen.dot([1], [1], "e4m3", rounding=0), TypeError, "rounding: expected a mode name (str), got int"),
    (lambda: fp8gen.mul([1], [1], "e4m3", tininess=None), TypeError, "tininess: expected a mode name (str), got NoneType"),
    (lambda: fp8gen.project([1.0], "e4m3", sr_bits=33), ValueError, "sr_bits: 33 is out of range; stochastic rounding uses 1..=32 random bits"),
    (lambda: fp8gen.project([1.0], "e4m3", sr_bits="8"), TypeError, "sr_bits: expected an int, got str"),
    (lambda: fp8gen.project(np.ma.masked_array([1.0, 2.0], mask=[0, 1]), "e4m3"), TypeError,
     "values: masked arrays are not supported (the mask would be dropped); pass values.filled(value) or values.data"),
    (lambda: fp8gen.mul(np.ma.masked_array([1], mask=[1]), [1], "e4m3"), TypeError, "x: masked arrays are not supported"),
    (lambda: fp8gen.project([1.0], "e4m3", rnd=[1], rounding="sra", sr_bits=0), ValueError,
     "rounding: stochastic rounding needs 1..=32 random bits, got sr_bits 0"),
    (lambda: fp8gen.project({1: 2}, "e4m3"), TypeError, "values: expected a numpy array"),
    (lambda: fp8gen.decode(object(), "e4m3"), TypeError, "codes: expected a numpy array"),
])
def test_argument_errors_name_the_argument(call, exc, msg):
    with pytest.raises(exc) as e:
        call()
    assert type(e.value) is exc and str(e.value).startswith(msg), str(e.value)


def test_golden_errors_name_the_argument():
    with pytest.raises(ValueError, match="^scale_fmt: scale format binary16 is not a power-of-two scale of at most 8 bits"):
        fp8gen.dot([1, 2], [1, 2], "e4m3", scale_x=1, scale_y=1, scale_fmt="binary16")
    wide = Format("binary16p1uf")  # values 0, 2^-32767 ... 2^32766
    assert wide.value_dtype is None and wide.eps == 1.0
    with pytest.raises(ValueError, match="^fmt: some values of binary16p1uf are beyond binary64"):
        fp8gen.decode([1], wide)
    for prop in ("max", "max_finite", "smallest_normal", "tiny", "smallest_subnormal", "min_positive"):
        with pytest.raises(ValueError, match=f"^{prop}: 0x1p[-+]\\d+ of binary16p1uf is beyond binary64"):
            getattr(wide, prop)
    with pytest.raises(ValueError, match="^code: 0x1p-32767 of binary16p1uf is beyond binary64"):
        wide.value(1)
    assert wide.hex(1) == "0x1p-32767"


def test_no_cli_option_names_in_messages():
    msgs = []
    for call in (lambda: Format("nope"), lambda: Format(k=8, p=4, signed=False, specials="fnuz"),
                 lambda: Format(k=8, p=1, signed=True, specials="e8m0"),
                 lambda: fp8gen.project([1.0], "e4m3", rounding="sra", sr_bits=0, rnd=[0])):
        with pytest.raises(ValueError) as e:
            call()
        msgs.append(str(e.value))
    from fp8gen import _native
    with pytest.raises(ValueError) as e:  # past the Python checks: the golden model's text
        _native._project(np.zeros(1, np.uint32), "binary32", Format("e4m3"), "sra", 0, "satfinite",
                         "after", 0, np.zeros(1, np.uint32), False)
    msgs.append(str(e.value))
    assert "sr_bits 0" in msgs[-1]
    for m in msgs:
        assert "--" not in m and "fp8gen formats" not in m, m


# ---- fuzz of the API ----------------------------------------------------------------------

class _Junk:
    pass


def _masked(a):
    return np.ma.masked_array(a, mask=np.zeros(np.shape(a), bool))


F32 = np.float32([0.3, 448.0, -1e-4, 2.0])
X = np.uint8([[0x38, 0x40, 0x01], [0x7E, 0x00, 0x80]])
Y = np.uint8([0x40, 0x38, 0x30])

# Every public callable with valid arguments (each call is valid as it stands).
BASE = {
    "project": (fp8gen.project, dict(values=F32, fmt="e4m3", rounding="rne", saturation="satfinite",
                                      flags=False, rnd=None, tininess="after", nan_code=0, sr_bits=8,
                                      as_values=False)),
    "decode": (fp8gen.decode, dict(codes=Y, fmt="e4m3")),
    "mul": (fp8gen.mul, dict(x=X, y=Y, fmt="e4m3", fmt_y=None, out_fmt=None, rounding="rne",
                              saturation="satfinite", flags=False, rnd=None, tininess="after",
                              nan_code=0, sr_bits=8, as_values=False)),
    "add": (fp8gen.add, dict(x=X, y=Y, fmt="e4m3", fmt_y=None, out_fmt=None, rounding="rne",
                              saturation="satfinite", flags=False, rnd=None, tininess="after",
                              nan_code=0, sr_bits=8, as_values=False, sub=False)),
    "fma": (fp8gen.fma, dict(x=X, y=Y, z=np.float32([1, 2, 3]), fmt="e4m3", fmt_y=None, rounding="rne",
                              saturation="satnone", flags=False, tininess="after", ftz=False,
                              as_values=False)),
    "dot": (fp8gen.dot, dict(x=X, y=Y, fmt="e4m3", fmt_y=None, scale_x=None, scale_y=None,
                              scale_fmt="e8m0", z=None, out_fmt="binary32", rounding="rne",
                              saturation="satnone", flags=False, tininess="after",
                              as_values=False)),
    "Format": (Format, dict(name="e4m3")),
    "Format.custom": (Format, dict(k=8, p=4, bias=7, signed=True, specials="fn")),
    "value": (lambda code: Format("e4m3").value(code), dict(code=0x38)),
    "hex": (lambda code: Format("e5m2").hex(code), dict(code=0x3C)),
}

_BAD_ARRAY = ["abc", {1: 2}, _Junk(), [[1.0], [1.0, 2.0]], np.array([None, 1], dtype=object),
              np.zeros(3, np.complex64), _masked(np.zeros(3, np.float32))]
_BAD_CODES = [[-1], [256], np.float32([1.5]), [np.nan], "abc", _Junk(), _masked(np.zeros(3, np.uint8)),
              np.uint64([2 ** 40]), [[1], [1, 2]], np.zeros(2, np.complex64),
              np.array([1, None], dtype=object), [True, False]]
_BAD_FMT = ["nope", 3.5, _Junk(), b"e4m3", np.float64, ["e4m3"], "binary8p9se", "", np.int8, "\ud800",
            np.dtype("U3")]
_BAD_MODE = ["nope", True, 1, None, b"rne", ["rne"], "\ud800", "rn\u00e9"]
_BAD_BOOL = ["no", 1, None, [True], 0.0]
_BAD_INT = [-1, 2 ** 40, 2 ** 70, 1.0, "0", None, True, [1]]

# Per argument: values that must be refused with an error naming the argument ("bad"), and
# unusual values that may be valid ("odd"; an error must still name some argument).
POOLS = {
    "values": (_BAD_ARRAY + [np.zeros(3, np.int32), np.float64([np.nan]).astype(object), [2 ** 70], 2 ** 60],
               [[], 1.5, 2, np.float16([1, 2]), np.float64([1e300, -0.0]), np.zeros((0, 3), np.float32)]),
    "codes": (_BAD_CODES, [[], 0x7F, np.uint16([255]), np.int64([3])]),
    "x": (_BAD_CODES + [np.zeros((5, 7), np.uint8)], [[], 0x38, np.zeros((4, 1, 3), np.uint8), np.zeros(3, np.int16)]),
    "y": (_BAD_CODES + [np.zeros((5, 7), np.uint8)], [[], 0x38, np.zeros((2, 1), np.uint8)]),
    "z": (_BAD_ARRAY + [np.zeros(5, np.float32), np.zeros(3, np.int8)],
          [1.0, [1.0, 2.0, 3.0], np.float16([1, 2, 3]), np.zeros(2, np.float32), np.full(3, 0.1)]),
    "fmt": (_BAD_FMT, ["e2m1", "binary32", "e8m0", "bfloat16", Format("e5m2"), "binary16p1uf", "binary16"]),
    "fmt_y": (_BAD_FMT, ["e2m1", "binary32", "e8m0", "binary16"]),
    "out_fmt": (_BAD_FMT, ["e2m1", "binary32", "binary16", "e8m0", "binary12p5uf"]),
    "scale_fmt": (_BAD_FMT, ["binary16", "e4m3", "binary32"]),
    "scale_x": (_BAD_CODES, [127, [127, 128], 300, np.nan]),
    "scale_y": (_BAD_CODES, [127, [127, 128], 300, np.nan]),
    "rounding": (_BAD_MODE, ["sra", "rtz", "RNE", "src", "towardzero"]),
    "saturation": (_BAD_MODE, ["satnone-v4", "satpropagate", "SATFINITE"]),
    "tininess": (_BAD_MODE, ["before", "AFTER"]),
    "flags": (_BAD_BOOL, [True, np.bool_(True)]),
    "ftz": (_BAD_BOOL, [True]),
    "sub": (_BAD_BOOL, [True, np.bool_(True)]),
    "as_values": (_BAD_BOOL, [True, np.bool_(True)]),
    "rnd": ([[1, 2], "x", np.float32([1, 2, 3, 4]), [-1, 0, 0, 0], _Junk(), np.zeros(4, np.uint32)],
            [np.zeros((2, 3), np.uint32), np.full(4, 2 ** 32 - 1, np.uint64)]),
    "nan_code": (_BAD_INT + [256], [15, 255, np.uint8(3)]),
    "sr_bits": ([33, -1, 2 ** 70, "8", 8.0, None, True], [1, 32, 0, np.int8(4)]),
    "name": (["nope", 5, _Junk(), b"e4m3", np.float64, "binary8p0se", "\ud800"], ["E4M3FN", np.float16, "float4_e2m1fn"]),
    "k": ([1, 17, -1, 2 ** 70, "8", 8.5, True, None], [4, 16]),
    "p": ([0, 20, "x", 2.0, -3], [1, 3]),
    "bias": ([2 ** 40, -2 ** 40, "x", 1.5], [0, -3, 100]),
    "signed": (["yes", 2, [True]], [False]),
    "specials": (["nope", 5, _Junk(), "\ud800"], ["ieee", "nonan", "p3109-extended", "e8m0", "fnuz"]),
    "code": ([-1, 0x10000, 2 ** 70, "1", 1.5, None, [1]], [0, 0xFF, np.uint8(7)]),
}
# bad values that are only bad together with another argument's value
_BAD_ONLY_WITH = {("rnd", "rne")}


def _names(msg, names):
    import re
    return [n for n in names if re.search(rf"(?<![A-Za-z_]){re.escape(n)}(?![A-Za-z_])", msg)]


def test_fuzz_the_api():
    """Seeded: 3000 calls with one or two arguments replaced by wrong types, shapes, names or
    values. No call may raise anything but ValueError/TypeError (a pyo3 PanicException is a
    BaseException, an OverflowError an ArithmeticError), and the message must name the
    argument: the replaced one when a single must-fail value was put in, else some argument."""
    import random
    import time
    rng = random.Random(20)
    t0 = time.time()
    raised = named_bad = 0
    for i in range(3000):
        name = rng.choice(sorted(BASE))
        fn, base = BASE[name]
        kw = dict(base)
        args = sorted(kw)
        bad, odd = [], []
        for _ in range(rng.choice((1, 1, 1, 2))):
            a = rng.choice(args)
            badpool, oddpool = POOLS[a]
            if rng.random() < 0.7:
                kw[a] = rng.choice(badpool)
                bad.append(a)
            else:
                kw[a] = rng.choice(oddpool)
                odd.append(a)
        if name == "Format" and rng.random() < 0.3:
            kw.update(k=rng.choice(POOLS["k"][1]))  # name and a custom field together
            odd.append("k")
        what = f"call {i}: {name}({', '.join(f'{k}={v!r}' for k, v in kw.items() if k in bad + odd)})"
        try:
            fn(**kw)
        except BaseException as e:  # noqa: B036 - the point is to see everything
            raised += 1
            assert isinstance(e, (ValueError, TypeError)) and type(e).__name__ != "PanicException", \
                f"{what}: {type(e).__module__}.{type(e).__name__}: {e}"
            msg = str(e)
            allowed = set(bad + odd) | {"format"} if name.startswith("Format") else set(bad + odd)
            if len(bad) == 1 and not odd:
                assert _names(msg, allowed), f"{what}: message does not name {bad[0]}: {msg}"
                named_bad += 1
            else:
                assert _names(msg, set(args) | {"format"}), f"{what}: message names no argument: {msg}"
        else:
            assert not (len(bad) == 1 and not odd), f"{what}: accepted"
    assert raised > 1500 and named_bad > 1000
    assert time.time() - t0 < 30


# ---- type stubs ---------------------------------------------------------------------------

def test_type_stubs_match_the_module():
    """__init__.pyi declares every public name with the runtime signature (parameter names,
    order and which have defaults), and ships with py.typed."""
    import ast
    import inspect
    import os
    pkg = os.path.dirname(fp8gen.__file__)
    assert os.path.exists(os.path.join(pkg, "py.typed"))
    tree = ast.parse(open(os.path.join(pkg, "__init__.pyi")).read())
    stub_funcs, stub_names = {}, set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            stub_funcs.setdefault(node.name, []).append(node)
            stub_names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            stub_names.add(node.name)
            props = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.AnnAssign):
            stub_names.add(node.target.id)
    assert set(fp8gen.__all__) <= stub_names, set(fp8gen.__all__) - stub_names
    public = {n for n in dir(Format) if not n.startswith("_")}
    assert public == props - {"__new__"} - {n for n in props if n.startswith("__")}, public ^ props
    for name, defs in stub_funcs.items():
        sig = inspect.signature(getattr(fp8gen, name))
        want = [(p.name, p.default is inspect.Parameter.empty) for p in sig.parameters.values()]
        for d in defs:
            a = d.args
            params = a.posonlyargs + a.args + a.kwonlyargs
            ndef = len(a.defaults)
            required = [i < len(a.args) - ndef for i in range(len(a.args))] + \
                [kd is None for kd in a.kw_defaults]
            got = [(p.arg, r) for p, r in zip(params, required)]
            # an overload may make a defaulted argument keyword-only and required (flags=True)
            assert [g[0] for g in got] == [w[0] for w in want], (name, got, want)
            assert all(g[1] or not w[1] for g, w in zip(got, want)), (name, got, want)


def test_finfo_extremes_against_every_code():
    """smallest_subnormal / max against the decoded values of every code (E8M0: code 0 is
    2^-127, its smallest value)."""
    names = [n for n, _ in fp8gen.presets()] + [f"binary8p{p}{s}{d}" for p in range(1, 8)
                                                for s in "su" for d in "ef"] + ["binary8p8ue", "binary8p8uf"]
    names += ["binary16", "bfloat16", "binary10p1se", "binary12p5uf"]
    for n in names:
        f = Format(n)
        v = fp8gen.decode(np.arange(f.num_codes), f).astype(np.float64)
        fin = v[np.isfinite(v)]
        assert f.smallest_subnormal == f.min_positive == fin[fin > 0].min(), n
        assert f.max == f.max_finite == fin.max(), n
        assert fin[fin > 0].min() <= f.smallest_normal <= fin.max() and f.tiny == f.smallest_normal, n
