"""Cast between every pair of supported dtypes, float → int truncation, and InplaceCopy with broadcasting."""

from __future__ import annotations

import numpy as np
import pytest
from aclnn_testkit import FakeMemory, close, sample

import proto.aclnn as nn
from proto.aclnn.dtypes import ALL
from proto.constants import aclDataType
from server.npu.ops.dtypes import NUMPY

DT = aclDataType
F32, F16, F64, S8, S32, U8, BOOL = (
    DT.ACL_FLOAT,
    DT.ACL_FLOAT16,
    DT.ACL_DOUBLE,
    DT.ACL_INT8,
    DT.ACL_INT32,
    DT.ACL_UINT8,
    DT.ACL_BOOL,
)
PAIRS = [(a, b) for a in sorted(ALL) for b in sorted(ALL)]


@pytest.mark.parametrize(("src", "dst"), PAIRS, ids=lambda d: d.name[4:])
def test_cast_every_pair(mem: FakeMemory, rng: np.random.Generator, src: aclDataType, dst: aclDataType) -> None:
    values = rng.integers(0, 100, (4, 6))
    values[0, :3] = [0, 1, 0]
    x = values.astype(bool) if src == BOOL else values.astype(NUMPY[src])
    out = mem.empty((4, 6), dst, order=(1, 0))
    mem.launch(nn.aclnnCastGetWorkspaceSize, mem.tensor(x, src, step=2), dst, out)
    np.testing.assert_array_equal(mem.read(out), x.astype(NUMPY[dst]))


def test_float_to_int_truncates_toward_zero(mem: FakeMemory) -> None:
    x = mem.tensor(np.array([-2.7, -0.5, 0.5, 2.7, 127.9], np.float32), F32)
    out = mem.empty((5,), S8)
    mem.launch(nn.aclnnCastGetWorkspaceSize, x, S8, out)
    np.testing.assert_array_equal(mem.read(out), [-2, 0, 0, 2, 127])
    flags = mem.empty((5,), BOOL)
    mem.launch(nn.aclnnCastGetWorkspaceSize, x, BOOL, flags)
    np.testing.assert_array_equal(mem.read(flags), [True] * 5)


def test_cast_rounds_to_nearest_half(mem: FakeMemory, rng: np.random.Generator) -> None:
    x = sample(rng, (100,), F64)
    out = mem.empty((100,), F16)
    mem.launch(nn.aclnnCastGetWorkspaceSize, mem.tensor(x, F64), F16, out)
    np.testing.assert_array_equal(mem.read(out), x.astype(np.float16))


def test_inplace_copy_broadcasts_and_converts(mem: FakeMemory, rng: np.random.Generator) -> None:
    src = sample(rng, (3,), F32)
    dst = mem.empty((2, 3), F16, step=2, offset=1)
    mem.launch(nn.aclnnInplaceCopyGetWorkspaceSize, dst, mem.tensor(src, F32, offset=2))
    close(mem.read(dst), np.broadcast_to(src, (2, 3)), F16)
    ints = mem.empty((2, 2), S32)
    mem.launch(nn.aclnnInplaceCopyGetWorkspaceSize, ints, mem.tensor(np.array([[1.9], [-1.9]]), F64))
    np.testing.assert_array_equal(mem.read(ints), [[1, 1], [-1, -1]])


def test_inplace_copy_onto_itself_and_transposed(mem: FakeMemory, rng: np.random.Generator) -> None:
    data = sample(rng, (3, 3), F64)
    x = mem.tensor(data, F64)
    mem.launch(nn.aclnnInplaceCopyGetWorkspaceSize, x, mem.alias(x, [3, 3], [3, 1], 0))
    np.testing.assert_array_equal(mem.read(x), data)
    target = mem.empty((3, 3), F64)
    mem.launch(nn.aclnnInplaceCopyGetWorkspaceSize, target, mem.alias(x, [3, 3], [1, 3], 0))
    np.testing.assert_array_equal(mem.read(target), data.T)
