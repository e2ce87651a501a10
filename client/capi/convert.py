"""C arguments to `client.acl` calls and back, for the functions of the call table.

`generic` matches a prototype's parameters by name to the call's arguments (in) and out-parameters (written
through the C pointer, after a NULL check that runs before any work, as the runtime's ACL layer does):
- `char *` arguments are strings; every other pointer or handle is an address, translated when it lies in a
  pinned host buffer (`client.capi.pinned`); numbers and enums pass as they are;
- a name that is both (`aclmdlRICaptureThreadExchangeMode`'s mode) is read, then written back.
The copies need more: a host-side pointer outside pinned memory is pageable memory, which travels as bytes (a
source, read only after `count <= destMax` holds) or receives them (a destination) — so a copy from or to a
plain C buffer works as the runtime promises (synchronously; inside a capture the daemon refuses it and names
aclrtMallocHost). Pinned host memory is mapped here by aclrtMallocHost and unmapped by aclrtFreeHost.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from client import acl
from client.capi.pinned import PinnedTable
from proto.addresses import DEVICE_BASE, DEVICE_STRIDE
from proto.calltable import CALLS
from proto.constants import aclrtMemcpyKind, aclrtStreamAttr
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError
from proto.host import HostCall

T = TypeVar("T")

# C parameter names that differ from the call table's argument names: (function, call-table name) -> C name
C_NAMES: dict[tuple[str, str], str] = {
    ("aclrtEventElapsedTime", "start"): "startEvent",
    ("aclrtEventElapsedTime", "end"): "endEvent",
}
# device work these calls complete or start, for pinned buffers kept in step through the wire
PUSH_BEFORE = frozenset(
    {
        "aclrtMemcpy",
        "aclrtMemcpyAsync",
        "aclrtMemset",
        "aclrtMemsetAsync",
        "aclmdlRIExecuteAsync",
        "aclmdlRIExecute",
        "aclrtSynchronizeStream",
        "aclrtSynchronizeStreamWithTimeout",
        "aclrtSynchronizeDevice",
        "aclrtSynchronizeEvent",
        "aclrtSynchronizeEventWithTimeout",
    }
)
PULL_AFTER = PUSH_BEFORE - {"aclrtMemcpyAsync", "aclrtMemsetAsync", "aclmdlRIExecuteAsync"}
DEVICE_END = DEVICE_BASE + 64 * DEVICE_STRIDE
K = aclrtMemcpyKind
# which side of a copy is host memory, by kind (None: ACL_MEMCPY_DEFAULT, told by the address; absent: device)
HOST_DST: dict[int, bool | None] = {K.ACL_MEMCPY_HOST_TO_HOST: True, K.ACL_MEMCPY_DEVICE_TO_HOST: True}
HOST_SRC: dict[int, bool | None] = {K.ACL_MEMCPY_HOST_TO_HOST: True, K.ACL_MEMCPY_HOST_TO_DEVICE: True}
HOST_SRC[K.ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE] = True
HOST_DST[K.ACL_MEMCPY_DEFAULT] = HOST_SRC[K.ACL_MEMCPY_DEFAULT] = None


def from_host(read: Callable[[], T], count: int, what: str) -> T:
    """`read()` of `count` elements of `what` from the program's memory; a count too large for this machine's
    memory is the caller's mistake (100000), not vnpu's (C would read past the array, or crash)."""
    try:
        return read()
    except (MemoryError, OverflowError):
        raise AclError(
            ACL_ERROR_INVALID_PARAM,
            f"{what}: a count of {count} is more than this machine's memory holds, so it cannot be the length of "
            "an array of the program; pass the number of elements (or bytes) it really has",
        ) from None


def call(api: str, *args: Any) -> Any:
    """A call of the table through the current session, as `client.acl`'s functions make it."""
    return acl.current(api).call(api, *args)


@dataclass
class C:
    """What every implementation needs: the library's ffi and the process's pinned memory."""

    ffi: Any
    pinned: PinnedTable
    _pinned: ClassVar[PinnedTable | None] = None

    @classmethod
    def of(cls, ffi: Any) -> C:
        if cls._pinned is None:
            cls._pinned = PinnedTable(ffi)
        return cls(ffi, cls._pinned)

    def address(self, pointer: Any) -> int:
        return int(self.ffi.cast("uintptr_t", pointer))


@dataclass(frozen=True)
class Bound:
    name: str
    result: str
    params: list[tuple[str, str]]  # (C type, name)


def _is_pointer(c: C, ctype: str) -> bool:
    return bool(c.ffi.typeof(ctype).kind == "pointer")


def _reader(c: C, ctype: str, inout: bool) -> Callable[[Any], Any]:
    if inout:
        return lambda p: p[0]
    if ctype in ("char *", "const char *"):
        ffi = c.ffi
        return lambda p: None if p == ffi.NULL else ffi.string(p).decode()
    if _is_pointer(c, ctype):
        pinned, address = c.pinned, c.address
        return lambda p: pinned.to_daemon(address(p))
    return lambda value: value


def _writer(c: C, ctype: str) -> Callable[[Any, Any], None]:
    target = c.ffi.typeof(ctype).item
    if target.kind == "pointer":
        cast = c.ffi.cast

        def write_pointer(p: Any, value: Any) -> None:
            p[0] = cast(target, value or 0)

        return write_pointer

    def write(p: Any, value: Any) -> None:
        p[0] = value

    return write


def generic(c: C, bound: Bound) -> Callable[..., Any]:
    """A function of the call table: its error code is 0 once the call succeeded."""
    call = CALLS[bound.name]
    return _adapter(c, bound, call.arg_names, call.out_names, nullable=False, returns_value=False)


def host(c: C, bound: Bound, spec: HostCall) -> Callable[..., Any]:
    """A host function of `proto.host`: with out-parameters it returns 0, without them its value is the result."""
    return _adapter(c, bound, spec.args, spec.outs, spec.nullable, returns_value=not spec.outs)


def _adapter(
    c: C, bound: Bound, arg_names: tuple[str, ...], out_names: tuple[str, ...], nullable: bool, returns_value: bool
) -> Callable[..., Any]:
    position = {name: i for i, (_, name) in enumerate(bound.params)}

    def index(arg: str) -> int:
        name = C_NAMES.get((bound.name, arg), arg)
        if name not in position:
            raise KeyError(f"the C prototype has no parameter {name!r} for the call's {arg!r}")
        return position[name]

    outs = [(index(n), n, _writer(c, bound.params[index(n)][0])) for n in out_names]
    ins = [(index(n), _reader(c, bound.params[index(n)][0], n in out_names)) for n in arg_names]
    function = getattr(acl, bound.name)
    push, pull = bound.name in PUSH_BEFORE, bound.name in PULL_AFTER
    null, pinned, api = c.ffi.NULL, c.pinned, bound.name

    def body(*args: Any) -> Any:
        if not nullable:
            for i, name, _ in outs:
                if args[i] == null:
                    raise AclError(
                        ACL_ERROR_INVALID_PARAM, f"{name} is NULL: it must point to where the result goes", api
                    )
        values = [read(args[i]) for i, read in ins]
        if push:
            pinned.push()
        result = function(*values)
        if pull:
            pinned.pull()
        if returns_value:
            return result
        if outs:
            results = result if len(outs) > 1 else (result,)
            for (i, _, write), value in zip(outs, results, strict=True):
                if args[i] != null:
                    write(args[i], value)
        return 0

    return body


def _side(c: C, pointer: Any, host: bool | None, count: int, dest_max: int, writable: bool) -> Any:
    """A copy's dst or src as the call table takes it: a device or daemon pointer, or pageable bytes."""
    address = c.address(pointer)
    found = c.pinned.find(address) if address else None
    if found is not None:
        return found[0].buffer.ptr + found[1]
    if not address or host is False or (host is None and DEVICE_BASE <= address < DEVICE_END):
        return address
    memory = c.ffi.cast("char *", pointer)
    if writable:
        return c.ffi.buffer(memory, count)
    return from_host(lambda: c.ffi.buffer(memory, count)[:], count, "src") if count <= dest_max else b""


def aclrtMemcpy(c: C) -> Callable[..., int]:  # noqa: N802
    def body(dst: Any, dest_max: int, src: Any, count: int, kind: int) -> int:
        d = _side(c, dst, HOST_DST.get(kind, False), count, dest_max, writable=True)
        s = _side(c, src, HOST_SRC.get(kind, False), count, dest_max, writable=False)
        c.pinned.push()
        call("aclrtMemcpy", d, dest_max, s, count, kind)
        c.pinned.pull()
        return 0

    return body


def aclrtMemcpyAsync(c: C) -> Callable[..., int]:  # noqa: N802
    def body(dst: Any, dest_max: int, src: Any, count: int, kind: int, stream: Any) -> int:
        d = _side(c, dst, HOST_DST.get(kind, False), count, dest_max, writable=True)
        s = _side(c, src, HOST_SRC.get(kind, False), count, dest_max, writable=False)
        c.pinned.push()
        call("aclrtMemcpyAsync", d, dest_max, s, count, kind, c.address(stream))
        return 0

    return body


def aclrtMallocHost(c: C) -> Callable[..., int]:  # noqa: N802
    def body(host_ptr: Any, size: int) -> int:
        if host_ptr == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "hostPtr is NULL: it must point to where the pointer goes")
        buffer = call("aclrtMallocHost", size)
        host_ptr[0] = c.ffi.cast("void *", c.pinned.add(buffer))
        return 0

    return body


def aclrtFreeHost(c: C) -> Callable[..., int]:  # noqa: N802
    def body(host_ptr: Any) -> int:
        address = c.address(host_ptr)
        found = c.pinned.find(address) if address else None
        if found is not None and found[1] == 0:
            with c.pinned.exchange:
                call("aclrtFreeHost", found[0].buffer)
                c.pinned.remove(address)
        else:
            call("aclrtFreeHost", c.pinned.to_daemon(address))
        return 0

    return body


def aclmdlRIDebugPrint(c: C) -> Callable[..., int]:  # noqa: N802
    """The runtime writes the dump to its log; vnpu writes it to the program's stderr."""

    def body(model: Any) -> int:
        text = call("aclmdlRIDebugPrint", c.address(model))
        os.write(2, (text.rstrip("\n") + "\n").encode())
        return 0

    return body


def aclmdlRIDebugJsonPrint(c: C) -> Callable[..., int]:  # noqa: N802
    def body(model: Any, path: Any, flags: int) -> int:
        file = None if path == c.ffi.NULL else c.ffi.string(path).decode()
        acl.aclmdlRIDebugJsonPrint(c.address(model), file, flags)
        return 0

    return body


def _struct_out(
    api: str, param: str, fields: tuple[str, ...], check: str | None = None
) -> Callable[[C], Callable[..., int]]:
    """A call whose out-parameter is a struct: its fields are the call's out-parameters, written after the NULL
    check (and the struct zeroed first, as its detail is not filled); `check`, a pointer field that must be NULL."""

    def make(c: C) -> Callable[..., int]:
        def body(device_id: int, out: Any) -> int:
            if out == c.ffi.NULL:
                raise AclError(ACL_ERROR_INVALID_PARAM, f"{param} is NULL: it must point to where the result goes")
            if check and getattr(out, check) != c.ffi.NULL:
                raise AclError(ACL_ERROR_INVALID_PARAM, f"{param}->{check} must be NULL (it is reserved)")
            values = call(api, device_id)
            c.ffi.memmove(out, bytes(c.ffi.sizeof(out[0])), c.ffi.sizeof(out[0]))
            for name, value in zip(fields, values, strict=True):
                setattr(out, name, value)
            return 0

        return body

    return make


# aclrtStreamAttrValue's member for each aclrtStreamAttr (all at offset 0; failureMode is the only 64-bit one)
A = aclrtStreamAttr
ATTR_MEMBERS: dict[int, str] = {
    A.ACL_STREAM_ATTR_FAILURE_MODE: "failureMode",
    A.ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK: "overflowSwitch",
    A.ACL_STREAM_ATTR_USER_CUSTOM_TAG: "userCustomTag",
    A.ACL_STREAM_ATTR_CACHE_OP_INFO: "cacheOpInfoSwitch",
    A.ACL_STREAM_ATTR_PRIORITY: "streamPriority",
}


def aclrtSetStreamAttribute(c: C) -> Callable[..., int]:  # noqa: N802
    """The union travels as its 64-bit member: the daemon takes the 32-bit members from its low half, the bytes
    they occupy on a little-endian host (the others are whatever the program left there)."""

    def body(stream: Any, attr: int, value: Any) -> int:
        if value == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "value is NULL: it must point to the aclrtStreamAttrValue to set")
        call("aclrtSetStreamAttribute", c.address(stream), attr, value.failureMode)
        return 0

    return body


def aclrtGetStreamAttribute(c: C) -> Callable[..., int]:  # noqa: N802
    """Writes the attribute's member of the union only (the rest of it stays as it was)."""

    def body(stream: Any, attr: int, value: Any) -> int:
        if value == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "value is NULL: it must point to where the result goes")
        got = call("aclrtGetStreamAttribute", c.address(stream), attr)  # an unknown attr is refused there
        setattr(value, ATTR_MEMBERS[attr], got)
        return 0

    return body


def aclrtDeviceGetUuid(c: C) -> Callable[..., int]:  # noqa: N802
    def body(device_id: int, uuid: Any) -> int:
        if uuid == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "uuid is NULL: it must point to where the result goes")
        got = call("aclrtDeviceGetUuid", device_id)
        c.ffi.memmove(uuid.bytes, got, len(got))
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclrtDeviceGetUuid": aclrtDeviceGetUuid,
    "aclrtGetErrorVerbose": _struct_out("aclrtGetErrorVerbose", "errorInfo", ("tryRepair", "hasDetail", "errorType")),
    "aclrtGetDeviceUtilizationRate": _struct_out(
        "aclrtGetDeviceUtilizationRate",
        "utilizationInfo",
        ("cubeUtilization", "vectorUtilization", "aicpuUtilization", "memoryUtilization"),
        check="utilizationExtend",
    ),
    "aclrtSetStreamAttribute": aclrtSetStreamAttribute,
    "aclrtGetStreamAttribute": aclrtGetStreamAttribute,
    "aclrtMemcpy": aclrtMemcpy,
    "aclrtMemcpyAsync": aclrtMemcpyAsync,
    "aclrtMallocHost": aclrtMallocHost,
    "aclrtFreeHost": aclrtFreeHost,
    "aclmdlRIDebugPrint": aclmdlRIDebugPrint,
    "aclmdlRIDebugJsonPrint": aclmdlRIDebugJsonPrint,
}


def launch_config(c: C, cfg: Any) -> dict[str, Any] | None:
    """An aclrtLaunchKernelCfg * as the call table takes it: None for NULL, else its attributes (id, 8 value bytes)."""
    if cfg == c.ffi.NULL:
        return None
    if cfg.attrs == c.ffi.NULL:
        return {"attrs": None}
    attrs = []
    for i in range(cfg.numAttrs):
        attr = cfg.attrs[i]
        raw = bytes(c.ffi.buffer(c.ffi.addressof(attr, "value"), 8))
        attrs.append({"id": int(attr.id), "value": int.from_bytes(raw, "little")})
    return {"attrs": attrs}
