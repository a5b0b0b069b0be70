#!/usr/bin/env python3
"""Cross-check fp8gen's golden model against two independent Python references.

* ml_dtypes (Google/JAX): ``float32 -> float8_*/float6_*/float4_*`` casts (``ndarray.astype``),
  which round to nearest, ties to even, and never saturate on their own: overflow and +-Inf go
  to +-Inf where the type has it, else NaN (fn / fnuz / e8m0fnu); the MX types (float6_*,
  float4_*) have neither and clamp.  Each type is compared against the golden model's `rne` with
  the saturation mode that has the same meaning (`satnone`, see SATURATION_FOR below).
* gfloat 0.5.2 (Graphcore's P3109 reference): decode tables of every P3109 format
  ``binary{K}p{P}{s|u}{e|f}`` and of its OCP formats, and ``round_ndarray`` + value comparison
  for every rounding mode gfloat has that P3109 names (RTZ, RTN, RTP, RNE, RNA, and the three
  stochastic modes) x gfloat's two saturation settings (sat=True -> `satfinite`,
  sat=False -> `satnone`), plus `satpropagate` derived from both (sat=True for finite inputs,
  sat=False for +-Inf).

Inputs: every binary32 exponent x mantissa patterns around every possible rounding position
(kept bits, half, half +- 1, sticky), every target value, every midpoint and their float32
neighbours, the specials (+-0, +-Inf, quiet/signalling NaNs with payloads), plus random bit
patterns (uniform, and with exponents near the small formats' range).  Each (format, mode)
is one `fp8gen project --flags` process fed hex lines.

A mismatch is either *expected* -- it belongs to one of the precisely defined classes in
EXPECTED (a documented semantic difference, e.g. the sign of a NaN code) -- or *unexplained*.
The script prints a table (reference, format, mode, vectors, mismatches, expected-difference
counts per class) and exits 1 if anything is unexplained (2 on a usage / setup error).

Usage: check_refs.py [--fp8gen PATH] [--full] [--seed S] [--json FILE] [--only ml,gfloat,decode]
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field

try:
    import numpy as np
    import ml_dtypes
    import gfloat
    from gfloat import RoundMode, decode_ndarray, round_ndarray
    from gfloat.formats import (
        format_info_ocp_e2m1,
        format_info_ocp_e2m3,
        format_info_ocp_e3m2,
        format_info_ocp_e4m3,
        format_info_ocp_e5m2,
        format_info_ocp_e8m0,
        format_info_p3109,
    )
    from gfloat.types import Domain, Signedness
except ImportError as e:  # pragma: no cover - setup error path
    sys.stderr.write(
        f"check_refs.py: missing Python package ({e}); run `make setup-fpga` "
        "(installs scripts/xcheck/requirements.txt into .venv)\n"
    )
    sys.exit(2)

# NaN payloads are cast float32 -> float64 / small types on purpose.
warnings.filterwarnings("ignore", message="invalid value encountered in cast")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PINNED = {"ml_dtypes": "0.6.0", "gfloat": "0.5.2"}

# --------------------------------------------------------------------------------------------
# Expected-difference classes.  Each has a predicate (in the check functions) that must hold
# for *every* vector counted in it; anything else is unexplained.
EXPECTED = {
    "nan-sign": "NaN result from a negative input (-NaN, -Inf, or negative overflow under "
    "satnone) in a format with signed NaN codes: ml_dtypes returns the NaN code with the "
    "sign bit set (e.g. E4M3FN 0xFF, E5M2 0xFE), the golden model the positive canonical "
    "NaN (0x7F / 0x7E); both decode to NaN",
    "mx-nan": "NaN input to an MX type without NaN (float6_e3m2fn, float6_e2m3fn, "
    "float4_e2m1fn): ml_dtypes returns the zero whose sign is the *inverse* of the NaN's sign "
    "(+NaN -> -0, -NaN -> +0); the golden model returns --nan-code (+0) and raises invalid "
    "(SPEC section 2)",
    "ml-e8m0-subnormal": "positive binary32 subnormal input in (2^-127, 1.5*2^-127] "
    "(0x00400001..0x00600000) to float8_e8m0fnu: ml_dtypes returns 2^-126 (0x01) for all of "
    "them, although every one below the tie 0x00600000 is nearer to 2^-127 (an ml_dtypes "
    "defect; the tie itself goes up by ml_dtypes' tie rule, see ml-e8m0-tie); the golden "
    "model returns 2^-127 (0x00, inexact)",
    "ml-e8m0-tie": "binary32 normal input exactly halfway between two powers of two "
    "(1.5*2^e: mantissa field 0x400000) to float8_e8m0fnu: ml_dtypes rounds every such tie "
    "up (to 2^(e+1), ties away from zero); the golden model, like gfloat and P3109 RNE for "
    "P = 1, rounds it to the even code, which is 2^e for even biased exponent e + 127",
    "gfloat-mx-nan": "NaN input to an OCP MX format (no NaN encoding): gfloat's round_ndarray "
    "returns NaN, which its encode_ndarray rejects (no code); the golden model returns "
    "--nan-code (+0) and raises invalid",
    "gfloat-unsigned-neg": "negative non-NaN input to an unsigned P3109 format: gfloat has "
    "no rule for it (is_negative = signbit & is_signed, so it rounds the signed value and "
    "returns a negative value, or 0 where its tie / random threshold then points towards "
    "+Inf). Checked instead against the docs/semantics.md rule applied to gfloat's rounding of |x| "
    "(rtn -> TowardPositive, rtp -> TowardZero): golden = +0 when |x| rounds to 0, or under "
    "satfinite / satpropagate, or rtz / rtp for finite x (M_lo = 0, inexact; -Inf raises "
    "nothing); otherwise NaN with invalid",
    "gfloat-e8m0-range": "E8M0 input that is +-0, negative, or below 2^-127: gfloat's e8m0 "
    "(no zero, no subnormals, unsigned) returns 0, a negative value or 2^-128 and below, "
    "none of which E8M0 encodes. Checked instead against the docs/semantics.md rule: +-0 -> NaN with "
    "invalid; negative -> NaN with invalid (satnone, except rtz / rtp for finite x) else 2^-127 "
    "(0x00, inexact; -Inf raises nothing); "
    "0 < x < 2^-127 -> 2^-127 (0x00) with underflow and inexact",
}

# ml_dtypes type -> (fp8gen format, saturation mode with the same meaning)
ML_TYPES = [
    ("float8_e4m3fn", "e4m3", "satnone"),
    ("float8_e5m2", "e5m2", "satnone"),
    ("float8_e4m3fnuz", "e4m3fnuz", "satnone"),
    ("float8_e5m2fnuz", "e5m2fnuz", "satnone"),
    ("float8_e4m3b11fnuz", "e4m3b11fnuz", "satnone"),
    ("float8_e4m3", "e4m3-ieee", "satnone"),
    ("float8_e3m4", "e3m4", "satnone"),
    ("float6_e3m2fn", "e3m2", "satnone"),
    ("float6_e2m3fn", "e2m3", "satnone"),
    ("float4_e2m1fn", "e2m1", "satnone"),
    ("float8_e8m0fnu", "e8m0", "satnone"),
]

# gfloat RoundMode -> fp8gen rounding.  StochasticFastest is P3109 StochasticA
# (delta + R 2^-N >= 1), StochasticFast is StochasticB (delta + (R + 1/2) 2^-N >= 1),
# Stochastic is StochasticC (RNE(delta 2^N) + R >= 2^N).  StochasticOdd (ties-to-odd
# variant of C) has no P3109 name and no fp8gen mode; RTO has no gfloat mode.
GF_MODES = [
    (RoundMode.TiesToEven, "rne"),
    (RoundMode.TiesToAway, "rna"),
    (RoundMode.TowardZero, "rtz"),
    (RoundMode.TowardPositive, "rtp"),
    (RoundMode.TowardNegative, "rtn"),
    (RoundMode.StochasticFastest, "sra"),
    (RoundMode.StochasticFast, "srb"),
    (RoundMode.Stochastic, "src"),
]
STOCHASTIC = {"sra", "srb", "src"}


# --------------------------------------------------------------------------------------------
# fp8gen plumbing


HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
UNHEX = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    UNHEX[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    UNHEX[_c] = 10 + _i


# The two hex digits of every byte value.
HEX2 = np.stack([HEX[np.arange(256) >> 4], HEX[np.arange(256) & 0xF]], axis=1)


def hex_cols(vals: np.ndarray, digits: int) -> np.ndarray:
    """(n, digits) uint8 array of lowercase hex digits of vals (uint32, digits <= 8): the
    big-endian bytes through a 256-entry table of digit pairs."""
    assert 1 <= digits <= 8, digits
    b = vals.astype(">u4").view(np.uint8).reshape(-1, 4)
    return HEX2[b].reshape(-1, 8)[:, 8 - digits:]


def distinct(a: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-D array: `np.unique` by a sort (numpy 2.4's hashing
    `np.unique` takes ~25x longer on a few million uint32)."""
    s = np.sort(a, kind="stable")
    if len(s) == 0:
        return s
    return s[np.concatenate(([True], s[1:] != s[:-1]))]


def hex_lines(x: np.ndarray, r: np.ndarray | None = None, r_digits: int = 0) -> bytes:
    """'xxxxxxxx[ rr]\\n' per element, built without a Python loop."""
    cols = [hex_cols(x, 8)]
    if r is not None:
        cols.append(np.full((len(x), 1), ord(" "), dtype=np.uint8))
        cols.append(hex_cols(r, r_digits))
    cols.append(np.full((len(x), 1), 10, dtype=np.uint8))
    return np.ascontiguousarray(np.hstack(cols)).tobytes()


class Fp8genError(RuntimeError):
    pass


def run_project(exe: str, fmt: str, k: int, rounding: str, sat: str, data: bytes, n: int,
                sr_bits: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Runs `fp8gen project --flags`; returns (codes, flags) as uint32 / uint8 arrays."""
    cmd = [exe, "project", "-f", fmt, "-r", rounding, "-s", sat, "--flags"]
    if sr_bits is not None:
        cmd += ["--sr-bits", str(sr_bits)]
    p = subprocess.run(cmd, input=data, capture_output=True)
    if p.returncode != 0:
        raise Fp8genError(f"{' '.join(cmd)} exited {p.returncode}: "
                          f"{p.stderr.decode(errors='replace').strip()}")
    d = (k + 3) // 4
    w = d + 3  # code, space, flags nibble, newline
    out = p.stdout
    if len(out) != n * w:
        raise Fp8genError(f"{' '.join(cmd)}: expected {n} lines of {w} bytes, got "
                          f"{len(out)} bytes")
    a = np.frombuffer(out, dtype=np.uint8).reshape(n, w)
    if not (np.all(a[:, d] == 32) and np.all(a[:, -1] == 10)):
        raise Fp8genError(f"{' '.join(cmd)}: output is not 'code flags' lines")
    digs = UNHEX[a[:, :d]].astype(np.uint32)
    fl = UNHEX[a[:, d + 1]]
    if np.any(digs == 255) or np.any(fl == 255):
        raise Fp8genError(f"{' '.join(cmd)}: non-hex output")
    code = np.zeros(n, dtype=np.uint32)
    for i in range(d):
        code = (code << 4) | digs[:, i]
    return code, fl


@dataclass
class Table:
    """Decoded code table of an fp8gen format."""

    name: str
    k: int
    val: np.ndarray  # float64, NaN for NaN codes
    cls: list  # fp8gen class strings


_TABLES: dict[str, Table] = {}


def decode_table(exe: str, fmt: str) -> Table:
    if fmt in _TABLES:
        return _TABLES[fmt]
    p = subprocess.run([exe, "decode", "-f", fmt, "--json"], capture_output=True)
    if p.returncode != 0:
        raise Fp8genError(f"fp8gen decode -f {fmt}: {p.stderr.decode(errors='replace').strip()}")
    d = json.loads(p.stdout)
    codes = d["codes"]
    k = max(1, (len(codes) - 1).bit_length())
    val = np.empty(len(codes), dtype=np.float64)
    cls = []
    for i, c in enumerate(codes):
        if int(c["code"], 16) != i:
            raise Fp8genError(f"fp8gen decode -f {fmt}: code {c['code']} at position {i}")
        v = c["value"]
        if v == "nan":
            val[i] = math.nan
        elif v in ("inf", "+inf"):
            val[i] = math.inf
        elif v == "-inf":
            val[i] = -math.inf
        else:
            val[i] = float.fromhex(v)  # exact; OverflowError beyond binary64
        cls.append(c["class"])
    t = Table(fmt, k, val, cls)
    _TABLES[fmt] = t
    return t


# --------------------------------------------------------------------------------------------
# Inputs


def mantissa_patterns() -> np.ndarray:
    """Binary32 trailing significands around every rounding position c (kept bits)."""
    pats = set()
    for c in range(0, 24):
        t = 23 - c
        prefixes = {0, 1, 2, (1 << c) - 1, (1 << c) - 2, 0x555555 & ((1 << c) - 1)}
        prefixes = {q for q in prefixes if 0 <= q < (1 << c)}
        if t == 0:
            tails = {0}
        else:
            half = 1 << (t - 1)
            tails = {0, 1, half - 1, half, half + 1, (1 << t) - 1}
        for q in prefixes:
            for tl in tails:
                pats.add((q << t) | tl)
    return np.array(sorted(pats), dtype=np.uint32)


MANT = mantissa_patterns()

SPECIALS = np.array(
    [0x00000000, 0x7F800000, 0x7FC00000, 0x7FC00001, 0x7FFFFFFF, 0x7F800001, 0x7FA00000,
     0x7F812345, 0x7F7FFFFF, 0x00000001, 0x00000002, 0x00000003, 0x007FFFFF, 0x00800000,
     0x00400000, 0x00400001, 0x3F800000, 0x3F800001, 0x3F7FFFFF],
    dtype=np.uint32,
)
SPECIALS = np.concatenate([SPECIALS, SPECIALS | np.uint32(0x80000000)])


def boundary_inputs(emin: int, emax: int) -> np.ndarray:
    """Both signs x biased binary32 exponents emin..emax x MANT, plus exponent 255 specials."""
    exps = np.arange(max(emin, 0), min(emax, 254) + 1, dtype=np.uint32)
    b = ((exps[:, None] << np.uint32(23)) | MANT[None, :]).ravel()
    return np.concatenate([b, b | np.uint32(0x80000000), SPECIALS])


def value_inputs(t: Table) -> np.ndarray:
    """Every finite value of the format, every midpoint, and their float32 neighbours."""
    v = distinct(t.val[np.isfinite(t.val)])
    v = v[np.abs(v) <= np.finfo(np.float32).max]
    mids = (v[1:] + v[:-1]) / 2
    pos = v[v > 0]
    extra = [2 * v.max(), v.max() * 1.5, pos.min() / 2 if len(pos) else 0.0]
    if len(v) > 1:
        top = v.max() + (v.max() - v[-2]) / 2  # overflow threshold of the unbounded rounding
        extra += [top]
    allv = np.concatenate([v, mids, np.array(extra)])
    allv = allv[np.abs(allv) <= np.finfo(np.float32).max]
    f = allv.astype(np.float32)  # exact for these formats' values and midpoints
    up = np.nextafter(f, np.float32(np.inf))
    dn = np.nextafter(f, np.float32(-np.inf))
    out = np.concatenate([f, up, dn, -f, -up, -dn]).astype(np.float32).view(np.uint32)
    return out


def random_inputs(rng: np.random.Generator, n_uniform: int, n_near: int,
                  lo: int = 127 - 40, hi: int = 127 + 20) -> np.ndarray:
    u = rng.integers(0, 2**32, n_uniform, dtype=np.uint64).astype(np.uint32)
    s = rng.integers(0, 2, n_near, dtype=np.uint32) << np.uint32(31)
    e = rng.integers(lo, hi + 1, n_near, dtype=np.uint32) << np.uint32(23)
    m = rng.integers(0, 1 << 23, n_near, dtype=np.uint32)
    return np.concatenate([u, s | e | m])


def f32(bits: np.ndarray) -> np.ndarray:
    return bits.view(np.float32)


# --------------------------------------------------------------------------------------------
# Result bookkeeping


@dataclass
class Row:
    ref: str
    fmt: str
    mode: str
    vectors: int = 0
    mismatches: int = 0
    expected: collections.Counter = field(default_factory=collections.Counter)
    unexplained: int = 0
    examples: list = field(default_factory=list)
    inexact_bad: int = 0  # golden inexact flag disagreeing with its own result value

    def add_unexplained(self, mask, x, ours, fl, ref_desc):
        idx = np.flatnonzero(mask)
        self.unexplained += len(idx)
        for i in idx[: max(0, 5 - len(self.examples))]:
            self.examples.append(
                f"in=0x{int(x[i]):08x} ({float(f32(x[i:i+1])[0])!r}) golden=0x{int(ours[i]):x} "
                f"flags={int(fl[i]):x} {ref_desc(i)}"
            )


T0 = time.time()


def progress(what: str) -> None:
    """One line per format on stderr, so that long (--full) runs show where they are."""
    sys.stderr.write(f"[{time.time() - T0:7.1f} s] {what}\n")
    sys.stderr.flush()


def same_value(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise: equal including the sign of zero, or both NaN."""
    both_nan = np.isnan(a) & np.isnan(b)
    return both_nan | ((a == b) & (np.signbit(a) == np.signbit(b)))


def check_inexact(row: Row, x: np.ndarray, val_ours: np.ndarray, fl: np.ndarray):
    """Golden `inexact` flag vs its own result value, where input and result are finite."""
    xv = f32(x).astype(np.float64)
    m = np.isfinite(xv) & np.isfinite(val_ours)
    inexact = (fl & 1) != 0
    row.inexact_bad += int(np.count_nonzero(m & (inexact != (val_ours != xv))))


# --------------------------------------------------------------------------------------------
# ml_dtypes


def check_ml(exe: str, rng, n_random: int, pool, rows: list):
    common = np.concatenate([boundary_inputs(0, 254), random_inputs(rng, n_random // 2,
                                                                    n_random - n_random // 2)])
    for ml_name, fmt, sat in ML_TYPES:
        progress(f"ml_dtypes {ml_name}")
        t = decode_table(exe, fmt)
        x = distinct(np.concatenate([common, value_inputs(t)]))
        fut = pool.submit(run_project, exe, fmt, t.k, "rne", sat, hex_lines(x), len(x))
        ty = getattr(ml_dtypes, ml_name)
        with np.errstate(all="ignore"):
            ref = f32(x).astype(ty).view(np.uint8).astype(np.uint32)
            ref_vals = f32(x).astype(ty).astype(np.float64)
        ours, fl = fut.result()
        row = Row("ml_dtypes", f"{ml_name} ({fmt})", f"rne/{sat}", len(x))
        mism = ours != ref
        row.mismatches = int(np.count_nonzero(mism))
        check_inexact(row, x, t.val[ours], fl)
        if row.mismatches:
            signbit = np.uint32(1 << (t.k - 1))
            xneg = (x >> np.uint32(31)) != 0
            xnan = np.isnan(f32(x))
            ours_nan = np.isnan(t.val[ours])
            c_nan_sign = mism & xneg & ours_nan & np.isnan(ref_vals) & ((ours & signbit) == 0) & (
                ref == (ours | signbit))
            c_mx = np.zeros_like(mism)
            if not np.isnan(t.val).any():  # NaN-less MX type
                c_mx = mism & xnan & (ours == 0) & ((fl & 8) != 0) & (
                    ref == np.where(xneg, 0, signbit))
            c_e8m0 = np.zeros_like(mism)
            if fmt == "e8m0":
                c_e8m0 = mism & (x >= 0x00400001) & (x <= 0x00600000) & (ours == 0) & (ref == 1)
                c_e8m0_tie = (mism & ~xneg & ((x & 0x7FFFFF) == 0x400000) & ((x >> 23) >= 1)
                              & ((x >> 23) < 255) & (ours % 2 == 0) & (ref == ours + 1)
                              & (ours == (x >> 23)))
            else:
                c_e8m0_tie = np.zeros_like(mism)
            classes = (("nan-sign", c_nan_sign), ("mx-nan", c_mx), ("ml-e8m0-subnormal", c_e8m0),
                       ("ml-e8m0-tie", c_e8m0_tie))
            rest = mism.copy()
            for name, c in classes:
                if c.any():
                    row.expected[name] += int(np.count_nonzero(c))
                rest &= ~c
            row.add_unexplained(rest, x, ours, fl,
                                lambda i: f"ml_dtypes=0x{int(ref[i]):x} ({ref_vals[i]!r})")
        rows.append(row)


# --------------------------------------------------------------------------------------------
# gfloat


def gfloat_formats(ks):
    """(fp8gen name, gfloat FormatInfo, family) for P3109 K in ks and the OCP formats."""
    out = []
    for k in ks:
        for signed in (True, False):
            for ext in (True, False):
                for p in range(1, k + (0 if signed else 1)):
                    name = f"binary{k}p{p}{'s' if signed else 'u'}{'e' if ext else 'f'}"
                    fi = format_info_p3109(k, p, Signedness.Signed if signed else Signedness.Unsigned,
                                           Domain.Extended if ext else Domain.Finite)
                    out.append((name, fi, "p3109"))
    out += [("e4m3", format_info_ocp_e4m3, "ocp"), ("e5m2", format_info_ocp_e5m2, "ocp"),
            ("e3m2", format_info_ocp_e3m2, "mx"), ("e2m3", format_info_ocp_e2m3, "mx"),
            ("e2m1", format_info_ocp_e2m1, "mx"), ("e8m0", format_info_ocp_e8m0, "e8m0")]
    return out


def check_gfloat_decode(exe: str, ks, rows: list, skipped: list):
    progress(f"gfloat decode tables K={min(ks)}..{max(ks)}")
    row = Row("gfloat", f"decode tables K={min(ks)}..{max(ks)} + OCP", "decode")
    nformats = 0
    for name, fi, _fam in gfloat_formats(ks):
        try:
            t = decode_table(exe, name)
        except Fp8genError as e:
            skipped.append(f"{name}: fp8gen rejects it ({str(e).splitlines()[-1]})")
            continue
        except OverflowError:
            skipped.append(f"{name}: values beyond binary64, gfloat cannot represent them")
            continue
        if len(t.val) != 2 ** fi.k:
            row.add_unexplained(np.array([True]), np.zeros(1, np.uint32), np.zeros(1, np.uint32),
                                np.zeros(1, np.uint8),
                                lambda i: f"{name}: fp8gen has {len(t.val)} codes, gfloat {2**fi.k}")
            continue
        codes = np.arange(2 ** fi.k, dtype=np.int64)
        with np.errstate(all="ignore"):
            g = decode_ndarray(fi, codes)
        nformats += 1
        row.vectors += len(codes)
        bad = ~same_value(t.val, g)
        # class names: gfloat FloatClass for each code via the scalar decoder is slow; compare
        # the subnormal/normal split from the values instead.
        if fi.has_subnormals and fi.precision > 1:
            lim = 2.0 ** (1 - fi.bias)
            sub_g = np.isfinite(g) & (g != 0) & (np.abs(g) < lim)
            sub_o = np.array([c == "subnormal" for c in t.cls])
            bad |= sub_g != sub_o
        row.mismatches += int(np.count_nonzero(bad))
        if bad.any():
            row.add_unexplained(bad, codes.astype(np.uint32), codes.astype(np.uint32),
                                np.zeros(len(codes), np.uint8),
                                lambda i, name=name, g=g, t=t: f"{name} code 0x{i:x}: "
                                f"fp8gen {t.val[i]!r} ({t.cls[i]}) gfloat {g[i]!r}")
    row.fmt += f" ({nformats} formats)"
    rows.append(row)


def gfloat_inputs(t: Table, fi, rng, n_random: int) -> np.ndarray:
    v = np.abs(t.val[np.isfinite(t.val) & (t.val != 0)])
    lo = int(math.floor(math.log2(v.min()))) + 127 - 4 - fi.precision
    hi = int(math.floor(math.log2(v.max()))) + 127 + 3
    return distinct(np.concatenate([
        boundary_inputs(lo, hi),
        boundary_inputs(0, 2)[::7], boundary_inputs(250, 254)[::7],
        value_inputs(t),
        random_inputs(rng, n_random // 2, n_random - n_random // 2,
                      max(1, lo), min(254, hi)),
    ]))


def check_gfloat_round(exe: str, ks, rng, n_random: int, sr_bits_list, pool, rows: list,
                       skipped: list):
    for name, fi, fam in gfloat_formats(ks):
        try:
            t = decode_table(exe, name)
        except (Fp8genError, OverflowError):
            continue  # reported by the decode check
        progress(f"gfloat {name}")
        x = gfloat_inputs(t, fi, rng, n_random)
        xv = f32(x).astype(np.float64)
        xneg = (x >> np.uint32(31)) != 0
        xnan = np.isnan(xv)
        data_plain = hex_lines(x)
        # gfloat sat flag(s) available for this format, and the golden modes they define.
        if fam == "mx":
            sat_runs = [(True, "satfinite"), (True, "satnone")]  # MX always saturates
        else:
            sat_runs = [(True, "satfinite"), (False, "satnone")]
        for gmode, ours_mode in GF_MODES:
            variants = [(None, data_plain, None)]
            if ours_mode in STOCHASTIC:
                variants = []
                for nb in sr_bits_list:
                    r = rng.integers(0, 2 ** nb, len(x), dtype=np.int64)
                    variants.append((nb, hex_lines(x, r.astype(np.uint32), (nb + 3) // 4), r))
            for nb, data, r in variants:
                futs = {s: pool.submit(run_project, exe, name, t.k, ours_mode, s, data, len(x), nb)
                        for _flag, s in sat_runs}
                if fam not in ("mx",) and (fam != "e8m0"):
                    futs["satpropagate"] = pool.submit(run_project, exe, name, t.k, ours_mode,
                                                       "satpropagate", data, len(x), nb)
                g_by_sat = {}
                for sat_flag in sorted({f for f, _ in sat_runs}):
                    with np.errstate(all="ignore"):
                        # NaN into a NaN-less MX format: round_ndarray returns NaN (only its
                        # encode_ndarray rejects it), counted as class gfloat-mx-nan.
                        g = round_ndarray(fi, xv, gmode, sat_flag, r, nb or 0)
                    g_by_sat[sat_flag] = g
                refs = {s: g_by_sat[f] for f, s in sat_runs}
                if "satpropagate" in futs:
                    if fi.domain == Domain.Extended:
                        refs["satpropagate"] = np.where(np.isinf(xv), g_by_sat[False],
                                                        g_by_sat[True])
                    else:
                        refs["satpropagate"] = g_by_sat[True]
                mag_cache = {}
                toward_plus = np.bool_(ours_mode in ("rtz", "rtp"))

                def gmag(nb=nb, r=r, gmode=gmode):
                    """gfloat's rounding of |x| with the mode that rounds x<0 the same way."""
                    if "m" not in mag_cache:
                        mm = {RoundMode.TowardPositive: RoundMode.TowardZero,
                              RoundMode.TowardNegative: RoundMode.TowardPositive}.get(gmode, gmode)
                        with np.errstate(all="ignore"):
                            mag_cache["m"] = round_ndarray(fi, np.abs(xv), mm, True, r, nb or 0)
                    return mag_cache["m"]

                for s, fut in futs.items():
                    ours, fl = fut.result()
                    g = refs[s]
                    mode = f"{ours_mode}{'' if nb is None else f'(N={nb})'}/{s}"
                    if s == "satpropagate":
                        mode += "*"
                    row = Row("gfloat", name, mode, len(x))
                    vo = t.val[ours]
                    check_inexact(row, x, vo, fl)
                    mism = ~same_value(vo, g)
                    row.mismatches = int(np.count_nonzero(mism))
                    if row.mismatches:
                        classes = {}
                        if fam == "mx":
                            classes["gfloat-mx-nan"] = mism & xnan & (ours == 0) & ((fl & 8) != 0)
                        if not fi.is_signed and fam != "e8m0":
                            neg = mism & xneg & ~xnan
                            gm = gmag()
                            # +-Inf is not rounded: -Inf under satnone is NaN even for rtz / rtp.
                            exp_zero = ((gm == 0) | (s != "satnone")
                                        | (toward_plus & np.isfinite(xv)))
                            ok0 = exp_zero & (ours == 0) & (
                                ((fl & 1) != 0) | (xv == 0) | np.isinf(xv))
                            oknan = ~exp_zero & np.isnan(vo) & ((fl & 8) != 0)
                            classes["gfloat-unsigned-neg"] = neg & (ok0 | oknan)
                        if fam == "e8m0":
                            zero_in = (xv == 0)
                            neg_nan = (xv < 0) & (s == "satnone") & ~(toward_plus & np.isfinite(xv))
                            want_nan = zero_in | neg_nan
                            ok_nan = want_nan & np.isnan(vo) & ((fl & 8) != 0)
                            ok_neg = (xv < 0) & ~want_nan & (ours == 0) & (
                                ((fl & 1) != 0) | np.isinf(xv))
                            tiny = (xv > 0) & (xv < 2.0 ** -127) & (ours == 0) & ((fl & 3) == 3)
                            classes["gfloat-e8m0-range"] = mism & ~xnan & (
                                ok_nan | ok_neg | tiny) & (np.isnan(g) | (g < 2.0 ** -127))
                        done = np.zeros_like(mism)
                        for cname, c in classes.items():
                            c = c & ~done
                            if c.any():
                                row.expected[cname] += int(np.count_nonzero(c))
                            done |= c
                        rest = mism & ~done
                        row.add_unexplained(rest, x, ours, fl,
                                            lambda i, g=g, r=r: f"gfloat={g[i]!r}"
                                            + ("" if r is None else f" R=0x{int(r[i]):x}"))
                    rows.append(row)


# --------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fp8gen", default=os.path.join(REPO, "target", "release", "fp8gen"),
                    help="fp8gen binary (default: target/release/fp8gen)")
    ap.add_argument("--full", action="store_true",
                    help="more random vectors, P3109 K=3..8 rounding, decode up to K=12, "
                    "N in {1,3,8} stochastic bits")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="ml,gfloat,decode",
                    help="comma-separated subset of ml, gfloat, decode")
    ap.add_argument("--json", help="also write the summary as JSON to this file")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every row")
    a = ap.parse_args()

    if not os.path.isfile(a.fp8gen) or not os.access(a.fp8gen, os.X_OK):
        sys.stderr.write(f"check_refs.py: fp8gen binary '{a.fp8gen}' not found; build it with "
                         "`cargo build --release` or pass --fp8gen PATH\n")
        return 2
    for mod, want in PINNED.items():
        have = sys.modules[mod].__version__ if hasattr(sys.modules[mod], "__version__") else None
        if have is None:
            from importlib.metadata import version
            have = version(mod)
        if have != want:
            sys.stderr.write(f"check_refs.py: {mod} {have} installed, {want} pinned; run "
                             "`make setup-fpga`\n")
            return 2

    only = set(a.only.split(","))
    unknown = only - {"ml", "gfloat", "decode"}
    if unknown:
        sys.stderr.write(f"check_refs.py: --only: unknown part(s) {sorted(unknown)}; "
                         "use ml, gfloat, decode\n")
        return 2
    rng = np.random.default_rng(a.seed)
    rows: list[Row] = []
    skipped: list[str] = []
    t0 = time.time()
    ml_random = 20_000_000 if a.full else 3_000_000
    gf_random = 1_000_000 if a.full else 60_000
    gf_ks = range(3, 9) if a.full else [8]
    dec_ks = range(2, 13) if a.full else range(2, 11)
    sr_bits = [1, 3, 8] if a.full else [8]
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            if "decode" in only:
                check_gfloat_decode(a.fp8gen, dec_ks, rows, skipped)
            if "ml" in only:
                check_ml(a.fp8gen, rng, ml_random, pool, rows)
            if "gfloat" in only:
                check_gfloat_round(a.fp8gen, gf_ks, rng, gf_random, sr_bits, pool, rows, skipped)
    except Fp8genError as e:
        sys.stderr.write(f"check_refs.py: {e}\n")
        return 2
    elapsed = time.time() - t0

    # Summary: every ml_dtypes row and decode row; gfloat rows aggregated per format unless -v.
    print(f"{'reference':<10} {'format':<36} {'mode':<22} {'vectors':>10} {'mismatch':>9} "
          f"{'unexpl.':>8}  expected-difference classes")
    agg: dict = {}
    for r in rows:
        if r.ref == "gfloat" and r.mode != "decode" and not a.verbose:
            key = (r.ref, r.fmt, "all modes")
        else:
            key = (r.ref, r.fmt, r.mode)
        s = agg.setdefault(key, Row(*key))
        s.vectors += r.vectors
        s.mismatches += r.mismatches
        s.unexplained += r.unexplained
        s.expected.update(r.expected)
        s.inexact_bad += r.inexact_bad
        s.examples += [f"[{r.mode}] {e}" for e in r.examples][: max(0, 5 - len(s.examples))]
        if key[2] == "all modes":
            s.__dict__.setdefault("nmodes", 0)
            s.__dict__["nmodes"] += 1
    for key, s in agg.items():
        mode = s.mode if key[2] != "all modes" else f"{s.__dict__['nmodes']} mode/sat runs"
        exp = ", ".join(f"{k}={v}" for k, v in sorted(s.expected.items())) or "-"
        if s.inexact_bad:
            exp += f"; inexact-flag inconsistent={s.inexact_bad}"
        print(f"{s.ref:<10} {s.fmt:<36} {mode:<22} {s.vectors:>10} {s.mismatches:>9} "
              f"{s.unexplained:>8}  {exp}")
        for e in s.examples:
            print(f"    unexplained: {e}")
    total_v = sum(r.vectors for r in rows)
    total_u = sum(r.unexplained for r in rows)
    total_inexact = sum(r.inexact_bad for r in rows)
    used = collections.Counter()
    for r in rows:
        used.update(r.expected)
    print()
    for k, v in sorted(used.items()):
        print(f"expected class {k} ({v} vectors): {EXPECTED[k]}")
    print("* satpropagate vs gfloat is derived: sat=True for finite inputs, sat=False for +-Inf "
          "(gfloat has only sat on/off). Not compared (no gfloat mode): rto, satnone-v4; "
          "gfloat StochasticOdd has no fp8gen mode.")
    for s in skipped:
        print(f"skipped: {s}")
    print(f"\n{len(rows)} runs, {total_v} vectors, {total_u} unexplained mismatches, "
          f"{total_inexact} inexact-flag inconsistencies, {elapsed:.1f} s "
          f"(ml_dtypes {PINNED['ml_dtypes']}, gfloat {PINNED['gfloat']})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({
                "vectors": total_v, "unexplained": total_u, "inexact_inconsistent": total_inexact,
                "seconds": round(elapsed, 2),
                "expected_classes": {k: {"count": v, "meaning": EXPECTED[k]}
                                     for k, v in sorted(used.items())},
                "rows": [{"ref": r.ref, "format": r.fmt, "mode": r.mode, "vectors": r.vectors,
                          "mismatches": r.mismatches, "unexplained": r.unexplained,
                          "expected": dict(r.expected), "examples": r.examples}
                         for r in rows],
                "skipped": skipped,
            }, f, indent=1)
    return 1 if (total_u or total_inexact) else 0


if __name__ == "__main__":
    sys.exit(main())
