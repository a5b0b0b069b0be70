"""Type stubs of fp8gen (the golden model of fp8gen for numpy arrays)."""

from typing import Any, List, Literal, Optional, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str
VERSION: str
INVALID: int
OVERFLOW: int
UNDERFLOW: int
INEXACT: int
MAX_DOT_N: int

class Format:
    """A small-float format: a preset, alias or P3109 name, a numpy/ml_dtypes dtype, or a
    custom format from its fields. Compares equal to its names; hashes as its canonical name;
    pickles by name."""

    def __new__(
        cls,
        name: Optional[Union[str, "Format", npt.DTypeLike]] = ...,
        *,
        k: Optional[int] = ...,
        p: Optional[int] = ...,
        bias: Optional[int] = ...,
        signed: Optional[bool] = ...,
        specials: Optional[str] = ...,
    ) -> "Format": ...
    @property
    def k(self) -> int: ...
    @property
    def p(self) -> int: ...
    @property
    def bias(self) -> int: ...
    @property
    def signed(self) -> bool: ...
    @property
    def specials(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def exp_bits(self) -> int: ...
    @property
    def man_bits(self) -> int: ...
    @property
    def num_codes(self) -> int: ...
    @property
    def code_mask(self) -> int: ...
    @property
    def max_finite(self) -> float: ...
    @property
    def min_positive(self) -> float: ...
    @property
    def max(self) -> float: ...
    @property
    def eps(self) -> float: ...
    @property
    def smallest_normal(self) -> float: ...
    @property
    def tiny(self) -> float: ...
    @property
    def smallest_subnormal(self) -> float: ...
    @property
    def max_finite_code(self) -> int: ...
    @property
    def has_inf(self) -> bool: ...
    @property
    def has_nan(self) -> bool: ...
    @property
    def has_neg_zero(self) -> bool: ...
    @property
    def nan_code(self) -> Optional[int]: ...
    @property
    def pos_inf_code(self) -> Optional[int]: ...
    @property
    def neg_inf_code(self) -> Optional[int]: ...
    @property
    def code_dtype(self) -> Literal["uint8", "uint16", "uint32"]: ...
    @property
    def value_dtype(self) -> Optional[Literal["float32", "float64"]]: ...
    def value(self, code: int) -> float: ...
    def hex(self, code: int) -> str: ...
    def __eq__(self, other: object) -> bool: ...
    def __ne__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> Tuple[Any, Tuple[str]]: ...

# A format argument: a Format, a name, or a numpy / ml_dtypes dtype or scalar type.
_FormatLike = Union[Format, str, npt.DTypeLike]
# A result: an array, or a numpy scalar when every array argument was a scalar (0-d).
_Result = Union[np.ndarray, np.generic]

def presets() -> List[Tuple[str, str]]: ...
def set_num_threads(n: int) -> None: ...
def get_num_threads() -> int: ...
@overload
def project(
    values: npt.ArrayLike,
    fmt: _FormatLike,
    rounding: str = ...,
    saturation: str = ...,
    flags: Literal[False] = ...,
    rnd: Optional[npt.ArrayLike] = ...,
    tininess: str = ...,
    nan_code: int = ...,
    sr_bits: int = ...,
    as_values: bool = ...,
    rto_overflow: str = ...,
) -> _Result: ...
@overload
def project(
    values: npt.ArrayLike,
    fmt: _FormatLike,
    rounding: str = ...,
    saturation: str = ...,
    *,
    flags: Literal[True],
    rnd: Optional[npt.ArrayLike] = ...,
    tininess: str = ...,
    nan_code: int = ...,
    sr_bits: int = ...,
    as_values: bool = ...,
    rto_overflow: str = ...,
) -> Tuple[_Result, _Result]: ...
@overload
def convert(
    codes: npt.ArrayLike,
    from_fmt: _FormatLike,
    fmt: _FormatLike,
    rounding: str = ...,
    saturation: str = ...,
    flags: Literal[False] = ...,
    rnd: Optional[npt.ArrayLike] = ...,
    tininess: str = ...,
    nan_code: int = ...,
    sr_bits: int = ...,
    as_values: bool = ...,
    rto_overflow: str = ...,
) -> _Result: ...
@overload
def convert(
    codes: npt.ArrayLike,
    from_fmt: _FormatLike,
    fmt: _FormatLike,
    rounding: str = ...,
    saturation: str = ...,
    *,
    flags: Literal[True],
    rnd: Optional[npt.ArrayLike] = ...,
    tininess: str = ...,
    nan_code: int = ...,
    sr_bits: int = ...,
    as_values: bool = ...,
    rto_overflow: str = ...,
) -> Tuple[_Result, _Result]: ...
@overload
def quantize_block(
    values: npt.ArrayLike,
    fmt: _FormatLike,
    block: int = ...,
    scale_format: _FormatLike = ...,
    policy: str = ...,
    rounding: str = ...,
    saturation: str = ...,
    flags: Literal[False] = ...,
    rnd: Optional[npt.ArrayLike] = ...,
    tininess: str = ...,
    nan_code: int = ...,
    sr_bits: int = ...,
    rto_overflow: str = ...,
) -> Tuple[np.ndarray, np.ndarray]: ...
@overload
def quantize_block(
    values: npt.ArrayLike,
    fmt: _FormatLike,
    block: int = ...,
    scale_format: _FormatLike = ...,
    policy: str = ...,
    rounding: str = ...,
    saturation: str = ...,
    *,
    flags: Literal[True],
    rnd: Optional[npt.ArrayLike] = ...,
    tininess: str = ...,
    nan_code: int = ...,
    sr_bits: int = ...,
    rto_overflow: str = ...,
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]: ...
def dequantize_block(
    codes: npt.ArrayLike,
    scales: npt.ArrayLike,
    fmt: _FormatLike,
    block: int = ...,
    scale_format: _FormatLike = ...,
) -> np.ndarray: ...
def decode(codes: npt.ArrayLike, fmt: _FormatLike) -> _Result: ...
def value_dtype_of(fmt: _FormatLike) -> Optional[np.dtype]: ...
@overload
def mul(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    fmt: _FormatLike,
    fmt_y: Optional[_FormatLike] = ...,
    out_fmt: Optional[_FormatLike] = ...,
    rounding: str = ...,
    saturation: str = ...,
    flags: Literal[False] = ...,
    rnd: Optional[npt.ArrayLike] = ...,
    tininess: str = ...,
    nan_code: int = ...,
    sr_bits: int = ...,
    as_values: bool = ...,
    rto_overflow: str = ...,
) -> _Result: ...
@overload
def mul(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    fmt: _FormatLike,
    fmt_y: Optional[_FormatLike] = ...,
    out_fmt: Optional[_FormatLike] = ...,
    rounding: str = ...,
    saturation: str = ...,
    *,
    flags: Literal[True],
    rnd: Optional[npt.ArrayLike] = ...,
    tininess: str = ...,
    nan_code: int = ...,
    sr_bits: int = ...,
    as_values: bool = ...,
    rto_overflow: str = ...,
) -> Tuple[_Result, _Result]: ...
@overload
def add(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    fmt: _FormatLike,
    fmt_y: Optional[_FormatLike] = ...,
    out_fmt: Optional[_FormatLike] = ...,
    rounding: str = ...,
    saturation: str = ...,
    flags: Literal[False] = ...,
    rnd: Optional[npt.ArrayLike] = ...,
    tininess: str = ...,
    nan_code: int = ...,
    sr_bits: int = ...,
    as_values: bool = ...,
    sub: bool = ...,
    rto_overflow: str = ...,
) -> _Result: ...
@overload
def add(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    fmt: _FormatLike,
    fmt_y: Optional[_FormatLike] = ...,
    out_fmt: Optional[_FormatLike] = ...,
    rounding: str = ...,
    saturation: str = ...,
    *,
    flags: Literal[True],
    rnd: Optional[npt.ArrayLike] = ...,
    tininess: str = ...,
    nan_code: int = ...,
    sr_bits: int = ...,
    as_values: bool = ...,
    sub: bool = ...,
    rto_overflow: str = ...,
) -> Tuple[_Result, _Result]: ...
@overload
def fma(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    z: npt.ArrayLike,
    fmt: _FormatLike,
    fmt_y: Optional[_FormatLike] = ...,
    rounding: str = ...,
    saturation: str = ...,
    flags: Literal[False] = ...,
    tininess: str = ...,
    ftz: bool = ...,
    as_values: bool = ...,
    rto_overflow: str = ...,
) -> _Result: ...
@overload
def fma(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    z: npt.ArrayLike,
    fmt: _FormatLike,
    fmt_y: Optional[_FormatLike] = ...,
    rounding: str = ...,
    saturation: str = ...,
    *,
    flags: Literal[True],
    tininess: str = ...,
    ftz: bool = ...,
    as_values: bool = ...,
    rto_overflow: str = ...,
) -> Tuple[_Result, _Result]: ...
@overload
def dot(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    fmt: _FormatLike,
    fmt_y: Optional[_FormatLike] = ...,
    scale_x: Optional[npt.ArrayLike] = ...,
    scale_y: Optional[npt.ArrayLike] = ...,
    scale_fmt: _FormatLike = ...,
    z: Optional[npt.ArrayLike] = ...,
    out_fmt: _FormatLike = ...,
    rounding: str = ...,
    saturation: str = ...,
    flags: Literal[False] = ...,
    tininess: str = ...,
    as_values: bool = ...,
) -> _Result: ...
@overload
def dot(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    fmt: _FormatLike,
    fmt_y: Optional[_FormatLike] = ...,
    scale_x: Optional[npt.ArrayLike] = ...,
    scale_y: Optional[npt.ArrayLike] = ...,
    scale_fmt: _FormatLike = ...,
    z: Optional[npt.ArrayLike] = ...,
    out_fmt: _FormatLike = ...,
    rounding: str = ...,
    saturation: str = ...,
    *,
    flags: Literal[True],
    tininess: str = ...,
    as_values: bool = ...,
) -> Tuple[_Result, _Result]: ...
