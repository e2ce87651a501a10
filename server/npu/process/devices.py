"""The life of a process's devices: the ACL contexts it makes, the streams it closes, and the release of everything it
holds on a device (the last aclrtResetDevice, aclrtResetDeviceForce) or in all (the last aclFinalize, or when its
client is gone)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from server.npu.core.event import Event
from server.npu.core.stream import Stream
from server.npu.device import Device
from server.npu.memory.quota import Quota
from server.npu.model.model import ModelRI
from server.npu.process.context import AclContext, Context
from server.npu.process.ipc import close_exports, release_ipc_memory
from server.npu.process.memory import release_host_mappings, release_virtual, unregister_buffer
from server.npu.process.memory_tables import device_cost, host_cost
from server.npu.process.tdt import release_tdt


def new_acl_context(ctx: Context, device: Device, primary: bool) -> AclContext:
    """An ACL context on `device`, with its default stream."""
    if not primary:
        ctx.check_handles()
    device.streams.take(ctx.quota)
    stream = Stream(ctx.machine.new_handle(), device, ctx.machine, default=True, owner=ctx)
    made = AclContext(ctx.machine.new_handle(), device, stream, primary)
    ctx.acl_contexts[made.handle] = made
    ctx.default_streams[stream.handle] = stream
    ctx.stream_contexts[stream.handle] = made
    return made


async def release_all(ctx: Context) -> None:
    """Free everything the context holds (at the last aclFinalize, or when its client is gone)."""
    held = {c.device.index for c in ctx.acl_contexts.values()} | {d.index for d in ctx.memory.allocations.values()}
    releasing = {index for index, lock in ctx.releases.items() if lock.locked()}
    for index in sorted(held | releasing):  # a release in progress (a reset) is waited for
        await release_device(ctx, index, "aclFinalize")
    release_ipc_memory(ctx)
    for ptr in list(ctx.memory.host_buffers):
        buffer = ctx.machine.host.find(ptr)
        assert buffer is not None
        unregister_buffer(ctx, buffer)
        ctx.memory.used -= host_cost(ctx.machine.host.free(ptr).size)
    ctx.memory.host_buffers.clear()
    for handle in list(ctx.notifies):
        ctx.drop_notify(handle)
    for opened in ctx.marker_ranges.values():
        opened.refund()
    ctx.marker_ranges.clear()
    release_tdt(ctx)
    ctx.current.clear()


def streams_of(ctx: Context, device: Device) -> list[Stream]:
    """The default streams of the device's ACL contexts, then the streams created on it."""
    defaults = [s for s in ctx.default_streams.values() if s.device is device]
    return defaults + [s for s in ctx.streams.values() if s.device is device]


async def close_streams(ctx: Context, streams: list[Stream]) -> None:
    """Tear `streams` down: out of the tables at once (see `forget_streams`), then closed after their work."""
    forget_streams(ctx, streams)
    await shut(streams, ctx.quota)


def forget_streams(ctx: Context, streams: list[Stream]) -> None:
    """Take `streams` out of the context's tables (their handles are dead from now on): a capture or an update
    on one of them ends, a model captured from one of them goes (its replay in progress finishes first), and
    a Build model's lanes let go of them (which releases a replay's waits on them)."""
    doomed = set(streams)
    for capture in ctx.captures():
        if doomed.intersection(capture.streams):
            ctx.leave_capture(capture)
            ctx.drop_model(capture.model)
    for stream in streams:
        ctx.end_update(stream)
        ctx.unbind(stream)
        ctx.streams.pop(stream.handle, None)
        ctx.default_streams.pop(stream.handle, None)
        ctx.stream_contexts.pop(stream.handle, None)
        ctx.handles.bury(stream.handle, "stream")


async def release_device(ctx: Context, index: int, by: str) -> None:
    """Everything this context holds on device `index` goes: its ACL contexts (the primary one and any
    created there) and their streams (after their work), models, events, memory. What it holds is taken out
    of the tables at once, so a call made while the work drains (another thread's aclrtSetDevice, aclrtMalloc,
    aclrtCreateStream) starts afresh and keeps what it makes; releases of one device run one at a time, so a
    second one (the context reclaimed under a reset) waits for the first, then frees what is left, once."""
    held = detach(ctx, index, by)
    async with ctx.releases.setdefault(index, asyncio.Lock()):
        await free(ctx, held)


def detach(ctx: Context, index: int, by: str) -> Held:
    """What the context holds on device `index`, out of its tables; its memory is remembered as freed `by`."""
    device = ctx.machine.devices[index]
    models = [m for m in ctx.models.values() if m.device is device]
    for model in models:
        ctx.drop_model(model)
    streams = streams_of(ctx, device)
    forget_streams(ctx, streams)
    allocations = [ptr for ptr, owner in ctx.memory.allocations.items() if owner is device]
    for ptr in allocations:
        del ctx.memory.allocations[ptr]
        block = device.arena.find(ptr)
        ctx.memory.forget(ptr, block.size if block is not None else 0, by)
    ctx.primaries.pop(index, None)
    ctx.res_limits = {k: v for k, v in ctx.res_limits.items() if k[0] != index}
    for handle in [h for h, c in ctx.acl_contexts.items() if c.device is device]:
        del ctx.acl_contexts[handle]
    ctx.current = {t: c for t, c in ctx.current.items() if c.device is not device}
    events = {h: e for h, e in ctx.events.items() if e.device is device}
    existed = frozenset(
        [*ctx.memory.reservations, *ctx.memory.physicals, *ctx.memory.registrations, *ctx.memory.windows]
    )
    return Held(device, streams, models, events, allocations, existed, by)


async def free(ctx: Context, held: Held) -> None:
    """Free what `_detach` took, after its work; what went meanwhile by other calls is not freed twice."""
    await shut(held.streams, ctx.quota)
    for model in held.models:  # a replay of aclmdlRIExecute (on no stream) finishes on its own
        await model.wait_idle()
    for handle, event in held.events.items():
        if ctx.events.get(handle) is event:
            ctx.drop_event(handle)
    for ptr in held.allocations:
        close_exports(ctx, ptr)
        ctx.memory.used -= device_cost(held.device.arena.free(ptr, held.by).size)
    release_virtual(ctx, held.device.index, held.existed)
    release_host_mappings(ctx, held.device.index, held.existed)


@dataclass(eq=False)
class Held:
    """What a context held on one device when a release of it began: the release frees exactly this."""

    device: Device
    streams: list[Stream]
    models: list[ModelRI]
    events: dict[int, Event]
    allocations: list[int]
    existed: frozenset[int]  # the keys of its VMM and host-registration tables (addresses and handles) then
    by: str  # the call that releases it (aclrtResetDevice, aclFinalize, ...)


async def shut(streams: list[Stream], quota: Quota | None) -> None:
    """Close `streams` after their work and give their device slots (and their tenant's) back."""
    for stream in streams:
        await stream.close()
        stream.device.streams.give(quota)
