"""Reductions beyond the maximum and the sum (hicann/ops-math math/): Min, MinDim, ArgMin, Amax, Amin, Prod,
ProdDim, Var, Std, VarMean, LogSumExp, Any, All.

The minimum mirrors the maximum of `reduce` (NaN propagates, ties to the first index); sums, products and
moments accumulate in float32 (float64 for DOUBLE) and round once into the output; integer products wrap in
int64. `dim` arrays name axes in [-rank, rank); an empty array reduces every axis.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.indices import axis
from server.npu.ops.common.numeric import accumulator, is_float, store

Array = np.ndarray


def _axes(op: str, name: str, dims: Sequence[int], rank: int) -> tuple[int, ...]:
    if not dims:
        return tuple(range(rank))
    return tuple(sorted({axis(op, name, d, rank) for d in dims}))


def _arg_min(op: str, self: Array, dim: int) -> tuple[Array, Array]:
    source = self.reshape(1) if self.ndim == 0 else self
    d = axis(op, "dim", dim, source.ndim)
    if source.shape[d] == 0:
        raise invalid(op, "self", f"is empty along dim {d}")
    nan_first = np.where(np.isnan(source), -np.inf, source) if is_float(source.dtype) else source
    index = np.argmin(nan_first, axis=d)
    if is_float(source.dtype):
        has_nan = np.isnan(source).any(axis=d)
        index = np.where(has_nan, np.argmax(np.isnan(source), axis=d), index)
    values = np.take_along_axis(source, np.expand_dims(index, d), axis=d).squeeze(d)
    return index, values


def min_all(self: Array, out: Array, workspace: Array | None) -> None:
    """out = the minimum of all of self (0-D; NaN propagates).

    Constraints (math/reduce_min, aclnn_min.h): self any real dtype, non-empty; out 0-D of self's dtype."""
    if self.size == 0:
        raise invalid("Min", "self", "is empty; the minimum of nothing is undefined")
    out[...] = np.min(self)


def min_dim(self: Array, dim: int, keepdim: bool, out: Array, indices: Array, workspace: Array | None) -> None:
    """out, indices = the minimum along dim and the index of its first occurrence (torch.min(dim)).

    Constraints (math/arg_min_with_value, aclnn_min_dim.h): self any real dtype; dim in [-rank, rank); out self's
    dtype, indices INT64 (INT32 allowed), self's shape without dim (1 with keepdim)."""
    index, values = _arg_min("MinDim", self, dim)
    out[...] = values.reshape(out.shape)
    indices[...] = index.reshape(indices.shape)


def arg_min(self: Array, dim: int, keepdim: bool, out: Array, workspace: Array | None) -> None:
    """out = the index of the first minimum along dim (NaN counts as the minimum).

    Constraints (math/arg_min, aclnn_argmin.h): self a real dtype, not empty along dim; out INT32/INT64 of self's
    shape without dim (1 with keepdim)."""
    index, _ = _arg_min("ArgMin", self, dim)
    out[...] = index.reshape(out.shape)


def _extreme(op: str, f: Callable[..., Array], self: Array, dim: Sequence[int], out: Array) -> None:
    if self.size == 0:
        raise invalid(op, "self", "is empty")
    axes = _axes(op, "dim", dim, self.ndim)
    out[...] = f(self, axis=axes).reshape(out.shape)


def amax(self: Array, dim: Sequence[int], keepDim: bool, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """out = the maximum over the axes in dim (NaN propagates).

    Constraints (math/reduce_max, aclnn_amax.h): self a real dtype, non-empty; out self's dtype, the reduced shape."""
    _extreme("Amax", np.max, self, dim, out)


def amin(self: Array, dim: Sequence[int], keepDim: bool, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """out = the minimum over the axes in dim; as Amax."""
    _extreme("Amin", np.min, self, dim, out)


def _product(self: Array, axes: tuple[int, ...] | None, dtype: Any, out: Array) -> None:
    target = np.dtype(dtype) if dtype is not None else out.dtype
    if is_float(target) or is_float(self.dtype):
        acc = accumulator(target if is_float(target) else self.dtype)
        store(out, np.prod(self.astype(acc), axis=axes).reshape(out.shape))
    else:
        out[...] = np.prod(self.astype(np.int64), axis=axes).astype(target).reshape(out.shape)


def prod(self: Array, dtype: Any, out: Array, workspace: Array | None) -> None:
    """out = the product of all of self, computed in dtype (0-D).

    Constraints (math/reduce_prod, aclnn_prod.h): self a real dtype; dtype out's; out 0-D."""
    _product(self, None, dtype, out)


def prod_dim(self: Array, dim: int, keepDim: bool, dtype: Any, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """out = the product along dim, computed in dtype; as Prod with dim in [-rank, rank)."""
    source = self.reshape(1) if self.ndim == 0 else self
    _product(source, (axis("ProdDim", "dim", dim, source.ndim),), dtype, out)


def _moments(op: str, self: Array, dim: Sequence[int], correction: float) -> tuple[Array, Array]:
    axes = _axes(op, "dim", dim, self.ndim)
    acc = accumulator(self.dtype)
    x = self.astype(acc)
    mean = np.mean(x, axis=axes, keepdims=True)
    count = int(np.prod([self.shape[a] for a in axes])) if axes else 1
    with np.errstate(all="ignore"):
        var = np.sum(np.square(x - mean), axis=axes, keepdims=True) / acc.type(max(count - correction, 0))
    return var, mean


def var(self: Array, dim: Sequence[int], unbiased: bool, keepdim: bool, out: Array, workspace: Array | None) -> None:
    """out = the variance over dim (unbiased: divided by n - 1), accumulated in float32.

    Constraints (math/reduce_std_v2, aclnn_var.h): self FLOAT/FLOAT16/BFLOAT16/DOUBLE; out self's dtype, the
    reduced shape."""
    v, _ = _moments("Var", self, dim, 1 if unbiased else 0)
    store(out, v.reshape(out.shape))


def std(self: Array, dim: Sequence[int], correction: int, keepdim: bool, out: Array, workspace: Array | None) -> None:
    """out = the standard deviation over dim with Bessel's correction (divided by n - correction).

    Constraints (math/reduce_std_v2, aclnn_std.h): self FLOAT/FLOAT16/BFLOAT16/DOUBLE; correction ≥ 0; out self's
    dtype, the reduced shape."""
    v, _ = _moments("Std", self, dim, correction)
    store(out, np.sqrt(v).reshape(out.shape))


def var_mean(self: Array, dim: Sequence[int], correction: int, keepdim: bool, varOut: Array, meanOut: Array,  # noqa: N803
             workspace: Array | None) -> None:  # fmt: skip
    """varOut, meanOut = the variance (divided by n - correction) and the mean over dim; as Std."""
    v, m = _moments("VarMean", self, dim, correction)
    store(varOut, v.reshape(varOut.shape))
    store(meanOut, m.reshape(meanOut.shape))


def log_sum_exp(self: Array, dim: Sequence[int], keepDim: bool, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """out = log(Σ exp(self)) over dim, stabilized by the maximum, in float32 (float64 for DOUBLE).

    Constraints (math/reduce_log_sum_exp, aclnn_logsumexp.h): self a real dtype (integers computed as float);
    out a float dtype, the reduced shape."""
    axes = _axes("LogSumExp", "dim", dim, self.ndim)
    x = self.astype(accumulator(self.dtype))
    with np.errstate(all="ignore"):
        top = np.max(x, axis=axes, keepdims=True) if x.size else np.zeros((), x.dtype)
        top = np.where(np.isfinite(top), top, 0)
        total = np.log(np.sum(np.exp(x - top), axis=axes, keepdims=True)) + top
    store(out, total.reshape(out.shape))


def _logical(op: str, f: Callable[..., Array], self: Array, dim: Sequence[int], out: Array) -> None:
    axes = _axes(op, "dim", dim, self.ndim)
    np.copyto(out, f(self.astype(bool), axis=axes).reshape(out.shape), casting="unsafe")


def any_(self: Array, dim: Sequence[int], keepdim: bool, out: Array, workspace: Array | None) -> None:
    """out = whether any element over dim is nonzero.

    Constraints (math/reduce_any, aclnn_any.h): self any dtype; out BOOL (or UINT8), the reduced shape."""
    _logical("Any", np.any, self, dim, out)


def all_(self: Array, dim: Sequence[int], keepdim: bool, out: Array, workspace: Array | None) -> None:
    """out = whether every element over dim is nonzero; as Any."""
    _logical("All", np.all, self, dim, out)


FUNCTIONS: dict[str, Callable[..., None]] = {
    "Min": min_all,
    "MinDim": min_dim,
    "ArgMin": arg_min,
    "Amax": amax,
    "Amin": amin,
    "Prod": prod,
    "ProdDim": prod_dim,
    "Var": var,
    "Std": std,
    "VarMean": var_mean,
    "LogSumExp": log_sum_exp,
    "Any": any_,
    "All": all_,
}
