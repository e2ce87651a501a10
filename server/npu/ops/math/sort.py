"""Sorting (hicann/ops-math math/sort): Sort. Ordering is torch's: NaN sorts above every number (last ascending,
first descending); the sort is always stable (ties keep their input order), which is one of the orders an
unstable sort may give. `order` is shared with the top-k kernels."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from server.npu.ops.common.indices import axis

Array = np.ndarray


def order(values: Array, d: int, descending: bool) -> Array:
    """The stable sorting permutation of `values` along axis d (NaN the largest; ties by input index)."""
    if not descending:
        return np.argsort(values, axis=d, kind="stable")
    n = values.shape[d]
    reversed_order = np.argsort(np.flip(values, axis=d), axis=d, kind="stable")
    permutation: Array = n - 1 - np.flip(reversed_order, axis=d)
    return permutation


def sort(
    self: Array, stable: bool, dim: int, descending: bool, valuesOut: Array, indicesOut: Array,
    workspace: Array | None,
) -> None:  # fmt: skip
    """valuesOut, indicesOut = self sorted along dim (ascending, or descending), with the source indices.

    Constraints (math/sort/op_api/aclnn_sort.h, torch.sort): self FLOAT/FLOAT16/BFLOAT16/DOUBLE/INT8-64/UINT8/BOOL;
    dim in [-rank, rank); valuesOut self's dtype and shape, indicesOut INT64 (INT32 allowed) of self's shape.
    """
    source = self.reshape(1) if self.ndim == 0 else self
    d = axis("Sort", "dim", dim, source.ndim)
    permutation = order(source, d, descending)
    valuesOut[...] = np.take_along_axis(source, permutation, axis=d).reshape(valuesOut.shape)
    indicesOut[...] = permutation.reshape(indicesOut.shape)


FUNCTIONS: dict[str, Callable[..., None]] = {"Sort": sort}
