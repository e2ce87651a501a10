"""A process's memory, beyond one call: device allocations charged to it, host registrations and managed memory, its
virtual reservations and physical handles -- made, freed, and released when a device or the process goes."""

from __future__ import annotations

from collections.abc import Container

from proto.errors import (
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu.memory.allocator import OutOfSpace
from server.npu.memory.arena import Allocation
from server.npu.memory.hostmem import HostBuffer
from server.npu.memory.vmem import PhysicalMemory, Window
from server.npu.process.context import Context
from server.npu.process.ipc import close_exports
from server.npu.process.memory_tables import device_cost, host_cost


def malloc_device(context: Context, size: int, policy: int, padding: bool = True) -> int:
    """`size` bytes of the thread's device, charged to `context` (aclrtMalloc, and the runtime's own device
    memory that a call hands to the program, such as a label list); `padding`: the runtime's 32 extra bytes."""
    device = context.device()
    context.memory.charge(device_cost(size))
    try:
        block = device.arena.malloc(size, policy, padding)
    except OutOfSpace as full:
        context.memory.used -= device_cost(size)
        raise AclError(ACL_ERROR_RT_MEMORY_ALLOCATION, f"device {device.index} is out of memory: {full}") from None
    context.memory.allocations[block.ptr] = device
    return block.ptr


def free_device(context: Context, dev_ptr: int, by: str) -> None:
    """Free the allocation of `context` that starts at `dev_ptr` (107000 for any other pointer), as the call `by`."""
    device = context.memory.allocations.get(dev_ptr)
    if device is None:
        owner = context.machine.owner(dev_ptr)
        if isinstance(owner, Allocation) and owner.ptr in context.memory.allocations:
            why = f"it is not the start of an allocation: it is {owner.describe(dev_ptr)}"
        elif dev_ptr in context.memory.freed:
            why = "it was already freed (double free)"
        else:
            why = context.memory.explain(dev_ptr)
        raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"cannot free {dev_ptr:#x}: {why}")
    close_exports(context, dev_ptr)
    size = device.arena.free(dev_ptr, by).size
    context.memory.used -= device_cost(size)
    del context.memory.allocations[dev_ptr]
    context.memory.forget(dev_ptr, size, by)


def unregister(ctx: Context, ptr: int) -> None:
    registration = ctx.memory.registrations.pop(ptr)
    if registration.window is not None:
        close_window(ctx, registration.window)


def unregister_buffer(ctx: Context, buffer: HostBuffer) -> None:
    """The pinned buffer is being freed: the registrations inside it go with it."""
    for ptr in [p for p in ctx.memory.registrations if buffer.ptr <= p < buffer.end]:
        unregister(ctx, ptr)


def free_managed(ctx: Context, window: Window) -> None:
    assert window.host is not None
    close_window(ctx, window)
    ctx.memory.used -= host_cost(ctx.machine.host.free(window.host.ptr).size)


def close_window(ctx: Context, window: Window) -> None:
    ctx.memory.windows.pop(window.va, None)
    device = ctx.machine.device_of(window.va)
    assert device is not None
    device.virtual.close_window(window)


def release_host_mappings(ctx: Context, index: int, existed: Container[int]) -> None:
    """Teardown of device `index`: registrations with a window there, and managed memory there, go (only those
    in `existed`: what the teardown began with)."""
    for ptr, registration in list(ctx.memory.registrations.items()):
        if registration.device_index == index and ptr in existed:
            unregister(ctx, ptr)
    virtual = ctx.machine.devices[index].virtual
    for window in [w for w in ctx.memory.windows.values() if w.managed and w.va in virtual and w.va in existed]:
        free_managed(ctx, window)


def release_virtual(ctx: Context, index: int, existed: Container[int]) -> None:
    """A context's teardown of device `index`: its reservations there (unmapped first) and its handles to physical
    memory of that device go, as at aclrtResetDevice; only those in `existed` (what the teardown began with)."""
    virtual = ctx.machine.devices[index].virtual
    for va, reservation in list(ctx.memory.reservations.items()):
        if va in virtual and va in existed:
            for mapping in list(reservation.mappings.values()):
                virtual.unmap(mapping)
            del ctx.memory.reservations[va]
            virtual.release(reservation)
    for physical in [p for p in ctx.memory.physicals.values() if p.device_index == index and p.handle in existed]:
        drop_physical(ctx, physical)


def drop_physical(ctx: Context, physical: PhysicalMemory) -> None:
    """`ctx` lets go of its handle to `physical` (aclrtFreePhysical, or teardown)."""
    del ctx.memory.physicals[physical.handle]
    if physical.handle in ctx.memory.owned_physicals:  # its charge goes with the memory (`PhysicalMemory.drop`)
        ctx.memory.owned_physicals.discard(physical.handle)
        if physical.shareable is not None:
            ctx.machine.ipc.shareable.pop(physical.shareable, None)
    physical.drop()
