"""Events: the binary-flag legacy events and the snapshot Ex events (spec 3.2), EXTERNAL rules (3.3), flags,
queries, synchronize, elapsed time, timeouts, and waits released by destroy."""

from __future__ import annotations

import asyncio

import pytest

from proto.constants import (
    ACL_EVENT_CAPTURE_STREAM_PROGRESS,
    ACL_EVENT_DEVICE_USE_ONLY,
    ACL_EVENT_EXTERNAL,
    ACL_EVENT_IPC,
    ACL_EVENT_SYNC,
    ACL_EVENT_TIME_LINE,
    aclrtEventRecordedStatus,
    aclrtEventStatus,
    aclrtEventWaitStatus,
    aclrtStreamStatus,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_NO_EVENT_RESOURCE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_WAIT_TIMEOUT,
    AclError,
)
from server.npu import Runtime
from tests.server.npu.devicekit import read_bytes as read

RECORDED = aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_COMPLETE
NOT_RECORDED = aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_NOT_READY
NOT_READY = aclrtStreamStatus.ACL_STREAM_STATUS_NOT_READY
COMPLETE = aclrtStreamStatus.ACL_STREAM_STATUS_COMPLETE


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


@pytest.mark.parametrize("create", ["flag_sync", "external", "plain"])
async def test_binary_wait_issued_before_the_record_blocks_until_it(rt: Runtime, create: str) -> None:
    ev = {
        "flag_sync": lambda: rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC),
        "external": lambda: rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL),
        "plain": rt.aclrtCreateEvent,
    }[create]()
    a = rt.aclrtMalloc(8, 0)
    s1, s2 = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclrtStreamWaitEvent(s2, ev)  # before any record: a binary wait blocks
    rt.aclrtMemsetAsync(a, 8, 2, 8, s2)
    await settle()
    assert rt.aclrtStreamQuery(s2) == NOT_READY and read(rt, a, 8) == b"\x00" * 8
    rt.aclrtMemsetAsync(a, 8, 1, 8, s1)
    rt.aclrtRecordEvent(ev, s1)  # a later record, from another stream, releases it
    await rt.aclrtSynchronizeStream(s2)
    assert read(rt, a, 8) == b"\x02" * 8


async def test_binary_flag_two_records_count_once_and_waits_do_not_clear(rt: Runtime) -> None:
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    s1, s2, s3 = rt.aclrtCreateStream(), rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclrtRecordEvent(ev, s1)
    rt.aclrtRecordEvent(ev, s1)
    await rt.aclrtSynchronizeStream(s1)
    rt.aclrtStreamWaitEvent(s2, ev)
    rt.aclrtStreamWaitEvent(s3, ev)  # the wait of s2 did not clear the flag
    rt.aclrtStreamWaitEvent(s2, ev)  # nor did the first wait: a flag, not a counter
    await asyncio.wait_for(asyncio.gather(rt.aclrtSynchronizeStream(s2), rt.aclrtSynchronizeStream(s3)), 5)
    assert rt.aclrtQueryEventWaitStatus(ev) == aclrtEventWaitStatus.ACL_EVENT_WAIT_STATUS_COMPLETE


async def test_reset_after_one_wait_blocks_the_next_wait(rt: Runtime) -> None:
    """The API07 warning: a reset after stream2's wait makes stream3's wait on the same event block."""
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    s1, s2, s3 = rt.aclrtCreateStream(), rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclrtRecordEvent(ev, s1)
    await rt.aclrtSynchronizeStream(s1)
    rt.aclrtStreamWaitEvent(s2, ev)
    rt.aclrtResetEvent(ev, s2)
    await rt.aclrtSynchronizeStream(s2)
    assert rt.aclrtQueryEventWaitStatus(ev) == aclrtEventWaitStatus.ACL_EVENT_WAIT_STATUS_NOT_READY
    assert rt.aclrtQueryEventStatus(ev) == NOT_RECORDED
    rt.aclrtStreamWaitEvent(s3, ev)
    await settle()
    assert rt.aclrtStreamQuery(s3) == NOT_READY
    rt.aclrtRecordEvent(ev, s1)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(s3), 5)


async def test_ex_event_snapshot_semantics(rt: Runtime) -> None:
    ev = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    s1, s2 = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    assert rt.aclrtQueryEventStatus(ev) == RECORDED  # never recorded: complete, as in CUDA
    rt.aclrtStreamWaitEvent(s2, ev)  # never recorded: skipped
    await asyncio.wait_for(rt.aclrtSynchronizeStream(s2), 5)
    # a record queued behind a blocked stream: a wait issued after it waits for it
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    a = rt.aclrtMalloc(8, 0)
    rt.aclrtStreamWaitEvent(s1, gate)
    rt.aclrtMemsetAsync(a, 8, 7, 8, s1)
    rt.aclrtRecordEvent(ev, s1)
    assert rt.aclrtQueryEventStatus(ev) == NOT_RECORDED
    rt.aclrtStreamWaitEvent(s2, ev)
    b = rt.aclrtMalloc(8, 0)
    await rt.aclrtMemcpyAsync(b, 8, a, 8, 3, s2)
    await settle()
    assert rt.aclrtStreamQuery(s2) == NOT_READY
    rt.aclrtRecordEvent(gate, 0)
    await rt.aclrtSynchronizeStream(s2)
    assert read(rt, b, 8) == b"\x07" * 8
    assert rt.aclrtQueryEventStatus(ev) == RECORDED
    # a record on the same stream, or one that already ran: the wait is skipped
    rt.aclrtRecordEvent(ev, s2)
    rt.aclrtStreamWaitEvent(s2, ev)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(s2), 5)


@pytest.mark.parametrize(
    ("call", "flag"),
    [
        ("aclrtCreateEventWithFlag", 0),
        ("aclrtCreateEventWithFlag", ACL_EVENT_EXTERNAL | ACL_EVENT_SYNC),
        ("aclrtCreateEventWithFlag", ACL_EVENT_IPC),
        ("aclrtCreateEventWithFlag", 0x400),
        ("aclrtCreateEventExWithFlag", ACL_EVENT_EXTERNAL),
        ("aclrtCreateEventExWithFlag", ACL_EVENT_IPC | ACL_EVENT_SYNC),
        ("aclrtCreateEventExWithFlag", ACL_EVENT_DEVICE_USE_ONLY),
        ("aclrtCreateEventExWithFlag", 0),
    ],
)
async def test_bad_create_flags(rt: Runtime, call: str, flag: int) -> None:
    with pytest.raises(AclError) as info:
        getattr(rt, call)(flag)
    assert info.value.code == ACL_ERROR_RT_PARAM_INVALID and info.value.api == call


async def test_good_create_flags(rt: Runtime) -> None:
    rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE | ACL_EVENT_CAPTURE_STREAM_PROGRESS)
    rt.aclrtCreateEventWithFlag(ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_SYNC)
    rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE | ACL_EVENT_CAPTURE_STREAM_PROGRESS)
    rt.aclrtCreateEventExWithFlag(ACL_EVENT_IPC)


@pytest.mark.parametrize("call", ["query_status", "query", "query_wait", "sync", "sync_timeout", "elapsed"])
async def test_external_events_refuse_host_side_calls(rt: Runtime, call: str) -> None:
    ext = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    rt.aclrtRecordEvent(ext, 0)
    await rt.aclrtSynchronizeStream(0)
    with pytest.raises(AclError) as info:
        if call == "query_status":
            rt.aclrtQueryEventStatus(ext)
        elif call == "query":
            rt.aclrtQueryEvent(ext)
        elif call == "query_wait":
            rt.aclrtQueryEventWaitStatus(ext)
        elif call == "sync":
            await rt.aclrtSynchronizeEvent(ext)
        elif call == "sync_timeout":
            await rt.aclrtSynchronizeEventWithTimeout(ext, 10)
        else:
            rt.aclrtEventElapsedTime(ext, ext)
    assert info.value.code == ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    rt.aclrtResetEvent(ext, 0)  # record/wait/reset stay legal
    rt.aclrtRecordEvent(ext, 0)
    rt.aclrtStreamWaitEvent(0, ext)
    await rt.aclrtSynchronizeStream(0)


async def test_wait_and_reset_rules(rt: Runtime) -> None:
    timing_only = rt.aclrtCreateEventWithFlag(ACL_EVENT_TIME_LINE)
    with pytest.raises(AclError) as info:  # no wait task: spec-breadth 5.2 step 2
        rt.aclrtStreamWaitEvent(0, timing_only)
    assert info.value.code == ACL_ERROR_RT_FEATURE_NOT_SUPPORT and "ACL_EVENT_SYNC" in info.value.message
    ex = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    for call in (lambda: rt.aclrtResetEvent(ex, 0), lambda: rt.aclrtQueryEvent(ex)):
        with pytest.raises(AclError) as info:
            call()
        assert info.value.code == ACL_ERROR_RT_PARAM_INVALID
    with pytest.raises(AclError) as info:
        rt.aclrtRecordEvent(0, 0)
    assert info.value.code == ACL_ERROR_INVALID_PARAM
    with pytest.raises(AclError) as info:
        rt.aclrtRecordEvent(0xDEAD, 0)
    assert info.value.code == ACL_ERROR_RT_INVALID_HANDLE


async def test_query_and_synchronize_legacy_event(rt: Runtime) -> None:
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE)
    assert rt.aclrtQueryEventStatus(ev) == NOT_RECORDED
    assert rt.aclrtQueryEvent(ev) == aclrtEventStatus.ACL_EVENT_STATUS_NOT_READY
    await rt.aclrtSynchronizeEvent(ev)  # never recorded: returns at once
    s = rt.aclrtCreateStream()
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, gate)
    rt.aclrtRecordEvent(ev, s)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeEventWithTimeout(ev, 30)
    assert info.value.code == ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
    rt.aclrtRecordEvent(gate, 0)
    await asyncio.wait_for(rt.aclrtSynchronizeEvent(ev), 5)
    assert rt.aclrtQueryEventStatus(ev) == RECORDED
    assert rt.aclrtQueryEvent(ev) == aclrtEventStatus.ACL_EVENT_STATUS_COMPLETE


async def test_elapsed_time(rt: Runtime) -> None:
    start, end = rt.aclrtCreateEvent(), rt.aclrtCreateEventExWithFlag(ACL_EVENT_TIME_LINE)
    with pytest.raises(AclError) as info:
        rt.aclrtEventElapsedTime(start, end)
    assert info.value.code == ACL_ERROR_RT_INTERNAL_ERROR  # never recorded (the runtime's Event::ElapsedTime)
    s = rt.aclrtCreateStream()
    a = rt.aclrtMalloc(1 << 20, 0)
    rt.aclrtRecordEvent(start, s)
    for _ in range(20):
        rt.aclrtMemsetAsync(a, 1 << 20, 1, 1 << 20, s)
    rt.aclrtRecordEvent(end, s)
    await rt.aclrtSynchronizeStream(s)
    ms = rt.aclrtEventElapsedTime(start, end)
    assert 0 < ms < 10_000
    untimed = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtRecordEvent(untimed, s)
    await rt.aclrtSynchronizeStream(s)
    with pytest.raises(AclError) as info:
        rt.aclrtEventElapsedTime(start, untimed)
    assert info.value.code == ACL_ERROR_RT_PARAM_INVALID and "TIME_LINE" in info.value.message


async def test_wait_timeouts(rt: Runtime) -> None:
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    s = rt.aclrtCreateStream()
    rt.aclrtStreamWaitEventWithTimeout(s, ev, 1)
    a = rt.aclrtMalloc(8, 0)
    rt.aclrtMemsetAsync(a, 8, 1, 8, s)
    with pytest.raises(AclError) as info:
        await asyncio.wait_for(rt.aclrtSynchronizeStream(s), 10)
    assert info.value.code == ACL_ERROR_RT_WAIT_TIMEOUT
    assert read(rt, a, 8) == b"\x01" * 8
    rt.aclrtSetOpWaitTimeout(1)
    rt.aclrtStreamWaitEvent(s, ev)
    with pytest.raises(AclError) as info:
        await asyncio.wait_for(rt.aclrtSynchronizeStream(s), 10)
    assert info.value.code == ACL_ERROR_RT_WAIT_TIMEOUT
    with pytest.raises(AclError) as info:
        rt.aclrtStreamWaitEventWithTimeout(s, ev, -1)
    assert info.value.code == ACL_ERROR_INVALID_PARAM


async def test_destroying_the_event_releases_its_waiter(rt: Runtime) -> None:
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    s = rt.aclrtCreateStream()
    rt.aclrtStreamWaitEvent(s, ev)
    await settle()
    rt.aclrtDestroyEvent(ev)
    with pytest.raises(AclError) as info:
        await asyncio.wait_for(rt.aclrtSynchronizeStream(s), 5)
    assert info.value.code == ACL_ERROR_RT_INVALID_HANDLE and "destroyed" in info.value.message
    await rt.aclrtSynchronizeStream(s)


async def test_destroy_with_a_pending_record_lets_the_waiter_through(rt: Runtime) -> None:
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    s1, s2 = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s1, gate)
    rt.aclrtRecordEvent(ev, s1)  # pending behind the gate
    rt.aclrtStreamWaitEvent(s2, ev)
    rt.aclrtDestroyEvent(ev)  # does not block; the record still runs
    rt.aclrtRecordEvent(gate, 0)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(s2), 5)


async def test_event_limit_counts_legacy_events_only(rt: Runtime) -> None:
    legacy = [rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC) for _ in range(64)]
    with pytest.raises(AclError) as info:
        rt.aclrtCreateEvent()
    assert info.value.code == ACL_ERROR_RT_NO_EVENT_RESOURCE
    for _ in range(100):
        rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)  # not a hardware event
    rt.aclrtDestroyEvent(legacy[0])
    rt.aclrtCreateEvent()
