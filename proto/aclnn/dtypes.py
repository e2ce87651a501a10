"""aclDataType facts for the aclnn operators: item sizes, kinds, promotion and cast rules.

The rules are CANN's (ops-nn `docs/*/context/`: `deduction_relationship.md`,
`tensor_scalar_deduction_relationship.md`, `conversion_relationship.md`), which follow PyTorch:
f16+f32→f32, bf16+f16→f32, f64 wins, s8+u8→s16, int+f16→f16, bool+X→X, u16/u32/u64 only with themselves.
Complex types are not modelled: vnpu has no complex kernels, so they never promote.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from proto.constants import aclDataType

DT = aclDataType


class Kind(StrEnum):
    BOOL = "bool"
    INT = "int"
    UINT = "uint"
    FLOAT = "float"
    COMPLEX = "complex"


@dataclass(frozen=True)
class DTypeInfo:
    """One aclDataType: its C name, size in bytes, kind, and the torch-style short name."""

    dtype: aclDataType
    itemsize: int  # bytes a kernel's numpy element takes (1 for ACL_INT4, which memory packs two to a byte)
    kind: Kind
    short: str
    bits: int = 0  # bits one element takes in device memory (0: itemsize * 8)

    @property
    def width(self) -> int:
        """The bits one element takes in device memory."""
        return self.bits or self.itemsize * 8


INFO: Final[dict[aclDataType, DTypeInfo]] = {
    info.dtype: info
    for info in (
        DTypeInfo(DT.ACL_FLOAT, 4, Kind.FLOAT, "float32"),
        DTypeInfo(DT.ACL_FLOAT16, 2, Kind.FLOAT, "float16"),
        DTypeInfo(DT.ACL_BF16, 2, Kind.FLOAT, "bfloat16"),
        DTypeInfo(DT.ACL_DOUBLE, 8, Kind.FLOAT, "float64"),
        DTypeInfo(DT.ACL_INT8, 1, Kind.INT, "int8"),
        DTypeInfo(DT.ACL_INT16, 2, Kind.INT, "int16"),
        DTypeInfo(DT.ACL_INT32, 4, Kind.INT, "int32"),
        DTypeInfo(DT.ACL_INT64, 8, Kind.INT, "int64"),
        DTypeInfo(DT.ACL_UINT8, 1, Kind.UINT, "uint8"),
        DTypeInfo(DT.ACL_UINT16, 2, Kind.UINT, "uint16"),
        DTypeInfo(DT.ACL_UINT32, 4, Kind.UINT, "uint32"),
        DTypeInfo(DT.ACL_UINT64, 8, Kind.UINT, "uint64"),
        DTypeInfo(DT.ACL_BOOL, 1, Kind.BOOL, "bool"),
        DTypeInfo(DT.ACL_COMPLEX32, 4, Kind.COMPLEX, "complex32"),
        DTypeInfo(DT.ACL_COMPLEX64, 8, Kind.COMPLEX, "complex64"),
        DTypeInfo(DT.ACL_COMPLEX128, 16, Kind.COMPLEX, "complex128"),
        DTypeInfo(DT.ACL_HIFLOAT8, 1, Kind.FLOAT, "hifloat8"),
        DTypeInfo(DT.ACL_FLOAT8_E5M2, 1, Kind.FLOAT, "float8_e5m2"),
        DTypeInfo(DT.ACL_FLOAT8_E4M3FN, 1, Kind.FLOAT, "float8_e4m3fn"),
        DTypeInfo(DT.ACL_FLOAT8_E8M0, 1, Kind.FLOAT, "float8_e8m0"),
        DTypeInfo(DT.ACL_INT4, 1, Kind.INT, "int4", bits=4),
    )
}
"""Every dtype a tensor may have: the byte-sized ones and ACL_INT4 (two to a byte, lowest nibble first; its
tensors must be contiguous from an even element offset). Other sub-byte and string types are refused."""
PACKED: Final = frozenset(info.dtype for info in INFO.values() if info.width < 8)
"""The dtypes memory packs several to a byte (ACL_INT4)."""

FLOATS: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE})
INTS: Final = frozenset({DT.ACL_INT8, DT.ACL_INT16, DT.ACL_INT32, DT.ACL_INT64, DT.ACL_UINT8})
NUMERIC: Final = FLOATS | INTS
ALL: Final = NUMERIC | {DT.ACL_BOOL}
"""The dtypes vnpu kernels compute with (an operator may allow fewer)."""
WIDE_UNSIGNED: Final = frozenset({DT.ACL_UINT16, DT.ACL_UINT32, DT.ACL_UINT64})
SCALAR_DTYPES: Final = ALL | WIDE_UNSIGNED
"""The dtypes `aclCreateScalar` accepts."""

_INT_RANGES: Final = {info.dtype: info.width for info in INFO.values() if info.kind in (Kind.INT, Kind.UINT)}


def info(dtype: aclDataType) -> DTypeInfo:
    return INFO[dtype]


def name(dtype: aclDataType) -> str:
    """The C name, e.g. "ACL_FLOAT"."""
    return aclDataType(dtype).name


def names(dtypes: frozenset[aclDataType]) -> str:
    """A stable, readable list of C names, for messages."""
    return ", ".join(sorted(name(d) for d in dtypes))


def is_float(dtype: aclDataType) -> bool:
    return INFO[dtype].kind is Kind.FLOAT


def is_integral(dtype: aclDataType) -> bool:
    """Integer or bool (torch's isIntegralType(t, includeBool=True))."""
    return INFO[dtype].kind in (Kind.INT, Kind.UINT, Kind.BOOL)


def int_range(dtype: aclDataType) -> range:
    """The values an integer dtype holds."""
    bits = _INT_RANGES[dtype]
    if INFO[dtype].kind is Kind.UINT:
        return range(0, 1 << bits)
    return range(-(1 << (bits - 1)), 1 << (bits - 1))


def _signed_for(dtype: aclDataType) -> aclDataType:
    """u8 meets a signed type as s16 (the smallest signed type holding both)."""
    return DT.ACL_INT16 if dtype == DT.ACL_UINT8 else dtype


def promote_types(a: aclDataType, b: aclDataType) -> aclDataType | None:
    """The dtype two tensors compute in (deduction_relationship.md), or None where CANN marks ×."""
    if a == b:
        return a if a in SCALAR_DTYPES else None
    if a not in ALL or b not in ALL:
        return None
    if a == DT.ACL_BOOL or b == DT.ACL_BOOL:
        return b if a == DT.ACL_BOOL else a
    if is_float(a) and is_float(b):
        return DT.ACL_DOUBLE if DT.ACL_DOUBLE in (a, b) else DT.ACL_FLOAT
    if is_float(a) or is_float(b):
        return a if is_float(a) else b
    a, b = _signed_for(a), _signed_for(b)
    return a if INFO[a].itemsize >= INFO[b].itemsize else b


def promote_with_scalar(tensor: aclDataType, scalar: aclDataType) -> aclDataType | None:
    """The dtype a tensor and a scalar compute in (tensor_scalar_deduction_relationship.md), or None.

    A scalar never widens a tensor of its own category: f16 tensor + f32 scalar → f16, s8 + s64 scalar → s8.
    A float scalar lifts an integral or bool tensor to FLOAT; an integer scalar lifts a bool tensor to the
    scalar's dtype (CANN's table; torch would give INT64, which is the same for the usual INT64 scalar).
    """
    if tensor not in SCALAR_DTYPES or scalar not in SCALAR_DTYPES:
        return None
    if is_float(scalar):
        if tensor in WIDE_UNSIGNED:
            return None
        return tensor if is_float(tensor) else DT.ACL_FLOAT
    if tensor == DT.ACL_BOOL and scalar != DT.ACL_BOOL:
        return None if scalar in WIDE_UNSIGNED else scalar
    return tensor


def can_cast(src: aclDataType, dst: aclDataType) -> bool:
    """Whether a `src` result may be written into a `dst` tensor (conversion_relationship.md).

    As torch's canCast: no float → integer, nothing but bool → bool, no complex → real.
    """
    src_kind, dst_kind = INFO[src].kind, INFO[dst].kind
    if src_kind is Kind.COMPLEX and dst_kind is not Kind.COMPLEX:
        return False
    if src_kind is Kind.FLOAT and dst_kind in (Kind.INT, Kind.UINT):
        return False
    return not (dst_kind is Kind.BOOL and src_kind is not Kind.BOOL)


def parse_dtype(value: object) -> aclDataType:
    """An aclDataType from a member, its int value or its C name; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not an aclDataType")
    if isinstance(value, str):
        if value in aclDataType.__members__:
            return aclDataType[value]
        raise ValueError(f"{value!r} is not an aclDataType name")
    if isinstance(value, int):
        try:
            return aclDataType(value)
        except ValueError:
            raise ValueError(f"{value} is not an aclDataType value") from None
    raise ValueError(f"{value!r} is not an aclDataType")


def _round_via(fmt: str, value: float) -> float:
    try:
        return float(struct.unpack(fmt, struct.pack(fmt, value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def _round_bf16(value: float) -> float:
    single = _round_via("<f", value)
    if not math.isfinite(single):
        return single
    bits = struct.unpack("<I", struct.pack("<f", single))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


def round_float(value: float, dtype: aclDataType) -> float:
    """`value` rounded to nearest-even in a float dtype, as C stores it (overflow gives ±inf)."""
    if dtype == DT.ACL_FLOAT:
        return _round_via("<f", value)
    if dtype == DT.ACL_FLOAT16:
        return _round_via("<e", value)
    if dtype == DT.ACL_BF16:
        return _round_bf16(value)
    return float(value)


def compute_dtype(dtype: aclDataType) -> aclDataType:
    """The dtype a kernel computes a `dtype` result in: fp16/bf16 in FLOAT (as the NPU vector unit)."""
    return DT.ACL_FLOAT if dtype in (DT.ACL_FLOAT16, DT.ACL_BF16) else dtype
