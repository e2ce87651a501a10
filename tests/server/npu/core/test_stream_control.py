"""Stream ids, flags and priority; failure mode; abort and stop (spec-breadth 2.3-2.4)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from proto.constants import (
    ACL_CONTINUE_ON_FAILURE,
    ACL_EVENT_SYNC,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_STOP_ON_FAILURE,
    ACL_STREAM_DEVICE_USE_ONLY,
    ACL_STREAM_FAST_LAUNCH,
    aclrtStreamStatus,
)
from proto.errors import (
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_ABORT,
    ACL_ERROR_RT_STREAM_CONTEXT,
    AclError,
)
from server.npu import Runtime
from tests.server.npu.devicekit import read_bytes as read


def fails(code: int, call: object, *args: object) -> AclError:
    with pytest.raises(AclError) as info:
        assert callable(call)
        call(*args)
    assert info.value.code == code, info.value
    return info.value


async def test_ids_flags_and_priority(rt: Runtime) -> None:
    a = rt.aclrtCreateStream()
    b = rt.aclrtCreateStreamWithConfig(5, ACL_STREAM_FAST_LAUNCH)
    ids = {rt.aclrtStreamGetId(s) for s in (0, a, b)}
    assert len(ids) == 3 and all(i >= 0 for i in ids)
    assert rt.aclrtStreamGetId(a) == rt.aclrtStreamGetId(a)
    assert (rt.aclrtStreamGetFlags(a), rt.aclrtStreamGetFlags(b), rt.aclrtStreamGetFlags(0)) == (
        0,
        ACL_STREAM_FAST_LAUNCH,
        0,
    )
    assert (rt.aclrtStreamGetPriority(a), rt.aclrtStreamGetPriority(b)) == (0, 5)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtStreamGetId, 0xBAD)


async def _three_tasks_with_a_failure(rt: Runtime, s: int) -> tuple[int, int]:
    """A memset, a copy from memory freed before it runs, a memset: which memsets ran, after the sync's error."""
    first, last, victim, out = (rt.aclrtMalloc(16, 0) for _ in range(4))
    rt.aclrtMemset(first, 16, 0, 16)
    rt.aclrtMemset(last, 16, 0, 16)
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, gate)
    rt.aclrtMemsetAsync(first, 16, 1, 16, s)
    await rt.aclrtMemcpyAsync(out, 16, victim, 16, ACL_MEMCPY_DEVICE_TO_DEVICE, s)
    rt.aclrtMemsetAsync(last, 16, 1, 16, s)
    rt.aclrtFree(victim)
    rt.aclrtRecordEvent(gate, 0)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(s)
    assert info.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR
    return read(rt, first, 16)[0], read(rt, last, 16)[0]


async def test_continue_on_failure_runs_the_rest(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    rt.aclrtSetStreamFailureMode(s, ACL_CONTINUE_ON_FAILURE)
    assert await _three_tasks_with_a_failure(rt, s) == (1, 1)


async def test_stop_on_failure_skips_the_rest_until_reported(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    rt.aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE)
    rt.aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE)  # the same mode again: no change
    assert await _three_tasks_with_a_failure(rt, s) == (1, 0)
    after = rt.aclrtMalloc(8, 0)  # once reported, the stream runs again
    rt.aclrtMemsetAsync(after, 8, 7, 8, s)
    await rt.aclrtSynchronizeStream(s)
    assert read(rt, after, 8) == bytes([7]) * 8


async def test_failure_mode_rules(rt: Runtime) -> None:
    s, sibling = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclrtCreateContext(0)  # now the thread's current context
    foreign = rt.aclrtCreateStream()
    rt.aclrtSetDevice(0)  # back on the primary context
    rt.aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE | 0x10)  # only bit 0 counts
    error = fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtSetStreamFailureMode, s, ACL_CONTINUE_ON_FAILURE)
    assert "cannot leave" in error.message
    # the other streams of the same ACL context stop on failure too (the context's mode), the other context's do
    # not; each keeps its own mode, CONTINUE, which it may be set to again (ai StreamSetMode compares the stream's)
    streams = {h: rt.ctx.stream(h) for h in (s, sibling, 0, foreign)}
    assert [x.stop_on_failure for x in streams.values()] == [True, True, True, False]
    assert [x.failure_mode for x in streams.values()] == [ACL_STOP_ON_FAILURE, 0, 0, 0]
    rt.aclrtSetStreamFailureMode(sibling, ACL_CONTINUE_ON_FAILURE)
    rt.aclrtSetStreamFailureMode(0, ACL_CONTINUE_ON_FAILURE)
    assert streams[sibling].stop_on_failure and streams[0].stop_on_failure
    rt.aclrtSetStreamFailureMode(foreign, ACL_CONTINUE_ON_FAILURE)  # the same mode: nothing to check
    error = fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtSetStreamFailureMode, foreign, ACL_STOP_ON_FAILURE)
    assert "not a stream of this thread's" in error.message
    device_only = rt.aclrtCreateStreamWithConfig(0, ACL_STREAM_DEVICE_USE_ONLY)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtSetStreamFailureMode, device_only, ACL_STOP_ON_FAILURE)


async def test_abort_drops_the_queue_and_releases_a_waiting_sync(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    ptr = rt.aclrtMalloc(8, 0)
    rt.aclrtMemset(ptr, 8, 0, 8)
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    done = rt.aclrtCreateEvent()
    rt.aclrtStreamWaitEvent(s, gate)  # never recorded: the stream blocks here
    rt.aclrtMemsetAsync(ptr, 8, 9, 8, s)
    rt.aclrtRecordEvent(done, s)
    sync = asyncio.ensure_future(rt.aclrtSynchronizeStream(s))
    await asyncio.sleep(0.01)
    assert not sync.done()
    rt.aclrtStreamAbort(s)
    with pytest.raises(AclError) as info:
        await asyncio.wait_for(sync, 5)
    assert info.value.code == ACL_ERROR_RT_STREAM_ABORT
    await asyncio.wait_for(rt.aclrtSynchronizeEvent(done), 5)  # the dropped record no longer holds the host
    assert read(rt, ptr, 8) == bytes(8)  # the queued memset never ran
    rt.aclrtMemsetAsync(ptr, 8, 3, 8, s)  # the stream works on
    await rt.aclrtSynchronizeStream(s)
    assert read(rt, ptr, 8) == bytes([3]) * 8


async def test_abort_of_an_idle_stream_and_of_another_context(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    rt.aclrtStreamAbort(s)
    rt.aclrtStreamAbort(0)
    await rt.aclrtSynchronizeStream(s)
    ctx = rt.aclrtCreateContext(0)  # now current: s belongs to the primary context
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtStreamAbort, s)
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtStreamStop, s)
    await rt.aclrtDestroyContext(ctx)


async def test_stop_ends_the_running_wait_and_keeps_the_queue(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    ptr = rt.aclrtMalloc(8, 0)
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, gate)
    rt.aclrtMemsetAsync(ptr, 8, 5, 8, s)
    await asyncio.sleep(0.01)
    rt.aclrtStreamStop(s)
    with pytest.raises(AclError) as info:
        await asyncio.wait_for(rt.aclrtSynchronizeStream(s), 5)
    assert info.value.code == ACL_ERROR_RT_STREAM_ABORT and "gave up its wait" in info.value.message
    assert read(rt, ptr, 8) == bytes([5]) * 8  # the queued memset ran
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtStreamStop, 0)
    rt.aclrtStreamWaitEvent(s, gate)  # a later wait waits again (the stop is over)
    await asyncio.sleep(0.01)
    assert rt.aclrtStreamQuery(s) == aclrtStreamStatus.ACL_STREAM_STATUS_NOT_READY
    rt.aclrtRecordEvent(gate, 0)
    await rt.aclrtSynchronizeStream(s)


async def test_a_failed_task_reports_its_exception_information(rt: Runtime) -> None:
    """What aclrtSetExceptionInfoCallback's callback gets (spec-breadth 3.2): the failed task's number on its
    stream, the stream id, the issuing thread, the device and the code; aclrtGetThreadLastTaskId counts alike."""
    s = rt.aclrtCreateStream()
    assert rt.aclrtGetThreadLastTaskId() == 0
    victim, out = rt.aclrtMalloc(16, 0), rt.aclrtMalloc(16, 0)
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, gate)  # task 1
    rt.aclrtMemsetAsync(out, 16, 1, 16, s)  # task 2
    await rt.aclrtMemcpyAsync(out, 16, victim, 16, ACL_MEMCPY_DEVICE_TO_DEVICE, s)  # task 3: fails
    assert rt.aclrtGetThreadLastTaskId() == 3
    rt.aclrtMemsetAsync(out, 16, 2, 16, s)  # task 4
    rt.aclrtFree(victim)
    rt.aclrtRecordEvent(gate, 0)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(s)
    assert info.value.task == {
        "taskId": 3,
        "streamId": rt.aclrtStreamGetId(s),
        "threadId": threading.get_ident(),
        "deviceId": 0,
        "errorCode": ACL_ERROR_RT_DEVICE_MEM_ERROR,
    }
    assert "task 3" in info.value.message
    assert AclError.from_dict(info.value.to_dict()).task == info.value.task  # as the client rebuilds it
    assert rt.aclrtGetThreadLastTaskId() == 1  # the record went to the default stream: its first task
    await rt.aclrtSynchronizeStream(s)  # reported once
