"""The event calls of spec-breadth 5: records and waits with a flag, timestamps, and two facts the samples rely
on (a reset of an aclrtCreateEvent event; the status of an event never recorded)."""

from __future__ import annotations

import asyncio
import time

import pytest

from proto.constants import (
    ACL_EVENT_EXTERNAL,
    ACL_EVENT_IPC,
    ACL_EVENT_RECORD_EXTERNAL,
    ACL_EVENT_SYNC,
    ACL_EVENT_TIME_LINE,
    ACL_EVENT_WAIT_EXTERNAL,
    aclrtEventRecordedStatus,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_NOT_CAPTURED,
    AclError,
)
from server.npu import Runtime
from tests.server.npu.core.test_stream_control import fails

READY = aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_COMPLETE
NOT_READY = aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_NOT_READY


async def test_flag_zero_is_the_plain_record_and_wait(rt: Runtime) -> None:
    s1, s2 = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    ptr = rt.aclrtMalloc(8, 0)
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEventWithFlag(s2, ev, 0, 0)  # waits for the record issued after it (binary event)
    rt.aclrtMemsetAsync(ptr, 8, 4, 8, s2)
    await asyncio.sleep(0.01)
    assert rt.aclrtStreamQuery(s2) == 1  # not ready: blocked on the event
    rt.aclrtRecordEventWithFlag(ev, s1, 0)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(s2), 5)
    assert rt.aclrtQueryEventStatus(ev) == READY


async def test_flag_checks(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    ev = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtRecordEventWithFlag, ev, s, 2)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtStreamWaitEventWithFlag, s, ev, 0, 2)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtStreamWaitEventWithFlag, s, ev, 5, ACL_EVENT_WAIT_EXTERNAL)
    # EXTERNAL needs an Ex SYNC event, and a capturing stream
    legacy = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtRecordEventWithFlag, legacy, s, ACL_EVENT_RECORD_EXTERNAL)
    error = fails(ACL_ERROR_RT_STREAM_NOT_CAPTURED, rt.aclrtRecordEventWithFlag, ev, s, ACL_EVENT_RECORD_EXTERNAL)
    assert "not capturing" in error.message
    fails(ACL_ERROR_RT_STREAM_NOT_CAPTURED, rt.aclrtStreamWaitEventWithFlag, s, ev, 0, ACL_EVENT_WAIT_EXTERNAL)


async def test_the_first_record_and_wait_fix_the_events_flags(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    ev = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclrtRecordEvent(ev, s)  # record flag: DEFAULT
    rt.aclrtStreamWaitEventWithFlag(s, ev, 0, 0)  # wait flag: DEFAULT
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtRecordEventWithFlag, ev, s, ACL_EVENT_RECORD_EXTERNAL)
    assert "one flag per event" in error.message
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtStreamWaitEventWithFlag, s, ev, 0, ACL_EVENT_WAIT_EXTERNAL)
    await rt.aclrtSynchronizeStream(s)


async def test_timestamps_are_device_microseconds(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    start, end = rt.aclrtCreateEvent(), rt.aclrtCreateEvent()
    err = fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtEventGetTimestamp, start)
    assert "never recorded" in err.message
    rt.aclrtRecordEvent(start, s)
    await rt.aclrtSynchronizeStream(s)
    time.sleep(0.02)
    rt.aclrtRecordEvent(end, s)
    await rt.aclrtSynchronizeStream(s)
    t0, t1 = rt.aclrtEventGetTimestamp(start), rt.aclrtEventGetTimestamp(end)
    assert 0 <= t0 < t1
    elapsed_ms = rt.aclrtEventElapsedTime(start, end)
    assert abs((t1 - t0) / 1000 - elapsed_ms) < 0.01  # one clock for both
    assert elapsed_ms >= 19


async def test_timestamp_errors(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    late = rt.aclrtCreateEvent()
    rt.aclrtStreamWaitEvent(s, gate)
    rt.aclrtRecordEvent(late, s)
    fails(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, rt.aclrtEventGetTimestamp, late)  # its record has not run
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtEventGetTimestamp, rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC))
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtEventGetTimestamp, rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL))
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtEventGetTimestamp, rt.aclrtCreateEventExWithFlag(ACL_EVENT_IPC))
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtEventGetTimestamp, 0)
    rt.aclrtRecordEvent(gate, 0)
    await rt.aclrtSynchronizeStream(s)
    assert rt.aclrtEventGetTimestamp(late) > 0


async def test_reset_of_an_acl_create_event_event(rt: Runtime) -> None:
    """CANN's stream/2 sample resets an aclrtCreateEvent event: the runtime accepts it (spec-breadth 5.5)."""
    s1, s2 = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    ev = rt.aclrtCreateEvent()
    rt.aclrtRecordEvent(ev, s1)
    rt.aclrtStreamWaitEvent(s2, ev)
    rt.aclrtResetEvent(ev, s2)
    await rt.aclrtSynchronizeStream(s1)
    await rt.aclrtSynchronizeStream(s2)
    assert rt.aclrtQueryEventStatus(ev) == NOT_READY  # the reset cleared it


async def test_status_before_any_record(rt: Runtime) -> None:
    assert rt.aclrtQueryEventStatus(rt.aclrtCreateEvent()) == NOT_READY
    assert rt.aclrtQueryEventStatus(rt.aclrtCreateEventWithFlag(ACL_EVENT_TIME_LINE)) == NOT_READY
    assert rt.aclrtQueryEventStatus(rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)) == READY
    assert rt.aclrtQueryEventStatus(rt.aclrtCreateEventExWithFlag(ACL_EVENT_TIME_LINE)) == READY


async def test_an_event_without_a_wait_task_cannot_be_waited_on(rt: Runtime) -> None:
    with pytest.raises(AclError) as info:
        rt.aclrtStreamWaitEventWithFlag(0, rt.aclrtCreateEventExWithFlag(ACL_EVENT_TIME_LINE), 0, 0)
    assert info.value.code == ACL_ERROR_RT_FEATURE_NOT_SUPPORT and "no wait task" in info.value.message
