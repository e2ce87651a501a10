"""Matrix products on the cube unit (hicann/ops-nn matmul/): Mm, Addmm, BatchMatMul, Baddbmm, Mv.

Operands are widened to float32 (float64 stays float64) and multiplied with float32 accumulation, the result
rounded once into out. cubeMathType (0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32) follows
vnpu's Matmul: USE_FP16 rounds float32 operands to float16 first; the HF32 modes compute in full float32 (HF32's
rounding is not documented).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.numeric import FLOAT32, store, wide

Array = np.ndarray
USE_FP16 = 2


def operand(x: Array, cube_math_type: int) -> Array:
    """x as the cube unit reads it: float32 (float64 for float64), through float16 under USE_FP16."""
    v = wide(x)
    if cube_math_type == USE_FP16 and v.dtype == FLOAT32:
        return v.astype(np.float16).astype(FLOAT32)
    return v


def _check_mode(op: str, cube_math_type: int) -> None:
    if cube_math_type not in (0, 1, 2, 3):
        raise invalid(op, "cubeMathType", f"is {cube_math_type}; it must be 0, 1, 2 or 3")


def mm(self: Array, mat2: Array, out: Array, cubeMathType: int, workspace: Array | None) -> None:
    """out = self @ mat2 for 2-D self [m, k] and mat2 [k, n].

    Constraints (matmul/mat_mul_v3/docs/aclnnMm.md): self and mat2 2-D of FLOAT/FLOAT16/BFLOAT16 (one dtype,
    or promoted), k equal; out [m, n]; cubeMathType 0-3.
    """
    _check_mode("Mm", cubeMathType)
    if self.ndim != 2 or mat2.ndim != 2 or self.shape[1] != mat2.shape[0]:
        raise invalid("Mm", "mat2", f"shape {mat2.shape} does not multiply self {self.shape}")
    store(out, np.matmul(operand(self, cubeMathType), operand(mat2, cubeMathType)))


def addmm(
    self: Array, mat1: Array, mat2: Array, beta: Any, alpha: Any, out: Array, cubeMathType: int,
    workspace: Array | None,
) -> None:  # fmt: skip
    """out = beta · self + alpha · (mat1 @ mat2), self broadcast to [m, n] (torch.addmm).

    Constraints (matmul/mat_mul_v3 op_api/aclnn_addmm.h, torch.addmm): mat1 [m, k], mat2 [k, n] of FLOAT/FLOAT16/
    BFLOAT16; self broadcastable to [m, n]; beta and alpha scalars castable to the dtype; out [m, n]; with
    beta = 0 self is ignored (a NaN in self does not propagate).
    """
    _check_mode("Addmm", cubeMathType)
    if mat1.ndim != 2 or mat2.ndim != 2 or mat1.shape[1] != mat2.shape[0]:
        raise invalid("Addmm", "mat2", f"shape {mat2.shape} does not multiply mat1 {mat1.shape}")
    product = np.matmul(operand(mat1, cubeMathType), operand(mat2, cubeMathType))
    result = product * product.dtype.type(alpha)
    if beta != 0:
        result = result + wide(self) * product.dtype.type(beta)
    store(out, np.broadcast_to(result, out.shape))


def batch_mat_mul(self: Array, mat2: Array, out: Array, cubeMathType: int, workspace: Array | None) -> None:
    """out[b] = self[b] @ mat2[b] for 3-D self [B, m, k] and mat2 [B, k, n] (torch.bmm; a batch of 1 broadcasts).

    Constraints (matmul/batch_mat_mul_v3/docs/aclnnBatchMatMul.md): 3-D FLOAT/FLOAT16/BFLOAT16; batch axes equal
    (or 1); k equal; out [B, m, n]; cubeMathType 0-3.
    """
    _check_mode("BatchMatMul", cubeMathType)
    if self.ndim != 3 or mat2.ndim != 3 or self.shape[2] != mat2.shape[1]:
        raise invalid("BatchMatMul", "mat2", f"shape {mat2.shape} does not multiply self {self.shape}")
    store(out, np.matmul(operand(self, cubeMathType), operand(mat2, cubeMathType)))


def baddbmm(
    self: Array, batch1: Array, batch2: Array, beta: Any, alpha: Any, out: Array, cubeMathType: int,
    workspace: Array | None,
) -> None:  # fmt: skip
    """out = beta · self + alpha · (batch1 @ batch2), self broadcast to [B, m, n] (torch.baddbmm).

    Constraints (matmul/batch_mat_mul_v3 op_api/aclnn_baddbmm.h): batch1 [B, m, k], batch2 [B, k, n] of FLOAT/
    FLOAT16/BFLOAT16; self broadcastable to [B, m, n]; out [B, m, n]; with beta = 0 self is ignored.
    """
    _check_mode("Baddbmm", cubeMathType)
    if batch1.ndim != 3 or batch2.ndim != 3 or batch1.shape[2] != batch2.shape[1]:
        raise invalid("Baddbmm", "batch2", f"shape {batch2.shape} does not multiply batch1 {batch1.shape}")
    product = np.matmul(operand(batch1, cubeMathType), operand(batch2, cubeMathType))
    result = product * product.dtype.type(alpha)
    if beta != 0:
        result = result + wide(self) * product.dtype.type(beta)
    store(out, np.broadcast_to(result, out.shape))


def mv(self: Array, vec: Array, out: Array, cubeMathType: int, workspace: Array | None) -> None:
    """out = self @ vec for 2-D self [m, n] and 1-D vec [n] (torch.mv).

    Constraints (matmul/mat_mul_v3 op_api/aclnn_mv.h): FLOAT/FLOAT16/BFLOAT16; n equal; out [m]; cubeMathType 0-3.
    """
    _check_mode("Mv", cubeMathType)
    if self.ndim != 2 or vec.ndim != 1 or self.shape[1] != vec.shape[0]:
        raise invalid("Mv", "vec", f"shape {vec.shape} does not multiply self {self.shape}")
    store(out, np.matmul(operand(self, cubeMathType), operand(vec, cubeMathType)))


FUNCTIONS: dict[str, Callable[..., None]] = {
    "Mm": mm,
    "Addmm": addmm,
    "BatchMatMul": batch_mat_mul,
    "Baddbmm": baddbmm,
    "Mv": mv,
}
