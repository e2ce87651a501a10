"""A float64 attention reference for the attention kernel tests, written from the operator docs directly.

It works on one (batch, query head) at a time with explicit loops over the mask rules, so it shares nothing
with the kernels' vectorised code: scores = scale·q·kᵀ (+ bias), pairs removed where not allowed, softmax (with an
optional sink column), times v. A row with no pair left gives 0 and a log-sum-exp of +inf.
"""

from __future__ import annotations

import numpy as np

BIG = 1 << 40


def allowed(mode: int, pre: int, nxt: int, sq: int, skv: int, mask: np.ndarray | None) -> np.ndarray:
    """[sq, skv] True where the pair is computed; `mask` (True = masked out) is read for modes 0 and 1 only."""
    out = np.zeros((sq, skv), bool)
    for i in range(sq):
        for j in range(skv):
            if mode == 0:
                ok = True if mask is None else (i - pre <= j <= i + nxt) and not mask[i, j]
            elif mode == 1:
                assert mask is not None
                ok = not mask[i, j]
            elif mode == 2:
                ok = j <= i
            elif mode == 3:
                ok = j <= i + skv - sq
            elif mode == 4:
                ok = i + skv - sq - pre <= j <= i + skv - sq + nxt
            else:
                raise ValueError(mode)
            out[i, j] = ok
    return out


def attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    scale: float,
    keep: np.ndarray | None = None,
    bias: np.ndarray | None = None,
    sink: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """q [sq, d], k [skv, d], v [skv, dv] -> (out [sq, dv], lse [sq]) in float64."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    sq, skv = q.shape[0], k.shape[0]
    out = np.zeros((sq, v.shape[1]))
    lse = np.full(sq, np.inf)
    for i in range(sq):
        columns = [j for j in range(skv) if keep is None or keep[i, j]]
        logits = [scale * float(q[i] @ k[j]) + (0.0 if bias is None else float(bias[i, j])) for j in columns]
        if sink is not None:
            logits.append(float(sink))
        if not logits:
            continue
        top = max(logits)
        weights = np.exp(np.array(logits) - top)
        total = weights.sum()
        lse[i] = top + np.log(total)
        for weight, j in zip(weights, columns, strict=False):
            out[i] += weight / total * v[j]
    return out, lse


def paged(cache: np.ndarray, table_row: np.ndarray, length: int, kv_heads: int) -> np.ndarray:
    """Tokens 0..length-1 of one sequence from a BnBsH cache, as [length, kv_heads, d] (loops over tokens)."""
    block_size = cache.shape[1]
    rows = [cache[table_row[t // block_size], t % block_size] for t in range(length)]
    return np.array(rows, np.float64).reshape(length, kv_heads, cache.shape[2] // kv_heads)
