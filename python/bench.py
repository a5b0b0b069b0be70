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

    if a.json:
        print(json.dumps(result))
    if not ok:
        sys.stderr.write(f"bench.py: a 1-thread project ratio is below --min-ratio {a.min_ratio}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
