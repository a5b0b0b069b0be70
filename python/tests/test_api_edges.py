"""Edges of the Python API: no Rust panic reaches Python, every bad argument is a ValueError
or TypeError naming it, array-likes and Python numbers are accepted, float64 values are
projected with one rounding, and formats compare, hash and pickle by name."""

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
    assert fp8gen.project(0.3, "e4m3").tolist() == 42 and fp8gen.project(0.3, "e4m3").shape == ()
    assert fp8gen.project([0.3, 448, -1e-4, 2], "e4m3").tolist() == want.tolist()
    assert fp8gen.decode([0x38, 0x40], "e4m3").tolist() == [1.0, 2.0]
    assert fp8gen.mul(0x38, [0x40, 0x38], "e4m3").tolist() == [0x40, 0x38]
    assert fp8gen.fma([0x38], [0x40], 0.5, "e4m3").tolist() == [2.5]
    assert fp8gen.dot([[0x38, 0x40]], [[0x40, 0x40]], "e4m3", z=[1]).tolist() == [7.0]
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
