"""The seed scenario of the CANN "task update" page (spec section 2), both forms, on the device directly."""

from __future__ import annotations

import numpy as np
import pytest

from proto.aclnn import aclCreateScalar, aclnnAddGetWorkspaceSize
from proto.constants import (
    ACL_EVENT_EXTERNAL,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
    aclDataType,
)
from proto.errors import ACL_ERROR_RT_INTERNAL_ERROR, AclError
from server.npu import Runtime
from tests.server.npu.devicekit import pinned, tensor_at

F32 = aclDataType.ACL_FLOAT
SHAPE = (4, 2)
N = 8
SIZE = N * 4
RNG = np.random.default_rng(2024)


class Seed:
    """The buffers, tensors and model of the seed example: in the capture, self and other are copied from pinned
    host memory, outtmp = self + 1.1*other, then (in a task group) out = outtmp + alpha*other, then out is
    copied back to pinned host memory. With `concurrent`, the group waits on an EXTERNAL event first."""

    def __init__(self, rt: Runtime, concurrent: bool) -> None:
        self.rt = rt
        self.concurrent = concurrent
        self.self_d, self.other_d, self.out_d, self.tmp_d = (rt.aclrtMalloc(SIZE, 0) for _ in range(4))
        self.self_t, self.other_t, self.out_t, self.tmp_t = (
            tensor_at(p, SHAPE, F32) for p in (self.self_d, self.other_d, self.out_d, self.tmp_d)
        )
        self.self_h, self.other_h, self.out_h = (rt.aclrtMallocHost(SIZE) for _ in range(3))
        self.stream1 = rt.aclrtCreateStream()
        self.update_stream = rt.aclrtCreateStream()
        self.event = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL) if concurrent else 0

    async def capture(self) -> None:
        rt, s1 = self.rt, self.stream1
        alpha = aclCreateScalar(1.1, F32)
        ws, executor = aclnnAddGetWorkspaceSize(self.self_t, self.other_t, alpha, self.tmp_t)
        ws1, executor1 = aclnnAddGetWorkspaceSize(self.tmp_t, self.other_t, alpha, self.out_t)
        rt.aclmdlRICaptureBegin(s1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        await rt.aclrtMemcpyAsync(self.self_d, SIZE, self.self_h, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, s1)
        await rt.aclrtMemcpyAsync(self.other_d, SIZE, self.other_h, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, s1)
        rt.aclnnAdd(0, ws, executor, s1)
        if self.concurrent:
            rt.aclrtStreamWaitEvent(s1, self.event)
            rt.aclrtResetEvent(self.event, s1)
        rt.aclmdlRICaptureTaskGrpBegin(s1)
        rt.aclnnAdd(0, ws1, executor1, s1)
        self.handle = rt.aclmdlRICaptureTaskGrpEnd(s1)
        await rt.aclrtMemcpyAsync(self.out_h, SIZE, self.out_d, SIZE, ACL_MEMCPY_DEVICE_TO_HOST, s1)
        self.model = rt.aclmdlRICaptureEnd(s1)

    def update(self, alpha_value: float, stream: int) -> None:
        """Update the group's Add to `alpha_value` (a fresh executor from a new phase 1, as the seed does)."""
        ws, executor = aclnnAddGetWorkspaceSize(self.tmp_t, self.other_t, aclCreateScalar(alpha_value, F32), self.out_t)
        self.rt.aclmdlRICaptureTaskUpdateBegin(stream, self.handle)
        self.rt.aclnnAdd(0, ws, executor, stream)
        self.rt.aclmdlRICaptureTaskUpdateEnd(stream)

    def host(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return pinned(self.rt, self.self_h, N), pinned(self.rt, self.other_h, N), pinned(self.rt, self.out_h, N)


def expected(self_h: np.ndarray, other_h: np.ndarray, alpha: float) -> np.ndarray:
    s, o = self_h.astype(np.float64), other_h.astype(np.float64)
    return s + np.float64(np.float32(1.1)) * o + np.float64(np.float32(alpha)) * o


async def test_seed_concurrent_form_exactly_as_the_c_example(rt: Runtime) -> None:
    seed = Seed(rt, concurrent=True)
    self_h, other_h, out_h = seed.host()
    self_h[:], other_h[:], out_h[:] = 0, 1, 0
    await seed.capture()
    assert out_h.sum() == 0  # captured, not run
    for i in range(2):
        rt.aclmdlRIExecuteAsync(seed.model, seed.stream1)
        rt.aclmdlRICaptureTaskUpdateBegin(seed.update_stream, seed.handle)
        if i == 1:
            ws, ex = aclnnAddGetWorkspaceSize(seed.tmp_t, seed.other_t, aclCreateScalar(5.5, F32), seed.out_t)
            rt.aclnnAdd(0, ws, ex, seed.update_stream)
            rt.aclmdlRICaptureTaskUpdateEnd(seed.update_stream)
        else:
            # the C sample does an empty update at iteration 0 and ignores the result: the runtime refuses it
            with pytest.raises(AclError) as info:
                rt.aclmdlRICaptureTaskUpdateEnd(seed.update_stream)
            assert info.value.code == ACL_ERROR_RT_INTERNAL_ERROR and "unupdated" in info.value.message
        rt.aclrtRecordEvent(seed.event, seed.update_stream)
        await rt.aclrtSynchronizeStream(seed.update_stream)
        await rt.aclrtSynchronizeStream(seed.stream1)
        want = 2.2 if i == 0 else 6.6
        np.testing.assert_allclose(out_h, np.full(N, want), rtol=1e-6)


async def test_seed_concurrent_form_many_iterations_alternating(rt: Runtime) -> None:
    seed = Seed(rt, concurrent=True)
    await seed.capture()
    self_h, other_h, out_h = seed.host()
    for i in range(40):
        alpha = (1.1, 5.5, -2.25, 0.5)[i % 4]
        self_h[:] = RNG.standard_normal(N)
        other_h[:] = RNG.standard_normal(N)
        rt.aclmdlRIExecuteAsync(seed.model, seed.stream1)  # blocks on the event until the update is recorded
        seed.update(alpha, seed.update_stream)
        rt.aclrtRecordEvent(seed.event, seed.update_stream)
        await rt.aclrtSynchronizeStream(seed.update_stream)
        await rt.aclrtSynchronizeStream(seed.stream1)
        np.testing.assert_allclose(out_h, expected(self_h, other_h, alpha), rtol=1e-5, atol=1e-6)


async def test_seed_update_then_execute_on_one_stream(rt: Runtime) -> None:
    seed = Seed(rt, concurrent=False)
    await seed.capture()
    self_h, other_h, out_h = seed.host()
    s = seed.stream1
    for i in range(20):
        alpha = 5.5 if i % 2 else 1.1
        self_h[:] = RNG.standard_normal(N)
        other_h[:] = RNG.standard_normal(N)
        seed.update(alpha, s)  # applied by a task on s, before the replay queued after it
        rt.aclmdlRIExecuteAsync(seed.model, s)
        await rt.aclrtSynchronizeStream(s)
        np.testing.assert_allclose(out_h, expected(self_h, other_h, alpha), rtol=1e-5, atol=1e-6)


async def test_updates_persist_for_later_replays(rt: Runtime) -> None:
    seed = Seed(rt, concurrent=False)
    await seed.capture()
    self_h, other_h, out_h = seed.host()
    seed.update(3.0, seed.stream1)
    for _ in range(3):
        self_h[:] = RNG.standard_normal(N)
        other_h[:] = RNG.standard_normal(N)
        rt.aclmdlRIExecuteAsync(seed.model, seed.stream1)
        await rt.aclrtSynchronizeStream(seed.stream1)
        np.testing.assert_allclose(out_h, expected(self_h, other_h, 3.0), rtol=1e-5, atol=1e-6)
