"""The Python side of libopapi.so's generated C (`client.capi.opcalls`): one entry for every function.

`vnpuAclnnCall(name, signature, args)` finds the function's implementation on its first call and keeps it: the
arguments unpacked from the `vnpuArg` array by the C types of `signature` (pointers cast back to their type, so
the implementation sees what a CFFI callback of that prototype would), then the implementation guarded as every
toolkit function is (`client.capi.bridge.guarded`). An operator vnpu implements runs its two phases
(`client.capi.hostobj.OPERATORS`); any other function of the library answers `ACLNN_ERR_INNER_FIND_KERNEL` (561003)
and `vnpu does not implement aclnnXxx yet`, a phase 1 first clearing `*workspaceSize` and `*executor` so that a
program that ignores the status hands its phase 2 a NULL executor, which fails the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from client.capi.convert import C
from client.capi.opcalls import NOT_IMPLEMENTED, SEPARATOR, member
from proto.errors import AclError

WORKSPACE_SUFFIX = "GetWorkspaceSize"
PHASE1_TAIL = ("uint64_t *", "aclOpExecutor **")
UNSIGNED = ("uint64_t", "const uint64_t", "uint32_t", "const uint32_t", "size_t")

Body = Callable[..., Any]


def operator_of(name: str) -> str:
    """aclnnAdd for aclnnAddGetWorkspaceSize (and for aclnnAdd); other functions are their own name."""
    return name.removesuffix(WORKSPACE_SUFFIX)


def not_implemented(c: C, name: str, ctypes: list[str]) -> Body:
    null = c.ffi.NULL
    clears = name.endswith(WORKSPACE_SUFFIX) and tuple(ctypes[-2:]) == PHASE1_TAIL
    message = f"vnpu does not implement {operator_of(name)} yet"

    def body(*args: Any) -> Any:
        if clears:
            workspace_size, executor = args[-2:]
            if workspace_size != null:
                workspace_size[0] = 0
            if executor != null:
                executor[0] = null
        raise AclError(NOT_IMPLEMENTED, message, name)

    return body


def _unpacker(c: C, ctype: str) -> Callable[[Any], Any]:
    slot = member(c.ffi, ctype)
    if slot == "p":
        cast, pointer = c.ffi.cast, c.ffi.typeof(ctype)
        return lambda arg: cast(pointer, arg.p)
    if slot == "d":
        return lambda arg: arg.d
    if c.ffi.typeof(ctype).cname == "_Bool":
        return lambda arg: bool(arg.i)
    if ctype in UNSIGNED:
        return lambda arg: arg.i & 0xFFFF_FFFF_FFFF_FFFF
    return lambda arg: arg.i


Resolve = Callable[[C, str, str, list[tuple[str, str]]], "Body | None"]
Guard = Callable[[C, str, str, Body], Body]


def make(c: C, name: str, signature: str, resolve: Resolve, guard: Guard) -> Callable[[Any], Any]:
    """The function `name` of the library as the entry calls it: args (a vnpuArg array) in, its C result out.
    `resolve` gives what vnpu implements for it (None: not implemented), `guard` turns failures into C results."""
    result, *ctypes = signature.split(SEPARATOR)
    params = [(ctype, f"arg{i}") for i, ctype in enumerate(ctypes)]
    implementation = resolve(c, name, result, params) or not_implemented(c, name, ctypes)
    guarded = guard(c, name, result, implementation)
    unpack = [_unpacker(c, ctype) for ctype in ctypes]
    count = len(unpack)
    if count == 0:
        return lambda args: guarded()
    return lambda args: guarded(*[read(args[i]) for i, read in enumerate(unpack)])


def entry(resolve: Resolve, guard: Guard) -> Callable[[C], Callable[[Any, Any, Any], Any]]:
    """vnpuAclnnCall, made for a library: each function made on its first call (a lock: two threads may call it
    first together)."""

    def made_for(c: C) -> Callable[[Any, Any, Any], Any]:
        made: dict[bytes, Callable[[Any], Any]] = {}
        lock = threading.Lock()
        string = c.ffi.string

        def body(name: Any, signature: Any, args: Any) -> Any:
            key = string(name)
            function = made.get(key)
            if function is None:
                with lock:
                    function = made.get(key)
                    if function is None:
                        function = made[key] = make(c, key.decode(), string(signature).decode(), resolve, guard)
            result = function(args)
            return 0 if result is None else result

        return body

    return made_for
