"""What memory a process holds: its device allocations, pinned host buffers, virtual reservations and physical
handles, host registrations and windows, IPC keys, the words the runtime keeps for it -- the bytes charged to it,
and what it alone may touch (another process's memory reads exactly like memory never allocated).
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from proto.errors import ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID, AclError
from server.npu.machine import Machine
from server.npu.memory.arena import Allocation, MemoryFault
from server.npu.memory.hostmem import HostBuffer
from server.npu.memory.vmem import Mapping, PhysicalMemory, Reservation, Window

if TYPE_CHECKING:
    from server.npu.device import Device
    from server.npu.memory.hostreg import Registration
    from server.npu.memory.ipc import IpcMemory
    from server.npu.memory.quota import Quota

FREED_KEPT = 4096  # freed blocks remembered, to explain a later use
ALLOCATION_CHARGE = 512  # the least a device allocation is charged: its bookkeeping costs the daemon ~260 bytes
HOST_CHARGE = mmap.PAGESIZE  # the least a pinned buffer is charged: a shared-memory segment maps whole pages


def device_cost(size: int) -> int:
    """What an allocation of `size` bytes of device memory is charged (at least ALLOCATION_CHARGE)."""
    return max(size, ALLOCATION_CHARGE)


def host_cost(size: int) -> int:
    """What a pinned host buffer of `size` bytes is charged (at least a page)."""
    return max(size, HOST_CHARGE)


class MemoryTables:
    """A process's memory: the tables, the bytes charged (to it and its tenant), and its view of addresses."""

    def __init__(self, machine: Machine, limit: int | None, quota: Quota | None) -> None:
        self.machine = machine
        self.limit = limit  # bytes of device + pinned host memory this context may hold
        self.quota = quota  # its tenant's, shared by the tenant's contexts (None: one tenant, no quota)
        self._used = 0
        self.allocations: dict[int, Device] = {}  # device pointer -> its device
        self.host_buffers: set[int] = set()
        self.words: set[int] = set()  # device words the runtime allocated for the process (cond handles)
        self.ipc_exports: dict[str, IpcMemory] = {}  # aclrtIpcMemGetExportKey's keys of this context's memory
        self.ipc_imports: dict[str, tuple[IpcMemory, Window]] = {}  # imported IPC keys -> their window here
        self.physicals: dict[int, PhysicalMemory] = {}  # aclrtDrvMemHandle -> physical memory (made or imported)
        self.owned_physicals: set[int] = set()  # the handles this context allocated (aclrtMallocPhysical)
        self.reservations: dict[int, Reservation] = {}  # virtual address -> aclrtReserveMemAddress's range
        self.windows: dict[int, Window] = {}  # device address -> a host registration's window, managed memory
        self.registrations: dict[int, Registration] = {}  # host pointer -> aclrtHostRegisterV2's registration
        self.freed: dict[int, tuple[int, str]] = {}  # pointers freed lately -> (size, by what call), to explain use

    @property
    def used(self) -> int:
        """Bytes of device + pinned host memory the context holds; its tenant's count moves with it."""
        return self._used

    @used.setter
    def used(self, value: int) -> None:
        if self.quota is not None:
            self.quota.give("memory", self._used - value)
        self._used = value

    def charge(self, size: int) -> None:
        """Account `size` more bytes to the context, refusing to pass its quota or its tenant's."""
        if self.limit is not None and self.used + size > self.limit:
            raise AclError(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                f"this context's memory quota is {self.limit} bytes and {self.used} are in use: {size} more do not fit",
            )
        if self.quota is not None:
            self.quota.check("memory", size)
        self.used += size

    def hold(self, size: int) -> Callable[[], None]:
        """Charge `size` bytes (as `charge`) for something the daemon keeps for the context -- a TDT entry -- and
        return the function that gives them back, once, when it goes."""
        self.charge(size)
        owed = [size]

        def give_back() -> None:
            if owed:
                self.used -= owed.pop()

        return give_back

    def owns(self, owner: object) -> bool:
        """Whether this context may touch the memory object `owner` (what `Machine.owner` gives)."""
        if isinstance(owner, Allocation):
            return owner.ptr in self.allocations or owner.ptr in self.words
        if isinstance(owner, HostBuffer):
            return owner.ptr in self.host_buffers
        if isinstance(owner, Mapping):
            return self.reservations.get(owner.reservation.va) is owner.reservation
        if isinstance(owner, Window):
            return self.windows.get(owner.va) is owner
        return False

    def device_range(self, name: str, ptr: int, count: int) -> None:
        """[ptr, ptr + count) is device memory of this context (107000 otherwise)."""
        owner = self.machine.owner(ptr)
        if self.machine.device_of(ptr) is None or not self.owns(owner):
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"{name} must be device memory: {self.explain(ptr)}")
        try:
            self.machine.region(ptr, count)
        except MemoryFault as fault:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"{name}: {fault}") from None

    def region(self, ptr: int, nbytes: int) -> np.ndarray:
        """A view of [ptr, ptr + nbytes) in memory this context allocated, mapped or imported (device or pinned
        host); MemoryFault otherwise."""
        if not self.owns(self.machine.owner(ptr)):
            raise MemoryFault(self.explain(ptr))
        return self.machine.region(ptr, nbytes)

    def explain(self, ptr: int) -> str:
        """Why `ptr` is not usable, from what this context alone knows."""
        for start, (size, by) in self.freed.items():
            if start <= ptr < start + max(size, 1):
                return f"{ptr:#x} lies in the {size}-byte block at {start:#x}, which was freed by {by}"
        device = self.machine.device_of(ptr)
        if device is not None and ptr in device.virtual:
            found = device.virtual.find_range(ptr)
            if isinstance(found, Reservation) and self.reservations.get(found.va) is found:
                return f"{ptr:#x} lies in {found} but no physical memory is mapped there (aclrtMapMem)"
            return device.virtual.explain(ptr)
        return f"{ptr:#x} is not in memory allocated by this context (aclrtMalloc or aclrtMallocHost)"

    def forget(self, ptr: int, size: int, by: str) -> None:
        """Remember that the call `by` freed [ptr, ptr + size) of this context, to explain a later use (bounded)."""
        if len(self.freed) >= FREED_KEPT:
            self.freed.pop(next(iter(self.freed)))
        self.freed[ptr] = (size, by)

    def pins(self, *ptrs: int) -> tuple[tuple[int, object], ...]:
        """What the pointers point into now, for a task to check when it runs (see `server.npu.tasks.pins`)."""
        return tuple((ptr, self.machine.owner(ptr)) for ptr in ptrs)
