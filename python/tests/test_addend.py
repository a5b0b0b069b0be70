"""Any addend and result format for fma and dot (P3109 FMA<fx, fy, fz, fr>): known answers,
the binary32 defaults unchanged, float16 addends read as their bits, and the refusals."""

import numpy as np
import pytest

import fp8gen

INEXACT, UNDERFLOW, OVERFLOW, INVALID = 1, 2, 4, 8


def test_fma_binary16_known_answers():
    x = np.array([0x38, 0x7E, 0x38, 0x80, 0x01], dtype=np.uint8)
    y = np.array([0x38, 0x7E, 0x38, 0x38, 0x01], dtype=np.uint8)
    z = np.array([0x3C00, 0x0000, 0x7C01, 0x8000, 0x0001], dtype=np.uint16)
    r, fl = fp8gen.fma(x, y, z, "e4m3", out_fmt="binary16", flags=True)
    # 1 + 1 = 2; 448^2 overflows to +Inf; a signaling NaN addend raises invalid;
    # (-0) * 1 + (-0) = -0; 2^-18 + 2^-24 = 65 * 2^-24 exactly
    assert [int(c) for c in r] == [0x4000, 0x7C00, 0x7E00, 0x8000, 0x0041]
    assert [int(f) for f in fl] == [0, OVERFLOW | INEXACT, INVALID, 0, 0]
    # float16 addends are read as their bits
    r2 = fp8gen.fma(x, y, z.view(np.float16), "e4m3", out_fmt="binary16", z_fmt="binary16")
    assert np.array_equal(np.asarray(r2, dtype=np.uint32), np.asarray(r, dtype=np.uint32))
    v = fp8gen.fma(x[:1], y[:1], z[:1], "e4m3", out_fmt="binary16", as_values=True)
    assert float(v[0]) == 2.0


def test_fma_small_result_and_defaults():
    # e4m3 addend and result: 1 * 1 + 1 = 2 (0x40); satfinite clamps 448^2 to 448 (0x7e)
    r = fp8gen.fma(np.uint8(0x38), np.uint8(0x38), np.uint8(0x38), "e4m3", out_fmt="e4m3")
    assert int(r) == 0x40
    r, fl = fp8gen.fma(
        np.uint8(0x7E), np.uint8(0x7E), np.uint8(0), "e4m3", out_fmt="e4m3",
        saturation="satfinite", flags=True,
    )
    assert (int(r), int(fl)) == (0x7E, OVERFLOW | INEXACT)
    # a binary16 addend into the default binary32 result
    r = fp8gen.fma(np.uint8(0x38), np.uint8(0x38), np.uint16(0x3C00), "e4m3", z_fmt="binary16")
    assert int(r) == 0x4000_0000
    # the defaults are the binary32 FMA of before
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, 4096, dtype=np.uint8)
    y = rng.integers(0, 256, 4096, dtype=np.uint8)
    z = rng.standard_normal(4096).astype(np.float32)
    a = fp8gen.fma(x, y, z, "e4m3")
    b = fp8gen.fma(x, y, z, "e4m3", out_fmt="binary32", z_fmt="binary32")
    assert np.array_equal(a, b)


def test_dot_binary16_addend():
    x = np.full((2, 8), 0x38, dtype=np.uint8)
    z = np.array([0x3C00, 0x7C01], dtype=np.uint16)
    r, fl = fp8gen.dot(x, x, "e4m3", z=z, z_fmt="binary16", out_fmt="binary16", flags=True)
    # 8 * 1 + 1 = 9; a signaling NaN addend gives NaN + invalid
    assert [int(c) for c in r] == [0x4880, 0x7E00]
    assert [int(f) for f in fl] == [0, INVALID]
    # one element: the FMA with the same formats
    rng = np.random.default_rng(3)
    xs = rng.integers(0, 256, (512, 1), dtype=np.uint8)
    ys = rng.integers(0, 256, (512, 1), dtype=np.uint8)
    zs = rng.integers(0, 1 << 16, 512, dtype=np.uint16)
    for rm in ["rne", "rtz", "rto"]:
        d = fp8gen.dot(xs, ys, "e4m3", z=zs, z_fmt="binary16", out_fmt="binary16", rounding=rm)
        f = fp8gen.fma(xs[:, 0], ys[:, 0], zs, "e4m3", out_fmt="binary16", rounding=rm)
        assert np.array_equal(np.asarray(d, dtype=np.uint32), np.asarray(f, dtype=np.uint32))


def test_refusals_name_the_argument():
    with pytest.raises(ValueError, match="ftz"):
        fp8gen.fma(np.uint8(0x38), np.uint8(0x38), np.uint16(0), "e4m3", out_fmt="binary16", ftz=True)
    with pytest.raises(ValueError, match="z"):
        # 0x1ff is not an e4m3 code
        fp8gen.fma(np.uint8(0x38), np.uint8(0x38), np.uint16(0x1FF), "e4m3", out_fmt="e4m3")
    with pytest.raises(ValueError, match="z_fmt"):
        fp8gen.dot(np.full(2, 0x38, np.uint8), np.full(2, 0x38, np.uint8), "e4m3", z=0, z_fmt="nope")
