"""Event tasks: a record, a stream wait and a reset of an event (the event itself: `server.npu.core.event`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from proto.errors import (
    ACL_ERROR_RT_STREAM_ABORT,
    ACL_ERROR_RT_WAIT_TIMEOUT,
    AclError,
)
from server.npu.core.event import Event, RecordMark

if TYPE_CHECKING:
    from server.npu.core.lane import Lane


@dataclass(frozen=True)
class RecordTask:
    """A record of a real event; `mark` (None in a model, whose replays are not host-visible records) lets the
    host synchronize on and query this record."""

    api: str
    event: Event
    mark: RecordMark | None

    def describe(self) -> str:
        return f"{self.api} of {self.event}"

    async def run(self, lane: Lane) -> None:
        self.event.recorded(self.mark)

    def abandon(self) -> None:
        """Dropped before it ran: a host that waits for this record stops waiting (the flag stays as it is)."""
        if self.mark is not None and not self.mark.done:
            self.mark.complete()


@dataclass(frozen=True)
class WaitTask:
    """A stream wait: on the device flag (`mark` None) or on one record snapshot."""

    api: str
    event: Event
    mark: RecordMark | None
    timeout: float | None

    def describe(self) -> str:
        return f"{self.api} on {self.event}"

    async def run(self, lane: Lane) -> None:
        if self.mark is None:
            await self.event.wait_flag(lane, self.timeout)
        elif not self.mark.done:
            done, _ = await asyncio.wait(
                {self.mark.future, lane.closing}, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if not self.mark.done and lane.closing.done():
                raise AclError(ACL_ERROR_RT_STREAM_ABORT, f"{lane} gave up its wait on {self.event}")
            if not done:
                raise AclError(
                    ACL_ERROR_RT_WAIT_TIMEOUT,
                    f"{lane} waited {self.timeout:g} s on the record of {self.event} on {self.mark.stream}",
                )


@dataclass(frozen=True)
class ResetTask:
    api: str
    event: Event

    def describe(self) -> str:
        return f"{self.api} of {self.event}"

    async def run(self, lane: Lane) -> None:
        self.event.reset()
