"""Shape and layout copies (hicann/ops-math conversion/): Cat, SplitWithSize, Slice, Permute, Repeat.

Each copies into its output view(s), casting to the output dtype where the operator promotes (Cat).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.indices import axis

Array = np.ndarray


def cat(tensors: Sequence[Array], dim: int, out: Array, workspace: Array | None) -> None:
    """out = the tensors joined along dim (torch.cat; 1-D empty tensors are skipped, as torch's legacy rule).

    Constraints (conversion/concat_d/op_api/aclnn_cat.h): a list of tensors of one rank, equal but along dim, of
    promotable dtypes; dim in [-rank, rank); out their promoted dtype and the joined shape.
    """
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    if not parts:
        return
    d = axis("Cat", "dim", dim, parts[0].ndim)
    for i, t in enumerate(parts):
        if t.ndim != parts[0].ndim or t.shape[:d] + t.shape[d + 1 :] != parts[0].shape[:d] + parts[0].shape[d + 1 :]:
            raise invalid("Cat", "tensors", f"tensor {i} has shape {t.shape}; it does not join {parts[0].shape}")
    start = 0
    moved = np.moveaxis(out, d, 0)
    for t in parts:
        np.copyto(moved[start : start + t.shape[d]], np.moveaxis(t, d, 0), casting="unsafe")
        start += t.shape[d]


def split_with_size(
    self: Array, splitSize: Sequence[int], dim: int, out: Sequence[Array], workspace: Array | None
) -> None:
    """out[i] = the i-th consecutive piece of self along dim, of length splitSize[i] (torch.split with sizes).

    Constraints (conversion/split_v/op_api/aclnn_split_with_size.h): splitSize non-negative, summing to
    self.shape[dim]; dim in [-rank, rank); out a list of len(splitSize) tensors of self's dtype.
    """
    d = axis("SplitWithSize", "dim", dim, self.ndim)
    if sum(splitSize) != self.shape[d] or any(s < 0 for s in splitSize) or len(out) != len(splitSize):
        raise invalid("SplitWithSize", "splitSize", f"{list(splitSize)} does not split {self.shape[d]} into {len(out)}")
    start = 0
    for size, target in zip(splitSize, out, strict=True):
        np.copyto(target, np.take(self, np.arange(start, start + size), axis=d), casting="unsafe")
        start += size


def slice_(self: Array, dim: int, start: int, end: int, step: int, out: Array, workspace: Array | None) -> None:
    """out = self[..., start:end:step, ...] along dim (Python slicing: negative ends count from the end, bounds
    are clamped).

    Constraints (conversion/slice/op_api/aclnn_slice.h): step > 0; dim in [-rank, rank); out self's dtype with
    dim's length the slice's.
    """
    if step <= 0:
        raise invalid("Slice", "step", f"is {step}; it must be positive")
    d = axis("Slice", "dim", dim, self.ndim)
    picked = self[(slice(None),) * d + (slice(start, end, step),)]
    if picked.shape != out.shape:
        raise invalid("Slice", "out", f"has shape {out.shape}; the slice is {picked.shape}")
    np.copyto(out, picked, casting="unsafe")


def permute(self: Array, dims: Sequence[int], out: Array, workspace: Array | None) -> None:
    """out = self with its axes reordered by dims (torch.permute, materialized).

    Constraints (conversion/transpose/op_api/aclnn_permute.h): dims a permutation of [0, rank) (negatives count
    from the end); out self's dtype, shape self.shape[dims].
    """
    order = [axis("Permute", "dims", v, self.ndim) for v in dims]
    if sorted(order) != list(range(self.ndim)):
        raise invalid("Permute", "dims", f"{list(dims)} is not a permutation of {self.ndim} axes")
    np.copyto(out, self.transpose(order), casting="unsafe")


def repeat(self: Array, repeats: Sequence[int], out: Array, workspace: Array | None) -> None:
    """out = self tiled repeats[i] times along each axis (torch.Tensor.repeat: leading repeats add axes).

    Constraints (ops-math experimental/math/tile, aclnn_repeat.h): len(repeats) ≥ rank, repeats non-negative;
    out self's dtype with shape repeats · shape (self's shape padded with leading 1s).
    """
    if len(repeats) < self.ndim or any(r < 0 for r in repeats):
        raise invalid("Repeat", "repeats", f"{list(repeats)} must be non-negative and at least {self.ndim} long")
    np.copyto(out, np.tile(self, tuple(repeats)), casting="unsafe")


FUNCTIONS: dict[str, Callable[..., None]] = {
    "Cat": cat,
    "SplitWithSize": split_with_size,
    "Slice": slice_,
    "Permute": permute,
    "Repeat": repeat,
}
