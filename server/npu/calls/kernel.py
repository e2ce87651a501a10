"""Custom kernels: aclrtBinaryLoadFromData (the client's aclrtBinaryLoadFromFile), aclrtBinaryGetFunction,
aclrtBinaryUnLoad, aclrtLaunchKernel, aclrtLaunchKernelWithConfig, the `<<<>>>` launch of ascendc_library's
stubs (vnpuLaunchKernel) and the collection of kernel printf (vnpuTakePrinted).

Checks and codes as the runtime's (src/acl/aclrt_impl/kernel.cpp, src/runtime/api/api_c_kernel.cc): NULL
arguments 100000 at the ACL layer, a handle that is not one 107017, a kernel name the binary lacks 107000.
vnpu knows each kernel's signature, so it also refuses an argument block of the wrong size and a pointer that is
not device memory of the process (107000, naming the argument) where the device would fault later. A kernel with
no numpy implementation fails its launch with 207000, saying how to register one (`server.npu.kernels`).
"""

from __future__ import annotations

from typing import Any

from proto import fatbin
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.kernels.binary import Binary, Function
from server.npu.kernels.registry import HOW_TO_REGISTER, Kernel, lookup
from server.npu.kernels.task import CustomKernelTask, Value
from server.npu.tasks.launch_attrs import launch_attrs

SLOT = 8  # every argument of a non-CPU kernel starts at an 8-byte boundary (proto.kernelargs)
MAX_BLOCKS = 65535  # numBlocks of one launch (the runtime's limit for AI Core launches)


class KernelCalls(Area):
    @acl_call
    def aclrtBinaryLoadFromData(self, data: bytes | None, options: int | None) -> int:
        require(data is not None, "data is NULL", ACL_ERROR_INVALID_PARAM)
        assert data is not None
        require(len(data) > 0, "length is 0: a binary has at least one byte", ACL_ERROR_RT_PARAM_INVALID)
        self.ctx.check_handles()
        binary = Binary(self.machine.new_handle(), fatbin.kernel_names(data))
        self.ctx.binaries[binary.handle] = binary
        return binary.handle

    @acl_call
    def aclrtBinaryGetFunction(self, bin_handle: int | None, kernel_name: str | None) -> int:
        binary = self._binary(bin_handle)
        require(kernel_name is not None, "kernelName is NULL", ACL_ERROR_INVALID_PARAM)
        assert kernel_name is not None
        if binary.kernels is not None and kernel_name not in binary.kernels:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"binary {binary.handle:#x} has no kernel {kernel_name!r} (it has: {', '.join(binary.kernels)})",
            )
        for function in self.ctx.functions.values():
            if function.binary is binary and function.name == kernel_name:
                return function.handle  # the runtime hands out one Kernel per name
        function = Function(self.machine.new_handle(), kernel_name, binary)
        self.ctx.functions[function.handle] = function
        return function.handle

    @acl_call
    def aclrtBinaryUnLoad(self, bin_handle: int | None) -> None:
        binary = self._binary(bin_handle)
        del self.ctx.binaries[binary.handle]
        for handle in [h for h, f in self.ctx.functions.items() if f.binary is binary]:
            del self.ctx.functions[handle]
            self.ctx.handles.bury(handle, "function of a loaded binary")
        self.ctx.handles.bury(binary.handle, "loaded binary")

    @acl_call
    def aclrtLaunchKernel(
        self, func_handle: int | None, num_blocks: int, args_data: bytes | None, stream: int | None
    ) -> None:
        function = self._func(func_handle)
        require(args_data is not None, "argsData is NULL", ACL_ERROR_INVALID_PARAM)
        assert args_data is not None
        self._launch_custom("aclrtLaunchKernel", function.name, num_blocks, stream, args_data, [])

    @acl_call
    def aclrtLaunchKernelWithConfig(
        self,
        func_handle: int | None,
        num_blocks: int,
        stream: int | None,
        cfg: dict[str, Any] | None,
        args_handle: dict[str, Any] | None,
        reserve: int | None,
    ) -> None:
        require(bool(func_handle), "funcHandle is NULL", ACL_ERROR_INVALID_PARAM)
        require(num_blocks > 0, "numBlocks must be greater than 0", ACL_ERROR_INVALID_PARAM)
        require(args_handle is not None, "argsHandle is NULL", ACL_ERROR_INVALID_PARAM)
        require(not reserve, "reserve is a reserved parameter and must be NULL", ACL_ERROR_INVALID_PARAM)
        assert args_handle is not None
        function = self._func(func_handle)
        launch_attrs(cfg)  # the attributes' checks; none changes what a numpy kernel does
        api = "aclrtLaunchKernelWithConfig"
        self._launch_custom(api, function.name, num_blocks, stream, args_handle["data"], args_handle["placeholders"])

    @acl_call
    def vnpuLaunchKernel(self, kernel_name: str | None, num_blocks: int, stream: int | None, args: bytes) -> None:
        require(bool(kernel_name), "kernelName is NULL", ACL_ERROR_INVALID_PARAM)
        assert kernel_name is not None
        self._launch_custom(f"{kernel_name}<<<>>>", kernel_name, num_blocks, stream, args, [])

    @acl_call
    def vnpuTakePrinted(self) -> str:
        return self.ctx.printed.take()

    def _launch_custom(
        self, api: str, name: str, blocks: int, stream: int | None, data: bytes, holders: list[dict[str, Any]]
    ) -> None:
        require(blocks > 0, "numBlocks must be greater than 0", ACL_ERROR_INVALID_PARAM)
        require(blocks <= MAX_BLOCKS, f"numBlocks {blocks} is over {MAX_BLOCKS}", ACL_ERROR_RT_PARAM_INVALID)
        kernel = lookup(name, -(-len(data) // SLOT))
        if kernel is None:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                f"kernel {name} has no numpy implementation in vnpu: " + HOW_TO_REGISTER.format(name=name),
            )
        target = self.ctx.stream(stream)
        values, pins = self._decode(kernel, data, {h["offset"]: h["data"] for h in holders})
        self.ctx.printed.armed = True
        self.ctx.issue(target, CustomKernelTask(api, kernel, blocks, values, pins, self.ctx.printed))

    def _decode(
        self, kernel: Kernel, data: bytes, holders: dict[int, bytes]
    ) -> tuple[tuple[Value, ...], tuple[tuple[int, object], ...]]:
        """The arguments in `data` by the kernel's signature; pointers checked to be device memory of ours."""
        need = SLOT * len(kernel.signature)
        least = need - SLOT + kernel.signature[-1].size if kernel.signature else 0  # the last one unpadded
        if not least <= len(data) <= need:
            sig = ", ".join(a.name for a in kernel.signature) or "no arguments"
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"the argument block of kernel {kernel.name} holds {len(data)} bytes; its signature ({sig}) takes "
                f"{need} (8 bytes per argument)",
            )
        data = data.ljust(need, b"\0")
        values: list[Value] = []
        pins: list[tuple[int, object]] = []
        for index, arg in enumerate(kernel.signature):
            offset = index * SLOT
            if offset in holders:
                why = f"argument #{index} of {kernel.name} is a {arg.name}: a placeholder must be a pointer"
                require(arg.pointer, why, ACL_ERROR_RT_PARAM_INVALID)
                values.append(holders[offset])
                continue
            value = arg.unpack(data, offset)
            if arg.pointer and value:
                assert isinstance(value, int)
                owner = self.machine.owner(value)
                if self.machine.device_of(value) is None or not self.ctx.memory.owns(owner):
                    raise AclError(
                        ACL_ERROR_RT_PARAM_INVALID,
                        f"argument #{index} of kernel {kernel.name} ({value:#x}) is not device memory of this "
                        f"process: {self.ctx.memory.explain(value)}",
                    )
                pins.append((value, owner))
            values.append(None if arg.pointer and not value else value)
        return tuple(values), tuple(pins)

    def _binary(self, handle: int | None) -> Binary:
        require(bool(handle), "binHandle is NULL", ACL_ERROR_INVALID_PARAM)
        assert handle is not None
        found = self.ctx.binaries.get(handle)
        if found is None:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, f"binHandle: {self.ctx.handles.not_a('loaded binary', handle)}")
        return found

    def _func(self, handle: int | None) -> Function:
        require(bool(handle), "funcHandle is NULL", ACL_ERROR_INVALID_PARAM)
        assert handle is not None
        found = self.ctx.functions.get(handle)
        if found is None:
            why = self.ctx.handles.not_a("function of a loaded binary", handle)
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, f"funcHandle: {why} (aclrtBinaryGetFunction gives one)")
        return found
