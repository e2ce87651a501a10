"""The sampler and glue kernels (ops-math and ops-nn) against float64 / loop references."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops.math import compare, fill, pointwise, random, reduce, shape, sort
from server.npu.ops.nn import activation, sampling
from tests.server.npu.ops.common.refkit import assert_rounded

BF16 = np.dtype(ml_dtypes.bfloat16)


def rand(rng: np.random.Generator, shape_: tuple[int, ...], dtype: Any = np.float16) -> np.ndarray:
    return rng.standard_normal(shape_).astype(dtype)


def f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


def expect_invalid(argument: str, kernel: Any, *args: Any) -> None:
    with pytest.raises(AclError) as caught:
        kernel(*args)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID and caught.value.message.startswith(f"{argument}:")


def test_comparisons() -> None:
    x = np.array([0.1, 1.0, -2.0, np.nan], np.float16)
    out = np.zeros(4, np.bool_)
    compare.FUNCTIONS["GtScalar"](x, 0.1, out, None)
    assert out.tolist() == [False, True, False, False]  # 0.1 is rounded to fp16 first, as torch does
    compare.FUNCTIONS["EqScalar"](x, 0.1, out, None)
    assert out.tolist() == [True, False, False, False]
    ints = np.array([1, 2, 3], np.int32)
    small = np.zeros(3, np.bool_)
    compare.FUNCTIONS["LtScalar"](ints, 2.5, small, None)
    assert small.tolist() == [True, True, False]
    a, b = np.array([[1.0], [3.0]], BF16), np.array([0.0, 1.0, 5.0], np.float32)
    grid = np.zeros((2, 3), np.bool_)
    compare.FUNCTIONS["GtTensor"](a, b, grid, None)
    assert grid.tolist() == [[True, False, False], [True, True, False]]
    compare.FUNCTIONS["EqTensor"](a, b, grid, None)
    assert grid.tolist() == [[False, True, False], [False, False, False]]
    expect_invalid("other", compare.FUNCTIONS["LtTensor"], a, np.zeros((3, 4), np.float32), grid, None)


@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32])
def test_pointwise(dtype: Any) -> None:
    rng = np.random.default_rng(1)
    x = (np.abs(rand(rng, (5, 6), np.float32)) + 0.1).astype(dtype)
    out = np.zeros_like(x)
    pointwise.rsqrt(x, out, None)
    assert_rounded(out, 1 / np.sqrt(f64(x)))
    pointwise.pow_tensor_scalar(x, 2.5, out, None)
    assert_rounded(out, f64(x) ** 2.5, ulps=2)
    y = rand(rng, (5, 6), dtype)
    pointwise.clamp(y, -0.5, 0.75, out, None)
    assert_rounded(out, np.clip(f64(y), f64(np.array(-0.5, dtype)), f64(np.array(0.75, dtype))), ulps=1)
    pointwise.clamp(y, None, 0.0, out, None)
    assert (out.astype(np.float64) <= 0).all()
    expect_invalid("clipValueMin", pointwise.clamp, y, None, None, out, None)
    target, divisor = rand(rng, (5, 6), dtype), (np.abs(rand(rng, (6,), dtype)).astype(np.float32) + 0.5).astype(dtype)
    expected = f64(target) / f64(divisor)
    pointwise.inplace_div(target, divisor, None)
    assert_rounded(target, expected)
    ints = np.array([2, -3, 4], np.int32)
    cubes = np.zeros(3, np.int32)
    pointwise.pow_tensor_scalar(ints, 3, cubes, None)
    assert cubes.tolist() == [8, -27, 64]
    expect_invalid("exponent", pointwise.pow_tensor_scalar, ints, -1, cubes, None)


def test_activations() -> None:
    rng = np.random.default_rng(2)
    x = rand(rng, (4, 9), BF16) * 3
    out = np.zeros_like(x)
    activation.sigmoid(x, out, None)
    assert_rounded(out, 1 / (1 + np.exp(-f64(x))))
    activation.log_softmax(x, -1, out, None)
    v = f64(x)
    shifted = v - v.max(1, keepdims=True)
    assert_rounded(out, shifted - np.log(np.exp(shifted).sum(1, keepdims=True)), atol=1e-6)


def test_reductions() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, (3, 7)).astype(np.float32)
    x[1, 5] = np.nan
    index = np.zeros(3, np.int64)
    reduce.arg_max(x, 1, False, index, None)
    expected = [int(next(j for j in range(7) if x[i, j] == np.nanmax(x[i]))) for i in (0, 2)]
    assert index.tolist() == [expected[0], 5, expected[1]]  # NaN is the maximum; ties go to the first
    values, where = np.zeros((3, 1), np.float32), np.zeros((3, 1), np.int64)
    reduce.max_dim(x, -1, True, values, where, None)
    assert where[:, 0].tolist() == index.tolist() and np.isnan(values[1, 0])
    whole = np.zeros((), np.float32)
    reduce.max_all(np.array([[1.0, 5.0], [2.0, -1.0]], np.float32), whole, None)
    assert whole == 5.0
    halves = rand(rng, (2, 50), np.float16)
    running = np.zeros_like(halves)
    reduce.cumsum(halves, 1, None, running, None)
    assert_rounded(running, np.cumsum(f64(halves), axis=1), atol=1e-5)
    wrapped = np.zeros(3, np.int8)
    reduce.cumsum(np.array([100, 100, 100], np.int8), 0, np.dtype(np.int8), wrapped, None)
    assert wrapped.tolist() == [100, -56, 44]


@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_topk(descending: bool) -> None:
    x = np.array([[3.0, np.nan, 1.0, 3.0, -2.0, 1.0]], np.float32)
    values, indices = np.zeros_like(x), np.zeros(x.shape, np.int64)
    sort.sort(x, True, -1, descending, values, indices, None)
    key = [(np.inf if np.isnan(v) else v, j) for j, v in enumerate(x[0])]
    ranked = sorted(range(6), key=lambda j: (-key[j][0], j) if descending else (key[j][0], j))
    assert indices[0].tolist() == ranked
    assert np.array_equal(values[0], x[0, ranked], equal_nan=True)
    top_v, top_i = np.zeros((1, 3), np.float32), np.zeros((1, 3), np.int64)
    sampling.topk(x, 3, 1, descending, True, top_v, top_i, None)
    assert top_i[0].tolist() == ranked[:3]
    expect_invalid("k", sampling.topk, x, 7, 1, True, True, top_v, top_i, None)


def test_apply_top_k_top_p() -> None:
    rng = np.random.default_rng(4)
    logits = rand(rng, (3, 12), np.float32) * 2
    p = np.array([0.9, 1.0, 0.3], np.float32)
    k = np.array([4, 0, 12], np.int32)
    out = np.zeros_like(logits)
    sampling.apply_top_k_top_p(logits, p, k, out, None)
    for b in range(3):
        row = f64(logits[b])
        keep = np.ones(12, bool)
        if 0 < k[b] < 12:
            keep &= row >= np.sort(row)[12 - k[b]]
        order = np.argsort(row, kind="stable")
        kept = np.where(keep, row, -np.inf)[order]
        probs = np.exp(kept - kept.max())
        probs /= probs.sum()
        drop_sorted = np.cumsum(probs) <= 1 - p[b]
        drop_sorted[-1] = False
        dropped = np.zeros(12, bool)
        dropped[order] = drop_sorted
        expected = np.where(keep & ~dropped, row, -np.inf)
        assert np.array_equal(out[b], expected.astype(np.float32))


def test_shapes() -> None:
    rng = np.random.default_rng(5)
    a, b = rand(rng, (2, 3)), rand(rng, (2, 1), np.float32)
    joined = np.zeros((2, 4), np.float32)
    shape.cat([a, np.zeros(0, np.float16), b], -1, joined, None)
    assert (joined == np.concatenate([f64(a), f64(b)], axis=1)).all()
    pieces = [np.zeros((2, 1), np.float16), np.zeros((2, 2), np.float16)]
    shape.split_with_size(a, [1, 2], 1, pieces, None)
    assert (pieces[0] == a[:, :1]).all() and (pieces[1] == a[:, 1:]).all()
    expect_invalid("splitSize", shape.split_with_size, a, [1, 1], 1, pieces, None)
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    part = np.zeros((2, 3, 2), np.int32)
    shape.slice_(x, 2, -3, 100, 2, part, None)
    assert (part == x[:, :, 1::2]).all()
    moved = np.zeros((4, 2, 3), np.int32)
    shape.permute(x, [2, 0, -2], moved, None)
    assert (moved == x.transpose(2, 0, 1)).all()
    tiled = np.zeros((2, 4, 6, 4), np.int32)
    shape.repeat(x, [2, 2, 2, 1], tiled, None)
    assert (tiled == np.tile(x, (2, 2, 2, 1))).all()


def test_fills_and_random() -> None:
    steps = np.zeros(5, np.float16)
    fill.arange(0.5, 3.0, 0.5, steps, None)
    assert steps.tolist() == [0.5, 1.0, 1.5, 2.0, 2.5]
    ints = np.zeros(4, np.int64)
    fill.arange(10, 2, -2, ints, None)
    assert ints.tolist() == [10, 8, 6, 4]
    expect_invalid("step", fill.arange, 0, 5, -1, ints, None)
    t = np.ones((2, 3), np.int8)
    fill.inplace_fill_scalar(t, 300, None)
    assert (t == np.int8(44)).all()  # 300 wraps into int8
    fill.inplace_zero(t, None)
    assert (t == 0).all()
    cond = np.array([[True], [False]])
    chosen = np.zeros((2, 3), np.float32)
    fill.s_where(cond, np.arange(3, dtype=np.float32), np.full((2, 1), -1, np.float16), chosen, None)
    assert chosen.tolist() == [[0, 1, 2], [-1, -1, -1]]
    logits = np.zeros((2, 3), BF16)
    fill.inplace_masked_fill_scalar(logits, np.array([True, False, True]), float("-inf"), None)
    assert np.isneginf(logits.astype(np.float32)[:, [0, 2]]).all() and (logits[:, 1] == 0).all()
    first, second = np.zeros(1000, np.float32), np.zeros(1000, np.float32)
    random.inplace_uniform(first, -2.0, 3.0, 42, 0, None)
    random.inplace_uniform(second, -2.0, 3.0, 42, 0, None)
    assert (first == second).all() and first.min() >= -2 and first.max() < 3 and abs(first.mean() - 0.5) < 0.2
    random.inplace_uniform(second, -2.0, 3.0, 42, 1, None)
    assert not (first == second).all()  # another offset: another part of the stream
    samples = np.full(4000, -1, np.float32)
    random.sim_thread_exponential(samples, 3000, 2.0, 7, 0, None)
    assert (samples[3000:] == -1).all() and samples[:3000].min() >= 0 and abs(samples[:3000].mean() - 0.5) < 0.05
    expect_invalid("lambd", random.sim_thread_exponential, samples, 10, 0.0, 7, 0, None)
