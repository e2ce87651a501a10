"""aclnnFlashAttentionScore and V2 (forward): training-style attention with its softmax statistics.

Sources: hicann/ops-transformer attention/flash_attention_score/op_host/op_api/aclnn_flash_attention_score.h,
docs/aclnnFlashAttentionScore.md, docs/context/sparse_mode参数说明.md.

attentionOutOut = softmax(scale·(QKᵀ + pse), masked) V, with softmaxMaxOut/softmaxSumOut [B, N, Sq, 8] the row max of
the masked, scaled scores and the row sum of exp(score - max), each repeated over the last axis of 8 (the layout
the backward expects). V2's pseType: 1 (V1's behaviour, the default) adds pse before scaling, 0 after, 2/3
generate ALiBi pse from slopes in realShiftOptional ((N) or (B, N)): -slope·|i - j| or -slope·sqrt|i - j|, i and
j offset by qStartIdx/kvStartIdx. softmaxOutOut is reserved and left untouched.

Documented constraints (docs/aclnnFlashAttentionScore.md), for phase 1:
- query/key/value FLOAT16, BFLOAT16 or FLOAT32, one dtype, one inputLayout of BSH, SBH, BSND, BNSD; the same B;
  D: qD == kD and kD ≥ vD; key and value equal but D; N_q a multiple of N_kv (GQA/MQA), N_q in 1-256; B ≤ 2M,
  S ≤ 1M, D ≤ 768.
- realShiftOptional (pse): the query's dtype, [B, N, S, S], [B, N, 1, Skv] or [1, N, S, S].
- attenMaskOptional BOOL/UINT8 (1 = masked out): [B, N, S, S], [B, 1, S, S], [1, 1, S, S] or [S, S]; with no
  mask, sparseMode, preTokens and nextTokens have no effect (everything is computed).
- sparseMode 0-6 (vnpu implements 0-4: 5/6 prefix modes need prefixOptional and are refused); modes 1, 2, 3
  ignore preTokens/nextTokens; band modes need pre and next to overlap.
- keepProb in (0, 1]; dropMaskOptional UINT8 (vnpu implements keepProb = 1 only: no dropout).
- softmaxMaxOut/softmaxSumOut FLOAT [B, N, Sq, 8]; attentionOutOut the query's dtype and shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from server.npu.ops.common.errors import invalid, unsupported
from server.npu.ops.transformer import attention_layout as lay
from server.npu.ops.transformer.attention_core import attend, sparse

Array = np.ndarray
Ints = Sequence[int]
LAYOUTS = frozenset({"BSH", "SBH", "BSND", "BNSD"})


def _view4(op: str, name: str, x: Array, layout: str, heads: int | None, depth: int) -> Array:
    """[B, N, S, D]; for BSH/SBH the heads come from H / D when `heads` is None."""
    if layout in ("BSH", "SBH") and heads is None:
        if x.ndim != 3 or x.shape[2] % depth:
            raise invalid(op, name, f"shape {x.shape}: H is not a multiple of D = {depth}")
        heads = x.shape[2] // depth
    return lay.to_bnsd(op, name, x, layout, heads or 0)


def _plane(op: str, name: str, tensor: Array, b: int) -> Array:
    plane: Array
    if tensor.ndim == 2:
        plane = tensor[None]
    elif tensor.ndim == 4:
        plane = tensor[b if tensor.shape[0] > 1 else 0]
    else:
        raise invalid(op, name, f"shape {tensor.shape} is not 2-D or 4-D")
    return plane


def _flash(
    op: str, query: Array, key: Array, value: Array, pse: Array | None, mask: Array | None, scale: float,
    keep_prob: float, pre: int, nxt: int, heads: int, layout_text: str, mode: int, pse_type: int,
    starts: tuple[int, int], outs: tuple[Array, Array, Array],
) -> None:  # fmt: skip
    layout = lay.parse(op, layout_text, LAYOUTS)
    if layout.out != layout.inp:
        raise invalid(op, "inputLayout", f"{layout_text!r}: FlashAttentionScore writes its input layout")
    if keep_prob != 1.0:
        raise unsupported(op, "keepProb", f"dropout (keepProb {keep_prob}; vnpu implements 1 only)")
    if mode not in range(5):
        raise unsupported(op, "sparseMode", f"sparseMode {mode} (vnpu implements 0-4)")
    if heads <= 0:
        raise invalid(op, "headNum", f"is {heads}; it must be positive")
    q = lay.to_bnsd(op, "query", query, layout.inp, heads)
    if q.shape[1] != heads:
        raise invalid(op, "headNum", f"is {heads}; query has {q.shape[1]} heads")
    k = _view4(op, "key", key, layout.inp, None, q.shape[3])
    v = _view4(op, "value", value, layout.inp, k.shape[1], 0)
    if k.shape[0] != q.shape[0] or v.shape[:3] != k.shape[:3] or heads % k.shape[1]:
        raise invalid(op, "key", f"shapes {key.shape}/{value.shape} do not fit the query {query.shape} ({layout.inp})")
    maximum, total, attention = outs
    batches, _, rows, _ = q.shape
    cols = k.shape[2]
    result = np.zeros((batches, heads, rows, v.shape[3]), np.float32)
    stats = np.zeros((2, batches, heads, rows), np.float32)
    for b in range(batches):
        allowed = None
        if mask is not None:
            shape = sparse(mode, pre, nxt, rows, cols, True)
            allowed = None if shape is None else shape[None]
            if mode in (0, 1):
                plane = _plane(op, "attenMaskOptional", mask, b)
                if plane.shape[-2] < rows or plane.shape[-1] < cols:
                    raise invalid(op, "attenMaskOptional", f"shape {mask.shape} is smaller than [{rows}, {cols}]")
                kept = ~plane[:, :rows, :cols].astype(bool)
                allowed = kept if allowed is None else allowed & kept
        bias = _bias(op, pse, b, rows, cols, pse_type, scale, starts)
        r = attend(q[b], k[b], v[b], scale, allowed, bias)
        result[b], stats[0, b], stats[1, b] = r.out, r.row_max, r.row_sum
    final = lay.from_bnsd(result, layout.out)
    if final.shape != attention.shape:
        raise invalid(op, "attentionOutOut", f"has shape {attention.shape}; the result is {final.shape}")
    np.copyto(attention, final, casting="unsafe")
    for name, out, values in (("softmaxMaxOut", maximum, stats[0]), ("softmaxSumOut", total, stats[1])):
        if out.shape != (batches, heads, rows, 8):
            raise invalid(op, name, f"has shape {out.shape}; it must be {(batches, heads, rows, 8)}")
        np.copyto(out, np.repeat(values[..., None], 8, axis=-1), casting="unsafe")


def _bias(
    op: str, pse: Array | None, b: int, rows: int, cols: int, pse_type: int, scale: float, starts: tuple[int, int]
) -> Array | None:
    if pse is None:
        return None
    if pse_type in (2, 3):
        slopes = pse.astype(np.float32)
        slopes = (slopes[b] if slopes.ndim == 2 else slopes).reshape(-1, 1, 1)
        distance = np.abs((starts[0] + np.arange(rows))[:, None] - (starts[1] + np.arange(cols))[None, :])
        shaped = distance.astype(np.float32) if pse_type == 2 else np.sqrt(distance.astype(np.float32))
        alibi: Array = -slopes * shaped
        return alibi
    if pse.ndim != 4:
        raise invalid(op, "realShiftOptional", f"shape {pse.shape} is not 4-D")
    plane = pse[b if pse.shape[0] > 1 else 0]
    if plane.shape[-1] < cols or (plane.shape[-2] != 1 and plane.shape[-2] < rows):
        raise invalid(op, "realShiftOptional", f"shape {pse.shape} is smaller than [{rows}, {cols}]")
    part: Array = plane[:, :rows, :cols].astype(np.float32)
    return part * np.float32(scale) if pse_type == 1 else part


def flash_attention_score(
    query: Array, key: Array, value: Array, realShiftOptional: Array | None, dropMaskOptional: Array | None,
    paddingMaskOptional: Array | None, attenMaskOptional: Array | None, prefixOptional: Ints | None,
    scaleValue: float, keepProb: float, preTokens: int, nextTokens: int, headNum: int, inputLayout: str,
    innerPrecise: int, sparseMode: int, softmaxMaxOut: Array, softmaxSumOut: Array, softmaxOutOut: Array | None,
    attentionOutOut: Array, workspace: Array | None,
) -> None:  # fmt: skip
    """attentionOutOut = softmax(scaleValue·(QKᵀ + pse), masked) V with its row max and sum (see the module)."""
    _flash(
        "FlashAttentionScore", query, key, value, realShiftOptional, attenMaskOptional, scaleValue, keepProb,
        preTokens, nextTokens, headNum, inputLayout, sparseMode, 1, (0, 0),
        (softmaxMaxOut, softmaxSumOut, attentionOutOut),
    )  # fmt: skip


def flash_attention_score_v2(
    query: Array, key: Array, value: Array, realShiftOptional: Array | None, dropMaskOptional: Array | None,
    paddingMaskOptional: Array | None, attenMaskOptional: Array | None, prefixOptional: Ints | None,
    qStartIdxOptional: Ints | None, kvStartIdxOptional: Ints | None, scaleValue: float, keepProb: float,
    preTokens: int, nextTokens: int, headNum: int, inputLayout: str, innerPrecise: int, sparseMode: int,
    pseType: int, softmaxMaxOut: Array, softmaxSumOut: Array, softmaxOutOut: Array | None, attentionOutOut: Array,
    workspace: Array | None,
) -> None:  # fmt: skip
    """FlashAttentionScore with pseType (0: pse after scaling, 1: before, 2/3: ALiBi) (see the module)."""
    if pseType not in (0, 1, 2, 3):
        raise invalid("FlashAttentionScoreV2", "pseType", f"is {pseType}; it must be 0, 1, 2 or 3")
    starts = (
        0 if not qStartIdxOptional else int(qStartIdxOptional[0]),
        0 if not kvStartIdxOptional else int(kvStartIdxOptional[0]),
    )
    _flash(
        "FlashAttentionScoreV2", query, key, value, realShiftOptional, attenMaskOptional, scaleValue, keepProb,
        preTokens, nextTokens, headNum, inputLayout, sparseMode, pseType, starts,
        (softmaxMaxOut, softmaxSumOut, attentionOutOut),
    )  # fmt: skip


FUNCTIONS: dict[str, Callable[..., None]] = {
    "FlashAttentionScore": flash_attention_score,
    "FlashAttentionScoreV2": flash_attention_score_v2,
}
