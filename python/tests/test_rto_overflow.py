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
