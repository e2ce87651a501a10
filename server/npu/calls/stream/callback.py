"""Callback and host-function calls (spec-breadth 4; the runtime's CbSubscribe and ApiImpl::CallbackLaunch).

The vnpu* calls are the client's half of the protocol (see `callbacks`): take the due callbacks of the calling
thread, or of the process's host-function thread, and say that a blocking one returned.
"""

from __future__ import annotations

from proto.constants import aclrtCallbackBlockType
from proto.enumtext import not_member
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_NO_CB_REG,
    ACL_ERROR_RT_STREAM_SUBSCRIBE,
    ACL_ERROR_RT_THREAD_SUBSCRIBE,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.core.callbacks import HOST_FUNC_THREAD, CallbackTask, Mailbox
from server.npu.core.caller import caller_thread, thread_of_caller_process
from server.npu.core.stream import Stream

MAX_REPORT_THREADS = 128  # RT_THREAD_GROUP_ID_MAX: threads of a process subscribed at once


class CallbackCalls(Area):
    @acl_call
    def aclrtSubscribeReport(self, thread_id: int, stream: int | None) -> None:
        target = self._any_stream(stream)
        self._not_runtime_subscribed(target, "aclrtSubscribeReport")
        bound = self.ctx.callbacks.subscribed.get(target)
        if bound is not None:
            raise AclError(ACL_ERROR_RT_STREAM_SUBSCRIBE, f"{target} is already subscribed to {bound}")
        thread = thread_of_caller_process(thread_id)
        box = self.ctx.callbacks.mailboxes.get(thread)
        if box is not None and self.ctx.callbacks.streams_of(box):
            if box.device is not target.device:
                raise AclError(
                    ACL_ERROR_RT_THREAD_SUBSCRIBE,
                    f"{box} serves streams of device {box.device.index if box.device else '?'}; a thread is "
                    f"subscribed to the streams of one device, and {target} is on device {target.device.index}",
                )
        else:
            if len(self.ctx.callbacks.report_threads()) >= MAX_REPORT_THREADS:
                raise AclError(
                    ACL_ERROR_RT_INTERNAL_ERROR,
                    f"{MAX_REPORT_THREADS} threads of this process are subscribed already, the most the runtime has",
                )
            box = self.ctx.callbacks.mailbox(thread, runtime=False)
            box.device = target.device
        self.ctx.callbacks.subscribed[target] = box

    @acl_call
    def aclrtUnSubscribeReport(self, thread_id: int, stream: int | None) -> None:
        target = self._any_stream(stream)
        self._not_runtime_subscribed(target, "aclrtUnSubscribeReport")
        bound = self.ctx.callbacks.subscribed.get(target)
        if bound is None:
            raise AclError(ACL_ERROR_RT_STREAM_SUBSCRIBE, f"{target} is not subscribed to a thread")
        if bound.thread != thread_of_caller_process(thread_id):
            raise AclError(ACL_ERROR_RT_THREAD_SUBSCRIBE, f"{target} is subscribed to {bound}, not thread {thread_id}")
        del self.ctx.callbacks.subscribed[target]

    @acl_call
    def aclrtLaunchCallback(self, fn: int | None, user_data: int | None, block_type: int, stream: int | None) -> None:
        if block_type not in aclrtCallbackBlockType._value2member_map_:
            raise AclError(ACL_ERROR_INVALID_PARAM, not_member("blockType", block_type, aclrtCallbackBlockType))
        require(bool(fn), "fn is NULL", ACL_ERROR_RT_PARAM_INVALID)
        target = self.ctx.own_stream(stream)
        self._not_runtime_subscribed(target, "aclrtLaunchCallback")
        box = self.ctx.callbacks.subscribed.get(target)
        if box is None:
            raise AclError(
                ACL_ERROR_RT_STREAM_NO_CB_REG,
                f"{target} is not subscribed to a thread: call aclrtSubscribeReport(threadId, stream) first, with the "
                "thread that calls aclrtProcessReport",
            )
        blocking = block_type == aclrtCallbackBlockType.ACL_CALLBACK_BLOCK
        self._issue_callback("aclrtLaunchCallback", target, box, fn or 0, user_data or 0, blocking)

    @acl_call
    def aclrtLaunchHostFunc(self, stream: int | None, fn: int | None, args: int | None) -> None:
        require(bool(fn), "fn is NULL", ACL_ERROR_RT_PARAM_INVALID)
        target = self.ctx.own_stream(stream)
        bound = self.ctx.callbacks.subscribed.get(target)
        if bound is not None and not bound.runtime:
            raise AclError(
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                f"{target} is subscribed to {bound} (aclrtSubscribeReport), so it cannot run host functions: use "
                "aclrtLaunchCallback on it, or launch the host function on another stream",
            )
        box = self.ctx.callbacks.mailbox(thread_of_caller_process(HOST_FUNC_THREAD), runtime=True)
        self.ctx.callbacks.subscribed[target] = box
        self._issue_callback("aclrtLaunchHostFunc", target, box, fn or 0, args or 0, True)

    @acl_call
    async def vnpuTakeReports(self, timeout: int) -> list[dict[str, int | bool]]:
        """aclrtProcessReport's device half: the callbacks due for the calling thread."""
        self._check_report_timeout(timeout)
        box = self.ctx.callbacks.mailboxes.get(caller_thread())
        if box is None or box.runtime or not (box.due or self.ctx.callbacks.streams_of(box)):
            raise AclError(
                ACL_ERROR_RT_THREAD_SUBSCRIBE,
                f"thread {caller_thread()[1]} is subscribed to no stream: call aclrtSubscribeReport with its id first",
            )
        return [due.wire() for due in await box.take(timeout)]

    @acl_call
    async def vnpuTakeHostFuncs(self, timeout: int) -> list[dict[str, int | bool]]:
        """The host functions due for the calling process (its host-function thread asks)."""
        self._check_report_timeout(timeout)
        box = self.ctx.callbacks.mailbox(thread_of_caller_process(HOST_FUNC_THREAD), runtime=True)
        if not (box.due or self.ctx.callbacks.streams_of(box)):
            raise AclError(
                ACL_ERROR_RT_THREAD_SUBSCRIBE,
                "no stream of this process runs host functions (aclrtLaunchHostFunc subscribes a stream)",
            )
        return [due.wire() for due in await box.take(timeout)]

    @acl_call
    def vnpuCallbackDone(self, callback_id: int) -> None:
        """A blocking callback's function returned: its stream goes on."""
        self.ctx.callbacks.returned(callback_id)

    def _issue_callback(self, api: str, stream: Stream, box: Mailbox, fn: int, data: int, blocking: bool) -> None:
        captured = stream in self.ctx.capturing
        self.ctx.issue(stream, CallbackTask(api, self.ctx.callbacks, stream, box, fn, data, blocking, captured))

    def _any_stream(self, handle: int | None) -> Stream:
        """A stream of this process on any device (the calling thread needs no current context for it, as the
        thread that subscribes is often the one that will call aclrtProcessReport); NULL: the default stream."""
        if not handle:
            return self.ctx.stream(handle)
        found = self.ctx.streams.get(handle) or self.ctx.default_streams.get(handle)
        if found is None:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.ctx.handles.not_a("stream", handle))
        return found

    def _not_runtime_subscribed(self, stream: Stream, api: str) -> None:
        bound = self.ctx.callbacks.subscribed.get(stream)
        if bound is not None and bound.runtime:
            raise AclError(
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                f"{stream} runs host functions (aclrtLaunchHostFunc subscribed it to the runtime's thread), so "
                f"{api} cannot use it: use another stream for callbacks",
            )

    @staticmethod
    def _check_report_timeout(timeout: int) -> None:
        require(
            timeout == -1 or timeout > 0,
            f"timeout {timeout} ms is invalid: -1 waits forever, a positive value waits that many ms",
            ACL_ERROR_INVALID_PARAM,
        )
