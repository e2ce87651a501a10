"""IPC events (spec-breadth 5.4): a handle one process exports and another opens; a record on one side orders
the other's stream; the runtime's checks and codes; only the creator destroys the event."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import numpy as np
import pytest

from proto.constants import ACL_EVENT_IPC, ACL_EVENT_SYNC, aclmdlRICaptureMode, aclrtStreamStatus
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
)
from server.npu import Machine, Runtime
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import download, upload

BLOCKED = aclrtStreamStatus.ACL_STREAM_STATUS_NOT_READY


@pytest.fixture
async def other(machine: Machine) -> AsyncIterator[Runtime]:
    """A second process of the same daemon, with no device set yet."""
    runtime = Runtime(machine)
    runtime.aclInit()
    yield runtime
    await runtime.release_all()


async def test_a_record_in_one_process_releases_a_wait_in_another(rt: Runtime, other: Runtime) -> None:
    event = rt.aclrtCreateEventExWithFlag(ACL_EVENT_IPC)
    handle = rt.aclrtIpcGetEventHandle(event)
    assert len(handle) == 64 and rt.aclrtIpcGetEventHandle(event) == handle  # the same handle each time
    fails(ACL_ERROR_RT_CONTEXT_NULL, other.aclrtIpcOpenEventHandle, handle)  # the opener needs a device
    other.aclrtSetDevice(1)  # another device, as the ipcevent sample opens it
    opened = other.aclrtIpcOpenEventHandle(handle)
    producer = rt.aclrtCreateStream()
    values = np.random.default_rng(3).standard_normal(32).astype(np.float32)
    src, dst = upload(rt, values), rt.aclrtMalloc(values.nbytes, 0)
    blocker = rt.aclrtCreateEvent()
    rt.aclrtStreamWaitEvent(producer, blocker)  # holds the producer until the record below
    await rt.aclrtMemcpyAsync(dst, values.nbytes, src, values.nbytes, 3, producer)  # D2D
    rt.aclrtRecordEvent(event, producer)
    consumer = other.aclrtCreateStream()
    out = other.aclrtMalloc(8, 0)
    other.aclrtStreamWaitEvent(consumer, opened)
    other.aclrtMemsetAsync(out, 8, 0x42, 8, consumer)
    await asyncio.sleep(0.02)
    assert other.aclrtStreamQuery(consumer) == BLOCKED  # the other process waits for this one's record
    rt.aclrtRecordEvent(blocker, 0)
    await asyncio.wait_for(other.aclrtSynchronizeStream(consumer), 5)
    await other.aclrtSynchronizeEvent(opened)
    assert other.aclrtQueryEventStatus(opened) == 1  # ACL_EVENT_RECORDED_STATUS_COMPLETE
    np.testing.assert_array_equal(download(rt, dst, (32,), np.float32), values)
    assert download(other, out, (8,), np.uint8).tolist() == [0x42] * 8


async def test_ipc_event_checks(rt: Runtime, other: Runtime) -> None:
    legacy, synced = rt.aclrtCreateEvent(), rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    for not_ipc in (legacy, synced):
        error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcGetEventHandle, not_ipc)
        assert "ACL_EVENT_IPC" in error.message
    event = rt.aclrtCreateEventExWithFlag(ACL_EVENT_IPC)
    handle = rt.aclrtIpcGetEventHandle(event)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtResetEvent, event, None)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtEventGetTimestamp, event)
    stream = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(stream, aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtRecordEvent, event, stream)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtStreamWaitEvent, stream, event)
    await rt.aclmdlRIDestroy(rt.aclmdlRICaptureEnd(stream))
    other.aclrtSetDevice(0)
    fails(ACL_ERROR_INVALID_PARAM, other.aclrtIpcOpenEventHandle, handle[:32])
    fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtIpcOpenEventHandle, bytes(64))  # no such event
    guessed = handle[:-40] + bytes(40)
    fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtIpcOpenEventHandle, guessed)


async def test_only_the_creator_destroys_it(rt: Runtime, other: Runtime) -> None:
    event = rt.aclrtCreateEventExWithFlag(ACL_EVENT_IPC)
    handle = rt.aclrtIpcGetEventHandle(event)
    other.aclrtSetDevice(0)
    opened = other.aclrtIpcOpenEventHandle(handle)
    assert other.aclrtIpcOpenEventHandle(handle) == opened  # opened once per process
    other.aclrtDestroyEvent(opened)  # forgotten there ...
    rt.aclrtRecordEvent(event, None)  # ... still alive here
    await rt.aclrtSynchronizeEvent(event)
    reopened = other.aclrtIpcOpenEventHandle(handle)
    await other.release_all()  # the opener's teardown leaves it alone too
    rt.aclrtRecordEvent(event, None)
    await rt.aclrtSynchronizeEvent(event)
    rt.aclrtDestroyEvent(event)
    third = Runtime(rt.ctx.machine)
    third.aclInit()
    third.aclrtSetDevice(0)
    fails(ACL_ERROR_RT_PARAM_INVALID, third.aclrtIpcOpenEventHandle, handle)  # gone with its creator's destroy
    assert reopened == opened
    await third.release_all()
