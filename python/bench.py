#!/usr/bin/env python3
"""fp8gen's Python API against numpy / ml_dtypes equivalents, same run, same machine.

Rows (each ratio = fp8gen's rate / the reference's rate, both timed in the same loop):

* project binary32 -> E4M3: ``fp8gen.project(x, "e4m3", saturation="satnone")`` (the mode
  matching ml_dtypes' cast, see docs/python.md) vs ``x.astype(ml_dtypes.float8_e4m3fn)``
  (single-threaded C++), fp8gen on 1 thread and on every core; inputs N(0, 1) * 16
  (tensor-like) and uniform random bit patterns (every exponent, NaNs included). The codes of
  both are compared first (equal but for the NaN sign).
* fma E4M3 x E4M3 + binary32 -> binary32 (RNE): ``fp8gen.fma(a, b, z, "e4m3")`` on uint8
  codes vs numpy ``a.astype(np.float32) * b.astype(np.float32) + z`` with ``a``, ``b``
  ml_dtypes float8_e4m3fn arrays (the decode is part of numpy's work, as it is of fp8gen's).
  numpy rounds twice (product, sum) where fp8gen rounds once: the results are not compared.
* dot E4M3, N = 32 -> binary32 (RNE): ``fp8gen.dot(a, b, "e4m3")`` on uint8 codes of shape
  (M, 32) vs ``np.einsum("ij,ij->i", A, B)`` on float32 arrays A, B decoded beforehand
  (decode not timed: in einsum's favour); with E8M0 block scales (one uint8 code per row of
  x and of y), ``fp8gen.dot(a, b, "e4m3", scale_x=sa, scale_y=sb)`` vs the same einsum times
  the decoded float32 scales. numpy sums in float32 (rounding at every step) where fp8gen
  sums exactly and rounds once: the results are not compared.
* SR vs RNE: ``fp8gen.project(x, "e4m3", rounding="sra", sr_bits=8, rnd=r)`` vs the RNE
  project of the same values, both on every core and on 1 thread.
* MX block quantizer, E4M3, blocks of 32, E8M0 floor scale, satfinite:
  ``fp8gen.quantize_block(x, "e4m3")`` vs gfloat's vectorized path (the floor scale of
  ``compute_scale_amax``, ``round_ndarray`` + ``encode_ndarray``), vs
  ``gfloat.block.quantize_block`` itself (one Python call per block) and vs a numpy quantizer
  written as torchao / pychop do (amax → floor(log2) → scale → clamp → ml_dtypes RNE cast).
  All codes and scales are compared first.

Timing: every candidate of a row is called once per round, interleaved, after one warm-up;
each figure is the best (fastest) of --runs rounds, so a busy machine slows both sides of a
ratio alike. 1-thread rows also print the ratio of the best CPU times of the calling thread
(``time.thread_time``), which other jobs on the machine disturb less. numpy and ml_dtypes run on one thread; "all" is fp8gen.get_num_threads() threads.

Prints one line per row and, with --json, one JSON object. Exit status 1 when --min-ratio is
given and the 1-thread project ratio falls below it.

Usage: python/bench.py [--n N] [--runs R] [--min-ratio X] [--json] [--only project|fma|dot|sr]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

try:
    import numpy as np
    import ml_dtypes
    import fp8gen
except ImportError as e:  # pragma: no cover - setup error path
    sys.stderr.write(f"bench.py: missing Python package ({e}); run `make setup-python`\n")
    sys.exit(2)

warnings.filterwarnings("ignore", message="invalid value encountered in cast")


def best_s(fns: dict, runs: int) -> dict:
    """The fastest of `runs` timed calls of each function, calls interleaved round by round;
    each function is a (threads, callable) pair (fp8gen's thread count during its calls).
    Key k: wall-clock seconds; key k + "@cpu": CPU seconds of the calling thread (the whole
    work of a 1-thread call: fp8gen's, numpy's and ml_dtypes' loops run on it)."""
    for t, fn in fns.values():
        fp8gen.set_num_threads(t)
        fn()
    best = {k: float("inf") for k in fns}
    best.update({k + "@cpu": float("inf") for k in fns})
    for _ in range(runs):
        for k, (t, fn) in fns.items():
            fp8gen.set_num_threads(t)
            c0, t0 = time.thread_time(), time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
            best[k + "@cpu"] = min(best[k + "@cpu"], time.thread_time() - c0)
    fp8gen.set_num_threads(0)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 24, help="elements per array (default 2^24)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-ratio", type=float, default=None,
                    help="exit 1 when a 1-thread project ratio is below this")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", choices=["project", "fma", "dot", "sr"], default=None,
                    help="only this group of rows")
    a = ap.parse_args()
    if a.n < 64 or a.runs < 1:
        sys.stderr.write("bench.py: --n must be >= 64 and --runs >= 1\n")
        return 2
    rng = np.random.default_rng(a.seed)
    fp8gen.set_num_threads(0)
    allt = fp8gen.get_num_threads()
    result = {"n": a.n, "runs": a.runs, "threads_all": allt, "ml_dtypes": ml_dtypes.__version__,
              "fp8gen": fp8gen.__version__, "numpy": np.__version__, "rows": {}}
    ok = True

    def row(name, rate_ours, rate_ref, ref_name, ours_name, cpu=None):
        """cpu: (our CPU seconds, the reference's) of 1-thread rows: their ratio is printed too
        (on a loaded machine the wall-clock ratio varies with the other jobs, CPU time less)."""
        ratio = rate_ours / rate_ref
        result["rows"][name] = {"fp8gen_per_s": round(rate_ours), "ref_per_s": round(rate_ref),
                                "ratio": round(ratio, 2)}
        note = ""
        if cpu is not None and cpu[0] > 0:
            result["rows"][name]["cpu_ratio"] = round(cpu[1] / cpu[0], 2)
            note = f"   (CPU time {cpu[1] / cpu[0]:5.2f}x)"
        print(f"{name:<38} {ours_name} {rate_ours:9.3e}/s   {ref_name} {rate_ref:9.3e}/s   "
              f"ratio {ratio:5.2f}x{note}", flush=True)
        return ratio

    # --- project vs ml_dtypes ---------------------------------------------------------
    inputs = {
        "normal*16": (rng.standard_normal(a.n, dtype=np.float32) * np.float32(16)),
        "random bits": rng.integers(0, 2**32, a.n, dtype=np.uint64).astype(np.uint32)
        .view(np.float32),
    }
    for name, x in (inputs.items() if a.only in (None, "project") else []):
        ours = fp8gen.project(x, "e4m3", saturation="satnone")
        ref = x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        # Same codes except NaN sign (ml_dtypes keeps the sign of a negative NaN / overflow).
        if np.any((ours != ref) & ((ref & 0x7F) != 0x7F)):
            sys.stderr.write(f"bench.py: fp8gen and ml_dtypes disagree on {name} beyond NaN sign\n")
            return 1
        proj = lambda: fp8gen.project(x, "e4m3", saturation="satnone")  # noqa: E731
        t = best_s({"1": (1, proj), "all": (0, proj),
                    "ml": (1, lambda: x.astype(ml_dtypes.float8_e4m3fn))}, a.runs)
        r1 = row(f"project b32->e4m3 {name}, 1 thread", a.n / t["1"], a.n / t["ml"],
                 "ml_dtypes", "fp8gen", (t["1@cpu"], t["ml@cpu"]))
        row(f"project b32->e4m3 {name}, {allt} threads", a.n / t["all"], a.n / t["ml"],
            "ml_dtypes", "fp8gen")
        if a.min_ratio is not None and r1 < a.min_ratio:
            ok = False

    # --- fma vs numpy float32 a*b+z ----------------------------------------------------
    xa = rng.integers(0, 256, a.n, dtype=np.uint8)
    ya = rng.integers(0, 256, a.n, dtype=np.uint8)
    # finite operands (no NaN code 0x7F/0xFF), as in tensors
    xa[(xa & 0x7F) == 0x7F] = 0x7E
    ya[(ya & 0x7F) == 0x7F] = 0x7E
    z = rng.standard_normal(a.n, dtype=np.float32)
    ae, be = xa.view(ml_dtypes.float8_e4m3fn), ya.view(ml_dtypes.float8_e4m3fn)
    fma = lambda: fp8gen.fma(xa, ya, z, "e4m3")  # noqa: E731
    t = {} if a.only not in (None, "fma") else best_s({"1": (1, fma), "all": (0, fma),
                "np": (1, lambda: ae.astype(np.float32) * be.astype(np.float32) + z)}, a.runs)
    if t:
        row("fma e4m3*e4m3+b32, 1 thread", a.n / t["1"], a.n / t["np"], "numpy f32 a*b+z", "fp8gen",
            (t["1@cpu"], t["np@cpu"]))
        row(f"fma e4m3*e4m3+b32, {allt} threads", a.n / t["all"], a.n / t["np"],
            "numpy f32 a*b+z", "fp8gen")

    # --- dot N=32 vs einsum --------------------------------------------------------------
    m = a.n // 32
    X, Y = xa[: m * 32].reshape(m, 32), ya[: m * 32].reshape(m, 32)
    XF = X.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    YF = Y.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    SA = rng.integers(120, 135, m, dtype=np.uint8)
    SB = rng.integers(120, 135, m, dtype=np.uint8)
    SAF = SA.view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
    SBF = SB.view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
    dot = lambda: fp8gen.dot(X, Y, "e4m3")  # noqa: E731
    sdot = lambda: fp8gen.dot(X, Y, "e4m3", scale_x=SA, scale_y=SB)  # noqa: E731
    t = {} if a.only not in (None, "dot") else best_s({
        "1": (1, dot), "all": (0, dot), "np": (1, lambda: np.einsum("ij,ij->i", XF, YF)),
        "s1": (1, sdot), "sall": (0, sdot),
        "snp": (1, lambda: np.einsum("ij,ij->i", XF, YF) * SAF * SBF)}, a.runs)
    # rates in products (elements) per second
    for k, name, ref in (("", "dot e4m3 N=32", "numpy einsum f32"),
                         ("s", "dot e4m3 N=32 e8m0 scales", "numpy einsum*sa*sb")):
        if t:
            row(f"{name}, 1 thread", m * 32 / t[k + "1"], m * 32 / t[k + "np"], ref, "fp8gen",
                (t[k + "1@cpu"], t[k + "np@cpu"]))
            row(f"{name}, {allt} threads", m * 32 / t[k + "all"], m * 32 / t[k + "np"], ref,
                "fp8gen")

    # --- SR vs RNE -----------------------------------------------------------------------
    x = inputs["normal*16"]
    rnd = rng.integers(0, 256, a.n, dtype=np.uint32)
    sr = lambda: fp8gen.project(x, "e4m3", rounding="sra", sr_bits=8, rnd=rnd)  # noqa: E731
    rne = lambda: fp8gen.project(x, "e4m3")  # noqa: E731
    t = {} if a.only not in (None, "sr") else best_s(
        {"sr1": (1, sr), "rne1": (1, rne), "sr": (0, sr), "rne": (0, rne)}, a.runs)
    if t:
        row("project e4m3 SRA(8) vs RNE, 1 thread", a.n / t["sr1"], a.n / t["rne1"], "RNE", "SR ",
            (t["sr1@cpu"], t["rne1@cpu"]))
        row(f"project e4m3 SRA(8) vs RNE, {allt} threads", a.n / t["sr"], a.n / t["rne"], "RNE",
            "SR ")

    # --- MX block quantizer vs gfloat and a numpy (torchao-style) implementation ----------
    quantize_rows(a, rng, row, best_s, allt)

    if a.json:
        print(json.dumps(result))
    if not ok:
        sys.stderr.write(f"bench.py: a 1-thread project ratio is below --min-ratio {a.min_ratio}\n")
        return 1
    return 0


def numpy_mx(b):
    """MX quantization as torchao / pychop write it in numpy (OCP MX v1.0 section 6.3, floor):
    amax per block -> floor(log2 amax) (the binary32 exponent field) -> scale 2^(e - 8),
    clamped to E8M0 -> x / scale clamped to +-448 -> RNE cast to float8_e4m3fn (ml_dtypes).
    NaN and infinite blocks are not treated specially (torchao's NaN rule is a separate
    pass): the benchmark data has none."""
    amax = np.max(np.abs(b), axis=1)
    e = ((amax.view(np.uint32) >> 23) & 0xFF).astype(np.int32) - 127
    e = np.clip(e - 8, -127, 127)
    scale = np.ldexp(np.float32(1), e).astype(np.float32)[:, None]
    y = np.clip(b / scale, -448, 448)
    return y.astype(ml_dtypes.float8_e4m3fn).view(np.uint8), (e + 127).astype(np.uint8)


def gfloat_mx(b):
    """gfloat's vectorized MX path: the floor scale of gfloat.block.compute_scale_amax
    (floor(log2 amax) - emax, clipped) per block, then gfloat.round_ndarray (RNE, sat=True) and
    encode_ndarray of x / scale."""
    from gfloat import RoundMode, encode_ndarray, round_ndarray
    from gfloat.formats import format_info_ocp_e4m3
    amax = np.max(np.abs(b), axis=1).astype(np.float64)
    e = np.clip(np.floor(np.log2(amax)).astype(np.int32) - 8, -127, 127)
    y = b.astype(np.float64) / np.ldexp(1.0, e)[:, None]
    r = round_ndarray(format_info_ocp_e4m3, y, RoundMode.TiesToEven, sat=True)
    return encode_ndarray(format_info_ocp_e4m3, r).astype(np.uint8), (e + 127).astype(np.uint8)


def quantize_rows(a, rng, row, best_s, allt):
    """fp8gen.quantize_block (E4M3, blocks of 32, E8M0 floor scale, satfinite) against
    gfloat's vectorized round/encode, gfloat.block.quantize_block itself (one Python call per
    block, timed on a sample of 2048 blocks) and numpy_mx; the codes and scales of all are
    compared first. Inputs N(0, 1) * 16, no zero blocks."""
    try:
        import gfloat  # noqa: F401
        from gfloat.block import compute_scale_amax, quantize_block as gq
        from gfloat.formats import format_info_mxfp8_e4m3
    except ImportError:
        print("(gfloat not installed: run make setup-fpga for the quantizer rows)")
        return
    n = a.n // 32 * 32
    x = rng.standard_normal(n, dtype=np.float32) * np.float32(16)
    b = x.reshape(-1, 32)
    ours = lambda: fp8gen.quantize_block(x, "e4m3", block=32)  # noqa: E731
    c, s = ours()
    for name, (rc, rs) in (("gfloat", gfloat_mx(b)), ("numpy", numpy_mx(b))):
        if not (np.array_equal(c, rc.reshape(-1)) and np.array_equal(s, rs)):
            sys.stderr.write(f"bench.py: fp8gen.quantize_block and the {name} quantizer disagree\n")
            raise SystemExit(1)
    sample = b[:2048].astype(np.float64)
    ref = np.ldexp(1.0, s[:2048].astype(np.int32) - 127)[:, None] * c[:2048 * 32].view(
        ml_dtypes.float8_e4m3fn).astype(np.float64).reshape(-1, 32)
    got = np.stack([gq(format_info_mxfp8_e4m3, blk, compute_scale_amax) for blk in sample[:64]])
    if not np.array_equal(got, ref[:64]):
        sys.stderr.write("bench.py: gfloat.block.quantize_block disagrees with fp8gen\n")
        raise SystemExit(1)
    t = best_s({"1": (1, ours), "all": (0, ours), "gf": (1, lambda: gfloat_mx(b)),
                "np": (1, lambda: numpy_mx(b))}, a.runs)
    t0 = time.perf_counter()
    for blk in sample:
        gq(format_info_mxfp8_e4m3, blk, compute_scale_amax)
    t_gq = (time.perf_counter() - t0) / sample.size
    row("quantize e4m3 N=32 vs gfloat, 1 thread", n / t["1"], n / t["gf"], "gfloat round_ndarray",
        "fp8gen")
    row(f"quantize e4m3 N=32 vs gfloat, {allt} threads", n / t["all"], n / t["gf"],
        "gfloat round_ndarray", "fp8gen")
    row("quantize e4m3 N=32 vs gfloat per block", n / t["1"], 1 / t_gq,
        "gfloat quantize_block", "fp8gen")
    row("quantize e4m3 N=32 vs numpy, 1 thread", n / t["1"], n / t["np"], "numpy+ml_dtypes",
        "fp8gen")
    row(f"quantize e4m3 N=32 vs numpy, {allt} threads", n / t["all"], n / t["np"],
        "numpy+ml_dtypes", "fp8gen")


if __name__ == "__main__":
    sys.exit(main())
