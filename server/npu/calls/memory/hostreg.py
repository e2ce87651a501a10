"""Host registration and managed memory (spec-breadth 12, the host_register/0 and managed_memory/0 samples).

aclrtHostRegisterV2 registers a host range with the current device. With ACL_HOST_REG_MAPPED the range gets a
device address (aclrtHostGetDevicePointer) through which kernels and copies reach the same bytes -- zero copy:
a window (`server.npu.memory.vmem.Window`) onto the host buffer. vnpu can map only aclrtMallocHost memory, which the
daemon holds; other memory of the program is out of its reach, so MAPPED on it answers 207000 (registering it
without MAPPED is recorded and changes nothing else). A buffer freed while registered is unregistered with it.

aclrtMemAllocManaged gives memory that host code and the device use under one address: a fresh shared-memory
buffer behind a window of the current device, freed with aclrtFree. The client maps it like pinned memory
(vnpuHostInfo names its segment), so host code reads and writes it in place.
"""

from __future__ import annotations

import numpy as np

from proto.constants import (
    ACL_HOST_REG_MAPPED,
    ACL_RT_MEM_ATTACH_GLOBAL,
)
from proto.errors import (
    ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
    ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.memory.allocator import OutOfSpace
from server.npu.memory.hostmem import HostBuffer
from server.npu.memory.hostreg import VALID_FLAGS, Registration
from server.npu.memory.vmem import VirtualSpace, Window
from server.npu.process.memory import unregister
from server.npu.process.memory_tables import host_cost


class HostRegistrationCalls(Area):
    @acl_call
    def aclrtHostRegisterV2(self, ptr: int | None, size: int, flag: int) -> None:
        require(bool(ptr), "ptr is NULL")
        require(size > 0, f"size must be > 0, got {size}")
        assert ptr is not None
        why = (
            f"flag {flag:#x} is not an OR of ACL_HOST_REG_MAPPED (0x2), ACL_HOST_REG_IOMEMORY (0x4), "
            "ACL_HOST_REG_READONLY (0x8) and ACL_HOST_REG_PINNED (0x10000000)"
        )
        require(bool(flag & VALID_FLAGS) and not flag & ~VALID_FLAGS, why, ACL_ERROR_RT_PARAM_INVALID)
        device = self.ctx.device()
        clash = next((r for r in self.ctx.memory.registrations.values() if r.ptr < ptr + size and ptr < r.end), None)
        if clash is not None:
            raise AclError(
                ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                f"{size} bytes at {ptr:#x} overlap the {clash.size} registered bytes at {clash.ptr:#x}",
            )
        window = None
        if flag & ACL_HOST_REG_MAPPED:
            buffer = self.machine.host.find(ptr)
            if buffer is None or buffer.ptr not in self.ctx.memory.host_buffers:
                raise AclError(
                    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    f"{ptr:#x} is not aclrtMallocHost memory: vnpu maps only that to the device (the daemon cannot "
                    "reach the program's other memory); allocate the buffer with aclrtMallocHost",
                )
            require(ptr + size <= buffer.end, f"{size} bytes at {ptr:#x} run {ptr + size - buffer.end} bytes past the "
                    f"end of the {buffer.size}-byte aclrtMallocHost buffer at {buffer.ptr:#x}",
                    ACL_ERROR_RT_PARAM_INVALID)  # fmt: skip
            start = ptr - buffer.ptr
            window = self._open(
                device.virtual, buffer.array[start : start + size], f"registered host memory at {ptr:#x}"
            )
            self.ctx.memory.windows[window.va] = window
        self.ctx.memory.registrations[ptr] = Registration(ptr, size, flag, device.index, window)

    @acl_call
    def aclrtHostGetDevicePointer(self, p_host: int | None, flag: int) -> int:
        require(bool(p_host), "pHost is NULL")
        require(flag == 0, f"flag is reserved and must be 0, got {flag}")
        assert p_host is not None
        registration = self.ctx.memory.registrations.get(p_host)
        if registration is None or registration.window is None:
            inside = next((r for r in self.ctx.memory.registrations.values() if r.ptr <= p_host < r.end), None)
            why = (
                f"it lies inside the registration at {inside.ptr:#x}; pass its start"
                if inside
                else "it is not the start of a registration made with ACL_HOST_REG_MAPPED (aclrtHostRegisterV2)"
            )
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"{p_host:#x} has no device address: {why}")
        return registration.window.va

    @acl_call
    def aclrtHostUnregister(self, ptr: int | None) -> None:
        require(bool(ptr), "ptr is NULL")
        assert ptr is not None
        if ptr not in self.ctx.memory.registrations:
            raise AclError(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, f"{ptr:#x} is not the start of a registered range")
        unregister(self.ctx, ptr)

    @acl_call
    def aclrtMemAllocManaged(self, size: int, flag: int) -> int:
        require(flag == ACL_RT_MEM_ATTACH_GLOBAL, f"flag must be ACL_RT_MEM_ATTACH_GLOBAL (1), got {flag}")
        require(size > 0, "size is 0", ACL_ERROR_RT_PARAM_INVALID)
        device = self.ctx.device()
        available = self.machine.host.available()
        if size > available:
            raise AclError(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                f"cannot allocate {size} bytes of managed memory: the shared memory (/dev/shm) has {available} free",
            )
        self.ctx.memory.charge(host_cost(size))
        try:
            buffer = self.machine.host.malloc(size)
        except (OSError, OverflowError) as error:
            self.ctx.memory.used -= host_cost(size)
            raise AclError(ACL_ERROR_RT_MEMORY_ALLOCATION, f"cannot allocate {size} bytes: {error}") from None
        try:
            window = self._open(device.virtual, buffer.array, "managed memory", buffer)
        except AclError:
            self.machine.host.free(buffer.ptr)
            self.ctx.memory.used -= host_cost(size)
            raise
        self.ctx.memory.windows[window.va] = window
        return window.va

    @staticmethod
    def _open(virtual: VirtualSpace, array: np.ndarray, what: str, managed: HostBuffer | None = None) -> Window:
        try:
            return virtual.open_window(array, what, managed, managed=managed is not None)
        except OutOfSpace as full:
            raise AclError(ACL_ERROR_RT_MEMORY_ALLOCATION, f"no device addresses left for {what}: {full}") from None
