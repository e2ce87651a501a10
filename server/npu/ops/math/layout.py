"""Creation, fills and layout copies (hicann/ops-math conversion/ and math/): Stack, Triu/Tril (and in place), Roll,
Expand, Eye, Linspace, InplaceOne, InplaceFillTensor, InplaceMaskedFillTensor, the clamps (ClampMin, ClampMax,
ClampTensor, Hardtanh), Dot and Sum (of a tensor list).

Each writes its output view, casting to the output's dtype where the operator promotes; values are computed in
float32 (float64 for DOUBLE) where they are computed at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.indices import axis
from server.npu.ops.common.numeric import accumulator, is_float, store, wide

Array = np.ndarray


def stack(tensors: Sequence[Array], dim: int, out: Array, workspace: Array | None) -> None:
    """out = the tensors stacked along a new axis dim (torch.stack).

    Constraints (conversion/stack/op_api/aclnn_stack.h): a non-empty list of tensors of one shape and promotable
    dtypes; dim in [-(rank + 1), rank]; out the promoted dtype, shape with len(tensors) inserted at dim."""
    d = axis("Stack", "dim", dim, tensors[0].ndim + 1)
    moved = np.moveaxis(out, d, 0)
    for i, t in enumerate(tensors):
        np.copyto(moved[i], t, casting="unsafe")


def _triangle(op: str, x: Array, diagonal: int, upper: bool) -> Array:
    if x.ndim < 2:
        raise invalid(op, "self", f"has {x.ndim} dims; it must have at least 2")
    rows, cols = x.shape[-2:]
    keep = np.triu(np.ones((rows, cols), bool), diagonal) if upper else np.tril(np.ones((rows, cols), bool), diagonal)
    return np.where(keep, x, np.zeros((), x.dtype))


def triu(self: Array, diagonal: int, out: Array, workspace: Array | None) -> None:
    """out = self with the elements below the diagonal-th diagonal of its last two axes zeroed (torch.triu).

    Constraints (conversion/triu, aclnn_triu.h): self ≥ 2-D of any dtype; out self's shape and dtype."""
    np.copyto(out, _triangle("Triu", self, diagonal, True), casting="unsafe")


def tril(self: Array, diagonal: int, out: Array, workspace: Array | None) -> None:
    """out = self with the elements above the diagonal-th diagonal zeroed (torch.tril); as Triu."""
    np.copyto(out, _triangle("Tril", self, diagonal, False), casting="unsafe")


def inplace_triu(selfRef: Array, diagonal: int, workspace: Array | None) -> None:
    """selfRef = triu(selfRef, diagonal), in place; as Triu."""
    np.copyto(selfRef, _triangle("InplaceTriu", selfRef, diagonal, True))


def inplace_tril(selfRef: Array, diagonal: int, workspace: Array | None) -> None:
    """selfRef = tril(selfRef, diagonal), in place; as Tril."""
    np.copyto(selfRef, _triangle("InplaceTril", selfRef, diagonal, False))


def roll(x: Array, shifts: Sequence[int], dims: Sequence[int], out: Array, workspace: Array | None) -> None:
    """out = x rolled by shifts[i] along dims[i] (torch.roll; no dims: the flattened tensor).

    Constraints (conversion/roll, aclnn_roll.h): shifts and dims of one length (dims may be empty with one
    shift); dims in [-rank, rank); out x's shape and dtype."""
    if not dims:
        np.copyto(out, np.roll(x.reshape(-1), shifts[0]).reshape(x.shape))
        return
    axes = [axis("Roll", "dims", d, x.ndim) for d in dims]
    np.copyto(out, np.roll(x, tuple(shifts), tuple(axes)))


def expand(self: Array, size: Sequence[int], out: Array, workspace: Array | None) -> None:
    """out = self broadcast to size (torch.expand, materialized; -1 keeps an axis).

    Constraints (math/expand, aclnn_expand.h): len(size) ≥ rank; each axis of self 1 or equal to size's (or -1);
    out shape size, self's dtype."""
    np.copyto(out, np.broadcast_to(self, out.shape), casting="unsafe")


def eye(n: int, m: int, out: Array, workspace: Array | None) -> None:
    """out = the n × m identity (ones on the main diagonal).

    Constraints (math/eye, aclnn_eye.h): n ≥ 0, m ≥ 0 (m < 0 means m = n); out 2-D [n, m] of a real dtype."""
    np.copyto(out, np.eye(out.shape[0], out.shape[1]), casting="unsafe")


def linspace(start: Any, end: Any, steps: int, out: Array, workspace: Array | None) -> None:
    """out = steps values evenly spaced from start to end (torch.linspace: the last is end).

    Constraints (math/linspace, aclnn_linspace.h): steps ≥ 0; out 1-D of steps elements, a real dtype."""
    values = np.linspace(float(start), float(end), steps, dtype=np.float64)
    if not is_float(out.dtype):
        values = np.trunc(values)
    np.copyto(out, values, casting="unsafe")


def inplace_one(selfRef: Array, workspace: Array | None) -> None:
    """selfRef[...] = 1. Constraints (math/ones_like, aclnn_one.h): any real dtype."""
    selfRef[...] = 1


def inplace_fill_tensor(selfRef: Array, value: Array, workspace: Array | None) -> None:
    """selfRef[...] = value, a 0-D (or one-element) tensor. Constraints (conversion/fill, aclnn_fill_tensor.h):
    value 0-D or of one element, a dtype castable to selfRef's."""
    np.copyto(selfRef, value.reshape(()), casting="unsafe")


def inplace_masked_fill_tensor(selfRef: Array, mask: Array, value: Array, workspace: Array | None) -> None:
    """selfRef[mask] = value (a 0-D tensor), mask broadcast to selfRef (torch masked_fill_ with a tensor).

    Constraints (conversion/masked_fill, aclnn_masked_fill_tensor.h): mask BOOL broadcastable to selfRef; value
    0-D, castable to selfRef's dtype."""
    np.copyto(selfRef, value.reshape(()), casting="unsafe", where=np.broadcast_to(mask.astype(bool), selfRef.shape))


def _clip(op: str, x: Array, low: Any, high: Any, out: Array) -> None:
    floating = is_float(x.dtype) or is_float(out.dtype) or isinstance(low, float) or isinstance(high, float)
    v = wide(x) if floating else x.astype(np.int64)
    result = v
    if low is not None:
        result = np.maximum(result, np.asarray(low).astype(result.dtype) if not isinstance(low, np.ndarray) else low)
    if high is not None:
        result = np.minimum(result, np.asarray(high).astype(result.dtype) if not isinstance(high, np.ndarray) else high)
    if floating:
        result = np.where(np.isnan(v), v, result)
    np.copyto(out, result, casting="unsafe")


def clamp_min(self: Array, clipValueMin: Any, out: Array, workspace: Array | None) -> None:
    """out = max(self, clipValueMin) (torch.clamp_min; NaN stays NaN).

    Constraints (conversion/clip_by_value_v2, aclnn_clamp.h): self a real dtype; out self's shape and the promoted
    dtype."""
    _clip("ClampMin", self, clipValueMin, None, out)


def clamp_max(self: Array, clipValueMax: Any, out: Array, workspace: Array | None) -> None:
    """out = min(self, clipValueMax) (torch.clamp_max); as ClampMin."""
    _clip("ClampMax", self, None, clipValueMax, out)


def clamp_tensor(self: Array, clipValueMin: Array | None, clipValueMax: Array | None, out: Array,
                 workspace: Array | None) -> None:  # fmt: skip
    """out = min(max(self, clipValueMin), clipValueMax) with tensor bounds broadcasting (torch.clamp); a null
    bound is absent. Constraints (aclnn_clamp.h): at least one bound; shapes that broadcast to out's."""
    if clipValueMin is None and clipValueMax is None:
        raise invalid("ClampTensor", "clipValueMin", "and clipValueMax are both null; at least one is required")
    low = None if clipValueMin is None else (wide(clipValueMin) if is_float(clipValueMin.dtype) else clipValueMin)
    high = None if clipValueMax is None else (wide(clipValueMax) if is_float(clipValueMax.dtype) else clipValueMax)
    _clip("ClampTensor", self, low, high, out)


def hardtanh(self: Array, clipValueMin: Any, clipValueMax: Any, out: Array, workspace: Array | None) -> None:
    """out = clamp(self, clipValueMin, clipValueMax) (torch.nn.functional.hardtanh).

    Constraints (conversion/clip_by_value_v2, aclnn_hardtanh.h): self FLOAT/FLOAT16/BFLOAT16/DOUBLE/INT8-64/UINT8;
    clipValueMin ≤ clipValueMax; out self's shape and dtype."""
    _clip("Hardtanh", self, clipValueMin, clipValueMax, out)


def dot(self: Array, tensor: Array, out: Array, workspace: Array | None) -> None:
    """out = Σ self · tensor of two 1-D tensors, accumulated in float32 (float64 for DOUBLE), a 0-D result.

    Constraints (math/dot, aclnn_dot.h): self and tensor 1-D of one length and one dtype (FLOAT/FLOAT16/BFLOAT16);
    out 0-D of that dtype."""
    acc = accumulator(self.dtype)
    store(out, np.dot(self.astype(acc), tensor.astype(acc)))


def sum_list(tensors: Sequence[Array], out: Array, workspace: Array | None) -> None:
    """out = the elementwise sum of the tensors (broadcasting), in float32 for fp16/bf16.

    Constraints (math/add_n, aclnn_sum.h): a non-empty list of tensors of promotable dtypes whose shapes broadcast
    to out's; out their promoted dtype."""
    floating = any(is_float(t.dtype) for t in tensors)
    total = sum(
        (wide(t) if floating else t.astype(np.int64) for t in tensors),
        np.zeros((), np.float32 if floating else np.int64),
    )
    store(out, np.broadcast_to(total, out.shape))


FUNCTIONS: dict[str, Callable[..., None]] = {
    "Stack": stack,
    "Triu": triu,
    "Tril": tril,
    "InplaceTriu": inplace_triu,
    "InplaceTril": inplace_tril,
    "Roll": roll,
    "Expand": expand,
    "Eye": eye,
    "Linspace": linspace,
    "InplaceOne": inplace_one,
    "InplaceFillTensor": inplace_fill_tensor,
    "InplaceMaskedFillTensor": inplace_masked_fill_tensor,
    "ClampMin": clamp_min,
    "ClampMax": clamp_max,
    "ClampTensor": clamp_tensor,
    "Hardtanh": hardtanh,
    "Dot": dot,
    "Sum": sum_list,
}
