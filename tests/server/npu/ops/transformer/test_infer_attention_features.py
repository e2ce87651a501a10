"""FusedInferAttentionScore features beyond plain attention: pse, ALiBi, sink, prefix, rope, quantized KV and
output, and the run-time errors (161002 naming the argument)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from attention_reference import allowed, attention, paged
from test_fused_infer_attention import INT_MAX, Paged, defaults, rand, v4, v5

from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops.common import int4
from server.npu.ops.transformer import fused_infer_attention as fia
from tests.server.npu.ops.common.refkit import assert_rounded, call_with

SEED = 7


def test_pse_shift_and_mask_in_decode() -> None:
    rng = np.random.default_rng(SEED)
    q, k, v = rand(rng, (2, 4, 1, 16)), rand(rng, (2, 4, 10, 16)), rand(rng, (2, 4, 10, 16))
    pse = rand(rng, (2, 4, 1, 12))
    mask = rng.random((2, 1, 1, 12)) < 0.4
    out = np.zeros_like(q)
    v4(query=q, key=[k], value=[v], pseShiftOptional=pse, attenMaskOptional=mask, numHeads=4, attentionOut=out)
    for b in range(2):
        for n in range(4):
            keep = ~mask[b, 0, :, :10]
            o, _ = attention(q[b, n], k[b, n], v[b, n], 0.125, keep, pse[b, n, :, :10].astype(np.float64))
            assert_rounded(out[b, n], o, atol=2e-5)


def test_learnable_sink() -> None:
    rng = np.random.default_rng(SEED + 1)
    q, k, v = rand(rng, (1, 4, 3, 16)), rand(rng, (1, 2, 5, 16)), rand(rng, (1, 2, 5, 16))
    sink = rand(rng, (4,))
    out = np.zeros_like(q)
    lse = np.zeros((1, 4, 3, 1), np.float32)
    v4(
        query=q, key=[k], value=[v], learnableSinkOptional=sink, numHeads=4, numKeyValueHeads=2, sparseMode=3,
        attenMaskOptional=np.triu(np.ones((2048, 2048), bool), 1), softmaxLseFlag=True, softmaxLse=lse,
        attentionOut=out,
    )  # fmt: skip
    for n in range(4):
        o, s = attention(q[0, n], k[0, n // 2], v[0, n // 2], 0.125, allowed(3, 0, 0, 3, 5, None), sink=float(sink[n]))
        assert_rounded(out[0, n], o, atol=2e-5)
        assert_rounded(lse[0, n, :, 0], s, ulps=64)


@pytest.mark.parametrize("pse_type", [2, 3])
def test_v5_alibi(pse_type: int) -> None:
    rng = np.random.default_rng(SEED + 2)
    q, k, v = rand(rng, (1, 2, 6, 16)), rand(rng, (1, 2, 6, 16)), rand(rng, (1, 2, 6, 16))
    slopes = np.array([0.5, 0.25], np.float32)
    out = np.zeros_like(q)
    v5(query=q, key=[k], value=[v], pseShiftOptional=slopes, numHeads=2, pseType=pse_type, qStartIdxOptional=[3],
       kvStartIdxOptional=[1], attentionOut=out)  # fmt: skip
    for n in range(2):
        distance = np.abs((3 + np.arange(6))[:, None] - (1 + np.arange(6))[None, :]).astype(np.float64)
        bias = -slopes[n] * (distance if pse_type == 2 else np.sqrt(distance))
        assert_rounded(out[0, n], attention(q[0, n], k[0, n], v[0, n], 0.125, None, bias)[0], atol=2e-5)


def test_shared_prefix() -> None:
    rng = np.random.default_rng(SEED + 3)
    q, k, v = rand(rng, (2, 1, 2, 16)), rand(rng, (2, 5, 2, 16)), rand(rng, (2, 5, 2, 16))  # BSND decode
    kp, vp = rand(rng, (1, 7, 2, 16)), rand(rng, (1, 7, 2, 16))
    out = np.zeros_like(q)
    v4(
        query=q, key=[k], value=[v], keySharedPrefixOptional=kp, valueSharedPrefixOptional=vp,
        actualSharedPrefixLenOptional=[4], actualSeqLengthsKvOptional=[5, 2], numHeads=2, inputLayout="BSND",
        attentionOut=out,
    )  # fmt: skip
    for b, length in enumerate([5, 2]):
        for n in range(2):
            keys = np.concatenate([kp[0, :4, n], k[b, :length, n]])
            values = np.concatenate([vp[0, :4, n], v[b, :length, n]])
            assert_rounded(out[b, 0, n], attention(q[b, :, n], keys, values, 0.125)[0][0], atol=2e-5)


def test_mla_rope_paged() -> None:
    rng = np.random.default_rng(SEED + 4)
    case = Paged(rng, 4, 1, [9, 30], np.float16)
    q_rope = rand(rng, (2, 4, 1, 8))
    k_rope = rand(rng, (case.k.shape[0], 16, 8))
    out = np.zeros(case.q.shape, np.float16)
    v4(
        query=case.q, key=[case.k], value=[case.v], queryRopeOptional=q_rope, keyRopeOptional=k_rope,
        actualSeqLengthsKvOptional=case.lengths, blockTableOptional=case.table, numHeads=4, numKeyValueHeads=1,
        blockSize=16, attentionOut=out,
    )  # fmt: skip
    for b, length in enumerate(case.lengths):
        keys = np.concatenate([paged(case.k, case.table[b], length, 1), paged(k_rope, case.table[b], length, 1)], -1)
        values = paged(case.v, case.table[b], length, 1)
        for n in range(4):
            query = np.concatenate([case.q[b, n], q_rope[b, n]], -1)
            assert_rounded(out[b, n], attention(query, keys[:, 0], values[:, 0], 0.125)[0], atol=2e-5)


def test_int8_kv_per_channel_paged_with_offsets() -> None:
    rng = np.random.default_rng(SEED + 5)
    case = Paged(rng, 4, 2, [7, 40], np.float16)
    k8 = rng.integers(-128, 128, case.k.shape).astype(np.int8)
    v8 = rng.integers(-128, 128, case.v.shape).astype(np.int8)
    ks, vs = (rng.random((2, 32)) * 0.02).astype(np.float16), (rng.random((2, 32)) * 0.02).astype(np.float16)
    ko, vo = rand(rng, (2, 32)), rand(rng, (2, 32))
    out = np.zeros(case.q.shape, np.float16)
    v4(
        query=case.q, key=[k8], value=[v8], keyAntiquantScaleOptional=ks, keyAntiquantOffsetOptional=ko,
        valueAntiquantScaleOptional=vs, valueAntiquantOffsetOptional=vo, actualSeqLengthsKvOptional=case.lengths,
        blockTableOptional=case.table, numHeads=4, numKeyValueHeads=2, blockSize=16, attentionOut=out,
    )  # fmt: skip
    for b, length in enumerate(case.lengths):
        keys = (paged(k8, case.table[b], length, 2) + ko.astype(np.float64)) * ks.astype(np.float64)
        values = (paged(v8, case.table[b], length, 2) + vo.astype(np.float64)) * vs.astype(np.float64)
        for n in range(4):
            assert_rounded(out[b, n], attention(case.q[b, n], keys[:, n // 2], values[:, n // 2], 0.125)[0], atol=3e-5)


def test_int8_kv_per_token_and_int4_combined_scale() -> None:
    rng = np.random.default_rng(SEED + 6)
    q = rand(rng, (2, 2, 1, 16))
    k8, v8 = (rng.integers(-128, 128, (2, 2, 6, 16)).astype(np.int8) for _ in range(2))
    ks, vs = (rng.random((1, 2, 6)).astype(np.float32) * 0.05 for _ in range(2))
    out = np.zeros_like(q)
    v4(
        query=q, key=[k8], value=[v8], keyAntiquantScaleOptional=ks, valueAntiquantScaleOptional=vs,
        keyAntiquantMode=1, valueAntiquantMode=1, numHeads=2, attentionOut=out,
    )  # fmt: skip
    for b in range(2):
        for n in range(2):
            keys, values = k8[b, n] * ks[0, b][:, None].astype(np.float64), v8[b, n] * vs[0, b][:, None]
            assert_rounded(out[b, n], attention(q[b, n], keys, values, 0.125)[0], atol=3e-5)
    k4, v4_ = (rng.integers(-8, 8, (2, 2, 6, 16)).astype(np.int8) for _ in range(2))
    scale = (rng.random((2, 2, 1, 16)) * 0.2).astype(np.float16)  # (2, N, 1, D): row 0 key, row 1 value
    call_with(
        fia.fused_infer_attention_score, **{name: value for name, value in defaults().items() if name in (
            "scaleValue", "preTokens", "nextTokens", "inputLayout", "numKeyValueHeads", "sparseMode", "innerPrecise",
            "blockSize", "antiquantMode", "softmaxLseFlag")},
        query=q, key=[int4.pack(k4, np.int32)], value=[int4.pack(v4_, np.int32)], antiquantScale=scale, numHeads=2,
        attentionOut=out,
    )  # fmt: skip
    for b in range(2):
        for n in range(2):
            keys, values = k4[b, n] * scale[0, n].astype(np.float64), v4_[b, n] * scale[1, n].astype(np.float64)
            assert_rounded(out[b, n], attention(q[b, n], keys, values, 0.125)[0], atol=3e-5)


def test_int8_output_post_quant() -> None:
    rng = np.random.default_rng(SEED + 7)
    q, k, v = rand(rng, (1, 2, 3, 16)), rand(rng, (1, 2, 4, 16)), rand(rng, (1, 2, 4, 16))
    scale, offset = rng.random(32).astype(np.float32) * 100, rand(rng, (32,), np.float32)
    out = np.zeros(q.shape, np.int8)
    v4(
        query=q,
        key=[k],
        value=[v],
        quantScale2Optional=scale,
        quantOffset2Optional=offset,
        numHeads=2,
        attentionOut=out,
    )
    for n in range(2):
        expected = attention(q[0, n], k[0, n], v[0, n], 0.125)[0] * scale.reshape(2, 16)[n] + offset.reshape(2, 16)[n]
        assert np.abs(out[0, n] - np.clip(np.rint(expected), -128, 127)).max() <= 1


def expect_invalid(argument: str, **given: Any) -> None:
    with pytest.raises(AclError) as caught:
        v4(**given)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID
    assert caught.value.message.startswith(f"{argument}:"), caught.value.message
    assert caught.value.api == "aclnnFusedInferAttentionScoreV4"


def paged_args(rng: np.random.Generator, **changes: Any) -> dict[str, Any]:
    case = Paged(rng, 4, 2, [7, 40], np.float16)
    given = dict(
        query=case.q, key=[case.k], value=[case.v], actualSeqLengthsKvOptional=case.lengths,
        blockTableOptional=case.table, numHeads=4, numKeyValueHeads=2, blockSize=16,
        attentionOut=np.zeros(case.q.shape, np.float16),
    )  # fmt: skip
    given.update(changes)
    return given


def test_errors_of_the_paged_cache() -> None:
    rng = np.random.default_rng(SEED + 8)
    given = paged_args(rng)
    table = given["blockTableOptional"].copy()
    table[1, 2] = given["key"][0].shape[0]  # one past the last block
    expect_invalid("blockTableOptional", **{**given, "blockTableOptional": table})
    table[1, 2] = -1
    expect_invalid("blockTableOptional", **{**given, "blockTableOptional": table})
    expect_invalid("actualSeqLengthsKvOptional", **{**given, "actualSeqLengthsKvOptional": [7, 65]})  # > 4 blocks
    expect_invalid("actualSeqLengthsKvOptional", **{**given, "actualSeqLengthsKvOptional": None})
    expect_invalid("actualSeqLengthsKvOptional", **{**given, "actualSeqLengthsKvOptional": []})
    expect_invalid("blockSize", **{**given, "blockSize": 32})


def test_errors_of_the_arguments() -> None:
    rng = np.random.default_rng(SEED + 9)
    given = paged_args(rng)
    expect_invalid("numKeyValueHeads", **{**given, "numKeyValueHeads": 3})
    expect_invalid("sparseMode", **{**given, "sparseMode": 5})
    expect_invalid("innerPrecise", **{**given, "innerPrecise": 4})
    expect_invalid("inputLayout", **{**given, "inputLayout": "BSH_TND"})
    expect_invalid("softmaxLse", **{**given, "softmaxLseFlag": True})
    expect_invalid("query", **{**given, "query": given["query"].astype(np.int8)})
    expect_invalid("deqScale1Optional", **{**given, "deqScale1Optional": np.ones(1, np.float32)})
    q, k = rand(rng, (1, 2, 4, 16)), rand(rng, (1, 2, 6, 16))
    dense = dict(query=q, key=[k], value=[k], numHeads=2, attentionOut=np.zeros_like(q))
    expect_invalid("attenMaskOptional", **dense, sparseMode=3)
    expect_invalid("attenMaskOptional", **dense, attenMaskOptional=np.zeros((4, 5), bool))  # fewer columns than S
    expect_invalid("actualSeqLengthsKvOptional", **dense, actualSeqLengthsKvOptional=[7])
    expect_invalid("actualSeqLengthsOptional", **dense, actualSeqLengthsOptional=[5])  # longer than S = 4
    t = rand(rng, (5, 2, 16))
    tnd = dict(query=t, key=[t], value=[t], numHeads=2, inputLayout="TND", attentionOut=np.zeros_like(t))
    expect_invalid(
        "actualSeqLengthsOptional", **tnd, actualSeqLengthsOptional=[3, 2], actualSeqLengthsKvOptional=[3, 5]
    )
    expect_invalid("actualSeqLengthsOptional", **tnd, actualSeqLengthsKvOptional=[5])


def test_v1_and_mode_zero_prefill_names() -> None:
    rng = np.random.default_rng(SEED + 10)
    given = paged_args(rng)
    table = given["blockTableOptional"].copy()
    table[0, 0] = 999
    v1 = dict(
        query=given["query"], key=given["key"], value=given["value"], actualSeqLengthsKv=[7, 40], blockTable=table,
        numHeads=4, numKeyValueHeads=2, blockSize=16, attentionOut=given["attentionOut"], scaleValue=0.1,
        preTokens=INT_MAX, nextTokens=INT_MAX, inputLayout="BNSD", sparseMode=0, innerPrecise=0, antiquantMode=0,
        softmaxLseFlag=False,
    )  # fmt: skip
    with pytest.raises(AclError) as caught:
        call_with(fia.fused_infer_attention_score, **v1)
    assert caught.value.message.startswith("blockTable:") and caught.value.api == "aclnnFusedInferAttentionScore"


@pytest.mark.parametrize("version", ["V2", "V3"])
def test_v2_v3_share_the_kernel_and_write_strided_outputs(version: str) -> None:
    rng = np.random.default_rng(SEED + 11)
    case = Paged(rng, 4, 2, [5, 33], np.float16)
    expected = np.zeros(case.q.shape, np.float16)
    v4(query=case.q, key=[case.k], value=[case.v], actualSeqLengthsKvOptional=case.lengths,
       blockTableOptional=case.table, numHeads=4, numKeyValueHeads=2, blockSize=16, attentionOut=expected)  # fmt: skip
    backing = np.zeros((*case.q.shape[:3], 2 * case.q.shape[3]), np.float16)
    strided = backing[..., ::2]  # a non-contiguous output view
    arguments = defaults(
        query=case.q, key=[case.k], value=[case.v], actualSeqLengthsKvOptional=case.lengths,
        blockTableOptional=case.table, numHeads=4, numKeyValueHeads=2, blockSize=16, attentionOut=strided,
    )  # fmt: skip
    for name in ("queryQuantMode", "pseType"):
        arguments.pop(name)
    kernel = fia.FUNCTIONS[f"FusedInferAttentionScore{version}"]
    call_with(kernel, **arguments)
    assert (backing[..., ::2] == expected).all() and (backing[..., 1::2] == 0).all()
