"""Overflow detection (spec-breadth 18): the saturation mode per process, the overflow switch per stream, the ACL
context's status area read into device memory and cleared by tasks in stream order; each check's code, then
proof the stream still works."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from proto.constants import (
    ACL_EVENT_SYNC,
    ACL_MEMCPY_HOST_TO_DEVICE,
    aclmdlRICaptureMode,
    aclrtFloatOverflowMode,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_CONTEXT,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.caller import calling_thread
from tests.server.npu.devicekit import read_bytes as read
from tests.server.npu.test_stream_control import fails

SAT, INFNAN = aclrtFloatOverflowMode.ACL_RT_OVERFLOW_MODE_SATURATION, aclrtFloatOverflowMode.ACL_RT_OVERFLOW_MODE_INFNAN
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
    rt.acl_context().overflow_status[:] = np.frombuffer(status, np.uint8)
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
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtGetStreamOverflowSwitch, 0xBAD)
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
    assert rt.acl_context().overflow_status.tobytes() == status  # not cleared yet either
    rt.aclrtRecordEvent(gate, 0)
    await rt.aclrtSynchronizeStream(s)
    assert read(rt, first, 64) == bytes([0x11]) * 8 + status[8:64]
    assert read(rt, second, 64) == bytes(64)  # read after the reset
    assert rt.acl_context().overflow_status.tobytes() == bytes(512)  # all 512 bytes, not just the 64 read


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
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtGetOverflowStatus, out, 64, 0xBAD)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtResetOverflowStatus, 0xBAD)
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
