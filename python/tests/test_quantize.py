"""fp8gen.quantize_block / dequantize_block: the MX block quantizer (golden/src/quantize.rs)
against known answers, gfloat's OCP scale rule (compute_scale_amax) and element rounding
(round_ndarray, RNE, sat=True), the policies' defining properties, and the argument checks."""

import ml_dtypes
import numpy as np
import pytest
from gfloat import RoundMode, encode_ndarray, round_ndarray
from gfloat.block import compute_scale_amax
from gfloat.formats import format_info_ocp_e2m1, format_info_ocp_e4m3

import fp8gen


def test_known_answers():
    x = np.array([[448, 1, -3, 0], [1, np.nan, 2, 3]], dtype=np.float32)
    c, s = fp8gen.quantize_block(x, "e4m3", block=4)
    assert c.dtype == np.uint8 and s.dtype == np.uint8
    assert c.tolist() == [[0x7E, 0x38, 0xC4, 0x00], [0x7F] * 4]
    assert s.tolist() == [[127], [255]]  # a NaN element makes the scale NaN
    v = fp8gen.dequantize_block(c, s, "e4m3", block=4)
    assert v[0].tolist() == [448.0, 1.0, -3.0, 0.0] and np.isnan(v[1]).all()
    # rceil: 449 > 448 = MaxFinite, so the scale is 2^1; floor keeps 2^0 and saturates.
    c, s, f = fp8gen.quantize_block(np.float32([449.0]), "e4m3", block=1, policy="rceil", flags=True)
    assert s.tolist() == [128] and c.tolist() == [0x76] and f.tolist() == [fp8gen.INEXACT]
    c, s, f = fp8gen.quantize_block(np.float32([449.0]), "e4m3", block=1, flags=True)
    assert s.tolist() == [127] and c.tolist() == [0x7E]
    # all zeros: the smallest scale 2^-127 (code 0), as gfloat.
    _, s = fp8gen.quantize_block(np.zeros((3, 8), np.float32), "e2m1", block=8)
    assert s.tolist() == [[0]] * 3


@pytest.mark.parametrize("fmt,fi", [("e4m3", format_info_ocp_e4m3), ("e2m1", format_info_ocp_e2m1)])
def test_floor_matches_gfloat(fmt, fi):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((400, 32)) * np.exp2(rng.integers(-30, 30, (400, 1)))).astype(np.float32)
    x[::7, 3] *= 2.0**12  # outliers
    c, s = fp8gen.quantize_block(x, fmt, block=32)
    for i in range(len(x)):
        g = compute_scale_amax(fi.emax, x[i].astype(np.float64))
        assert s[i, 0] == int(np.log2(g)) + 127
        want = encode_ndarray(fi, round_ndarray(fi, x[i].astype(np.float64) / g, RoundMode.TiesToEven, sat=True))
        assert np.array_equal(c[i], want.astype(np.uint8)), i


def test_policy_properties():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2000, 16)) * np.exp2(rng.integers(-20, 20, (2000, 1)))).astype(np.float32)
    e = {}
    for p in ["floor", "ceil", "even", "rceil"]:
        _, s, f = fp8gen.quantize_block(x, "e4m3", block=16, policy=p, flags=True)
        e[p] = s.astype(int)
        if p in ("ceil", "rceil"):
            # no finite element overflows: the scale keeps amax / scale <= MaxFinite
            assert not np.any(f & fp8gen.OVERFLOW), p
    assert np.all(e["floor"] <= e["rceil"]) and np.all(e["rceil"] <= e["ceil"])
    assert np.all(e["floor"] <= e["even"]) and np.all(e["even"] <= e["floor"] + 1)
    assert np.any(e["rceil"] > e["floor"]) and np.any(e["ceil"] > e["rceil"])


def test_inputs_shapes_and_stochastic_rounding():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 64)).astype(np.float32)
    c, s = fp8gen.quantize_block(x, "e5m2", block=32)
    assert c.shape == (2, 3, 64) and s.shape == (2, 3, 2)
    # bfloat16 and float16 inputs are quantized from their own format (no rounding first).
    b = x.astype(ml_dtypes.bfloat16)
    cb, sb = fp8gen.quantize_block(b, "e5m2", block=32)
    c2, s2 = fp8gen.quantize_block(b.astype(np.float32), "e5m2", block=32)
    assert np.array_equal(cb, c2) and np.array_equal(sb, s2)
    # SR: rnd = 0 rounds toward zero (sra), all-ones away (for inexact elements).
    r0 = np.zeros(x.shape, np.uint32)
    lo, _ = fp8gen.quantize_block(x, "e5m2", block=32, rounding="sra", rnd=r0)
    tz, _ = fp8gen.quantize_block(x, "e5m2", block=32, rounding="rtz")
    assert np.array_equal(lo, tz)


def test_argument_errors():
    x = np.ones(10, np.float32)
    with pytest.raises(ValueError, match="not a multiple of block = 4"):
        fp8gen.quantize_block(x, "e4m3", block=4)
    with pytest.raises(ValueError, match="unknown scale policy 'nearest'"):
        fp8gen.quantize_block(x, "e4m3", block=5, policy="nearest")
    with pytest.raises(ValueError, match="out of range"):
        fp8gen.quantize_block(np.ones(65, np.float32), "e4m3", block=65)
    with pytest.raises(ValueError, match="not exact in binary32"):
        fp8gen.quantize_block(np.array([0.1] * 4), "e4m3", block=4)
    with pytest.raises(ValueError, match="scales: expected shape"):
        fp8gen.dequantize_block(np.zeros(8, np.uint8), np.zeros(3, np.uint8), "e4m3", block=4)


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "e2m1", "binary8p3se"])
@pytest.mark.parametrize("policy", ["floor", "rceil"])
@pytest.mark.parametrize("saturation", ["satfinite", "satnone"])
def test_elements_are_the_projection_of_x_over_the_scale(fmt, policy, saturation):
    # Every element equals project(x / 2^e) (x / 2^e exact in binary64) with its flags, on
    # random bit patterns (every binade, subnormals, infinities) scaled so that quotients
    # leave binary32's normal range too: the binding's table path for quotients that are
    # normal binary32 numbers and the golden path for the rest must agree with it.
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**32, (3000, 32), dtype=np.uint64).astype(np.uint32)
    bits[:1000] &= np.uint32(0x807FFFFF)  # tiny exponents: subnormal and small normal inputs
    bits[:1000] |= (rng.integers(0, 24, (1000, 1)) << 23).astype(np.uint32)
    x = bits.view(np.float32)
    c, s, f = fp8gen.quantize_block(x, fmt, block=32, policy=policy, saturation=saturation,
                                    flags=True)
    c, s = c.reshape(-1, 32), s.reshape(-1)
    ok = s != 255  # NaN-scaled blocks: every element NaN (test_known_answers)
    e = s[ok].astype(np.int32) - 127
    q = x[ok].astype(np.float64) / np.exp2(e.astype(np.float64))[:, None]
    want, wf = fp8gen.project(q.reshape(-1), fmt, saturation=saturation, flags=True)
    assert np.array_equal(c[ok].reshape(-1), want)
    assert np.array_equal(f.reshape(-1)[ok], np.bitwise_or.reduce(wf.reshape(-1, 32), axis=1))
