"""Streams: creation and limits, FIFO order, concurrency, synchronize (with timeout), query, destroy."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from proto.constants import (
    ACL_EVENT_SYNC,
    ACL_STREAM_FAST_LAUNCH,
    ACL_STREAM_PERSISTENT,
    aclrtStreamStatus,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_NO_STREAM_RESOURCE,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.core.caller import calling_thread
from tests.server.npu.devicekit import read_bytes as read

COMPLETE = aclrtStreamStatus.ACL_STREAM_STATUS_COMPLETE
NOT_READY = aclrtStreamStatus.ACL_STREAM_STATUS_NOT_READY


async def test_stream_limit_counts_the_default_stream(rt: Runtime) -> None:
    streams = [rt.aclrtCreateStream() for _ in range(63)]  # 64 per device, one is the default stream
    with pytest.raises(AclError) as info:
        rt.aclrtCreateStream()
    assert info.value.code == ACL_ERROR_RT_NO_STREAM_RESOURCE and "64" in info.value.message
    await rt.aclrtDestroyStream(streams.pop())
    streams.append(rt.aclrtCreateStreamWithConfig(0, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_PERSISTENT))


async def test_create_with_config_checks_flags(rt: Runtime) -> None:
    with pytest.raises(AclError) as info:
        rt.aclrtCreateStreamWithConfig(0, 0x100)
    assert info.value.code == ACL_ERROR_INVALID_PARAM


async def test_fifo_order_on_one_stream(rt: Runtime) -> None:
    a = rt.aclrtMalloc(64, 0)
    s = rt.aclrtCreateStream()
    for value in range(1, 50):
        rt.aclrtMemsetAsync(a, 64, value, 64, s)
    await rt.aclrtSynchronizeStream(s)
    assert read(rt, a, 64) == bytes([49]) * 64


async def test_streams_run_concurrently_and_query_reports_progress(rt: Runtime) -> None:
    a, b = rt.aclrtMalloc(8, 0), rt.aclrtMalloc(8, 0)
    blocked, free = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(blocked, ev)
    rt.aclrtMemsetAsync(a, 8, 1, 8, blocked)
    rt.aclrtMemsetAsync(b, 8, 2, 8, free)
    await rt.aclrtSynchronizeStream(free)  # does not wait for the blocked stream
    assert read(rt, b, 8) == b"\x02" * 8
    assert read(rt, a, 8) == b"\x00" * 8
    assert rt.aclrtStreamQuery(blocked) == NOT_READY
    assert rt.aclrtStreamQuery(free) == COMPLETE
    rt.aclrtRecordEvent(ev, free)
    await rt.aclrtSynchronizeStream(blocked)
    assert read(rt, a, 8) == b"\x01" * 8
    assert rt.aclrtStreamQuery(blocked) == COMPLETE


async def test_synchronize_with_timeout(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, ev)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStreamWithTimeout(s, 50)
    assert info.value.code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert "aclrtStreamWaitEvent" in info.value.message  # says what the stream is stuck on
    for bad in (0, -2):
        with pytest.raises(AclError) as info:
            await rt.aclrtSynchronizeStreamWithTimeout(s, bad)
        assert info.value.code == ACL_ERROR_INVALID_PARAM
    rt.aclrtRecordEvent(ev, 0)
    await rt.aclrtSynchronizeStreamWithTimeout(s, -1)


async def test_destroy_waits_for_tasks_and_releases_a_hopeless_wait(rt: Runtime) -> None:
    a = rt.aclrtMalloc(8, 0)
    s = rt.aclrtCreateStream()
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, ev)  # never recorded
    rt.aclrtMemsetAsync(a, 8, 3, 8, s)
    await asyncio.wait_for(rt.aclrtDestroyStream(s), 5)
    assert read(rt, a, 8) == b"\x03" * 8  # the task after the wait still ran
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(s)
    assert info.value.code == ACL_ERROR_RT_INVALID_HANDLE
    with pytest.raises(AclError) as info:
        await rt.aclrtDestroyStream(None)
    assert info.value.code == ACL_ERROR_INVALID_PARAM


async def test_default_stream_and_synchronize_device(rt: Runtime) -> None:
    a = rt.aclrtMalloc(16, 0)
    rt.aclrtMemsetAsync(a, 16, 4, 8, None)
    s = rt.aclrtCreateStream()
    rt.aclrtMemsetAsync(a + 8, 8, 5, 8, s)
    await rt.aclrtSynchronizeDevice()
    assert read(rt, a, 16) == b"\x04" * 8 + b"\x05" * 8


async def test_stream_of_another_device(rt: Runtime) -> None:
    s0 = rt.aclrtCreateStream()
    rt.aclrtSetDevice(1)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(s0)
    assert info.value.code == ACL_ERROR_RT_STREAM_CONTEXT and "device 0" in info.value.message
    s1 = rt.aclrtCreateStream()
    await rt.aclrtSynchronizeStream(s1)
    rt.aclrtSetDevice(0)
    await rt.aclrtSynchronizeStream(s0)


async def test_current_device_is_per_thread(rt: Runtime) -> None:
    with calling_thread(("other-process", 1)):
        with pytest.raises(AclError) as info:
            rt.aclrtCreateStream()
        assert info.value.code == ACL_ERROR_RT_CONTEXT_NULL
        rt.aclrtSetDevice(1)
        assert rt.aclrtGetDevice() == 1
    assert rt.aclrtGetDevice() == 0


async def test_sticky_error_is_raised_once_and_names_the_task(machine: Machine, rt: Runtime) -> None:
    a = rt.aclrtMalloc(32, 0)
    s = rt.aclrtCreateStream()
    rt.aclrtMemsetAsync(a, 32, 1, 32, s)
    rt.aclrtFree(a)  # the queued memset now targets freed memory (if it has not run yet)
    b = rt.aclrtMalloc(32, 0)
    rt.aclrtMemsetAsync(b, 32, 6, 32, s)
    with pytest.raises(AclError) as info:  # the worker cannot have run: nothing awaited since the issue
        await rt.aclrtSynchronizeStream(s)
    assert "aclrtMemsetAsync" in info.value.message and info.value.api == "aclrtSynchronizeStream"
    await rt.aclrtSynchronizeStream(s)
    assert read(rt, b, 32) == b"\x06" * 32


async def test_large_copies_run_off_the_loop_in_order(rt: Runtime, machine: Machine) -> None:
    n = 4 * machine.offload_bytes
    data = np.random.default_rng(5).integers(0, 255, n, dtype=np.uint8)
    a, b = rt.aclrtMalloc(n, 0), rt.aclrtMalloc(n, 0)
    rt.aclrtMemcpy(a, n, data, n, 1)
    s = rt.aclrtCreateStream()
    await rt.aclrtMemcpyAsync(b, n, a, n, 3, s)
    rt.aclrtMemsetAsync(b, n, 0, 1, s)  # must run after the big copy
    await rt.aclrtSynchronizeStream(s)
    out = np.frombuffer(read(rt, b, n), np.uint8)
    assert out[0] == 0
    np.testing.assert_array_equal(out[1:], data[1:])


async def test_timed_out_polls_keep_no_waiter(rt: Runtime) -> None:
    """Reliability 24: each timed-out synchronize left its future in the stream's heap for good."""
    s = rt.aclrtCreateStream()
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, ev)
    for _ in range(200):
        with pytest.raises(AclError) as info:
            await rt.aclrtSynchronizeStreamWithTimeout(s, 1)
        assert info.value.code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert rt.ctx.streams[s]._reached == []  # the heap of waiters is what leaked
    rt.aclrtRecordEvent(ev, 0)
    await rt.aclrtSynchronizeStreamWithTimeout(s, -1)
