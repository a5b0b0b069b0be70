"""The interoperability table of docs/python.md, row by row: which fp8gen format + modes
reproduce each framework's conversion bit for bit, and the counted exceptions.

* ONNX Cast (opset 21, saturate=1/0) through onnx's ReferenceEvaluator (onnx pinned in
  python/requirements.txt).
* PyTorch ``x.to(torch.float8_*)`` is RNE and non-saturating like ml_dtypes (c10's
  ``fp8e4m3fn_from_fp32_value`` etc.); torch is not installed here, so those rows are backed
  by the ml_dtypes rows (tests/test_ml_dtypes.py) and by test_pytorch_rows_are_ml_dtypes below.
* OCP 8-bit FP v1.0 conversions (SAT / non-SAT) and P3109 rows are backed by gfloat's OCP and
  P3109 formats in tests/test_gfloat.py; OCP MX by both references.
"""

import numpy as np
import pytest

import fp8gen
from conftest import CLASS_COUNTS, VECTORS, check_refs




def _onnx():
    try:
        import onnx  # noqa: F401
        from onnx import TensorProto, helper
        from onnx.reference import ReferenceEvaluator
    except ImportError as e:
        pytest.fail(f"onnx is missing ({e}): run `make setup-python` (python/requirements.txt)")
    return TensorProto, helper, ReferenceEvaluator


def onnx_cast(x, to_name, saturate):
    TensorProto, helper, ReferenceEvaluator = _onnx()
    to = getattr(TensorProto, to_name)
    node = helper.make_node("Cast", ["x"], ["y"], to=to, saturate=saturate)
    g = helper.make_graph([node], "cast",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None])],
                          [helper.make_tensor_value_info("y", to, [None])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    y = ReferenceEvaluator(m).run(None, {"x": x})[0]
    return np.asarray(y).view(np.uint8).astype(np.uint32)


# (ONNX type, saturate, fp8gen format, fp8gen saturation) -- all RNE
ONNX_ROWS = [
    ("FLOAT8E4M3FN", 1, "e4m3", "satfinite"),
    ("FLOAT8E4M3FN", 0, "e4m3", "satnone"),
    ("FLOAT8E5M2", 1, "e5m2", "satfinite"),
    ("FLOAT8E5M2", 0, "e5m2", "satnone"),
    ("FLOAT8E4M3FNUZ", 1, "e4m3fnuz", "satfinite"),
    ("FLOAT8E4M3FNUZ", 0, "e4m3fnuz", "satnone"),
    ("FLOAT8E5M2FNUZ", 1, "e5m2fnuz", "satfinite"),
    ("FLOAT8E5M2FNUZ", 0, "e5m2fnuz", "satnone"),
    ("FLOAT4E2M1", 1, "e2m1", "satfinite"),
    ("FLOAT4E2M1", 0, "e2m1", "satnone"),
]


def inputs(fmt):
    f = fp8gen.Format(fmt)
    t = check_refs.Table(fmt, f.k, fp8gen.decode(np.arange(f.num_codes), f).astype(np.float64), [])
    rng = np.random.default_rng(5)
    x = check_refs.distinct(np.concatenate([check_refs.boundary_inputs(100, 150),
                                  check_refs.value_inputs(t), check_refs.SPECIALS,
                                  check_refs.random_inputs(rng, 20000, 20000)]))
    return x.view(np.float32)


@pytest.mark.parametrize("onnx_type,saturate,fmt,sat", ONNX_ROWS,
                         ids=[f"{r[0]}-sat{r[1]}" for r in ONNX_ROWS])
def test_onnx_cast(onnx_type, saturate, fmt, sat):
    x = inputs(fmt)
    f = fp8gen.Format(fmt)
    ours, fl = fp8gen.project(x, f, rounding="rne", saturation=sat, flags=True)
    ours = ours.astype(np.uint32)
    ref = onnx_cast(x, onnx_type, saturate)
    mism = ours != ref
    xneg = np.signbit(x)
    xnan = np.isnan(x)
    vo = fp8gen.decode(ours, f).astype(np.float64)
    sign = np.uint32(1 << (f.k - 1))
    # nan-sign: ONNX (like ml_dtypes) keeps the sign of a negative NaN / NaN result
    nan_sign = mism & xneg & np.isnan(vo) & (ref == (ours | sign))
    # NaN into FLOAT4E2M1 (no NaN code): ONNX writes a zero, fp8gen nan_code (+0) + invalid
    mx_nan = np.zeros_like(mism)
    if not f.has_nan:
        mx_nan = mism & xnan & (ours == 0) & ((fl & fp8gen.INVALID) != 0) & ((ref & ~sign) == 0)
    rest = mism & ~nan_sign & ~mx_nan
    assert not rest.any(), [(float(x[i]), int(ours[i]), int(ref[i])) for i in np.flatnonzero(rest)[:5]]
    VECTORS["onnx"] += len(x)
    for cls, c in (("nan-sign", nan_sign), ("nan-to-zero", mx_nan)):
        if c.any():
            CLASS_COUNTS[f"onnx:{onnx_type}-saturate{saturate}:{cls}"] += int(c.sum())


@pytest.mark.parametrize("fmt", ["e4m3fnuz", "e5m2fnuz"])
def test_onnx_fnuz_inf_saturate1_documented_vs_reference(fmt):
    """ONNX's Cast table documents +-Inf -> NaN for the FNUZ types under saturate=1, while its
    reference evaluator returns +-FLT_MAX. fp8gen reproduces the evaluator: satfinite (and
    satpropagate, the same for formats without Inf) give +-MaxFinite; the documented rule is
    no fp8gen mode (satnone also turns finite overflow into NaN)."""
    f = fp8gen.Format(fmt)
    x = np.array([np.inf, -np.inf], np.float32)
    onnx_type = {"e4m3fnuz": "FLOAT8E4M3FNUZ", "e5m2fnuz": "FLOAT8E5M2FNUZ"}[fmt]
    ref = onnx_cast(x, onnx_type, 1)
    mx = f.max_finite_code
    want = np.array([mx, mx | 0x80], np.uint32)
    assert np.array_equal(ref, want)
    for sat in ("satfinite", "satpropagate"):
        assert np.array_equal(fp8gen.project(x, f, saturation=sat).astype(np.uint32), want)
    nan = fp8gen.project(x, f, saturation="satnone")
    assert (nan == f.nan_code).all()
    big = np.array([1e30], np.float32)  # finite overflow: documented and evaluator FLT_MAX
    assert onnx_cast(big, onnx_type, 1)[0] == mx
    assert fp8gen.project(big, f, saturation="satnone")[0] == f.nan_code


PYTORCH_ROWS = [("float8_e4m3fn", "e4m3"), ("float8_e5m2", "e5m2"),
                ("float8_e4m3fnuz", "e4m3fnuz"), ("float8_e5m2fnuz", "e5m2fnuz")]


@pytest.mark.parametrize("ml_name,fmt", PYTORCH_ROWS)
def test_pytorch_rows_are_ml_dtypes(ml_name, fmt):
    """PyTorch's four float8 dtypes convert like ml_dtypes (RNE, no saturation: overflow and
    +-Inf -> NaN for fn/fnuz, -> +-Inf for e5m2); the table row is fp8gen rne/satnone, which is
    ml_dtypes' mapping in check_refs.ML_TYPES (tested in test_ml_dtypes.py)."""
    assert (ml_name, fmt, "satnone") in check_refs.ML_TYPES
