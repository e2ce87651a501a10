"""Callbacks and host functions for C (`client.callbacks`): a C function pointer becomes a Python callable that
calls it with the program's own `void *` back; userData travels as the address it is.

Pinned host memory seen through the wire (a remote daemon) is brought up to date before the function runs and
sent back after it, as around a synchronize: a host function reads what the stream wrote before it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import acl, callbacks
from client.capi.convert import C

_FUNCTIONS: dict[int, Callable[[Any], None]] = {}  # C function address -> its Python stand-in


def _function(c: C, fn: Any) -> Callable[[Any], None] | None:
    address = c.address(fn)
    if address == 0:
        return None
    found = _FUNCTIONS.get(address)
    if found is None:
        target = c.ffi.cast("void (*)(void *)", fn)

        def found(data: Any) -> None:
            c.pinned.pull()
            target(c.ffi.cast("void *", data or 0))
            c.pinned.push()

        _FUNCTIONS[address] = found
    return found


def _data(c: C, pointer: Any) -> int | None:
    return c.address(pointer) or None


def aclrtLaunchCallback(c: C) -> Callable[..., int]:  # noqa: N802
    def body(fn: Any, user_data: Any, block_type: int, stream: Any) -> int:
        c.pinned.push()
        call = acl.current().call
        callbacks.aclrtLaunchCallback(call, _function(c, fn), _data(c, user_data), block_type, c.address(stream))
        return 0

    return body


def aclrtLaunchHostFunc(c: C) -> Callable[..., int]:  # noqa: N802
    def body(stream: Any, fn: Any, args: Any) -> int:
        c.pinned.push()
        callbacks.aclrtLaunchHostFunc(acl.current().call, c.address(stream), _function(c, fn), _data(c, args))
        return 0

    return body


def aclrtProcessReport(c: C) -> Callable[[int], int]:  # noqa: N802
    def body(timeout: int) -> int:
        callbacks.aclrtProcessReport(acl.current().call, timeout)
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclrtLaunchCallback": aclrtLaunchCallback,
    "aclrtLaunchHostFunc": aclrtLaunchHostFunc,
    "aclrtProcessReport": aclrtProcessReport,
}
