"""Fills and selections (hicann/ops-math): Arange, InplaceFillScalar, InplaceZero, SWhere, InplaceMaskedFillScalar.

Scalars are cast to the tensor's dtype as C's conversion does (integers wrap); floats round to nearest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.numeric import is_float

Array = np.ndarray


def _cast_scalar(value: Any, dtype: np.dtype[Any]) -> Array:
    if is_float(dtype) or isinstance(value, bool) or not isinstance(value, int):
        return np.asarray(value).astype(dtype)
    return np.asarray(value, np.int64).astype(dtype)


def arange(start: Any, end: Any, step: Any, out: Array, workspace: Array | None) -> None:
    """out[i] = start + i · step for i < out.size (torch.arange: computed in float64 for a float out, exact for
    integers; the element count ceil((end - start) / step) is the out's).

    Constraints (math/range/op_api/aclnn_arange.h): step ≠ 0 with its sign from start toward end; out 1-D of
    FLOAT/FLOAT16/BFLOAT16/DOUBLE/INT32/INT64 with ceil((end - start) / step) elements.
    """
    if step == 0:
        raise invalid("Arange", "step", "is 0")
    if (end - start) * step < 0:
        raise invalid("Arange", "step", f"{step} does not go from {start} toward {end}")
    index = np.arange(out.size)
    if is_float(out.dtype) or any(isinstance(v, float) for v in (start, end, step)):
        np.copyto(out, (start + index * np.float64(step)).reshape(out.shape), casting="unsafe")
    else:
        out[...] = (int(start) + index.astype(np.int64) * int(step)).astype(out.dtype).reshape(out.shape)


def inplace_fill_scalar(selfRef: Array, value: Any, workspace: Array | None) -> None:
    """selfRef[...] = value (cast to selfRef's dtype). Constraints (conversion/fill/op_api/aclnn_fill_scalar.h):
    selfRef any dtype; value a scalar castable to it."""
    selfRef[...] = _cast_scalar(value, selfRef.dtype)


def inplace_zero(selfRef: Array, workspace: Array | None) -> None:
    """selfRef[...] = 0. Constraints (ops-math experimental/conversion/zeros_like, aclnn_zero.h): any dtype."""
    selfRef[...] = 0


def s_where(condition: Array, self: Array, other: Array, out: Array, workspace: Array | None) -> None:
    """out = where(condition, self, other), broadcasting all three (torch.where).

    Constraints (ops-math experimental/math/select_v2, aclnn_s_where.h): condition BOOL (or UINT8: nonzero is
    true); self and other promotable dtypes; out the broadcast shape and the promoted dtype.
    """
    try:
        shape = np.broadcast_shapes(condition.shape, self.shape, other.shape)
    except ValueError:
        raise invalid(
            "SWhere", "other", f"shapes {condition.shape}, {self.shape}, {other.shape} do not broadcast"
        ) from None
    if shape != out.shape:
        raise invalid("SWhere", "out", f"has shape {out.shape}; the broadcast shape is {shape}")
    chosen = np.where(condition.astype(bool), self.astype(out.dtype), other.astype(out.dtype))
    np.copyto(out, chosen, casting="unsafe")


def inplace_masked_fill_scalar(selfRef: Array, mask: Array, value: Any, workspace: Array | None) -> None:
    """selfRef[mask] = value, mask broadcast to selfRef (torch masked_fill_).

    Constraints (conversion/masked_fill/op_api/aclnn_masked_fill_scalar.h): mask BOOL broadcastable to selfRef;
    value a scalar castable to selfRef's dtype. (CANN has no out-of-place aclnnMaskedFillScalar: torch_npu runs
    this one on a copy.)
    """
    try:
        fits = np.broadcast_shapes(mask.shape, selfRef.shape) == selfRef.shape
    except ValueError:
        fits = False
    if not fits:
        raise invalid("InplaceMaskedFillScalar", "mask", f"shape {mask.shape} does not broadcast to {selfRef.shape}")
    np.copyto(selfRef, _cast_scalar(value, selfRef.dtype), where=np.broadcast_to(mask.astype(bool), selfRef.shape))


FUNCTIONS: dict[str, Callable[..., None]] = {
    "Arange": arange,
    "InplaceFillScalar": inplace_fill_scalar,
    "InplaceZero": inplace_zero,
    "SWhere": s_where,
    "InplaceMaskedFillScalar": inplace_masked_fill_scalar,
}
