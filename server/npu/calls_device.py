"""aclInit / aclFinalize and the device calls: set, reset, get, count, synchronize."""

from __future__ import annotations

import asyncio

from proto.errors import (
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_STREAM_CAPTURED,
    AclError,
)
from server.npu.caller import caller_thread
from server.npu.context import Context, acl_call, require
from server.npu.device import Device
from server.npu.stream import Stream


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
        """Make `device_id` current for the calling thread; the first set creates the default stream."""
        if not 0 <= device_id < len(self.machine.devices):
            raise AclError(
                ACL_ERROR_RT_INVALID_DEVICEID,
                f"device {device_id} does not exist: this daemon has {len(self.machine.devices)} device(s)",
            )
        device = self.machine.devices[device_id]
        if device_id not in self.device_refs:
            device.streams.take()
            self.default_streams[device_id] = Stream(
                self.machine.new_handle(), device, self.machine, default=True, owner=self
            )
            self.device_refs[device_id] = 0
        self.device_refs[device_id] += 1
        self.current[caller_thread()] = device_id

    @acl_call
    async def aclrtResetDevice(self, device_id: int) -> None:
        """Drop one reference; the last one waits for pending work and frees everything of the device."""
        if self.device_refs.get(device_id, 0) == 0:
            raise AclError(ACL_ERROR_RT_CONTEXT_NULL, f"device {device_id} was not set by aclrtSetDevice")
        self.device_refs[device_id] -= 1
        if self.device_refs[device_id] == 0:
            await asyncio.shield(self._release_device(device_id))

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
        for index in list(self.device_refs):
            await self._release_device(index)
        for ptr in list(self.host_buffers):
            self.memory_used -= self.machine.host.free(ptr).size
        self.host_buffers.clear()
        self.current.clear()

    def _streams_of(self, device: Device) -> list[Stream]:
        own = [s for s in self.streams.values() if s.device is device]
        default = self.default_streams.get(device.index)
        return ([default] if default else []) + own

    async def _release_device(self, index: int) -> None:
        """Everything this context holds on device `index` goes: streams (after their work), events, memory."""
        device = self.machine.devices[index]
        for capture in self.captures():
            if capture.origin.device is device:
                self.leave_capture(capture)
                self.drop_model(capture.model)
        for stream, update in list(self.updating.items()):
            if stream.device is device:
                update.group.updater = None
                del self.updating[stream]
        models = [m for m in self.models.values() if m.device is device]
        for model in models:
            self.drop_model(model)
        for stream in self._streams_of(device):  # closing a stream releases a replay's waits on it
            await stream.close()
            device.streams.give()
            self.streams.pop(stream.handle, None)
        for model in models:  # a replay of aclmdlRIExecute (on no stream) finishes on its own
            await model.wait_idle()
        self.default_streams.pop(index, None)
        for handle, event in list(self.events.items()):
            if event.device is device:
                event.destroy()
                if event.legacy:
                    device.events.give()
                del self.events[handle]
        for ptr, owner in list(self.allocations.items()):
            if owner is device:
                self.memory_used -= device.arena.free(ptr).size
                del self.allocations[ptr]
        del self.device_refs[index]
        self.current = {t: d for t, d in self.current.items() if d != index}
