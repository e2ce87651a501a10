"""Stream state callbacks (spec-breadth 2.6): registered per process, called in the thread that creates or
destroys a stream, with the stream, ACL_RT_STREAM_STATE_CREATE_POST or _DESTROY_PRE, and the registered args.

    aclrtRegStreamStateCallback("mine", lambda stream, state, args: ..., args)   # None as callback: unregister

A stream the program creates is reported when its create call has made it, and one it destroys before its
destroy call runs. Default streams come and go with devices and contexts (aclrtSetDevice, aclrtCreateContext,
aclrtResetDevice[Force], aclrtDestroyContext, aclFinalize): while a callback is registered, such a call asks the
daemon for the process's streams before and after it, and reports the new ones as created and the gone ones as
destroyed -- right after the call, since which streams a reset ends is the daemon's to know (the runtime calls
DESTROY_PRE just before). Without a registration none of this costs a thing. (A stream another thread creates
during such a call is reported twice.)
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from proto.constants import aclrtStreamState
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID, AclError

Call = Callable[..., Any]
CREATE, DESTROY = aclrtStreamState.ACL_RT_STREAM_STATE_CREATE_POST, aclrtStreamState.ACL_RT_STREAM_STATE_DESTROY_PRE
CREATES = frozenset({"aclrtCreateStream", "aclrtCreateStreamWithConfig"})
DESTROYS = frozenset({"aclrtDestroyStream", "aclrtDestroyStreamForce"})
# calls that may make or end default streams (and a reset, created ones too)
DEFAULT_STREAMS = frozenset({"aclrtSetDevice", "aclrtCreateContext", "aclrtResetDevice", "aclrtResetDeviceForce"})
DEFAULT_STREAMS |= {"aclrtDestroyContext", "aclFinalize"}
Callback = Callable[[int, int, Any], Any]  # (stream, state, args)

_lock = threading.Lock()
_callbacks: dict[str, tuple[Callback, Any]] = {}


def aclrtRegStreamStateCallback(
    regName: str | None, callback: Callable[[int, int, Any], Any] | None, args: Any
) -> None:  # noqa: N802, N803
    if regName is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, "regName is NULL")
    with _lock:
        if callback is None:
            _callbacks.pop(regName, None)
            return
        if not callable(callback):
            raise AclError(ACL_ERROR_INVALID_PARAM, f"callback must be callable, got {type(callback).__name__}")
        if regName in _callbacks:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"a stream state callback is registered as {regName!r} already")
        _callbacks[regName] = (callback, args)


def watched(api: str) -> bool:
    """Whether `api` may change which streams exist while a callback is registered."""
    return bool(_callbacks) and api in CREATES | DESTROYS | DEFAULT_STREAMS


def around(call: Call, api: str, values: tuple[Any, ...], run: Callable[[], Any]) -> Any:
    """Run the call (`run`) with the callbacks its stream changes call for (`watched(api)` holds)."""
    if api in DESTROYS:
        if values and values[0]:
            report(int(values[0]), DESTROY)
        return run()
    if api in CREATES:
        result = run()
        report(int(result), CREATE)
        return result
    before = set(call("vnpuStreams"))
    try:
        return run()
    finally:
        try:
            after = set(call("vnpuStreams"))
        except AclError:  # the last aclFinalize: the process holds nothing any more
            after = set()
        for stream in sorted(before - after):
            report(stream, DESTROY)
        for stream in sorted(after - before):
            report(stream, CREATE)


def report(stream: int, state: aclrtStreamState) -> None:
    with _lock:
        registered = list(_callbacks.values())
    for callback, args in registered:
        try:
            callback(stream, int(state), args)
        except Exception:  # the C callback it stands for cannot fail
            print("vnpu: a stream state callback raised an exception:", file=sys.stderr)
            traceback.print_exc()
