"""One test per error row of spec sections 1 and 2: the exact code, then proof that the stream, the capture
(where it survives) and the device still work -- in the manner of CuPy's test_graph.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from proto.constants import (
    ACL_EVENT_EXTERNAL,
    ACL_EVENT_SYNC,
    ACL_EVENT_TIME_LINE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
    ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
    ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,
    ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED,
    ACL_MODEL_RI_CAPTURE_STATUS_NONE,
    ACL_STREAM_CPU_SCHEDULE,
    ACL_STREAM_PERSISTENT,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CAPTURE_DEPENDENCY,
    ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC,
    ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
    ACL_ERROR_RT_EVENT_CAPTURED,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_CAPTURED,
    ACL_ERROR_RT_NO_MODEL_RESOURCE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
    ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
    ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED,
    ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
    ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_MODEL,
    ACL_ERROR_RT_STREAM_NOT_CAPTURED,
    ACL_ERROR_RT_STREAM_UNJOINED,
    ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
    ACL_ERROR_STREAM_CAPTURE_CONFLICT,
    ACL_ERROR_STREAM_TASK_GROUP_INTR,
    ACL_ERROR_STREAM_TASK_GROUP_STATUS,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.core.caller import calling_thread
from tests.server.npu.devicekit import Vec

GLOBAL, THREAD_LOCAL, RELAXED = (
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
    ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
)


class Kit:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.s = rt.aclrtCreateStream()
        self.x = Vec(rt, np.arange(8, dtype=np.float32))
        self.y = Vec(rt, np.zeros(8, np.float32))

    def fails(self, code: int, call: object, *args: object) -> AclError:
        with pytest.raises(AclError) as info:
            assert callable(call)
            call(*args)
        assert info.value.code == code, info.value
        return info.value

    async def afails(self, code: int, call: object, *args: object) -> AclError:
        with pytest.raises(AclError) as info:
            assert callable(call)
            await call(*args)
        assert info.value.code == code, info.value
        return info.value

    async def capture_still_works(self) -> None:
        """End the capture on s, replay it, and check its kernel ran (y = x + 1)."""
        self.y.adds(self.x, 1.0, self.s)
        model = self.rt.aclmdlRICaptureEnd(self.s)
        self.rt.aclmdlRIExecuteAsync(model, self.s)
        await self.rt.aclrtSynchronizeStream(self.s)
        np.testing.assert_array_equal(self.y.read(), np.arange(8) + 1)
        await self.stream_works()

    async def stream_works(self) -> None:
        await self.rt.aclrtSynchronizeStream(self.s)
        self.y.muls(self.x, 3.0, self.s)
        await self.rt.aclrtSynchronizeStream(self.s)
        np.testing.assert_array_equal(self.y.read(), np.arange(8) * 3)


@pytest.fixture
async def kit(rt: Runtime) -> AsyncIterator[Kit]:
    yield Kit(rt)


# --- Begin ---------------------------------------------------------------------------------------------------


async def test_begin_on_the_default_stream(kit: Kit) -> None:
    kit.fails(ACL_ERROR_INVALID_PARAM, kit.rt.aclmdlRICaptureBegin, 0, GLOBAL)
    await kit.stream_works()


async def test_begin_with_a_bad_mode(kit: Kit) -> None:
    kit.fails(ACL_ERROR_RT_PARAM_INVALID, kit.rt.aclmdlRICaptureBegin, kit.s, 3)
    assert kit.rt.aclmdlRICaptureGetInfo(kit.s) == (ACL_MODEL_RI_CAPTURE_STATUS_NONE, 0)
    await kit.stream_works()


async def test_begin_on_an_unsupported_stream(kit: Kit) -> None:
    cpu = kit.rt.aclrtCreateStreamWithConfig(0, ACL_STREAM_CPU_SCHEDULE)
    kit.fails(ACL_ERROR_RT_INTERNAL_ERROR, kit.rt.aclmdlRICaptureBegin, cpu, GLOBAL)


async def test_begin_twice(kit: Kit) -> None:
    kit.rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURED, kit.rt.aclmdlRICaptureBegin, kit.s, GLOBAL)
    await kit.capture_still_works()


async def test_model_limit(machine: Machine, kit: Kit) -> None:
    machine.devices[0].models.maximum = 2
    models = []
    for _ in range(2):
        kit.rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
        kit.y.adds(kit.x, 1.0, kit.s)
        models.append(kit.rt.aclmdlRICaptureEnd(kit.s))
    kit.fails(ACL_ERROR_RT_NO_MODEL_RESOURCE, kit.rt.aclmdlRICaptureBegin, kit.s, GLOBAL)
    await kit.rt.aclmdlRIDestroy(models.pop())
    kit.rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    await kit.capture_still_works()


# --- GetInfo -------------------------------------------------------------------------------------------------


async def test_get_info_follows_the_capture(kit: Kit) -> None:
    assert kit.rt.aclmdlRICaptureGetInfo(kit.s) == (ACL_MODEL_RI_CAPTURE_STATUS_NONE, 0)
    kit.rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    status, model = kit.rt.aclmdlRICaptureGetInfo(kit.s)
    assert status == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE and model != 0
    legacy = kit.rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    kit.fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, kit.rt.aclrtRecordEvent, legacy, kit.s)  # invalidates
    assert kit.rt.aclmdlRICaptureGetInfo(kit.s) == (ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED, model)


# --- End -----------------------------------------------------------------------------------------------------


async def test_end_without_capture(kit: Kit) -> None:
    kit.fails(ACL_ERROR_RT_STREAM_NOT_CAPTURED, kit.rt.aclmdlRICaptureEnd, kit.s)
    await kit.stream_works()


async def test_end_on_a_joined_stream_destroys_the_capture(kit: Kit) -> None:
    rt = kit.rt
    s2 = rt.aclrtCreateStream()
    fork = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclrtRecordEvent(fork, kit.s)
    rt.aclrtStreamWaitEvent(s2, fork)
    _, model = rt.aclmdlRICaptureGetInfo(s2)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, rt.aclmdlRICaptureEnd, s2)
    assert rt.aclmdlRICaptureGetInfo(kit.s) == (ACL_MODEL_RI_CAPTURE_STATUS_NONE, 0)
    kit.fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIExecuteAsync, model, kit.s)  # the model is gone
    await kit.stream_works()


async def test_end_on_another_thread(kit: Kit) -> None:
    kit.rt.aclmdlRICaptureBegin(kit.s, THREAD_LOCAL)
    with calling_thread(("p", 2)):
        kit.rt.aclrtSetDevice(0)
        kit.fails(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, kit.rt.aclmdlRICaptureEnd, kit.s)
    await kit.stream_works()
    kit.rt.aclmdlRICaptureBegin(kit.s, RELAXED)  # RELAXED may end anywhere
    kit.y.adds(kit.x, 1.0, kit.s)
    with calling_thread(("p", 2)):
        model = kit.rt.aclmdlRICaptureEnd(kit.s)
    kit.rt.aclmdlRIExecuteAsync(model, kit.s)
    await kit.rt.aclrtSynchronizeStream(kit.s)
    np.testing.assert_array_equal(kit.y.read(), np.arange(8) + 1)


async def test_end_after_invalidation(kit: Kit) -> None:
    kit.rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    legacy = kit.rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    kit.fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, kit.rt.aclrtStreamWaitEvent, kit.s, legacy)
    kit.y.adds(kit.x, 1.0, kit.s)
    error = kit.fails(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, kit.rt.aclmdlRICaptureEnd, kit.s)
    assert "legacy event" in error.message
    await kit.stream_works()


async def test_end_with_a_group_open(kit: Kit) -> None:
    kit.rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    kit.rt.aclmdlRICaptureTaskGrpBegin(kit.s)
    kit.fails(ACL_ERROR_STREAM_TASK_GROUP_STATUS, kit.rt.aclmdlRICaptureEnd, kit.s)
    await kit.stream_works()


async def test_end_with_an_unjoined_stream(kit: Kit) -> None:
    rt = kit.rt
    s2 = rt.aclrtCreateStream()
    fork, join = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC), rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclrtRecordEvent(fork, kit.s)
    rt.aclrtStreamWaitEvent(s2, fork)
    kit.y.adds(kit.x, 1.0, s2)
    error = kit.fails(ACL_ERROR_RT_STREAM_UNJOINED, rt.aclmdlRICaptureEnd, kit.s)
    assert f"{s2:#x}" in error.message
    # a sub-stream that rejoined and then issued more work is unjoined too
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclrtRecordEvent(fork, kit.s)
    rt.aclrtStreamWaitEvent(s2, fork)
    rt.aclrtRecordEvent(join, s2)
    rt.aclrtStreamWaitEvent(kit.s, join)
    kit.y.adds(kit.x, 1.0, s2)
    kit.fails(ACL_ERROR_RT_STREAM_UNJOINED, rt.aclmdlRICaptureEnd, kit.s)
    # a sub-stream whose last task records an EXTERNAL event did not rejoin
    ext = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclrtRecordEvent(fork, kit.s)
    rt.aclrtStreamWaitEvent(s2, fork)
    rt.aclrtRecordEvent(ext, s2)
    rt.aclrtStreamWaitEvent(kit.s, ext)
    kit.fails(ACL_ERROR_RT_STREAM_UNJOINED, rt.aclmdlRICaptureEnd, kit.s)
    await kit.stream_works()
    assert rt.aclmdlRICaptureGetInfo(s2) == (ACL_MODEL_RI_CAPTURE_STATUS_NONE, 0)
    await rt.aclrtSynchronizeStream(s2)  # s2 left the capture with the failed End


# --- illegal in every mode (1.4): they do not invalidate the capture -----------------------------------------


async def test_stream_calls_on_a_capturing_stream(kit: Kit) -> None:
    rt = kit.rt
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    await kit.afails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclrtSynchronizeStream, kit.s)
    await kit.afails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclrtSynchronizeStreamWithTimeout, kit.s, 10)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclrtStreamQuery, kit.s)
    await kit.afails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclrtDestroyStream, kit.s)
    await kit.afails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclrtSynchronizeDevice)
    other = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(other, GLOBAL)
    other_model = rt.aclmdlRICaptureEnd(other)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclmdlRIExecuteAsync, other_model, kit.s)
    assert rt.aclmdlRICaptureGetInfo(kit.s)[0] == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
    await kit.capture_still_works()


async def test_event_calls_on_a_capturing_event(kit: Kit) -> None:
    rt = kit.rt
    ev = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE)
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclrtRecordEvent(ev, kit.s)
    await kit.afails(ACL_ERROR_RT_EVENT_CAPTURED, rt.aclrtSynchronizeEvent, ev)
    await kit.afails(ACL_ERROR_RT_EVENT_CAPTURED, rt.aclrtSynchronizeEventWithTimeout, ev, 10)
    kit.fails(ACL_ERROR_RT_EVENT_CAPTURED, rt.aclrtQueryEventStatus, ev)
    kit.fails(ACL_ERROR_RT_EVENT_CAPTURED, rt.aclrtEventElapsedTime, ev, ev)
    await kit.capture_still_works()
    await rt.aclrtSynchronizeEvent(ev)  # after End the event is an ordinary event again


async def test_default_stream_during_capture(kit: Kit) -> None:
    rt = kit.rt
    fork = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    ext = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclrtRecordEvent(fork, kit.s)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, rt.aclrtStreamWaitEvent, 0, fork)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, rt.aclrtRecordEvent, ext, 0)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, rt.aclrtResetEvent, ext, 0)
    rt.aclrtStreamWaitEvent(kit.s, fork)  # keeps the graph valid
    await kit.capture_still_works()


# --- capture modes (1.3) -------------------------------------------------------------------------------------


async def test_unsafe_calls_by_mode_and_thread(kit: Kit) -> None:
    rt = kit.rt
    host = np.zeros(8, np.float32)
    me, other = ("p", 1), ("p", 2)
    with calling_thread(other):
        rt.aclrtSetDevice(0)
    for mode, denied_here, denied_there in (
        (GLOBAL, True, True),
        (THREAD_LOCAL, True, False),
        (RELAXED, False, False),
    ):
        with calling_thread(me):
            rt.aclrtSetDevice(0)
            rt.aclmdlRICaptureBegin(kit.s, mode)
        for thread, denied in ((me, denied_here), (other, denied_there)):
            with calling_thread(thread):
                if denied:
                    kit.fails(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, rt.aclrtMemcpy, host, 32, kit.x.ptr, 32, 2)
                    kit.fails(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, rt.aclrtMemset, kit.y.ptr, 32, 0, 32)
                    await kit.afails(
                        ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC, rt.aclrtMemcpyAsync, host, 32, kit.x.ptr, 32, 2, 0
                    )
                else:
                    rt.aclrtMemcpy(host, 32, kit.x.ptr, 32, ACL_MEMCPY_DEVICE_TO_HOST)
                    await rt.aclrtMemcpyAsync(host, 32, kit.x.ptr, 32, ACL_MEMCPY_DEVICE_TO_HOST, 0)
                    np.testing.assert_array_equal(host, np.arange(8))
        with calling_thread(me):
            await kit.capture_still_works()


async def test_exchange_mode_relaxes_one_thread(kit: Kit) -> None:
    rt = kit.rt
    host = np.zeros(8, np.float32)
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    assert rt.aclmdlRICaptureThreadExchangeMode(RELAXED) == GLOBAL
    rt.aclrtMemcpy(host, 32, kit.x.ptr, 32, ACL_MEMCPY_DEVICE_TO_HOST)  # as the G1 sample does
    assert rt.aclmdlRICaptureThreadExchangeMode(GLOBAL) == RELAXED
    kit.fails(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, rt.aclrtMemcpy, host, 32, kit.x.ptr, 32, 2)
    kit.fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRICaptureThreadExchangeMode, 7)
    rt.aclrtMalloc(64, 0)  # no mode check on malloc/free
    await kit.capture_still_works()


async def test_pageable_async_copy_on_a_capturing_stream(kit: Kit) -> None:
    kit.rt.aclmdlRICaptureBegin(kit.s, RELAXED)
    await kit.afails(
        ACL_ERROR_RT_PARAM_INVALID,
        kit.rt.aclrtMemcpyAsync,
        kit.y.ptr,
        32,
        np.ones(8, np.float32),
        32,
        ACL_MEMCPY_HOST_TO_DEVICE,
        kit.s,
    )
    await kit.capture_still_works()


# --- cross-stream capture (3.4) ------------------------------------------------------------------------------


async def test_event_linking_two_captures(kit: Kit) -> None:
    rt = kit.rt
    s2 = rt.aclrtCreateStream()
    ev = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclmdlRICaptureBegin(s2, GLOBAL)
    rt.aclrtRecordEvent(ev, kit.s)
    kit.fails(ACL_ERROR_STREAM_CAPTURE_CONFLICT, rt.aclrtStreamWaitEvent, s2, ev)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, rt.aclmdlRICaptureEnd, s2)
    await kit.capture_still_works()


async def test_capture_waiting_on_an_outside_record(kit: Kit) -> None:
    rt = kit.rt
    ev = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    never = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclrtRecordEvent(ev, 0)
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclrtStreamWaitEvent(kit.s, never)  # never recorded: a silent no-op
    assert rt.aclmdlRICaptureGetInfo(kit.s)[0] == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
    kit.fails(ACL_ERROR_RT_CAPTURE_DEPENDENCY, rt.aclrtStreamWaitEvent, kit.s, ev)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, rt.aclmdlRICaptureEnd, kit.s)
    await kit.stream_works()


async def test_ex_event_without_sync_in_capture(kit: Kit) -> None:
    rt = kit.rt
    timing = rt.aclrtCreateEventExWithFlag(ACL_EVENT_TIME_LINE)
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclrtRecordEvent(timing, kit.s)  # silently dropped
    assert rt.aclmdlRICaptureGetInfo(kit.s)[0] == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
    # an event with no wait task is refused before the capture sees the wait (modelri spec 8.8): not invalidated
    kit.fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtStreamWaitEvent, kit.s, timing)
    assert rt.aclmdlRICaptureGetInfo(kit.s)[0] == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
    await kit.capture_still_works()


# --- task groups (2) -----------------------------------------------------------------------------------------


async def test_group_calls_outside_capture(kit: Kit) -> None:
    kit.fails(ACL_ERROR_RT_STREAM_NOT_CAPTURED, kit.rt.aclmdlRICaptureTaskGrpBegin, kit.s)
    kit.fails(ACL_ERROR_RT_STREAM_NOT_CAPTURED, kit.rt.aclmdlRICaptureTaskGrpEnd, kit.s)
    await kit.stream_works()


async def test_group_state_machine(kit: Kit) -> None:
    rt = kit.rt
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    kit.fails(ACL_ERROR_STREAM_TASK_GROUP_STATUS, rt.aclmdlRICaptureTaskGrpEnd, kit.s)
    rt.aclmdlRICaptureTaskGrpBegin(kit.s)
    kit.fails(ACL_ERROR_STREAM_TASK_GROUP_STATUS, rt.aclmdlRICaptureTaskGrpBegin, kit.s)
    assert rt.aclmdlRICaptureTaskGrpEnd(kit.s) != 0  # an empty group is accepted
    await kit.capture_still_works()


async def test_non_kernel_task_in_a_group(kit: Kit) -> None:
    rt = kit.rt
    h = rt.aclrtMallocHost(32)
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclmdlRICaptureTaskGrpBegin(kit.s)
    kit.y.adds(kit.x, 1.0, kit.s)
    await kit.afails(
        ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, rt.aclrtMemcpyAsync, h, 32, kit.y.ptr, 32, ACL_MEMCPY_DEVICE_TO_HOST, kit.s
    )
    kit.fails(ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, rt.aclmdlRICaptureTaskGrpEnd, kit.s)  # the group's error
    await kit.capture_still_works()  # the capture itself is not invalidated


async def test_another_stream_issues_while_a_group_is_open(kit: Kit) -> None:
    rt = kit.rt
    s2 = rt.aclrtCreateStream()
    fork, join = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC), rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    z = Vec(rt, np.zeros(8, np.float32))  # before the capture: uploading is a synchronous copy
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclrtRecordEvent(fork, kit.s)
    rt.aclrtStreamWaitEvent(s2, fork)
    rt.aclmdlRICaptureTaskGrpBegin(kit.s)
    with pytest.raises(AclError) as info:
        z.adds(kit.x, 2.0, s2)
    assert info.value.code == ACL_ERROR_STREAM_TASK_GROUP_INTR
    kit.fails(ACL_ERROR_STREAM_TASK_GROUP_INTR, rt.aclmdlRICaptureTaskGrpEnd, kit.s)
    rt.aclrtRecordEvent(join, s2)
    rt.aclrtStreamWaitEvent(kit.s, join)
    await kit.capture_still_works()


async def test_group_end_after_invalidation(kit: Kit) -> None:
    rt = kit.rt
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    rt.aclmdlRICaptureTaskGrpBegin(kit.s)
    legacy = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    s2 = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(s2, GLOBAL)
    kit.fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtRecordEvent, legacy, s2)  # invalidates s2's capture
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, rt.aclmdlRICaptureEnd, s2)
    kit.y.adds(kit.x, 1.0, kit.s)
    assert rt.aclmdlRICaptureTaskGrpEnd(kit.s)
    model = rt.aclmdlRICaptureEnd(kit.s)
    rt.aclmdlRIExecuteAsync(model, kit.s)
    await kit.stream_works()


# --- task update (2) -----------------------------------------------------------------------------------------


class Grouped:
    """A model on kit.s whose group holds `n` Adds kernels (y = x + 1 ... ); its update stream is u."""

    def __init__(self, kit: Kit, n: int = 1) -> None:
        rt = kit.rt
        self.kit = kit
        rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
        rt.aclmdlRICaptureTaskGrpBegin(kit.s)
        for _ in range(n):
            kit.y.adds(kit.x, 1.0, kit.s)
        self.handle = rt.aclmdlRICaptureTaskGrpEnd(kit.s)
        self.model = rt.aclmdlRICaptureEnd(kit.s)
        self.u = rt.aclrtCreateStream()

    async def replays(self, value: float) -> None:
        self.kit.rt.aclmdlRIExecuteAsync(self.model, self.kit.s)
        await self.kit.rt.aclrtSynchronizeStream(self.kit.s)
        np.testing.assert_array_equal(self.kit.y.read(), np.arange(8) + value)


async def test_update_begin_errors(kit: Kit) -> None:
    rt = kit.rt
    g = Grouped(kit)
    kit.fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRICaptureTaskUpdateBegin, 0, g.handle)
    kit.fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRICaptureTaskUpdateBegin, g.u, 0)
    capturing = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(capturing, GLOBAL)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclmdlRICaptureTaskUpdateBegin, capturing, g.handle)
    persistent = rt.aclrtCreateStreamWithConfig(0, ACL_STREAM_PERSISTENT)
    kit.fails(ACL_ERROR_RT_STREAM_MODEL, rt.aclmdlRICaptureTaskUpdateBegin, persistent, g.handle)
    rt.aclmdlRICaptureTaskUpdateBegin(g.u, g.handle)
    kit.fails(ACL_ERROR_STREAM_TASK_GROUP_STATUS, rt.aclmdlRICaptureTaskUpdateBegin, g.u, g.handle)
    u2 = rt.aclrtCreateStream()
    error = kit.fails(ACL_ERROR_STREAM_TASK_GROUP_STATUS, rt.aclmdlRICaptureTaskUpdateBegin, u2, g.handle)
    assert "critical resource" in error.message
    kit.y.adds(kit.x, 4.0, g.u)
    rt.aclmdlRICaptureTaskUpdateEnd(g.u)
    rt.aclmdlRICaptureEnd(capturing)  # a GLOBAL capture forbids the synchronous copies that check the result
    await g.replays(4.0)


async def test_update_launch_errors_leave_the_group_unchanged(kit: Kit) -> None:
    rt = kit.rt
    g = Grouped(kit, n=1)
    kit.fails(ACL_ERROR_STREAM_TASK_GROUP_STATUS, rt.aclmdlRICaptureTaskUpdateEnd, g.u)
    rt.aclmdlRICaptureTaskUpdateBegin(g.u, g.handle)
    kit.y.adds(kit.x, 2.0, g.u)
    with pytest.raises(AclError) as info:
        kit.y.adds(kit.x, 3.0, g.u)  # one launch too many
    assert info.value.code == ACL_ERROR_RT_INTERNAL_ERROR and "too many" in info.value.message
    h = rt.aclrtMallocHost(32)
    await kit.afails(
        ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, rt.aclrtMemcpyAsync, h, 32, kit.y.ptr, 32, ACL_MEMCPY_DEVICE_TO_HOST, g.u
    )
    rt.aclmdlRICaptureTaskUpdateEnd(g.u)
    await rt.aclrtSynchronizeStream(g.u)
    await g.replays(2.0)
    # a count mismatch: the group keeps its kernels
    g2 = Grouped(Kit(rt), n=2)
    rt.aclmdlRICaptureTaskUpdateBegin(g2.u, g2.handle)
    g2.kit.y.adds(g2.kit.x, 9.0, g2.u)
    error = kit.fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclmdlRICaptureTaskUpdateEnd, g2.u)
    assert "unupdated" in error.message
    await rt.aclrtSynchronizeStream(g2.u)
    await g2.replays(1.0)


async def test_update_may_change_the_kernel_but_not_its_kind(kit: Kit) -> None:
    from proto.aclnn import aclnnMatmulGetWorkspaceSize
    from tests.server.npu.devicekit import tensor_at

    rt = kit.rt
    g = Grouped(kit)
    rt.aclmdlRICaptureTaskUpdateBegin(g.u, g.handle)
    kit.y.muls(kit.x, 5.0, g.u)  # Adds -> Muls: both vector kernels
    rt.aclmdlRICaptureTaskUpdateEnd(g.u)
    await rt.aclrtSynchronizeStream(g.u)
    rt.aclmdlRIExecuteAsync(g.model, kit.s)
    await rt.aclrtSynchronizeStream(kit.s)
    np.testing.assert_array_equal(kit.y.read(), np.arange(8) * 5)
    rt.aclmdlRICaptureTaskUpdateBegin(g.u, g.handle)
    x2 = tensor_at(kit.x.ptr, (2, 4), 0)
    y2 = tensor_at(kit.y.ptr, (2, 2), 0)
    ws, ex = aclnnMatmulGetWorkspaceSize(x2, tensor_at(kit.x.ptr, (4, 2), 0), y2, 0)
    with pytest.raises(AclError) as info:
        rt.aclnnMatmul(rt.aclrtMalloc(ws, 0), ws, ex, g.u)
    assert info.value.code == ACL_ERROR_RT_INTERNAL_ERROR and "cube" in info.value.message
    kit.fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclmdlRICaptureTaskUpdateEnd, g.u)  # nothing was collected
    await rt.aclrtSynchronizeStream(g.u)
    rt.aclmdlRIExecuteAsync(g.model, kit.s)
    await rt.aclrtSynchronizeStream(kit.s)
    np.testing.assert_array_equal(kit.y.read(), np.arange(8) * 5)


# --- models ----------------------------------------------------------------------------------------------------


async def test_execute_and_destroy_while_capturing(kit: Kit) -> None:
    rt = kit.rt
    rt.aclmdlRICaptureBegin(kit.s, GLOBAL)
    _, model = rt.aclmdlRICaptureGetInfo(kit.s)
    other = rt.aclrtCreateStream()
    kit.fails(ACL_ERROR_RT_MODEL_CAPTURED, rt.aclmdlRIExecuteAsync, model, other)
    await kit.afails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIExecute, model, -1)  # a capture model, whatever state
    await kit.afails(ACL_ERROR_RT_MODEL_CAPTURED, rt.aclmdlRIDestroy, model)
    kit.fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRIExecuteAsync, 0, other)
    await kit.capture_still_works()
