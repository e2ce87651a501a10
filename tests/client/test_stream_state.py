"""Stream state callbacks through the Python client (spec-breadth 2.6): every stream the process gets or loses,
default ones included, reported in the calling thread with the registered args."""

from __future__ import annotations

import pytest

from client import acl
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID, AclError

CREATE, DESTROY = acl.ACL_RT_STREAM_STATE_CREATE_POST, acl.ACL_RT_STREAM_STATE_DESTROY_PRE


def test_streams_coming_and_going_are_reported(daemon: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VNPU_ENDPOINT", daemon)
    seen: list[tuple[int, int, object]] = []
    acl.aclrtRegStreamStateCallback("test", lambda stream, state, args: seen.append((stream, state, args)), "args")
    try:
        with pytest.raises(AclError) as info:
            acl.aclrtRegStreamStateCallback("test", print, None)  # registered already
        assert info.value.code == ACL_ERROR_RT_PARAM_INVALID
        with pytest.raises(AclError) as info:
            acl.aclrtRegStreamStateCallback(None, print, None)
        assert info.value.code == ACL_ERROR_INVALID_PARAM
        acl.aclInit(None)
        acl.aclrtSetDevice(0)  # the primary context and its default stream
        primary_default = acl.aclrtCtxGetCurrentDefaultStream()
        assert seen == [(primary_default, CREATE, "args")]
        stream = acl.aclrtCreateStream()
        acl.aclrtDestroyStream(stream)
        assert seen[1:] == [(stream, CREATE, "args"), (stream, DESTROY, "args")]
        context = acl.aclrtCreateContext(0)
        made_default = acl.aclrtCtxGetCurrentDefaultStream()
        acl.aclrtDestroyContext(context)
        assert seen[3:] == [(made_default, CREATE, "args"), (made_default, DESTROY, "args")]
        acl.aclrtSetDevice(0)  # current again; the primary context counts two aclrtSetDevice now
        left = acl.aclrtCreateStream()
        del seen[:]
        acl.aclrtResetDevice(0)
        acl.aclrtResetDevice(0)  # the last reset ends the primary context: its streams go
        assert sorted(seen) == sorted([(primary_default, DESTROY, "args"), (left, DESTROY, "args")])
        acl.aclrtRegStreamStateCallback("test", None, None)  # unregistered: nothing more
        acl.aclrtSetDevice(0)
        acl.aclrtCreateStream()
        assert len(seen) == 2
        acl.aclrtResetDevice(0)
    finally:
        acl.aclrtRegStreamStateCallback("test", None, None)
        acl.aclFinalize()
