"""Gelu (erf form), Silu and Softmax against float64 references; the erf fit against math.erf."""

from __future__ import annotations

import math

import numpy as np
import pytest
from aclnn_testkit import FakeMemory, close, sample

import proto.aclnn as nn
from proto.constants import aclDataType
from server.npu.ops import activation, run_kernel
from server.npu.ops.erf import erf

DT = aclDataType
F32, F16, BF16, F64 = DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE
FLOATS = [F32, F16, BF16, F64]
math_erf = np.frompyfunc(math.erf, 1, 1)


def gelu64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return x * 0.5 * (1.0 + math_erf(x / math.sqrt(2.0)).astype(np.float64))


def silu64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-x))


def test_erf_matches_math_erf_to_a_few_ulp(rng: np.random.Generator) -> None:
    x = np.concatenate([np.linspace(-7, 7, 200_001), rng.standard_normal(10_000) * 3, np.geomspace(1e-300, 1, 300)])
    want = math_erf(x).astype(np.float64)
    got = erf(x)
    assert np.max(np.abs(got - want)) < 2e-15
    small = (np.abs(x) < 0.5) & (x != 0)
    assert np.max(np.abs(got[small] - want[small]) / np.abs(want[small])) < 2e-15


def test_erf_of_special_values() -> None:
    got = erf(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 6.0, -30.0]))
    np.testing.assert_array_equal(got, [np.nan, 1.0, -1.0, 0.0, -0.0, 1.0, -1.0])
    assert math.copysign(1.0, got[4]) == -1.0


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize(("name", "fn"), [("Gelu", gelu64), ("Silu", silu64)])
def test_activations_over_float_dtypes(
    mem: FakeMemory, rng: np.random.Generator, name: str, fn: object, dtype: aclDataType
) -> None:
    x = sample(rng, (6, 7), dtype)
    out = mem.empty((6, 7), dtype, step=2)
    mem.launch(getattr(nn, f"aclnn{name}GetWorkspaceSize"), mem.tensor(x, dtype, order=(1, 0), offset=3), out)
    close(mem.read(out), fn(x), dtype)  # type: ignore[operator]


def test_gelu_runs_in_chunks_and_in_place(mem: FakeMemory, rng: np.random.Generator) -> None:
    count = activation.CHUNK * 3 + 17
    x = sample(rng, (count,), F32)
    t = mem.tensor(x, F32)
    mem.launch(nn.aclnnGeluGetWorkspaceSize, t, t)
    close(mem.read(t), gelu64(x), F32)


def test_a_half_result_rounds_before_a_wider_out(mem: FakeMemory, rng: np.random.Generator) -> None:
    x = sample(rng, (300,), F16)
    out = mem.empty((300,), F32)
    mem.launch(nn.aclnnGeluGetWorkspaceSize, mem.tensor(x, F16), out)
    np.testing.assert_array_equal(mem.read(out), gelu64(x).astype(np.float16).astype(np.float32))


def test_silu_at_the_extremes(mem: FakeMemory) -> None:
    x = mem.tensor(np.array([-1000.0, 1000.0, 0.0, np.nan], np.float32), F32)
    out = mem.empty((4,), F32)
    mem.launch(nn.aclnnSiluGetWorkspaceSize, x, out)
    got = mem.read(out)
    np.testing.assert_array_equal(got, [-0.0, 1000.0, 0.0, np.nan])
    assert math.copysign(1.0, got[0]) == -1.0


def softmax64(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_along_each_dim(mem: FakeMemory, rng: np.random.Generator, dtype: aclDataType, dim: int) -> None:
    x = sample(rng, (3, 4, 5), dtype) * 3
    out = mem.empty((3, 4, 5), dtype, order=(2, 1, 0))
    size = mem.launch(nn.aclnnSoftmaxGetWorkspaceSize, mem.tensor(x, dtype, step=2), dim, out)
    assert size == -(-60 * (8 if dtype == F64 else 4) // 512) * 512
    close(mem.read(out), softmax64(x, dim), dtype)


def test_softmax_normalizes_in_its_workspace(mem: FakeMemory, rng: np.random.Generator) -> None:
    x = sample(rng, (8, 16), F16)
    out = mem.empty((8, 16), F16)
    size, executor = nn.aclnnSoftmaxGetWorkspaceSize(mem.tensor(x, F16), 1, out)
    workspace = mem.region(mem.alloc(size), size)
    nn.consume(executor, "aclnnSoftmax")
    run_kernel(executor.kernel, mem.region, workspace)
    scratch = workspace[: 8 * 16 * 4].view(np.float32).reshape(8, 16)
    np.testing.assert_array_equal(scratch.astype(np.float16), mem.read(out))
    close(scratch, softmax64(x, 1), F32, rtol=1e-6)


def test_softmax_of_a_scalar_infinities_and_empty_tensors(mem: FakeMemory) -> None:
    scalar = mem.tensor(np.array(3.5, np.float32), F32)
    out = mem.empty((), F32)
    mem.launch(nn.aclnnSoftmaxGetWorkspaceSize, scalar, 0, out)
    assert mem.read(out)[()] == 1.0
    rows = mem.tensor(np.array([[-np.inf, 0.0], [-np.inf, -np.inf]], np.float32), F32)
    result = mem.empty((2, 2), F32)
    mem.launch(nn.aclnnSoftmaxGetWorkspaceSize, rows, -1, result)
    np.testing.assert_array_equal(mem.read(result), [[0.0, 1.0], [np.nan, np.nan]])
    empty = mem.empty((0, 3), F32)
    assert mem.launch(nn.aclnnSoftmaxGetWorkspaceSize, empty, 1, mem.empty((0, 3), F32)) == 0
