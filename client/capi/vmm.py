"""Virtual memory, IPC memory and managed memory for C (spec-breadth 10-12): the structs the calls take are read
field by field into their `proto.calltable` models, arrays with their counts into lists, the keys and handles
written back into the program's buffers; managed memory is mapped into the program like aclrtMallocHost memory,
so host code dereferences the pointer it got."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from client.capi.convert import C, call, from_host
from proto.calltable import aclrtMemAccessDesc, aclrtPhysicalMemProp
from proto.constants import aclrtMemSharedHandleType
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError

V2_HANDLE_SIZE = 8  # what an ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT handle is in the program's buffer


def fields(struct: Any, model: type[BaseModel]) -> dict[str, Any]:
    """The C struct's fields that the model names (nested structs too), as a dict for the call table."""
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        value = getattr(struct, name)
        nested = info.annotation
        out[name] = fields(value, nested) if isinstance(nested, type) and issubclass(nested, BaseModel) else value
    return out


def _out(c: C, pointer: Any, name: str) -> None:
    if pointer == c.ffi.NULL:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{name} is NULL: it must point to where the result goes")


def _prop(c: C, prop: Any) -> dict[str, Any] | None:
    return None if prop == c.ffi.NULL else fields(prop[0], aclrtPhysicalMemProp)


def _pids(c: C, pid: Any, count: int) -> list[int] | None:
    return None if pid == c.ffi.NULL else from_host(lambda: list(c.ffi.unpack(pid, count)), count, "pid")


def aclrtMemGetAllocationGranularity(c: C) -> Callable[..., int]:  # noqa: N802
    def body(prop: Any, option: int, granularity: Any) -> int:
        _out(c, granularity, "granularity")
        granularity[0] = call("aclrtMemGetAllocationGranularity", _prop(c, prop), option)
        return 0

    return body


def aclrtMallocPhysical(c: C) -> Callable[..., int]:  # noqa: N802
    def body(handle: Any, size: int, prop: Any, flags: int) -> int:
        _out(c, handle, "handle")
        handle[0] = c.ffi.cast("aclrtDrvMemHandle", call("aclrtMallocPhysical", size, _prop(c, prop), flags))
        return 0

    return body


def aclrtMemSetAccess(c: C) -> Callable[..., int]:  # noqa: N802
    def body(vir_ptr: Any, size: int, desc: Any, count: int) -> int:
        descs = None if desc == c.ffi.NULL else [fields(desc[i], aclrtMemAccessDesc) for i in range(count)]
        call("aclrtMemSetAccess", c.address(vir_ptr), size, descs)
        return 0

    return body


def aclrtMemSetPidToShareableHandle(c: C) -> Callable[..., int]:  # noqa: N802
    def body(shareable: int, pid: Any, count: int) -> int:
        call("aclrtMemSetPidToShareableHandle", shareable, _pids(c, pid, count))
        return 0

    return body


def aclrtMemExportToShareableHandleV2(c: C) -> Callable[..., int]:  # noqa: N802
    def body(handle: Any, flags: int, share_type: int, shareable: Any) -> int:
        _out(c, shareable, "shareableHandle")
        data = call("aclrtMemExportToShareableHandleV2", c.address(handle), flags, share_type)
        c.ffi.memmove(shareable, data, len(data))
        return 0

    return body


def aclrtMemImportFromShareableHandleV2(c: C) -> Callable[..., int]:  # noqa: N802
    def body(shareable: Any, share_type: int, flags: int, handle: Any) -> int:
        _out(c, handle, "handle")
        blob = None
        if shareable != c.ffi.NULL:
            size = V2_HANDLE_SIZE if share_type != aclrtMemSharedHandleType.ACL_MEM_SHARE_HANDLE_TYPE_FABRIC else 128
            blob = bytes(c.ffi.buffer(c.ffi.cast("char *", shareable), size))[:V2_HANDLE_SIZE]
        found = call("aclrtMemImportFromShareableHandleV2", blob, share_type, flags)
        handle[0] = c.ffi.cast("aclrtDrvMemHandle", found)
        return 0

    return body


def aclrtIpcMemGetExportKey(c: C) -> Callable[..., int]:  # noqa: N802
    def body(dev_ptr: Any, size: int, key: Any, length: int, flags: int) -> int:
        if key == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "key is NULL: it must point to a buffer of len bytes")
        data = call("aclrtIpcMemGetExportKey", c.address(dev_ptr) or None, size, length, flags).encode() + b"\0"
        c.ffi.memmove(key, data, len(data))  # the daemon checked that it fits in len
        return 0

    return body


def aclrtIpcMemSetImportPid(c: C) -> Callable[..., int]:  # noqa: N802
    def body(key: Any, pid: Any, count: int) -> int:
        name = None if key == c.ffi.NULL else c.ffi.string(key).decode()
        call("aclrtIpcMemSetImportPid", name, _pids(c, pid, count))
        return 0

    return body


def aclrtMemAllocManaged(c: C) -> Callable[..., int]:  # noqa: N802
    def body(ptr: Any, size: int, flag: int) -> int:
        _out(c, ptr, "ptr")
        buffer = call("aclrtMemAllocManaged", size, flag)
        ptr[0] = c.ffi.cast("void *", c.pinned.add(buffer, managed=True))
        return 0

    return body


def aclrtFree(c: C) -> Callable[..., int]:  # noqa: N802
    """Managed memory is mapped here: its mapping goes with it."""

    def body(dev_ptr: Any) -> int:
        address = c.address(dev_ptr)
        if address and c.pinned.is_start(address):
            found = c.pinned.find(address)
            assert found is not None
            with c.pinned.exchange:
                call("aclrtFree", found[0].buffer.ptr)
                c.pinned.remove(address)
        else:
            call("aclrtFree", address or None)
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclrtMemGetAllocationGranularity": aclrtMemGetAllocationGranularity,
    "aclrtMallocPhysical": aclrtMallocPhysical,
    "aclrtMemSetAccess": aclrtMemSetAccess,
    "aclrtMemSetPidToShareableHandle": aclrtMemSetPidToShareableHandle,
    "aclrtMemExportToShareableHandleV2": aclrtMemExportToShareableHandleV2,
    "aclrtMemImportFromShareableHandleV2": aclrtMemImportFromShareableHandleV2,
    "aclrtIpcMemGetExportKey": aclrtIpcMemGetExportKey,
    "aclrtIpcMemSetImportPid": aclrtIpcMemSetImportPid,
    "aclrtMemAllocManaged": aclrtMemAllocManaged,
    "aclrtFree": aclrtFree,
}
