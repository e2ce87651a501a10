"""Scatters and reversals (hicann/ops-nn index/): Scatter, ScatterAdd, IndexAdd, Flip.

Index values are checked against the axis they index when the kernel runs (161002 naming `index`); negative
values count from the end, as torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.indices import axis, checked
from server.npu.ops.common.numeric import is_float, store, wide

Array = np.ndarray
REDUCTIONS = {0: "none", 1: "add", 2: "multiply"}


def _grid(index: Array, d: int) -> tuple[Array, ...]:
    """The full index tuple of a scatter along axis d: index's own positions but along d."""
    grids: list[Array] = list(np.indices(index.shape, sparse=True))
    grids[d] = index
    return tuple(grids)


def _scatter(op: str, self: Array, dim: int, index: Array, src: Array | Any, reduce: int, out: Array) -> None:
    if reduce not in REDUCTIONS:
        raise invalid(op, "reduce", f"is {reduce}; it must be 0 (none), 1 (add) or 2 (multiply)")
    d = axis(op, "dim", dim, self.ndim)
    if index.ndim != self.ndim and self.ndim:
        raise invalid(op, "index", f"has {index.ndim} dims; self has {self.ndim}")
    target = wide(self).copy() if is_float(self.dtype) else self.astype(np.int64)
    values = src[tuple(slice(0, n) for n in index.shape)] if isinstance(src, np.ndarray) else src
    values = np.broadcast_to(np.asarray(values).astype(target.dtype), index.shape)
    where = _grid(checked(op, "index", index, self.shape[d]), d)
    if reduce == 0:
        target[where] = values
    elif reduce == 1:
        np.add.at(target, where, values)
    else:
        np.multiply.at(target, where, values)
    store(out, target)


def scatter(self: Array, dim: int, index: Array, src: Array, reduce: int, out: Array, workspace: Array | None) -> None:
    """out = self with out[..., index[i][j], ...] = src[i][j] along dim (torch.scatter; reduce 1 adds, 2
    multiplies, duplicates accumulating).

    Constraints (index/scatter_elements, aclnn_scatter.h): self and src one dtype; index INT32/INT64 of self's rank,
    no larger than src (and self off dim); dim in [-rank, rank); reduce 0-2; out self's shape and dtype."""
    _scatter("Scatter", self, dim, index, src, reduce, out)


def scatter_add(self: Array, dim: int, index: Array, src: Array, out: Array, workspace: Array | None) -> None:
    """out = self with src added at index along dim (torch.scatter_add: duplicates sum); as Scatter."""
    _scatter("ScatterAdd", self, dim, index, src, 1, out)


def index_add(self: Array, dim: int, index: Array, source: Array, alpha: Any, out: Array,
              workspace: Array | None) -> None:  # fmt: skip
    """out = self with alpha · source[..., i, ...] added at row index[i] along dim (torch.index_add).

    Constraints (index/index_add, aclnn_index_add.h): self and source one dtype and rank; index INT32/INT64 1-D of
    source's length along dim; dim in [-rank, rank); out self's shape and dtype."""
    op = "IndexAdd"
    d = axis(op, "dim", dim, self.ndim)
    rows = checked(op, "index", index.reshape(-1), self.shape[d] if self.ndim else 1)
    target = wide(self).copy() if is_float(self.dtype) else self.astype(np.int64)
    moved = np.moveaxis(target, d, 0) if self.ndim else target.reshape(1)
    addend = (
        np.moveaxis(wide(source) if is_float(self.dtype) else source.astype(np.int64), d, 0)
        if self.ndim
        else source.reshape(1)
    )
    np.add.at(moved, rows, addend * np.asarray(alpha).astype(moved.dtype))
    store(out, target)


def flip(self: Array, dims: Sequence[int], out: Array, workspace: Array | None) -> None:
    """out = self reversed along each axis of dims (torch.flip).

    Constraints (index/reverse_v2, aclnn_flip.h): dims distinct axes in [-rank, rank); out self's shape and dtype."""
    axes = [axis("Flip", "dims", d, self.ndim) for d in dims]
    if len(set(axes)) != len(axes):
        raise invalid("Flip", "dims", f"{list(dims)} names an axis twice")
    np.copyto(out, np.flip(self, tuple(axes)) if axes else self)


FUNCTIONS: dict[str, Callable[..., None]] = {
    "Scatter": scatter,
    "ScatterAdd": scatter_add,
    "IndexAdd": index_add,
    "Flip": flip,
}
