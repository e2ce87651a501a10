"""Matmul: torch.matmul shapes 1-D to 4-D with batch broadcasting, dtypes, strided operands, cubeMathType."""

from __future__ import annotations

import numpy as np
import pytest
from aclnn_testkit import FakeMemory, close, sample

import proto.aclnn as nn
from proto.constants import aclDataType
from server.npu.ops import run_kernel

DT = aclDataType
F32, F16, BF16 = DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16
SHAPES = [
    ((7,), (7,)),
    ((7,), (7, 5)),
    ((4, 7), (7,)),
    ((4, 7), (7, 5)),
    ((3, 4, 7), (7, 5)),
    ((4, 7), (2, 7, 5)),
    ((2, 1, 4, 7), (3, 7, 5)),
    ((2, 3, 4, 7), (1, 3, 7, 5)),
]


def launch_matmul(
    mem: FakeMemory,
    a: np.ndarray,
    b: np.ndarray,
    dtype: aclDataType,
    out_dtype: aclDataType,
    mode: int = 0,
    **layout: object,
) -> np.ndarray:
    out_shape = np.matmul(np.zeros(a.shape), np.zeros(b.shape)).shape
    out = mem.empty(out_shape, out_dtype)
    self_ = mem.tensor(a, dtype, **layout)  # type: ignore[arg-type]
    size = mem.launch(nn.aclnnMatmulGetWorkspaceSize, self_, mem.tensor(b, dtype), out, mode)
    assert size == -(-max(1, int(np.prod(out_shape))) * 4 // 512) * 512
    return mem.read(out)


@pytest.mark.parametrize(("a_shape", "b_shape"), SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=lambda d: d.name)
def test_matmul_shapes_and_dtypes(
    mem: FakeMemory, rng: np.random.Generator, a_shape: tuple[int, ...], b_shape: tuple[int, ...], dtype: aclDataType
) -> None:
    a, b = sample(rng, a_shape, dtype), sample(rng, b_shape, dtype)
    got = launch_matmul(mem, a, b, dtype, dtype)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.shape == want.shape
    close(got, want, dtype, rtol=1e-5 if dtype == F32 else None)


@pytest.mark.parametrize("dtype", [F16, BF16], ids=lambda d: d.name)
def test_half_inputs_with_a_float_out_keep_float32_precision(
    mem: FakeMemory, rng: np.random.Generator, dtype: aclDataType
) -> None:
    a, b = sample(rng, (5, 33), dtype), sample(rng, (33, 6), dtype)
    got = launch_matmul(mem, a, b, dtype, F32)
    close(got, np.matmul(a.astype(np.float64), b.astype(np.float64)), F32, rtol=1e-5)


def test_strided_and_transposed_operands(mem: FakeMemory, rng: np.random.Generator) -> None:
    a, b = sample(rng, (2, 6, 9), F32), sample(rng, (9, 4), F32)
    out = mem.empty((2, 6, 4), F32, order=(2, 1, 0), step=3)
    self_ = mem.tensor(a, F32, order=(2, 0, 1), step=2, offset=5)
    mat2 = mem.tensor(b, F32, order=(1, 0))
    mem.launch(nn.aclnnMatmulGetWorkspaceSize, self_, mat2, out, 1)
    close(mem.read(out), np.matmul(a.astype(np.float64), b), F32, rtol=1e-5)


def test_use_fp16_rounds_float_operands_to_half(mem: FakeMemory, rng: np.random.Generator) -> None:
    a = (1.0 + rng.random((4, 8)) * 1e-3).astype(np.float32)
    b = (1.0 + rng.random((8, 3)) * 1e-3).astype(np.float32)
    got = launch_matmul(mem, a, b, F32, F32, mode=2)
    rounded = np.matmul(a.astype(np.float16).astype(np.float64), b.astype(np.float16).astype(np.float64))
    close(got, rounded, F32, rtol=1e-6)
    assert np.max(np.abs(got - np.matmul(a.astype(np.float64), b))) > 1e-4  # float32 alone errs ~1e-6
    for mode in (0, 1, 3, 4):
        close(launch_matmul(mem, a, b, F32, F32, mode=mode), np.matmul(a.astype(np.float64), b), F32, rtol=1e-6)


def test_a_dot_product_ignores_cube_math_type(mem: FakeMemory, rng: np.random.Generator) -> None:
    a = (1.0 + rng.random(8) * 1e-3).astype(np.float32)
    got = launch_matmul(mem, a, a, F32, F32, mode=2)
    close(got, np.dot(a.astype(np.float64), a), F32, rtol=1e-6)


def test_the_product_accumulates_in_the_workspace(mem: FakeMemory, rng: np.random.Generator) -> None:
    a, b = sample(rng, (3, 5), BF16), sample(rng, (5, 2), BF16)
    out = mem.empty((3, 2), BF16)
    size, executor = nn.aclnnMatmulGetWorkspaceSize(mem.tensor(a, BF16), mem.tensor(b, BF16), out, 0)
    workspace = mem.region(mem.alloc(size), size)
    run_kernel(nn.consume(executor, "aclnnMatmul"), mem.region, workspace)
    scratch = workspace[:24].view(np.float32).reshape(3, 2)
    close(scratch, np.matmul(a.astype(np.float64), b.astype(np.float64)), F32, rtol=1e-6)
    np.testing.assert_array_equal(mem.read(out), scratch.astype(mem.read(out).dtype))


def test_an_empty_reduce_dim_gives_zeros(mem: FakeMemory) -> None:
    got = launch_matmul(mem, np.zeros((3, 0), np.float32), np.zeros((0, 2), np.float32), F32, F32)
    np.testing.assert_array_equal(got, np.zeros((3, 2)))
