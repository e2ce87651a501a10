"""Notifies (spec-breadth 6): one stream records, another waits and resets; ids; timeouts; bad input."""

from __future__ import annotations

import asyncio

from proto.constants import ACL_NOTIFY_DEFAULT, ACL_NOTIFY_DEVICE_USE_ONLY, aclrtStreamStatus
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_WAIT_TIMEOUT,
    AclError,
)
from server.npu import Runtime
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import read_bytes as read

BLOCKED = aclrtStreamStatus.ACL_STREAM_STATUS_NOT_READY


async def test_each_record_releases_one_wait(rt: Runtime) -> None:
    producer, consumer = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    notify = rt.aclrtCreateNotify(ACL_NOTIFY_DEFAULT)
    ptr = rt.aclrtMalloc(8, 0)
    rt.aclrtMemset(ptr, 8, 0, 8)
    rt.aclrtWaitAndResetNotify(notify, consumer, 0)
    rt.aclrtMemsetAsync(ptr, 8, 1, 8, consumer)
    rt.aclrtWaitAndResetNotify(notify, consumer, 0)  # the first wait reset the flag: this one waits again
    rt.aclrtMemsetAsync(ptr, 8, 2, 8, consumer)
    await asyncio.sleep(0.01)
    assert rt.aclrtStreamQuery(consumer) == BLOCKED and read(rt, ptr, 8) == bytes(8)
    rt.aclrtRecordNotify(notify, producer)
    await rt.aclrtSynchronizeStream(producer)
    await asyncio.sleep(0.01)
    assert read(rt, ptr, 8) == bytes([1]) * 8 and rt.aclrtStreamQuery(consumer) == BLOCKED
    rt.aclrtRecordNotify(notify, producer)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(consumer), 5)
    assert read(rt, ptr, 8) == bytes([2]) * 8


async def test_a_record_before_the_wait_counts(rt: Runtime) -> None:
    notify = rt.aclrtCreateNotify(ACL_NOTIFY_DEVICE_USE_ONLY)
    s = rt.aclrtCreateStream()
    rt.aclrtRecordNotify(notify, 0)
    rt.aclrtRecordNotify(notify, 0)  # two records before one wait count once
    await rt.aclrtSynchronizeStream(0)
    rt.aclrtWaitAndResetNotify(notify, s, 0)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(s), 5)
    rt.aclrtWaitAndResetNotify(notify, s, 1)  # reset by the first wait: this one times out after 1 s
    error = None
    try:
        await asyncio.wait_for(rt.aclrtSynchronizeStream(s), 5)
    except AclError as e:
        error = e
    assert error is not None and error.code == ACL_ERROR_RT_WAIT_TIMEOUT


async def test_ids_and_bad_input(rt: Runtime) -> None:
    a, b = rt.aclrtCreateNotify(0), rt.aclrtCreateNotify(0)
    assert rt.aclrtGetNotifyId(a) != rt.aclrtGetNotifyId(b)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtCreateNotify, 2)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtRecordNotify, 0, 0)
    rt.aclrtDestroyNotify(a)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtRecordNotify, a, 0)  # the runtime validates the handle first
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtDestroyNotify, a)
    rt.aclrtSetDevice(1)
    other = rt.aclrtCreateStream()
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtRecordNotify, b, other)
