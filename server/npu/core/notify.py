"""aclrtNotify: a binary flag on the device between streams (spec-breadth 6).

A record task sets the flag; a wait-and-reset task blocks its stream until the flag is set, then clears it, so
each record releases one wait. A record before the wait counts (the flag stays set), two records before one wait
count once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from server.npu.core.signal import Signal

if TYPE_CHECKING:
    from server.npu.core.lane import Lane
    from server.npu.device import Device


class Notify(Signal):
    def __init__(self, handle: int, device: Device, flag: int, ident: int) -> None:
        super().__init__()
        self.handle = handle
        self.device = device
        self.flag = flag  # ACL_NOTIFY_DEFAULT or ACL_NOTIFY_DEVICE_USE_ONLY
        self.ident = ident  # aclrtGetNotifyId: unique on its device
        self.set = False
        self.ipc_key: str | None = None  # aclrtNotifyGetExportKey's, once asked
        self.pid_validation = True  # importers must be on the aclrtNotifySetImportPid list
        self.import_pids: set[int] = set()

    def __repr__(self) -> str:
        return f"notify {self.handle:#x} (id {self.ident}) of device {self.device.index}"

    def record(self) -> None:
        self.set = True
        self.changed()

    async def wait_and_reset(self, lane: Lane, timeout: float | None) -> None:
        await self.wait_until(lane, lambda: self.set, timeout)
        self.set = False


@dataclass(frozen=True)
class NotifyRecordTask:
    api: str
    notify: Notify

    def describe(self) -> str:
        return f"{self.api} of {self.notify}"

    async def run(self, lane: Lane) -> None:
        self.notify.record()


@dataclass(frozen=True)
class NotifyWaitTask:
    api: str
    notify: Notify
    timeout: float | None

    def describe(self) -> str:
        return f"{self.api} on {self.notify}"

    async def run(self, lane: Lane) -> None:
        await self.notify.wait_and_reset(lane, self.timeout)
