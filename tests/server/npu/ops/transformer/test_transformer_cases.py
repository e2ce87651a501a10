"""ops-transformer's operators end to end, one row each (see opcases.py): attention (dense and paged), the KV-cache
write, rotary embeddings, MoE routing, grouped matmul."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from aclnn_testkit import FakeMemory

from tests.server.npu.ops.opcases import F16, I32, I64, Case, In, Ints, List, Out, Ref, run
from tests.server.npu.ops.transformer.attention_reference import attention

INT_MAX = 2147483647
B, N, KVN, S, D = 2, 4, 2, 5, 16
SCALE = 0.25


def _bnsd(q: Any, k: Any, v: Any, kv_lengths: Any = None) -> tuple[Any, Any]:
    """float64 attention of [B, N, Sq, D] queries over [B, KVN, Skv, D] keys (GQA), each batch's first
    kv_lengths[b] keys; (out [B, N, Sq, Dv], lse [B, N, Sq, 1])."""
    b_, n_, sq = q.shape[:3]
    group = n_ // k.shape[1]
    out, lse = np.zeros((b_, n_, sq, v.shape[3])), np.zeros((b_, n_, sq, 1))
    for b in range(b_):
        length = k.shape[2] if kv_lengths is None else kv_lengths[b]
        for n in range(n_):
            o, s = attention(q[b, n], k[b, n // group, :length], v[b, n // group, :length], SCALE)
            out[b, n], lse[b, n, :, 0] = o, s
    return out, lse


def _fia_args(version: int) -> dict[str, Any]:
    """Dense BNSD decode arguments of FusedInferAttentionScore V1-V4 (their optional extras null)."""
    suffix = "" if version == 1 else "Optional"
    names = ["pseShift", "attenMask", "actualSeqLengths", "actualSeqLengthsKv", "deqScale1", "quantScale1",
             "deqScale2", "quantScale2", "quantOffset2", "antiquantScale", "antiquantOffset", "blockTable",
             "queryPaddingSize", "kvPaddingSize"]  # fmt: skip
    if version >= 2:
        names += ["keyAntiquantScale", "keyAntiquantOffset", "valueAntiquantScale", "valueAntiquantOffset",
                  "keySharedPrefix", "valueSharedPrefix", "actualSharedPrefixLen"]  # fmt: skip
    if version >= 3:
        names += ["queryRope", "keyRope", "keyRopeAntiquantScale"]
    if version >= 4:
        names += ["dequantScaleQuery", "learnableSink"]
    args: dict[str, Any] = {"query": In((B, N, 1, D), F16), "key": List((In((B, KVN, S, D), F16),)),
                            "value": List((In((B, KVN, S, D), F16),))}  # fmt: skip
    args |= {f"{name}{suffix}": None for name in names}
    args[f"actualSeqLengthsKv{suffix}"] = Ints((3, 5))
    args |= {"numHeads": N, "scaleValue": SCALE, "preTokens": INT_MAX, "nextTokens": INT_MAX, "inputLayout": "BNSD",
             "numKeyValueHeads": KVN, "sparseMode": 0, "innerPrecise": 0, "blockSize": 0, "antiquantMode": 0,
             "softmaxLseFlag": True}  # fmt: skip
    if version >= 2:
        args |= {"keyAntiquantMode": 0, "valueAntiquantMode": 0}
    if version >= 4:
        args["queryQuantMode"] = 0
    args |= {"attentionOut": Out((B, N, 1, D), F16), "softmaxLse": Out((B, N, 1, 1))}
    return args


def _fia(**v: Any) -> dict[str, Any]:
    lengths = v.get("actualSeqLengthsKvOptional", v.get("actualSeqLengthsKv"))
    out, lse = _bnsd(v["query"], v["key"][0], v["value"][0], lengths)
    return {"attentionOut": out, "softmaxLse": lse}


def _paged_args() -> dict[str, Any]:
    """V4 paged decode: a BnBsH cache of 6 blocks of 16, two sequences of 20 and 7 tokens."""
    args = _fia_args(4)
    table = [[3, 0], [5, 1]]
    args |= {"query": In((B, 1, N * D), F16), "key": List((In((6, 16, KVN * D), F16),)),
             "value": List((In((6, 16, KVN * D), F16),)), "blockTableOptional": In((B, 2), I32, values=table),
             "actualSeqLengthsKvOptional": Ints((20, 7)), "inputLayout": "BSH", "blockSize": 16,
             "softmaxLseFlag": False, "attentionOut": Out((B, 1, N * D), F16), "softmaxLse": None}  # fmt: skip
    return args


def _paged(**v: Any) -> dict[str, Any]:
    k, val, table = v["key"][0], v["value"][0], v["blockTableOptional"]
    gather = [np.concatenate([c[t] for t in table[b]])[:n] for b, n in enumerate((20, 7)) for c in (k, val)]
    keys = [g.reshape(-1, KVN, D).transpose(1, 0, 2) for g in gather[0::2]]
    values = [g.reshape(-1, KVN, D).transpose(1, 0, 2) for g in gather[1::2]]
    q = v["query"].reshape(B, 1, N, D).transpose(0, 2, 1, 3)
    out = np.zeros((B, N, 1, D))
    for b in range(B):
        for n in range(N):
            out[b, n] = attention(q[b, n], keys[b][n // 2], values[b][n // 2], SCALE)[0]
    return {"attentionOut": out.transpose(0, 2, 1, 3).reshape(B, 1, N * D)}


def _ifa_args() -> dict[str, Any]:
    nulls = ["pseShift", "attenMask", "dequantScale1", "quantScale1", "dequantScale2", "quantScale2",
             "quantOffset2", "antiquantScale", "antiquantOffset", "blocktable", "kvPaddingSize"]  # fmt: skip
    return {"query": In((B, N, 1, D), F16), "key": List((In((B, KVN, S, D), F16),)),
            "value": List((In((B, KVN, S, D), F16),)), "actualSeqLengths": Ints((5, 2))} | dict.fromkeys(nulls) | {
        "numHeads": N, "scaleValue": SCALE, "inputLayout": "BNSD", "numKeyValueHeads": KVN, "blockSize": 0,
        "innerPrecise": 0, "attentionOut": Out((B, N, 1, D), F16)}  # fmt: skip


def _pfa_args() -> dict[str, Any]:
    nulls = ["pseShift", "attenMask", "actualSeqLengths", "actualSeqLengthsKv", "deqScale1", "quantScale1",
             "deqScale2", "quantScale2", "quantOffset2"]  # fmt: skip
    return {"query": In((B, N, 3, D), F16), "key": In((B, KVN, S, D), F16), "value": In((B, KVN, S, D), F16)} | (
        dict.fromkeys(nulls)) | {"numHeads": N, "scaleValue": SCALE, "preTokens": INT_MAX, "nextTokens": INT_MAX,
        "inputLayout": "BNSD", "numKeyValueHeads": KVN, "sparseMode": 0, "innerPrecise": 1,
        "attentionOut": Out((B, N, 3, D), F16)}  # fmt: skip


def _fas_args(v2: bool) -> dict[str, Any]:
    args = {"query": In((B, N, 3, D)), "key": In((B, KVN, S, D)), "value": In((B, KVN, S, D)),
            "realShiftOptional": None, "dropMaskOptional": None, "paddingMaskOptional": None,
            "attenMaskOptional": None, "prefixOptional": None}  # fmt: skip
    if v2:
        args |= {"qStartIdxOptional": None, "kvStartIdxOptional": None}
    args |= {"scaleValue": SCALE, "keepProb": 1.0, "preTokens": INT_MAX, "nextTokens": INT_MAX, "headNum": N,
             "inputLayout": "BNSD", "innerPrecise": 0, "sparseMode": 0}  # fmt: skip
    if v2:
        args["pseType"] = 1
    return args | {"softmaxMaxOut": Out((B, N, 3, 8)), "softmaxSumOut": Out((B, N, 3, 8)), "softmaxOutOut": None,
                   "attentionOutOut": Out((B, N, 3, D))}  # fmt: skip


def _fas(**v: Any) -> dict[str, Any]:
    out, _ = _bnsd(v["query"], v["key"], v["value"])
    return {"attentionOutOut": out}


def _rotate_half(x: Any) -> Any:
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], -1)


def _cache_write(**v: Any) -> dict[str, Any]:
    k, kc, val, vc = v["key"], v["keyCacheRef"].copy(), v["value"], v["valueCacheRef"].copy()
    for t, slot in enumerate(v["slotMapping"]):
        kc[slot // 4, slot % 4], vc[slot // 4, slot % 4] = k[t], val[t]
    return {"keyCacheRef": kc, "valueCacheRef": vc}


def _moe(**v: Any) -> dict[str, Any]:
    x = v["x"]
    p = np.exp(x - x.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    order = np.argsort(-p, -1, kind="stable")[:, :2]
    rows = np.arange(x.shape[0])
    return {"yOut": np.take_along_axis(p, order, -1), "expertIdxOut": order,
            "rowIdxOut": np.stack([rows, rows + x.shape[0]], 1)}  # fmt: skip


def _gmm_args(v5: bool) -> dict[str, Any]:
    nulls = ["biasOptional", "scaleOptional", "offsetOptional", "antiquantScaleOptional", "antiquantOffsetOptional",
             "perTokenScaleOptional"]  # fmt: skip
    args = {"x": List((In((6, 8)),)), "weight": List((In((2, 8, 3)),))} | dict.fromkeys(nulls) | {
        "groupListOptional": In((2,), I64, values=[4, 6]), "activationInputOptional": None,
        "activationQuantScaleOptional": None, "activationQuantOffsetOptional": None, "splitItem": 3, "groupType": 0,
        "groupListType": 0, "actType": 0}  # fmt: skip
    if v5:
        args["tuningConfigOptional"] = None
    return args | {"out": List((Out((6, 3)),)), "activationFeatureOutOptional": None,
                   "dynQuantScaleOutOptional": None}  # fmt: skip


def _gmm(**v: Any) -> dict[str, Any]:
    x, w = v["x"][0], v["weight"][0]
    return {"out": [np.concatenate([x[:4] @ w[0], x[4:] @ w[1]])]}


CASES = [
    *(Case(f"FusedInferAttentionScore{'' if n == 1 else f'V{n}'}", _fia_args(n), _fia, atol=2e-5, ulps=64)
      for n in (1, 2, 3, 4)),
    Case("FusedInferAttentionScoreV4", _paged_args(), _paged, atol=2e-5, name="FusedInferAttentionScoreV4-paged"),
    Case("IncreFlashAttentionV4", _ifa_args(), lambda **v: {"attentionOut": _bnsd(v["query"], v["key"][0],
         v["value"][0], (5, 2))[0]}, atol=2e-5),
    Case("PromptFlashAttentionV3", _pfa_args(), lambda **v: {"attentionOut": _bnsd(v["query"], v["key"],
         v["value"])[0]}, atol=2e-5),
    Case("FlashAttentionScore", _fas_args(False), _fas, atol=1e-5, skip=("softmaxMaxOut", "softmaxSumOut")),
    Case("FlashAttentionScoreV2", _fas_args(True), _fas, atol=1e-5, skip=("softmaxMaxOut", "softmaxSumOut")),
    Case("ScatterPaKvCache", {"key": In((3, 2, 8), F16), "keyCacheRef": Ref((4, 4, 2, 8), F16),
                              "slotMapping": In((3,), I32, values=[5, 0, 14]), "value": In((3, 2, 8), F16),
                              "valueCacheRef": Ref((4, 4, 2, 8), F16), "compressLensOptional": None,
                              "compressSeqOffsetOptional": None, "seqLensOptional": None,
                              "cacheModeOptional": "Norm", "scatterModeOptional": None, "stridesOptional": None,
                              "offsetsOptional": None}, _cache_write),
    # strides and offsets take effect only with scatterMode "Nct" (its docs): with "None" they are ignored
    Case("ScatterPaKvCache", {"key": In((3, 2, 8), F16), "keyCacheRef": Ref((4, 4, 2, 8), F16),
                              "slotMapping": In((3,), I32, values=[5, 0, 14]), "value": In((3, 2, 8), F16),
                              "valueCacheRef": Ref((4, 4, 2, 8), F16), "compressLensOptional": None,
                              "compressSeqOffsetOptional": None, "seqLensOptional": None,
                              "cacheModeOptional": "Norm", "scatterModeOptional": "None",
                              "stridesOptional": Ints((1, 1)), "offsetsOptional": Ints((0, 0))},
         _cache_write, name="ScatterPaKvCache-strides-ignored"),
    Case("RotaryPositionEmbedding", {"x": In((1, 2, 3, 8)), "cos": In((1, 1, 3, 8)), "sin": In((1, 1, 3, 8)),
                                     "mode": 0, "out": Out((1, 2, 3, 8))},
         lambda **v: {"out": v["x"] * v["cos"] + _rotate_half(v["x"]) * v["sin"]}, atol=1e-6),
    Case("ApplyRotaryPosEmb", {"queryRef": Ref((1, 3, 2, 8)), "keyRef": Ref((1, 3, 1, 8)), "cos": In((1, 3, 1, 8)),
                               "sin": In((1, 3, 1, 8)), "layout": 1},
         lambda **v: {name: v[name] * v["cos"] + _rotate_half(v[name]) * v["sin"] for name in ("queryRef", "keyRef")},
         atol=1e-6),
    Case("InterleaveRope", {"x": In((1, 2, 3, 8), F16), "cos": In((1, 1, 3, 8), F16), "sin": In((1, 1, 3, 8), F16),
                            "out": Out((1, 2, 3, 8), F16)},
         lambda **v: {"out": (q := np.concatenate([v["x"][..., ::2], v["x"][..., 1::2]], -1)) * v["cos"]
                      + _rotate_half(q) * v["sin"]}, atol=1e-3),
    Case("RopeWithSinCosCache", {"positions": In((3,), I64, values=[4, 0, 2]), "queryIn": In((3, 64)),
                                 "keyIn": In((3, 32)), "cosSinCache": In((5, 32)), "mropeSection": None,
                                 "headSize": 32, "isNeoxStyle": True, "queryOut": Out((3, 64)), "keyOut": Out((3, 32))},
         lambda **v: _rope_cache(v), atol=1e-6),
    Case("MoeGatingTopKSoftmax", {"x": In((3, 5)), "finishedOptional": None, "k": 2, "yOut": Out((3, 2)),
                                  "expertIdxOut": Out((3, 2), I32), "rowIdxOut": Out((3, 2), I32)}, _moe, atol=1e-7),
    Case("GroupedMatmulV4", _gmm_args(False), _gmm, atol=1e-5),
    Case("GroupedMatmulV5", _gmm_args(True), _gmm, atol=1e-5),
]  # fmt: skip


def _rope_cache(v: dict[str, Any]) -> dict[str, Any]:
    cos, sin = np.split(v["cosSinCache"][v["positions"]], 2, -1)  # [T, 16] each
    full_cos, full_sin = np.concatenate([cos, cos], -1)[:, None], np.concatenate([sin, sin], -1)[:, None]
    out = {}
    for name, target in (("queryIn", "queryOut"), ("keyIn", "keyOut")):
        x = v[name].reshape(3, -1, 32)
        out[target] = (x * full_cos + _rotate_half(x) * full_sin).reshape(3, -1)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_transformer(case: Case, mem: FakeMemory, rng: np.random.Generator) -> None:
    run(case, mem, rng)
