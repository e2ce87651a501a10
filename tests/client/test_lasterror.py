"""aclrtGetLastError / aclrtPeekAtLastError through the client: per thread, runtime failures only (the ACL
layer's 100000 is not stored), a pipelined failure stored by the waiting call that reports it."""

from __future__ import annotations

import threading

import pytest

from client import acl
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)


def fails(call: object, *args: object) -> int:
    with pytest.raises(AclError) as info:
        call(*args)  # type: ignore[operator]
    return info.value.code


def test_the_last_runtime_error_per_thread(daemon: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VNPU_ENDPOINT", daemon)
    acl.aclInit(None)
    try:
        acl.aclrtGetLastError(0)  # whatever an earlier test of this thread left
        assert acl.aclrtPeekAtLastError(0) == 0
        assert fails(acl.aclrtSetDevice, 7) == ACL_ERROR_RT_INVALID_DEVICEID
        assert acl.aclrtPeekAtLastError(0) == ACL_ERROR_RT_INVALID_DEVICEID  # peek keeps it
        seen: dict[str, int] = {}
        other = threading.Thread(target=lambda: seen.update(other=acl.aclrtPeekAtLastError(0)))
        other.start()
        other.join(10)
        assert seen == {"other": 0}  # another thread has its own
        assert acl.aclrtGetLastError(0) == ACL_ERROR_RT_INVALID_DEVICEID
        assert acl.aclrtGetLastError(0) == 0  # get cleared it
        assert fails(acl.aclrtGetLastError, 1) == ACL_ERROR_INVALID_PARAM  # only ACL_RT_THREAD_LEVEL exists
        acl.aclrtSetDevice(0)
        assert fails(acl.aclrtMalloc, 0, 0) == ACL_ERROR_INVALID_PARAM  # an argument check: not stored
        assert acl.aclrtPeekAtLastError(0) == 0
        stream = acl.aclrtCreateStream()
        acl.aclrtMemsetAsync(0x12C0_DEAD_0000, 64, 0, 64, stream)  # pipelined: fails in the daemon
        assert fails(acl.aclrtSynchronizeStream, stream) == ACL_ERROR_RT_PARAM_INVALID
        assert acl.aclrtGetLastError(0) == ACL_ERROR_RT_PARAM_INVALID  # stored by the call that reported it
        acl.aclrtDestroyStream(stream)
        acl.aclrtResetDevice(0)
        assert fails(acl.aclrtResetDevice, 0) == ACL_ERROR_RT_CONTEXT_RELEASE_ERROR
        assert acl.aclrtGetLastError(0) == ACL_ERROR_RT_CONTEXT_RELEASE_ERROR
    finally:
        acl.aclFinalize()
