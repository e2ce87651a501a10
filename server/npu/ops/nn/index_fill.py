"""IndexFill and its twins (ops-nn index/index_fill_d): out = self, with the slices along `dim` that `index` names
set to `value` (torch.index_fill). Negative indices count from the end; an index tensor's out-of-range values are
skipped (the operator's documentation), an int array's were refused by phase 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

Array = np.ndarray


def _fill(out: Array, dim: int, index: Array | Sequence[int], value: Any) -> None:
    if out.ndim == 0:
        picked = np.asarray(index, np.int64).reshape(-1)
        if np.any((picked == 0) | (picked == -1)):
            out[...] = np.asarray(value).astype(out.dtype)
        return
    d = dim % out.ndim
    size = out.shape[d]
    picked = np.asarray(index, np.int64).reshape(-1)
    picked = picked[(picked >= -size) & (picked < size)] % size
    where: list[Any] = [slice(None)] * out.ndim
    where[d] = picked
    out[tuple(where)] = np.asarray(value).astype(out.dtype)


def index_fill(self: Array, dim: int, index: Array, value: Any, out: Array, workspace: Array | None) -> None:
    """out = self with out[..., index[i], ...] (along dim) = value.

    Constraints (index/index_fill_d, aclnnIndexFill): self FLOAT16/FLOAT/BFLOAT16/DOUBLE/INT8-64/UINT8/BOOL; dim in
    [-ndim, ndim) ([-1, 1) for 0-D); index INT32/INT64, at most 1-D; value castable to self's dtype; out self's dtype
    and shape."""
    np.copyto(out, self)
    _fill(out, dim, index, value)


def inplace_index_fill(selfRef: Array, dim: int, index: Array, value: Any, workspace: Array | None) -> None:
    """selfRef[..., index[i], ...] (along dim) = value; as IndexFill."""
    _fill(selfRef, dim, index, value)


def index_fill_tensor(self: Array, dim: int, index: tuple[int, ...], value: Any, out: Array,
                      workspace: Array | None) -> None:  # fmt: skip
    """IndexFill with the indices as an int array (aclnnIndexFillTensor: self FLOAT16/FLOAT/BFLOAT16/INT32/INT64/
    BOOL; every index in [-size, size) of dim)."""
    np.copyto(out, self)
    _fill(out, dim, index, value)


def inplace_index_fill_tensor(selfRef: Array, dim: int, index: tuple[int, ...], value: Any,
                              workspace: Array | None) -> None:  # fmt: skip
    """InplaceIndexFill with the indices as an int array; as IndexFillTensor."""
    _fill(selfRef, dim, index, value)


FUNCTIONS: dict[str, Callable[..., None]] = {
    "IndexFill": index_fill,
    "InplaceIndexFill": inplace_index_fill,
    "IndexFillTensor": index_fill_tensor,
    "InplaceIndexFillTensor": inplace_index_fill_tensor,
}
