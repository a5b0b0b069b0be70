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
