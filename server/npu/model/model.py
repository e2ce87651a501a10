"""aclmdlRI (a captured model) and aclrtTaskGrp (a task group inside it), and how a model replays.

A model is a list of lanes, one per stream that took part in the capture (the origin first), each an ordered
list of tasks. `aclmdlRIExecuteAsync` queues one ModelExecuteTask on a stream; when it runs, every lane replays
concurrently -- the origin lane in the launching stream's place, the others as internal streams -- and the
captured event edges (CaptureRecord -> CaptureWait) order them. Each replay has its own fresh set of capture
marks, which is the same as the runtime's resetting its internal capture events at the end of every replay.
One execution of a model runs at a time; a second one waits for it.

A task group is one GroupTask in a lane, holding the group's kernels as a tuple. An update swaps the whole
tuple in one step (UpdateApplyTask) and a replay takes the tuple once when it reaches the group, so a replay
sees all-old or all-new kernels, never a mix.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from proto.errors import (
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_MODEL_ABORT_NORMAL,
    AclError,
)
from server.npu.core.lane import Memory
from server.npu.core.trace import Where, traced
from server.npu.model.cond import ASSIGN_DEFAULT, CondHandle
from server.npu.model.state import NAMES, ModelKind, ModelStatus, move

if TYPE_CHECKING:
    from server.npu.core.event import RecordMark
    from server.npu.core.lane import Lane, Task
    from server.npu.device import Device
    from server.npu.model.groups import TaskGroup


EDITS_KEPT = 32  # the edit history a model keeps for its views
MAX_NAME_BYTES = 1024  # aclmdlRISetName: the longest name vnpu keeps, in UTF-8 bytes (the runtime sets no bound)


@dataclass(eq=False)
class CaptureRecord:
    """A record, inside a capture, of an event made with aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)."""

    api: str
    event_handle: int

    def describe(self) -> str:
        return f"{self.api} of capture event {self.event_handle:#x}"

    async def run(self, lane: Lane) -> None:
        assert isinstance(lane, ReplayLane)
        lane.marks[self].set_result(None)


@dataclass(eq=False)
class CaptureWait:
    """A wait, inside a capture, on one CaptureRecord of the same model."""

    api: str
    record: CaptureRecord

    def describe(self) -> str:
        return f"{self.api} on capture event {self.record.event_handle:#x}"

    async def run(self, lane: Lane) -> None:
        assert isinstance(lane, ReplayLane)
        await lane.marks[self.record]


Bindings = dict[int, "RecordMark | None"]  # id() of an EXTERNAL record/wait task -> its record of one replay


@dataclass(eq=False)
class ModelExecuteTask:
    """aclmdlRIExecuteAsync: one replay of `model` in the stream's order. `bindings` are what its EXTERNAL
    records and waits were bound to when it was launched (see `external`)."""

    model: ModelRI
    api: str = "aclmdlRIExecuteAsync"
    bindings: Bindings = field(default_factory=dict)
    records: tuple[RecordMark, ...] = ()  # the fresh records of this replay's EXTERNAL record tasks

    def describe(self) -> str:
        return f"{self.api} of {self.model}"

    async def run(self, lane: Lane) -> None:
        try:
            await self.model.replay(lane, self.bindings)
        finally:
            self.abandon()  # a record an aborted replay did not reach releases its waiters

    def abandon(self) -> None:
        """Dropped before it ran (or cut short): the replay is no longer in flight, and whoever waits for its
        EXTERNAL records stops waiting."""
        self.model.queued.discard(self)
        for mark in self.records:
            if not mark.done:
                mark.complete()


@dataclass(eq=False)
class ModelLane:
    """The tasks one stream contributed to a model, in issue order."""

    stream_handle: int
    tasks: list[Task] = field(default_factory=list)

    def title(self, index: int) -> str:
        """How debug prints and graphs name the lane."""
        origin = " (origin)" if index == 0 else ""
        return f"stream #{index}{origin}, captured from stream {self.stream_handle:#x}"


class ReplayLane:
    """A model lane while it replays: runs its tasks as if it were a stream (see `stream.Lane`)."""

    def __init__(
        self,
        model: ModelRI,
        index: int,
        on: Lane,
        marks: dict[CaptureRecord, asyncio.Future[None]],
        closing: asyncio.Future[None] | None = None,
        bindings: Bindings | None = None,
    ):
        self.machine: Memory = on.machine
        self.closing = on.closing if closing is None else closing
        self.marks = marks
        self.bindings: Bindings = bindings or {}
        self._name = f"stream #{index} of model {model.handle:#x} (replayed on {on})"
        self.where = Where(model.device.index, f"model {model.handle:#x} stream #{index}", model.handle, on.where.owner)

    def __str__(self) -> str:
        return self._name


class ModelRI:
    """aclmdlRI: a model runtime instance, captured (or a conditional branch of one) or built from bound streams.

    `ident` is the runtime's model id (aclmdlRIGetId): the smallest free one of its device. Tasks enter a lane
    only through `persist`, which numbers them in the model-wide order they were issued (aclmdlRITaskGetSeqId)."""

    def __init__(self, handle: int, device: Device, kind: ModelKind = ModelKind.CAPTURE) -> None:
        self.handle = handle
        self.device = device
        self.kind = kind
        self._status = ModelStatus.CAPTURE_ACTIVE if kind is ModelKind.CAPTURE else ModelStatus.NONE
        self.destroyed = False
        self.ident = device.model_ids.take()
        self.name = ""  # aclmdlRISetName
        self.edits: deque[str] = deque(maxlen=EDITS_KEPT)  # what each aclmdlRIUpdate changed, before -> after
        self.edited: set[int] = set()  # id() of the tasks an aclmdlRIUpdate put in place
        self.lanes: list[ModelLane] = []
        self.seq_ids: dict[int, int] = {}  # id() of a persisted task -> its sequence number
        self._next_seq = 0
        self.groups: dict[int, TaskGroup] = {}
        self.executions = 0
        self.queued: set[ModelExecuteTask] = set()  # replays launched and not finished (the runtime's refCount_)
        self._running = asyncio.Lock()
        # conditional models (server.npu.model.cond): the sub-models of this model's condition tasks, which live and die
        # with it, the cond handles created on it, and (for a sub-model) the model whose condition task runs it
        self.parent: ModelRI | None = None
        self.children: list[ModelRI] = []
        self.conds: list[CondHandle[ModelRI]] = []
        self.destroy_callbacks: dict[int, int] = {}  # aclmdlRIDestroyRegisterCallback: func -> userData
        self._stop: asyncio.Future[None] | None = None  # the running replay's: done when it is to give up
        self._ended: asyncio.Future[None] | None = None  # the running replay's: done when it has ended
        self._marks: dict[CaptureRecord, asyncio.Future[None]] = {}
        self._aborted = False

    def __repr__(self) -> str:
        return f"model {self.handle:#x}"

    def refuse_sub(self, api: str, code: int = ACL_ERROR_RT_FEATURE_NOT_SUPPORT) -> None:
        """`code` (modelri spec G6: 207000) when this is a sub-model, for the calls that take a root model only."""
        if self.kind is ModelKind.SUB:
            raise AclError(
                code,
                f"{self} is a branch of a condition task (aclmdlRIAddCondTask) of {self.parent}: {api} does not "
                "accept a sub-model; it lives and runs with its parent, so pass the root model",
            )

    @property
    def status(self) -> ModelStatus:
        return self._status

    @status.setter
    def status(self, new: ModelStatus) -> None:
        """Only along the state machine's legal moves (`server.npu.model.state`)."""
        self._status = move(self._status, new)

    @property
    def running(self) -> bool:
        return self._running.locked()

    @property
    def in_flight(self) -> int:
        """Replays launched and not finished, queued ones included: while there are any the model is not editable."""
        return max(len(self.queued), int(self.running))

    def bound_lane(self, stream_handle: int) -> ModelLane | None:
        """The lane of a Build model that the user stream `stream_handle` is bound to (aclmdlRIGetTasksByStream)."""
        if self.kind is not ModelKind.BUILD:
            return None
        return next((lane for lane in self.lanes if lane.stream_handle == stream_handle), None)

    @property
    def title(self) -> str:
        """The model as views name it: handle, name, id and kind."""
        name = f' "{self.name}"' if self.name else ""
        return f"model {self.handle:#x}{name} (id {self.ident}, {self.kind.value})"

    @property
    def state(self) -> str:
        """What views and the CLI show."""
        if self.destroyed:
            return "destroyed"
        return NAMES[self.status]

    @property
    def capturing(self) -> bool:
        return self.status in (ModelStatus.CAPTURE_ACTIVE, ModelStatus.CAPTURE_INVALIDATED)

    def persist(self, lane: ModelLane, task: Task) -> None:
        """Append `task` to `lane`, numbering it."""
        self.number(task)
        lane.tasks.append(task)

    def number(self, task: Task) -> None:
        """Give `task` the model's next sequence number (a kernel of a task group is numbered at its launch)."""
        self.seq_ids[id(task)] = self._next_seq
        self._next_seq += 1

    def release(self) -> None:
        """The model is destroyed: its id goes back to the device."""
        if not self.destroyed:
            self.destroyed = True
            self.device.model_ids.give(self.ident)

    def records(self) -> list[CaptureRecord]:
        return [t for lane in self.lanes for t in lane.tasks if isinstance(t, CaptureRecord)]

    async def replay(self, on: Lane, bindings: Bindings | None = None) -> None:
        """Run every lane once, concurrently; raise the first failure, naming the task. The lanes' waits give up
        when `on`'s do (a stream abort, stop or destroy) or when the replay is aborted (aclmdlRIAbort), which
        also skips the tasks not started yet."""
        async with self._running:
            loop = asyncio.get_running_loop()
            marks = {record: loop.create_future() for record in self.records()}
            failures: list[AclError] = []
            with self.watched(on, marks) as stop:
                lanes = [
                    self._replay_lane(ReplayLane(self, i, on, marks, stop, bindings), lane, failures)
                    for i, lane in enumerate(self.lanes)
                ]
                with np.errstate(all="ignore"):  # once for every kernel of the replay (the lanes inherit it)
                    if len(lanes) == 1:
                        await lanes[0]  # one lane needs no task of its own (each costs event-loop turns)
                    else:
                        await asyncio.gather(*lanes)
            self.executions += 1
            self.raise_if_aborted()
            if failures:
                raise failures[0]

    @contextmanager
    def watched(self, on: Lane, marks: dict[CaptureRecord, asyncio.Future[None]]) -> Iterator[asyncio.Future[None]]:
        """Around one replay on `on`: the future that is done when it is to give up (`on` closes, `abort`)."""
        loop = asyncio.get_running_loop()
        stop: asyncio.Future[None] = loop.create_future()

        def give_up(_: object) -> None:
            if not stop.done():
                stop.set_result(None)

        closing = on.closing
        closing.add_done_callback(give_up)
        ended: asyncio.Future[None] = loop.create_future()
        self._stop, self._ended, self._marks, self._aborted = stop, ended, marks, False
        try:
            yield stop
        finally:
            closing.remove_done_callback(give_up)
            self._stop, self._ended, self._marks = None, None, {}
            ended.set_result(None)

    def raise_if_aborted(self) -> None:
        if self._aborted:
            message = f"{self} was aborted (aclmdlRIAbort) during this replay: its remaining tasks did not run"
            raise AclError(ACL_ERROR_RT_MODEL_ABORT_NORMAL, message)

    def abort(self) -> asyncio.Future[None] | None:
        """aclmdlRIAbort: make the running replay give up its waits and skip the tasks it has not started; what
        is done when it has ended (None when no replay is running). Its capture marks are released so that no
        lane waits for another."""
        if self._stop is None or self._ended is None:
            return None
        self._aborted = True
        if not self._stop.done():
            self._stop.set_result(None)
        for mark in self._marks.values():
            if not mark.done():
                mark.set_result(None)
        return self._ended

    async def _replay_lane(self, lane: ReplayLane, model_lane: ModelLane, failures: list[AclError]) -> None:
        for index, task in enumerate(model_lane.tasks):
            if self._aborted:
                return
            try:
                await traced(lane.machine.tracer, task, lane, lane.where)
            except AclError as error:
                failures.append(
                    AclError(error.code, f"{self}, task #{index} of {lane} ({task.describe()}): {error.message}")
                )

    async def wait_idle(self) -> None:
        async with self._running:
            pass


def tree(model: ModelRI) -> Iterator[ModelRI]:
    """`model` and every sub-model below it, parents first (without recursion: depth is not bounded here)."""
    pending = [model]
    while pending:
        member = pending.pop()
        yield member
        pending.extend(reversed(member.children))


def depth_of(model: ModelRI) -> int:
    """How many sub-model levels `model` is below its root (0: a root)."""
    depth, parent = 0, model.parent
    while parent is not None:
        depth, parent = depth + 1, parent.parent
    return depth


def assign_defaults(model: ModelRI) -> None:
    """At a launch of the root `model`: every ASSIGN_DEFAULT handle of its tree that carries a condition task gets
    its default value, on the host and at once (not in stream order)."""
    machine_region = model.device.region
    for member in tree(model):
        for cond in member.conds:
            if cond.flag == ASSIGN_DEFAULT and cond.task is not None:
                machine_region(cond.ptr, 8).view(np.uint64)[0] = cond.default


def unfinished(model: ModelRI) -> ModelRI | None:
    """The first sub-model of `model`'s tree that is not READY (never captured, or still capturing)."""
    for member in tree(model):
        if member is not model and member.status is not ModelStatus.READY:
            return member
    return None
