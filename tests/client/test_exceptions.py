"""Exception-information callbacks through the Python client (spec-breadth 3.2): called with the failed task's
ids in the thread whose synchronize reports the failure, before the error is raised."""

from __future__ import annotations

import threading

import pytest

from client import acl
from client.exceptions import aclrtExceptionInfo
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_DEVICE_MEM_ERROR, ACL_ERROR_RT_PARAM_INVALID, AclError


def fail_a_task(stream: int) -> int:
    """A copy from memory freed before the copy runs; returns its task id."""
    victim, out = acl.aclrtMalloc(16, 0), acl.aclrtMalloc(16, 0)
    gate = acl.aclrtCreateEventWithFlag(acl.ACL_EVENT_SYNC)
    acl.aclrtStreamWaitEvent(stream, gate)
    acl.aclrtMemcpyAsync(out, 16, victim, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, stream)
    task = acl.aclrtGetThreadLastTaskId()
    acl.aclrtFree(victim)
    acl.aclrtRecordEvent(gate, 0)
    return task


def test_the_callback_gets_the_failed_task_before_the_error(daemon: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VNPU_ENDPOINT", daemon)
    acl.aclInit(None)
    seen: list[tuple[aclrtExceptionInfo, bool]] = []
    raised = threading.Event()
    try:
        acl.aclrtSetDevice(0)
        stream = acl.aclrtCreateStream()
        acl.aclrtSetExceptionInfoCallback(lambda info: seen.append((info, raised.is_set())))
        task = fail_a_task(stream)
        with pytest.raises(AclError) as error:
            acl.aclrtSynchronizeStream(stream)
        raised.set()
        assert error.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR
        ((info, after),) = seen
        assert not after  # called before the synchronize returned
        got = [
            acl.aclrtGetTaskIdFromExceptionInfo(info),
            acl.aclrtGetStreamIdFromExceptionInfo(info),
            acl.aclrtGetThreadIdFromExceptionInfo(info),
            acl.aclrtGetDeviceIdFromExceptionInfo(info),
            acl.aclrtGetErrorCodeFromExceptionInfo(info),
        ]
        assert got == [task, acl.aclrtStreamGetId(stream), threading.get_ident(), 0, ACL_ERROR_RT_DEVICE_MEM_ERROR]
        assert acl.aclrtGetTaskIdFromExceptionInfo(None) == 0xFFFFFFFF
        acl.aclrtSetExceptionInfoCallback(None)  # removed: the next failure calls nothing
        fail_a_task(stream)
        with pytest.raises(AclError):
            acl.aclrtSynchronizeStream(stream)
        assert len(seen) == 1
        with pytest.raises(AclError) as error:
            acl.aclrtSetExceptionInfoCallback(42)
        assert error.value.code == ACL_ERROR_INVALID_PARAM
        acl.aclrtResetDevice(0)
    finally:
        acl.aclrtSetExceptionInfoCallback(None)
        acl.aclFinalize()


def test_registered_callbacks_are_called_with_the_set_one(daemon: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VNPU_ENDPOINT", daemon)
    acl.aclInit(None)
    calls: list[str] = []

    def first(info: aclrtExceptionInfo) -> None:
        calls.append("first")

    def second(info: aclrtExceptionInfo) -> None:
        calls.append("second")

    try:
        acl.aclrtSetDevice(0)
        stream = acl.aclrtCreateStream()
        acl.aclrtSetExceptionInfoCallback(lambda info: calls.append("set"))
        acl.aclrtExceptionInfoCallbackRegister(first)
        acl.aclrtExceptionInfoCallbackRegister(first)  # once however often
        acl.aclrtExceptionInfoCallbackRegister(second)
        fail_a_task(stream)
        with pytest.raises(AclError):
            acl.aclrtSynchronizeStream(stream)
        assert sorted(calls) == ["first", "second", "set"]
        acl.aclrtExceptionInfoCallbackUnregister(first)
        acl.aclrtSetExceptionInfoCallback(None)
        fail_a_task(stream)
        with pytest.raises(AclError):
            acl.aclrtSynchronizeStream(stream)
        assert sorted(calls) == ["first", "second", "second", "set"]
        with pytest.raises(AclError) as error:
            acl.aclrtExceptionInfoCallbackRegister(None)
        assert error.value.code == ACL_ERROR_RT_PARAM_INVALID
        acl.aclrtResetDevice(0)
    finally:
        acl.aclrtExceptionInfoCallbackUnregister(second)
        acl.aclFinalize()
