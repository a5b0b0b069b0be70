"""The fast paths of the Python module give the golden model's answers bit for bit, flags
included:

* worker threads: arrays of 64 Ki elements or more are split over threads; every function
  must give the same codes and flags on 1 thread and on several (uneven chunk counts);
* fma: the round-to-nearest-even fast path (f64 products of two value tables, a TwoSum-checked
  f64 addition, one f64 -> binary32 rounding) against the golden FmaUnit (`fast=False`):
  every (x, y) pair of E4M3 and of E2M1 x E5M2 with structured addends (zeros, subnormals,
  the binary32 normal boundary, overflow edges, infinities, NaNs, exact and near
  cancellation of the product), and random pairs with random binary32 bit patterns;
* dot: the fast path (exact f64 sums of f64 products) against the golden DotUnit, with NaN,
  infinities, cancelling rows and random/structured addends.
"""

import numpy as np
import pytest

import fp8gen
from fp8gen import Format, _native

B32 = Format("binary32")
EMPTY = np.zeros(0, np.uint32)


@pytest.fixture
def threads():
    """Restores the default thread setting after a test that changes it."""
    yield
    fp8gen.set_num_threads(0)


def _both_thread_counts(call):
    fp8gen.set_num_threads(1)
    one = call()
    fp8gen.set_num_threads(3)  # a pool of 3 even on a smaller machine: uneven splits
    assert fp8gen.get_num_threads() == 3
    many = call()
    fp8gen.set_num_threads(0)
    return one, many


def _same(a, b, what):
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    assert len(a) == len(b)
    for u, v in zip(a, b):
        u, v = np.asarray(u), np.asarray(v)
        assert u.dtype == v.dtype and u.shape == v.shape, what
        # bit patterns (NaN payloads and signs included)
        if u.dtype.kind == "f":
            u, v = u.view(np.uint32 if u.itemsize == 4 else np.uint64), v.view(
                np.uint32 if v.itemsize == 4 else np.uint64)
        bad = np.flatnonzero(u != v)
        assert bad.size == 0, f"{what}: {bad.size} elements differ, first at {bad[:5]}"


def test_threads_argument_checks(threads):
    with pytest.raises(TypeError):
        fp8gen.set_num_threads(1.5)
    with pytest.raises(TypeError):
        fp8gen.set_num_threads(True)
    with pytest.raises(ValueError):
        fp8gen.set_num_threads(-1)
    fp8gen.set_num_threads(2)
    assert fp8gen.get_num_threads() == 2
    fp8gen.set_num_threads(0)
    assert fp8gen.get_num_threads() >= 1


def test_multi_thread_results_equal_single_thread(threads):
    rng = np.random.default_rng(26)
    n = (1 << 18) + 12345  # several chunks and a partial one
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    x32 = bits.view(np.float32)
    x16 = rng.integers(0, 2**16, n, dtype=np.uint64).astype(np.uint16).view(np.float16)
    x64 = rng.standard_normal(n) * 64
    rnd = rng.integers(0, 256, n, dtype=np.uint32)
    a = rng.integers(0, 256, n, dtype=np.uint8)
    b = rng.integers(0, 256, n, dtype=np.uint8)
    z = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    zn = rng.standard_normal(n).astype(np.float32)
    m = n // 32
    cases = {
        "project b32 rne (table)": lambda: fp8gen.project(x32, "e4m3", flags=True),
        "project b32 rne no flags": lambda: fp8gen.project(x32, "e5m2"),
        "project b32 rtz direct": lambda: fp8gen.project(x32, "binary16", rounding="rtz", flags=True),
        "project b16": lambda: fp8gen.project(x16, "e4m3", rounding="rna", flags=True),
        "project b64": lambda: fp8gen.project(x64, "e4m3", flags=True),
        "project b32 sra": lambda: fp8gen.project(x32, "e4m3", rounding="sra", sr_bits=8, rnd=rnd,
                                                  flags=True),
        "decode": lambda: fp8gen.decode(a, "e4m3"),
        "mul": lambda: fp8gen.mul(a, b, "e4m3", out_fmt="e5m2", flags=True),
        "fma random z": lambda: fp8gen.fma(a, b, z, "e4m3", flags=True),
        "fma normal z": lambda: fp8gen.fma(a, b, zn, "e4m3", flags=True),
        "fma rtz": lambda: fp8gen.fma(a, b, zn, "e4m3", rounding="rtz", flags=True),
        "fma ftz": lambda: fp8gen.fma(a, b, z, "e4m3", ftz=True, flags=True),
        "dot": lambda: fp8gen.dot(a[: m * 32].reshape(m, 32), b[: m * 32].reshape(m, 32), "e4m3",
                                  flags=True),
        "dot + z": lambda: fp8gen.dot(a[: m * 32].reshape(m, 32), b[: m * 32].reshape(m, 32), "e4m3",
                                      z=zn[:m], flags=True),
        "dot e5m2 (golden path)": lambda: fp8gen.dot(a[: m * 4].reshape(m, 4), b[: m * 4].reshape(m, 4),
                                                     "e5m2", out_fmt="e4m3", flags=True),
    }
    for name, call in cases.items():
        one, many = _both_thread_counts(call)
        _same(one, many, name)


def _structured_z(products):
    """Addends for each product p (float64, exact): zeros, subnormals, the normal boundary,
    overflow edges, infinities, NaNs, -p (exact cancellation), -p ± one binary32 ulp and values
    that make the f64 sum inexact (far below or far above p)."""
    f32 = np.float32
    fixed = np.array([0.0, -0.0, 1e-45, -1e-45, 2.0**-126, -(2.0**-126), 2.0**-126 - 2.0**-149,
                      1.0, -1.5, 3.4028234663852886e38, -3.4028234663852886e38, np.inf, -np.inf,
                      2.0**-149 * 3, 2.0**100, -(2.0**-100)], dtype=np.float32)
    snan = np.array([0x7FC00000, 0x7F800001, 0xFFA00000], dtype=np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        p32 = products.astype(f32)
        neg = -p32
        cols = [np.full_like(p32, v) for v in np.concatenate([fixed, snan])]
        cols += [neg, np.nextafter(neg, f32(np.inf)), np.nextafter(neg, f32(-np.inf)),
                 (neg * f32(2.0**-30)).astype(f32), (p32 * f32(2.0**40)).astype(f32),
                 (neg * f32(0.5)).astype(f32)]
    return cols


@pytest.mark.parametrize("fx, fy", [("e4m3", "e4m3"), ("e2m1", "e5m2")])
def test_fma_fast_path_equals_golden_on_every_pair(fx, fy):
    Fx, Fy = Format(fx), Format(fy)
    xs, ys = np.meshgrid(np.arange(Fx.num_codes, dtype=np.uint32),
                         np.arange(Fy.num_codes, dtype=np.uint32))
    xs, ys = xs.reshape(-1), ys.reshape(-1)
    with np.errstate(all="ignore"):
        vx = fp8gen.decode(xs, Fx).astype(np.float64)
        vy = fp8gen.decode(ys, Fy).astype(np.float64)
        prod = vx * vy
    for ftz in (False, True):
        for k, z in enumerate(_structured_z(prod)):
            zb = np.ascontiguousarray(z, dtype=np.float32).view(np.uint32)
            args = (xs, ys, zb, Fx, Fy, "rne", "satnone", "after", ftz, True)
            _same(_native._fma(*args), _native._fma(*args, fast=False), f"{fx}x{fy} ftz={ftz} z#{k}")
        # saturation and tininess do not change what the fast path answers
        zb = np.ascontiguousarray(_structured_z(prod)[9]).view(np.uint32)  # +max binary32
        for sat, tin in (("satfinite", "before"), ("satpropagate", "after")):
            args = (xs, ys, zb, Fx, Fy, "rne", sat, tin, ftz, True)
            _same(_native._fma(*args), _native._fma(*args, fast=False), f"{fx}x{fy} {sat}")


def test_fma_fast_path_equals_golden_on_random_vectors():
    rng = np.random.default_rng(2026)
    n = 1 << 19
    for fx, fy in [("e4m3", "e4m3"), ("e5m2", "e4m3"), ("e4m3fnuz", "e5m2fnuz"),
                   ("binary8p3se", "binary8p4sf"), ("e2m3", "e3m2"), ("binary16", "bfloat16")]:
        Fx, Fy = Format(fx), Format(fy)
        xs = rng.integers(0, Fx.num_codes, n, dtype=np.uint64).astype(Fx.code_dtype)
        ys = rng.integers(0, Fy.num_codes, n, dtype=np.uint64).astype(Fy.code_dtype)
        zbits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
        # half random bit patterns, half values of the products' magnitude
        zn = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 20, n)).astype(np.float32)
        zb = np.where(np.arange(n) % 2 == 0, zbits, zn.view(np.uint32))
        for ftz in (False, True):
            args = (xs, ys, zb, Fx, Fy, "rne", "satnone", "after", ftz, True)
            _same(_native._fma(*args), _native._fma(*args, fast=False), f"{fx}x{fy} ftz={ftz}")
        # the fast path is in use for these formats (not a comparison of two golden runs)
        fast_only = fp8gen.fma(xs[:4096], ys[:4096], zn[:4096], Fx, Fy)
        assert fast_only.dtype == np.uint32


def test_dot_fast_path_equals_golden():
    rng = np.random.default_rng(7)
    for fx, fy in [("e4m3", "e4m3"), ("e2m1", "e2m1"), ("e4m3", "e2m1"), ("e5m2", "e5m2"),
                   ("binary8p3se", "binary8p3se")]:
        Fx, Fy = Format(fx), Format(fy)
        for n in (1, 7, 32, 64):
            m = 1 << 13
            xs = rng.integers(0, Fx.num_codes, (m, n), dtype=np.uint64).astype(np.uint8)
            ys = rng.integers(0, Fy.num_codes, (m, n), dtype=np.uint64).astype(np.uint8)
            # rows of finite values only (no NaN/Inf code), so most rows take the fast path
            fin_x = np.isfinite(fp8gen.decode(np.arange(Fx.num_codes), Fx))
            fin_y = np.isfinite(fp8gen.decode(np.arange(Fy.num_codes), Fy))
            clean = np.arange(m) % 4 != 0
            xs[clean] = np.where(fin_x[xs[clean]], xs[clean], 0)
            ys[clean] = np.where(fin_y[ys[clean]], ys[clean], 0)
            # cancelling rows: y2 = -y (sign bit) on the second half of the row
            if n > 1 and Fy.signed and Fy.has_neg_zero:
                h = n // 2
                xs[1::8, h:2 * h] = xs[1::8, :h]
                ys[1::8, h:2 * h] = ys[1::8, :h] ^ np.uint8(1 << (Fy.k - 1))
            with np.errstate(all="ignore"):
                exact = (fp8gen.decode(xs, Fx).astype(np.float64)
                         * fp8gen.decode(ys, Fy).astype(np.float64)).sum(axis=1)
                zs = {
                    "none": EMPTY,
                    "random bits": rng.integers(0, 2**32, m, dtype=np.uint64).astype(np.uint32),
                    "-sum": (-exact).astype(np.float32).view(np.uint32),
                    "-sum next": np.nextafter((-exact).astype(np.float32), np.float32(np.inf))
                    .view(np.uint32),
                    "tiny": np.full(m, 1, np.uint32),
                }
            for zname, z in zs.items():
                args = (xs.reshape(-1), ys.reshape(-1), n, EMPTY, EMPTY, np.ascontiguousarray(z),
                        Fx, Fy, None, B32, "rne", "satnone", "after", True)
                _same(_native._dot(*args), _native._dot(*args, fast=False), f"{fx}x{fy} n={n} z={zname}")


def test_dot_vector_kernel_and_scales_equal_golden(threads):
    """The dot fast path with E8M0 block scales and the 32-element vector kernel (where the
    CPU has it: AVX-512 VBMI) against the golden DotUnit, flags included: rows of 16, 32 and 64
    elements, a row count that is no multiple of the kernel's 8 rows nor of a thread's
    chunk, NaN/zero/extreme scale codes (tiny and overflowing results), random addends,
    formats with and without a sign bit mirror (E4M3FNUZ: 0x80 is NaN), on 1 and 3 threads."""
    rng = np.random.default_rng(11)
    E8M0 = Format("e8m0")
    m = 4096 + 2048 + 37
    for fx, fy in [("e4m3", "e4m3"), ("e4m3", "e2m1"), ("e4m3fnuz", "e4m3"), ("e2m3", "e3m2"),
                   ("e5m2", "e5m2")]:
        Fx, Fy = Format(fx), Format(fy)
        for n in (16, 32, 64):
            xs = rng.integers(0, Fx.num_codes, (m, n), dtype=np.uint64).astype(np.uint8)
            ys = rng.integers(0, Fy.num_codes, (m, n), dtype=np.uint64).astype(np.uint8)
            fin_x = np.isfinite(fp8gen.decode(np.arange(Fx.num_codes), Fx))
            fin_y = np.isfinite(fp8gen.decode(np.arange(Fy.num_codes), Fy))
            clean = np.arange(m) % 8 != 0  # every 8th row keeps its NaN/Inf codes
            xs[clean] = np.where(fin_x[xs[clean]], xs[clean], 0)
            ys[clean] = np.where(fin_y[ys[clean]], ys[clean], 0)
            sx = rng.integers(100, 155, m, dtype=np.uint64).astype(np.uint8)
            sy = rng.integers(100, 155, m, dtype=np.uint64).astype(np.uint8)
            sx[::97], sy[::89] = 0xFF, 0xFF  # NaN scales
            sx[5::101], sy[5::101] = 0, 0  # 2^-254: tiny results
            sx[7::103], sy[7::103] = 254, 254  # 2^254: overflow
            z = (rng.standard_normal(m) * 2.0 ** rng.integers(-20, 20, m)).astype(np.float32)
            for scales, zb in [((sx, sy), EMPTY), ((sx, sy), z.view(np.uint32)),
                               ((EMPTY, EMPTY), EMPTY)]:
                fs = E8M0 if scales[0].size else None
                args = (xs.reshape(-1), ys.reshape(-1), n, *scales, zb, Fx, Fy, fs, B32, "rne",
                        "satnone", "after", True)
                want = _native._dot(*args, fast=False)
                one, many = _both_thread_counts(lambda: _native._dot(*args))
                what = f"{fx}x{fy} n={n} scales={fs is not None} z={zb.size > 0}"
                _same(one, want, what + " 1 thread")
                _same(many, want, what + " 3 threads")
    # the fast path answers these (not two golden runs): a million E4M3 products with E8M0
    # scales take well under the golden model's time
    x = rng.integers(0, 0x7E, (1 << 15, 32), dtype=np.uint64).astype(np.uint8)
    s = np.full(1 << 15, 127, np.uint8)
    args = (x.reshape(-1), x.reshape(-1), 32, s, s, EMPTY, Format("e4m3"), Format("e4m3"), E8M0,
            B32, "rne", "satnone", "after", False)
    import time
    t0 = time.thread_time()
    _native._dot(*args)
    t1 = time.thread_time()
    _native._dot(*args, fast=False)
    t2 = time.thread_time()
    assert (t1 - t0) * 4 < t2 - t1, f"fast {t1 - t0:.4f} s, golden {t2 - t1:.4f} s"


def test_fma_float64_addend_fast_path_equals_golden():
    """fma with a float64 z: the RNE fast path (f64 product, TwoSum-checked f64 addition, one
    rounding) against golden::fma_exact_addend per element, flags included: random pairs with
    addends of the products' magnitude plus bits far below binary32's precision, -x·y exactly
    and one binary64 ulp either side, huge and tiny addends, infinities, quiet and signaling
    NaNs."""
    rng = np.random.default_rng(64)
    n = 1 << 16
    for fx, fy in [("e4m3", "e4m3"), ("e5m2", "e2m1"), ("binary16", "bfloat16")]:
        Fx, Fy = Format(fx), Format(fy)
        xs = rng.integers(0, Fx.num_codes, n, dtype=np.uint64).astype(Fx.code_dtype)
        ys = rng.integers(0, Fy.num_codes, n, dtype=np.uint64).astype(Fy.code_dtype)
        with np.errstate(all="ignore"):
            p = fp8gen.decode(xs, Fx).astype(np.float64) * fp8gen.decode(ys, Fy).astype(np.float64)
        z = rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n) + rng.standard_normal(n) * 2.0**-60
        k = np.arange(n) % 16
        z = np.where(k == 1, -p, z)
        z = np.where(k == 2, np.nextafter(-p, np.inf), z)
        z = np.where(k == 3, np.nextafter(-p, -np.inf), z)
        z = np.where(k == 4, 2.0**200, z)
        z = np.where(k == 5, 2.0**-1074, z)
        z = np.where(k == 6, np.inf, z)
        z = np.where(k == 7, np.nan, z)
        zb = z.view(np.uint64).copy()
        zb[k == 8] = 0x7FF0000000000001  # signaling NaN
        zb[k == 9] = 0x8000000000000000  # -0
        # 1·1 + z with 1 + z a binary64 value on a binary32 midpoint (+ a remainder the f64
        # sum drops): the remainder decides the rounding, the golden path answers
        one = lambda f: np.flatnonzero(fp8gen.decode(np.arange(f.num_codes), f) == 1)[0]  # noqa: E731
        # (z itself exact in binary64: 2^-24·(1 + 2^-36) …; 1 + z is not)
        for j, zv in zip(range(10, 16), [2.0**-24 + 2.0**-60, 2.0**-24 - 2.0**-60,
                                         -(2.0**-25) + 2.0**-70, -(2.0**-25) - 2.0**-70,
                                         2.0**-24 + 2.0**-54, 2.0**-23 + 2.0**-60]):
            xs[k == j], ys[k == j] = one(Fx), one(Fy)
            zb[k == j] = np.float64(zv).view(np.uint64)
        args = (xs, ys, zb, Fx, Fy, "rne", "satnone", "after", True)
        _same(_native._fma_f64(*args), _native._fma_f64(*args, fast=False), f"{fx}x{fy}")


def test_sra_fast_path_equals_golden():
    """project with SRA(N) takes the round-toward-zero or the round-away projection from the
    golden model's tables where the result is a normal value of the target; compared with the
    golden rounder per element (`tables=False`) on random bit patterns, values near every
    binade and overflow, for several formats, N and saturation modes, flags included."""
    rng = np.random.default_rng(31)
    n = 1 << 17
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    near = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 20, n)).astype(np.float32).view(np.uint32)
    x = np.concatenate([bits, near])
    for fmt in ["e4m3", "e5m2", "e2m1", "e3m4", "binary8p3se", "binary8p1uf", "e8m0", "e4m3fnuz",
                "binary8p8uf"]:
        f = Format(fmt)
        for nb in (1, 3, 8, 20, 23, 32):
            r = rng.integers(0, 2**nb, x.size, dtype=np.uint64).astype(np.uint32)
            for sat in ("satfinite", "satnone", "satpropagate"):
                for tin in ("after", "before"):
                    args = (x, "binary32", f, "sra", nb, sat, tin, 0, r, True)
                    _same(_native._project(*args), _native._project(*args, tables=False),
                          f"{fmt} sra({nb}) {sat} {tin}")
