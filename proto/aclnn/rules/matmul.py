"""Matrix products on the cube unit: Matmul (torch.matmul's shapes, cubeMathType)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import DT
from proto.aclnn.entry import Row, cube
from proto.aclnn.rules.base import (
    CUBE_MATH_TYPES,
    MATMUL_DTYPES,
    MATMUL_MAX_DIMS,
    USE_FP16,
    USE_HF32,
    broadcast_shapes,
    check_out,
    int_attr,
    require_dtype,
    round_up,
    shape_str,
    tensor,
)
from proto.constants import aclDataType


def matmul_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """torch.matmul's result shape for 1-6 D operands with batch broadcasting, or None on a batch mismatch."""
    a2 = (1, *a) if len(a) == 1 else tuple(a)
    b2 = (*b, 1) if len(b) == 1 else tuple(b)
    batch = broadcast_shapes(a2[:-2], b2[:-2])
    if batch is None:
        return None
    rows = () if len(a) == 1 else (a2[-2],)
    cols = () if len(b) == 1 else (b2[-1],)
    return batch + rows + cols


@dataclass(frozen=True)
class Matmul:
    """self @ mat2 on the cube unit; its kernel accumulates in a float32 scratch workspace of out's size."""

    def result_dtype(self, args: Args) -> aclDataType:
        a, b = tensor(args, "self"), tensor(args, "mat2")
        dtype = dtypes.promote_types(a.data_type, b.data_type)
        if dtype is None or (DT.ACL_BF16 in (a.data_type, b.data_type) and a.data_type != b.data_type):
            raise OpArgError(
                f"mat2 has dtype {dtypes.name(b.data_type)}, which cannot be promoted with self's "
                f"{dtypes.name(a.data_type)} (matmul mixes ACL_BF16 with no other dtype)"
            )
        return dtype

    def check(self, args: Args) -> None:
        a, b = tensor(args, "self"), tensor(args, "mat2")
        for name, t in (("self", a), ("mat2", b)):
            require_dtype(name, t.data_type, MATMUL_DTYPES)
            if not 1 <= len(t.view_dims) <= MATMUL_MAX_DIMS:
                raise OpArgError(f"{name} has {len(t.view_dims)} dims; aclnnMatmul takes 1 to {MATMUL_MAX_DIMS}")
        dtype = self.result_dtype(args)
        self._check_mode(int_attr(args, "cubeMathType"), dtype, both_1d=len(a.view_dims) == len(b.view_dims) == 1)
        k_self, k_mat2 = a.view_dims[-1], b.view_dims[0 if len(b.view_dims) == 1 else -2]
        if k_self != k_mat2:
            raise OpArgError(
                f"mat2 has shape {shape_str(b.view_dims)}, whose reduce dim {k_mat2} differs from self's "
                f"{k_self} (self is {shape_str(a.view_dims)})"
            )
        shape = matmul_shape(a.view_dims, b.view_dims)
        if shape is None:
            raise OpArgError(
                f"mat2's batch dims {shape_str(b.view_dims[:-2])} do not broadcast with self's "
                f"{shape_str(a.view_dims[:-2])}"
            )
        out = tensor(args, "out")
        halves = (DT.ACL_FLOAT16, DT.ACL_BF16)
        target = DT.ACL_FLOAT if dtype in halves and out.data_type == DT.ACL_FLOAT else dtype
        check_out(args, "out", target, shape, MATMUL_DTYPES, exact=True)

    @staticmethod
    def _check_mode(mode: int, dtype: aclDataType, *, both_1d: bool) -> None:
        if mode not in CUBE_MATH_TYPES:
            known = ", ".join(f"{value} ({name})" for value, name in CUBE_MATH_TYPES.items())
            raise OpArgError(f"cubeMathType {mode} is not one of {known}")
        if both_1d:
            return  # a dot product ignores cubeMathType
        if mode == USE_FP16 and dtype == DT.ACL_BF16:
            raise OpArgError("cubeMathType 2 (USE_FP16) does not support ACL_BF16 inputs")
        if mode == USE_HF32 and dtype != DT.ACL_FLOAT:
            raise OpArgError(f"cubeMathType 3 (USE_HF32) needs ACL_FLOAT inputs, not {dtypes.name(dtype)}")

    def workspace(self, args: Args) -> int:
        shape = matmul_shape(tensor(args, "self").view_dims, tensor(args, "mat2").view_dims)
        assert shape is not None
        return round_up(math.prod(shape) * dtypes.info(DT.ACL_FLOAT).itemsize)


TABLE: Final[dict[str, Row]] = {"Matmul": cube(Matmul())}
