"""Index writes (hicann/ops-nn index/): InplaceScatterUpdate (torch_npu.scatter_update_), ScatterNdUpdate,
IndexPutImpl (index_put_), IndexCopy and InplaceIndexCopy (index_copy_).

The updated tensor is written in place through its view. Out-of-range indices are a 161002 naming the index
argument (the hardware's result is undefined). With duplicate indices the docs leave the result unspecified;
vnpu keeps the last write (accumulate sums them all).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.indices import advanced, axis, checked
from server.npu.ops.common.numeric import is_float, store, wide

Array = np.ndarray


def inplace_scatter_update(data: Array, indices: Array, updates: Array, axis: int, workspace: Array | None) -> None:
    """data[b, ..., start + k, ...] = updates[i, ..., k, ...] along `axis`, for each row i of indices: 1-D
    indices give start = indices[i] with b = i; 2-D indices (rows of 2) give b = indices[i, 0] and
    start = indices[i, 1]; 0-D indices update batch 0 only.

    Constraints (index/scatter/docs/aclnnInplaceScatterUpdate.md): data and updates of one dtype (INT8, UINT8,
    FLOAT16, FLOAT32, INT32, BFLOAT16, FP8), rank 2-8, the same rank; indices INT32/INT64, 0-2-D (2-D: last axis 2),
    non-negative and in range; axis in (-rank, rank) and not 0; updates' axis 0 equals indices' (1 for 0-D) and is
    ≤ data's; other axes but `axis` equal to data's.
    """
    op = "InplaceScatterUpdate"
    rank = data.ndim
    dim = _axis(op, axis, rank)  # the parameter `axis` shadows common.indices.axis here
    rows = indices.reshape(1) if indices.ndim == 0 else indices
    if rows.ndim == 2 and rows.shape[1] != 2:
        raise invalid(op, "indices", f"shape {indices.shape}: a 2-D indices has rows of 2 (batch, offset)")
    batch = np.arange(rows.shape[0]) if rows.ndim == 1 else rows[:, 0].astype(np.int64)
    starts = (rows if rows.ndim == 1 else rows[:, 1]).astype(np.int64)
    span = updates.shape[dim]
    if updates.shape[0] != starts.size:
        raise invalid(op, "updates", f"axis 0 is {updates.shape[0]}; indices has {starts.size} rows")
    batch = checked(op, "indices", batch, data.shape[0], negative=False)
    bad = (starts < 0) | (starts + span > data.shape[dim])
    if bad.any():
        first = int(starts[bad][0])
        raise invalid(op, "indices", f"offset {first} + {span} exceeds axis {dim} of size {data.shape[dim]}")
    moved, source = np.moveaxis(data, dim, 1), np.moveaxis(updates, dim, 1)
    for i, (b, start) in enumerate(zip(batch.tolist(), starts.tolist(), strict=True)):
        moved[b, start : start + span] = source[i]


def _axis(op: str, value: int, rank: int) -> int:
    dim = axis(op, "axis", value, rank)
    if dim == 0:
        raise invalid(op, "axis", f"is {value}; axis 0 (the batch axis) cannot be scattered")
    return dim


def scatter_nd_update(varRef: Array, indices: Array, updates: Array, workspace: Array | None) -> None:
    """varRef[indices[j]] = updates[j]: each row of indices' last axis (length K) addresses varRef's first K axes.

    Constraints (index/scatter_nd_update/docs/aclnnScatterNdUpdate.md): varRef rank 1-8; indices at least 2-D,
    INT32/INT64, last axis K in [1, 7] and ≤ varRef's rank; updates.shape = indices.shape[:-1] +
    varRef.shape[K:]; varRef and updates one dtype. Indices must lie in [0, size) (vnpu: 161002 naming indices).
    """
    op = "ScatterNdUpdate"
    depth = indices.shape[-1] if indices.ndim else 0
    if indices.ndim < 1 or not 1 <= depth <= varRef.ndim:
        raise invalid(op, "indices", f"shape {indices.shape}: its last axis must be in [1, {varRef.ndim}]")
    flat = indices.reshape(-1, depth)
    where = tuple(checked(op, "indices", flat[:, k], varRef.shape[k], negative=False) for k in range(depth))
    expected = (*indices.shape[:-1], *varRef.shape[depth:])
    if updates.shape != expected:
        raise invalid(op, "updates", f"has shape {updates.shape}; indices and varRef need {expected}")
    varRef[where] = updates.reshape(flat.shape[0], *varRef.shape[depth:])


def index_put_impl(
    selfRef: Array, indices: list[Array | None], values: Array, accumulate: bool, unsafe: bool,
    workspace: Array | None,
) -> None:  # fmt: skip
    """selfRef[indices] = values (accumulate: selfRef[indices] += values, duplicates summed).

    Constraints (index/index_put_v2/docs/aclnnIndexPutImpl.md): at most rank(selfRef) ≤ 8 index tensors, INT32/
    INT64 or BOOL masks (a mask's shape equals the self axes it covers); torch_npu passes an empty tensor for an
    absent index (the whole axis); values broadcast to the indexed shape (indices' broadcast shape + the remaining
    axes); values and selfRef one dtype. Accumulation of FLOAT16/BFLOAT16 is done in float32, rounded once.
    """
    op = "IndexPutImpl"
    key = advanced(op, selfRef.shape, indices)
    try:
        target_shape = np.empty(selfRef.shape, np.bool_)[key].shape
        np.broadcast_to(values, target_shape)
    except (ValueError, IndexError) as error:
        raise invalid(op, "values", f"shape {values.shape} does not fit the indexed shape: {error}") from None
    if not accumulate:
        selfRef[key] = values
        return
    if is_float(selfRef.dtype):
        total = wide(selfRef).copy()
        np.add.at(total, key, np.broadcast_to(wide(values), target_shape))
        store(selfRef, total)
    else:
        np.add.at(selfRef, key, np.broadcast_to(values, target_shape).astype(selfRef.dtype))


def _index_copy(op: str, target: Array, dim: int, index: Array, source: Array) -> None:
    dim = axis(op, "dim", dim, target.ndim)
    moved = np.moveaxis(target, dim, 0) if target.ndim else target.reshape(1)
    picks = checked(op, "index", index.reshape(-1), moved.shape[0], negative=False)
    rows = np.moveaxis(source, dim, 0) if source.ndim else source.reshape(1)
    if rows.shape[0] != picks.size or rows.shape[1:] != moved.shape[1:]:
        raise invalid(op, "source", f"shape {source.shape} does not fit {picks.size} rows of {target.shape}, dim {dim}")
    moved[picks] = rows


def inplace_index_copy(selfRef: Array, dim: int, index: Array, source: Array, workspace: Array | None) -> None:
    """selfRef.index_copy_(dim, index, source): selfRef[..., index[i], ...] = source[..., i, ...] along dim.

    Constraints (index/scatter_update/docs/aclnnIndexCopy&aclnnInplaceIndexCopy.md): selfRef and source one dtype
    and rank, equal but along dim, where source has len(index); index INT32/INT64, 0-D or 1-D, values in
    [0, size) (vnpu: 161002 naming index otherwise); dim in [-rank, rank).
    """
    _index_copy("InplaceIndexCopy", selfRef, dim, index, source)


def index_copy(selfRef: Array, dim: int, index: Array, source: Array, outRef: Array, workspace: Array | None) -> None:
    """outRef = selfRef with rows `index` along dim replaced by source's (torch.index_copy); as InplaceIndexCopy."""
    np.copyto(outRef, selfRef, casting="unsafe")
    _index_copy("IndexCopy", outRef, dim, index, source)


FUNCTIONS: dict[str, Callable[..., None]] = {
    "InplaceScatterUpdate": inplace_scatter_update,
    "ScatterNdUpdate": scatter_nd_update,
    "IndexPutImpl": index_put_impl,
    "InplaceIndexCopy": inplace_index_copy,
    "IndexCopy": index_copy,
}
