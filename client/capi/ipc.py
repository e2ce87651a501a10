"""IPC handles for C (spec-breadth 5.4, 6.2): aclrtIpcEventHandle is 64 bytes, written through the program's
pointer and passed back by value; a notify's export key is a C string written into the program's buffer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.capi.convert import C, call, from_host
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError

HANDLE_SIZE = 64


def aclrtIpcGetEventHandle(c: C) -> Callable[[Any, Any], int]:  # noqa: N802
    def body(event: Any, handle: Any) -> int:
        if handle == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "handle is NULL: it must point to an aclrtIpcEventHandle")
        data = call("aclrtIpcGetEventHandle", c.address(event))
        c.ffi.memmove(handle, data, HANDLE_SIZE)
        return 0

    return body


def aclrtIpcOpenEventHandle(c: C) -> Callable[[Any, Any], int]:  # noqa: N802
    def body(handle: Any, event: Any) -> int:
        if event == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "event is NULL: it must point to where the event goes")
        data = bytes(c.ffi.buffer(c.ffi.addressof(handle), HANDLE_SIZE))
        event[0] = c.ffi.cast("aclrtEvent", call("aclrtIpcOpenEventHandle", data))
        return 0

    return body


def aclrtNotifyGetExportKey(c: C) -> Callable[..., int]:  # noqa: N802
    def body(notify: Any, key: Any, length: int, flags: int) -> int:
        if key == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "key is NULL: it must point to a buffer of len bytes")
        data = call("aclrtNotifyGetExportKey", c.address(notify), length, flags).encode() + b"\0"
        c.ffi.memmove(key, data, len(data))  # the daemon checked that it fits in len
        return 0

    return body


def aclrtNotifySetImportPid(c: C) -> Callable[..., int]:  # noqa: N802
    def body(notify: Any, pid: Any, num: int) -> int:
        if pid == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "pid is NULL: it must point to num process ids")
        call("aclrtNotifySetImportPid", c.address(notify), from_host(lambda: list(c.ffi.unpack(pid, num)), num, "pid"))
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclrtIpcGetEventHandle": aclrtIpcGetEventHandle,
    "aclrtIpcOpenEventHandle": aclrtIpcOpenEventHandle,
    "aclrtNotifyGetExportKey": aclrtNotifyGetExportKey,
    "aclrtNotifySetImportPid": aclrtNotifySetImportPid,
}
