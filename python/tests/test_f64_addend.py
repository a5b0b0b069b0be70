"""float64 addends of fma and dot are added exactly and the sum is rounded once to binary32
(golden::fma_exact_addend, DotUnit::eval_exact_addend): checked against exact rational
arithmetic (fractions.Fraction) and the round-to-nearest-even rule of IEEE 754 §4.3.1, on
cases where rounding z to binary32 first would give another answer (double rounding) and on
random operands."""

from fractions import Fraction

import numpy as np

import fp8gen


def _rne_b32(v: Fraction) -> float:
    """v rounded to binary32, ties to even, for |v| in the normal range [2^-126, 2^128)."""
    if v == 0:
        return 0.0
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    assert -126 <= e < 128
    ulp = Fraction(2) ** (e - 23)
    q, r = divmod(a, ulp)
    if r > ulp / 2 or (r == ulp / 2 and q % 2 == 1):
        q += 1
    m = q * ulp
    return float(m if v > 0 else -m)


def _value(codes, fmt):
    return [Fraction(float(v)) for v in np.asarray(fp8gen.decode(codes, fmt), np.float64).reshape(-1)]


def test_double_rounding_case_fma_and_dot():
    # 1·1 + (2^-24 + 2^-60): the exact sum lies just above the midpoint 1 + 2^-24 of 1 and
    # 1 + 2^-23, so it rounds up; z rounded to binary32 first is 2^-24, a tie, rounded to 1.0
    z = 2.0**-24 + 2.0**-60
    exact = Fraction(1) + Fraction(z)
    want = _rne_b32(exact)
    assert want == 1 + 2.0**-23
    twice = fp8gen.fma(0x38, 0x38, np.float32(z), "e4m3", as_values=True)
    assert float(twice) == 1.0  # the double rounding this avoids
    assert float(fp8gen.fma(0x38, 0x38, z, "e4m3", as_values=True)) == want
    assert fp8gen.fma([0x38], [0x38], np.float64([z]), "e4m3", as_values=True).tolist() == [want]
    # dot: one row of 32 products summing to 1, the same addend; and with E8M0 scales 2^0
    x = np.zeros(32, np.uint8)
    x[0] = 0x38
    assert float(fp8gen.dot(x, x, "e4m3", z=z, as_values=True)) == want
    assert float(fp8gen.dot(x, x, "e4m3", z=np.float32(z), as_values=True)) == 1.0
    rows = np.tile(x, (100, 1))  # enough rows for the fast path
    r = fp8gen.dot(rows, rows, "e4m3", scale_x=127, scale_y=127, z=np.full(100, z), as_values=True)
    assert r.tolist() == [want] * 100
    # the negated case rounds down in magnitude the other way
    assert float(fp8gen.fma(0xB8, 0x38, -z, "e4m3", as_values=True)) == -want


def test_wide_and_tiny_float64_addends():
    # far above and below binary32's range: 2^-1074 only decides the direction of rtp/rtn
    one = 0x38
    assert int(fp8gen.fma(one, one, 2.0**-1074, "e4m3", rounding="rtp")) == 0x3F800001
    assert int(fp8gen.fma(one, one, 2.0**-1074, "e4m3", rounding="rtz")) == 0x3F800000
    assert int(fp8gen.dot([one], [one], "e4m3", z=-(2.0**-1074), rounding="rtn")) == 0x3F7FFFFF
    # 2^200 - 1: overflow to infinity (satnone), to the largest finite value with satfinite
    assert int(fp8gen.fma(one, one, 2.0**200, "e4m3")) == 0x7F800000
    assert int(fp8gen.dot([one], [one], "e4m3", z=2.0**200, saturation="satfinite")) == 0x7F7FFFFF
    # exact cancellation: x·y + z = 0 gives +0 (IEEE 754 §6.3), -0 when rounding toward negative
    assert int(fp8gen.fma(one, 0xB8, 1.0, "e4m3")) == 0
    assert int(fp8gen.fma(one, 0xB8, 1.0, "e4m3", rounding="rtn")) == 0x80000000


def test_random_float64_addends_match_exact_rationals():
    rng = np.random.default_rng(64)
    n, N = 3000, 8
    x = rng.integers(0, 0x7E, (n, N), dtype=np.uint64).astype(np.uint8)
    y = rng.integers(0, 0x7E, (n, N), dtype=np.uint64).astype(np.uint8)
    x |= (rng.integers(0, 2, (n, N)) << 7).astype(np.uint8)
    # addends with bits far below binary32's precision relative to the products
    z = rng.standard_normal(n) * 2.0 ** rng.integers(-10, 10, n) + rng.standard_normal(n) * 2.0**-40
    fz = fp8gen.fma(x[:, 0], y[:, 0], z, "e4m3", as_values=True)
    dz = fp8gen.dot(x, y, "e4m3", z=z, as_values=True)
    xv, yv = _value(x, "e4m3"), _value(y, "e4m3")
    differs = 0
    for i in range(n):
        zi = Fraction(float(z[i]))
        p0 = xv[i * N] * yv[i * N]
        s = sum(xv[i * N + j] * yv[i * N + j] for j in range(N))
        for got, exact in ((fz[i], p0 + zi), (dz[i], s + zi)):
            if exact != 0 and abs(exact) >= Fraction(2) ** -126:
                assert float(got) == _rne_b32(exact), (i, float(got), exact)
        once = _rne_b32(s + zi) if s + zi != 0 else 0.0
        twice_z = Fraction(float(np.float32(z[i])))
        if s + twice_z != 0 and once != _rne_b32(s + twice_z):
            differs += 1
    # the test means something: rounding z first changes some of these results
    assert differs > 0
