"""ACL context calls (aclrtContext, spec-breadth 1.2): create, destroy, set and get the thread's current one, and
its default stream. An ACL context lives inside the daemon context of its process (`context.AclContext`)."""

from __future__ import annotations

import asyncio

from proto.errors import ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_PARAM_INVALID, AclError
from server.npu.area import Area, acl_call, require
from server.npu.core.caller import caller_thread
from server.npu.process import devices
from server.npu.process.context import AclContext


class ContextCalls(Area):
    @acl_call
    def aclrtCreateContext(self, device_id: int) -> int:
        """A new ACL context on the device, with its own default stream; it becomes the thread's current one."""
        made = devices.new_acl_context(self.ctx, self.machine.device(device_id), primary=False)
        self.ctx.current[caller_thread()] = made
        return made.handle

    @acl_call
    async def aclrtDestroyContext(self, context: int | None) -> None:
        """Its streams go after their work; a thread whose current context it was falls back to the primary
        context of that device, when there is one."""
        target = self._acl_context(context, ACL_ERROR_RT_CONTEXT_NULL)
        if target.primary:
            raise AclError(
                ACL_ERROR_RT_CONTEXT_NULL,
                f"{target} is the one aclrtSetDevice made: it cannot be destroyed (aclrtResetDevice releases it)",
            )
        del self.ctx.acl_contexts[target.handle]
        streams = [target.default_stream]
        streams += [
            self.ctx.streams[h] for h, c in self.ctx.stream_contexts.items() if c is target and h in self.ctx.streams
        ]
        await asyncio.shield(devices.close_streams(self.ctx, streams))
        fallback = self.ctx.primaries.get(target.device.index)
        for thread, current in list(self.ctx.current.items()):
            if current is target:
                if fallback is None:
                    del self.ctx.current[thread]
                else:
                    self.ctx.current[thread] = fallback

    @acl_call
    def aclrtSetCurrentContext(self, context: int | None) -> None:
        """Make `context` the thread's current ACL context (and so its device)."""
        self.ctx.current[caller_thread()] = self._acl_context(context, ACL_ERROR_RT_PARAM_INVALID)

    @acl_call
    def aclrtGetCurrentContext(self) -> int:
        return self.ctx.acl_context().handle

    @acl_call
    def aclrtCtxGetCurrentDefaultStream(self) -> int:
        """The real handle of the current ACL context's default stream, usable wherever a stream is taken."""
        return self.ctx.acl_context().default_stream.handle

    def _acl_context(self, handle: int | None, unknown: int) -> AclContext:
        require(bool(handle), "context is NULL")
        assert handle is not None
        found = self.ctx.acl_contexts.get(handle)
        if found is None:
            raise AclError(unknown, self.ctx.handles.not_a("ACL context", handle))
        return found
