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
    Checked,
    broadcast_shapes,
    check_out,
    int_attr,
    require_dtype,
    require_rank,
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


def _mode(args: Args, dtype: aclDataType) -> None:
    mode = int_attr(args, "cubeMathType")
    if mode not in (0, 1, 2, 3):
        raise OpArgError(f"cubeMathType is {mode}; it must be 0 (KEEP_DTYPE), 1, 2 (USE_FP16) or 3 (USE_HF32)")
    Matmul._check_mode(mode, dtype, both_1d=False)


def _fixed(a_name: str, b_name: str, a_rank: int, b_rank: int, add: str = "") -> Checked:
    """Mm (2-D @ 2-D), BatchMatMul (3-D @ 3-D), Mv (2-D @ 1-D), and with `add` (self) Addmm and Baddbmm:
    out = beta · add + alpha · (a @ b), add broadcast to the product's shape."""

    def checks(args: Args) -> None:
        a, b = tensor(args, a_name), tensor(args, b_name)
        for name, t, rank in ((a_name, a, a_rank), (b_name, b, b_rank)):
            require_dtype(name, t.data_type, MATMUL_DTYPES)
            require_rank(name, t, rank)
        dtype = dtypes.promote_types(a.data_type, b.data_type)
        if dtype is None or (DT.ACL_BF16 in (a.data_type, b.data_type) and a.data_type != b.data_type):
            raise OpArgError(f"{b_name} has dtype {dtypes.name(b.data_type)}, which does not mix with {a_name}'s")
        _mode(args, dtype)
        k_a, k_b = a.view_dims[-1], b.view_dims[0 if b_rank == 1 else -2]
        if k_a != k_b:
            have = shape_str(b.view_dims)
            raise OpArgError(f"{b_name} has shape {have}; its reduce dim {k_b} differs from {a_name}'s {k_a}")
        shape = matmul_shape(a.view_dims, b.view_dims)
        if shape is None:
            raise OpArgError(f"{b_name}'s batch {b.view_dims[0]} does not match {a_name}'s {a.view_dims[0]}")
        if add:
            c = tensor(args, add)
            require_dtype(add, c.data_type, MATMUL_DTYPES)
            if broadcast_shapes(shape, c.view_dims) != shape:
                have, want = shape_str(c.view_dims), shape_str(shape)
                raise OpArgError(f"{add} has shape {have}, which does not broadcast to {want}")
        check_out(args, "out", dtype, shape, MATMUL_DTYPES)

    return Checked(checks, doc="matmul/mat_mul_v3/docs/aclnnMm.md, batch_mat_mul_v3/docs/aclnnBatchMatMul.md")


TABLE: Final[dict[str, Row]] = {
    "Matmul": cube(Matmul()),
    "Mm": cube(_fixed("self", "mat2", 2, 2)),
    "BatchMatMul": cube(_fixed("self", "mat2", 3, 3)),
    "Mv": cube(_fixed("self", "vec", 2, 1)),
    "Addmm": cube(_fixed("mat1", "mat2", 2, 2, add="self")),
    "Baddbmm": cube(_fixed("batch1", "batch2", 3, 3, add="self")),
}
