"""A Build model (aclmdlRIBuildBegin .. aclmdlRIBuildEnd): a model made of bound persistent streams, and its replay.

Instead of capturing, a program binds ACL_STREAM_PERSISTENT streams to an empty model (aclmdlRIBindStream) and
issues work to them: each bound stream is one lane of the model (the most recently bound first, the order
aclmdlRIGetStreams reports) and what it is given is kept in the lane, not run (`Context.issue`).

One execution (`BuildModel.replay`):
- the lanes bound with ACL_MODEL_STREAM_FLAG_HEAD start together; a lane bound with ACL_MODEL_STREAM_FLAG_DEFAULT
  stays dormant until a task of the model starts it;
- aclrtActiveStream starts its lane alongside the issuing one, which goes on;
- aclrtSwitchStream compares two int32 or int64 words of device memory when it runs: if the condition holds the
  issuing lane stops there and the true stream's lane starts (a jump); otherwise the issuing lane goes on;
- a lane that is running when it is started again is not disturbed (it is already active); a lane that has
  finished in this execution runs again from its first task (which is how a loop is built);
- the model has ended when the lane of aclmdlRIEndTask has run its end task and every lane it started has
  finished (vnpu waits for them, so an execution's results do not depend on timing). An execution that never
  reaches the end task fails with ACL_ERROR_RT_MODEL_EXECUTE naming the end stream, where a device would hang.
- aclrtSwitchLabelByIndex (`labels`) goes on at the chosen label's task: later in its own lane, earlier (a loop),
  or in another lane of the model, which starts there while the issuing lane stops (as a switch does);
- the jumps of one execution -- label switches, aclrtSwitchStream jumps and aclrtActiveStream starts of an idle
  lane, counted together -- are at most `Machine.max_while_iterations` (VNPU_MAX_WHILE_ITERATIONS): past that the
  execution fails with 507011 naming the bound, so a loop whose condition never changes cannot hang a stream or
  grow the daemon (a replay keeps nothing per jump);
- the execution gives up, between two tasks, when its stream closes or aborts or the model is aborted
  (aclmdlRIAbort): the lanes stop and start no other.
A failed task fails the execution (the first failure is raised, naming the lane and the task); its lane goes on,
except after a failed label switch, which stops its lane (the device's switch program ends in an error).
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from proto.constants import ACL_MODEL_STREAM_FLAG_HEAD, aclrtCompareDataType, aclrtCondition
from proto.errors import (
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_MODEL_EXECUTE,
    ACL_ERROR_RT_STREAM_ABORT,
    AclError,
)
from server.npu.core.lane import Memory
from server.npu.core.trace import Where, traced
from server.npu.memory.arena import MemoryFault
from server.npu.model.model import Bindings, ModelLane, ModelRI
from server.npu.model.state import ModelKind
from server.npu.tasks.pins import Pins, check_pins

if TYPE_CHECKING:
    from server.npu.core.lane import Lane
    from server.npu.core.stream import Stream
    from server.npu.device import Device

_C = aclrtCondition
COMPARE: dict[int, tuple[str, Callable[[int, int], bool]]] = {
    _C.ACL_RT_EQUAL: ("==", operator.eq),
    _C.ACL_RT_NOT_EQUAL: ("!=", operator.ne),
    _C.ACL_RT_GREATER: (">", operator.gt),
    _C.ACL_RT_GREATER_OR_EQUAL: (">=", operator.ge),
    _C.ACL_RT_LESS: ("<", operator.lt),
    _C.ACL_RT_LESS_OR_EQUAL: ("<=", operator.le),
}
YIELD_EVERY = 64  # label jumps between two turns given to the event loop
WORDS = {aclrtCompareDataType.ACL_RT_SWITCH_INT32: np.int32, aclrtCompareDataType.ACL_RT_SWITCH_INT64: np.int64}


@dataclass(eq=False)
class BuildLane(ModelLane):
    """A bound stream of a Build model: its persisted tasks, its bind flag and the stream itself."""

    flag: int = ACL_MODEL_STREAM_FLAG_HEAD
    stream: Stream | None = field(default=None, repr=False)
    model: BuildModel | None = field(default=None, repr=False)

    @property
    def head(self) -> bool:
        return self.flag == ACL_MODEL_STREAM_FLAG_HEAD

    def __str__(self) -> str:
        return f"stream {self.stream_handle:#x}"

    def title(self, index: int) -> str:
        start = "HEAD: starts with the model" if self.head else "DEFAULT: starts when activated or switched to"
        return f"stream #{index}, bound stream {self.stream_handle:#x} ({start})"


@dataclass(frozen=True, eq=False)
class ActiveStreamTask:
    """aclrtActiveStream: start `target`'s lane; the issuing lane goes on."""

    target: BuildLane
    api: str = "aclrtActiveStream"

    def describe(self) -> str:
        return f"{self.api} of {self.target}"

    async def run(self, lane: Lane) -> None:
        assert isinstance(lane, BuildReplayLane)
        lane.replay.activate(lane, self.target)


@dataclass(frozen=True, eq=False)
class SwitchStreamTask:
    """aclrtSwitchStream: if `*left cond *right` (read now, as int32 or int64), jump to `target`'s lane."""

    left: int
    cond: int
    right: int
    data_type: int
    target: BuildLane
    pins: Pins
    api: str = "aclrtSwitchStream"

    def describe(self) -> str:
        word = aclrtCompareDataType(self.data_type).name.removeprefix("ACL_RT_SWITCH_").lower()
        return f"{self.api} to {self.target} if *{self.left:#x} {COMPARE[self.cond][0]} *{self.right:#x} ({word})"

    async def run(self, lane: Lane) -> None:
        assert isinstance(lane, BuildReplayLane)
        check_pins(lane, self.pins)
        dtype = WORDS[aclrtCompareDataType(self.data_type)]
        left, right = (self._word(lane.machine, ptr, dtype) for ptr in (self.left, self.right))
        if COMPARE[self.cond][1](left, right):
            lane.jump = self.target

    @staticmethod
    def _word(machine: Memory, ptr: int, dtype: type) -> int:
        size = np.dtype(dtype).itemsize
        try:
            return int(machine.region(ptr, size).view(dtype)[0])
        except MemoryFault as fault:
            raise AclError(ACL_ERROR_RT_DEVICE_MEM_ERROR, f"invalid memory access: {fault}") from None


@dataclass(frozen=True, eq=False)
class EndGraphTask:
    """aclmdlRIEndTask: the model's end (the end-graph notify its execute stream waits for)."""

    api: str = "aclmdlRIEndTask"

    def describe(self) -> str:
        return f"{self.api} (the end of the model)"

    async def run(self, lane: Lane) -> None:
        assert isinstance(lane, BuildReplayLane)
        lane.replay.ended = True


class BuildReplayLane:
    """A lane of a Build model while it runs once (see `stream.Lane`)."""

    def __init__(self, replay: Replay, lane: BuildLane, on: Lane) -> None:
        self.machine: Memory = on.machine
        self.closing = replay.stop  # done when the execution is to give up (its stream closes, an abort)
        self.replay = replay
        self.lane = lane
        self.jump: BuildLane | None = None  # set by a switch whose condition held
        self.goto: tuple[BuildLane, int] | None = None  # set by a label switch: go on at that lane's task
        self.halted = False  # a task that failed so that its lane cannot go on (a label switch)
        model = replay.model
        self._name = f"{lane} of model {model.handle:#x} (executed on {on})"
        self.where = Where(model.device.index, f"model {model.handle:#x} {lane}", model.handle, on.where.owner)

    def __str__(self) -> str:
        return self._name


class Replay:
    """One execution of a Build model on `on`; `stop` is done when it is to give up."""

    def __init__(self, model: BuildModel, on: Lane, stop: asyncio.Future[None]) -> None:
        self.model = model
        self.on = on
        self.stop = stop
        self.ended = False
        self.failures: list[AclError] = []
        self.faults: list[Exception] = []  # vnpu's own, raised as they are
        self.active: dict[BuildLane, asyncio.Task[None]] = {}
        self.jumps = 0  # jumps taken in this execution (bounded: `count_jump`)

    def count_jump(self, lane: BuildReplayLane, what: str = "the label switches") -> bool:
        """Count one jump of this execution (`what` made it): past `Machine.max_while_iterations` it fails (a loop
        that never leaves cannot hang the stream); True when the event loop is due a turn."""
        bound = lane.machine.max_while_iterations
        if self.jumps >= bound:
            raise AclError(
                ACL_ERROR_RT_MODEL_EXECUTE,
                f"{what} of {self.model} jumped {bound} times in this execution (label switches, aclrtSwitchStream "
                "jumps and aclrtActiveStream restarts, counted together): a loop must change the word its condition "
                "reads (or the code that jumps back) to leave; the bound is VNPU_MAX_WHILE_ITERATIONS",
            )
        if lane.closing.done():
            raise AclError(ACL_ERROR_RT_STREAM_ABORT, f"{lane} gave up a jump: its execution is stopping")
        self.jumps += 1
        return self.jumps % YIELD_EVERY == 0

    def activate(self, lane: BuildReplayLane, target: BuildLane) -> None:
        """aclrtActiveStream: start `target` unless it is running; a start counts as a jump."""
        if target not in self.active:
            self.count_jump(lane, "the aclrtActiveStream tasks")
            self.start(target)

    def start(self, lane: BuildLane, at: int = 0) -> None:
        """Start `lane` (at its task `at`) unless it is running already."""
        if lane not in self.model.lanes:
            raise AclError(
                ACL_ERROR_RT_MODEL_EXECUTE,
                f"{lane} is no longer bound to {self.model} (aclmdlRIUnbindStream), so it cannot be started",
            )
        if lane in self.active:
            return
        self.active[lane] = asyncio.get_running_loop().create_task(self._run(lane, at))

    async def run(self) -> None:
        for lane in self.model.lanes:
            if isinstance(lane, BuildLane) and lane.head:
                self.start(lane)
        try:
            while self.active:  # lanes started while we wait are awaited too; a finished one is gone from it
                await asyncio.wait(set(self.active.values()))
        except asyncio.CancelledError:
            for task in self.active.values():
                task.cancel()
            raise
        if self.faults:
            raise self.faults[0]
        if self.failures:
            raise self.failures[0]
        if self.stop.done() and not self.ended:
            raise AclError(ACL_ERROR_RT_STREAM_ABORT, f"{self.model} gave up its execution: {self.on} is stopping")
        if not self.ended:
            end = self.model.end
            raise AclError(
                ACL_ERROR_RT_MODEL_EXECUTE,
                f"{self.model} finished without reaching its end task: no aclrtActiveStream or aclrtSwitchStream of "
                f"this execution started {end}, which holds the aclmdlRIEndTask (and it is not a HEAD stream)",
            )

    async def _run(self, model_lane: BuildLane, at: int) -> None:
        lane = BuildReplayLane(self, model_lane, self.on)
        try:
            await self._tasks(lane, model_lane, at)
        except Exception as fault:  # not an ACL error: vnpu's own, raised by `run`
            self.faults.append(fault)
        finally:
            del self.active[model_lane]
        try:
            if lane.jump is not None:
                self.count_jump(lane, "the aclrtSwitchStream tasks")
                self.start(lane.jump)
            elif lane.goto is not None:
                self.start(lane.goto[0], at=lane.goto[1])
        except AclError as error:
            self.failures.append(AclError(error.code, f"{self.model}, the jump of {lane}: {error.message}"))

    async def _tasks(self, lane: BuildReplayLane, model_lane: BuildLane, index: int) -> None:
        """Run the lane's tasks from `index` until its end, a jump, a halt or the execution's stop."""
        tasks = model_lane.tasks
        while index < len(tasks) and not lane.closing.done():
            task = tasks[index]
            try:
                await traced(lane.machine.tracer, task, lane, lane.where)
            except AclError as error:
                message = f"{self.model}, task #{index} of {lane} ({task.describe()}): {error.message}"
                self.failures.append(AclError(error.code, message))
            if lane.jump is not None or lane.halted:
                return
            if lane.goto is not None and lane.goto[0] is model_lane:  # a label of this lane: go on there
                index, lane.goto = lane.goto[1], None
                continue
            if lane.goto is not None:
                return
            index += 1


class BuildModel(ModelRI):
    """aclmdlRI made with aclmdlRIBuildBegin: its lanes are BuildLanes; `end` is the lane of aclmdlRIEndTask,
    `loaded` says aclmdlRIBuildEnd was called; `owner` is the ACL context it belongs to."""

    def __init__(self, handle: int, device: Device, owner: object) -> None:
        super().__init__(handle, device, ModelKind.BUILD)
        self.owner = owner
        self.end: BuildLane | None = None
        self.loaded = False

    def lane_of(self, stream: Stream) -> BuildLane | None:
        for lane in self.lanes:
            if isinstance(lane, BuildLane) and lane.stream is stream:
                return lane
        return None

    async def replay(self, on: Lane, bindings: Bindings | None = None) -> None:
        """A Build model holds no EXTERNAL records or waits (they need a capture): `bindings` is always empty. It
        gives up when `on` closes or aborts and when the model is aborted (aclmdlRIAbort: 507023)."""
        async with self._running:
            with np.errstate(all="ignore"), self.watched(on, {}) as stop:  # the lanes' tasks inherit the errstate
                try:
                    await Replay(self, on, stop).run()
                except AclError:
                    if not self._aborted:
                        raise
                finally:
                    self.executions += 1
            self.raise_if_aborted()


def runnable_build(model: BuildModel) -> None:
    """What aclmdlRIExecute(Async) requires of a Build model (507011 otherwise)."""
    if model.end is None:
        raise AclError(
            ACL_ERROR_RT_MODEL_EXECUTE,
            f"{model} has no end task: call aclmdlRIEndTask on the stream where its paths meet before executing it",
        )
    if not model.loaded:
        raise AclError(
            ACL_ERROR_RT_MODEL_EXECUTE, f"{model} is not built yet: call aclmdlRIBuildEnd before executing it"
        )
