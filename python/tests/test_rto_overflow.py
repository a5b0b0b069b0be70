"""rto_overflow: round-to-odd overflow under satnone as P3109 §4.7.5's table (±Inf, the
default) or as IEEE-style hardware (SoftFloat round_odd: the largest finite value)."""

import numpy as np
import pytest

import fp8gen


def test_project_and_mul_take_the_convention():
    big = np.array([3 * 2.0**20, -3 * 2.0**20])
    kw = dict(rounding="rto", saturation="satnone")
    assert fp8gen.project(big, "e5m2", **kw).tolist() == [0x7C, 0xFC]
    assert fp8gen.project(big, "e5m2", rto_overflow="ieee", **kw).tolist() == [0x7B, 0xFB]
    x = np.array([0x7B, 0xFB], np.uint8)
    assert fp8gen.mul(x, x[:1], "e5m2", **kw).tolist() == [0x7C, 0xFC]
    assert fp8gen.mul(x, x[:1], "e5m2", rto_overflow="ieee", **kw).tolist() == [0x7B, 0xFB]
    # satfinite clamps either way; other roundings do not change.
    assert fp8gen.project(big, "e5m2", "rto", "satfinite", rto_overflow="ieee").tolist() == [0x7B, 0xFB]
    assert fp8gen.project(big, "e5m2", "rne", "satnone", rto_overflow="ieee").tolist() == [0x7C, 0xFC]
    # fma takes it too (its binary32 result cannot overflow from E5M2 products).
    assert fp8gen.fma(0x7B, 0x7B, np.float32(1.0), "e5m2", rounding="rto", rto_overflow="ieee") == fp8gen.fma(
        0x7B, 0x7B, np.float32(1.0), "e5m2", rounding="rto"
    )


def test_unknown_convention_is_an_error():
    with pytest.raises(ValueError, match="rto_overflow: unknown round-to-odd overflow convention 'x'"):
        fp8gen.mul(np.array([1], np.uint8), np.array([1], np.uint8), "e5m2", rto_overflow="x")


def test_convert_add_and_quantize_block_take_the_convention():
    kw = dict(rounding="rto", saturation="satnone")
    x = np.array([0x7B, 0xFB], np.uint8)  # E5M2 ±57344, the largest finite value
    assert fp8gen.add(x, x, "e5m2", **kw).tolist() == [0x7C, 0xFC]
    assert fp8gen.add(x, x, "e5m2", rto_overflow="ieee", **kw).tolist() == [0x7B, 0xFB]
    # binary16 65504 -> E4M3 (largest finite 448): OCP E4M3 has no Inf, P3109's overflow is NaN.
    h = np.array([0x7BFF], np.uint16)
    assert fp8gen.convert(h, "binary16", "e4m3", **kw).tolist() == [0x7F]
    assert fp8gen.convert(h, "binary16", "e4m3", rto_overflow="ieee", **kw).tolist() == [0x7E]
    # floor (OCP MX v1.0 section 6.3) scales amax 1.9375 * 2^20 to 1.9375 * 2^8 = 496, above
    # E4M3's 448: the element overflows (NaN by P3109, 448 the IEEE way); the scale is the same.
    v = np.array([[1.9375 * 2.0**20, 1.0]], np.float32)
    c, s = fp8gen.quantize_block(v, "e4m3", block=2, policy="floor", **kw)
    c2, s2 = fp8gen.quantize_block(v, "e4m3", block=2, policy="floor", rto_overflow="ieee", **kw)
    assert s.tolist() == s2.tolist() == [[127 + 12]]
    assert c.tolist()[0][0] == 0x7F and c2.tolist()[0][0] == 0x7E
    assert c.tolist()[0][1] == c2.tolist()[0][1]
    with pytest.raises(ValueError, match="rto_overflow: unknown"):
        fp8gen.convert(h, "binary16", "e4m3", rto_overflow="odd")
