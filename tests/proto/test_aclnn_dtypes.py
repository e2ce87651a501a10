"""Promotion, cast and rounding rules of proto.aclnn.dtypes against CANN's tables (spec §5)."""

from __future__ import annotations

import math
import struct

import pytest

from proto.aclnn import dtypes
from proto.aclnn.dtypes import can_cast, promote_types, promote_with_scalar, round_float
from proto.constants import aclDataType

DT = aclDataType
F32, F16, BF16, F64 = DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE
S8, S16, S32, S64, U8 = DT.ACL_INT8, DT.ACL_INT16, DT.ACL_INT32, DT.ACL_INT64, DT.ACL_UINT8
U16, U32, U64, BOOL = DT.ACL_UINT16, DT.ACL_UINT32, DT.ACL_UINT64, DT.ACL_BOOL

# (a, b, promoted): rows of deduction_relationship.md; None is ×.
TENSOR_TENSOR = [
    (F16, F32, F32),
    (BF16, F16, F32),
    (BF16, F32, F32),
    (F64, F32, F64),
    (F64, BF16, F64),
    (S8, U8, S16),
    (U8, S16, S16),
    (U8, S32, S32),
    (S16, S64, S64),
    (S32, F16, F16),
    (S64, BF16, BF16),
    (U8, F32, F32),
    (BOOL, F32, F32),
    (BOOL, S8, S8),
    (BOOL, U8, U8),
    (BOOL, BOOL, BOOL),
    (U16, U16, U16),
    (U32, U32, U32),
    (U16, F32, None),
    (U16, BOOL, None),
    (U32, S64, None),
    (U64, U8, None),
    (U16, U32, None),
    (DT.ACL_COMPLEX64, F32, None),
]

# (tensor, scalar, promoted): rows of tensor_scalar_deduction_relationship.md.
TENSOR_SCALAR = [
    (F16, F32, F16),
    (BF16, F64, BF16),
    (F32, F64, F32),
    (F64, F32, F64),
    (S32, F32, F32),
    (U8, F64, F32),
    (BOOL, F16, F32),
    (S8, S64, S8),
    (S64, S8, S64),
    (U8, S32, U8),
    (F16, S64, F16),
    (BOOL, S64, S64),
    (BOOL, S8, S8),
    (BOOL, BOOL, BOOL),
    (S32, BOOL, S32),
    (U16, S64, U16),
    (U16, F32, None),
    (BOOL, U32, None),
]


@pytest.mark.parametrize(("a", "b", "want"), TENSOR_TENSOR)
def test_tensor_promotion_follows_the_cann_table_both_ways(
    a: aclDataType, b: aclDataType, want: aclDataType | None
) -> None:
    assert promote_types(a, b) == want
    assert promote_types(b, a) == want


@pytest.mark.parametrize(("tensor", "scalar", "want"), TENSOR_SCALAR)
def test_tensor_scalar_promotion_keeps_the_tensor_category(
    tensor: aclDataType, scalar: aclDataType, want: aclDataType | None
) -> None:
    assert promote_with_scalar(tensor, scalar) == want


@pytest.mark.parametrize(
    ("src", "dst", "ok"),
    [
        (S32, F16, True),
        (S64, U8, True),
        (BOOL, F32, True),
        (BOOL, S8, True),
        (F32, F16, True),
        (F16, F64, True),
        (BF16, F32, True),
        (F32, S32, False),
        (F16, U8, False),
        (S32, BOOL, False),
        (F32, BOOL, False),
        (BOOL, BOOL, True),
        (DT.ACL_COMPLEX64, F32, False),
    ],
)
def test_can_cast_follows_the_conversion_rules(src: aclDataType, dst: aclDataType, ok: bool) -> None:
    assert can_cast(src, dst) is ok


def test_every_promotion_among_op_dtypes_is_castable_from_both_inputs() -> None:
    for a in dtypes.ALL:
        for b in dtypes.ALL:
            result = promote_types(a, b)
            assert result in dtypes.ALL
            assert can_cast(a, result) and can_cast(b, result)


def test_itemsizes_and_kinds() -> None:
    assert [dtypes.info(d).itemsize for d in (F32, F16, BF16, F64, S8, S64, BOOL)] == [4, 2, 2, 8, 1, 8, 1]
    assert dtypes.is_float(BF16) and not dtypes.is_float(S8)
    assert dtypes.is_integral(BOOL) and dtypes.is_integral(U8) and not dtypes.is_integral(F16)
    assert dtypes.int_range(S8) == range(-128, 128)
    assert dtypes.int_range(U8) == range(256)
    assert dtypes.name(F32) == "ACL_FLOAT"


def test_compute_dtype_widens_only_half_types() -> None:
    assert [dtypes.compute_dtype(d) for d in (F16, BF16, F32, F64, S8, BOOL)] == [F32, F32, F32, F64, S8, BOOL]


def test_parse_dtype_takes_members_values_and_names() -> None:
    assert dtypes.parse_dtype(F16) is F16
    assert dtypes.parse_dtype(27) is BF16
    assert dtypes.parse_dtype("ACL_INT8") is S8
    for bad in ("FLOAT", 5, 1.0, True, None):
        with pytest.raises(ValueError, match="aclDataType"):
            dtypes.parse_dtype(bad)


def _f32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def test_round_float_rounds_to_nearest_even_and_overflows_to_inf() -> None:
    assert round_float(0.1, F32) == _f32(0.1) != 0.1
    assert round_float(0.1, F64) == 0.1
    assert round_float(1 + 2**-11, F16) == 1.0  # a tie rounds to even
    assert round_float(1 + 3 * 2**-11, F16) == 1 + 2**-9
    assert round_float(70000.0, F16) == math.inf
    assert round_float(-1e39, F32) == -math.inf
    assert round_float(1 + 2**-8, BF16) == 1.0  # tie → even
    assert round_float(1 + 3 * 2**-8, BF16) == 1 + 2**-6
    assert round_float(3.4e38, BF16) == math.inf
    assert math.isnan(round_float(math.nan, BF16))
    assert round_float(-math.inf, F16) == -math.inf
