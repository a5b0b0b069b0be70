#!/usr/bin/env python3
"""Speed reference: binary32 -> E4M3FN conversion throughput of the Python references.

* ml_dtypes: ``float32_array.astype(ml_dtypes.float8_e4m3fn)`` (C++ cast loop, one thread).
* gfloat: ``round_ndarray`` (vectorized numpy, RNE, sat=False) + ``encode_ndarray`` to codes,
  i.e. what it takes gfloat to produce E4M3 codes from a binary32 array.

Inputs are binary32 values ~ N(0, 1) * 16 (typical tensor data: none overflow E4M3, a small
fraction lands in its subnormal range) and, separately, uniform random bit patterns (every
exponent, NaNs included).  Each figure is the median of --runs timed runs
after one warm-up.  Prints one JSON object.

Usage: bench_ml_dtypes.py [--n N] [--gfloat-n N] [--runs R]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import warnings
from importlib.metadata import version

try:
    import numpy as np
    import ml_dtypes
    from gfloat import RoundMode, encode_ndarray, round_ndarray
    from gfloat.formats import format_info_ocp_e4m3
except ImportError as e:  # pragma: no cover - setup error path
    sys.stderr.write(f"bench_ml_dtypes.py: missing Python package ({e}); run `make setup-fpga`\n")
    sys.exit(2)

warnings.filterwarnings("ignore", message="invalid value encountered in cast")


def median_rate(fn, n: int, runs: int) -> dict:
    fn()  # warm-up (page faults, lazy init)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    return {"values": n, "runs": runs, "median_s": round(med, 6),
            "values_per_s": round(n / med), "min_s": round(min(times), 6)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 24, help="ml_dtypes array length")
    ap.add_argument("--gfloat-n", type=int, default=1 << 22, help="gfloat array length")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.n < 1 or a.gfloat_n < 1 or a.runs < 1:
        sys.stderr.write("bench_ml_dtypes.py: --n, --gfloat-n and --runs must be >= 1\n")
        return 2

    rng = np.random.default_rng(a.seed)
    normal = (rng.standard_normal(a.n, dtype=np.float32) * np.float32(16)).astype(np.float32)
    bits = rng.integers(0, 2**32, a.n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    fi = format_info_ocp_e4m3

    out = {
        "machine": {"python": platform.python_version(), "numpy": np.__version__,
                    "ml_dtypes": version("ml_dtypes"), "gfloat": version("gfloat"),
                    "cpu": platform.processor() or platform.machine(), "threads": 1},
        "ml_dtypes_f32_to_e4m3fn": median_rate(
            lambda: normal.astype(ml_dtypes.float8_e4m3fn), a.n, a.runs),
        "ml_dtypes_f32_to_e4m3fn_random_bits": median_rate(
            lambda: bits.astype(ml_dtypes.float8_e4m3fn), a.n, a.runs),
        "ml_dtypes_f32_to_e5m2": median_rate(
            lambda: normal.astype(ml_dtypes.float8_e5m2), a.n, a.runs),
    }
    g = normal[: a.gfloat_n].astype(np.float64)
    out["gfloat_round_ndarray_e4m3_rne"] = median_rate(
        lambda: round_ndarray(fi, g, RoundMode.TiesToEven, False), a.gfloat_n, a.runs)
    out["gfloat_round_and_encode_e4m3_rne"] = median_rate(
        lambda: encode_ndarray(fi, round_ndarray(fi, g, RoundMode.TiesToEven, False)),
        a.gfloat_n, a.runs)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
