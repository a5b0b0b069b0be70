"""fp8gen vs ml_dtypes 0.6.0 on every float8 / float6 / float4 type it has (RNE casts).

ml_dtypes' casts never saturate: fp8gen's `satnone` has the same meaning (check_refs.ML_TYPES).
Known differences (docs/semantics.md "Disagreements") are the classes nan-sign, mx-nan, ml-e8m0-subnormal
and ml-e8m0-tie of check_refs.EXPECTED; each is asserted to occur where it must, so a change in
either library shows up."""

import warnings

import ml_dtypes
import numpy as np
import pytest

import fp8gen
from conftest import check_refs, record

warnings.filterwarnings("ignore", message="invalid value encountered in cast")

ML = check_refs.ML_TYPES
IDS = [m[0] for m in ML]

# classes that must appear for each type (the disagreement is real, not an artefact)
MUST = {
    "float8_e4m3fn": {"nan-sign"},
    "float8_e5m2": {"nan-sign"},
    "float8_e4m3": {"nan-sign"},
    "float8_e3m4": {"nan-sign"},
    "float6_e3m2fn": {"mx-nan"},
    "float6_e2m3fn": {"mx-nan"},
    "float4_e2m1fn": {"mx-nan"},
    "float8_e8m0fnu": {"ml-e8m0-subnormal", "ml-e8m0-tie"},
}


def test_ml_types_cover_ml_dtypes():
    """Every float8/float6/float4 type of ml_dtypes is in the table."""
    have = {n for n in dir(ml_dtypes) if n.startswith(("float8_", "float6_", "float4_"))
            and isinstance(getattr(ml_dtypes, n), type)}
    assert have == set(IDS), have ^ set(IDS)


@pytest.mark.parametrize("ml_name,fmt,sat", ML, ids=IDS)
def test_project_f32_vs_ml_dtypes(xcheck, ml_name, fmt, sat, monkeypatch):
    monkeypatch.setattr(xcheck, "ML_TYPES", [(ml_name, fmt, sat)])
    rows = []
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        xcheck.check_ml("python", np.random.default_rng(7), 400_000, pool, rows)
    record(rows)
    seen = set(rows[0].expected)
    assert MUST.get(ml_name, set()) <= seen, (ml_name, seen)
    assert seen <= set(xcheck.EXPECTED)


@pytest.mark.parametrize("ml_name,fmt,sat", ML, ids=IDS)
def test_decode_every_code_vs_ml_dtypes(ml_name, fmt, sat):
    f = fp8gen.Format(fmt)
    ty = getattr(ml_dtypes, ml_name)
    codes = np.arange(f.num_codes, dtype=np.uint8)
    ours = fp8gen.decode(codes, f).astype(np.float64)
    ref = codes.view(ty).astype(np.float64)
    same = (np.isnan(ours) & np.isnan(ref)) | ((ours == ref) & (np.signbit(ours) == np.signbit(ref)))
    assert same.all(), [(int(c), ours[c], ref[c]) for c in np.flatnonzero(~same)[:5]]


def _same_code_or_nan(ours, ref, f):
    vo = fp8gen.decode(ours, f).astype(np.float64)
    return (ours == ref) | (np.isnan(vo) & np.isnan(fp8gen.decode(ref, f).astype(np.float64)))


@pytest.mark.parametrize("src", ["float16", "bfloat16"])
@pytest.mark.parametrize("ml_name,fmt,sat", [m for m in ML if m[0] != "float8_e8m0fnu"],
                         ids=[m[0] for m in ML if m[0] != "float8_e8m0fnu"])
def test_project_16bit_inputs_vs_ml_dtypes(src, ml_name, fmt, sat):
    """Every binary16 / bfloat16 bit pattern: fp8gen's 16-bit input path against ml_dtypes'
    cast of the same array. Differences allowed: NaN sign (both NaN) and, for the NaN-less MX
    types, a NaN input (fp8gen writes nan_code = +0 with invalid)."""
    dt = np.float16 if src == "float16" else ml_dtypes.bfloat16
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dt)
    f = fp8gen.Format(fmt)
    ours, fl = fp8gen.project(x, f, saturation=sat, flags=True)
    with np.errstate(all="ignore"):
        ref = x.astype(getattr(ml_dtypes, ml_name)).view(np.uint8)
    xnan = np.isnan(x.astype(np.float32))
    ok = _same_code_or_nan(ours, ref, f)
    if not f.has_nan:
        mx_nan = xnan & (ours == 0) & ((fl & fp8gen.INVALID) != 0)
        assert mx_nan[xnan].all()
        ok |= mx_nan
    assert ok.all(), [(hex(int(i)), int(ours[i]), int(ref[i])) for i in np.flatnonzero(~ok)[:5]]
    # and the same as the binary32 path on the widened values (exact), non-NaN inputs
    wide = fp8gen.project(x.astype(np.float32), f, saturation=sat, flags=True)
    assert np.array_equal(ours[~xnan], wide[0][~xnan])
    assert np.array_equal(fl[~xnan], wide[1][~xnan])


@pytest.mark.parametrize("fmt,ml_name", [("e4m3", "float8_e4m3fn"), ("e5m2", "float8_e5m2")])
@pytest.mark.parametrize("sub", [False, True])
def test_add_every_pair_vs_float64_sum_and_ml_dtypes_cast(fmt, ml_name, sub):
    """fp8gen.add (rne, satnone) against an independent computation: the float64 sum of the
    two decoded values (exact for 8-bit operands) cast by ml_dtypes (RNE, no saturation).
    NaN results compare as NaN (ml_dtypes' NaN sign differs, README "Disagreements")."""
    ty = getattr(ml_dtypes, ml_name)
    x, y = np.meshgrid(np.arange(256, dtype=np.uint8), np.arange(256, dtype=np.uint8))
    x, y = x.ravel(), y.ravel()
    ours = fp8gen.add(x, y, fmt, rounding="rne", saturation="satnone", sub=sub)
    xv, yv = x.view(ty).astype(np.float64), y.view(ty).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        s = xv - yv if sub else xv + yv
        ref = s.astype(ty)
    ours_v = ours.view(ty).astype(np.float64)
    ref_v = ref.astype(np.float64)
    nan = np.isnan(ref_v)
    assert np.array_equal(np.isnan(ours_v), nan)
    assert np.array_equal(ours.view(np.uint8)[~nan], ref.view(np.uint8)[~nan])


def test_add_mixed_formats_to_binary16_vs_numpy():
    """e4m3 ± e5m2 → binary16 (rne): the exact float64 sum cast by numpy (float64 → float16 is
    one correctly rounded conversion); zero signs, infinities and NaN included."""
    x, y = np.meshgrid(np.arange(256, dtype=np.uint8), np.arange(256, dtype=np.uint8))
    x, y = x.ravel(), y.ravel()
    xv = x.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    yv = y.view(ml_dtypes.float8_e5m2).astype(np.float64)
    for sub in (False, True):
        ours = fp8gen.add(x, y, "e4m3", fmt_y="e5m2", out_fmt="binary16", saturation="satnone",
                          sub=sub)
        with np.errstate(invalid="ignore", over="ignore"):
            ref = (xv - yv if sub else xv + yv).astype(np.float16)
        nan = np.isnan(ref)
        assert np.array_equal(np.isnan(ours.view(np.float16)), nan)
        assert np.array_equal(ours[~nan], ref.view(np.uint16)[~nan])
    # Flags and the rtn zero sign: 1 - 1 = -0 under rtn; +inf - +inf is NaN with invalid.
    r, fl = fp8gen.add([0x3C, 0x7C], [0x3C, 0x7C], "e5m2", rounding="rtn", saturation="satnone",
                       sub=True, flags=True)
    assert r[0] == 0x80 and fl[0] == 0
    assert np.isnan(r.view(ml_dtypes.float8_e5m2).astype(np.float64)[1])
    assert fl[1] == fp8gen.INVALID
