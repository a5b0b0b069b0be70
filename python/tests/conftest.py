"""Shared fixtures of the fp8gen Python test suite.

The cross-checks reuse scripts/xcheck/check_refs.py (its input generators, its mapping of
fp8gen formats/modes to ml_dtypes and gfloat, and its precisely defined expected-difference
classes) with fp8gen's CLI calls replaced by the Python API: every vector a check counts as
an expected difference must satisfy that class's predicate, everything else fails the test.
The counts per class are printed at the end of the run (and written to
$FP8GEN_XCHECK_JSON when set)."""

import collections
import importlib.util
import json
import os
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import fp8gen  # noqa: F401
except ImportError as e:  # a missing build must fail loudly, never skip
    raise ImportError(
        f"fp8gen is not installed in this Python ({sys.executable}): run `make setup-python` "
        f"(scripts/setup-python.sh) first ({e})"
    ) from e


def _load_check_refs():
    path = os.path.join(REPO, "scripts", "xcheck", "check_refs.py")
    spec = importlib.util.spec_from_file_location("check_refs", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["check_refs"] = mod
    spec.loader.exec_module(mod)
    return mod


check_refs = _load_check_refs()

# expected-difference class -> vectors, over the whole session
CLASS_COUNTS = collections.Counter()
VECTORS = collections.Counter()


def _unhex(data: bytes, n: int):
    """Inverse of check_refs.hex_lines: (x, rnd or None) from 'xxxxxxxx[ rr]\\n' lines."""
    a = np.frombuffer(data, dtype=np.uint8).reshape(n, -1)
    u = check_refs.UNHEX

    def col(c):
        v = np.zeros(n, dtype=np.uint32)
        for i in range(c.shape[1]):
            v = (v << np.uint32(4)) | u[c[:, i]].astype(np.uint32)
        return v

    x = col(a[:, :8])
    r = col(a[:, 9:-1]) if a.shape[1] > 9 else None
    return x, r


def run_project_py(exe, fmt, k, rounding, sat, data, n, sr_bits=None):
    """check_refs.run_project through the Python API instead of `fp8gen project`."""
    x, r = _unhex(data, n)
    kw = {} if sr_bits is None else {"sr_bits": sr_bits}
    codes, fl = fp8gen.project(x.view(np.float32), fmt, rounding=rounding, saturation=sat,
                               flags=True, rnd=r, **kw)
    return codes.astype(np.uint32), fl


def decode_table_py(exe, fmt):
    f = fp8gen.Format(fmt)
    if f.value_dtype is None:
        raise OverflowError(f"{fmt}: values beyond binary64")
    codes = np.arange(f.num_codes, dtype=np.uint32)
    val = fp8gen.decode(codes, f).astype(np.float64)
    return check_refs.Table(fmt, f.k, val, [])


@pytest.fixture
def xcheck(monkeypatch):
    """check_refs with the Python API plugged in."""
    monkeypatch.setattr(check_refs, "run_project", run_project_py)
    monkeypatch.setattr(check_refs, "decode_table", decode_table_py)
    check_refs._TABLES.clear()
    return check_refs


def record(rows):
    """Asserts no unexplained mismatch and a consistent inexact flag; counts classes."""
    for r in rows:
        VECTORS[r.ref] += r.vectors
        CLASS_COUNTS.update({f"{r.ref}:{k}": v for k, v in r.expected.items()})
    bad = [r for r in rows if r.unexplained or r.inexact_bad]
    msg = "\n".join(f"{r.ref} {r.fmt} {r.mode}: {r.unexplained} unexplained, "
                    f"{r.inexact_bad} inexact-flag inconsistent; " + "; ".join(r.examples)
                    for r in bad)
    assert not bad, msg
    assert sum(r.vectors for r in rows) > 0


def pytest_terminal_summary(terminalreporter):
    if not VECTORS:
        return
    tr = terminalreporter
    tr.section("fp8gen cross-check: vectors and expected differences (counted, not hidden)")
    for ref, v in sorted(VECTORS.items()):
        tr.write_line(f"{ref}: {v} vectors")
    for k, v in sorted(CLASS_COUNTS.items()):
        tr.write_line(f"  {k}: {v}")
    out = os.environ.get("FP8GEN_XCHECK_JSON")
    if out:
        with open(out, "w") as f:
            json.dump({"vectors": dict(VECTORS), "expected": dict(CLASS_COUNTS)}, f, indent=1)
