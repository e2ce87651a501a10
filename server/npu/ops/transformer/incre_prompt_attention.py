"""aclnnIncreFlashAttentionV4 (decode) and aclnnPromptFlashAttentionV3 (prefill): FusedInferAttentionScore's
two halves, run by the same driver (`infer_attention.run`).

IncreFlashAttentionV4 (hicann/ops-transformer attention/incre_flash_attention/op_host/op_api/
aclnn_incre_flash_attention_v4.h, docs/aclnnIncreFlashAttentionV4.md):
- query FLOAT16/BFLOAT16 with S = 1, layout BSH, BSND or BNSD; key/value tensor lists of FLOAT16/BFLOAT16/INT8
  (a list of B tensors of batch 1, shapes equal but S, is the non-contiguous case, B ≤ 256); attentionOut
  FLOAT16/BFLOAT16/INT8 of the query's shape.
- actualSeqLengths: the KEY/VALUE lengths (INT64, (B)), required with a paged cache.
- numHeads equals the query's N; numKeyValueHeads (0 = numHeads) divides it, ratio ≤ 64; B ≤ 65536, N ≤ 256,
  D ≤ 512.
- pseShift (B|1, N, 1, S) of the query's dtype; attenMask BOOL/INT8/UINT8 (B, S), (B, 1, S), (B, 1, 1, S).
- antiquantScale/antiquantOffset for INT8 KV: per-channel (2, N, 1, D), (2, N, D), (2, H) or per-tensor (2), the
  query's dtype (row 0 the key's, row 1 the value's): dequantized as (x + offset) · scale.
- quantScale2/quantOffset2 (FLOAT32, or BFLOAT16 with a BFLOAT16 query): per-tensor (1) or per-channel (N·D),
  required for an INT8 output; dequantScale1/quantScale1/dequantScale2 (full quantization) are not supported.
- blocktable INT32 (B, maxBlockNumPerSeq), blockSize non-zero, ≤ 512, 16-aligned (32 for INT8); caches
  (blockNum, blockSize, H) or, for BNSD, (blockNum, KV_N, blockSize, D).
- kvPaddingSize INT64: kv left padding (not with a paged cache). innerPrecise 0 (high precision) or 1.

PromptFlashAttentionV3 (attention/prompt_flash_attention/op_host/op_api/aclnn_prompt_flash_attention_v3.h,
docs/aclnnPromptFlashAttentionV3.md):
- query/key/value FLOAT16/BFLOAT16 (INT8 for full quantization, not supported), layouts BSH, BSND, BNSD,
  BNSD_BSND, TND; key and value single tensors; attentionOut of the query's shape (INT8 with quantScale2).
- actualSeqLengths/actualSeqLengthsKv INT64 host arrays (None: the tensors' S; TND: required, cumulative).
- sparseMode 0-4 with preTokens/nextTokens and attenMask as FusedInferAttentionScore's (TND: 0 without a mask
  or 3 with one, each batch's actualSeqLengths < actualSeqLengthsKv); innerPrecise 0-3.
- pseShift (B|1, N, S, KV_S) of the query's dtype.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from server.npu.ops.common.errors import invalid, unsupported
from server.npu.ops.transformer.attention_quant import dequant
from server.npu.ops.transformer.infer_attention import run
from server.npu.ops.transformer.infer_call import InferCall, Names

Array = np.ndarray
Ints = Sequence[int]
IFA_NAMES: Final = Names(
    pse="pseShift", mask="attenMask", kv_lengths="actualSeqLengths", block_table="blocktable",
    kv_padding="kvPaddingSize", quant_scale2="quantScale2",
)  # fmt: skip
PFA_NAMES: Final = Names(
    pse="pseShift", mask="attenMask", q_lengths="actualSeqLengths", kv_lengths="actualSeqLengthsKv",
    quant_scale2="quantScale2",
)  # fmt: skip


def _full_quant(op: str, given: dict[str, Array | None]) -> None:
    for name, tensor in given.items():
        if tensor is not None:
            raise unsupported(op, name, "full quantization")


def incre_flash_attention_v4(
    query: Array, key: list[Array], value: list[Array], pseShift: Array | None, attenMask: Array | None,
    actualSeqLengths: Ints | None, dequantScale1: Array | None, quantScale1: Array | None,
    dequantScale2: Array | None, quantScale2: Array | None, quantOffset2: Array | None,
    antiquantScale: Array | None, antiquantOffset: Array | None, blocktable: Array | None,
    kvPaddingSize: Array | None, numHeads: int, scaleValue: float, inputLayout: str, numKeyValueHeads: int,
    blockSize: int, innerPrecise: int, attentionOut: Array, workspace: Array | None,
) -> None:  # fmt: skip
    """attentionOut = softmax(scaleValue·qKᵀ + pseShift, masked) V for one query token per batch (see the module)."""
    op = "IncreFlashAttentionV4"
    _full_quant(op, {"dequantScale1": dequantScale1, "quantScale1": quantScale1, "dequantScale2": dequantScale2})
    seq_axis = 2 if inputLayout.startswith("BNSD") else 1
    if query.ndim >= 3 and query.shape[seq_axis] != 1:
        raise invalid(op, "query", f"shape {query.shape} ({inputLayout}) has S = {query.shape[seq_axis]}; it must be 1")
    if innerPrecise not in (0, 1):
        raise invalid(op, "innerPrecise", f"is {innerPrecise}; it must be 0 or 1")
    combined = (antiquantScale, antiquantOffset, 0)
    run(
        InferCall(
            op=op, query=query, key=key, value=value, out=attentionOut, num_heads=numHeads, scale=scaleValue,
            layout=inputLayout, kv_heads=numKeyValueHeads, names=IFA_NAMES, pse=pseShift, mask=attenMask,
            kv_lengths=actualSeqLengths, inner_precise=innerPrecise, block_table=blocktable, block_size=blockSize,
            kv_padding=kvPaddingSize, quant_scale2=quantScale2, quant_offset2=quantOffset2,
            key_dequant=dequant(op, "key", (None, None, 0), combined),
            value_dequant=dequant(op, "value", (None, None, 0), combined),
        )
    )  # fmt: skip


def prompt_flash_attention_v3(
    query: Array, key: Array, value: Array, pseShift: Array | None, attenMask: Array | None,
    actualSeqLengths: Ints | None, actualSeqLengthsKv: Ints | None, deqScale1: Array | None,
    quantScale1: Array | None, deqScale2: Array | None, quantScale2: Array | None, quantOffset2: Array | None,
    numHeads: int, scaleValue: float, preTokens: int, nextTokens: int, inputLayout: str, numKeyValueHeads: int,
    sparseMode: int, innerPrecise: int, attentionOut: Array, workspace: Array | None,
) -> None:  # fmt: skip
    """attentionOut = softmax(scaleValue·QKᵀ + pseShift, masked) V over whole prompts (see the module)."""
    op = "PromptFlashAttentionV3"
    _full_quant(op, {"deqScale1": deqScale1, "quantScale1": quantScale1, "deqScale2": deqScale2})
    run(
        InferCall(
            op=op, query=query, key=[key], value=[value], out=attentionOut, num_heads=numHeads, scale=scaleValue,
            layout=inputLayout, kv_heads=numKeyValueHeads, names=PFA_NAMES, pse=pseShift, mask=attenMask,
            q_lengths=actualSeqLengths, kv_lengths=actualSeqLengthsKv, pre_tokens=preTokens, next_tokens=nextTokens,
            sparse_mode=sparseMode, inner_precise=innerPrecise, quant_scale2=quantScale2, quant_offset2=quantOffset2,
        )
    )  # fmt: skip


FUNCTIONS: dict[str, Callable[..., None]] = {
    "IncreFlashAttentionV4": incre_flash_attention_v4,
    "PromptFlashAttentionV3": prompt_flash_attention_v3,
}
