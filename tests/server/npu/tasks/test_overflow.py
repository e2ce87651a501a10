"""Overflow detection and stream attributes (spec-breadth 18 and 2.4): the saturation mode per process, the
overflow switch per stream, the ACL context's status area read into device memory and cleared by tasks in
stream order, every attribute of aclrtSetStreamAttribute; each check's code, then proof the stream still works."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from proto.constants import (
    ACL_EVENT_SYNC,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_STOP_ON_FAILURE,
    ACL_STREAM_CPU_SCHEDULE,
    ACL_STREAM_DEVICE_USE_ONLY,
    aclmdlRICaptureMode,
    aclrtFloatOverflowMode,
    aclrtStreamAttr,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_CONTEXT,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.core.caller import calling_thread
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import read_bytes as read

SAT, INFNAN = aclrtFloatOverflowMode.ACL_RT_OVERFLOW_MODE_SATURATION, aclrtFloatOverflowMode.ACL_RT_OVERFLOW_MODE_INFNAN
A = aclrtStreamAttr
GLOBAL = aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
RNG = np.random.default_rng(18)


def random_bytes(n: int) -> bytes:
    return RNG.integers(1, 256, n, dtype=np.uint8).tobytes()  # no zero byte: a zero written shows


def filled(rt: Runtime, n: int) -> tuple[int, bytes]:
    """n bytes of fresh device memory holding random non-zero bytes, and those bytes."""
    ptr, data = rt.aclrtMalloc(n, 0), random_bytes(n)
    rt.aclrtMemcpy(ptr, n, data, n, ACL_MEMCPY_HOST_TO_DEVICE)
    return ptr, data


def record_overflow(rt: Runtime) -> bytes:
    """Write a status into the current ACL context's area, as a device that detected an overflow would (vnpu's
    kernels never do); returns the 512 bytes."""
    status = random_bytes(512)
    rt.ctx.acl_context().overflow_status[:] = np.frombuffer(status, np.uint8)
    return status


async def test_sat_mode_is_per_process_and_infnan_at_first(rt: Runtime, machine: Machine) -> None:
    assert rt.aclrtGetDeviceSatMode() == INFNAN  # the Ascend910B's initial mode (the sample's README)
    rt.aclrtSetDeviceSatMode(SAT)
    assert rt.aclrtGetDeviceSatMode() == SAT
    for bad in (aclrtFloatOverflowMode.ACL_RT_OVERFLOW_MODE_UNDEF, 3, -1):
        error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtSetDeviceSatMode, bad)
        assert "ACL_RT_OVERFLOW_MODE_SATURATION" in error.message
    assert rt.aclrtGetDeviceSatMode() == SAT  # a refused mode changes nothing
    rt.aclrtCreateContext(1)  # the process's mode, whatever the context or device
    assert rt.aclrtGetDeviceSatMode() == SAT
    with calling_thread(("p", 9)):  # a thread with no device at all
        rt.aclrtSetDeviceSatMode(INFNAN)
        assert rt.aclrtGetDeviceSatMode() == INFNAN
    rt.aclrtSetDeviceSatMode(SAT)
    other = Runtime(machine)  # another process
    other.aclInit()
    assert other.aclrtGetDeviceSatMode() == INFNAN
    await rt.aclrtResetDeviceForce(0)  # not the device's: the process keeps it
    assert rt.aclrtGetDeviceSatMode() == SAT


async def test_overflow_switch(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    assert (rt.aclrtGetStreamOverflowSwitch(s), rt.aclrtGetStreamOverflowSwitch(0)) == (0, 0)
    rt.aclrtSetStreamOverflowSwitch(s, 1)
    assert (rt.aclrtGetStreamOverflowSwitch(s), rt.aclrtGetStreamOverflowSwitch(0)) == (1, 0)
    rt.aclrtSetStreamOverflowSwitch(None, 1)  # NULL: the default stream
    assert rt.aclrtGetStreamOverflowSwitch(0) == 1
    rt.aclrtSetStreamOverflowSwitch(s, 0)
    assert rt.aclrtGetStreamOverflowSwitch(s) == 0
    for bad in (2, 0xFFFFFFFF):
        error = fails(ACL_ERROR_INVALID_PARAM, rt.aclrtSetStreamOverflowSwitch, s, bad)  # the ACL layer's check
        assert "0 or 1" in error.message
    assert rt.aclrtGetStreamOverflowSwitch(s) == 0
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtGetStreamOverflowSwitch, 0xBAD)
    with calling_thread(("p", 9)):
        fails(ACL_ERROR_RT_CONTEXT_NULL, rt.aclrtSetStreamOverflowSwitch, s, 1)
        fails(ACL_ERROR_RT_CONTEXT_NULL, rt.aclrtGetStreamOverflowSwitch, s)


async def test_overflow_switch_needs_the_streams_context(rt: Runtime) -> None:
    mine = rt.aclrtCreateStream()
    rt.aclrtCreateContext(0)
    error = fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtSetStreamOverflowSwitch, mine, 1)
    assert "not a stream of this thread's" in error.message
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtGetStreamOverflowSwitch, mine)
    rt.aclrtSetDevice(0)  # back on the primary context: its stream takes it
    rt.aclrtSetStreamOverflowSwitch(mine, 1)
    assert rt.aclrtGetStreamOverflowSwitch(mine) == 1


async def test_status_is_copied_into_device_memory(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    out, before = filled(rt, 128)
    rt.aclrtGetOverflowStatus(out, 64, s)
    await rt.aclrtSynchronizeStream(s)
    got = read(rt, out, 128)
    assert got[:64] == bytes(64) and got[64:] == before[64:]  # nothing overflowed; only 64 bytes written
    status = record_overflow(rt)
    rt.aclrtGetOverflowStatus(out + 64, 64, None)  # NULL: the default stream
    await rt.aclrtSynchronizeStream(None)
    assert read(rt, out + 64, 64) == status[:64]


async def test_status_tasks_run_in_stream_order(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    (first, a), (second, b) = filled(rt, 64), filled(rt, 64)
    status = record_overflow(rt)
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, gate)
    rt.aclrtMemsetAsync(first, 64, 0xEE, 64, s)  # overwritten by the read after it
    rt.aclrtGetOverflowStatus(first, 64, s)
    rt.aclrtMemsetAsync(first, 64, 0x11, 8, s)  # over the read before it
    rt.aclrtResetOverflowStatus(s)
    rt.aclrtGetOverflowStatus(second, 64, s)
    await asyncio.sleep(0.02)
    assert (read(rt, first, 64), read(rt, second, 64)) == (a, b)  # queued behind the gate: nothing ran yet
    assert rt.ctx.acl_context().overflow_status.tobytes() == status  # not cleared yet either
    rt.aclrtRecordEvent(gate, 0)
    await rt.aclrtSynchronizeStream(s)
    assert read(rt, first, 64) == bytes([0x11]) * 8 + status[8:64]
    assert read(rt, second, 64) == bytes(64)  # read after the reset
    assert rt.ctx.acl_context().overflow_status.tobytes() == bytes(512)  # all 512 bytes, not just the 64 read


async def test_the_float_overflow_names_are_the_same_calls(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    out, _ = filled(rt, 64)
    status = record_overflow(rt)
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, gate)
    rt.aclrtGetFloatOverflowStatus(out, 64, s)
    rt.aclrtResetFloatOverflowStatus(s)
    assert rt.ctx.acl_context().overflow_status.tobytes() == status  # queued, not run
    rt.aclrtRecordEvent(gate, 0)
    await rt.aclrtSynchronizeStream(s)
    assert read(rt, out, 64) == status[:64] and rt.ctx.acl_context().overflow_status.tobytes() == bytes(512)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtGetFloatOverflowStatus, 0, 64, s)  # no ACL-layer NULL check
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtGetFloatOverflowStatus, out, 32, s)
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    fails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclrtGetFloatOverflowStatus, out, 64, s)
    fails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclrtResetFloatOverflowStatus, s)
    rt.aclmdlRICaptureEnd(s)


async def test_each_acl_context_has_its_own_status(rt: Runtime) -> None:
    primary_status = record_overflow(rt)
    out, _ = filled(rt, 64)
    rt.aclrtCreateContext(0)
    own = rt.aclrtCtxGetCurrentDefaultStream()
    rt.aclrtGetOverflowStatus(out, 64, own)
    rt.aclrtResetOverflowStatus(own)  # clears this context's, not the primary's
    await rt.aclrtSynchronizeStream(own)
    assert read(rt, out, 64) == bytes(64)
    rt.aclrtSetDevice(0)
    rt.aclrtGetOverflowStatus(out, 64, None)
    await rt.aclrtSynchronizeStream(None)
    assert read(rt, out, 64) == primary_status[:64]


async def test_status_checks(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    out, before = filled(rt, 64)
    host = rt.aclrtMallocHost(64)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtGetOverflowStatus, 0, 64, s)
    for size in (0, 32, 65, 512):
        error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtGetOverflowStatus, out, size, s)
        assert "outputSize must be 64" in error.message
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtGetOverflowStatus, host, 64, s)
    assert "device memory" in error.message
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtGetOverflowStatus, out + 8, 64, s)  # past the allocation's end
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtGetOverflowStatus, out, 64, 0xBAD)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtResetOverflowStatus, 0xBAD)
    rt.aclrtCreateContext(0)
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtGetOverflowStatus, out, 64, s)
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtResetOverflowStatus, s)
    with calling_thread(("p", 9)):
        fails(ACL_ERROR_RT_CONTEXT_NULL, rt.aclrtGetOverflowStatus, out, 64, s)
    rt.aclrtSetDevice(0)
    assert read(rt, out, 64) == before  # nothing was queued
    rt.aclrtGetOverflowStatus(out, 64, s)
    await rt.aclrtSynchronizeStream(s)
    assert read(rt, out, 64) == bytes(64)


async def test_a_status_read_into_freed_memory_fails_when_it_runs(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    out, _ = filled(rt, 64)
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, gate)
    rt.aclrtGetOverflowStatus(out, 64, s)
    rt.aclrtFree(out)
    rt.aclrtRecordEvent(gate, 0)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(s)
    assert info.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR and "aclrtGetOverflowStatus" in info.value.message


async def test_a_capturing_stream_refuses_the_overflow_calls(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    out, before = filled(rt, 64)
    status = record_overflow(rt)
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    for call, args in (
        (rt.aclrtGetOverflowStatus, (out, 64, s)),
        (rt.aclrtResetOverflowStatus, (s,)),
        (rt.aclrtSetStreamOverflowSwitch, (s, 1)),
        (rt.aclrtSetStreamAttribute, (s, A.ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, 1)),
        (rt.aclrtSetStreamAttribute, (s, A.ACL_STREAM_ATTR_USER_CUSTOM_TAG, 7)),
    ):
        error = fails(ACL_ERROR_RT_STREAM_CAPTURED, call, *args)
        assert "while it is capturing" in error.message
    assert rt.aclrtGetStreamOverflowSwitch(s) == 0  # a query is allowed
    rt.aclrtGetOverflowStatus(out, 64, None)  # the default stream is not capturing
    model = rt.aclmdlRICaptureEnd(s)  # the capture is still valid: nothing of it was recorded
    assert "aclrtGetOverflowStatus" not in rt.aclmdlRIDebugPrint(model)
    await rt.aclrtSynchronizeStream(None)
    assert read(rt, out, 64) == status[:64] != before
    rt.aclrtResetOverflowStatus(s)  # the stream takes them again
    rt.aclrtGetOverflowStatus(out, 64, s)
    rt.aclrtSetStreamOverflowSwitch(s, 1)
    await rt.aclrtSynchronizeStream(s)
    assert read(rt, out, 64) == bytes(64) and rt.aclrtGetStreamOverflowSwitch(s) == 1


async def test_failure_mode_attribute(rt: Runtime) -> None:
    s, sibling = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    assert rt.aclrtGetStreamAttribute(s, A.ACL_STREAM_ATTR_FAILURE_MODE) == 0
    rt.aclrtSetStreamAttribute(s, A.ACL_STREAM_ATTR_FAILURE_MODE, ACL_STOP_ON_FAILURE | 0x10)  # only bit 0
    assert rt.aclrtGetStreamAttribute(s, A.ACL_STREAM_ATTR_FAILURE_MODE) == ACL_STOP_ON_FAILURE
    assert rt.aclrtGetStreamAttribute(sibling, A.ACL_STREAM_ATTR_FAILURE_MODE) == 0  # its own mode...
    assert rt.ctx.stream(sibling).stop_on_failure  # ...though the context now stops on failure
    error = fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtSetStreamAttribute, s, A.ACL_STREAM_ATTR_FAILURE_MODE, 0)
    assert "cannot leave" in error.message
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtSetStreamFailureMode, s, 0)  # the same state as the call
    device_only = rt.aclrtCreateStreamWithConfig(0, ACL_STREAM_DEVICE_USE_ONLY)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtSetStreamAttribute, device_only, A.ACL_STREAM_ATTR_FAILURE_MODE, 1)
    rt.aclrtSetStreamFailureMode(sibling, ACL_STOP_ON_FAILURE)
    assert rt.aclrtGetStreamAttribute(sibling, A.ACL_STREAM_ATTR_FAILURE_MODE) == ACL_STOP_ON_FAILURE


async def test_overflow_check_attribute_is_the_switch(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    check = A.ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK
    rt.aclrtSetStreamAttribute(s, check, 1)
    assert rt.aclrtGetStreamOverflowSwitch(s) == 1 == rt.aclrtGetStreamAttribute(s, check)
    rt.aclrtSetStreamOverflowSwitch(s, 0)
    assert rt.aclrtGetStreamAttribute(s, check) == 0
    rt.aclrtSetStreamAttribute(s, check, (7 << 32) | 1)  # the 32-bit member: the union's low bytes
    assert rt.aclrtGetStreamAttribute(s, check) == 1
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtSetStreamAttribute, s, check, 2)  # no ACL-layer check: the runtime's
    assert rt.aclrtGetStreamAttribute(s, check) == 1
    rt.aclrtCreateContext(0)
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtSetStreamAttribute, s, check, 0)
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtGetStreamAttribute, s, check)


async def test_user_custom_tag(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    tag_attr = A.ACL_STREAM_ATTR_USER_CUSTOM_TAG
    assert rt.aclrtGetStreamAttribute(s, tag_attr) == 0xFFFFFFFF  # none set
    tag = int(RNG.integers(0, 2**32))
    rt.aclrtSetStreamAttribute(s, tag_attr, tag)
    rt.aclrtSetStreamAttribute(None, tag_attr, tag ^ 0xFF)
    assert (rt.aclrtGetStreamAttribute(s, tag_attr), rt.aclrtGetStreamAttribute(0, tag_attr)) == (tag, tag ^ 0xFF)
    rt.aclrtCreateContext(0)
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtSetStreamAttribute, s, tag_attr, 1)
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtGetStreamAttribute, s, tag_attr)
    rt.aclrtSetDevice(0)
    assert rt.aclrtGetStreamAttribute(s, tag_attr) == tag


async def test_cache_op_info_takes_effect_in_captures(rt: Runtime) -> None:
    origin, joined = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    cache = A.ACL_STREAM_ATTR_CACHE_OP_INFO

    def switches() -> tuple[int, int]:
        return rt.aclrtGetStreamAttribute(origin, cache), rt.aclrtGetStreamAttribute(joined, cache)

    rt.aclrtSetStreamAttribute(origin, cache, 1)
    assert switches() == (0, 0)  # set, not in effect outside a capture
    fork, join = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC), rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclmdlRICaptureBegin(origin, GLOBAL)
    assert switches() == (1, 0)
    rt.aclrtRecordEvent(fork, origin)
    rt.aclrtStreamWaitEvent(joined, fork)  # joins the capture: the origin's switch
    assert switches() == (1, 1)
    rt.aclrtSetStreamAttribute(origin, cache, 0)  # the origin's switch, for the whole capture
    assert switches() == (0, 0)
    rt.aclrtSetStreamAttribute(joined, cache, 1)  # a joined stream's own switch counts only when it is an origin
    assert switches() == (0, 0)
    rt.aclrtSetStreamAttribute(origin, cache, 1)
    assert switches() == (1, 1)
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtSetStreamAttribute, origin, cache, 2)
    assert "0 or 1" in error.message
    rt.aclrtRecordEvent(join, joined)
    rt.aclrtStreamWaitEvent(origin, join)
    rt.aclmdlRICaptureEnd(origin)
    assert switches() == (0, 0)
    rt.aclmdlRICaptureBegin(joined, GLOBAL)  # its own switch, set during the other capture
    assert switches() == (0, 1)
    rt.aclmdlRICaptureEnd(joined)
    rt.aclrtCreateContext(0)  # no context check: another context's stream takes it
    rt.aclrtSetStreamAttribute(origin, cache, 0)


async def test_priority_attribute(rt: Runtime) -> None:
    s = rt.aclrtCreateStreamWithConfig(5, 0)
    prio = A.ACL_STREAM_ATTR_PRIORITY
    assert rt.aclrtGetStreamAttribute(s, prio) == 5  # the creation priority at first
    rt.aclrtSetStreamAttribute(s, prio, 3)
    assert (rt.aclrtGetStreamAttribute(s, prio), rt.aclrtStreamGetPriority(s)) == (3, 5)
    for value, clamped in ((100, 7), (0xFFFFFFFF, 0), (7, 7), (2**31, 0)):  # int32: 0xFFFFFFFF is -1
        rt.aclrtSetStreamAttribute(s, prio, value)
        assert rt.aclrtGetStreamAttribute(s, prio) == clamped
    for call, args in ((rt.aclrtSetStreamAttribute, (None, prio, 1)), (rt.aclrtGetStreamAttribute, (0, prio))):
        error = fails(ACL_ERROR_RT_PARAM_INVALID, call, *args)
        assert "takes no default stream" in error.message
    default = rt.aclrtCtxGetCurrentDefaultStream()  # the default stream passed as itself
    rt.aclrtSetStreamAttribute(default, prio, 2)
    assert rt.aclrtGetStreamAttribute(default, prio) == 2
    cpu = rt.aclrtCreateStreamWithConfig(0, ACL_STREAM_CPU_SCHEDULE)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtSetStreamAttribute, cpu, prio, 1)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtGetStreamAttribute, cpu, prio)
    rt.aclrtCreateContext(0)  # no context check here either
    rt.aclrtSetStreamAttribute(s, prio, 4)
    assert rt.aclrtGetStreamAttribute(s, prio) == 4
    with calling_thread(("p", 9)):
        fails(ACL_ERROR_RT_CONTEXT_NULL, rt.aclrtGetStreamAttribute, s, prio)


async def test_other_attribute_ids_and_handles(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    for attr in (0, 6, -1):
        error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtSetStreamAttribute, s, attr, 1)
        assert f"stmAttrType {attr} is not an aclrtStreamAttr" in error.message
        fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtGetStreamAttribute, s, attr)
    for attr in A:
        fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtSetStreamAttribute, 0xBAD, attr, 0)
        fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtGetStreamAttribute, 0xBAD, attr)
    # after every refusal the stream works on
    out, _ = filled(rt, 64)
    rt.aclrtMemsetAsync(out, 64, 0x3C, 64, s)
    await rt.aclrtSynchronizeStream(s)
    assert read(rt, out, 64) == bytes([0x3C]) * 64
