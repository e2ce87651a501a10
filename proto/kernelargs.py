"""aclrtArgsHandle: a kernel's argument block built on the host (aclrtKernelArgsInit .. Finalize), as the runtime
builds it (src/runtime api_impl.cc, read for behaviour): every parameter at the next 8-byte boundary, copied at
Append; a placeholder is an 8-byte slot the runtime points at data the program writes into the buffer that
aclrtKernelArgsGetPlaceHolderBuffer returns (no parameter may follow a placeholder buffer, nothing may be added
after Finalize). A launch carries `wire()`: the parameter bytes and each placeholder's slot offset and data.
Pure Python, shared by the client and the C toolkit (which passes its own buffer maker for placeholder buffers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)

ALIGN: Final = 8  # non-CPU kernels: each parameter starts at an 8-byte boundary
MAX_ARGS_SIZE: Final = 64 << 10  # parameters and placeholder data of one argument block
MAX_PARAMS: Final = 128


@dataclass(eq=False)
class Param:
    """aclrtParamHandle: a parameter (`placeholder` False) or a placeholder slot of one argument block."""

    offset: int
    size: int
    placeholder: bool
    buffer: Any = None  # a placeholder's data buffer (anything with the buffer protocol)
    c_memory: Any = None  # the C memory behind `buffer`, kept alive (the C toolkit)


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


@dataclass(eq=False)
class KernelArgs:
    """One aclrtArgsHandle of `func_handle` (an aclrtFuncHandle, checked when it is launched)."""

    func_handle: int
    data: bytearray = field(default_factory=bytearray)
    params: list[Param] = field(default_factory=list)
    used: int = 0  # bytes of parameters and placeholder data so far
    finalized: bool = False
    got_buffer: bool = False

    def append(self, value: bytes, api: str = "aclrtKernelArgsAppend") -> Param:
        if not value:
            raise AclError(ACL_ERROR_INVALID_PARAM, "paramSize must be greater than 0", api)
        self._may_add(api)
        offset = _align(len(self.data))
        self._room(offset + len(value), api)
        self.data.extend(bytes(offset - len(self.data)) + bytes(value))
        param = Param(offset, len(value), False)
        self.params.append(param)
        self.used = len(self.data)
        return param

    def append_placeholder(self, api: str = "aclrtKernelArgsAppendPlaceHolder") -> Param:
        self._may_add(api)
        offset = _align(len(self.data))
        self._room(offset + ALIGN, api)
        self.data.extend(bytes(offset + ALIGN - len(self.data)))
        param = Param(offset, ALIGN, True)
        self.params.append(param)
        self.used = len(self.data)
        return param

    def placeholder_buffer(self, param: Param, size: int, make: Callable[[int], Any] = bytearray, api: str = "") -> Any:
        """The buffer the program fills with the placeholder's data (`make(size)`, kept here)."""
        api = api or "aclrtKernelArgsGetPlaceHolderBuffer"
        self._own(param, api)
        if size <= 0:
            raise AclError(ACL_ERROR_INVALID_PARAM, "dataSize must be greater than 0", api)
        if not param.placeholder:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                "paramHandle is a common parameter, not a placeholder: it has no buffer",
                api,
            )
        if self.finalized:
            raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "no placeholder buffer after aclrtKernelArgsFinalize", api)
        self._room(_align(self.used) + size, api)
        self.used = _align(self.used) + size
        self.got_buffer = True
        param.buffer = make(size)
        return param.buffer

    def update(self, param: Param, value: bytes, api: str = "aclrtKernelArgsParaUpdate") -> None:
        self._own(param, api)
        if param.placeholder:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, "paramHandle is a placeholder: update its buffer instead", api)
        if len(value) != param.size:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"paramSize {len(value)} must equal the {param.size} bytes the parameter was appended with",
                api,
            )
        self.data[param.offset : param.offset + param.size] = value

    def finalize(self) -> None:
        self.finalized = True

    def wire(self) -> dict[str, Any]:
        """What a launch carries: the parameter bytes and the placeholders' slots and data (read now)."""
        holders = [
            {"offset": p.offset, "data": bytes(memoryview(p.buffer).cast("B")) if p.buffer is not None else b""}
            for p in self.params
            if p.placeholder
        ]
        return {"data": bytes(self.data), "placeholders": holders}

    def _may_add(self, api: str) -> None:
        if self.finalized:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "nothing may be appended after aclrtKernelArgsFinalize", api
            )
        if self.got_buffer:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "no parameter may be appended after aclrtKernelArgsGetPlaceHolderBuffer: append every parameter first",
                api,
            )
        if len(self.params) >= MAX_PARAMS:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"a kernel takes at most {MAX_PARAMS} parameters", api)

    def _room(self, end: int, api: str) -> None:
        if end > MAX_ARGS_SIZE:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID, f"the argument block would hold {end} bytes, over {MAX_ARGS_SIZE}", api
            )

    def _own(self, param: Param, api: str) -> None:
        if not any(p is param for p in self.params):
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, "paramHandle is not a parameter of this argsHandle", api)
