"""ACL_EVENT_RECORD_EXTERNAL / ACL_EVENT_WAIT_EXTERNAL inside a captured model (modelri spec 6).

They synchronise a model with work outside it (another stream, another model) through an event made with
aclrtCreateEventExWithFlag(ACL_EVENT_SYNC), with snapshot semantics bound at **launch** time, on the host, in
the order the tasks were captured (the runtime's PrepareExternal{Records,Waits}ForReplay):
- each EXTERNAL record gets a fresh record (a RecordMark) for this replay, and the event's latest record becomes
  that one at once, before the replay runs: a plain wait issued after aclmdlRIExecuteAsync waits for this replay's
  record, and so does an EXTERNAL wait of a model launched later;
- each EXTERNAL wait takes the event's latest record as of the launch: none (never recorded) -> it passes at once;
  otherwise the replay waits until that record has run. A record issued after the launch does not count.
These tasks never make the event a capture event and never join a stream to the capture.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from proto.errors import ACL_ERROR_RT_STREAM_ABORT, AclError
from server.npu.core.event import Event, RecordMark
from server.npu.model.model import Bindings, ModelExecuteTask, ModelRI

if TYPE_CHECKING:
    from server.npu.core.lane import Lane
    from server.npu.core.stream import Stream


def _bindings(lane: Lane) -> Bindings:
    found: Bindings = getattr(lane, "bindings", {})
    return found


@dataclass(eq=False)
class ExternalRecordTask:
    """aclrtRecordEventWithFlag(ACL_EVENT_RECORD_EXTERNAL) in a model: runs this replay's record of the event."""

    api: str
    event: Event

    def describe(self) -> str:
        return f"{self.api} (ACL_EVENT_RECORD_EXTERNAL) of {self.event}"

    async def run(self, lane: Lane) -> None:
        mark = _bindings(lane).get(id(self))
        if mark is not None and not mark.done:
            self.event.recorded(mark)


@dataclass(eq=False)
class ExternalWaitTask:
    """aclrtStreamWaitEventWithFlag(ACL_EVENT_WAIT_EXTERNAL) in a model: waits for the record bound at launch."""

    api: str
    event: Event

    def describe(self) -> str:
        return f"{self.api} (ACL_EVENT_WAIT_EXTERNAL) on {self.event}"

    async def run(self, lane: Lane) -> None:
        mark = _bindings(lane).get(id(self))
        if mark is None or mark.done:
            return
        await asyncio.wait({mark.future, lane.closing}, return_when=asyncio.FIRST_COMPLETED)
        if not mark.done:
            raise AclError(ACL_ERROR_RT_STREAM_ABORT, f"{lane} gave up its {self.describe()}")


ExternalTask = ExternalRecordTask | ExternalWaitTask
_FOUND: weakref.WeakKeyDictionary[ModelRI, tuple[tuple[int, int], list[ExternalTask]]] = weakref.WeakKeyDictionary()


def external_tasks(model: ModelRI) -> list[ExternalTask]:
    """The model's EXTERNAL tasks in the order they were captured (remembered while the lanes stay as they are)."""
    shape = (id(model.lanes), sum(len(lane.tasks) for lane in model.lanes))
    found = _FOUND.get(model)
    if found is None or found[0] != shape:
        tasks = [t for lane in model.lanes for t in lane.tasks if isinstance(t, ExternalRecordTask | ExternalWaitTask)]
        tasks.sort(key=lambda t: model.seq_ids.get(id(t), 0))
        found = _FOUND[model] = (shape, tasks)
    return found[1]


def launch(model: ModelRI, on: Stream, api: str = "aclmdlRIExecuteAsync") -> tuple[ModelExecuteTask, list[Event]]:
    """The execute task of one replay of `model` on `on`, its EXTERNAL tasks bound; and the events whose latest
    record `commit` is to switch to this replay's, once the task is queued."""
    bindings: Bindings = {}
    records: list[RecordMark] = []
    events: list[Event] = []
    for task in external_tasks(model):
        if isinstance(task, ExternalRecordTask):
            mark = RecordMark(on)
            bindings[id(task)] = mark
            records.append(mark)
            events.append(task.event)
        else:
            bindings[id(task)] = task.event.latest
    return ModelExecuteTask(model, api, bindings, tuple(records)), events


def commit(task: ModelExecuteTask, events: list[Event]) -> None:
    """The events' latest records become this replay's (host side, before the replay runs)."""
    for event, mark in zip(events, task.records, strict=True):
        event.latest = mark
