"""Exception-information callbacks (spec-breadth 3.2), kept in the program as the runtime keeps them.

The runtime calls the callback of `aclrtSetExceptionInfoCallback` when a task fails, before the synchronize that
reports the failure returns. vnpu calls it in the thread whose call reports the failure (the synchronize),
just before that call returns the error, with the failed task's ids: task (its number on its stream, as
`aclrtGetThreadLastTaskId` counts), stream (`aclrtStreamGetId`), the pthread id of the thread that issued it,
device and error code. `aclrtSetExceptionInfoCallback` keeps one callback (a second call replaces it, None
removes it); `aclrtExceptionInfoCallbackRegister`/`Unregister` add and remove others, each called too.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import traceback
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID, AclError

NONE = 0xFFFFFFFF  # what a getter returns for a NULL info


@dataclass(frozen=True)
class aclrtExceptionInfo:  # noqa: N801
    taskId: int  # noqa: N815
    streamId: int  # noqa: N815
    threadId: int  # noqa: N815
    deviceId: int  # noqa: N815
    errorCode: int  # noqa: N815


_lock = threading.Lock()
_callbacks: dict[Hashable, Callable[[aclrtExceptionInfo], Any]] = {}  # by registration name, as the runtime
SET = "ACL"  # the one name aclrtSetExceptionInfoCallback registers under (the ACL module's)


def register(name: Hashable, callback: Callable[[aclrtExceptionInfo], Any] | None) -> None:
    """Register `callback` under `name` (replacing), or remove the name's callback (None)."""
    if callback is not None and not callable(callback):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"callback must be callable, got {type(callback).__name__}")
    with _lock:
        if callback is None:
            _callbacks.pop(name, None)
        else:
            _callbacks[name] = callback


def aclrtSetExceptionInfoCallback(callback: Callable[[aclrtExceptionInfo], Any] | None) -> None:  # noqa: N802
    """The one callback of the ACL module: a second call replaces it, None removes it (deprecated in CANN)."""
    register(SET, callback)


def aclrtExceptionInfoCallbackRegister(callback: Callable[[aclrtExceptionInfo], Any]) -> None:  # noqa: N802
    """One more callback, called with the others (each once however often it is registered)."""
    register(("registered", _required(callback)), callback)


def aclrtExceptionInfoCallbackUnregister(callback: Callable[[aclrtExceptionInfo], Any]) -> None:  # noqa: N802
    register(("registered", _required(callback)), None)


def _required(callback: Any) -> Any:
    if callback is None:
        raise AclError(ACL_ERROR_RT_PARAM_INVALID, "callback is NULL")
    return callback


def report(error: AclError) -> None:
    """Call the registered callbacks for the failed task `error` reports (if it reports one)."""
    if error.task is None or not _callbacks:
        return
    info = aclrtExceptionInfo(**error.task)
    with _lock:
        callbacks = list(_callbacks.values())
    for callback in callbacks:
        try:
            callback(info)
        except Exception:  # the C callback it stands for cannot fail: say so, and report the error as ever
            print("vnpu: an exception-information callback raised an exception:", file=sys.stderr)
            traceback.print_exc()


def _getter(field: str) -> Callable[[aclrtExceptionInfo | None], int]:
    def getter(info: aclrtExceptionInfo | None) -> int:
        return NONE if info is None else int(getattr(info, field))

    return getter


FIELDS = tuple(f.name for f in dataclasses.fields(aclrtExceptionInfo))  # taskId ... errorCode, in C's order
GETTERS = {f"aclrtGet{field[0].upper()}{field[1:]}FromExceptionInfo": field for field in FIELDS}
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "aclrtSetExceptionInfoCallback": aclrtSetExceptionInfoCallback,
    "aclrtExceptionInfoCallbackRegister": aclrtExceptionInfoCallbackRegister,
    "aclrtExceptionInfoCallbackUnregister": aclrtExceptionInfoCallbackUnregister,
    **{name: _getter(field) for name, field in GETTERS.items()},
}
"""The host functions of exception information (no device call)."""
