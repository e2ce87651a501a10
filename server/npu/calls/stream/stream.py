"""Stream calls: create (plain and with config), destroy (waiting, or forced), synchronize (with timeout), query,
the stream's id, flags and priority, failure mode, abort and stop (spec-breadth 2.2-2.4)."""

from __future__ import annotations

import asyncio

from proto.constants import ACL_STREAM_PERSISTENT, aclrtStreamStatus
from proto.errors import (
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_MODEL,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.core.caller import caller_thread
from server.npu.core.stream import Stream
from server.npu.process import streams

_STREAM_FLAGS = 0x3F  # FAST_LAUNCH | FAST_SYNC | PERSISTENT | HUGE | CPU_SCHEDULE | DEVICE_USE_ONLY


class StreamCalls(Area):
    @acl_call
    def aclrtCreateStream(self) -> int:
        return self._create_stream(0)

    @acl_call
    def aclrtCreateStreamWithConfig(self, priority: int, flag: int) -> int:
        """`priority` and `flag` are recorded (aclrtStreamGetPriority/GetFlags) and otherwise have no effect."""
        require(priority >= 0, f"priority must be >= 0, got {priority}")
        require(not flag & ~_STREAM_FLAGS, f"flag {flag:#x} has bits that are not ACL_STREAM_* flags")
        return self._create_stream(flag, priority)

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
        target = self.ctx.idle_stream(stream, api)
        require(
            not target.default,
            f"{target} is the default stream of {self.ctx.stream_contexts[target.handle]}: it cannot be destroyed",
        )
        if target in self.ctx.bound:
            raise AclError(
                ACL_ERROR_RT_STREAM_MODEL,
                f"{target} is bound to {self.ctx.bound[target].model}: unbind it (aclmdlRIUnbindStream) or destroy the "
                "model first",
            )
        self.ctx.end_update(target)  # a destroyed update stream leaves its group free for the next update
        del self.ctx.streams[target.handle]
        self.ctx.stream_contexts.pop(target.handle, None)
        self.ctx.handles.bury(target.handle, "stream")
        return target

    async def _close(self, stream: Stream) -> None:
        await stream.close()
        stream.device.streams.give(self.ctx.quota)

    @acl_call
    async def aclrtSynchronizeStream(self, stream: int | None) -> None:
        """An ACL_STREAM_PERSISTENT stream returns at once, as in the runtime (its work runs in a model)."""
        target = self.ctx.idle_stream(stream, "aclrtSynchronizeStream")
        if not target.flags & ACL_STREAM_PERSISTENT:
            await target.synchronize("aclrtSynchronizeStream")

    @acl_call
    async def aclrtSynchronizeStreamWithTimeout(self, stream: int | None, timeout: int) -> None:
        """`timeout` in ms, -1 to wait forever; ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when it runs out."""
        require(timeout == -1 or timeout > 0, f"timeout must be -1 or > 0 ms, got {timeout}")
        seconds = None if timeout == -1 else timeout / 1000
        target = self.ctx.idle_stream(stream, "aclrtSynchronizeStreamWithTimeout")
        if not target.flags & ACL_STREAM_PERSISTENT:
            await target.synchronize("aclrtSynchronizeStreamWithTimeout", seconds)

    @acl_call
    def aclrtStreamQuery(self, stream: int | None) -> aclrtStreamStatus:
        target = self.ctx.idle_stream(stream, "aclrtStreamQuery")
        if target.queued and not target.flags & ACL_STREAM_PERSISTENT:
            return aclrtStreamStatus.ACL_STREAM_STATUS_NOT_READY
        return aclrtStreamStatus.ACL_STREAM_STATUS_COMPLETE

    @acl_call
    def aclrtStreamGetId(self, stream: int | None) -> int:
        return self.ctx.stream(stream).ident

    @acl_call
    def aclrtStreamGetFlags(self, stream: int | None) -> int:
        return self.ctx.stream(stream).flags

    @acl_call
    def aclrtStreamGetPriority(self, stream: int | None) -> int:
        return self.ctx.stream(stream).priority

    @acl_call
    def vnpuStreams(self) -> list[int]:
        """Every stream of this context, default ones included (for the client's stream state callbacks)."""
        return sorted({*self.ctx.default_streams, *self.ctx.streams})

    @acl_call
    def aclrtGetThreadLastTaskId(self) -> int:
        """The id of the last task the calling thread queued on a stream (its number there); 0 before any."""
        return self.ctx.last_task_ids.get(caller_thread(), 0)

    @acl_call
    def aclrtSetStreamFailureMode(self, stream: int | None, mode: int) -> None:
        """Only bit 0 counts. STOP is set once and for good; then every stream of the stream's ACL context stops
        on failure, while each keeps the mode set on it (which ACL_STREAM_ATTR_FAILURE_MODE answers)."""
        streams.set_failure_mode(self.ctx, stream, mode)

    @acl_call
    def aclrtStreamAbort(self, stream: int | None) -> None:
        """Drops the queued tasks; the running one gives up if it waits; a synchronize waiting on it says so. A
        stream bound to a Build model is 507000, after the context check (the runtime's Context::StreamAbort)."""
        target = self.ctx.own_stream(stream)
        streams.refuse_bound(self.ctx, target, ACL_ERROR_RT_INTERNAL_ERROR, "aclrtStreamAbort")
        target.abort()

    @acl_call
    def aclrtStreamStop(self, stream: int | None) -> None:
        """The running task gives up if it waits; the queued tasks stay and run."""
        require(bool(stream), "stream is NULL: aclrtStreamStop takes no default stream", ACL_ERROR_RT_PARAM_INVALID)
        self.ctx.own_stream(stream).interrupt()

    def _create_stream(self, flags: int, priority: int = 0) -> int:
        device = self.ctx.device()
        self.ctx.check_handles()
        device.streams.take(self.ctx.quota)
        stream = Stream(self.machine.new_handle(), device, self.machine, flags, owner=self.ctx, priority=priority)
        self.ctx.streams[stream.handle] = stream
        self.ctx.stream_contexts[stream.handle] = self.ctx.acl_context()
        return stream.handle
