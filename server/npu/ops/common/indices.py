"""Index arrays checked against the axis they index: the run-time half of the index operators' checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid


def checked(op: str, name: str, index: np.ndarray, size: int, negative: bool = True) -> np.ndarray:
    """`index` as int64 values in [0, size): negative values count from the end when `negative` (torch's rule),
    anything else out of range is a 161002 naming `name`."""
    values = np.asarray(index).astype(np.int64)
    low = -size if negative else 0
    bad = (values < low) | (values >= size)
    if bad.any():
        first = values[bad].reshape(-1)[0]
        raise invalid(op, name, f"index {int(first)} is out of range for an axis of size {size}")
    return np.where(values < 0, values + size, values)


def axis(op: str, name: str, value: int, rank: int) -> int:
    """A dim/axis argument in [-rank, rank) as a non-negative axis (a 0-D tensor counts as rank 1)."""
    rank = max(rank, 1)
    if not -rank <= value < rank:
        raise invalid(op, name, f"is {value}; it must lie in [{-rank}, {rank})")
    return value % rank


def advanced(op: str, self_shape: tuple[int, ...], indices: Sequence[np.ndarray | None]) -> tuple[Any, ...]:
    """torch advanced indexing: an empty or None entry keeps its axis whole, a BOOL entry is a mask over as many
    axes as it has, integer entries index one axis each (negative from the end)."""
    if len(indices) > len(self_shape):
        raise invalid(op, "indices", f"has {len(indices)} tensors; self has {len(self_shape)} axes")
    key: list[Any] = []
    dim = 0
    for entry in indices:
        if entry is None or (entry.size == 0 and entry.ndim == 1):
            key.append(slice(None))
            dim += 1
        elif entry.dtype == np.bool_:
            if entry.shape != self_shape[dim : dim + entry.ndim]:
                raise invalid(op, "indices", f"mask {entry.shape} does not match self's axes {self_shape[dim:]}")
            key.append(entry)
            dim += entry.ndim
        else:
            if dim >= len(self_shape):
                raise invalid(op, "indices", "indexes more axes than self has")
            key.append(checked(op, "indices", entry, self_shape[dim]))
            dim += 1
    return tuple(key)
