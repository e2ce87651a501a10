"""The device's trace: what ran when, where, for how long -- in a bounded ring buffer, exported as Chrome trace.

Every task a stream or a model replay runs becomes one event: its kind, its description (the C call and the op),
the device and the lane (a stream, or one stream of a model replayed on a stream), the model and task group it
belongs to, start and end on the monotonic clock (`time.perf_counter`), and its error if it failed (`NAME (code):
message`, as AclError prints it). An event wait's
duration is how long it blocked; an update's event marks when it was applied. With capacity 0 tracing is off and
costs one attribute test per task. The ring holds plain tuples (a replay records one per kernel, and a tuple costs
a twentieth of a frozen dataclass); `events()` turns them into TraceEvents when someone reads the trace.

With tenants (`shares` > 1) each tenant has a ring of its own, `capacity // shares` events, chosen by the tenant of
the event's owner (its context's `tenant`): one tenant's load pushes out only its own events.
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from sys import intern
from typing import Any

from proto.errors import AclError

KINDS = {
    "KernelTask": "kernel",
    "CustomKernelTask": "kernel",
    "MemcpyTask": "memcpy",
    "MemsetTask": "memset",
    "RecordTask": "record",
    "WaitTask": "wait",
    "ResetTask": "reset",
    "CaptureRecord": "record",
    "CaptureWait": "wait",
    "GroupTask": "group",
    "UpdateApplyTask": "update",
    "ModelExecuteTask": "model",
    "LabelSetTask": "label",
    "SwitchLabelTask": "label switch",
    "MarkTask": "mark",  # server.npu.core.markers: the program's own marks and ranges
    "RangeTask": "range",
}


@dataclass(frozen=True, slots=True)
class Where:
    """Where a task runs: the device, the lane's name, the model being replayed (if any) and the lane's owner
    (the context that issued the work, so that a tenant sees only its own events)."""

    device: int
    lane: str
    model: int | None
    owner: object


@dataclass(frozen=True, slots=True)
class TraceEvent:
    kind: str
    name: str
    where: Where
    start: float
    end: float
    group: int | None
    error: str | None
    detail: str | None  # the task's full description, where its name leaves out what changes (counters)


_Record = tuple[type, str, Where, float, float, int | None, str | None, str | None]  # kind as its task's type


def _names(task: Any) -> tuple[str, str | None]:
    """A task's slice name and detail: a task whose description changes between runs (a task group's update
    count) has a stable `title()` to be named by, so a trace viewer aggregates its runs. Names are interned: the
    ring's records of a kernel launched 100k times share one string (68 bytes a record less, bench figure 13)."""
    title = getattr(task, "title", None)
    return (intern(task.describe()), None) if title is None else (intern(title()), task.describe())


def _event(record: _Record) -> TraceEvent:
    kind = record[0].__name__
    return TraceEvent(KINDS.get(kind, kind.lower()), *record[1:])


class Tracer:
    def __init__(self, capacity: int = 100_000, shares: int = 1) -> None:
        self.capacity = capacity
        self.shares = max(shares, 1)  # tenants, each with a ring of its own (1: one ring for all)
        self.ring: deque[_Record] = deque(maxlen=max(capacity // self.shares, 1))  # the one, or tenant None's
        self.rings: dict[object, deque[_Record]] = {None: self.ring}  # tenant -> its ring
        self.enabled = capacity > 0
        self.epoch = time.perf_counter()
        self.counts: dict[type, int] = {}  # tasks run, by type (for the metrics; counted even when off)

    def ring_of(self, owner: object) -> deque[_Record]:
        """The ring of the events `owner` (a context, by its `tenant`) makes."""
        if self.shares == 1:
            return self.ring
        tenant = getattr(owner, "tenant", None)
        ring = self.rings.get(tenant)
        if ring is None:
            ring = self.rings[tenant] = deque(maxlen=self.ring.maxlen)
        return ring

    @staticmethod
    def clock() -> float:
        return time.perf_counter()

    def task(self, task: Any, where: Where, start: float, group: int | None = None, error: str | None = None) -> None:
        """Record `task`, which ran from `start` until now."""
        name, detail = _names(task)
        self.ring_of(where.owner).append((type(task), name, where, start, time.perf_counter(), group, error, detail))

    def events(self, since: float = 0.0, owners: set[int] | None = None) -> list[TraceEvent]:
        """Events that ended after `since` (trace-clock seconds), of the given owners (ids) or of all."""
        # a ring is in end-time order (each record is appended as its task ends): read back from the newest and
        # stop at the first one that ended by `since`, so a viewer polling with its last `now` costs only what is new
        found = []
        for ring in list(self.rings.values()):
            recent = []
            for record in reversed(ring):
                if record[4] <= since:
                    break
                if owners is None or id(record[2].owner) in owners:
                    recent.append(record)
            found.append(reversed(recent))
        merged = heapq.merge(*found, key=lambda r: r[4]) if len(found) > 1 else (found[0] if found else ())
        return [_event(r) for r in merged]


async def traced(tracer: Tracer, task: Any, lane: Any, where: Where, group: int | None = None) -> None:
    """Run `task` on `lane`, recording it when tracing is on; an AclError is recorded and passed on. A replay
    calls this for every task: it is kept to the bare steps."""
    kind, counts = type(task), tracer.counts
    counts[kind] = counts.get(kind, 0) + 1
    if not tracer.enabled:
        await task.run(lane)
        return
    start = time.perf_counter()
    try:
        await task.run(lane)
    except AclError as error:
        tracer.task(task, where, start, group, f"{error.name} ({error.code}): {error.message}")
        raise
    name, detail = _names(task)
    tracer.ring_of(where.owner).append((kind, name, where, start, time.perf_counter(), group, None, detail))


def chrome(
    events: list[TraceEvent], epoch: float, owner_name: Callable[[object], str] | None = None
) -> list[dict[str, Any]]:
    """Chrome trace events (Perfetto, chrome://tracing): one complete ("X") event per task and range, an instant
    ("i") per mark, in microseconds, one
    process per device and one thread per lane, named by metadata events; `owner_name` names each event's
    context in its args."""
    out: list[dict[str, Any]] = []
    named: set[tuple[int, str]] = set()
    for e in events:
        pid, tid = e.where.device, e.where.lane
        if (pid, "") not in named:
            named.add((pid, ""))
            out.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": f"device {pid}"}})
        if (pid, tid) not in named:
            named.add((pid, tid))
            out.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": tid}})
        args: dict[str, Any] = {} if owner_name is None else {"Context": owner_name(e.where.owner)}
        if e.where.model is not None:
            args["Model Id"] = e.where.model
        if e.group is not None:
            args["Task Group"] = f"{e.group:#x}"  # a handle, written as in names ("task group 0x1065")
        if e.error is not None:
            args["Error"] = e.error
        if e.detail is not None:
            args["Detail"] = e.detail
        event = {"name": e.name, "cat": e.kind, "ph": "X", "ts": round((e.start - epoch) * 1e6, 3)}
        if e.kind == "mark":  # an instant on its thread's lane
            event.update(ph="i", s="t")
        else:
            event["dur"] = round((e.end - e.start) * 1e6, 3)
        out.append({**event, "pid": pid, "tid": tid, "args": args})
    return out
