"""Output types: every function returns codes by default (uint8 / uint16 / uint32 by the result
format, fma and dot included), values with ``as_values=True`` (the table of the module docs),
and numpy scalars when every array argument is a scalar. Known answers for each function x
default/as_values x scalar/array."""

import ml_dtypes
import numpy as np
import pytest

import fp8gen

# E4M3: 1.0 = 0x38, 2.0 = 0x40; binary32 2.5 = 0x40200000, 7.0 = 0x40E00000
CASES = {
    # name: (call with scalars, call with arrays, want code, code dtype, want value, value dtype)
    "project e4m3": (lambda **k: fp8gen.project(1.0, "e4m3", **k),
                     lambda **k: fp8gen.project([1.0, 1.0], "e4m3", **k),
                     0x38, np.uint8, 1.0, ml_dtypes.float8_e4m3fn),
    "project binary16": (lambda **k: fp8gen.project(np.float32(1.5), "binary16", **k),
                         lambda **k: fp8gen.project(np.float32([1.5, 1.5]), "binary16", **k),
                         0x3E00, np.uint16, 1.5, np.float16),
    "project binary32": (lambda **k: fp8gen.project(2.5, "binary32", **k),
                         lambda **k: fp8gen.project([2.5, 2.5], "binary32", **k),
                         0x40200000, np.uint32, 2.5, np.float32),
    "project bfloat16": (lambda **k: fp8gen.project(1.0, "bfloat16", **k),
                         lambda **k: fp8gen.project([1.0, 1.0], "bfloat16", **k),
                         0x3F80, np.uint16, 1.0, ml_dtypes.bfloat16),
    "project e2m1": (lambda **k: fp8gen.project(1.0, "e2m1", **k),
                     lambda **k: fp8gen.project([1.0, 1.0], "e2m1", **k),
                     0x2, np.uint8, 1.0, ml_dtypes.float4_e2m1fn),
    # no ml_dtypes type: decoded, float32 when every value is exact in binary32, else float64
    "project binary8p3se": (lambda **k: fp8gen.project(1.0, "binary8p3se", **k),
                            lambda **k: fp8gen.project([1.0, 1.0], "binary8p3se", **k),
                            0x40, np.uint8, 1.0, np.float32),
    "project binary16p6se": (lambda **k: fp8gen.project(1.0, "binary16p6se", **k),
                             lambda **k: fp8gen.project([1.0, 1.0], "binary16p6se", **k),
                             0x4000, np.uint16, 1.0, np.float64),
    "mul e4m3": (lambda **k: fp8gen.mul(0x38, 0x40, "e4m3", **k),
                 lambda **k: fp8gen.mul([0x38, 0x38], 0x40, "e4m3", **k),
                 0x40, np.uint8, 2.0, ml_dtypes.float8_e4m3fn),
    "mul binary32": (lambda **k: fp8gen.mul(0x38, 0x40, "e4m3", out_fmt="binary32", **k),
                     lambda **k: fp8gen.mul([0x38, 0x38], [0x40, 0x40], "e4m3", out_fmt="binary32", **k),
                     0x40000000, np.uint32, 2.0, np.float32),
    "mul binary16": (lambda **k: fp8gen.mul(0x38, 0x40, "e4m3", out_fmt="binary16", **k),
                     lambda **k: fp8gen.mul([0x38, 0x38], [0x40, 0x40], "e4m3", out_fmt="binary16", **k),
                     0x4000, np.uint16, 2.0, np.float16),
    "fma": (lambda **k: fp8gen.fma(0x38, 0x40, 0.5, "e4m3", **k),
            lambda **k: fp8gen.fma([0x38, 0x38], 0x40, 0.5, "e4m3", **k),
            0x40200000, np.uint32, 2.5, np.float32),
    "fma z array": (lambda **k: fp8gen.fma(np.uint8(0x38), np.uint8(0x40), np.float32(0.5), "e4m3", **k),
                    lambda **k: fp8gen.fma(0x38, 0x40, np.float32([0.5, 0.5]), "e4m3", **k),
                    0x40200000, np.uint32, 2.5, np.float32),
}

DOT = {
    # dot takes arrays only: 1-D operands give a 0-d result, rows give one result per row
    "dot binary32": (lambda **k: fp8gen.dot([[0x38, 0x40], [0x38, 0x40]], [0x40, 0x40], "e4m3", z=1.0, **k),
                     0x40E00000, np.uint32, 7.0, np.float32),
    "dot e4m3": (lambda **k: fp8gen.dot([[0x38, 0x40], [0x38, 0x40]], [0x40, 0x40], "e4m3", z=1.0,
                                        out_fmt="e4m3", **k),
                 0x4E, np.uint8, 7.0, ml_dtypes.float8_e4m3fn),
}


@pytest.mark.parametrize("name", list(CASES))
def test_codes_and_values_scalars_and_arrays(name):
    scalar, array, code, cdt, value, vdt = CASES[name]
    c = scalar()
    assert type(c) is cdt and c == code, (name, repr(c))
    c, f = scalar(flags=True)
    assert type(c) is cdt and c == code and type(f) is np.uint8 and f == 0, (name, repr(c), repr(f))
    v = scalar(as_values=True)
    assert isinstance(v, np.generic) and v.dtype == np.dtype(vdt) and float(v) == value, (name, repr(v))
    a = array()
    assert isinstance(a, np.ndarray) and a.dtype == cdt and a.tolist() == [code, code], (name, a)
    a, f = array(flags=True)
    assert a.dtype == cdt and a.tolist() == [code, code] and f.dtype == np.uint8 and f.tolist() == [0, 0]
    v = array(as_values=True)
    assert isinstance(v, np.ndarray) and v.dtype == np.dtype(vdt), (name, v.dtype)
    assert v.astype(np.float64).tolist() == [value, value]


@pytest.mark.parametrize("name", list(DOT))
def test_dot_codes_and_values(name):
    call, code, cdt, value, vdt = DOT[name]
    c = call()
    assert c.dtype == cdt and c.tolist() == [code, code]
    v, f = call(as_values=True, flags=True)
    assert v.dtype == np.dtype(vdt) and v.astype(np.float64).tolist() == [value, value]
    assert f.dtype == np.uint8 and f.tolist() == [0, 0]
    one = fp8gen.dot([0x38, 0x40], [0x40, 0x40], "e4m3", z=1.0)
    assert isinstance(one, np.ndarray) and one.shape == () and one.dtype == np.uint32 and one == 0x40E00000


def test_decode_scalars_and_arrays():
    v = fp8gen.decode(0x38, "e4m3")
    assert type(v) is np.float32 and v == 1.0
    v = fp8gen.decode(np.uint16(0x4000), "binary16p6se")
    assert type(v) is np.float64 and v == 1.0
    a = fp8gen.decode([0x38, 0x40], "e4m3")
    assert isinstance(a, np.ndarray) and a.dtype == np.float32 and a.tolist() == [1.0, 2.0]
    assert fp8gen.decode(np.array(0x38), "e4m3").shape == ()  # a 0-d array is a scalar too


def test_values_are_zero_copy_views_of_the_codes():
    """Formats with a numpy / ml_dtypes type: the values are the codes reinterpreted."""
    x = np.float32([0.3, 448, -1e-4, 2, np.inf])
    for fmt, dt in [("e4m3", ml_dtypes.float8_e4m3fn), ("e5m2", ml_dtypes.float8_e5m2),
                    ("binary16", np.float16), ("binary32", np.float32), ("e8m0", ml_dtypes.float8_e8m0fnu)]:
        c = fp8gen.project(np.abs(x) if fmt == "e8m0" else x, fmt)
        v = fp8gen.project(np.abs(x) if fmt == "e8m0" else x, fmt, as_values=True)
        assert v.dtype == np.dtype(dt) and np.array_equal(v.view(c.dtype), c), fmt
        assert fp8gen.value_dtype_of(fmt) == np.dtype(dt)
    # the values equal decode's (NaN where decode has NaN)
    c = np.arange(256, dtype=np.uint8)
    v = fp8gen.mul(c, 0x38, "e4m3", as_values=True).astype(np.float64)
    assert np.array_equal(v, fp8gen.decode(fp8gen.mul(c, 0x38, "e4m3"), "e4m3"), equal_nan=True)


def test_values_without_ml_dtypes(monkeypatch):
    """Without ml_dtypes, small formats decode to float32 (every value exact) or float64."""
    monkeypatch.setattr(fp8gen, "_ml_dtypes", None)
    v = fp8gen.project([1.0, 0.3], "e4m3", as_values=True)
    assert v.dtype == np.float32 and v.tolist() == [1.0, 0.3125]
    assert fp8gen.project(1.0, "bfloat16", as_values=True).dtype == np.float32
    assert fp8gen.value_dtype_of("e4m3") == np.float32
    assert fp8gen.project(1.0, "binary16", as_values=True).dtype == np.float16


def test_as_values_refuses_formats_no_dtype_holds():
    """binary16p2se reaches beyond binary64: codes only, and a clear error for values."""
    assert fp8gen.value_dtype_of("binary16p2se") is None
    assert fp8gen.project(1.0, "binary16p2se").dtype == np.uint16
    with pytest.raises(ValueError, match=r"^as_values: the values of binary16p2se are not all exact in binary64"):
        fp8gen.project(1.0, "binary16p2se", as_values=True)
    with pytest.raises(TypeError, match="^as_values: expected True or False, got int"):
        fp8gen.fma(0x38, 0x38, 1.0, "e4m3", as_values=1)
