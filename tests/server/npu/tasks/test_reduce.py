"""aclrtReduceAsync (spec-breadth 15): SUM, MAX and MIN over random data of every type the SoC reduces, against
a float64 reference rounded once to the type; the runtime's checks and codes; a captured reduce at each replay."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from proto.constants import aclDataType, aclmdlRICaptureMode, aclrtReduceKind
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu import Runtime
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import download, upload

DT, K = aclDataType, aclrtReduceKind
TYPES = {
    DT.ACL_FLOAT: np.float32,
    DT.ACL_FLOAT16: np.float16,
    DT.ACL_BF16: ml_dtypes.bfloat16,
    DT.ACL_INT8: np.int8,
    DT.ACL_INT16: np.int16,
    DT.ACL_INT32: np.int32,
}
REFERENCE = {K.ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM: np.add, K.ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX: np.maximum,
             K.ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN: np.minimum}  # fmt: skip
N = 96


def random_of(rng: np.random.Generator, dtype: type) -> np.ndarray:
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(-60, 60, N).astype(dtype)  # no sum leaves the type's range
    return (rng.standard_normal(N) * 8).astype(dtype)


@pytest.mark.parametrize("kind", list(REFERENCE), ids=lambda k: k.name.rsplit("_", 1)[-1])
@pytest.mark.parametrize("data_type", list(TYPES), ids=lambda t: t.name)
async def test_reduce_matches_float64(rt: Runtime, data_type: aclDataType, kind: aclrtReduceKind) -> None:
    dtype = TYPES[data_type]
    rng = np.random.default_rng(int(data_type) * 31 + int(kind))
    a, b = random_of(rng, dtype), random_of(rng, dtype)
    dst, src = upload(rt, a), upload(rt, b)
    stream = rt.aclrtCreateStream()
    rt.aclrtReduceAsync(dst, src, a.nbytes, kind, data_type, stream, None)
    await rt.aclrtSynchronizeStream(stream)
    expected = REFERENCE[kind](a.astype(np.float64), b.astype(np.float64)).astype(dtype)  # rounded once
    got = download(rt, dst, (N,), dtype)
    np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))
    np.testing.assert_array_equal(download(rt, src, (N,), dtype), b)  # src is read only


async def test_reduce_checks(rt: Runtime) -> None:
    dst, src = rt.aclrtMalloc(64, 0), rt.aclrtMalloc(64, 0)
    host = rt.aclrtMallocHost(64)
    f32, add = DT.ACL_FLOAT, K.ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtReduceAsync, 0, src, 64, add, f32, None, None)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtReduceAsync, dst, 0, 64, add, f32, None, None)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtReduceAsync, dst, src, 64, add, f32, None, 0x10)  # reserve
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtReduceAsync, dst, src, 64, add, DT.ACL_DOUBLE, None, None)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtReduceAsync, dst, src, 0, add, f32, None, None)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtReduceAsync, dst, src, 64, 9, f32, None, None)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtReduceAsync, dst, src, 5 << 30, add, f32, None, None)  # over 4 GiB
    error = fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtReduceAsync, dst, src, 64, add, DT.ACL_UINT8, None, None)
    assert "ACL_UINT8" in error.message  # the ACL layer takes it, the SoC does not
    equal = K.ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtReduceAsync, dst, src, 64, equal, f32, None, None)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtReduceAsync, dst, src, 62, add, f32, None, None)  # not whole floats
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtReduceAsync, dst, src, 128, add, f32, None, None)  # past the end
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtReduceAsync, host, src, 64, add, f32, None, None)
    assert "device memory" in error.message


async def test_a_reduce_from_freed_memory_fails_when_it_runs(rt: Runtime) -> None:
    dst, src = upload(rt, np.ones(16, np.float32)), rt.aclrtMalloc(64, 0)
    stream = rt.aclrtCreateStream()
    gate = rt.aclrtCreateEvent()
    rt.aclrtStreamWaitEvent(stream, gate)
    rt.aclrtReduceAsync(dst, src, 64, K.ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, DT.ACL_FLOAT, stream, None)
    rt.aclrtFree(src)
    rt.aclrtRecordEvent(gate, None)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(stream)
    assert info.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR
    np.testing.assert_array_equal(download(rt, dst, (16,), np.float32), np.ones(16))  # nothing was written


async def test_a_captured_reduce_runs_at_each_replay(rt: Runtime) -> None:
    rng = np.random.default_rng(5)
    b = rng.standard_normal(N).astype(np.float32)
    dst, src = upload(rt, np.zeros(N, np.float32)), upload(rt, b)
    stream = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(stream, aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    rt.aclrtReduceAsync(dst, src, b.nbytes, K.ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, DT.ACL_FLOAT, stream, None)
    model = rt.aclmdlRICaptureEnd(stream)
    expected = np.zeros(N, np.float32)
    for _ in range(3):
        rt.aclmdlRIExecuteAsync(model, stream)
        expected = (expected.astype(np.float64) + b).astype(np.float32)
    await rt.aclrtSynchronizeStream(stream)
    np.testing.assert_array_equal(download(rt, dst, (N,), np.float32), expected)
