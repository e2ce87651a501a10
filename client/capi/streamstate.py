"""Stream state callbacks for C (`client.streamstate`): the program's function is called with the stream handle,
the state and its own args pointer back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import streamstate
from client.capi.convert import C
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError


def aclrtRegStreamStateCallback(c: C) -> Callable[[Any, Any, Any], int]:  # noqa: N802
    def body(reg_name: Any, callback: Any, args: Any) -> int:
        if reg_name == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "regName is NULL")
        name = c.ffi.string(reg_name).decode()
        if callback == c.ffi.NULL:
            streamstate.aclrtRegStreamStateCallback(name, None, None)
            return 0
        target = c.ffi.cast("aclrtStreamStateCallback", callback)

        def call(stream: int, state: int, data: Any) -> None:
            target(c.ffi.cast("aclrtStream", stream), state, c.ffi.cast("void *", data))

        streamstate.aclrtRegStreamStateCallback(name, call, c.address(args))
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {"aclrtRegStreamStateCallback": aclrtRegStreamStateCallback}
