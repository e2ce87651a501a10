"""aclInit / aclFinalize and the device calls: set, reset, get, count, synchronize."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from proto.errors import (
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_STREAM_CAPTURED,
    AclError,
)
from server.npu.calls.memory.hostreg import release_host_mappings, unregister_buffer
from server.npu.calls.memory.ipcmem import close_exports, release_ipc_memory
from server.npu.calls.memory.vmm import release_virtual
from server.npu.calls.tdt import release_tdt
from server.npu.context import AclContext, Context, acl_call, require
from server.npu.core.caller import caller_thread
from server.npu.core.event import Event
from server.npu.core.stream import Stream
from server.npu.device import Device
from server.npu.memory.quota import Quota
from server.npu.model.model import ModelRI


class DeviceCalls(Context):
    @acl_call
    def aclInit(self, config_path: str | None = None) -> None:
        """Refcounted, as the current docs allow: every aclInit needs its aclFinalize. The config is not read."""
        self.init_count += 1

    @acl_call
    async def aclFinalize(self) -> None:
        if self.init_count == 1:
            await asyncio.shield(self.release_all())  # a caller that goes away must not stop it half-way
        self.init_count -= 1

    @acl_call
    def aclrtSetDevice(self, device_id: int) -> None:
        """Make the device's primary ACL context current for the calling thread; the first set creates it."""
        device = self.device_of(device_id)
        primary = self.primaries.get(device_id)
        if primary is None:
            primary = self.new_acl_context(device, primary=True)
            self.primaries[device_id] = primary
        primary.refs += 1
        self.current[caller_thread()] = primary

    @acl_call
    async def aclrtResetDevice(self, device_id: int) -> None:
        """Drop one reference; the last one waits for pending work and frees everything of the device."""
        primary = self._primary_to_reset(device_id)
        primary.refs -= 1
        if primary.refs == 0:
            await asyncio.shield(self._release_device(device_id, "aclrtResetDevice"))

    @acl_call
    async def aclrtResetDeviceForce(self, device_id: int) -> None:
        """Release the device's primary context however many aclrtSetDevice calls it had (spec-breadth 1.3)."""
        primary = self._primary_to_reset(device_id)
        primary.refs = 0
        await asyncio.shield(self._release_device(device_id, "aclrtResetDeviceForce"))

    def device_of(self, device_id: int) -> Device:
        if not 0 <= device_id < len(self.machine.devices):
            raise AclError(
                ACL_ERROR_RT_INVALID_DEVICEID,
                f"device {device_id} does not exist: this daemon has {len(self.machine.devices)} device(s)",
            )
        return self.machine.devices[device_id]

    def _primary_to_reset(self, device_id: int) -> AclContext:
        self.device_of(device_id)
        primary = self.primaries.get(device_id)
        if primary is None:
            raise AclError(
                ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
                f"device {device_id} has not been set by aclrtSetDevice in this process, or has already been reset",
            )
        return primary

    def new_acl_context(self, device: Device, primary: bool) -> AclContext:
        """An ACL context on `device`, with its default stream."""
        if not primary:
            self.check_handles()
        device.streams.take(self.quota)
        stream = Stream(self.machine.new_handle(), device, self.machine, default=True, owner=self)
        made = AclContext(self.machine.new_handle(), device, stream, primary)
        self.acl_contexts[made.handle] = made
        self.default_streams[stream.handle] = stream
        self.stream_contexts[stream.handle] = made
        return made

    @acl_call
    def aclrtGetDevice(self) -> int:
        return self.device().index

    @acl_call
    def aclrtGetDeviceCount(self) -> int:
        return len(self.machine.devices)

    @acl_call
    async def aclrtSynchronizeDevice(self) -> None:
        """Wait for every stream of this context on the current device; raise the first sticky error."""
        device = self.device()
        streams = self._streams_of(device)
        for stream in streams:
            if stream in self.capturing:
                raise AclError(
                    ACL_ERROR_RT_STREAM_CAPTURED,
                    f"aclrtSynchronizeDevice is not allowed while {stream} is capturing ({self.capturing[stream]})",
                )
        await asyncio.gather(*(s.reach(s.issued) for s in streams))
        for stream in streams:
            stream.raise_error("aclrtSynchronizeDevice")

    @acl_call
    def aclrtSetOpWaitTimeout(self, timeout: int) -> None:
        """The timeout in seconds of every later event-wait task; 0 waits forever."""
        require(timeout >= 0, f"timeout must be >= 0 seconds, got {timeout}")
        self.op_wait_timeout = float(timeout) or None

    async def release_all(self) -> None:
        """Free everything the context holds (at the last aclFinalize, or when its client is gone)."""
        held = {c.device.index for c in self.acl_contexts.values()} | {d.index for d in self.allocations.values()}
        releasing = {index for index, lock in self.releases.items() if lock.locked()}
        for index in sorted(held | releasing):  # a release in progress (a reset) is waited for
            await self._release_device(index, "aclFinalize")
        release_ipc_memory(self)
        for ptr in list(self.host_buffers):
            buffer = self.machine.host.find(ptr)
            assert buffer is not None
            unregister_buffer(self, buffer)
            self.memory_used -= self.machine.host.free(ptr).size
        self.host_buffers.clear()
        for handle in list(self.notifies):
            self.drop_notify(handle)
        release_tdt(self)
        self.current.clear()

    def _streams_of(self, device: Device) -> list[Stream]:
        """The default streams of the device's ACL contexts, then the streams created on it."""
        defaults = [s for s in self.default_streams.values() if s.device is device]
        return defaults + [s for s in self.streams.values() if s.device is device]

    async def close_streams(self, streams: list[Stream]) -> None:
        """Tear `streams` down: out of the tables at once (see `forget_streams`), then closed after their work."""
        self.forget_streams(streams)
        await shut(streams, self.quota)

    def forget_streams(self, streams: list[Stream]) -> None:
        """Take `streams` out of the context's tables (their handles are dead from now on): a capture or an update
        on one of them ends, a model captured from one of them goes (its replay in progress finishes first), and
        a Build model's lanes let go of them (which releases a replay's waits on them)."""
        doomed = set(streams)
        for capture in self.captures():
            if doomed.intersection(capture.streams):
                self.leave_capture(capture)
                self.drop_model(capture.model)
        for stream in streams:
            self.end_update(stream)
            self.unbind(stream)
            self.streams.pop(stream.handle, None)
            self.default_streams.pop(stream.handle, None)
            self.stream_contexts.pop(stream.handle, None)
            self.bury(stream.handle, "stream")

    async def _release_device(self, index: int, by: str) -> None:
        """Everything this context holds on device `index` goes: its ACL contexts (the primary one and any
        created there) and their streams (after their work), models, events, memory. What it holds is taken out
        of the tables at once, so a call made while the work drains (another thread's aclrtSetDevice, aclrtMalloc,
        aclrtCreateStream) starts afresh and keeps what it makes; releases of one device run one at a time, so a
        second one (the context reclaimed under a reset) waits for the first, then frees what is left, once."""
        held = self._detach(index, by)
        async with self.releases.setdefault(index, asyncio.Lock()):
            await self._free(held)

    def _detach(self, index: int, by: str) -> Held:
        """What the context holds on device `index`, out of its tables; its memory is remembered as freed `by`."""
        device = self.machine.devices[index]
        models = [m for m in self.models.values() if m.device is device]
        for model in models:
            self.drop_model(model)
        streams = self._streams_of(device)
        self.forget_streams(streams)
        allocations = [ptr for ptr, owner in self.allocations.items() if owner is device]
        for ptr in allocations:
            del self.allocations[ptr]
            block = device.arena.find(ptr)
            self.forget(ptr, block.size if block is not None else 0, by)
        self.primaries.pop(index, None)
        self.res_limits = {k: v for k, v in self.res_limits.items() if k[0] != index}
        self.acl_contexts = {h: c for h, c in self.acl_contexts.items() if c.device is not device}
        self.current = {t: c for t, c in self.current.items() if c.device is not device}
        events = {h: e for h, e in self.events.items() if e.device is device}
        existed = frozenset([*self.reservations, *self.physicals, *self.registrations, *self.windows])
        return Held(device, streams, models, events, allocations, existed)

    async def _free(self, held: Held) -> None:
        """Free what `_detach` took, after its work; what went meanwhile by other calls is not freed twice."""
        await shut(held.streams, self.quota)
        for model in held.models:  # a replay of aclmdlRIExecute (on no stream) finishes on its own
            await model.wait_idle()
        for handle, event in held.events.items():
            if self.events.get(handle) is event:
                self.drop_event(handle)
        for ptr in held.allocations:
            close_exports(self, ptr)
            self.memory_used -= held.device.arena.free(ptr).size
        release_virtual(self, held.device.index, held.existed)
        release_host_mappings(self, held.device.index, held.existed)


@dataclass(eq=False)
class Held:
    """What a context held on one device when a release of it began: the release frees exactly this."""

    device: Device
    streams: list[Stream]
    models: list[ModelRI]
    events: dict[int, Event]
    allocations: list[int]
    existed: frozenset[int]  # the keys of its VMM and host-registration tables (addresses and handles) then


async def shut(streams: list[Stream], quota: Quota | None) -> None:
    """Close `streams` after their work and give their device slots (and their tenant's) back."""
    for stream in streams:
        await stream.close()
        stream.device.streams.give(quota)
