"""Comparisons (hicann/ops-math math/equal, not_equal, greater, greater_equal, less, less_equal): Eq, Ne, Gt, Ge, Lt,
Le, each against a scalar and a tensor.

The operands are compared exactly as torch promotes them: a float operand (tensor or scalar) makes the
comparison a float one, done in float64 (every fp16/bf16/fp32 value is exact there); integers and bools compare
as int64. A float scalar against a float tensor is first rounded to the tensor's dtype (torch keeps a tensor's
float dtype against a Python number). out is BOOL or any dtype the result casts to (1/0).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.numeric import is_float

Array = np.ndarray
Compare = Callable[[Array, Array], Array]


def _as_compared(x: Array, floating: bool) -> Array:
    return x.astype(np.float64) if floating else x.astype(np.int64)


def _scalar_operand(self: Array, other: Any) -> tuple[Array, Array]:
    floating = is_float(self.dtype) or isinstance(other, float)
    value = np.asarray(other)
    if is_float(self.dtype) and isinstance(other, (int, float)) and not isinstance(other, bool):
        value = np.asarray(other).astype(self.dtype)
    return _as_compared(self, floating), _as_compared(value, floating)


def _scalar(name: str, compare: Compare) -> Callable[..., None]:
    def kernel(self: Array, other: Any, out: Array, workspace: Array | None) -> None:
        left, right = _scalar_operand(self, other)
        np.copyto(out, compare(left, right), casting="unsafe")

    kernel.__name__ = name
    kernel.__doc__ = (
        f"out = self {compare.__name__} other (a scalar), elementwise. Constraints (ops-math experimental/math/"
        "equal|greater|less, aclnn_*_scalar.h): self any real dtype (FLOAT16/BFLOAT16/FLOAT/DOUBLE/INT8-64/UINT8/"
        "BOOL); other a scalar of a promotable dtype; out self's shape, BOOL or a castable dtype."
    )
    return kernel


def _tensor(name: str, op: str, compare: Compare) -> Callable[..., None]:
    def kernel(self: Array, other: Array, out: Array, workspace: Array | None) -> None:
        floating = is_float(self.dtype) or is_float(other.dtype)
        try:
            shape = np.broadcast_shapes(self.shape, other.shape)
        except ValueError:
            raise invalid(op, "other", f"shape {other.shape} does not broadcast with self {self.shape}") from None
        if shape != out.shape:
            raise invalid(op, "out", f"has shape {out.shape}; the broadcast shape is {shape}")
        np.copyto(out, compare(_as_compared(self, floating), _as_compared(other, floating)), casting="unsafe")

    kernel.__name__ = name
    kernel.__doc__ = (
        f"out = self {compare.__name__} other, elementwise with broadcasting. Constraints (ops-math "
        "experimental/math/equal|greater|less, aclnn_*_tensor.h): self and other real dtypes that promote, shapes "
        "that broadcast; out the broadcast shape, BOOL or a castable dtype."
    )
    return kernel


FUNCTIONS: dict[str, Callable[..., None]] = {
    "EqScalar": _scalar("eq_scalar", np.equal),
    "GtScalar": _scalar("gt_scalar", np.greater),
    "LtScalar": _scalar("lt_scalar", np.less),
    "EqTensor": _tensor("eq_tensor", "EqTensor", np.equal),
    "GtTensor": _tensor("gt_tensor", "GtTensor", np.greater),
    "LtTensor": _tensor("lt_tensor", "LtTensor", np.less),
    "NeScalar": _scalar("ne_scalar", np.not_equal),
    "GeScalar": _scalar("ge_scalar", np.greater_equal),
    "LeScalar": _scalar("le_scalar", np.less_equal),
    "NeTensor": _tensor("ne_tensor", "NeTensor", np.not_equal),
    "GeTensor": _tensor("ge_tensor", "GeTensor", np.greater_equal),
    "LeTensor": _tensor("le_tensor", "LeTensor", np.less_equal),
}
