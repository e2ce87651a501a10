"""Custom kernels for C: binaries read from the program's files or memory, argument blocks built here
(`proto.kernelargs`, behind opaque handles; a placeholder's buffer is C memory the program writes into), the
launches with their argument bytes, and kernel printf written through the program's own C stdout."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from client import kernels as client_kernels
from client.capi.convert import C, call, launch_config
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError
from proto.kernelargs import KernelArgs, Param

_next = itertools.count(0x5A00_0000_0000, 0x40)
_objects: dict[int, Any] = {}  # address -> KernelArgs | Param (a Param keeps its C buffer alive)


def _put(obj: Any) -> int:
    address = next(_next)
    _objects[address] = obj
    return address


def _get(c: C, pointer: Any, cls: type, name: str) -> Any:
    address = c.address(pointer)
    if not address:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{name} is NULL")
    obj = _objects.get(address)
    if not isinstance(obj, cls):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{name} ({address:#x}) is not an {cls.__name__} of this program")
    return obj


def _out(c: C, pointer: Any, name: str) -> None:
    if pointer == c.ffi.NULL:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{name} is NULL: it must point to where the result goes")


def _data(c: C, pointer: Any, size: int, name: str) -> bytes:
    if pointer == c.ffi.NULL:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{name} is NULL")
    return bytes(c.ffi.buffer(c.ffi.cast("char *", pointer), size)) if size else b""


def _handle(c: C, pointer: Any) -> int | None:
    return c.address(pointer) or None


def aclrtBinaryLoadFromFile(c: C) -> Callable[..., int]:  # noqa: N802
    def body(path: Any, options: Any, handle: Any) -> int:
        name = None if path == c.ffi.NULL else c.ffi.string(path).decode()
        _out(c, handle, "binHandle")
        found = call("aclrtBinaryLoadFromData", client_kernels.binary_file(name), None)
        handle[0] = c.ffi.cast("aclrtBinHandle", found)
        return 0

    return body


def aclrtBinaryLoadFromData(c: C) -> Callable[..., int]:  # noqa: N802
    def body(data: Any, length: int, options: Any, handle: Any) -> int:
        blob = _data(c, data, length, "data")
        _out(c, handle, "binHandle")
        handle[0] = c.ffi.cast("aclrtBinHandle", call("aclrtBinaryLoadFromData", blob, None))
        return 0

    return body


def aclrtLaunchKernel(c: C) -> Callable[..., int]:  # noqa: N802
    def body(func: Any, blocks: int, args: Any, size: int, stream: Any) -> int:
        blob = c.pinned.managed_to_daemon(_data(c, args, size, "argsData"))
        call("aclrtLaunchKernel", _handle(c, func), blocks, blob, _handle(c, stream))
        return 0

    return body


def vnpuLaunchKernel(c: C) -> Callable[..., int]:  # noqa: N802
    def body(name: Any, blocks: int, stream: Any, args: Any, size: int) -> int:
        kernel = None if name == c.ffi.NULL else c.ffi.string(name).decode()
        blob = b"" if args == c.ffi.NULL else c.pinned.managed_to_daemon(_data(c, args, size, "args"))
        call("vnpuLaunchKernel", kernel, blocks, _handle(c, stream), blob)
        return 0

    return body


def aclrtLaunchKernelWithConfig(c: C) -> Callable[..., int]:  # noqa: N802
    def body(func: Any, blocks: int, stream: Any, cfg: Any, args: Any, reserve: Any) -> int:
        wire = _get(c, args, KernelArgs, "argsHandle").wire() if c.address(args) else None
        if wire is not None:
            wire["data"] = c.pinned.managed_to_daemon(wire["data"])
        call("aclrtLaunchKernelWithConfig", _handle(c, func), blocks, _handle(c, stream), launch_config(c, cfg), wire,
             _handle(c, reserve))  # fmt: skip
        return 0

    return body


def aclrtKernelArgsInit(c: C) -> Callable[..., int]:  # noqa: N802
    def body(func: Any, args: Any) -> int:
        if not c.address(func):
            raise AclError(ACL_ERROR_INVALID_PARAM, "funcHandle is NULL")
        _out(c, args, "argsHandle")
        args[0] = c.ffi.cast("aclrtArgsHandle", _put(KernelArgs(c.address(func))))
        return 0

    return body


def aclrtKernelArgsAppend(c: C) -> Callable[..., int]:  # noqa: N802
    def body(args: Any, param: Any, size: int, handle: Any) -> int:
        block = _get(c, args, KernelArgs, "argsHandle")
        value = _data(c, param, size, "param")
        _out(c, handle, "paramHandle")
        handle[0] = c.ffi.cast("aclrtParamHandle", _put(block.append(value)))
        return 0

    return body


def aclrtKernelArgsAppendPlaceHolder(c: C) -> Callable[..., int]:  # noqa: N802
    def body(args: Any, handle: Any) -> int:
        block = _get(c, args, KernelArgs, "argsHandle")
        _out(c, handle, "paramHandle")
        handle[0] = c.ffi.cast("aclrtParamHandle", _put(block.append_placeholder()))
        return 0

    return body


def aclrtKernelArgsGetPlaceHolderBuffer(c: C) -> Callable[..., int]:  # noqa: N802
    def body(args: Any, param: Any, size: int, buffer: Any) -> int:
        block = _get(c, args, KernelArgs, "argsHandle")
        holder = _get(c, param, Param, "paramHandle")
        _out(c, buffer, "bufferAddr")
        memory = c.ffi.new("char[]", max(size, 1))
        block.placeholder_buffer(holder, size, lambda n: c.ffi.buffer(memory, n))
        holder.c_memory = memory  # alive as long as the parameter
        buffer[0] = c.ffi.cast("void *", memory)
        return 0

    return body


def aclrtKernelArgsParaUpdate(c: C) -> Callable[..., int]:  # noqa: N802
    def body(args: Any, param: Any, value: Any, size: int) -> int:
        block = _get(c, args, KernelArgs, "argsHandle")
        holder = _get(c, param, Param, "paramHandle")
        block.update(holder, _data(c, value, size, "param"))
        return 0

    return body


def aclrtKernelArgsFinalize(c: C) -> Callable[..., int]:  # noqa: N802
    def body(args: Any) -> int:
        _get(c, args, KernelArgs, "argsHandle").finalize()
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    f.__name__: f
    for f in (
        aclrtBinaryLoadFromFile,
        aclrtBinaryLoadFromData,
        aclrtLaunchKernel,
        vnpuLaunchKernel,
        aclrtLaunchKernelWithConfig,
        aclrtKernelArgsInit,
        aclrtKernelArgsAppend,
        aclrtKernelArgsAppendPlaceHolder,
        aclrtKernelArgsGetPlaceHolderBuffer,
        aclrtKernelArgsParaUpdate,
        aclrtKernelArgsFinalize,
    )
}
