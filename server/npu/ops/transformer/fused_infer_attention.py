"""aclnnFusedInferAttentionScore V1-V5: decode and prefill attention in one operator (`infer_attention.run`).

Sources: hicann/ops-transformer attention/fused_infer_attention_score/op_host/op_api/
aclnn_fused_infer_attention_score*.h (V1-V4) and op_api/aclnn_fused_infer_attention_score_v5.cpp (V5, a newer
tree), docs/aclnnFusedInferAttentionScoreV4.md and V5.md.
The versions share one kernel; each adds arguments: V2 separate key/value antiquant and shared prefixes, V3 MLA
rope, V4 dequantScaleQuery, learnableSink and queryQuantMode, V5 qStartIdx/kvStartIdx and pseType.

Documented constraints (docs/aclnnFusedInferAttentionScoreV4.md, V5.md), for phase 1:
- query FLOAT16/BFLOAT16 (INT8 only for full quantization); key/value lists of FLOAT16/BFLOAT16/INT8/INT4(INT32),
  key and value tensors of identical shape; attentionOut FLOAT16/BFLOAT16/INT8 (INT8 needs quantScale2), the
  query's shape with value's D; softmaxLse FLOAT32 [B, N, Q_S, 1] or [T, N, 1] (TND/NTD).
- inputLayout BSH, BSND, BNSD, TND, NTD and BNSD_BSND, BSND_BNSD, BSH_BNSD, BNSD_NBSD, BSND_NBSD, BSH_NBSD,
  NTD_TND, TND_NTD; numHeads equals the query's N; numKeyValueHeads (0 = numHeads) divides numHeads (ratio ≤ 64
  in V4) and equals the key's N in BSND/BNSD; B ≤ 65536, N ≤ 256, D ≤ 512.
- actualSeqLengths/actualSeqLengthsKv: INT64 host arrays, non-negative, length 1 or ≥ B (first B used), at most
  the tensors' S; for TND/NTD required and cumulative (non-decreasing, last = T). Paged KV requires
  actualSeqLengthsKv (per-batch lengths, not cumulative).
- attenMask BOOL/INT8/UINT8 (1 = masked out): sparseMode 0/1 shape (Q_S, KV_S), (B|1, Q_S, KV_S),
  (B|1, 1, Q_S, KV_S); for Q_S = 1 (B, KV_S), (B, 1, KV_S), (B, 1, 1, KV_S); sparseMode 2/3/4 require the
  2048×2048 optimized mask ((2048, 2048), (1, 2048, 2048) or (1, 1, 2048, 2048)). sparseMode 0-4; with Q_S = 1
  and no rope it is ignored. preTokens + nextTokens ≥ 0 for modes 0 and 4.
- paged attention: blockTable INT32 [B, ≥ maxBlockNumPerSeq], blockSize > 0 (≤ 512 in V4; 16-aligned for
  fp16/bf16, 32 for int8); cache layouts BnBsH, BnNBsD (and NZ in V5); not with tensor lists, left padding or
  shared prefixes; an attenMask/pseShift then needs ≥ maxBlockNumPerSeq·blockSize columns.
- pseShift FLOAT16/BFLOAT16 (B|1, Q_N, Q_S|1, ≥ KV_S); pseType (V5) 0, 2 or 3 (2/3: pseShift FLOAT32 (Q_N)
  ALiBi slopes, Q_S = KV_S). learnableSink (V4/V5): (Q_N), the query's dtype, innerPrecise 0.
- innerPrecise 0-3 (2/3 enable the invalid-row correction; Q_S = 1 only 0/1).
- queryPaddingSize/kvPaddingSize INT64 (left padding): need actualSeqLengths(Kv), not with paged KV.
- keySharedPrefix/valueSharedPrefix: batch 1, same N/D (H) and dtype as key/value, actualSharedPrefixLen (1) ≤ S.
- queryRope/keyRope: D = 64, otherwise the query's/key's shape, both or neither.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from server.npu.ops.transformer.attention_quant import dequant
from server.npu.ops.transformer.infer_attention import run
from server.npu.ops.transformer.infer_call import InferCall, Names

Array = np.ndarray
Ints = Sequence[int]
V1_NAMES: Final = Names(
    pse="pseShift",
    mask="attenMask",
    q_lengths="actualSeqLengths",
    kv_lengths="actualSeqLengthsKv",
    block_table="blockTable",
    query_padding="queryPaddingSize",
    kv_padding="kvPaddingSize",
    quant_scale2="quantScale2",
)
FULL_QUANT_ROLES: Final = ("deqScale1", "quantScale1", "deqScale2", "dequantScaleQuery")


def _fused(op: str, names: Names, a: dict[str, Any]) -> None:
    """Run FusedInferAttentionScore `op` from its arguments `a`, keyed by role (see the wrappers)."""
    suffix = "" if names is V1_NAMES else "Optional"
    full = tuple(f"{role}{suffix}" for role in FULL_QUANT_ROLES if a.get(role) is not None)
    key_mode, value_mode = a.get("keyAntiquantMode", 0), a.get("valueAntiquantMode", 0)
    combined = (a.get("antiquantScale"), a.get("antiquantOffset"), a.get("antiquantMode", 0))
    call = InferCall(
        op=op,
        query=a["query"],
        key=a["key"],
        value=a["value"],
        out=a["attentionOut"],
        num_heads=a["numHeads"],
        scale=a["scaleValue"],
        layout=a["inputLayout"],
        kv_heads=a["numKeyValueHeads"],
        names=names,
        pse=a.get("pseShift"),
        mask=a.get("attenMask"),
        q_lengths=a.get("actualSeqLengths"),
        kv_lengths=a.get("actualSeqLengthsKv"),
        pre_tokens=a["preTokens"],
        next_tokens=a["nextTokens"],
        sparse_mode=a["sparseMode"],
        inner_precise=a["innerPrecise"],
        block_table=a.get("blockTable"),
        block_size=a["blockSize"],
        query_padding=a.get("queryPaddingSize"),
        kv_padding=a.get("kvPaddingSize"),
        key_prefix=a.get("keySharedPrefix"),
        value_prefix=a.get("valueSharedPrefix"),
        prefix_length=a.get("actualSharedPrefixLen"),
        query_rope=a.get("queryRope"),
        key_rope=a.get("keyRope"),
        sink=a.get("learnableSink"),
        pse_type=a.get("pseType", 0),
        q_start=a.get("qStartIdx"),
        kv_start=a.get("kvStartIdx"),
        lse_flag=a["softmaxLseFlag"],
        lse=a.get("softmaxLse"),
        quant_scale2=a.get("quantScale2"),
        quant_offset2=a.get("quantOffset2"),
        key_dequant=dequant(op, "key", (a.get("keyAntiquantScale"), a.get("keyAntiquantOffset"), key_mode), combined),
        value_dequant=dequant(
            op, "value", (a.get("valueAntiquantScale"), a.get("valueAntiquantOffset"), value_mode), combined
        ),
        full_quant=full,
    )
    run(call)


def _roles(arguments: dict[str, Any]) -> dict[str, Any]:
    """The wrappers' C-named arguments keyed by role: the C name without its "Optional" suffix."""
    return {name.removesuffix("Optional"): value for name, value in arguments.items()}


def fused_infer_attention_score(
    query: Array, key: list[Array], value: list[Array], pseShift: Array | None, attenMask: Array | None,
    actualSeqLengths: Ints | None, actualSeqLengthsKv: Ints | None, deqScale1: Array | None,
    quantScale1: Array | None, deqScale2: Array | None, quantScale2: Array | None, quantOffset2: Array | None,
    antiquantScale: Array | None, antiquantOffset: Array | None, blockTable: Array | None,
    queryPaddingSize: Array | None, kvPaddingSize: Array | None, numHeads: int, scaleValue: float, preTokens: int,
    nextTokens: int, inputLayout: str, numKeyValueHeads: int, sparseMode: int, innerPrecise: int, blockSize: int,
    antiquantMode: int, softmaxLseFlag: bool, attentionOut: Array, softmaxLse: Array | None,
    workspace: Array | None,
) -> None:  # fmt: skip
    """attentionOut = softmax(scaleValue·QKᵀ + pseShift, masked) V (FusedInferAttentionScore V1; see the module)."""
    arguments = dict(locals())
    arguments.pop("workspace")
    _fused("FusedInferAttentionScore", V1_NAMES, arguments)


def fused_infer_attention_score_v2(
    query: Array, key: list[Array], value: list[Array], pseShiftOptional: Array | None,
    attenMaskOptional: Array | None, actualSeqLengthsOptional: Ints | None, actualSeqLengthsKvOptional: Ints | None,
    deqScale1Optional: Array | None, quantScale1Optional: Array | None, deqScale2Optional: Array | None,
    quantScale2Optional: Array | None, quantOffset2Optional: Array | None, antiquantScaleOptional: Array | None,
    antiquantOffsetOptional: Array | None, blockTableOptional: Array | None, queryPaddingSizeOptional: Array | None,
    kvPaddingSizeOptional: Array | None, keyAntiquantScaleOptional: Array | None,
    keyAntiquantOffsetOptional: Array | None, valueAntiquantScaleOptional: Array | None,
    valueAntiquantOffsetOptional: Array | None, keySharedPrefixOptional: Array | None,
    valueSharedPrefixOptional: Array | None, actualSharedPrefixLenOptional: Ints | None, numHeads: int,
    scaleValue: float, preTokens: int, nextTokens: int, inputLayout: str, numKeyValueHeads: int, sparseMode: int,
    innerPrecise: int, blockSize: int, antiquantMode: int, softmaxLseFlag: bool, keyAntiquantMode: int,
    valueAntiquantMode: int, attentionOut: Array, softmaxLse: Array | None, workspace: Array | None,
) -> None:  # fmt: skip
    """attentionOut = softmax(scaleValue·QKᵀ + pseShift, masked) V (FusedInferAttentionScore V2; see the module)."""
    arguments = dict(locals())
    arguments.pop("workspace")
    _fused("FusedInferAttentionScoreV2", Names(), _roles(arguments))


def fused_infer_attention_score_v3(
    query: Array, key: list[Array], value: list[Array], pseShiftOptional: Array | None,
    attenMaskOptional: Array | None, actualSeqLengthsOptional: Ints | None, actualSeqLengthsKvOptional: Ints | None,
    deqScale1Optional: Array | None, quantScale1Optional: Array | None, deqScale2Optional: Array | None,
    quantScale2Optional: Array | None, quantOffset2Optional: Array | None, antiquantScaleOptional: Array | None,
    antiquantOffsetOptional: Array | None, blockTableOptional: Array | None, queryPaddingSizeOptional: Array | None,
    kvPaddingSizeOptional: Array | None, keyAntiquantScaleOptional: Array | None,
    keyAntiquantOffsetOptional: Array | None, valueAntiquantScaleOptional: Array | None,
    valueAntiquantOffsetOptional: Array | None, keySharedPrefixOptional: Array | None,
    valueSharedPrefixOptional: Array | None, actualSharedPrefixLenOptional: Ints | None,
    queryRopeOptional: Array | None, keyRopeOptional: Array | None, keyRopeAntiquantScaleOptional: Array | None,
    numHeads: int, scaleValue: float, preTokens: int, nextTokens: int, inputLayout: str, numKeyValueHeads: int,
    sparseMode: int, innerPrecise: int, blockSize: int, antiquantMode: int, softmaxLseFlag: bool,
    keyAntiquantMode: int, valueAntiquantMode: int, attentionOut: Array, softmaxLse: Array | None,
    workspace: Array | None,
) -> None:  # fmt: skip
    """attentionOut = softmax(scaleValue·QKᵀ + pseShift, masked) V (FusedInferAttentionScore V3; see the module)."""
    arguments = dict(locals())
    arguments.pop("workspace")
    _fused("FusedInferAttentionScoreV3", Names(), _roles(arguments))


def fused_infer_attention_score_v4(
    query: Array, key: list[Array], value: list[Array], pseShiftOptional: Array | None,
    attenMaskOptional: Array | None, actualSeqLengthsOptional: Ints | None, actualSeqLengthsKvOptional: Ints | None,
    deqScale1Optional: Array | None, quantScale1Optional: Array | None, deqScale2Optional: Array | None,
    quantScale2Optional: Array | None, quantOffset2Optional: Array | None, antiquantScaleOptional: Array | None,
    antiquantOffsetOptional: Array | None, blockTableOptional: Array | None, queryPaddingSizeOptional: Array | None,
    kvPaddingSizeOptional: Array | None, keyAntiquantScaleOptional: Array | None,
    keyAntiquantOffsetOptional: Array | None, valueAntiquantScaleOptional: Array | None,
    valueAntiquantOffsetOptional: Array | None, keySharedPrefixOptional: Array | None,
    valueSharedPrefixOptional: Array | None, actualSharedPrefixLenOptional: Ints | None,
    queryRopeOptional: Array | None, keyRopeOptional: Array | None, keyRopeAntiquantScaleOptional: Array | None,
    dequantScaleQueryOptional: Array | None, learnableSinkOptional: Array | None, numHeads: int, scaleValue: float,
    preTokens: int, nextTokens: int, inputLayout: str, numKeyValueHeads: int, sparseMode: int, innerPrecise: int,
    blockSize: int, antiquantMode: int, softmaxLseFlag: bool, keyAntiquantMode: int, valueAntiquantMode: int,
    queryQuantMode: int, attentionOut: Array, softmaxLse: Array | None, workspace: Array | None,
) -> None:  # fmt: skip
    """attentionOut = softmax(scaleValue·QKᵀ + pseShift, masked) V (FusedInferAttentionScore V4; see the module)."""
    arguments = dict(locals())
    arguments.pop("workspace")
    _fused("FusedInferAttentionScoreV4", Names(), _roles(arguments))


def fused_infer_attention_score_v5(
    query: Array, key: list[Array], value: list[Array], pseShiftOptional: Array | None,
    attenMaskOptional: Array | None, actualSeqLengthsOptional: Ints | None, actualSeqLengthsKvOptional: Ints | None,
    deqScale1Optional: Array | None, quantScale1Optional: Array | None, deqScale2Optional: Array | None,
    quantScale2Optional: Array | None, quantOffset2Optional: Array | None, antiquantScaleOptional: Array | None,
    antiquantOffsetOptional: Array | None, blockTableOptional: Array | None, queryPaddingSizeOptional: Array | None,
    kvPaddingSizeOptional: Array | None, keyAntiquantScaleOptional: Array | None,
    keyAntiquantOffsetOptional: Array | None, valueAntiquantScaleOptional: Array | None,
    valueAntiquantOffsetOptional: Array | None, keySharedPrefixOptional: Array | None,
    valueSharedPrefixOptional: Array | None, actualSharedPrefixLenOptional: Ints | None,
    queryRopeOptional: Array | None, keyRopeOptional: Array | None, keyRopeAntiquantScaleOptional: Array | None,
    dequantScaleQueryOptional: Array | None, learnableSinkOptional: Array | None, qStartIdxOptional: Ints | None,
    kvStartIdxOptional: Ints | None, numHeads: int, scaleValue: float, preTokens: int, nextTokens: int,
    inputLayout: str, numKeyValueHeads: int, sparseMode: int, innerPrecise: int, blockSize: int, antiquantMode: int,
    softmaxLseFlag: bool, keyAntiquantMode: int, valueAntiquantMode: int, queryQuantMode: int, pseType: int,
    attentionOut: Array, softmaxLse: Array | None, workspace: Array | None,
) -> None:  # fmt: skip
    """attentionOut = softmax(scaleValue·QKᵀ + pse, masked) V (FusedInferAttentionScore V5; see the module)."""
    arguments = dict(locals())
    arguments.pop("workspace")
    _fused("FusedInferAttentionScoreV5", Names(), _roles(arguments))


FUNCTIONS: dict[str, Callable[..., None]] = {
    "FusedInferAttentionScore": fused_infer_attention_score,
    "FusedInferAttentionScoreV2": fused_infer_attention_score_v2,
    "FusedInferAttentionScoreV3": fused_infer_attention_score_v3,
    "FusedInferAttentionScoreV4": fused_infer_attention_score_v4,
}
# fused_infer_attention_score_v5 waits for the catalog: the stored ops-transformer snapshot has no V5 header, so
# aclnnFusedInferAttentionScoreV5 is not declared (proto/aclnn/catalog) and its kernel is not wired.
