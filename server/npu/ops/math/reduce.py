"""Reductions and scans (hicann/ops-math math/): ArgMax, Max, MaxDim, Cumsum.

The maximum follows torch: NaN is the largest value (it propagates; argmax picks the first NaN), ties go to the
first index. Indices are INT64 (or the out's integer dtype).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.indices import axis
from server.npu.ops.common.numeric import is_float, store, wide

Array = np.ndarray


def _arg_and_max(self: Array, dim: int, op: str) -> tuple[Array, Array, int]:
    source = self.reshape(1) if self.ndim == 0 else self
    d = axis(op, "dim", dim, source.ndim)
    index = np.argmax(source, axis=d)
    values = np.take_along_axis(source, np.expand_dims(index, d), axis=d).squeeze(d)
    return index, values, d


def arg_max(self: Array, dim: int, keepdim: bool, out: Array, workspace: Array | None) -> None:
    """out = the index of the first maximum along dim (NaN counts as the maximum).

    Constraints (math/arg_max_v2/op_api/aclnn_argmax.h, torch.argmax): self FLOAT/FLOAT16/BFLOAT16/DOUBLE/INT8-64/
    UINT8, not empty along dim; dim in [-rank, rank); out INT32/INT64, self's shape without dim (kept as 1 with
    keepdim).
    """
    index, _, _ = _arg_and_max(self, dim, "ArgMax")
    out[...] = index.reshape(out.shape)


def max_all(self: Array, out: Array, workspace: Array | None) -> None:
    """out = the maximum of all of self (a 0-D result; NaN propagates).

    Constraints (math/reduce_max/op_api/aclnn_max.h, torch.max()): self any real dtype, non-empty; out 0-D of
    self's dtype.
    """
    if self.size == 0:
        raise invalid("Max", "self", "is empty; the maximum of nothing is undefined")
    out[...] = np.max(self)


def max_dim(self: Array, dim: int, keepdim: bool, out: Array, indices: Array, workspace: Array | None) -> None:
    """out, indices = the maximum along dim and the index of its first occurrence (torch.max(dim)).

    Constraints (ops-math experimental/math/arg_max_with_value, aclnn_max_dim.h): self any real dtype; dim in
    [-rank, rank); out self's dtype, indices INT64 (INT32 allowed), both self's shape without dim (1 with keepdim).
    """
    index, values, _ = _arg_and_max(self, dim, "MaxDim")
    out[...] = values.reshape(out.shape)
    indices[...] = index.reshape(indices.shape)


def cumsum(self: Array, dim: int, dtype: Any, out: Array, workspace: Array | None) -> None:
    """out = the running sum along dim, computed in `dtype` (self's dtype when None; float16/bfloat16 accumulate
    in float32 and round each output once; integers wrap).

    Constraints (math/cumsum/op_api/aclnn_cumsum.h, torch.cumsum): self any real dtype; dim in [-rank, rank);
    dtype the output's; out self's shape.
    """
    source = self.reshape(1) if self.ndim == 0 else self
    d = axis("Cumsum", "dim", dim, source.ndim)
    target = np.dtype(dtype) if dtype is not None else out.dtype
    if is_float(target):
        store(out, np.cumsum(wide(source.astype(target)), axis=d).reshape(out.shape))
    else:
        out[...] = np.cumsum(source.astype(np.int64), axis=d).astype(target).reshape(out.shape)


FUNCTIONS: dict[str, Callable[..., None]] = {"ArgMax": arg_max, "Max": max_all, "MaxDim": max_dim, "Cumsum": cumsum}
