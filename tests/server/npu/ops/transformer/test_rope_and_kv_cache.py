"""RoPE kernels and ScatterPaKvCache against float64 references written per element from the docs' formulas."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops.transformer import kv_cache, rope
from tests.server.npu.ops.common.refkit import assert_rounded

BF16 = np.dtype(ml_dtypes.bfloat16)


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float16) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def rotated(x: np.ndarray, mode: int) -> tuple[np.ndarray, np.ndarray]:
    """(part1, part2) of y = part1·cos + part2·sin, element by element along the last axis (float64)."""
    d = x.shape[-1]
    part1, part2 = np.array(x, np.float64), np.zeros(x.shape)
    for i in range(d):
        if mode == 0:
            part2[..., i] = -x[..., i + d // 2] if i < d // 2 else x[..., i - d // 2]
        elif mode == 1:
            part2[..., i] = -x[..., i + 1] if i % 2 == 0 else x[..., i - 1]
        elif mode == 2:
            q, k = d // 4, i // (d // 4)
            part2[..., i] = -x[..., i + q] if k in (0, 2) else x[..., i - q]
        else:
            source = 2 * i if i < d // 2 else 2 * (i - d // 2) + 1
            part1[..., i] = x[..., source]
            part2[..., i] = -x[..., 2 * i + 1] if i < d // 2 else x[..., 2 * (i - d // 2)]
    return part1, part2


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32])
def test_rotary_position_embedding_modes(mode: int, dtype: Any) -> None:
    rng = np.random.default_rng(mode)
    x = rand(rng, (2, 3, 4, 16), dtype)  # BSND
    cos, sin = rand(rng, (1, 3, 1, 16), dtype), rand(rng, (1, 3, 1, 16), dtype)
    out = np.zeros_like(x)
    rope.rotary_position_embedding(x, cos, sin, mode, out, None)
    part1, part2 = rotated(x.astype(np.float64), mode)
    assert_rounded(out, part1 * cos.astype(np.float64) + part2 * sin.astype(np.float64), atol=1e-6)


def test_rotary_errors() -> None:
    x = np.zeros((1, 1, 1, 6), np.float16)
    for mode, cos, argument in ((4, x, "mode"), (2, x, "x"), (0, np.zeros((1, 2, 1, 6), np.float16), "cos")):
        with pytest.raises(AclError) as caught:
            rope.rotary_position_embedding(x, cos, x, mode, np.zeros_like(x), None)
        assert caught.value.code == ACLNN_ERR_PARAM_INVALID and caught.value.message.startswith(f"{argument}:")


def test_apply_rotary_pos_emb_in_place() -> None:
    rng = np.random.default_rng(10)
    q, k = rand(rng, (2, 3, 4, 8), BF16), rand(rng, (2, 3, 1, 8), BF16)
    cos, sin = rand(rng, (2, 3, 1, 8), BF16), rand(rng, (2, 3, 1, 8), BF16)
    expected = [rotated(t.astype(np.float64), 0) for t in (q, k)]
    c, s = cos.astype(np.float64), sin.astype(np.float64)
    rope.apply_rotary_pos_emb(q, k, cos, sin, 1, None)
    for got, (part1, part2) in zip((q, k), expected, strict=True):
        assert_rounded(got, part1 * c + part2 * s, atol=1e-6)


@pytest.mark.parametrize("neox", [True, False])
@pytest.mark.parametrize("mrope", [False, True])
def test_rope_with_sin_cos_cache(neox: bool, mrope: bool) -> None:
    rng = np.random.default_rng(11)
    tokens, head, rotary = 5, 16, 8
    cache = rand(rng, (20, rotary), np.float32)
    positions = rng.integers(0, 20, (3, tokens) if mrope else (tokens,))
    section = (2, 1, 1)
    q, k = rand(rng, (tokens, 2 * head), np.float32), rand(rng, (tokens, head), np.float32)
    qo, ko = np.zeros_like(q), np.zeros_like(k)
    rope.rope_with_sin_cos_cache(positions, q, k, cache, section if mrope else None, head, neox, qo, ko, None)
    for x, got in ((q, qo), (k, ko)):
        expected = x.astype(np.float64).copy()
        for t in range(tokens):
            if mrope:
                row = [int(positions[0 if j < 2 else 1 if j < 3 else 2, t]) for j in range(4)]
                cos = np.array([cache[row[j], j] for j in range(4)], np.float64)
                sin = np.array([cache[row[j], 4 + j] for j in range(4)], np.float64)
            else:
                cos, sin = cache[positions[t], :4].astype(np.float64), cache[positions[t], 4:].astype(np.float64)
            for h in range(x.shape[1] // head):
                base = h * head
                for j in range(4):
                    a, b = (base + j, base + j + 4) if neox else (base + 2 * j, base + 2 * j + 1)
                    expected[t, a] = x[t, a] * cos[j] - x[t, b] * sin[j]
                    expected[t, b] = x[t, b] * cos[j] + x[t, a] * sin[j]
        assert_rounded(got, expected, atol=1e-6)
    with pytest.raises(AclError) as caught:
        rope.rope_with_sin_cos_cache(positions + 20, q, k, cache, section if mrope else None, head, neox, qo, ko, None)
    assert caught.value.message.startswith("positions:")


def test_interleave_rope() -> None:
    rng = np.random.default_rng(12)
    x, cos, sin = rand(rng, (2, 3, 4, 16)), rand(rng, (2, 1, 4, 16)), rand(rng, (2, 1, 4, 16))
    out = np.zeros_like(x)
    rope.interleave_rope(x, cos, sin, out, None)
    part1, part2 = rotated(x.astype(np.float64), 3)  # de-interleave then rotate half == interleave-half mode
    assert_rounded(out, part1 * cos.astype(np.float64) + part2 * sin.astype(np.float64), atol=1e-6)


def kv_call(**given: Any) -> None:
    args: dict[str, Any] = dict.fromkeys(
        ("value", "valueCacheRef", "compressLensOptional", "compressSeqOffsetOptional", "seqLensOptional",
         "cacheModeOptional", "scatterModeOptional", "stridesOptional", "offsetsOptional", "workspace")
    )  # fmt: skip
    args.update(given)
    kv_cache.scatter_pa_kv_cache(**args)


@pytest.mark.parametrize("mode", ["Norm", "PA_NZ"])
def test_scatter_pa_kv_cache(mode: str) -> None:
    rng = np.random.default_rng(13)
    blocks, block_size, heads, dk, dv, tokens = 6, 4, 2, 16, 8, 7
    key, value = rand(rng, (tokens, heads, dk)), rand(rng, (tokens, heads, dv))
    slots = rng.permutation(blocks * block_size)[:tokens].astype(np.int32)
    slots[3] = -1  # a padding token: skipped
    if mode == "Norm":
        kc, vc = rand(rng, (blocks, block_size, heads, dk)), rand(rng, (blocks, block_size, heads, dv))
    else:
        kc, vc = rand(rng, (blocks, heads * dk // 16, block_size, 16)), rand(rng, (blocks, 1, block_size, 16))
    expect_k, expect_v = kc.copy(), vc.copy()
    for t, slot in enumerate(slots):
        if slot < 0:
            continue
        b, r = divmod(int(slot), block_size)
        if mode == "Norm":
            expect_k[b, r], expect_v[b, r] = key[t], value[t]
        else:
            flat_k, flat_v = key[t].reshape(-1), value[t].reshape(-1)
            for i in range(flat_k.size):
                expect_k[b, i // 16, r, i % 16] = flat_k[i]
            for i in range(flat_v.size):
                expect_v[b, i // 16, r, i % 16] = flat_v[i]
    kv_call(key=key, keyCacheRef=kc, slotMapping=slots, value=value, valueCacheRef=vc, cacheModeOptional=mode)
    assert (kc == expect_k).all() and (vc == expect_v).all()
    kv_call(key=key[:2], keyCacheRef=kc, slotMapping=slots[:2] * 0, cacheModeOptional=mode)  # keys only
    with pytest.raises(AclError) as caught:
        kv_call(key=key[:1], keyCacheRef=kc, slotMapping=np.array([blocks * block_size]), cacheModeOptional=mode)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID and caught.value.message.startswith("slotMapping:")
    with pytest.raises(AclError) as caught:
        kv_call(key=key, keyCacheRef=kc, slotMapping=slots, scatterModeOptional="Alibi")
    assert caught.value.message.startswith("scatterModeOptional:")
