"""The aclmdlRI calls whose C shape needs more than the generic conversion: aclmdlRIGetName writes a string
into the caller's buffer, and destroy callbacks are C function pointers that `client.callbacks` calls with the
program's own userData on the thread calling aclmdlRIDestroy (the daemon knows each by its address)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import acl, callbacks
from client.capi.callbacks import _function
from client.capi.convert import C
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_INTERNAL_ERROR, AclError


def aclmdlRIGetName(c: C) -> Callable[..., int]:  # noqa: N802
    """The ACL layer's NULL checks first (modelRI, then name); a buffer too small is zero-filled, as securec
    leaves it when the runtime's copy fails (507000)."""

    def body(model: Any, max_len: int, name: Any) -> int:
        if model == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "modelRI is NULL")
        if name == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "name is NULL: it must point to a buffer of maxLen bytes")
        try:
            text = acl.current().call("aclmdlRIGetName", c.address(model), max_len).encode() + b"\0"
        except AclError as error:
            if error.code == ACL_ERROR_RT_INTERNAL_ERROR:
                c.ffi.memmove(name, bytes(max_len), max_len)
            raise
        c.ffi.memmove(name, text, len(text))
        return 0

    return body


def aclmdlRIDestroyRegisterCallback(c: C) -> Callable[..., int]:  # noqa: N802
    def body(model: Any, func: Any, user_data: Any) -> int:
        key, data = c.address(func), c.address(user_data)
        standin = _function(c, func) or (lambda _: None)
        callbacks.DESTROY.register(acl.current().call, c.address(model), key, standin, data or None, data)
        return 0

    return body


def aclmdlRIDestroyUnregisterCallback(c: C) -> Callable[..., int]:  # noqa: N802
    def body(model: Any, func: Any) -> int:
        callbacks.DESTROY.unregister(acl.current().call, c.address(model), c.address(func))
        return 0

    return body


def aclmdlRIDestroy(c: C) -> Callable[..., int]:  # noqa: N802
    def body(model: Any) -> int:
        callbacks.aclmdlRIDestroy(acl.current().call, c.address(model))
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclmdlRIGetName": aclmdlRIGetName,
    "aclmdlRIDestroyRegisterCallback": aclmdlRIDestroyRegisterCallback,
    "aclmdlRIDestroyUnregisterCallback": aclmdlRIDestroyUnregisterCallback,
    "aclmdlRIDestroy": aclmdlRIDestroy,
}
