"""Callbacks and host functions on the device (spec-breadth 4): subscriptions, what a stream waits for, the
mailboxes a client takes from, the runtime's codes; checked against the order of device work around them."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from proto.constants import ACL_CALLBACK_BLOCK, ACL_CALLBACK_NO_BLOCK, aclmdlRICaptureMode, aclrtStreamStatus
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_REPORT_TIMEOUT,
    ACL_ERROR_RT_STREAM_ABORT,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_NO_CB_REG,
    ACL_ERROR_RT_STREAM_SUBSCRIBE,
    ACL_ERROR_RT_THREAD_SUBSCRIBE,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.calls.stream.callback import MAX_REPORT_THREADS
from server.npu.core.caller import caller_thread, calling_thread, thread_of_caller_process
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import read_bytes as read

BLOCKED = aclrtStreamStatus.ACL_STREAM_STATUS_NOT_READY
DONE = aclrtStreamStatus.ACL_STREAM_STATUS_COMPLETE
HELPER = 4242  # the pthread id of "another thread" of this process, which runs the callbacks


Row = tuple[int, int, int, bool, bool]


def rows(reports: list[dict[str, int | bool]]) -> list[Row]:
    """(callbackId, fn, userData, blocking, captured) of each due callback."""
    fields = ("callbackId", "fn", "userData", "blocking", "captured")
    return [tuple(report[f] for f in fields) for report in reports]  # type: ignore[misc]


async def take(rt: Runtime, timeout: int = 2000, thread: int = HELPER) -> list[Row]:
    with calling_thread(thread_of_caller_process(thread)):
        return rows(await rt.vnpuTakeReports(timeout))


async def take_fails(code: int, rt: Runtime, timeout: int = 20, thread: int = HELPER) -> AclError:
    with pytest.raises(AclError) as info:
        await take(rt, timeout, thread)
    assert info.value.code == code, info.value
    return info.value


async def test_a_blocking_callback_holds_its_stream_until_it_returns(rt: Runtime) -> None:
    stream, ptr = rt.aclrtCreateStream(), rt.aclrtMalloc(64, 0)
    rng = np.random.default_rng(1)
    values = rng.integers(1, 255, 2)
    rt.aclrtSubscribeReport(HELPER, stream)
    rt.aclrtMemsetAsync(ptr, 64, int(values[0]), 64, stream)
    rt.aclrtLaunchCallback(0xC0DE, 0xDA7A, ACL_CALLBACK_BLOCK, stream)
    rt.aclrtMemsetAsync(ptr, 64, int(values[1]), 64, stream)
    ((ident, fn, data, blocking, captured),) = await take(rt)
    assert (fn, data, blocking, captured) == (0xC0DE, 0xDA7A, True, False)
    await asyncio.sleep(0.02)
    assert rt.aclrtStreamQuery(stream) == BLOCKED  # the function has not returned: the second memset waits
    assert read(rt, ptr, 64) == bytes([values[0]]) * 64  # the work before it is done
    rt.vnpuCallbackDone(ident)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(stream), 5)
    assert read(rt, ptr, 64) == bytes([values[1]]) * 64
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.vnpuCallbackDone, ident)  # said once; a second time names no callback


async def test_a_non_blocking_callback_lets_its_stream_go_on(rt: Runtime) -> None:
    stream, ptr = rt.aclrtCreateStream(), rt.aclrtMalloc(8, 0)
    rt.aclrtSubscribeReport(HELPER, stream)
    for i in range(3):
        rt.aclrtLaunchCallback(0x100 + i, i, ACL_CALLBACK_NO_BLOCK, stream)
    rt.aclrtMemsetAsync(ptr, 8, 7, 8, stream)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(stream), 5)  # nobody has run them: the stream did not wait
    assert read(rt, ptr, 8) == bytes([7]) * 8
    reports = await take(rt)
    assert [(fn, data, blocking) for _, fn, data, blocking, _ in reports] == [(0x100 + i, i, False) for i in range(3)]
    await take_fails(ACL_ERROR_RT_REPORT_TIMEOUT, rt)  # all were taken at once


async def test_process_report_checks_its_thread_and_timeout(rt: Runtime) -> None:
    await take_fails(ACL_ERROR_RT_THREAD_SUBSCRIBE, rt)  # no stream is subscribed to this thread
    stream = rt.aclrtCreateStream()
    rt.aclrtSubscribeReport(HELPER, stream)
    for bad in (0, -2):
        await take_fails(ACL_ERROR_INVALID_PARAM, rt, bad)
    error = await take_fails(ACL_ERROR_RT_REPORT_TIMEOUT, rt, 30)
    assert "30 ms" in error.message
    await take_fails(ACL_ERROR_RT_THREAD_SUBSCRIBE, rt, thread=HELPER + 1)  # another thread of the process


async def test_launch_callback_checks(rt: Runtime) -> None:
    stream = rt.aclrtCreateStream()
    error = fails(ACL_ERROR_RT_STREAM_NO_CB_REG, rt.aclrtLaunchCallback, 1, 0, ACL_CALLBACK_BLOCK, stream)
    assert "aclrtSubscribeReport" in error.message
    rt.aclrtSubscribeReport(HELPER, stream)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtLaunchCallback, 1, 0, 2, stream)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtLaunchCallback, 0, 0, ACL_CALLBACK_BLOCK, stream)
    primary = rt.aclrtGetCurrentContext()
    other = rt.aclrtCreateContext(0)  # the stream belongs to the primary context, not the current one
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtLaunchCallback, 1, 0, ACL_CALLBACK_BLOCK, stream)
    await rt.aclrtDestroyContext(other)
    rt.aclrtSetCurrentContext(primary)
    await take_fails(ACL_ERROR_RT_REPORT_TIMEOUT, rt)  # nothing was queued by the refused launches


async def test_subscription_rules(rt: Runtime) -> None:
    a, b = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclrtSubscribeReport(HELPER, a)
    fails(ACL_ERROR_RT_STREAM_SUBSCRIBE, rt.aclrtSubscribeReport, HELPER + 1, a)  # a stream has one thread
    rt.aclrtSubscribeReport(HELPER, b)  # a thread may serve several streams
    rt.aclrtSetDevice(1)
    c = rt.aclrtCreateStream()
    error = fails(ACL_ERROR_RT_THREAD_SUBSCRIBE, rt.aclrtSubscribeReport, HELPER, c)  # ... of one device
    assert "device 0" in error.message
    rt.aclrtSubscribeReport(HELPER + 1, c)
    rt.aclrtSetDevice(0)
    fails(ACL_ERROR_RT_STREAM_SUBSCRIBE, rt.aclrtUnSubscribeReport, HELPER, rt.aclrtCreateStream())  # not bound
    fails(ACL_ERROR_RT_THREAD_SUBSCRIBE, rt.aclrtUnSubscribeReport, HELPER + 1, a)  # bound to another thread
    rt.aclrtUnSubscribeReport(HELPER, a)
    fails(ACL_ERROR_RT_STREAM_NO_CB_REG, rt.aclrtLaunchCallback, 1, 0, ACL_CALLBACK_BLOCK, a)
    rt.aclrtLaunchCallback(1, 2, ACL_CALLBACK_NO_BLOCK, b)  # b is still served
    assert [r[1:3] for r in await take(rt)] == [(1, 2)]


async def test_a_callback_queued_behind_an_unsubscribe_fails_at_the_synchronize(rt: Runtime) -> None:
    stream, other = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    event = rt.aclrtCreateEvent()
    rt.aclrtSubscribeReport(HELPER, stream)
    rt.aclrtStreamWaitEvent(stream, event)  # holds the stream until the record below
    rt.aclrtLaunchCallback(5, 6, ACL_CALLBACK_BLOCK, stream)
    rt.aclrtUnSubscribeReport(HELPER, stream)
    rt.aclrtRecordEvent(event, other)
    with pytest.raises(AclError) as info:
        await asyncio.wait_for(rt.aclrtSynchronizeStream(stream), 5)
    assert info.value.code == ACL_ERROR_RT_STREAM_NO_CB_REG and "no longer subscribed" in info.value.message
    assert rt.aclrtStreamQuery(stream) == DONE


async def test_a_thread_limit_of_128() -> None:
    machine = Machine(devices=1, memory_bytes=1 << 20, max_streams=2 * MAX_REPORT_THREADS)
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    streams = [rt.aclrtCreateStream() for _ in range(MAX_REPORT_THREADS + 1)]
    for thread, stream in enumerate(streams[:-1]):
        rt.aclrtSubscribeReport(thread + 1, stream)
    fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtSubscribeReport, 999, streams[-1])
    await rt.aclrtDestroyStream(streams[0])  # a destroyed stream's thread serves nothing any more
    rt.aclrtSubscribeReport(999, streams[-1])
    await rt.release_all()
    machine.close()


async def test_host_functions_hold_the_stream_and_go_to_the_process_thread(rt: Runtime) -> None:
    with pytest.raises(AclError) as info:
        await rt.vnpuTakeHostFuncs(20)  # no stream runs host functions: the client's thread may end
    assert info.value.code == ACL_ERROR_RT_THREAD_SUBSCRIBE
    stream, ptr = rt.aclrtCreateStream(), rt.aclrtMalloc(16, 0)
    rt.aclrtLaunchHostFunc(stream, 0xF00, 0xA55)
    rt.aclrtMemsetAsync(ptr, 16, 3, 16, stream)
    with calling_thread(thread_of_caller_process("the client's host-function thread")):
        ((ident, fn, data, blocking, captured),) = rows(await rt.vnpuTakeHostFuncs(2000))
    assert (fn, data, blocking, captured) == (0xF00, 0xA55, True, False)
    await asyncio.sleep(0.02)
    assert rt.aclrtStreamQuery(stream) == BLOCKED and read(rt, ptr, 16) == bytes(16)
    rt.vnpuCallbackDone(ident)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(stream), 5)
    assert read(rt, ptr, 16) == bytes([3]) * 16
    with pytest.raises(AclError) as info:
        await rt.vnpuTakeHostFuncs(20)
    assert info.value.code == ACL_ERROR_RT_REPORT_TIMEOUT
    await rt.aclrtDestroyStream(stream)
    with pytest.raises(AclError) as info:
        await rt.vnpuTakeHostFuncs(20)
    assert info.value.code == ACL_ERROR_RT_THREAD_SUBSCRIBE


async def test_host_functions_and_report_subscriptions_exclude_each_other(rt: Runtime) -> None:
    user, runtime = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtLaunchHostFunc, runtime, 0, 1)
    rt.aclrtSubscribeReport(HELPER, user)
    error = fails(ACL_ERROR_RT_STREAM_SUBSCRIBE, rt.aclrtLaunchHostFunc, user, 1, 2)  # callback/0's mistake
    assert "aclrtSubscribeReport" in error.message
    rt.aclrtLaunchHostFunc(runtime, 1, 2)
    fails(ACL_ERROR_RT_STREAM_SUBSCRIBE, rt.aclrtSubscribeReport, HELPER, runtime)
    fails(ACL_ERROR_RT_STREAM_SUBSCRIBE, rt.aclrtLaunchCallback, 1, 2, ACL_CALLBACK_BLOCK, runtime)
    fails(ACL_ERROR_RT_STREAM_SUBSCRIBE, rt.aclrtUnSubscribeReport, HELPER, runtime)
    ((ident, *_),) = rows(await rt.vnpuTakeHostFuncs(2000))
    rt.vnpuCallbackDone(ident)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(runtime), 5)


async def test_destroying_a_stream_gives_up_its_untaken_callback(rt: Runtime) -> None:
    stream = rt.aclrtCreateStream()
    rt.aclrtSubscribeReport(HELPER, stream)
    rt.aclrtLaunchCallback(1, 2, ACL_CALLBACK_BLOCK, stream)
    await asyncio.sleep(0.01)
    await asyncio.wait_for(rt.aclrtDestroyStream(stream), 5)  # nobody runs it: the destroy does not hang
    await take_fails(ACL_ERROR_RT_THREAD_SUBSCRIBE, rt)  # withdrawn, and the thread serves nothing now


async def test_an_abort_while_a_taken_callback_runs(rt: Runtime) -> None:
    stream = rt.aclrtCreateStream()
    rt.aclrtSubscribeReport(HELPER, stream)
    rt.aclrtLaunchCallback(1, 2, ACL_CALLBACK_BLOCK, stream)
    ((ident, *_),) = await take(rt)
    synchronize = asyncio.ensure_future(rt.aclrtSynchronizeStream(stream))
    await asyncio.sleep(0.01)
    rt.aclrtStreamAbort(stream)
    with pytest.raises(AclError) as info:
        await asyncio.wait_for(synchronize, 5)
    assert info.value.code == ACL_ERROR_RT_STREAM_ABORT
    rt.vnpuCallbackDone(ident)  # the function returns late: accepted, nothing waits for it
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.vnpuCallbackDone, ident)


async def test_a_captured_callback_runs_at_every_replay(rt: Runtime) -> None:
    stream, ptr = rt.aclrtCreateStream(), rt.aclrtMalloc(8, 0)
    rt.aclrtSubscribeReport(HELPER, stream)
    rt.aclmdlRICaptureBegin(stream, aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    rt.aclrtLaunchCallback(0xAB, 0xCD, ACL_CALLBACK_BLOCK, stream)
    rt.aclrtMemsetAsync(ptr, 8, 9, 8, stream)
    model = rt.aclmdlRICaptureEnd(stream)
    await take_fails(ACL_ERROR_RT_REPORT_TIMEOUT, rt)  # captured, not run
    for replay in range(2):
        rt.aclrtMemset(ptr, 8, 0, 8)
        rt.aclmdlRIExecuteAsync(model, stream)
        ((ident, fn, data, blocking, captured),) = await take(rt)
        assert (fn, data, blocking, captured) == (0xAB, 0xCD, True, True), replay
        await asyncio.sleep(0.01)
        assert read(rt, ptr, 8) == bytes(8)  # the memset behind it waits for its return
        rt.vnpuCallbackDone(ident)
        await asyncio.wait_for(rt.aclrtSynchronizeStream(stream), 5)
        assert read(rt, ptr, 8) == bytes([9]) * 8


async def test_the_default_stream_and_another_process(rt: Runtime) -> None:
    rt.aclrtSubscribeReport(HELPER, None)  # NULL: the default stream of the current context
    rt.aclrtLaunchCallback(3, 4, ACL_CALLBACK_NO_BLOCK, None)
    process, _ = caller_thread()
    # the same pthread id in another process is another thread
    with calling_thread(("another process", HELPER)), pytest.raises(AclError) as info:
        await rt.vnpuTakeReports(20)
    assert info.value.code == ACL_ERROR_RT_THREAD_SUBSCRIBE
    with calling_thread((process, HELPER)):
        assert [r[1:3] for r in rows(await rt.vnpuTakeReports(2000))] == [(3, 4)]
