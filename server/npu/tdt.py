"""TDT channels, queues and queue routes of a device (acltdtChannelHandle's channel, the runtime's mem queues).

A device holds them in one namespace per tenant (`Device.tdt_of`), so every context of a tenant on it sees the same
ones and another tenant's read as never made: a channel is found by its name (a second process of the tenant
that creates the same name on the same device joins it and shares its datasets), a queue by its id. A channel is
a bounded FIFO of datasets (each a name and its items, bytes included); a send to a full channel and a receive
from an empty one wait on the device's event loop, up to their timeout. Queue routes are a table of (src, dst)
pairs of the namespace's queues with their status.

What an entry holds is charged to the memory of the context that put it there (`ENTRY_CHARGE` at least, what its
bookkeeping costs the daemon) until it leaves: taken, cleaned, or dropped with its queue or channel; each entry
carries the function that gives its charge back.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from proto.constants import ACL_TDT_QUEUE_ROUTE_BIND
from proto.errors import ACL_ERROR_RT_QUEUE_EMPTY, ACL_ERROR_RT_QUEUE_FULL, AclError

MAX_CAPACITY: Final = 8192  # vnpu's bound on a channel's or a queue's depth (datasets held in the daemon)
LEGACY_CAPACITY: Final = 8192  # acltdtCreateChannel names no capacity: its channel holds up to this many
MAX_QUEUES: Final = 8192  # queues per device (all tenants together)
ENTRY_CHARGE: Final = 512  # bytes an entry (a dataset, each of its items, a queue entry) is charged besides its data

Refund = Callable[[], None]  # gives an entry's charge back (once)


@dataclass
class Dataset:
    name: str
    items: list[dict[str, Any]]


class Fifo:
    """A bounded FIFO whose put waits while it is full and whose take waits while it is empty (timeouts in ms).
    Each entry is held with its `Refund`, called when it leaves."""

    def __init__(self, capacity: int, what: str) -> None:
        self.capacity, self.what = capacity, what
        self.held: deque[tuple[Any, Refund]] = deque()
        self.changed = asyncio.Condition()

    async def put(self, entry: Any, timeout_ms: int, refund: Refund) -> None:
        """Append `entry`; when it cannot be (full, or the caller went away while it waited), `refund` is called."""
        try:
            async with self.changed:
                if not await self._wait(lambda: len(self.held) < self.capacity, timeout_ms):
                    raise AclError(
                        ACL_ERROR_RT_QUEUE_FULL,
                        f"{self} is full: it holds {self.capacity} {self.what}, its capacity"
                        + (f", and none was taken within {timeout_ms} ms" if timeout_ms > 0 else ""),
                    )
                self.held.append((entry, refund))
                self.changed.notify_all()
        except BaseException:
            refund()
            raise

    async def take(self, timeout_ms: int, fits: Any = None) -> Any:
        """The oldest entry; `fits(entry)` may refuse it (raising), which leaves it in place."""
        async with self.changed:
            if not await self._wait(lambda: bool(self.held), timeout_ms):
                raise AclError(
                    ACL_ERROR_RT_QUEUE_EMPTY,
                    f"{self} is empty" + (f": nothing came within {timeout_ms} ms" if timeout_ms > 0 else ""),
                )
            if fits is not None:
                fits(self.held[0][0])
            entry, refund = self.held.popleft()
            refund()
            self.changed.notify_all()
            return entry

    async def clean(self) -> None:
        async with self.changed:
            self.discard()
            self.changed.notify_all()

    def discard(self) -> None:
        """Drop every entry, giving their charges back (the FIFO is cleaned or goes)."""
        while self.held:
            self.held.popleft()[1]()

    async def _wait(self, ready: Any, timeout_ms: int) -> bool:
        if ready() or timeout_ms == 0:
            return bool(ready())
        try:
            await asyncio.wait_for(self.changed.wait_for(ready), None if timeout_ms < 0 else timeout_ms / 1000)
        except TimeoutError:
            return bool(ready())
        return True


class Channel(Fifo):
    """One named channel of a device: at most `capacity` datasets, oldest first."""

    def __init__(self, device: int, name: str, capacity: int, legacy: bool) -> None:
        super().__init__(capacity, "datasets")
        self.device, self.name, self.legacy = device, name, legacy
        self.users = 0  # handles open on it (of any context)

    def __repr__(self) -> str:
        return f"channel '{self.name}' of device {self.device} ({len(self.held)}/{self.capacity})"


class Queue(Fifo):
    """A queue of a device (the runtime's mem queue): at most `depth` entries of data and user data."""

    def __init__(self, qid: int, name: str, depth: int, owner: object) -> None:
        super().__init__(depth, "entries")
        self.qid, self.name, self.owner = qid, name, owner

    def __repr__(self) -> str:
        return f"queue {self.qid} ('{self.name}', {len(self.held)}/{self.capacity})"


@dataclass
class DeviceTdt:
    """The TDT objects of one tenant on one device."""

    channels: dict[str, Channel] = field(default_factory=dict)
    queues: dict[int, Queue] = field(default_factory=dict)
    routes: dict[tuple[int, int], int] = field(default_factory=dict)  # (src, dst) -> status
    qids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def bind(self, src: int, dst: int) -> int:
        self.routes[(src, dst)] = ACL_TDT_QUEUE_ROUTE_BIND
        return ACL_TDT_QUEUE_ROUTE_BIND

    def drop_queue(self, qid: int) -> Queue | None:
        """Queue `qid` goes, with its entries (their charges given back) and its routes; the queue, if it was one."""
        queue = self.queues.pop(qid, None)
        if queue is not None:
            queue.discard()
        for route in [r for r in self.routes if qid in r]:
            del self.routes[route]
        return queue
