"""aclrtEvent, with the two behaviours of the real runtime (spec section 3.2).

- **Binary flag** (legacy events with ACL_EVENT_SYNC or ACL_EVENT_EXTERNAL, from aclrtCreateEvent or
  aclrtCreateEventWithFlag): a record task sets a 0/1 flag on the device, a reset task clears it, and a wait task
  blocks until the flag is 1 — even when the record is issued later, from any stream. A wait does not clear the
  flag, and two records before a wait count once.
- **Snapshot** (aclrtCreateEventExWithFlag events, and legacy events without SYNC): as in CUDA, each record
  replaces the event's snapshot of its stream, and a wait waits for the latest snapshot taken before the wait
  was issued; a wait on a never-recorded event, on a record of the same stream, or on a finished record is
  skipped.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from proto.constants import ACL_EVENT_EXTERNAL, ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE
from proto.errors import ACL_ERROR_RT_INVALID_HANDLE, AclError
from server.npu.core.signal import Signal

if TYPE_CHECKING:
    from server.npu.core.lane import Lane
    from server.npu.core.stream import Stream
    from server.npu.device import Device


class RecordMark:
    """One issued record of an event: done once its record task has run on `stream`."""

    __slots__ = ("done", "future", "stream", "timestamp")

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.timestamp = 0.0
        self.done = False

    def complete(self) -> None:
        self.timestamp = time.perf_counter()
        self.done = True
        self.future.set_result(None)


class Event(Signal):
    """aclrtEvent; `api` is the create call, which decides the behaviour (see the module docstring)."""

    def __init__(self, handle: int, device: Device, flags: int, api: str) -> None:
        super().__init__()
        self.handle = handle
        self.device = device
        self.flags = flags
        self.api = api
        self.legacy = api != "aclrtCreateEventExWithFlag"
        self.flag = False  # the device flag of binary events
        self.latest: RecordMark | None = None
        self.destroyed = False
        self.ipc_handle: bytes | None = None  # aclrtIpcGetEventHandle's, once asked
        self.record_kind: int | None = None  # fixed by the first record: ACL_EVENT_RECORD_DEFAULT or _EXTERNAL
        self.wait_kind: int | None = None  # fixed by the first wait: ACL_EVENT_WAIT_DEFAULT or _EXTERNAL

    def __repr__(self) -> str:
        return f"event {self.handle:#x} ({self.api}, flags {self.flags:#x})"

    @property
    def binary(self) -> bool:
        return self.legacy and bool(self.flags & (ACL_EVENT_SYNC | ACL_EVENT_EXTERNAL))

    @property
    def external(self) -> bool:
        return bool(self.flags & ACL_EVENT_EXTERNAL)

    @property
    def timed(self) -> bool:
        return bool(self.flags & ACL_EVENT_TIME_LINE)

    @property
    def completed(self) -> bool:
        """The recorded status: a binary event's latest record ran and no reset cleared it since; a snapshot
        event's latest record ran, or it was never recorded and is an Ex event (a never-recorded legacy event is
        not ready: spec-breadth 5.5)."""
        if self.binary:
            return self.flag and self.latest is not None and self.latest.done
        if self.latest is None:
            return not self.legacy
        return self.latest.done

    @property
    def pending_record(self) -> bool:
        return self.latest is not None and not self.latest.done

    def issue_record(self, stream: Stream) -> RecordMark:
        self.latest = RecordMark(stream)
        return self.latest

    def recorded(self, mark: RecordMark | None) -> None:
        """A record task ran: the eager one of `mark`, or (`mark` None) one replayed from a model."""
        if mark is not None:
            mark.complete()
        if self.binary:
            self.flag = True
        self.changed()

    def reset(self) -> None:
        self.flag = False
        self.changed()

    def destroy(self) -> None:
        self.destroyed = True
        self.changed()

    async def wait_flag(self, lane: Lane, timeout: float | None) -> None:
        """Block `lane` until the flag is set (a binary wait task)."""
        await self.wait_until(lane, lambda: self.flag, timeout, lambda: self._hopeless(lane))

    def _hopeless(self, lane: Lane) -> None:
        if self.destroyed and not self.pending_record:
            raise AclError(
                ACL_ERROR_RT_INVALID_HANDLE,
                f"{self} was destroyed while {lane} waited on it, and no record of it is pending",
            )
