"""Custom kernels from the client: the host half of the runtime's kernel calls.

- aclrtBinaryLoadFromFile reads the file here (the program's machine) and loads its bytes
  (aclrtBinaryLoadFromData): `ascendc_fatbin_library`'s file, or any other binary.
- aclrtKernelArgsInit .. Finalize build an argument block on the host, as the runtime does
  (`proto.kernelargs`); in Python `param` is any buffer (bytes, a numpy scalar or array: its bytes),
  paramSize is dropped, and aclrtKernelArgsGetPlaceHolderBuffer returns a writable bytearray.
- aclrtLaunchKernelWithConfig sends the block as it is at the launch.
- Kernel printf (AscendC::printf) reaches this process's stdout at its next synchronizing call once it has
  launched a kernel or a model (`Printed`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID, AclError
from proto.kernelargs import KernelArgs, Param
from proto.printf import LAUNCHES, SYNCHRONIZING

Call = Callable[..., Any]


def _bytes(param: Any, api: str) -> bytes:
    if param is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, "param is NULL", api)
    try:
        return bytes(memoryview(param).cast("B"))
    except TypeError:
        raise AclError(
            ACL_ERROR_INVALID_PARAM, f"param must be a buffer (bytes, numpy), not {type(param)}", api
        ) from None


def _args(handle: Any, api: str) -> KernelArgs:
    if handle is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, "argsHandle is NULL", api)
    if not isinstance(handle, KernelArgs):
        raise AclError(
            ACL_ERROR_INVALID_PARAM, f"argsHandle is a {type(handle).__name__}: aclrtKernelArgsInit makes one", api
        )
    return handle


def _param(handle: Any, api: str) -> Param:
    if handle is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, "paramHandle is NULL", api)
    if not isinstance(handle, Param):
        raise AclError(
            ACL_ERROR_INVALID_PARAM, f"paramHandle is a {type(handle).__name__}, not an aclrtParamHandle", api
        )
    return handle


def aclrtKernelArgsInit(funcHandle: int | None) -> KernelArgs:  # noqa: N802, N803
    if not funcHandle:
        raise AclError(ACL_ERROR_INVALID_PARAM, "funcHandle is NULL", "aclrtKernelArgsInit")
    return KernelArgs(funcHandle)


def aclrtKernelArgsAppend(argsHandle: KernelArgs, param: Any) -> Param:  # noqa: N802, N803
    api = "aclrtKernelArgsAppend"
    return _args(argsHandle, api).append(_bytes(param, api), api)


def aclrtKernelArgsAppendPlaceHolder(argsHandle: KernelArgs) -> Param:  # noqa: N802, N803
    return _args(argsHandle, "aclrtKernelArgsAppendPlaceHolder").append_placeholder()


def aclrtKernelArgsGetPlaceHolderBuffer(argsHandle: KernelArgs, paramHandle: Param, dataSize: int) -> bytearray:  # noqa: N802, N803
    api = "aclrtKernelArgsGetPlaceHolderBuffer"
    buffer: bytearray = _args(argsHandle, api).placeholder_buffer(_param(paramHandle, api), dataSize)
    return buffer


def aclrtKernelArgsParaUpdate(argsHandle: KernelArgs, paramHandle: Param, param: Any) -> None:  # noqa: N802, N803
    api = "aclrtKernelArgsParaUpdate"
    _args(argsHandle, api).update(_param(paramHandle, api), _bytes(param, api), api)


def aclrtKernelArgsFinalize(argsHandle: KernelArgs) -> None:  # noqa: N802, N803
    _args(argsHandle, "aclrtKernelArgsFinalize").finalize()


def binary_file(path: str | None) -> bytes:
    """aclrtBinaryLoadFromFile's file, read on this machine."""
    api = "aclrtBinaryLoadFromFile"
    if path is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, "binPath is NULL", api)
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"cannot read the binary {path!r}: {error.strerror}", api) from None


def args_wire(handle: Any) -> dict[str, Any] | None:
    """An aclrtArgsHandle as a launch carries it; anything else as it is (the call's checks name it)."""
    return handle.wire() if isinstance(handle, KernelArgs) else handle


def aclrtBinaryLoadFromFile(call: Call, binPath: str | None, options: Any = None) -> int:  # noqa: N802, N803
    handle: int = call("aclrtBinaryLoadFromData", binary_file(binPath), options)
    return handle


def aclrtLaunchKernelWithConfig(  # noqa: N802
    call: Call,
    funcHandle: int | None,
    numBlocks: int,
    stream: int | None,
    cfg: Any,
    argsHandle: Any,
    reserve: Any,  # noqa: N803
) -> None:
    call("aclrtLaunchKernelWithConfig", funcHandle, numBlocks, stream, cfg, args_wire(argsHandle), reserve)


HOST = {
    f.__name__: f
    for f in (
        aclrtKernelArgsInit,
        aclrtKernelArgsAppend,
        aclrtKernelArgsAppendPlaceHolder,
        aclrtKernelArgsGetPlaceHolderBuffer,
        aclrtKernelArgsParaUpdate,
        aclrtKernelArgsFinalize,
    )
}
SESSION = {f.__name__: f for f in (aclrtBinaryLoadFromFile, aclrtLaunchKernelWithConfig)}

# -- kernel printf --------------------------------------------------------------------------------------------
# LAUNCHES and SYNCHRONIZING: proto.printf (the daemon attaches the text to a WebSocket reply itself)


def write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


class Printed:
    """Collects kernel printf for one session over HTTP: after a synchronizing call, once a kernel may have
    printed. (Over the WebSocket the daemon attaches the text to the synchronizing call's reply: `write`.)"""

    writer: Callable[[str], None] = staticmethod(write_stdout)  # the C toolkit writes through the C stdout

    def __init__(self) -> None:
        self.armed = False

    @staticmethod
    def write(reply: dict[str, Any] | None) -> None:
        """Write what a WebSocket reply says the kernels printed."""
        text = reply.get("printed") if reply is not None else None
        if text:
            Printed.writer(text)

    def after(self, api: str, call: Call) -> None:
        if api in LAUNCHES:
            self.armed = True
        elif self.armed and api in SYNCHRONIZING:
            text: str = call("vnpuTakePrinted")
            if text:
                Printed.writer(text)


def c_stdout_writer() -> Callable[[str], None]:
    """For a C program: flush its C stdout, then write, so kernel lines keep their place among its own."""
    import ctypes

    libc = ctypes.CDLL(None)

    def write(text: str) -> None:
        libc.fflush(None)
        os.write(1, text.encode())

    return write
