"""fp8gen vs gfloat 0.5.2 (Graphcore's P3109 reference) through the Python API.

Rounding: every K = 8 P3109 format Binary8p{P}{s|u}{e|f} and the OCP formats (E4M3, E5M2,
MX E3M2/E2M3/E2M1, E8M0) x RNE, RNA, RTZ, RTP, RTN, SRA, SRB, SRC (8 random bits) x
satfinite, satnone and satpropagate (derived from gfloat's two saturation settings), on
boundary inputs (every rounding position of every relevant binary32 exponent), every value
and midpoint of the format and their neighbours, specials and random inputs
(check_refs.gfloat_inputs). Known differences (docs/semantics.md "Disagreements": gfloat-mx-nan,
gfloat-unsigned-neg, gfloat-e8m0-range) are checked against the rule of docs/semantics.md and counted.
Decode: every code of every P3109 format K = 2..10."""

import concurrent.futures

import numpy as np
import pytest
from gfloat import decode_ndarray

import fp8gen
from conftest import check_refs, record

FORMATS = check_refs.gfloat_formats([8])
IDS = [f[0] for f in FORMATS]


@pytest.mark.parametrize("name,fi,fam", FORMATS, ids=IDS)
def test_round_vs_gfloat(xcheck, name, fi, fam, monkeypatch):
    monkeypatch.setattr(xcheck, "gfloat_formats", lambda ks: [(name, fi, fam)])
    rows, skipped = [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        xcheck.check_gfloat_round("python", [8], np.random.default_rng(11), 4000, [8], pool,
                                  rows, skipped)
    assert not skipped
    record(rows)
    modes = {r.mode.split("/")[0].split("(")[0] for r in rows}
    assert modes == {"rne", "rna", "rtz", "rtp", "rtn", "sra", "srb", "src"}
    if not fi.is_signed and fam == "p3109":
        assert sum(r.expected["gfloat-unsigned-neg"] for r in rows) > 0


def p3109_names(ks):
    for k in ks:
        for signed in (True, False):
            for ext in (True, False):
                for p in range(1, k + (0 if signed else 1)):
                    yield k, p, signed, ext


@pytest.mark.parametrize("k", range(2, 11))
def test_decode_vs_gfloat(k):
    from gfloat.formats import format_info_p3109
    from gfloat.types import Domain, Signedness
    n = 0
    for k, p, signed, ext in p3109_names([k]):
        name = f"binary{k}p{p}{'s' if signed else 'u'}{'e' if ext else 'f'}"
        try:
            f = fp8gen.Format(name)
        except ValueError as e:
            # fp8gen rejects only formats without a positive finite value
            assert "no positive finite value" in str(e), (name, str(e))
            continue
        if f.value_dtype is None:
            continue  # beyond binary64: gfloat cannot represent them either
        fi = format_info_p3109(k, p, Signedness.Signed if signed else Signedness.Unsigned,
                               Domain.Extended if ext else Domain.Finite)
        codes = np.arange(f.num_codes)
        ours = fp8gen.decode(codes, f).astype(np.float64)
        with np.errstate(all="ignore"):
            ref = decode_ndarray(fi, codes)
        same = check_refs.same_value(ours, ref)
        assert same.all(), (name, np.flatnonzero(~same)[:5])
        fin = ours[np.isfinite(ours)]
        with np.errstate(over="ignore"):
            exact32 = np.array_equal(fin.astype(np.float32).astype(np.float64), fin)
        assert f.value_dtype == ("float32" if exact32 else "float64"), name
        n += 1
    assert n > 0
