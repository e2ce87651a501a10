"""ReduceSum and Mean: dims (none, one, several, negative), keepDim, result dtypes, integer wrap, empty input."""

from __future__ import annotations

import numpy as np
import pytest
from aclnn_testkit import FakeMemory, close, sample

import proto.aclnn as nn
from proto.constants import aclDataType
from server.npu.ops.dtypes import NUMPY

DT = aclDataType
F32, F16, BF16, F64 = DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE
S8, S32, S64, U8, BOOL = DT.ACL_INT8, DT.ACL_INT32, DT.ACL_INT64, DT.ACL_UINT8, DT.ACL_BOOL
DIMS = [(), (0,), (-1,), (0, 2), (2, 1, 0)]


def reduce(
    mem: FakeMemory,
    name: str,
    x: np.ndarray,
    dtype: aclDataType,
    dims: tuple[int, ...],
    keep: bool,
    result: aclDataType,
) -> np.ndarray:
    axes = tuple(d % x.ndim for d in dims) if dims else tuple(range(x.ndim))
    shape = (
        tuple(1 if i in axes else n for i, n in enumerate(x.shape))
        if keep
        else tuple(n for i, n in enumerate(x.shape) if i not in axes)
    )
    out = mem.empty(shape, result, step=2)
    phase1 = nn.aclnnReduceSumGetWorkspaceSize if name == "ReduceSum" else nn.aclnnMeanGetWorkspaceSize
    size = mem.launch(
        phase1, mem.tensor(x, dtype, order=(1, 2, 0)), nn.aclCreateIntArray(list(dims)), keep, result, out
    )
    assert size == 0
    return mem.read(out)


@pytest.mark.parametrize("dims", DIMS, ids=str)
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("dtype", [F32, F16, BF16, F64], ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["ReduceSum", "Mean"])
def test_float_reductions(
    mem: FakeMemory, rng: np.random.Generator, name: str, dtype: aclDataType, keep: bool, dims: tuple[int, ...]
) -> None:
    x = sample(rng, (3, 4, 5), dtype)
    got = reduce(mem, name, x, dtype, dims, keep, dtype)
    axes = tuple(d % 3 for d in dims) if dims else None
    fn = np.sum if name == "ReduceSum" else np.mean
    close(got, fn(x.astype(np.float64), axis=axes, keepdims=keep), dtype, rtol=1e-5 if dtype == F32 else None)


@pytest.mark.parametrize(
    ("dtype", "result"),
    [(S8, S64), (S8, S8), (U8, S32), (BOOL, S64), (S32, F32), (F32, S32), (BOOL, BOOL), (F16, F32)],
)
def test_sum_casts_the_input_to_the_result_dtype_first(
    mem: FakeMemory, rng: np.random.Generator, dtype: aclDataType, result: aclDataType
) -> None:
    x = sample(rng, (6, 7, 8), dtype)
    got = reduce(mem, "ReduceSum", x, dtype, (1, 2), False, result)
    cast = x.astype(NUMPY[result]) if NUMPY[result].kind in "iub" else x.astype(np.float64)
    want = cast.astype(np.int64).sum(axis=(1, 2)) if NUMPY[result].kind in "iu" else cast.sum(axis=(1, 2))
    close(got, want if result != BOOL else x.any(axis=(1, 2)), result)


def test_integer_sums_wrap(mem: FakeMemory) -> None:
    x = np.full((2, 2, 100), 100, np.int8)
    got = reduce(mem, "ReduceSum", x, S8, (2,), False, S8)
    np.testing.assert_array_equal(got, np.full((2, 2), 10000, np.int64).astype(np.int8))


def test_mean_of_integers_in_a_float_dtype(mem: FakeMemory, rng: np.random.Generator) -> None:
    x = sample(rng, (4, 3, 2), S32)
    close(reduce(mem, "Mean", x, S32, (0,), True, F32), x.mean(axis=0, keepdims=True), F32)


def test_reductions_of_scalars_and_empty_dims(mem: FakeMemory) -> None:
    scalar = mem.tensor(np.array(2.5, np.float32), F32)
    for dims in ([], [0], [-1]):
        out = mem.empty((), F32)
        mem.launch(nn.aclnnMeanGetWorkspaceSize, scalar, nn.aclCreateIntArray(dims), True, F32, out)
        assert mem.read(out)[()] == 2.5
    empty = mem.tensor(np.zeros((0, 3), np.float32), F32)
    mean, total = mem.empty((3,), F32), mem.empty((3,), F32)
    mem.launch(nn.aclnnMeanGetWorkspaceSize, empty, nn.aclCreateIntArray([0]), False, F32, mean)
    mem.launch(nn.aclnnReduceSumGetWorkspaceSize, empty, nn.aclCreateIntArray([0]), False, F32, total)
    assert np.isnan(mem.read(mean)).all()
    np.testing.assert_array_equal(mem.read(total), [0.0, 0.0, 0.0])
