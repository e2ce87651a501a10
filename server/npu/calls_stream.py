"""Stream calls: create (plain and with config), destroy (waiting, or forced), synchronize (with timeout), query."""

from __future__ import annotations

import asyncio

from proto.constants import aclrtStreamStatus
from server.npu.context import Context, acl_call, require
from server.npu.stream import Stream

_STREAM_FLAGS = 0x3F  # FAST_LAUNCH | FAST_SYNC | PERSISTENT | HUGE | CPU_SCHEDULE | DEVICE_USE_ONLY


class StreamCalls(Context):
    @acl_call
    def aclrtCreateStream(self) -> int:
        return self._create_stream(0)

    @acl_call
    def aclrtCreateStreamWithConfig(self, priority: int, flag: int) -> int:
        """`priority` is reserved (accepted, unused); `flag` is recorded and otherwise has no effect."""
        require(priority >= 0, f"priority must be >= 0, got {priority}")
        require(not flag & ~_STREAM_FLAGS, f"flag {flag:#x} has bits that are not ACL_STREAM_* flags")
        return self._create_stream(flag)

    @acl_call
    async def aclrtDestroyStream(self, stream: int | None) -> None:
        """Waits for the stream's tasks (an event wait that can never be satisfied gives up), then frees it."""
        target = self._stream_to_destroy(stream, "aclrtDestroyStream")
        await asyncio.shield(self._close(target))  # a caller that goes away must not leave it half-closed

    @acl_call
    async def aclrtDestroyStreamForce(self, stream: int | None) -> None:
        """Frees the stream without running its queued tasks (the running one ends first): spec-breadth 2.2."""
        target = self._stream_to_destroy(stream, "aclrtDestroyStreamForce")
        target.discard()
        await asyncio.shield(self._close(target))

    def _stream_to_destroy(self, stream: int | None, api: str) -> Stream:
        require(bool(stream), "stream is NULL: the default stream cannot be destroyed")
        target = self.idle_stream(stream, api)
        require(
            not target.default,
            f"{target} is the default stream of {self.stream_contexts[target.handle]}: it cannot be destroyed",
        )
        del self.streams[target.handle]
        self.stream_contexts.pop(target.handle, None)
        return target

    @staticmethod
    async def _close(stream: Stream) -> None:
        await stream.close()
        stream.device.streams.give()

    @acl_call
    async def aclrtSynchronizeStream(self, stream: int | None) -> None:
        await self.idle_stream(stream, "aclrtSynchronizeStream").synchronize("aclrtSynchronizeStream")

    @acl_call
    async def aclrtSynchronizeStreamWithTimeout(self, stream: int | None, timeout: int) -> None:
        """`timeout` in ms, -1 to wait forever; ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when it runs out."""
        require(timeout == -1 or timeout > 0, f"timeout must be -1 or > 0 ms, got {timeout}")
        seconds = None if timeout == -1 else timeout / 1000
        target = self.idle_stream(stream, "aclrtSynchronizeStreamWithTimeout")
        await target.synchronize("aclrtSynchronizeStreamWithTimeout", seconds)

    @acl_call
    def aclrtStreamQuery(self, stream: int | None) -> aclrtStreamStatus:
        target = self.idle_stream(stream, "aclrtStreamQuery")
        if target.queued:
            return aclrtStreamStatus.ACL_STREAM_STATUS_NOT_READY
        return aclrtStreamStatus.ACL_STREAM_STATUS_COMPLETE

    def _create_stream(self, flags: int) -> int:
        device = self.device()
        self.check_handles()
        device.streams.take()
        stream = Stream(self.machine.new_handle(), device, self.machine, flags, owner=self)
        self.streams[stream.handle] = stream
        self.stream_contexts[stream.handle] = self.acl_context()
        return stream.handle
