"""The custom allocator registry for C (`proto.allocator`): descriptors behind opaque handles, C function pointers
and the allocator object stored as given and handed back by aclrtAllocatorGetByStream."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import proto.allocator as registry
from client.capi.convert import C
from client.capi.hostobj import HANDLES
from proto.allocator import aclrtAllocatorDesc
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError


def _desc(c: C, handle: Any, api: str) -> aclrtAllocatorDesc | None:
    try:
        found: aclrtAllocatorDesc | None = HANDLES.get(c.address(handle), aclrtAllocatorDesc, "allocatorDesc", api)
    except AclError as error:
        raise AclError(ACL_ERROR_INVALID_PARAM, error.message, api) from None
    return found


def aclrtAllocatorCreateDesc(c: C) -> Callable[[], Any]:  # noqa: N802
    def body() -> Any:
        desc = registry.aclrtAllocatorCreateDesc()
        desc.handle = HANDLES.put(desc)
        return c.ffi.cast("void *", desc.handle)

    return body


def aclrtAllocatorDestroyDesc(c: C) -> Callable[[Any], int]:  # noqa: N802
    def body(handle: Any) -> int:
        registry.aclrtAllocatorDestroyDesc(_desc(c, handle, "aclrtAllocatorDestroyDesc"))
        HANDLES.drop(c.address(handle), "was destroyed by aclrtAllocatorDestroyDesc")
        return 0

    return body


def _setter(api: str, pointer: bool) -> Callable[[C], Callable[[Any, Any], int]]:
    """`pointer`: the value is the allocator object (an address), else a C function pointer kept as it is."""
    set_value = getattr(registry, api)

    def factory(c: C) -> Callable[[Any, Any], int]:
        def body(handle: Any, value: Any) -> int:
            if value == c.ffi.NULL:
                value = None
            elif pointer:
                value = c.address(value)
            set_value(_desc(c, handle, api), value)
            return 0

        return body

    return factory


def aclrtAllocatorRegister(c: C) -> Callable[[Any, Any], int]:  # noqa: N802
    def body(stream: Any, handle: Any) -> int:
        registry.aclrtAllocatorRegister(c.address(stream), _desc(c, handle, "aclrtAllocatorRegister"))
        return 0

    return body


def aclrtAllocatorGetByStream(c: C) -> Callable[..., int]:  # noqa: N802
    def body(stream: Any, *outs: Any) -> int:
        if outs[0] == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "allocatorDesc is NULL: it must point to where the result goes")
        desc, obj, *functions = registry.aclrtAllocatorGetByStream(c.address(stream))
        addresses = (c.ffi.cast("void *", desc.handle), c.ffi.cast("void *", obj))
        for out, value in zip(outs, (*addresses, *(f or c.ffi.NULL for f in functions)), strict=True):
            if out != c.ffi.NULL:
                out[0] = value
        return 0

    return body


def aclrtAllocatorUnregister(c: C) -> Callable[[Any], int]:  # noqa: N802
    def body(stream: Any) -> int:
        registry.aclrtAllocatorUnregister(c.address(stream))
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclrtAllocatorCreateDesc": aclrtAllocatorCreateDesc,
    "aclrtAllocatorDestroyDesc": aclrtAllocatorDestroyDesc,
    "aclrtAllocatorSetObjToDesc": _setter("aclrtAllocatorSetObjToDesc", pointer=True),
    **{
        name: _setter(name, pointer=False)
        for name in (
            "aclrtAllocatorSetAllocFuncToDesc",
            "aclrtAllocatorSetFreeFuncToDesc",
            "aclrtAllocatorSetAllocAdviseFuncToDesc",
            "aclrtAllocatorSetGetAddrFromBlockFuncToDesc",
        )
    },
    "aclrtAllocatorRegister": aclrtAllocatorRegister,
    "aclrtAllocatorGetByStream": aclrtAllocatorGetByStream,
    "aclrtAllocatorUnregister": aclrtAllocatorUnregister,
}
