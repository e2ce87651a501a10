"""aclInit / aclFinalize and the device calls: set, reset, get, count, synchronize."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable

from proto.errors import (
    ACL_ERROR_REPEAT_FINALIZE,
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.core.caller import caller_process, caller_thread
from server.npu.process import devices
from server.npu.process.context import AclContext


class DeviceCalls(Area):
    """aclInit counts and a device's aclrtSetDevice references are per process, as in CANN: a process that joined
    another's context moves its own (its extra aclFinalize is 100037, its extra reset 507007, its force reset lets
    go of its own references), and what they guard goes when every process of the context has let go."""

    @acl_call
    def aclInit(self, config_path: str | None = None) -> None:
        """Refcounted, as the current docs allow: every aclInit needs its aclFinalize. The config is not read."""
        self.ctx.inits.add(caller_process())

    @acl_call
    async def aclFinalize(self) -> None:
        """The process's last one lets go of its devices; the context's last one frees everything."""
        process = caller_process()
        if not self.ctx.inits.of(process):
            raise AclError(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize without a matching aclInit in this process")
        if self.ctx.inits.total == 1:
            await asyncio.shield(devices.release_all(self.ctx))  # a caller that goes away must not stop it half-way
        elif self.ctx.inits.of(process) == 1:
            for index, primary in list(self.ctx.primaries.items()):
                await asyncio.shield(self._let_go(primary, index, process, "aclFinalize", every=True))
        self.ctx.inits.drop(process)

    @acl_call
    def aclrtSetDevice(self, device_id: int) -> None:
        """Make the device's primary ACL context current for the calling thread; the first set creates it."""
        device = self.machine.device(device_id)
        primary = self.ctx.primaries.get(device_id)
        if primary is None:
            primary = devices.new_acl_context(self.ctx, device, primary=True)
            self.ctx.primaries[device_id] = primary
        primary.refs.add(caller_process())
        self.ctx.current[caller_thread()] = primary

    @acl_call
    async def aclrtResetDevice(self, device_id: int) -> None:
        """Drop one reference of the process; the context's last one waits for pending work and frees everything
        of the device."""
        primary = self._primary_to_reset(device_id)
        await asyncio.shield(self._let_go(primary, device_id, caller_process(), "aclrtResetDevice", every=False))

    @acl_call
    async def aclrtResetDeviceForce(self, device_id: int) -> None:
        """Drop every reference of the process, however many aclrtSetDevice calls it made (spec-breadth 1.3)."""
        primary = self._primary_to_reset(device_id)
        await asyncio.shield(self._let_go(primary, device_id, caller_process(), "aclrtResetDeviceForce", every=True))

    async def _let_go(self, primary: AclContext, device_id: int, process: Hashable, by: str, every: bool) -> None:
        """`process` drops one reference to the device (`every`: all of them); the last reference of the context
        releases the device, the last of a process takes the device from its threads."""
        if every:
            primary.refs.clear(process)
        elif primary.refs.of(process):
            primary.refs.drop(process)
        if not primary.refs.total:
            await devices.release_device(self.ctx, device_id, by)
        elif not primary.refs.of(process):
            current = self.ctx.current
            for thread in [
                t for t, c in current.items() if isinstance(t, tuple) and t[0] == process and c.device is primary.device
            ]:
                del current[thread]

    def _primary_to_reset(self, device_id: int) -> AclContext:
        self.machine.device(device_id)
        primary = self.ctx.primaries.get(device_id)
        if primary is None or not primary.refs.of(caller_process()):
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
        """Answered before aclInit too, as the runtime answers it from the driver (torch.npu.is_available asks)."""
        return len(self.machine.devices)

    @acl_call
    async def aclrtSynchronizeDevice(self) -> None:
        """Wait for every stream of this context on the current device; raise the first sticky error."""
        await self._synchronize_device(None, "aclrtSynchronizeDevice")

    @acl_call
    async def aclrtSynchronizeDeviceWithTimeout(self, timeout: int) -> None:
        """`timeout` in ms, -1 to wait forever; ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when it runs out first."""
        require(timeout == -1 or timeout > 0, f"timeout must be -1 or > 0 ms, got {timeout}")
        await self._synchronize_device(None if timeout == -1 else timeout / 1000, "aclrtSynchronizeDeviceWithTimeout")

    async def _synchronize_device(self, seconds: float | None, api: str) -> None:
        device = self.ctx.device()
        streams = devices.streams_of(self.ctx, device)
        for stream in streams:
            if stream in self.ctx.capturing:
                raise AclError(
                    ACL_ERROR_RT_STREAM_CAPTURED,
                    f"{api} is not allowed while {stream} is capturing ({self.ctx.capturing[stream]})",
                )
        reached = await asyncio.gather(*(s.reach(s.issued, seconds) for s in streams))
        late = [stream for stream, done in zip(streams, reached, strict=True) if not done]
        if late:
            raise AclError(
                ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                f"device {device.index} still has unfinished work after {seconds:g} s on {', '.join(map(str, late))}",
            )
        for stream in streams:
            stream.raise_error(api)

    @acl_call
    def aclrtSetOpWaitTimeout(self, timeout: int) -> None:
        """The timeout in seconds of every later event-wait task; 0 waits forever."""
        require(timeout >= 0, f"timeout must be >= 0 seconds, got {timeout}")
        self.ctx.op_wait_timeout = float(timeout) or None
