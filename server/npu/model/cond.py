"""Conditional models (aclmdlRICondHandle and the condition task of aclmdlRIAddCondTask; modelri spec 4).

A cond handle is an 8-byte word of device memory owned by a capturing model (root or sub-model): whoever writes
it -- a kernel, a copy, aclrtValueWrite, the host -- decides what the condition task does when it runs. The task
reads the word as a signed 64-bit integer in its parent lane and replays the chosen sub-model inline there, the
lane waiting for it: IF runs [0] on non-zero and [1] (when there is one) on zero; WHILE runs [0] as long as the
word reads non-zero, looking again after each run; SWITCH runs [value] for 0 <= value < size and nothing for any
other value. Each task counts, per branch, the runs it made (the debug print and the model graph show them).

A WHILE loop runs its body at most `Machine.max_while_iterations` times per evaluation (VNPU_MAX_WHILE_ITERATIONS):
past that the replay fails naming the model and the bound, so a loop that never clears its word cannot hang a
stream. It yields to the event loop every few iterations so that other streams and clients go on meanwhile.

Sub-models nest at most MAX_COND_DEPTH deep (the runtime sets no bound; a replay recurses a few frames a level):
a condition task whose branches would be deeper is refused when it is added (207012, ACL_ERROR_RT_OVER_LIMIT).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

import numpy as np

from proto.constants import aclmdlRICondHandleFlag, aclmdlRICondTaskType
from proto.errors import ACL_ERROR_RT_MODEL_EXECUTE, ACL_ERROR_RT_STREAM_ABORT, AclError

if TYPE_CHECKING:
    from server.npu.core.lane import Lane

IF = aclmdlRICondTaskType.ACL_MODEL_RI_COND_TYPE_IF
WHILE = aclmdlRICondTaskType.ACL_MODEL_RI_COND_TYPE_WHILE
SWITCH = aclmdlRICondTaskType.ACL_MODEL_RI_COND_TYPE_SWITCH
ASSIGN_DEFAULT = aclmdlRICondHandleFlag.ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT
YIELD_EVERY = 64  # WHILE iterations between two turns given to the event loop
MAX_COND_DEPTH = 64  # sub-models below a root model, counting the deepest


class Branch(Protocol):
    """What a condition task needs of the sub-models it runs (`ModelRI`, which names these classes by it)."""

    async def replay(self, on: Lane) -> None: ...


M = TypeVar("M", bound=Branch)


@dataclass(eq=False)
class CondHandle(Generic[M]):
    """aclmdlRICondHandle: the device word `ptr` of `model`, and the condition task that reads it (one at most)."""

    handle: int
    model: M
    ptr: int
    default: int  # aclmdlRICondHandleCreate's defaultLaunchValue
    flag: int  # 0 or ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT
    task: CondTask[M] | None = None

    def __repr__(self) -> str:
        return f"cond handle {self.handle:#x} (word {self.ptr:#x} of {self.model})"


@dataclass(eq=False)
class CondTask(Generic[M]):
    """The condition task of a model lane: which sub-model runs is read from `cond`'s word when it runs."""

    cond: CondHandle[M]
    kind: aclmdlRICondTaskType
    branches: tuple[M, ...]
    runs: list[int] = field(default_factory=list)  # per branch: how often it ran
    idle: int = 0  # evaluations that ran no branch
    api: str = "aclmdlRIAddCondTask"

    def __post_init__(self) -> None:
        self.runs = [0] * len(self.branches)

    def describe(self) -> str:
        ran = ", ".join(f"[{i}] {m} ran {n}x" for i, (m, n) in enumerate(zip(self.branches, self.runs, strict=True)))
        return f"{self.kind.name[len('ACL_MODEL_RI_COND_TYPE_') :]} on {self.cond}: {ran}; {self.idle}x no branch"

    def read(self, lane: Lane) -> int:
        return int(lane.machine.device_region(self.cond.ptr, 8).view(np.int64)[0])

    async def run(self, lane: Lane) -> None:
        value = self.read(lane)
        if self.kind is WHILE:
            await self._loop(lane, value)
            return
        if self.kind is IF:
            index = 0 if value != 0 else (1 if len(self.branches) == 2 else None)
        else:  # SWITCH: a negative value, or one past the last branch, runs nothing
            index = value if 0 <= value < len(self.branches) else None
        if index is None:
            self.idle += 1
            return
        self.runs[index] += 1
        await self.branches[index].replay(lane)

    async def _loop(self, lane: Lane, value: int) -> None:
        body, bound, count = self.branches[0], lane.machine.max_while_iterations, 0
        if value == 0:
            self.idle += 1
        while value != 0:
            if count >= bound:
                raise AclError(
                    ACL_ERROR_RT_MODEL_EXECUTE,
                    f"the WHILE loop on {self.cond} ran its body {body} {bound} times and the word still reads "
                    f"{value}: the body (or a task it waits for) must set the word to 0 to end the loop; the bound "
                    "is VNPU_MAX_WHILE_ITERATIONS",
                )
            if lane.closing.done():
                raise AclError(ACL_ERROR_RT_STREAM_ABORT, f"{lane} gave up the WHILE loop on {self.cond}")
            self.runs[0] += 1
            count += 1
            await body.replay(lane)
            if count % YIELD_EVERY == 0:
                await asyncio.sleep(0)
            value = self.read(lane)
