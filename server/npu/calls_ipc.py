"""IPC events (spec-breadth 5.4): an aclrtCreateEventExWithFlag(ACL_EVENT_IPC) event shared with other processes.

The 64-byte handle names the event daemon-wide with an unguessable token (a process that does not hold the
handle cannot reach the event, whatever its tenant); opening it in another context makes the same event usable
there -- a record on one side releases a wait on the other -- under the event's own handle value. Only the
creating context destroys the event; another context's aclrtDestroyEvent forgets it there.
"""

from __future__ import annotations

import secrets

from proto.constants import ACL_EVENT_IPC
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID, AclError
from server.npu.context import Context, acl_call, require

IPC_HANDLE_SIZE = 64  # ACL_IPC_EVENT_HANDLE_SIZE
PREFIX = b"vnpu-ipc-event:"


class IpcEventCalls(Context):
    @acl_call
    def aclrtIpcGetEventHandle(self, event: int | None) -> bytes:
        target = self.event(event)
        if target.legacy or target.flags != ACL_EVENT_IPC:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"{target} is not an IPC event: create it with aclrtCreateEventExWithFlag(ACL_EVENT_IPC)",
            )
        if target.ipc_handle is None:
            target.ipc_handle = (PREFIX + secrets.token_hex(16).encode()).ljust(IPC_HANDLE_SIZE, b"\0")
            self.machine.ipc_events[target.ipc_handle] = target
        return target.ipc_handle

    @acl_call
    def aclrtIpcOpenEventHandle(self, handle: bytes) -> int:
        require(len(handle) == IPC_HANDLE_SIZE, f"handle must be {IPC_HANDLE_SIZE} bytes, got {len(handle)}",
                ACL_ERROR_INVALID_PARAM)  # fmt: skip
        self.device()  # the opener needs a current context (107002)
        event = self.machine.ipc_events.get(bytes(handle))
        if event is None or event.destroyed:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                "the handle is not one of a live IPC event (aclrtIpcGetEventHandle; its event may be destroyed)",
            )
        if event.handle not in self.events:
            self.check_handles()
            self.events[event.handle] = event
            self.opened_events.add(event.handle)
        return event.handle
