"""The attention of one batch in float32: softmax(scale·QKᵀ + bias) V over the allowed (row, column) pairs.

Shapes: q [N, Sq, Dk], k [KV_N, Skv, Dk], v [KV_N, Skv, Dv]; query head n reads KV head n // (N / KV_N) (GQA:
consecutive query heads share a KV head). QKᵀ and PV are float32 matmuls (the cube unit accumulates in float32);
P stays float32 between them (the hardware rounds P to the input dtype first; vnpu is closer to exact there).

Masking follows CANN's convention: a True/1 in attenMask removes the pair. A row with no pair left (all masked,
or no key at all) gives an output of 0 and a log-sum-exp of +inf: the value CANN's softmaxLse documents for
invalid rows, and what its "row invalid" correction (innerPrecise 2/3) gives; vnpu always applies it.

`sparse` builds the structural part of the mask for sparseMode 0-4 (docs/context/sparse_mode参数说明.md of
hicann/ops-transformer), with i the query row and j the key column, both counted from 0 in the batch's valid
range, and Sq, Skv the batch's actual lengths:

- 0 defaultMask: with a mask, only preTokens/nextTokens around the top-left diagonal: i - pre <= j <= i + next;
  without a mask, everything (pre/next ignored).
- 1 allMask: the mask alone.
- 2 leftUpCausal: j <= i.
- 3 rightDownCausal: j <= i + (Skv - Sq).
- 4 band: around the bottom-right diagonal: i + (Skv - Sq) - pre <= j <= i + (Skv - Sq) + next.
Modes 2-4 take CANN's "optimized" 2048×2048 triangular mask, which only tells the hardware the shape above:
its contents are not read here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

FLOAT32: Final = np.dtype(np.float32)
CAUSAL_MODES: Final = frozenset({2, 3, 4})


@dataclass(frozen=True)
class Result:
    """One batch's attention: out [N, Sq, Dv], and per row the log-sum-exp, max and sum of exp (all float32)."""

    out: np.ndarray
    lse: np.ndarray
    row_max: np.ndarray
    row_sum: np.ndarray


def band(rows: int, cols: int, low: float, high: float) -> np.ndarray:
    """allowed[i, j] = (low <= j - i <= high), as a [rows, cols] bool array."""
    diagonal = np.arange(cols, dtype=np.int64)[None, :] - np.arange(rows, dtype=np.int64)[:, None]
    return (diagonal >= low) & (diagonal <= high)


def sparse(mode: int, pre: int, nxt: int, rows: int, cols: int, masked: bool) -> np.ndarray | None:
    """The pairs sparseMode `mode` allows for a batch of `rows` queries and `cols` keys ([rows, cols] bool), or
    None when it restricts nothing. `masked`: an attenMask is given (mode 0 applies pre/next only then)."""
    offset = cols - rows
    if mode == 0:
        return band(rows, cols, -pre, nxt) if masked else None
    if mode == 1:
        return None
    if mode == 2:
        return band(rows, cols, -np.inf, 0)
    if mode == 3:
        return band(rows, cols, -np.inf, offset)
    if mode == 4:
        return band(rows, cols, offset - pre, offset + nxt)
    raise ValueError(f"sparseMode {mode}")


FEW_ROWS: Final = 64
"""Up to this many query rows per KV head (a decode step's), the products are einsums: numpy's stacked matmul is
slow for a few rows (and leaves BLAS with a transposed operand), and einsum's single thread does not contend with
BLAS threads for the cores. Past it (prefill), BLAS matmuls."""


def _qk(grouped: np.ndarray, k: np.ndarray, few: bool) -> np.ndarray:
    """[G, M, D] @ [G, T, D]ᵀ -> [G, M, T]."""
    product: np.ndarray
    if few:
        product = np.einsum("gnd,gtd->gnt", grouped, k)
    else:
        product = np.matmul(grouped, np.ascontiguousarray(k.transpose(0, 2, 1)))
    return product


def attend(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    scale: float,
    allowed: np.ndarray | None = None,
    bias: np.ndarray | None = None,
    sink: np.ndarray | None = None,
) -> Result:
    """softmax(scale·QKᵀ + bias) V for one batch.

    allowed: bool, broadcastable to [N, Sq, Skv] (False removes the pair); bias: float32, broadcastable to
    [N, Sq, Skv], added after scaling; sink: [N] learnable sink logits, an extra softmax column per head whose
    value is dropped (it only enlarges the denominator; the log-sum-exp includes it).
    """
    heads, rows, depth = q.shape
    kv_heads, cols = k.shape[0], k.shape[1]
    group = heads // kv_heads
    dv = v.shape[2]
    if cols == 0 or rows == 0:
        empty = np.zeros((heads, rows), FLOAT32)
        inf = np.full((heads, rows), np.inf, FLOAT32)
        return Result(np.zeros((heads, rows, dv), FLOAT32), inf, np.full_like(inf, -np.inf), empty)
    # contiguous float32 operands: a strided one (a paged cache's gathered blocks) sends numpy's matmul off BLAS
    k, v = (np.ascontiguousarray(x, FLOAT32) for x in (k, v))
    with np.errstate(all="ignore"):
        grouped = np.ascontiguousarray(q, FLOAT32).reshape(kv_heads, group * rows, depth)
        few = group * rows <= FEW_ROWS
        scores = _qk(grouped, k, few).reshape(heads, rows, cols)
        scores *= np.float32(scale)
        if bias is not None:
            scores += bias
        if allowed is not None:
            scores = np.where(allowed, scores, np.float32(-np.inf))
        row_max = scores.max(axis=-1)
        sink_logits = None if sink is None else np.asarray(sink, FLOAT32)[:, None]
        if sink_logits is not None:
            row_max = np.maximum(row_max, sink_logits)
        finite = np.isfinite(row_max)
        shift = np.where(finite, row_max, np.float32(0))
        probs = np.exp(scores - shift[..., None])
        row_sum = probs.sum(axis=-1, dtype=FLOAT32)
        if sink_logits is not None:
            row_sum = row_sum + np.exp(sink_logits - shift)
        flat = probs.reshape(kv_heads, group * rows, cols)
        weighted = np.einsum("gnt,gtd->gnd", flat, v) if few else np.matmul(flat, v)
        weighted = weighted.reshape(heads, rows, dv)
        live = row_sum > 0
        out = np.where(live[..., None], weighted / np.where(live, row_sum, 1)[..., None], np.float32(0))
        lse = np.where(live, shift + np.log(np.where(live, row_sum, 1)), np.float32(np.inf))
    return Result(out.astype(FLOAT32), lse.astype(FLOAT32), row_max.astype(FLOAT32), row_sum.astype(FLOAT32))
