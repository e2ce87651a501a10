"""Virtual and physical memory, and shareable handles (spec-breadth 11; the model is `server.npu.memory.vmem`).

The ACL layer's checks come first (100000, in its order); what the driver checks -- behind the runtime, so its
codes are not in the runtime's source -- vnpu checks as its documentation states and answers 107000 with a
message: a mapping covers a whole physical block (offset 0, the block's size, a multiple of the granularity) at
a granularity-aligned address of one reservation, over no other mapping; a reservation is released once unmapped;
a shareable handle is imported by another process, on the whitelist its exporter set unless exported with
ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION. Physical memory freed while mapped goes when its last mapping does.
Access is read-write for every device once mapped (aclrtMemSetAccess checks and records its descriptors; vnpu
enforces no read-only access).
"""

from __future__ import annotations

import secrets
from typing import Any

from proto.calltable import aclrtMemAccessDesc, aclrtPhysicalMemProp
from proto.constants import (
    ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
    aclrtMemAccessFlags,
    aclrtMemAllocationType,
    aclrtMemAttr,
    aclrtMemGranularityOptions,
    aclrtMemHandleType,
    aclrtMemLocationType,
    aclrtMemSharedHandleType,
)
from proto.enumtext import not_member
from proto.errors import (
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.memory.allocator import OutOfSpace
from server.npu.memory.arena import MemoryFault
from server.npu.memory.vmem import GRANULARITY, HUGE1G, PhysicalMemory, Reservation
from server.npu.process.ipc import check_importer
from server.npu.process.memory import drop_physical

A = aclrtMemAttr
L = aclrtMemLocationType
_DDR = {A.ACL_DDR_MEM_HUGE, A.ACL_DDR_MEM_NORMAL, A.ACL_DDR_MEM_P2P_HUGE, A.ACL_DDR_MEM_P2P_NORMAL}
_SUPPORTED = _DDR | {A.ACL_HBM_MEM_HUGE, A.ACL_HBM_MEM_NORMAL, A.ACL_HBM_MEM_HUGE1G} | {
    A.ACL_MEM_NORMAL, A.ACL_MEM_HUGE, A.ACL_MEM_HUGE1G, A.ACL_MEM_P2P_NORMAL, A.ACL_MEM_P2P_HUGE, A.ACL_MEM_P2P_HUGE1G
}  # fmt: skip
_ONE_GIB = {A.ACL_HBM_MEM_HUGE1G, A.ACL_MEM_HUGE1G, A.ACL_MEM_P2P_HUGE1G}
V2_HANDLE_SIZE = 8  # ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT: the 64-bit shareable handle
Struct = aclrtPhysicalMemProp | aclrtMemAccessDesc | dict[str, Any]  # a C struct: its model, or its fields (the wire)


def _check_attr(prop: aclrtPhysicalMemProp) -> None:
    """The ACL layer's memAttr checks, shared by MallocPhysical and GetAllocationGranularity."""
    attr = prop.memAttr
    require(not (prop.location.type == L.ACL_MEM_LOCATION_TYPE_DEVICE and attr in _DDR),
            f"memAttr {_name(attr)} is host memory: use location type ACL_MEM_LOCATION_TYPE_HOST(0) or "
            "ACL_MEM_LOCATION_TYPE_HOST_NUMA(4)")  # fmt: skip
    require(attr in _SUPPORTED, f"memAttr {_name(attr)} is not a physical memory attribute (see aclrtMemAttr)")


def _name(attr: int) -> str:
    return A(attr).name if attr in set(A) else str(attr)


def _granularity(prop: aclrtPhysicalMemProp) -> int:
    return HUGE1G if prop.memAttr in _ONE_GIB else GRANULARITY


class VirtualMemoryCalls(Area):
    @acl_call
    def aclrtMemGetAllocationGranularity(self, prop: Struct | None, option: int) -> int:
        require(prop is not None, "prop is NULL")
        assert prop is not None
        prop = aclrtPhysicalMemProp.model_validate(prop)
        _check_attr(prop)
        if option not in aclrtMemGranularityOptions._value2member_map_:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, not_member("option", option, aclrtMemGranularityOptions))
        return _granularity(prop)

    @acl_call
    def aclrtReserveMemAddress(self, size: int, alignment: int, expect_ptr: int | None, flags: int) -> int:
        """A range of `size` bytes (rounded up to 2 MiB) at a 2 MiB-aligned address chosen by vnpu."""
        require(size > 0, f"size must be > 0, got {size}")
        require(flags in (0, 1), f"flags must be 0 (1 is accepted for compatibility), got {flags}")
        if expect_ptr:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                f"expectPtr {expect_ptr:#x}: vnpu chooses reserved addresses itself (an address of your choice is an "
                "experimental feature of the runtime); pass NULL",
            )
        require(alignment == 0 or (alignment & (alignment - 1) == 0 and alignment <= GRANULARITY),
                f"alignment {alignment} is neither 0 nor a power of two up to {GRANULARITY} (vnpu aligns reserved "
                f"addresses to {GRANULARITY} bytes)", ACL_ERROR_RT_PARAM_INVALID)  # fmt: skip
        device = self.ctx.device()
        try:
            reservation = device.virtual.reserve(size)
        except (OutOfSpace, OSError) as error:
            raise AclError(
                ACL_ERROR_RT_MEMORY_ALLOCATION, f"cannot reserve {size} bytes of addresses on device "
                f"{device.index}: {error}"
            ) from None  # fmt: skip
        self.ctx.memory.reservations[reservation.va] = reservation
        return reservation.va

    @acl_call
    def aclrtReleaseMemAddress(self, vir_ptr: int | None) -> None:
        reservation = self._reservation(vir_ptr, "virPtr")
        if reservation.mappings:
            first = next(iter(reservation.mappings.values()))
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"{reservation} still has {len(reservation.mappings)} mapping(s) (the first at {first.va:#x}): "
                "aclrtUnmapMem them first",
            )
        del self.ctx.memory.reservations[reservation.va]
        self.machine.devices[self._device_index_of(reservation.va)].virtual.release(reservation)

    @acl_call
    def aclrtMallocPhysical(self, size: int, prop: Struct | None, flags: int) -> int:
        require(prop is not None, "prop is NULL")
        assert prop is not None
        prop = aclrtPhysicalMemProp.model_validate(prop)
        require(size > 0, f"size must be > 0, got {size}")
        require(flags == 0, f"flags is reserved and must be 0, got {flags}")
        require(prop.handleType == aclrtMemHandleType.ACL_MEM_HANDLE_TYPE_NONE,
                f"prop->handleType must be ACL_MEM_HANDLE_TYPE_NONE(0), got {prop.handleType}")  # fmt: skip
        pinned = aclrtMemAllocationType.ACL_MEM_ALLOCATION_TYPE_PINNED
        got = prop.allocationType
        require(got == pinned, f"prop->allocationType must be ACL_MEM_ALLOCATION_TYPE_PINNED(0), got {got}")
        kind = prop.location.type
        require(kind not in (L.ACL_MEM_LOCATION_TYPE_UNREGISTERED, L.ACL_MEM_LOCATION_TYPE_MANAGED),
                f"prop->location.type {L(kind).name if kind in set(L) else kind} is not where physical memory "
                "lives")  # fmt: skip
        _check_attr(prop)
        if kind != L.ACL_MEM_LOCATION_TYPE_DEVICE:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                f"prop->location.type {kind}: vnpu allocates physical memory on devices only "
                "(ACL_MEM_LOCATION_TYPE_DEVICE)",
            )
        device = self._device_index_checked(prop.location.id)
        arena = self.machine.devices[device].arena
        require(arena.fd >= 0, "virtual memory needs Linux (memfd_create)", ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
        released = self.ctx.memory.hold(size)  # charged until the block goes back: freed, unmapped everywhere
        page = 4096
        try:
            block = arena.malloc(size + page, 0)
        except OutOfSpace as full:
            released()
            raise AclError(ACL_ERROR_RT_MEMORY_ALLOCATION, f"device {device} is out of memory: {full}") from None
        offset = -(-(block.ptr - arena.base) // page) * page
        physical = PhysicalMemory(self.machine.new_handle(), arena, device, size, block, offset, released=released)
        self.ctx.memory.physicals[physical.handle] = physical
        self.ctx.memory.owned_physicals.add(physical.handle)
        return physical.handle

    @acl_call
    def aclrtFreePhysical(self, handle: int | None) -> None:
        """The handle goes now; the memory when it is unmapped everywhere and freed by every importer too."""
        physical = self._physical(handle)
        drop_physical(self.ctx, physical)

    @acl_call
    def aclrtMapMem(self, vir_ptr: int | None, size: int, offset: int, handle: int | None, flags: int) -> None:
        require(bool(vir_ptr), "virPtr is NULL")
        require(bool(handle), "handle is NULL")
        require(size > 0, f"size must be > 0, got {size}")
        require(flags == 0, f"flags must be 0, got {flags}")
        assert vir_ptr is not None
        physical = self._physical(handle)
        reservation = self._containing(vir_ptr)
        bad = ACL_ERROR_RT_PARAM_INVALID
        require(offset == 0, f"offset must be 0 (a mapping covers a whole physical block), got {offset}", bad)
        require(size == physical.size, f"size {size} differs from the {physical.size} bytes of {physical}: a mapping "
                "covers the whole block", bad)  # fmt: skip
        require(size % GRANULARITY == 0, f"size {size} is not a multiple of the granularity ({GRANULARITY} bytes, "
                "aclrtMemGetAllocationGranularity): allocate the physical memory in multiples of it", bad)  # fmt: skip
        require((vir_ptr - reservation.va) % GRANULARITY == 0,
                f"virPtr {vir_ptr:#x} is not aligned to the granularity ({GRANULARITY} bytes)", bad)  # fmt: skip
        require(vir_ptr + size <= reservation.end,
                f"{size} bytes at {vir_ptr:#x} run {vir_ptr + size - reservation.end} bytes past the end of "
                f"{reservation}", bad)  # fmt: skip
        clash = reservation.overlapping(vir_ptr, size)
        require(clash is None, f"{size} bytes at {vir_ptr:#x} overlap the mapping at {clash.va if clash else 0:#x}: "
                "aclrtUnmapMem it first", bad)  # fmt: skip
        try:
            reservation.map(vir_ptr, physical, physical.arena.fd)
        except OSError as error:
            raise AclError(ACL_ERROR_RT_MEMORY_ALLOCATION, f"cannot map {physical} at {vir_ptr:#x}: {error}") from None

    @acl_call
    def aclrtUnmapMem(self, vir_ptr: int | None) -> None:
        require(bool(vir_ptr), "virPtr is NULL")
        assert vir_ptr is not None
        reservation = self._containing(vir_ptr)
        mapping = reservation.mappings.get(vir_ptr)
        if mapping is None:
            inside = reservation.find(vir_ptr)
            why = f"it is inside the mapping at {inside.va:#x}" if inside else "nothing is mapped there"
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"cannot unmap {vir_ptr:#x}: {why}")
        self.machine.devices[self._device_index_of(vir_ptr)].virtual.unmap(mapping)

    @acl_call
    def aclrtMemSetAccess(self, vir_ptr: int | None, size: int, desc: list[Struct] | None) -> None:
        """Checks the range and the descriptors; every mapped range is read-write for every device in vnpu."""
        require(bool(vir_ptr), "virPtr is NULL")
        require(desc is not None, "desc is NULL")
        assert vir_ptr is not None and desc is not None
        bad = ACL_ERROR_RT_PARAM_INVALID
        require(len(desc) > 0, "count must be > 0", bad)
        reservation = self._containing(vir_ptr)
        try:
            reservation.region(vir_ptr, size)
        except MemoryFault as fault:
            raise AclError(bad, f"the range to set access on is not mapped: {fault}") from None
        for i, d in enumerate(aclrtMemAccessDesc.model_validate(one) for one in desc):
            if d.flags not in aclrtMemAccessFlags._value2member_map_:
                raise AclError(bad, not_member(f"desc[{i}].flags", d.flags, aclrtMemAccessFlags))
            require(d.location.type in (L.ACL_MEM_LOCATION_TYPE_DEVICE, L.ACL_MEM_LOCATION_TYPE_HOST),
                    f"desc[{i}].location.type {d.location.type} is neither DEVICE nor HOST", bad)  # fmt: skip
            if d.location.type == L.ACL_MEM_LOCATION_TYPE_DEVICE:
                self._device_index_checked(d.location.id)

    @acl_call
    def aclrtMemExportToShareableHandle(self, handle: int | None, handle_type: int, flags: int) -> int:
        require(bool(handle), "handle is NULL")
        require(handle_type == aclrtMemHandleType.ACL_MEM_HANDLE_TYPE_NONE,
                f"handleType must be ACL_MEM_HANDLE_TYPE_NONE(0), got {handle_type}")  # fmt: skip
        return self._export(handle, flags)

    @acl_call
    def aclrtMemExportToShareableHandleV2(self, handle: int | None, flags: int, share_type: int) -> bytes:
        """ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT: the 8 bytes of the 64-bit handle; FABRIC needs an A3 super node."""
        require(bool(handle), "handle is NULL")
        self._share_type(share_type)
        return self._export(handle, flags).to_bytes(V2_HANDLE_SIZE, "little")

    @acl_call
    def aclrtMemSetPidToShareableHandle(self, shareable_handle: int, pid: list[int] | None) -> None:
        require(pid is not None, "pid is NULL")
        assert pid is not None
        require(len(pid) > 0, "pidNum must be > 0")
        physical = self._shared(shareable_handle)
        owned = self.ctx.memory.owned_physicals
        require(physical.handle in owned, f"only the exporter of {shareable_handle:#x} sets its whitelist",
                ACL_ERROR_RT_PARAM_INVALID)  # fmt: skip
        physical.import_pids.update(pid)

    @acl_call
    def aclrtMemImportFromShareableHandle(self, shareable_handle: int, device_id: int) -> int:
        self._device_index_checked(device_id)
        self.ctx.device()  # a current context (107002)
        return self._import(shareable_handle)

    @acl_call
    def aclrtMemImportFromShareableHandleV2(self, shareable_handle: bytes | None, share_type: int, flags: int) -> int:
        require(shareable_handle is not None, "shareableHandle is NULL")
        require(flags == 0, f"flags is reserved and must be 0, got {flags}")
        assert shareable_handle is not None
        self.ctx.device()  # the current device (the ACL layer asks for it)
        self._share_type(share_type)
        require(len(shareable_handle) == V2_HANDLE_SIZE, f"shareableHandle must be {V2_HANDLE_SIZE} bytes, got "
                f"{len(shareable_handle)}", ACL_ERROR_RT_PARAM_INVALID)  # fmt: skip
        return self._import(int.from_bytes(shareable_handle, "little"))

    def _export(self, handle: int | None, flags: int) -> int:
        physical = self._physical(handle)
        require(flags in (0, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
                f"flags {flags:#x} is neither ACL_RT_VMM_EXPORT_FLAG_DEFAULT nor "
                "ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION", ACL_ERROR_RT_PARAM_INVALID)  # fmt: skip
        owned = self.ctx.memory.owned_physicals
        require(physical.handle in owned, f"{physical} was imported here: only the process that allocated it exports "
                "it", ACL_ERROR_RT_PARAM_INVALID)  # fmt: skip
        require(physical.shareable is None, f"{physical} is already exported (as {physical.shareable or 0:#x}): a "
                "handle has one shareable handle", ACL_ERROR_RT_PARAM_INVALID)  # fmt: skip
        shareable = secrets.randbits(63) | 1
        physical.shareable = shareable
        physical.pid_validation = not flags & ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION
        self.machine.ipc.shareable[shareable] = physical
        return shareable

    def _import(self, shareable_handle: int) -> int:
        physical = self._shared(shareable_handle)
        if physical.handle in self.ctx.memory.physicals:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"{physical} is already held by this process: a shareable handle is imported in another process",
            )
        check_importer(f"shareable handle {shareable_handle:#x}", physical.pid_validation, physical.import_pids,
                       "aclrtMemSetPidToShareableHandle", "ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION")  # fmt: skip
        physical.refs += 1
        self.ctx.memory.physicals[physical.handle] = physical
        return physical.handle

    def _share_type(self, share_type: int) -> None:
        kinds = aclrtMemSharedHandleType
        if share_type not in kinds._value2member_map_:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, not_member("shareType", share_type, kinds))
        if share_type == kinds.ACL_MEM_SHARE_HANDLE_TYPE_FABRIC:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "ACL_MEM_SHARE_HANDLE_TYPE_FABRIC shares memory between servers, which only Atlas A3 super nodes "
                "do; vnpu presents an A2 device (use ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT within one daemon)",
            )

    def _shared(self, shareable_handle: int) -> PhysicalMemory:
        physical = self.machine.ipc.shareable.get(shareable_handle)
        if physical is None:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"{shareable_handle:#x} is not a live shareable handle (aclrtMemExportToShareableHandle; its "
                "physical memory may be freed)",
            )
        return physical

    def _physical(self, handle: int | None) -> PhysicalMemory:
        require(bool(handle), "handle is NULL")
        assert handle is not None
        physical = self.ctx.memory.physicals.get(handle)
        if physical is None:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"{handle:#x} is not a physical memory handle of this process (aclrtMallocPhysical or an import)",
            )
        return physical

    def _reservation(self, vir_ptr: int | None, name: str) -> Reservation:
        require(bool(vir_ptr), f"{name} is NULL")
        assert vir_ptr is not None
        reservation = self.ctx.memory.reservations.get(vir_ptr)
        if reservation is None:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID, f"{vir_ptr:#x} is not the start of a reservation of this process: "
                f"{self._why_not_reserved(vir_ptr)}"
            )  # fmt: skip
        return reservation

    def _containing(self, vir_ptr: int) -> Reservation:
        device = self.machine.device_of(vir_ptr)
        found = device.virtual.find_range(vir_ptr) if device is not None else None
        if isinstance(found, Reservation) and self.ctx.memory.reservations.get(found.va) is found:
            return found
        raise AclError(
            ACL_ERROR_RT_PARAM_INVALID,
            f"{vir_ptr:#x} is not in a reservation of this process: {self._why_not_reserved(vir_ptr)}",
        )

    def _why_not_reserved(self, ptr: int) -> str:
        device = self.machine.device_of(ptr)
        if device is not None and ptr in device.virtual:
            found = device.virtual.find_range(ptr)
            if isinstance(found, Reservation) and self.ctx.memory.reservations.get(found.va) is found:
                return f"it lies inside {found}"
            return device.virtual.explain(ptr)
        return "reserve one with aclrtReserveMemAddress"

    def _device_index_of(self, ptr: int) -> int:
        device = self.machine.device_of(ptr)
        assert device is not None
        return device.index

    def _device_index_checked(self, index: int) -> int:
        if not 0 <= index < len(self.machine.devices):
            raise AclError(
                ACL_ERROR_RT_INVALID_DEVICEID,
                f"device {index} does not exist (this daemon has {len(self.machine.devices)})",
            )
        return index
