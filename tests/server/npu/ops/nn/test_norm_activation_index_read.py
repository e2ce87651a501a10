"""RmsNorm, AddRmsNorm, LayerNorm, SwiGlu, Embedding, Gather, IndexSelect, Index against float64 references."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops.nn import activation, index_read, norm
from tests.server.npu.ops.common.refkit import assert_rounded

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.float16, BF16, np.float32]


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float16) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


def rms_reference(x: np.ndarray, gamma: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    rows = x.reshape(-1, gamma.size)
    rstd = np.array([1 / np.sqrt(sum(v * v for v in row) / row.size + eps) for row in rows])
    return (rows * rstd[:, None] * gamma.reshape(-1)).reshape(x.shape), rstd


@pytest.mark.parametrize("dtype", FLOATS)
def test_rms_norm(dtype: Any) -> None:
    rng = np.random.default_rng(1)
    x, gamma = rand(rng, (3, 5, 16), dtype), rand(rng, (16,), np.float32 if dtype != np.float32 else dtype)
    y, rstd = np.zeros_like(x), np.zeros((3, 5, 1), np.float32)
    norm.rms_norm(x, gamma, 1e-6, y, rstd, None)
    ref_y, ref_rstd = rms_reference(f64(x), f64(gamma), 1e-6)
    assert_rounded(y, ref_y, atol=1e-6)
    assert_rounded(rstd, ref_rstd.reshape(3, 5, 1), ulps=8)
    gamma2 = rand(rng, (5, 16), dtype)  # two normalized axes
    y2, rstd2 = np.zeros_like(x), np.zeros((3, 1, 1), np.float32)
    norm.rms_norm(x, gamma2, 1e-5, y2, rstd2, None)
    assert_rounded(y2, rms_reference(f64(x), f64(gamma2), 1e-5)[0], atol=1e-6)
    with pytest.raises(AclError) as caught:
        norm.rms_norm(x, rand(rng, (8,), dtype), 1e-6, y, None, None)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID and caught.value.message.startswith("gamma:")


@pytest.mark.parametrize("dtype", FLOATS)
def test_add_rms_norm(dtype: Any) -> None:
    rng = np.random.default_rng(2)
    x1, x2, gamma = rand(rng, (4, 32), dtype), rand(rng, (4, 32), dtype), rand(rng, (32,), dtype)
    y, rstd, x_out = np.zeros_like(x1), np.zeros((4, 1), np.float32), np.zeros_like(x1)
    norm.add_rms_norm(x1, x2, gamma, 1e-6, y, rstd, x_out, None)
    total = f64(x1) + f64(x2)
    ref_y, ref_rstd = rms_reference(total, f64(gamma), 1e-6)
    assert_rounded(y, ref_y, atol=1e-6)
    assert_rounded(rstd, ref_rstd.reshape(4, 1), ulps=8)
    assert_rounded(x_out, total, ulps=0.5)
    norm.add_rms_norm(x1, x2, gamma.reshape(1, 32), 1e-6, y, None, None, None)  # [1, D] gamma, no rstd/xOut
    assert_rounded(y, ref_y, atol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm(dtype: Any) -> None:
    rng = np.random.default_rng(3)
    x = (rand(rng, (2, 3, 4, 8), dtype).astype(np.float32) * 3 + 1).astype(dtype)
    weight, bias = rand(rng, (4, 8), dtype), rand(rng, (4, 8), dtype)
    out, mean, rstd = np.zeros_like(x), np.zeros((2, 3, 1, 1), dtype), np.zeros((2, 3, 1, 1), dtype)
    norm.layer_norm(x, (4, 8), weight, bias, 1e-5, out, mean, rstd, None)
    rows = f64(x).reshape(6, 32)
    ref_mean = np.array([sum(r) / 32 for r in rows])
    ref_rstd = np.array(
        [1 / np.sqrt(sum((v - m) ** 2 for v in r) / 32 + 1e-5) for r, m in zip(rows, ref_mean, strict=True)]
    )
    ref = ((rows - ref_mean[:, None]) * ref_rstd[:, None]).reshape(x.shape) * f64(weight) + f64(bias)
    assert_rounded(out, ref, atol=1e-5)
    assert_rounded(mean, ref_mean.reshape(2, 3, 1, 1), atol=1e-6)
    assert_rounded(rstd, ref_rstd.reshape(2, 3, 1, 1))
    norm.layer_norm_with_impl_mode(x, (8,), None, None, 1e-5, out, None, None, 1, None)
    rows = f64(x).reshape(-1, 8)
    plain = (rows - rows.mean(1, keepdims=True)) / np.sqrt(rows.var(1, keepdims=True) + 1e-5)
    assert_rounded(out, plain.reshape(x.shape), atol=1e-5)
    with pytest.raises(AclError) as caught:
        norm.layer_norm_with_impl_mode(x, (8,), None, None, 1e-5, out, None, None, 3, None)
    assert caught.value.message.startswith("implMode:")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [-1, 0])
def test_swi_glu(dtype: Any, dim: int) -> None:
    rng = np.random.default_rng(4)
    x = rand(rng, (6, 10), dtype) * 4
    shape = (3, 10) if dim == 0 else (6, 5)
    out = np.zeros(shape, dtype)
    activation.swi_glu(x, dim, out, None)
    v = f64(x)
    a, b = (v[:3], v[3:]) if dim == 0 else (v[:, :5], v[:, 5:])
    assert_rounded(out, a / (1 + np.exp(-a)) * b, atol=1e-6)
    with pytest.raises(AclError) as caught:
        activation.swi_glu(np.zeros((3, 5), dtype), -1, out, None)
    assert caught.value.message.startswith("x:")


def test_embedding_gather_index_select_index() -> None:
    rng = np.random.default_rng(5)
    weight = rand(rng, (10, 4), BF16)
    ids = np.array([[3, 0], [9, 3]], np.int64)
    out = np.zeros((2, 2, 4), BF16)
    index_read.embedding(weight, ids, out, None)
    for i in range(2):
        for j in range(2):
            assert (out[i, j] == weight[ids[i, j]]).all()
    with pytest.raises(AclError) as caught:
        index_read.embedding(weight, np.array([10]), np.zeros((1, 4), BF16), None)
    assert caught.value.message.startswith("indices:")

    table = rand(rng, (4, 5), np.float32)
    gidx = np.array([[0, 4, -1], [2, 1, 0]])
    gout = np.zeros((2, 3), np.float32)
    index_read.gather(table, 1, gidx, gout, None)
    assert gout.tolist() == [[table[i, gidx[i, j] % 5] for j in range(3)] for i in range(2)]
    with pytest.raises(AclError) as caught:
        index_read.gather(table, 1, np.array([[5]]), np.zeros((1, 1), np.float32), None)
    assert caught.value.message.startswith("index:")

    sel = np.zeros((4, 2), np.float32)
    index_read.index_select(table, -1, np.array([3, 1]), sel, None)
    assert (sel == table[:, [3, 1]]).all()
    with pytest.raises(AclError) as caught:
        index_read.index_select(table, 1, np.array([-1]), sel, None)
    assert caught.value.message.startswith("index:")

    cube = rand(rng, (3, 4, 5), np.float32)
    picked = np.zeros((2, 4), np.float32)
    index_read.index(cube, [np.array([2, 0]), np.zeros(0, np.int64), np.array([1, -1])], picked, None)
    assert (picked == np.stack([cube[2, :, 1], cube[0, :, 4]])).all()
    mask = cube[:, :, 0] > 0
    masked = np.zeros((int(mask.sum()), 5), np.float32)
    index_read.index(cube, [mask], masked, None)
    assert (masked == [cube[i, j] for i in range(3) for j in range(4) if mask[i, j]]).all()
