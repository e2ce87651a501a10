"""FusedInferAttentionScore V1-V5 against the float64 reference (attention_reference.py), on random data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from attention_reference import allowed, attention, paged

from server.npu.ops.transformer import fused_infer_attention as fia
from tests.server.npu.ops.common.refkit import assert_rounded, call_with

INT_MAX = 2147483647
BF16 = np.dtype(ml_dtypes.bfloat16)
SEED = 20240607


def defaults(**given: Any) -> dict[str, Any]:
    base = dict(
        scaleValue=0.125, preTokens=INT_MAX, nextTokens=INT_MAX, inputLayout="BNSD", numKeyValueHeads=0, sparseMode=0,
        innerPrecise=0, blockSize=0, antiquantMode=0, softmaxLseFlag=False, keyAntiquantMode=0, valueAntiquantMode=0,
        queryQuantMode=0, pseType=0,
    )  # fmt: skip
    base.update(given)
    return base


def v4(**given: Any) -> None:
    arguments = defaults(**given)
    arguments.pop("pseType")
    call_with(fia.fused_infer_attention_score_v4, **arguments)


def v5(**given: Any) -> None:
    call_with(fia.fused_infer_attention_score_v5, **defaults(**given))


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float16) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def nz(cache: np.ndarray, heads: int) -> np.ndarray:
    """A BnBsH cache as NZ (blockNum, N, D/16, blockSize, 16)."""
    nb, bs, h = cache.shape
    d = h // heads
    return cache.reshape(nb, bs, heads, d // 16, 16).transpose(0, 2, 3, 1, 4).copy()


def bnnbsd(cache: np.ndarray, heads: int) -> np.ndarray:
    nb, bs, h = cache.shape
    return cache.reshape(nb, bs, heads, h // heads).transpose(0, 2, 1, 3).copy()


class Paged:
    """A random decode problem over a paged BnBsH cache with a shuffled (non-contiguous) block table."""

    def __init__(self, rng: np.random.Generator, heads: int, kv_heads: int, lengths: list[int], dtype: Any) -> None:
        self.heads, self.kv_heads, self.lengths, self.dtype = heads, kv_heads, lengths, dtype
        self.d, self.block_size, batch = 32, 16, len(lengths)
        per = 4
        blocks = batch * per + 3
        self.k = rand(rng, (blocks, self.block_size, kv_heads * self.d), dtype)
        self.v = rand(rng, (blocks, self.block_size, kv_heads * self.d), dtype)
        self.table = rng.permutation(blocks)[: batch * per].reshape(batch, per).astype(np.int32)
        self.q = rand(rng, (batch, heads, 1, self.d), dtype)

    def reference(self, lengths: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        lengths = self.lengths if lengths is None else lengths
        group = self.heads // self.kv_heads
        out = np.zeros((len(lengths), self.heads, 1, self.d))
        lse = np.zeros((len(lengths), self.heads, 1, 1))
        for b, length in enumerate(lengths):
            keys = paged(self.k, self.table[b], length, self.kv_heads)
            values = paged(self.v, self.table[b], length, self.kv_heads)
            for n in range(self.heads):
                o, s = attention(self.q[b, n], keys[:, n // group], values[:, n // group], 0.125)
                out[b, n], lse[b, n, :, 0] = o, s
        return out, lse


@pytest.mark.parametrize("dtype", [np.float16, BF16])
@pytest.mark.parametrize("kv_heads", [8, 4, 1])
@pytest.mark.parametrize("cache_layout", ["BnBsH", "BnNBsD", "NZ"])
def test_paged_decode_gqa(dtype: Any, kv_heads: int, cache_layout: str) -> None:
    rng = np.random.default_rng(SEED)
    case = Paged(rng, 8, kv_heads, [0, 1, 17, 64], dtype)
    convert: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "BnBsH": lambda c: c, "BnNBsD": lambda c: bnnbsd(c, kv_heads), "NZ": lambda c: nz(c, kv_heads)
    }  # fmt: skip
    out = np.zeros(case.q.shape, dtype)
    lse = np.zeros((4, 8, 1, 1), np.float32)
    v4(
        query=case.q, key=[convert[cache_layout](case.k)], value=[convert[cache_layout](case.v)],
        actualSeqLengthsKvOptional=case.lengths, blockTableOptional=case.table, numHeads=8,
        numKeyValueHeads=kv_heads, blockSize=case.block_size, softmaxLseFlag=True, attentionOut=out, softmaxLse=lse,
    )  # fmt: skip
    ref_out, ref_lse = case.reference()
    assert_rounded(out, ref_out, atol=2e-5)
    assert_rounded(lse, ref_lse, ulps=64)
    assert (out[0] == 0).all() and np.isinf(lse[0]).all()  # a batch with no keys: zeros, lse +inf


@pytest.mark.parametrize("layout", ["BSH", "BSND", "TND"])
def test_paged_decode_layouts(layout: str) -> None:
    rng = np.random.default_rng(SEED + 1)
    case = Paged(rng, 4, 2, [5, 33, 1], np.float16)
    batch = len(case.lengths)
    to = {"BSH": lambda x: x.transpose(0, 2, 1, 3).reshape(batch, 1, -1), "BSND": lambda x: x.transpose(0, 2, 1, 3),
          "TND": lambda x: x[:, :, 0]}  # fmt: skip
    q = to[layout](case.q).copy()
    out = np.zeros_like(q)
    lengths = [1, 2, 3] if layout == "TND" else None
    v4(
        query=q, key=[case.k], value=[case.v], actualSeqLengthsOptional=lengths,
        actualSeqLengthsKvOptional=case.lengths, blockTableOptional=case.table, numHeads=4, numKeyValueHeads=2,
        blockSize=16, inputLayout=layout,
        sparseMode=3 if layout == "TND" else 0, attentionOut=out,
        attenMaskOptional=np.triu(np.ones((2048, 2048), bool), 1) if layout == "TND" else None,
    )  # fmt: skip
    assert_rounded(out, to[layout](case.reference()[0]), atol=2e-5)


def test_decode_update_pattern_over_ten_steps() -> None:
    """One q, cache and block table, launched with a growing actualSeqLengthsKv, as vllm-ascend updates it."""
    rng = np.random.default_rng(SEED + 2)
    case = Paged(rng, 8, 2, [3, 20, 40, 9], np.float16)
    out = np.zeros(case.q.shape, np.float16)
    for step in range(10):
        lengths = [n + step * 2 for n in case.lengths]
        v4(
            query=case.q, key=[case.k], value=[case.v], actualSeqLengthsKvOptional=lengths,
            blockTableOptional=case.table, numHeads=8, numKeyValueHeads=2, blockSize=16, attentionOut=out,
        )  # fmt: skip
        assert_rounded(out, case.reference(lengths)[0], atol=2e-5)


def test_tnd_chunked_prefill_paged_right_down_causal() -> None:
    """vllm-ascend's call: TND query with cumulative lengths, per-batch KV lengths, sparseMode 3, 2048 mask."""
    rng = np.random.default_rng(SEED + 3)
    q_lens, kv_lens = [1, 3, 5], [7, 3, 30]
    case = Paged(rng, 4, 1, kv_lens, BF16)
    q = rand(rng, (sum(q_lens), 4, 32), BF16)
    out = np.zeros_like(q)
    lse = np.zeros((sum(q_lens), 4, 1), np.float32)
    v4(
        query=q, key=[case.k], value=[case.v], actualSeqLengthsOptional=list(np.cumsum(q_lens)),
        actualSeqLengthsKvOptional=kv_lens, blockTableOptional=case.table, numHeads=4, numKeyValueHeads=1,
        blockSize=16, inputLayout="TND", sparseMode=3, attenMaskOptional=np.triu(np.ones((2048, 2048), np.int8), 1),
        softmaxLseFlag=True, softmaxLse=lse, attentionOut=out,
    )  # fmt: skip
    start = 0
    for b, (sq, skv) in enumerate(zip(q_lens, kv_lens, strict=True)):
        keys, values = paged(case.k, case.table[b], skv, 1), paged(case.v, case.table[b], skv, 1)
        keep = allowed(3, 0, 0, sq, skv, None)
        for n in range(4):
            o, s = attention(q[start : start + sq, n], keys[:, 0], values[:, 0], 0.125, keep)
            assert_rounded(out[start : start + sq, n], o, atol=1e-4)
            assert_rounded(lse[start : start + sq, n, 0], s, ulps=64)
        start += sq


def dense_case(rng: np.random.Generator, dtype: Any = np.float16) -> dict[str, Any]:
    batch, heads, kv_heads, sq, skv, d = 2, 4, 2, 6, 9, 16
    return dict(
        q=rand(rng, (batch, heads, sq, d), dtype), k=rand(rng, (batch, kv_heads, skv, d), dtype),
        v=rand(rng, (batch, kv_heads, skv, d), dtype), q_lens=[6, 4], kv_lens=[9, 7], heads=heads, kv_heads=kv_heads,
        mask=rng.random((batch, 1, sq, skv)) < 0.3,
    )  # fmt: skip


def dense_reference(c: dict[str, Any], mode: int, pre: int, nxt: int, mask: bool) -> tuple[np.ndarray, np.ndarray]:
    q, k, v = c["q"], c["k"], c["v"]
    group = c["heads"] // c["kv_heads"]
    out = np.zeros(q.shape)
    lse = np.full(q.shape[:3], np.inf)
    for b, (sq, skv) in enumerate(zip(c["q_lens"], c["kv_lens"], strict=True)):
        keep = allowed(mode, pre, nxt, sq, skv, c["mask"][b, 0, :sq, :skv] if mask else None)
        for n in range(c["heads"]):
            o, s = attention(q[b, n, :sq], k[b, n // group, :skv], v[b, n // group, :skv], 0.125, keep)
            out[b, n, :sq], lse[b, n, :sq] = o, s
    return out, lse


@pytest.mark.parametrize(
    ("mode", "pre", "nxt", "mask"),
    [(0, INT_MAX, INT_MAX, False), (0, 3, 1, True), (0, 9, -2, True), (1, 0, 0, True), (2, 0, 0, True),
     (3, 0, 0, True), (4, 4, 0, True), (4, 2, -1, True)],
)  # fmt: skip
def test_prefill_sparse_modes(mode: int, pre: int, nxt: int, mask: bool) -> None:
    rng = np.random.default_rng(SEED + 4)
    c = dense_case(rng)
    out = np.full(c["q"].shape, 7, np.float16)
    lse = np.zeros((*c["q"].shape[:3], 1), np.float32)
    given_mask = c["mask"] if mode in (0, 1) else np.triu(np.ones((2048, 2048), bool), 1)
    v4(
        query=c["q"], key=[c["k"]], value=[c["v"]], attenMaskOptional=given_mask if mask else None,
        actualSeqLengthsOptional=c["q_lens"], actualSeqLengthsKvOptional=c["kv_lens"], numHeads=4,
        numKeyValueHeads=2, sparseMode=mode, preTokens=pre, nextTokens=nxt, softmaxLseFlag=True, softmaxLse=lse,
        attentionOut=out,
    )  # fmt: skip
    ref_out, ref_lse = dense_reference(c, mode, pre, nxt, mask)
    assert_rounded(out, ref_out, atol=2e-5)
    assert_rounded(lse[..., 0], ref_lse, ulps=64)
    assert (out[1, :, 4:] == 0).all()  # rows past actualSeqLengths are zeroed


@pytest.mark.parametrize("layout", ["BNSD_BSND", "BSH_NBSD", "BSND_NBSD", "BSH", "BSND_BNSD", "BNSD_NBSD"])
def test_output_layouts(layout: str) -> None:
    rng = np.random.default_rng(SEED + 5)
    c = dense_case(rng)
    inp, out_layout = (layout.split("_") * 2)[:2]
    n = c["q"].shape[1]
    forms = {
        "BNSD": lambda x: x, "BSND": lambda x: x.transpose(0, 2, 1, 3),
        "BSH": lambda x: x.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], -1),
        "NBSD": lambda x: x.transpose(1, 0, 2, 3),
    }  # fmt: skip
    out = np.zeros(forms[out_layout](c["q"]).shape, np.float16)
    v4(
        query=forms[inp](c["q"]).copy(), key=[forms[inp](c["k"]).copy()], value=[forms[inp](c["v"]).copy()],
        numHeads=n, numKeyValueHeads=2, inputLayout=layout, actualSeqLengthsOptional=c["q_lens"],
        actualSeqLengthsKvOptional=c["kv_lens"], attentionOut=out,
    )  # fmt: skip
    assert_rounded(out, forms[out_layout](dense_reference(c, 0, 0, 0, False)[0]), atol=2e-5)


def test_tnd_dense_cumulative_kv_and_ntd_output() -> None:
    rng = np.random.default_rng(SEED + 6)
    q_lens, kv_lens, heads, d = [2, 0, 3], [4, 2, 3], 2, 16
    q, k, v = rand(rng, (5, heads, d)), rand(rng, (9, 1, d)), rand(rng, (9, 1, d))
    out = np.zeros((heads, 5, d), np.float16)
    v4(
        query=q, key=[k], value=[v], actualSeqLengthsOptional=[2, 2, 5], actualSeqLengthsKvOptional=[4, 6, 9],
        numHeads=heads, numKeyValueHeads=1, inputLayout="TND_NTD", sparseMode=3,
        attenMaskOptional=np.triu(np.ones((2048, 2048), bool), 1), attentionOut=out,
    )  # fmt: skip
    qs, ks = 0, 0
    for sq, skv in zip(q_lens, kv_lens, strict=True):
        for n in range(heads):
            o, _ = attention(
                q[qs : qs + sq, n], k[ks : ks + skv, 0], v[ks : ks + skv, 0], 0.125, allowed(3, 0, 0, sq, skv, None)
            )
            assert_rounded(out[n, qs : qs + sq], o, atol=2e-5)
        qs, ks = qs + sq, ks + skv


def test_tensor_list_kv_and_kv_left_padding() -> None:
    rng = np.random.default_rng(SEED + 7)
    q = rand(rng, (2, 1, 4, 16))  # BSND, decode
    keys = [rand(rng, (1, 6, 4, 16)), rand(rng, (1, 11, 4, 16))]
    values = [rand(rng, (1, 6, 4, 16)), rand(rng, (1, 11, 4, 16))]
    out = np.zeros_like(q)
    v4(query=q, key=keys, value=values, numHeads=4, inputLayout="BSND", attentionOut=out)
    for b in range(2):
        for n in range(4):
            assert_rounded(
                out[b, 0, n], attention(q[b, :, n], keys[b][0, :, n], values[b][0, :, n], 0.125)[0][0], atol=2e-5
            )
    k, v = rand(rng, (2, 4, 12, 16)), rand(rng, (2, 4, 12, 16))
    qb = q.transpose(0, 2, 1, 3).copy()
    out = np.zeros_like(qb)
    v4(
        query=qb, key=[k], value=[v], actualSeqLengthsKvOptional=[5, 3], kvPaddingSizeOptional=np.array([2]),
        numHeads=4, attentionOut=out,
    )  # fmt: skip
    for b, length in enumerate([5, 3]):
        for n in range(4):
            window = slice(12 - 2 - length, 12 - 2)
            assert_rounded(out[b, n], attention(qb[b, n], k[b, n, window], v[b, n, window], 0.125)[0], atol=2e-5)
