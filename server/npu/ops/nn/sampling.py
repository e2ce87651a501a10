"""Sampling kernels of ops-nn (hicann/ops-nn index/): Topk, ApplyTopKTopP."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.indices import axis
from server.npu.ops.common.numeric import store, wide
from server.npu.ops.math.sort import order

Array = np.ndarray


def topk(
    self: Array, k: int, dim: int, largest: bool, sorted: bool, valuesOut: Array, indicesOut: Array,
    workspace: Array | None,
) -> None:  # fmt: skip
    """valuesOut, indicesOut = the k largest (or smallest) values along dim and their indices, best first (also
    when sorted is false: any order is allowed then); ties go to the lower index, NaN counts as the largest.

    Constraints (index/gather_elements/op_api/aclnn_topk.h, torch.topk): self FLOAT/FLOAT16/BFLOAT16/DOUBLE/
    INT8-64/UINT8; 0 ≤ k ≤ self.shape[dim]; dim in [-rank, rank); valuesOut self's dtype, indicesOut INT64, both
    self's shape with k along dim.
    """
    source = self.reshape(1) if self.ndim == 0 else self
    d = axis("Topk", "dim", dim, source.ndim)
    if not 0 <= k <= source.shape[d]:
        raise invalid("Topk", "k", f"is {k}; it must lie in [0, {source.shape[d]}]")
    picked = np.take(order(source, d, largest), np.arange(k), axis=d)
    valuesOut[...] = np.take_along_axis(source, picked, axis=d).reshape(valuesOut.shape)
    indicesOut[...] = picked.reshape(indicesOut.shape)


def apply_top_k_top_p(logits: Array, p: Array | None, k: Array | None, out: Array, workspace: Array | None) -> None:
    """out = logits with everything outside each row's top-k and top-p set to -inf.

    Per row b (index/apply_top_k_top_p_with_sorted/docs/aclnnApplyTopKTopP.md): sort ascending (stable); keep the
    values ≥ the k[b]-th largest (k ≤ 0 or ≥ V: no top-k); softmax the kept values (float32), cumulate from the
    smallest, drop the positions whose cumulative probability is ≤ 1 - p[b], always keeping the largest; scatter
    back to the input order (the doc's last formula writes a gather; its meaning is the inverse permutation).
    Constraints: logits 2-D BFLOAT16/FLOAT16/FLOAT32; p logits' dtype (B), in [0, 1]; k INT32 (B); out like logits.
    vnpu also takes a null p or k (that filter off).
    """
    op = "ApplyTopKTopP"
    if logits.ndim != 2:
        raise invalid(op, "logits", f"shape {logits.shape} is not 2-D")
    rows, vocab = logits.shape
    for name, given in (("p", p), ("k", k)):
        if given is not None and given.size != rows:
            raise invalid(op, name, f"has {given.size} values; logits has {rows} rows")
    values = wide(logits)
    permutation = np.argsort(values, axis=-1, kind="stable")
    ordered = np.take_along_axis(values, permutation, axis=-1)
    if k is not None:
        counts = k.reshape(-1).astype(np.int64)
        active = (counts > 0) & (counts < vocab)
        threshold = ordered[np.arange(rows), np.clip(vocab - counts, 0, vocab - 1)]
        ordered = np.where(active[:, None] & (ordered < threshold[:, None]), -np.inf, ordered)
    if p is not None:
        with np.errstate(invalid="ignore", over="ignore"):
            shifted = np.exp(ordered - ordered.max(axis=-1, keepdims=True))
            probs = shifted / shifted.sum(axis=-1, keepdims=True)
        cumulative = np.cumsum(probs, axis=-1, dtype=np.float32)
        drop = cumulative <= (np.float32(1) - wide(p).reshape(-1, 1))
        drop[:, -1] = False
        ordered = np.where(drop, -np.inf, ordered)
    result = np.empty_like(ordered)
    np.put_along_axis(result, permutation, ordered, axis=-1)
    store(out, result)


FUNCTIONS: dict[str, Callable[..., None]] = {"Topk": topk, "ApplyTopKTopP": apply_top_k_top_p}
