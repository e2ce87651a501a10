"""Exception information for C (`client.exceptions`): the callback is the program's C function, called with an
`aclrtExceptionInfo *` that vnpu lays out as five uint32_t (the header keeps the type opaque, as CANN's does),
which the five getters read back. The thread id is the low 32 bits of the issuing thread's pthread id."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import exceptions
from client.capi.convert import C
from proto.errors import ACL_ERROR_RT_PARAM_INVALID, AclError

FIELDS = exceptions.FIELDS


_WRAPPERS: dict[int, Callable[[exceptions.aclrtExceptionInfo], None]] = {}  # C callback address -> stand-in


def _wrapper(c: C, callback: Any) -> Callable[[exceptions.aclrtExceptionInfo], None]:
    address = c.address(callback)
    found = _WRAPPERS.get(address)
    if found is None:
        target = c.ffi.cast("aclrtExceptionInfoCallback", callback)

        def found(info: exceptions.aclrtExceptionInfo) -> None:
            fields = c.ffi.new("uint32_t[]", [getattr(info, f) & 0xFFFFFFFF for f in FIELDS])
            target(c.ffi.cast("aclrtExceptionInfo *", fields))

        _WRAPPERS[address] = found
    return found


def aclrtSetExceptionInfoCallback(c: C) -> Callable[[Any], int]:  # noqa: N802
    def body(callback: Any) -> int:
        exceptions.register(exceptions.SET, None if callback == c.ffi.NULL else _wrapper(c, callback))
        return 0

    return body


def _by_address(register: bool) -> Callable[[C], Callable[[Any], int]]:
    """aclrtExceptionInfoCallbackRegister / Unregister: a registration named by the function's address."""

    def make(c: C) -> Callable[[Any], int]:
        def body(callback: Any) -> int:
            if callback == c.ffi.NULL:
                raise AclError(ACL_ERROR_RT_PARAM_INVALID, "callback is NULL")
            name = ("registered", c.address(callback))
            exceptions.register(name, _wrapper(c, callback) if register else None)
            return 0

        return body

    return make


def _getter(index: int) -> Callable[[C], Callable[[Any], int]]:
    def make(c: C) -> Callable[[Any], int]:
        def body(info: Any) -> int:
            return exceptions.NONE if info == c.ffi.NULL else int(c.ffi.cast("uint32_t *", info)[index])

        return body

    return make


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclrtSetExceptionInfoCallback": aclrtSetExceptionInfoCallback,
    "aclrtExceptionInfoCallbackRegister": _by_address(register=True),
    "aclrtExceptionInfoCallbackUnregister": _by_address(register=False),
    **{name: _getter(FIELDS.index(field)) for name, field in exceptions.GETTERS.items()},
}
