"""Index writes (InplaceScatterUpdate, ScatterNdUpdate, IndexPutImpl, IndexCopy) against loop references."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops.nn import index_update as iu
from tests.server.npu.ops.common.refkit import assert_rounded


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: type = np.float16) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def expect_invalid(argument: str, call: object, *args: object) -> None:
    with pytest.raises(AclError) as caught:
        call(*args)  # type: ignore[operator]
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID and caught.value.message.startswith(f"{argument}:")


@pytest.mark.parametrize("axis", [-2, 2, -1])
def test_inplace_scatter_update_kv_cache_pattern(axis: int) -> None:
    rng = np.random.default_rng(1)
    data = rand(rng, (3, 2, 8, 4))
    span = 2
    shape = [3, 2, 8, 4]
    shape[axis] = span
    updates = rand(rng, tuple(shape))
    indices = np.array([0, 5, 2] if axis != -1 else [1, 2, 0], np.int64)
    expected = data.copy()
    for i, start in enumerate(indices):
        for k in range(span):
            if axis in (-2, 2):
                expected[i, :, start + k, :] = updates[i, :, k, :]
            else:
                expected[i, :, :, start + k] = updates[i, :, :, k]
    iu.inplace_scatter_update(data, indices, updates, axis, None)
    assert (data == expected).all()
    pairs = np.array([[2, 6], [0, 1]], np.int32)  # 2-D indices: (batch, offset)
    part = rand(rng, (2, 2, 2, 4))
    iu.inplace_scatter_update(data, pairs, part, -2, None)
    assert (data[2, :, 6:8] == part[0]).all() and (data[0, :, 1:3] == part[1]).all()
    expect_invalid("indices", iu.inplace_scatter_update, data, np.array([0, 8, 0]), updates, axis, None)
    expect_invalid("axis", iu.inplace_scatter_update, data, indices, updates, 0, None)


def test_scatter_nd_update() -> None:
    rng = np.random.default_rng(2)
    var = rand(rng, (4, 5, 6), ml_dtypes.bfloat16)
    indices = np.array([[3, 1], [0, 4], [2, 2]], np.int32)
    updates = rand(rng, (3, 6), ml_dtypes.bfloat16)
    expected = var.copy()
    for row, (a, b) in enumerate(indices):
        expected[a, b] = updates[row]
    iu.scatter_nd_update(var, indices, updates, None)
    assert (var == expected).all()
    expect_invalid("indices", iu.scatter_nd_update, var, np.array([[4, 0]]), updates[:1], None)
    expect_invalid("updates", iu.scatter_nd_update, var, indices, updates[:2], None)


def test_index_put_impl_replace_accumulate_and_masks() -> None:
    rng = np.random.default_rng(3)
    base = rand(rng, (5, 4, 3))
    rows, cols = np.array([0, 4, -1, 0]), np.array([1, 2, 3, 1])  # (0, 1) appears twice
    values = rand(rng, (4, 3))
    self_ref = base.copy()
    iu.index_put_impl(self_ref, [rows, cols], values, True, False, None)
    expected = base.astype(np.float64)
    for r, c, v in zip(rows, cols, values, strict=True):
        expected[r, c] += v.astype(np.float64)
    assert_rounded(self_ref, expected)
    self_ref = base.copy()
    empty = np.zeros(0, np.int64)  # torch_npu's placeholder for an absent index: the whole axis
    iu.index_put_impl(self_ref, [empty, np.array([2])], np.array(7.0, np.float16), False, False, None)
    assert (self_ref[:, 2] == 7).all() and (self_ref[:, :2] == base[:, :2]).all()
    mask = rng.random((5, 4)) < 0.5
    self_ref = base.copy()
    iu.index_put_impl(self_ref, [mask], np.array(-1, np.float16), False, False, None)
    for r, c in itertools.product(range(5), range(4)):
        assert (self_ref[r, c] == (-1 if mask[r, c] else base[r, c])).all()
    counts = np.zeros(6, np.int32)
    iu.index_put_impl(counts, [np.array([1, 1, 5])], np.array([2, 3, 4], np.int32), True, False, None)
    assert counts.tolist() == [0, 5, 0, 0, 0, 4]
    expect_invalid("indices", iu.index_put_impl, base.copy(), [np.array([5])], values[0], False, False, None)
    expect_invalid("values", iu.index_put_impl, base.copy(), [rows], values[:2], False, False, None)


def test_index_copy() -> None:
    rng = np.random.default_rng(4)
    target = rand(rng, (3, 6, 2), np.float32)
    source = rand(rng, (3, 2, 2), np.float32)
    index = np.array([4, 0])
    expected = target.copy()
    expected[:, 4], expected[:, 0] = source[:, 0], source[:, 1]
    out = np.zeros_like(target)
    iu.index_copy(target, 1, index, source, out, None)
    assert (out == expected).all()
    iu.inplace_index_copy(target, -2, index, source, None)
    assert (target == expected).all()
    expect_invalid("index", iu.inplace_index_copy, target, 1, np.array([6, 0]), source, None)
    expect_invalid("dim", iu.inplace_index_copy, target, 3, index, source, None)
