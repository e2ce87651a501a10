"""Notify calls: create, destroy, record, wait-and-reset, id (spec-breadth 6.2); the IPC half is not here yet."""

from __future__ import annotations

from proto.constants import ACL_NOTIFY_DEFAULT, ACL_NOTIFY_DEVICE_USE_ONLY
from proto.errors import ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_CONTEXT, AclError
from server.npu.area import Area, acl_call, require
from server.npu.core.notify import Notify, NotifyRecordTask, NotifyWaitTask

NOTIFIES_PER_DEVICE = 8192  # A2/A3 (D08)


class NotifyCalls(Area):
    @acl_call
    def aclrtCreateNotify(self, flag: int) -> int:
        require(
            flag in (ACL_NOTIFY_DEFAULT, ACL_NOTIFY_DEVICE_USE_ONLY),
            f"flag {flag:#x} is neither ACL_NOTIFY_DEFAULT nor ACL_NOTIFY_DEVICE_USE_ONLY",
            ACL_ERROR_RT_PARAM_INVALID,
        )
        device = self.ctx.device()
        mine = sum(1 for n in self.ctx.notifies.values() if n.device is device)
        require(
            mine < NOTIFIES_PER_DEVICE,
            f"device {device.index} holds {NOTIFIES_PER_DEVICE} notifies of this process, the most it has",
            ACL_ERROR_RT_PARAM_INVALID,
        )
        self.ctx.check_handles()
        notify = Notify(self.machine.new_handle(), device, flag, next(device.notify_ids))
        self.ctx.notifies[notify.handle] = notify
        return notify.handle

    @acl_call
    def aclrtDestroyNotify(self, notify: int | None) -> None:
        self.ctx.drop_notify(self.ctx.notify(notify).handle)

    @acl_call
    def aclrtRecordNotify(self, notify: int | None, stream: int | None) -> None:
        target, on = self.ctx.notify(notify), self.ctx.stream(stream)
        self._same_notify_device(target, on.device.index)
        self.ctx.issue(on, NotifyRecordTask("aclrtRecordNotify", target))

    @acl_call
    def aclrtWaitAndResetNotify(self, notify: int | None, stream: int | None, timeout: int) -> None:
        """`timeout` in seconds, 0 = wait forever; a wait that runs out fails with ACL_ERROR_RT_WAIT_TIMEOUT."""
        target, on = self.ctx.notify(notify), self.ctx.stream(stream)
        self._same_notify_device(target, on.device.index)
        self.ctx.issue(on, NotifyWaitTask("aclrtWaitAndResetNotify", target, float(timeout) or None))

    @acl_call
    def aclrtGetNotifyId(self, notify: int | None) -> int:
        return self.ctx.notify(notify).ident

    def _same_notify_device(self, notify: Notify, device: int) -> None:
        """A notify is used on streams of its device (an imported one on any: the importer enabled peer access)."""
        if notify.device.index != device and notify.handle not in self.ctx.imported_notifies:
            raise AclError(
                ACL_ERROR_RT_STREAM_CONTEXT, f"{notify} is used on a stream of device {device}, another device"
            )
