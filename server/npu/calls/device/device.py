"""aclInit / aclFinalize and the device calls: set, reset, get, count, synchronize."""

from __future__ import annotations

import asyncio

from proto.errors import (
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_STREAM_CAPTURED,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.core.caller import caller_thread
from server.npu.process import devices
from server.npu.process.context import AclContext


class DeviceCalls(Area):
    @acl_call
    def aclInit(self, config_path: str | None = None) -> None:
        """Refcounted, as the current docs allow: every aclInit needs its aclFinalize. The config is not read."""
        self.ctx.init_count += 1

    @acl_call
    async def aclFinalize(self) -> None:
        if self.ctx.init_count == 1:
            await asyncio.shield(devices.release_all(self.ctx))  # a caller that goes away must not stop it half-way
        self.ctx.init_count -= 1

    @acl_call
    def aclrtSetDevice(self, device_id: int) -> None:
        """Make the device's primary ACL context current for the calling thread; the first set creates it."""
        device = self.machine.device(device_id)
        primary = self.ctx.primaries.get(device_id)
        if primary is None:
            primary = devices.new_acl_context(self.ctx, device, primary=True)
            self.ctx.primaries[device_id] = primary
        primary.refs += 1
        self.ctx.current[caller_thread()] = primary

    @acl_call
    async def aclrtResetDevice(self, device_id: int) -> None:
        """Drop one reference; the last one waits for pending work and frees everything of the device."""
        primary = self._primary_to_reset(device_id)
        primary.refs -= 1
        if primary.refs == 0:
            await asyncio.shield(devices.release_device(self.ctx, device_id, "aclrtResetDevice"))

    @acl_call
    async def aclrtResetDeviceForce(self, device_id: int) -> None:
        """Release the device's primary context however many aclrtSetDevice calls it had (spec-breadth 1.3)."""
        primary = self._primary_to_reset(device_id)
        primary.refs = 0
        await asyncio.shield(devices.release_device(self.ctx, device_id, "aclrtResetDeviceForce"))

    def _primary_to_reset(self, device_id: int) -> AclContext:
        self.machine.device(device_id)
        primary = self.ctx.primaries.get(device_id)
        if primary is None:
            raise AclError(
                ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
                f"device {device_id} has not been set by aclrtSetDevice in this process, or has already been reset",
            )
        return primary

    @acl_call
    def aclrtGetDevice(self) -> int:
        return self.ctx.device().index

    @acl_call
    def aclrtGetDeviceCount(self) -> int:
        return len(self.machine.devices)

    @acl_call
    async def aclrtSynchronizeDevice(self) -> None:
        """Wait for every stream of this context on the current device; raise the first sticky error."""
        device = self.ctx.device()
        streams = devices.streams_of(self.ctx, device)
        for stream in streams:
            if stream in self.ctx.capturing:
                raise AclError(
                    ACL_ERROR_RT_STREAM_CAPTURED,
                    f"aclrtSynchronizeDevice is not allowed while {stream} is capturing ({self.ctx.capturing[stream]})",
                )
        await asyncio.gather(*(s.reach(s.issued) for s in streams))
        for stream in streams:
            stream.raise_error("aclrtSynchronizeDevice")

    @acl_call
    def aclrtSetOpWaitTimeout(self, timeout: int) -> None:
        """The timeout in seconds of every later event-wait task; 0 waits forever."""
        require(timeout >= 0, f"timeout must be >= 0 seconds, got {timeout}")
        self.ctx.op_wait_timeout = float(timeout) or None
