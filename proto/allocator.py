"""The custom allocator registry of acl_rt_allocator.h (spec-breadth 17): entirely on the host, as in the runtime.

A descriptor collects an allocator object and its functions; registering it on a stream stores a copy of them
under the stream handle, for operator libraries to fetch with `aclrtAllocatorGetByStream`. Nothing else reads the
registry. Values are whatever the caller passes: Python objects, or C pointers for the C toolkit.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

from proto.errors import ACL_ERROR_INVALID_PARAM, AclError

REQUIRED = ("obj", "alloc", "free", "get_addr")  # advise is optional
C_NAMES = {"obj": "allocator", "alloc": "allocFunc", "free": "freeFunc", "get_addr": "getAddrFromBlockFunc"}


@dataclass
class aclrtAllocatorDesc:  # noqa: N801
    obj: Any = None
    alloc: Any = None
    free: Any = None
    advise: Any = None
    get_addr: Any = None
    handle: int = 0  # the C address naming it, when it was made from C


_lock = threading.Lock()
_registry: dict[int, tuple[aclrtAllocatorDesc, aclrtAllocatorDesc]] = {}  # stream -> (descriptor, copy)


def _need(value: Any, name: str, api: str) -> None:
    if value is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{name} is NULL", api)


def aclrtAllocatorCreateDesc() -> aclrtAllocatorDesc:  # noqa: N802
    return aclrtAllocatorDesc()


def aclrtAllocatorDestroyDesc(allocatorDesc: aclrtAllocatorDesc | None) -> None:  # noqa: N802, N803
    """Registrations made from it keep their copy."""
    _need(allocatorDesc, "allocatorDesc", "aclrtAllocatorDestroyDesc")


def _setter(api: str, field: str, arg: str) -> Any:
    def setter(allocatorDesc: aclrtAllocatorDesc | None, value: Any) -> None:  # noqa: N803
        _need(allocatorDesc, "allocatorDesc", api)
        _need(value, arg, api)
        setattr(allocatorDesc, field, value)

    setter.__name__ = api
    return setter


aclrtAllocatorSetObjToDesc = _setter("aclrtAllocatorSetObjToDesc", "obj", "allocator")
aclrtAllocatorSetAllocFuncToDesc = _setter("aclrtAllocatorSetAllocFuncToDesc", "alloc", "func")
aclrtAllocatorSetFreeFuncToDesc = _setter("aclrtAllocatorSetFreeFuncToDesc", "free", "func")
aclrtAllocatorSetAllocAdviseFuncToDesc = _setter("aclrtAllocatorSetAllocAdviseFuncToDesc", "advise", "func")
aclrtAllocatorSetGetAddrFromBlockFuncToDesc = _setter("aclrtAllocatorSetGetAddrFromBlockFuncToDesc", "get_addr", "func")


def aclrtAllocatorRegister(stream: int | None, allocatorDesc: aclrtAllocatorDesc | None) -> None:  # noqa: N802, N803
    """Registering again on the same stream replaces the registration."""
    api = "aclrtAllocatorRegister"
    if not stream:
        raise AclError(ACL_ERROR_INVALID_PARAM, "stream is NULL: the default stream takes no allocator", api)
    _need(allocatorDesc, "allocatorDesc", api)
    assert allocatorDesc is not None
    missing = [C_NAMES[f] for f in REQUIRED if getattr(allocatorDesc, f) is None]
    if missing:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"the descriptor has no {', '.join(missing)} set", api)
    with _lock:
        _registry[stream] = (allocatorDesc, replace(allocatorDesc))


def aclrtAllocatorGetByStream(stream: int | None) -> tuple[aclrtAllocatorDesc, Any, Any, Any, Any, Any]:  # noqa: N802
    """(descriptor, allocator, alloc, free, advise, getAddrFromBlock) as registered."""
    api = "aclrtAllocatorGetByStream"
    if not stream:
        raise AclError(ACL_ERROR_INVALID_PARAM, "stream is NULL", api)
    with _lock:
        found = _registry.get(stream)
    if found is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"no allocator is registered on stream {stream:#x}", api)
    desc, copy = found
    return desc, copy.obj, copy.alloc, copy.free, copy.advise, copy.get_addr


def aclrtAllocatorUnregister(stream: int | None) -> None:  # noqa: N802
    if not stream:
        raise AclError(ACL_ERROR_INVALID_PARAM, "stream is NULL", "aclrtAllocatorUnregister")
    with _lock:
        _registry.pop(stream, None)


FUNCTIONS = (
    aclrtAllocatorCreateDesc,
    aclrtAllocatorDestroyDesc,
    aclrtAllocatorSetObjToDesc,
    aclrtAllocatorSetAllocFuncToDesc,
    aclrtAllocatorSetFreeFuncToDesc,
    aclrtAllocatorSetAllocAdviseFuncToDesc,
    aclrtAllocatorSetGetAddrFromBlockFuncToDesc,
    aclrtAllocatorRegister,
    aclrtAllocatorGetByStream,
    aclrtAllocatorUnregister,
)
