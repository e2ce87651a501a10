"""aclrtNotify: a binary flag on the device between streams (spec-breadth 6).

A record task sets the flag; a wait-and-reset task blocks its stream until the flag is set, then clears it, so
each record releases one wait. A record before the wait counts (the flag stays set), two records before one wait
count once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from proto.errors import ACL_ERROR_RT_STREAM_ABORT, ACL_ERROR_RT_WAIT_TIMEOUT, AclError

if TYPE_CHECKING:
    from server.npu.device import Device
    from server.npu.stream import Lane


class Notify:
    def __init__(self, handle: int, device: Device, flag: int, ident: int) -> None:
        self.handle = handle
        self.device = device
        self.flag = flag  # ACL_NOTIFY_DEFAULT or ACL_NOTIFY_DEVICE_USE_ONLY
        self.ident = ident  # aclrtGetNotifyId: unique on its device
        self.set = False
        self._changed: asyncio.Future[None] | None = None

    def __repr__(self) -> str:
        return f"notify {self.handle:#x} (id {self.ident}) of device {self.device.index}"

    def record(self) -> None:
        self.set = True
        if self._changed is not None:
            self._changed.set_result(None)
            self._changed = None

    async def wait_and_reset(self, lane: Lane, timeout: float | None) -> None:
        deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
        while not self.set:
            if lane.closing.done():
                raise AclError(ACL_ERROR_RT_STREAM_ABORT, f"{lane} gave up its wait on {self}")
            if self._changed is None:
                self._changed = asyncio.get_running_loop().create_future()
            remaining = None if deadline is None else deadline - asyncio.get_running_loop().time()
            done, _ = await asyncio.wait(
                {self._changed, lane.closing}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED
            )
            if not done:
                raise AclError(ACL_ERROR_RT_WAIT_TIMEOUT, f"{lane} waited {timeout:g} s on {self}, never recorded")
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
