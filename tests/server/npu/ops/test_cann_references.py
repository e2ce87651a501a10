"""The conformance suite's float64 references (`examples/cann_ops/references*.py`, written apart from the kernels)
against vnpu's kernels on random data: a reference that agreed with nothing would judge nothing."""

from __future__ import annotations

from types import ModuleType

import ml_dtypes
import numpy as np
import pytest

from server.npu.ops.math.random import inplace_uniform, sim_thread_exponential
from server.npu.ops.transformer.rope import rope_with_sin_cos_cache
from tests.server.npu.ops.test_ops_dump import verdict_module


@pytest.mark.parametrize("neox", [True, False])
def test_the_rope_with_sin_cos_cache_reference(neox: bool) -> None:
    """vLLM's rotary embedding: 3 tokens, 2 query heads and 1 key head of 64 with rotaryDim 32 (the rest kept)."""
    verdict = verdict_module()
    rng = np.random.default_rng(5)
    positions = np.array([3, 0, 3], np.int64)
    query = rng.standard_normal((3, 128)).astype(ml_dtypes.bfloat16)
    key = rng.standard_normal((3, 64)).astype(ml_dtypes.bfloat16)
    cache = rng.standard_normal((4, 32)).astype(ml_dtypes.bfloat16)
    query_out, key_out = np.zeros_like(query), np.zeros_like(key)
    rope_with_sin_cos_cache(positions, query, key, cache, None, 64, neox, query_out, key_out, None)
    args = {"positions": positions, "queryIn": query, "keyIn": key, "cosSinCache": cache, "mropeSection": None,
            "headSize": 64, "isNeoxStyle": neox}  # fmt: skip
    want = verdict.REFERENCES["RopeWithSinCosCache"](args)
    assert verdict.agrees(query_out, verdict.rounded(want["queryOut"], "bfloat16"), "bfloat16")
    assert verdict.agrees(key_out, verdict.rounded(want["keyOut"], "bfloat16"), "bfloat16")
    np.testing.assert_array_equal(key_out[:, 32:], key[:, 32:])  # past rotaryDim: copied
    c, s = cache[3, :16].astype(np.float64), cache[3, 16:].astype(np.float64)
    x = query[0].astype(np.float64)
    first = x[0] * c[0] - x[16] * s[0] if neox else x[0] * c[0] - x[1] * s[0]
    assert np.isclose(want["queryOut"][0, 0], first)


def samples_module() -> ModuleType:
    verdict_module()  # puts examples/cann_ops on sys.path
    import samples  # type: ignore[import-not-found]

    return samples  # type: ignore[no-any-return]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_the_random_operators_are_judged_as_samples(dtype: type) -> None:
    """The kernels' samples pass (over 20 seeds: a test that rejects at p < 1e-4); what is not a sample of the
    launch's distribution fails: another parameter, a shift, a constant, a value outside the support, an element
    past count changed."""
    checks = samples_module().SAMPLES
    for seed in range(20):
        x = np.zeros(400, dtype)
        inplace_uniform(x, 2.4, 4.4, seed, 0, None)
        assert checks["InplaceUniform"]({"from": 2.4, "to": 4.4, "selfRef": np.zeros(400)}, x) == ""
        e = np.full(400, 7, dtype)
        sim_thread_exponential(e, 300, 0.5, seed, 4, None)
        given = {"count": 300, "lambd": 0.5, "selfRef": np.full(400, 7.0)}
        assert checks["SimThreadExponential"](given, e) == ""
    assert "Kolmogorov" in checks["SimThreadExponential"]({**given, "lambd": 1.0}, e)
    assert "Kolmogorov" in checks["InplaceUniform"]({"from": 2.4, "to": 5.4}, x)
    assert "Kolmogorov" in checks["InplaceUniform"]({"from": 2.4, "to": 4.4}, np.full(400, 3.4, dtype))
    assert "outside" in checks["InplaceUniform"]({"from": 2.0, "to": 4.0}, x)
    shifted = e.copy()
    shifted[:300] -= dtype(0.25)
    assert "outside" in checks["SimThreadExponential"](given, shifted)
    assert "past count" in checks["SimThreadExponential"]({**given, "count": 200}, e)


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_the_grouped_matmul_reference(kind: int) -> None:
    """Three fp16 groups of 5, 0 and 3 tokens over a [8+2, 16] x (the last 2 rows no group covers), biased."""
    from server.npu.ops.transformer.grouped_matmul import grouped_matmul_v5

    verdict = verdict_module()
    rng = np.random.default_rng(6)
    x = rng.standard_normal((10, 16)).astype(np.float16)
    weight = rng.standard_normal((3, 16, 4)).astype(np.float16)
    bias = rng.standard_normal((3, 4)).astype(np.float16)
    sizes = np.array([5, 0, 3])
    listed = [np.cumsum(sizes), sizes, np.stack([np.arange(3), sizes], axis=1)][kind].astype(np.int64)
    out = np.full((10, 4), 9, np.float16)
    none = [None] * 5
    grouped_matmul_v5(
        [x], [weight], [bias], *none, listed, None, None, None, 3, 0, kind, 0, None, [out], None, None, None
    )
    args = {"x": [x], "weight": [weight], "biasOptional": [bias], "groupListOptional": listed, "groupType": 0,
            "groupListType": kind, "actType": 0, "out": [np.full((10, 4), 9.0)]}  # fmt: skip
    want = verdict.REFERENCES["GroupedMatmulV5"](args)["out.0"]
    assert verdict.agrees(out, verdict.rounded(want, "float16"), "float16")
    first = x[0].astype(np.float64) @ weight[0].astype(np.float64) + bias[0]
    np.testing.assert_allclose(want[0], first)
    np.testing.assert_allclose(want[5], x[5].astype(np.float64) @ weight[2].astype(np.float64) + bias[2])
    assert (want[8:] == 9).all()


def test_the_quant_matmul_v5_per_block_reference() -> None:
    """The G-B mode's reference against the kernel: 2 tokens, k 512, n 256, blocks of [1, 128, 128]."""
    from server.npu.ops.nn.quant_matmul import quant_matmul_v5

    verdict = verdict_module()
    rng = np.random.default_rng(7)
    x1, x2 = rng.integers(-128, 128, (2, 512), np.int8), rng.integers(-128, 128, (256, 512), np.int8)
    s1, s2 = rng.uniform(1e-3, 1e-2, (2, 4)).astype(np.float32), rng.uniform(1e-3, 1e-2, (2, 4)).astype(np.float32)
    bias = rng.standard_normal(256).astype(np.float32)
    out = np.zeros((2, 256), ml_dtypes.bfloat16)
    size = 1 << 32 | 128 << 16 | 128
    quant_matmul_v5(x1, x2, s1, s2, None, None, None, None, bias, False, True, size, out, None)
    args = {"x1": x1, "x2": x2, "x1Scale": s1, "x2Scale": s2, "bias": bias, "transposeX1": False,
            "transposeX2": True, "groupSize": size, "out": np.zeros((2, 256))}  # fmt: skip
    want = verdict.REFERENCES["QuantMatmulV5"](args)["out"]
    assert verdict.agrees(out, verdict.rounded(want, "bfloat16"), "bfloat16")
    first = sum(float(x1[0, j * 128 : (j + 1) * 128].astype(np.int64) @ x2[0, j * 128 : (j + 1) * 128]) * s1[0, j]
                * s2[0, j] for j in range(4)) + bias[0]  # fmt: skip
    assert np.isclose(want[0, 0], first)
    assert np.isclose(verdict.REFERENCES["QuantMatmulV5"]({**args, "groupSize": 0})["out"][0, 0], first)


def test_the_quant_matmul_v5_k_group_reference() -> None:
    """The K-G mode's reference (int4 in INT32 words, UINT64 scales per 256 rows of k, yOffset) against the kernel."""
    from server.npu.ops.common.quant import pack_dequant_scale
    from server.npu.ops.nn.quant_matmul import quant_matmul_v5

    verdict = verdict_module()
    rng = np.random.default_rng(8)
    x1 = rng.integers(-128, 128, (2, 512), np.int8)
    x2 = rng.integers(-(2**31), 2**31, (512, 2), np.int64).astype(np.int32)
    scales = (rng.integers(16, 32, (2, 16)) * 2.0**-12).astype(np.float32)  # 5 significant bits: exact when packed
    s1, offset = rng.uniform(0.5, 1, (2, 1)).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    out = np.zeros((2, 16), np.float16)
    quant_matmul_v5(
        x1, x2, s1, pack_dequant_scale(scales), None, None, None, offset, None, False, False, 256, out, None
    )
    args = {"x1": x1, "x2": x2, "x1Scale": s1, "x2Scale": pack_dequant_scale(scales), "yOffset": offset,
            "groupSize": 256, "out": np.zeros((2, 16))}  # fmt: skip
    want = verdict.REFERENCES["QuantMatmulV5"](args)["out"]
    assert verdict.agrees(out, verdict.rounded(want, "float16"), "float16")
    low = ((x2[:, 0].astype(np.int64) & 0xF) ^ 8) - 8  # column 0: the low nibbles
    first = (float(x1[0].astype(np.float64) @ (low * np.repeat(scales[:, 0], 256))) + offset[0]) * s1[0, 0]
    assert np.isclose(want[0, 0], first)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_the_sync_batch_norm_gather_stats_reference(dtype: type) -> None:
    """Four devices' sums over 6 channels, fractional float counts (truncated): the four written tensors, the
    running ones updated from their values before the launch."""
    from server.npu.ops.nn.norm import sync_batch_norm_gather_stats

    verdict = verdict_module()
    rng = np.random.default_rng(8)
    total = rng.standard_normal((4, 6)).astype(dtype)
    square = rng.uniform(4, 8, (4, 6)).astype(dtype)
    counts = np.array([3.5, 2.0, 4.9, 1.2], np.float32)
    mean, var = rng.standard_normal(6).astype(dtype), rng.uniform(0.5, 2, 6).astype(dtype)
    args = {"totalSum": total, "totalSquareSum": square, "sampleCount": counts, "mean": mean.astype(np.float64),
            "variance": var.astype(np.float64), "momentum": 0.2, "eps": 1e-5}  # fmt: skip
    outputs = {"batchMean": np.zeros(6, dtype), "batchInvstd": np.zeros(6, dtype), "mean": mean, "variance": var}
    sync_batch_norm_gather_stats(total, square, counts, mean, var, 0.2, 1e-5, *list(outputs.values())[:2], None)
    want = verdict.REFERENCES["SyncBatchNormGatherStats"](args)
    name = np.dtype(dtype).name
    for key, got in outputs.items():
        assert verdict.agrees(got, verdict.rounded(want[key], name), name), key
    count = 3 + 2 + 4 + 1
    batch_mean = total.astype(np.float64).sum(0) / count
    np.testing.assert_allclose(want["batchMean"], batch_mean)
    np.testing.assert_allclose(want["mean"], args["mean"] * 0.8 + 0.2 * batch_mean)
