#!/usr/bin/env python3
"""fp8gen.project vs ml_dtypes: binary32 -> E4M3 (E4M3FN) from Python, same run, one thread.

Both produce E4M3 codes from the same float32 array: ``fp8gen.project(x, "e4m3",
saturation="satnone")`` (uint8 codes; the mode matching ml_dtypes' cast, see docs/python.md)
and ``x.astype(ml_dtypes.float8_e4m3fn)``. fp8gen's loop runs in Rust with the GIL released
and one thread; ml_dtypes' cast loop is single-threaded C++. Each figure is the median of
--runs timed calls after one warm-up. Inputs: N(0, 1) * 16 (tensor-like) and uniform random
bit patterns (every exponent, NaNs included). The results of both are compared first.

Prints both rates and the ratio per input set, and one JSON line with --json.
Exit status 1 when --min-ratio is given and a ratio falls below it.

Usage: python/bench.py [--n N] [--runs R] [--min-ratio X] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
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


def median_s(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-ratio", type=float, default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.n < 1 or a.runs < 1:
        sys.stderr.write("bench.py: --n and --runs must be >= 1\n")
        return 2
    rng = np.random.default_rng(a.seed)
    inputs = {
        "normal*16": (rng.standard_normal(a.n, dtype=np.float32) * np.float32(16)),
        "random bits": rng.integers(0, 2**32, a.n, dtype=np.uint64).astype(np.uint32)
        .view(np.float32),
    }
    result = {"n": a.n, "runs": a.runs, "threads": 1, "ml_dtypes": ml_dtypes.__version__,
              "fp8gen": fp8gen.__version__, "numpy": np.__version__, "sets": {}}
    ok = True
    for name, x in inputs.items():
        ours = fp8gen.project(x, "e4m3", saturation="satnone")
        ref = x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        # Same codes except NaN sign (ml_dtypes keeps the sign of a negative NaN / overflow).
        diff = ours != ref
        if np.any(diff & ((ref & 0x7F) != 0x7F)):
            sys.stderr.write(f"bench.py: fp8gen and ml_dtypes disagree on {name} beyond NaN sign\n")
            return 1
        t_ours = median_s(lambda: fp8gen.project(x, "e4m3", saturation="satnone"), a.runs)
        t_ml = median_s(lambda: x.astype(ml_dtypes.float8_e4m3fn), a.runs)
        r_ours, r_ml = a.n / t_ours, a.n / t_ml
        ratio = r_ours / r_ml
        result["sets"][name] = {"fp8gen_per_s": round(r_ours), "ml_dtypes_per_s": round(r_ml),
                                "ratio": round(ratio, 2)}
        print(f"binary32 -> E4M3, {name:<12} fp8gen.project {r_ours:10.3e}/s   "
              f"ml_dtypes astype {r_ml:10.3e}/s   ratio {ratio:5.2f}x")
        if a.min_ratio is not None and ratio < a.min_ratio:
            ok = False
    if a.json:
        print(json.dumps(result))
    if not ok:
        sys.stderr.write(f"bench.py: ratio below --min-ratio {a.min_ratio}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
