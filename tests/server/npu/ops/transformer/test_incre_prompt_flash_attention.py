"""IncreFlashAttentionV4, PromptFlashAttentionV3 and FlashAttentionScore(V2) against the float64 reference."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from attention_reference import allowed, attention, paged

from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops.transformer import flash_attention_score as fas
from server.npu.ops.transformer import incre_prompt_attention as ipa
from tests.server.npu.ops.common.refkit import assert_rounded, call_with

INT_MAX = 2147483647
SEED = 11


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float16) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def test_ifa_paged_decode_with_mask_and_names() -> None:
    rng = np.random.default_rng(SEED)
    blocks, bs, heads, kv_heads, d = 9, 16, 4, 2, 16
    kc, vc = rand(rng, (blocks, bs, kv_heads * d)), rand(rng, (blocks, bs, kv_heads * d))
    table = rng.permutation(blocks)[:8].reshape(2, 4).astype(np.int32)
    q = rand(rng, (2, 1, heads * d))  # BSH
    mask = rng.random((2, 64)) < 0.3
    out = np.zeros_like(q)
    given = dict(
        query=q, key=[kc], value=[vc], attenMask=mask, actualSeqLengths=[21, 50], blocktable=table, numHeads=heads,
        scaleValue=0.3, inputLayout="BSH", numKeyValueHeads=kv_heads, blockSize=bs, innerPrecise=1, attentionOut=out,
    )  # fmt: skip
    call_with(ipa.incre_flash_attention_v4, **given)
    for b, length in enumerate([21, 50]):
        keys, values = paged(kc, table[b], length, kv_heads), paged(vc, table[b], length, kv_heads)
        for n in range(heads):
            o, _ = attention(
                q[b, :, n * d : (n + 1) * d], keys[:, n // 2], values[:, n // 2], 0.3, ~mask[b : b + 1, :length]
            )
            assert_rounded(out[b, 0, n * d : (n + 1) * d], o[0], atol=2e-5)
    bad_table = table.copy()
    bad_table[1, 0] = blocks
    changes = (
        ("actualSeqLengths", {"actualSeqLengths": [21, 70]}),  # 5 blocks of 16; the table holds 4 per batch
        ("actualSeqLengths", {"actualSeqLengths": None}),
        ("blocktable", {"blocktable": bad_table}),
    )
    for name, change in changes:
        with pytest.raises(AclError) as caught:
            call_with(ipa.incre_flash_attention_v4, **{**given, **change})
        assert caught.value.code == ACLNN_ERR_PARAM_INVALID and caught.value.message.startswith(f"{name}:")
        assert caught.value.api == "aclnnIncreFlashAttentionV4"
    with pytest.raises(AclError) as caught:
        call_with(ipa.incre_flash_attention_v4, **{**given, "query": rand(rng, (2, 2, heads * d))})
    assert caught.value.message.startswith("query:")


def test_ifa_int8_kv_combined_per_tensor_scale() -> None:
    rng = np.random.default_rng(SEED + 1)
    q = rand(rng, (1, 2, 1, 16), ml_dtypes.bfloat16)
    k8, v8 = (rng.integers(-128, 128, (1, 2, 5, 16)).astype(np.int8) for _ in range(2))
    scale, offset = np.array([0.01, 0.02], ml_dtypes.bfloat16), np.array([1.0, -2.0], ml_dtypes.bfloat16)
    out = np.zeros_like(q)
    call_with(
        ipa.incre_flash_attention_v4, query=q, key=[k8], value=[v8], antiquantScale=scale, antiquantOffset=offset,
        numHeads=2, scaleValue=0.25, inputLayout="BNSD", numKeyValueHeads=0, blockSize=0, innerPrecise=0,
        attentionOut=out,
    )  # fmt: skip
    s, o = scale.astype(np.float64), offset.astype(np.float64)
    for n in range(2):
        ref = attention(q[0, n], (k8[0, n] + o[0]) * s[0], (v8[0, n] + o[1]) * s[1], 0.25)[0]
        assert_rounded(out[0, n], ref, atol=1e-4)


@pytest.mark.parametrize(("mode", "pre", "nxt"), [(0, 2, 0), (2, 0, 0), (3, 0, 0), (4, 3, 1)])
def test_pfa_bsh_gqa_sparse(mode: int, pre: int, nxt: int) -> None:
    rng = np.random.default_rng(SEED + 2)
    b, sq, skv, heads, kv_heads, d = 2, 5, 8, 4, 1, 16
    q, k, v = rand(rng, (b, sq, heads * d)), rand(rng, (b, skv, kv_heads * d)), rand(rng, (b, skv, kv_heads * d))
    mask = rng.random((sq, skv)) < 0.2 if mode == 0 else np.triu(np.ones((2048, 2048), np.uint8), 1)
    out = np.zeros_like(q)
    call_with(
        ipa.prompt_flash_attention_v3, query=q, key=k, value=v, attenMask=mask, actualSeqLengths=[5, 3],
        actualSeqLengthsKv=[8, 6], numHeads=heads, scaleValue=0.2, preTokens=pre, nextTokens=nxt, inputLayout="BSH",
        numKeyValueHeads=kv_heads, sparseMode=mode, innerPrecise=2, attentionOut=out,
    )  # fmt: skip
    for batch, (rows, cols) in enumerate([(5, 8), (3, 6)]):
        keep = allowed(mode, pre, nxt, rows, cols, mask[:rows, :cols] if mode == 0 else None)
        for n in range(heads):
            part = slice(n * d, (n + 1) * d)
            o, _ = attention(q[batch, :rows, part], k[batch, :cols], v[batch, :cols], 0.2, keep)
            assert_rounded(out[batch, :rows, part], o, atol=2e-5)
    assert (out[1, 3:] == 0).all()


def fas_call(kernel: Any, **given: Any) -> None:
    base = dict(scaleValue=0.25, keepProb=1.0, preTokens=INT_MAX, nextTokens=INT_MAX, innerPrecise=0, sparseMode=0)
    base.update(given)
    call_with(kernel, **base)


@pytest.mark.parametrize("layout", ["BSH", "SBH", "BSND", "BNSD"])
@pytest.mark.parametrize(("mode", "pre", "nxt"), [(0, 1, 2), (1, 0, 0), (3, 0, 0), (4, 2, 0)])
def test_flash_attention_score_forward(layout: str, mode: int, pre: int, nxt: int) -> None:
    rng = np.random.default_rng(SEED + 3)
    b, heads, kv_heads, sq, skv, d, dv = 2, 4, 2, 5, 7, 16, 8
    q4, k4, v4 = rand(rng, (b, heads, sq, d)), rand(rng, (b, kv_heads, skv, d)), rand(rng, (b, kv_heads, skv, dv))
    pse = rand(rng, (b, heads, sq, skv))
    mask = rng.random((b, 1, sq, skv)) < 0.25 if mode in (0, 1) else np.triu(np.ones((2048, 2048), bool), 1)
    forms = {
        "BNSD": lambda x: x, "BSND": lambda x: x.transpose(0, 2, 1, 3),
        "BSH": lambda x: x.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], -1),
        "SBH": lambda x: x.transpose(2, 0, 1, 3).reshape(x.shape[2], x.shape[0], -1),
    }  # fmt: skip
    out = np.zeros(forms[layout](np.zeros((b, heads, sq, dv))).shape, np.float16)
    stats = np.zeros((b, heads, sq, 8), np.float32), np.zeros((b, heads, sq, 8), np.float32)
    fas_call(
        fas.flash_attention_score, query=forms[layout](q4).copy(), key=forms[layout](k4).copy(),
        value=forms[layout](v4).copy(), realShiftOptional=pse, attenMaskOptional=mask, preTokens=pre, nextTokens=nxt,
        headNum=heads, inputLayout=layout, sparseMode=mode, softmaxMaxOut=stats[0], softmaxSumOut=stats[1],
        attentionOutOut=out,
    )  # fmt: skip
    ref = np.zeros((b, heads, sq, dv))
    for batch in range(b):
        keep = allowed(mode, pre, nxt, sq, skv, mask[batch, 0] if mode in (0, 1) else None)
        for n in range(heads):
            bias = 0.25 * pse[batch, n].astype(np.float64)
            ref[batch, n], lse = attention(q4[batch, n], k4[batch, n // 2], v4[batch, n // 2], 0.25, keep, bias)
            scores = np.where(keep, 0.25 * (q4[batch, n].astype(np.float64) @ k4[batch, n // 2].T.astype(np.float64)
                                            + pse[batch, n]), -np.inf)  # fmt: skip
            row_max = scores.max(axis=1)
            live = np.isfinite(row_max)
            assert_rounded(stats[0][batch, n, live, 3], row_max[live], ulps=64)
            total = np.exp(scores[live] - row_max[live, None]).sum(axis=1)
            assert_rounded(stats[1][batch, n, live, 0], total, ulps=64)
            assert_rounded(stats[1][batch, n, live, 0] + 0, np.exp(lse[live] - row_max[live]), ulps=64)
    assert_rounded(out, forms[layout](ref), atol=2e-5)


def test_flash_attention_score_v2_pse_types_and_errors() -> None:
    rng = np.random.default_rng(SEED + 4)
    q, k, v = rand(rng, (1, 2, 4, 16)), rand(rng, (1, 2, 4, 16)), rand(rng, (1, 2, 4, 16))
    pse = rand(rng, (1, 2, 4, 4))
    out = np.zeros_like(q)
    stats = np.zeros((1, 2, 4, 8), np.float32), np.zeros((1, 2, 4, 8), np.float32)
    common = dict(query=q, key=k, value=v, headNum=2, inputLayout="BNSD", softmaxMaxOut=stats[0],
                  softmaxSumOut=stats[1], attentionOutOut=out)  # fmt: skip
    fas_call(fas.flash_attention_score_v2, realShiftOptional=pse, pseType=0, **common)
    for n in range(2):
        assert_rounded(out[0, n], attention(q[0, n], k[0, n], v[0, n], 0.25, None, pse[0, n])[0], atol=2e-5)
    slopes = np.array([0.5, 0.125], np.float32)
    fas_call(fas.flash_attention_score_v2, realShiftOptional=slopes, pseType=3, **common)
    distance = np.sqrt(np.abs(np.arange(4)[:, None] - np.arange(4)[None, :]))
    for n in range(2):
        assert_rounded(out[0, n], attention(q[0, n], k[0, n], v[0, n], 0.25, None, -slopes[n] * distance)[0], atol=2e-5)
    for argument, change in (("keepProb", {"keepProb": 0.9}), ("sparseMode", {"sparseMode": 5}),
                             ("headNum", {"headNum": 3}), ("pseType", {"pseType": 4})):  # fmt: skip
        with pytest.raises(AclError) as caught:
            fas_call(fas.flash_attention_score_v2, **{"pseType": 1, **common, **change})
        assert caught.value.code == ACLNN_ERR_PARAM_INVALID and caught.value.message.startswith(f"{argument}:")
