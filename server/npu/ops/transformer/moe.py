"""MoE routing kernels (hicann/ops-transformer moe/): MoeGatingTopKSoftmax."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.numeric import store, wide

Array = np.ndarray


def moe_gating_top_k_softmax(
    x: Array, finishedOptional: Array | None, k: int, yOut: Array, expertIdxOut: Array, rowIdxOut: Array,
    workspace: Array | None,
) -> None:  # fmt: skip
    """yOut, expertIdxOut = topK(softmax(x, -1), k) (largest first, ties to the lower expert);
    rowIdxOut[i, j] = j · rows + i; rows whose finishedOptional is True get expertIdxOut = the expert count.

    Constraints (moe/moe_gating_top_k_softmax/docs/aclnnMoeGatingTopKSoftmax.md): x FLOAT16/BFLOAT16/FLOAT32,
    2-D or 3-D; finished BOOL of x's shape without the last axis; 0 ≤ k ≤ experts, k ≤ 1024; yOut x's dtype,
    expertIdxOut and rowIdxOut INT32, all x's shape with k as the last axis.
    """
    op = "MoeGatingTopKSoftmax"
    experts = x.shape[-1]
    if not 0 <= k <= min(experts, 1024):
        raise invalid(op, "k", f"is {k}; it must lie in [0, {min(experts, 1024)}]")
    logits = wide(x).reshape(-1, experts)
    rows = logits.shape[0]
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs = shifted / shifted.sum(axis=-1, keepdims=True)
    order = np.argsort(-probs, axis=-1, kind="stable")[:, :k]
    values = np.take_along_axis(probs, order, axis=-1)
    experts_of = order.astype(np.int32)
    if finishedOptional is not None:
        done = finishedOptional.reshape(-1).astype(bool)
        if done.size != rows:
            raise invalid(op, "finishedOptional", f"has {done.size} rows; x has {rows}")
        experts_of[done] = experts
    store(yOut, values.reshape(yOut.shape))
    expertIdxOut[...] = experts_of.reshape(expertIdxOut.shape)
    row_index = np.arange(k, dtype=np.int32)[None, :] * rows + np.arange(rows, dtype=np.int32)[:, None]
    rowIdxOut[...] = row_index.reshape(rowIdxOut.shape)


FUNCTIONS: dict[str, Callable[..., None]] = {"MoeGatingTopKSoftmax": moe_gating_top_k_softmax}
