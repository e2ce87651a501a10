"""Index reads (hicann/ops-nn index/): Embedding, Gather, IndexSelect, Index.

Out-of-range indices are a 161002 naming the index argument (the hardware reads past the tensor; the docs call
it undefined). Gather and Index take negative indices from the end (torch's rule); Embedding and IndexSelect
take [0, size) only, as their docs state.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.indices import advanced, axis, checked

Array = np.ndarray


def embedding(weight: Array, indices: Array, out: Array, workspace: Array | None) -> None:
    """out[...] = weight[indices[...]]: rows of the 2-D weight picked by indices (out = indices.shape + [n]).

    Constraints (index/embedding/docs/aclnnEmbedding.md): weight 2-D of BFLOAT16, FLOAT, FLOAT16, INT64, INT32,
    INT16, INT8, UINT8, BOOL, DOUBLE, COMPLEX64/128; indices INT32/INT64 in [0, weight.shape[0]); out
    weight's dtype, shape indices.shape + (weight.shape[1],).
    """
    if weight.ndim != 2:
        raise invalid("Embedding", "weight", f"shape {weight.shape} is not 2-D")
    rows = checked("Embedding", "indices", indices, weight.shape[0], negative=False)
    out[...] = weight[rows]


def gather(self: Array, dim: int, index: Array, out: Array, workspace: Array | None) -> None:
    """out[i0, .., i_{d}, ..] = self[i0, .., index[i0, .., i_d, ..], ..] along dim (torch.gather).

    Constraints (index/gather_elements_v2/docs/aclnnGather.md): index INT32/INT64 of self's rank, each axis but
    dim no larger than self's; values in [-self.shape[dim], self.shape[dim]); out index's shape, self's dtype;
    dim in [-rank, rank).
    """
    op = "Gather"
    d = axis(op, "dim", dim, self.ndim)
    if self.ndim == 0:
        out[...] = self
        return
    too_big = index.ndim == self.ndim and any(index.shape[k] > self.shape[k] for k in range(self.ndim) if k != d)
    if index.ndim != self.ndim or too_big:
        raise invalid(op, "index", f"shape {index.shape} does not fit self {self.shape} (dim {dim})")
    window = self[tuple(slice(0, n) if k != d else slice(None) for k, n in enumerate(index.shape))]
    out[...] = np.take_along_axis(window, checked(op, "index", index, self.shape[d]), axis=d)


def index_select(self: Array, dim: int, index: Array, out: Array, workspace: Array | None) -> None:
    """out = self.index_select(dim, index): the slices of self along dim named by index, in index's order.

    Constraints (index/gather_v2/docs/aclnnIndexSelect.md): self ≤ 8-D; index INT32/INT64, 0-D or 1-D, values in
    [0, self.shape[dim]); out self's dtype with dim's size len(index); a 0-D self takes index of shape [1].
    """
    op = "IndexSelect"
    if index.ndim > 1:
        raise invalid(op, "index", f"shape {index.shape} is not 0-D or 1-D")
    source = self.reshape(1) if self.ndim == 0 else self
    d = axis(op, "dim", dim, source.ndim)
    picks = checked(op, "index", index.reshape(-1), source.shape[d], negative=False)
    out[...] = np.take(source, picks, axis=d).reshape(out.shape)


def index(self: Array, indices: list[Array | None], out: Array, workspace: Array | None) -> None:
    """out = self[indices] (torch advanced indexing: integer tensors broadcast together, BOOL masks, an empty
    tensor for a whole axis as torch_npu passes it).

    Constraints (index/index/docs/aclnnIndex.md): at most rank(self) index tensors (one for a 0-D self), INT32/
    INT64/BOOL, broadcastable; a BOOL mask's shape equals the axes it covers; values within the axes (vnpu: 161002
    naming indices otherwise; negatives count from the end).
    """
    op = "Index"
    source = self.reshape(1) if self.ndim == 0 else self
    result = source[advanced(op, source.shape, indices)]
    if result.size != out.size:
        raise invalid(op, "out", f"has shape {out.shape}; the result has {result.shape}")
    out[...] = result.reshape(out.shape)


FUNCTIONS: dict[str, Callable[..., None]] = {
    "Embedding": embedding,
    "Gather": gather,
    "IndexSelect": index_select,
    "Index": index,
}
