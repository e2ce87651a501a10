"""IPC events and notifies (spec-breadth 5.4, 6.2): an event or a notify shared with other processes.

An IPC event's 64-byte handle, or a notify's export key, names it daemon-wide with an unguessable token (a
process that does not hold it cannot reach the object, whatever its tenant); opening or importing it in another
context makes the same object usable there -- a record on one side releases a wait on the other -- under its
own handle value. Only the creating context destroys it; another context's destroy forgets it there. A notify
exported with ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT is imported only by the processes its owner listed
(aclrtNotifySetImportPid, with the pids their aclrtDeviceGetBareTgid gives); one on another device needs
ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS.
"""

from __future__ import annotations

import secrets

from proto.constants import (
    ACL_EVENT_IPC,
    ACL_NOTIFY_DEVICE_USE_ONLY,
    ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT,
    ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION,
    ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS,
)
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID, AclError
from server.npu.area import Area, acl_call, require
from server.npu.process.ipc import check_importer, check_peer

IPC_HANDLE_SIZE = 64  # ACL_IPC_EVENT_HANDLE_SIZE
PREFIX = b"vnpu-ipc-event:"
NOTIFY_PREFIX = "vnpu-notify-"
IMPORT_FLAGS = ACL_NOTIFY_DEVICE_USE_ONLY | ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS


class IpcCalls(Area):
    @acl_call
    def aclrtIpcGetEventHandle(self, event: int | None) -> bytes:
        target = self.ctx.event(event)
        if target.legacy or target.flags != ACL_EVENT_IPC:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"{target} is not an IPC event: create it with aclrtCreateEventExWithFlag(ACL_EVENT_IPC)",
            )
        if target.ipc_handle is None:
            target.ipc_handle = (PREFIX + secrets.token_hex(16).encode()).ljust(IPC_HANDLE_SIZE, b"\0")
            self.machine.ipc.events[target.ipc_handle] = target
        return target.ipc_handle

    @acl_call
    def aclrtIpcOpenEventHandle(self, handle: bytes) -> int:
        require(len(handle) == IPC_HANDLE_SIZE, f"handle must be {IPC_HANDLE_SIZE} bytes, got {len(handle)}",
                ACL_ERROR_INVALID_PARAM)  # fmt: skip
        self.ctx.device()  # the opener needs a current context (107002)
        event = self.machine.ipc.events.get(bytes(handle))
        if event is None or event.destroyed:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                "the handle is not one of a live IPC event (aclrtIpcGetEventHandle; its event may be destroyed)",
            )
        if event.handle not in self.ctx.events:
            self.ctx.check_handles()
            self.ctx.events[event.handle] = event
            self.ctx.opened_events.add(event.handle)
        return event.handle

    @acl_call
    def aclrtNotifyGetExportKey(self, notify: int | None, len_: int, flags: int) -> str:
        """The key (a C string of at most `len` bytes with its NUL); the latest export's flags hold."""
        target = self.ctx.notify(notify)
        require(len_ > 0, "len is 0", ACL_ERROR_RT_PARAM_INVALID)
        export_flags = (ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT, ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)
        require(flags in export_flags, f"flags {flags:#x} is neither ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT nor "
                "ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION", ACL_ERROR_RT_PARAM_INVALID)  # fmt: skip
        key = target.ipc_key or NOTIFY_PREFIX + secrets.token_hex(16)
        require(len(key) < len_, f"key holds {len_} bytes; the key needs {len(key) + 1}", ACL_ERROR_RT_PARAM_INVALID)
        if target.ipc_key is None:
            target.ipc_key = key
            self.machine.ipc.notifies[key] = target
        target.pid_validation = flags == ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT
        return key

    @acl_call
    def aclrtNotifySetImportPid(self, notify: int | None, pid: list[int]) -> None:
        target = self.ctx.notify(notify)
        require(bool(pid), "num must be more than 0", ACL_ERROR_RT_PARAM_INVALID)
        require(target.ipc_key is not None, f"{target} has no export key yet: call aclrtNotifyGetExportKey first",
                ACL_ERROR_RT_PARAM_INVALID)  # fmt: skip
        target.import_pids.update(pid)

    @acl_call
    def aclrtNotifyImportByKey(self, key: str, flags: int) -> int:
        require(0 <= flags <= IMPORT_FLAGS, f"flags {flags:#x} is not a combination of the import flags",
                ACL_ERROR_RT_PARAM_INVALID)  # fmt: skip
        device = self.ctx.device()
        notify = self.machine.ipc.notifies.get(key)
        if notify is None:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"{key!r} is not the key of a live exported notify")
        if notify.handle in self.ctx.notifies:
            return notify.handle
        check_importer(str(notify), notify.pid_validation, notify.import_pids, "aclrtNotifySetImportPid",
                       "ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION")  # fmt: skip
        peer = bool(flags & ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS) or self.ctx.has_peer_access(notify.device)
        check_peer(str(notify), notify.device, device, peer, "ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS")
        self.ctx.check_handles()
        self.ctx.notifies[notify.handle] = notify
        self.ctx.imported_notifies.add(notify.handle)
        return notify.handle
