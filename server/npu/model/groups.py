"""Task groups and their update, the seed's feature: kernels captured between aclmdlRICaptureTaskGrpBegin and End
(`TaskGroup`, placed in its lane by a `GroupTask`), rewritten in place by a task update on another stream
(`Update` collects the new kernels, `UpdateApplyTask` swaps them in, in stream order)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from proto.errors import (
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
    AclError,
)
from server.npu.core.trace import traced
from server.npu.kernels.task import AnyKernel, CustomKernelTask

if TYPE_CHECKING:
    from server.npu.core.lane import Lane, Task


class Sequenced(Protocol):
    """What a group needs of its model (`ModelRI`): the capture order of its tasks, which an update keeps."""

    seq_ids: dict[int, int]  # id() of a task -> its sequence number (aclmdlRITaskGetSeqId)


@dataclass(eq=False)
class TaskGroup:
    """aclrtTaskGrp: kernels captured between TaskGrpBegin and TaskGrpEnd, rewritable by a task update."""

    handle: int
    model: Sequenced
    kernels: tuple[AnyKernel, ...] = ()
    updates_applied: int = 0
    updater: object | None = None  # the stream whose update of this group is in progress

    def describe(self) -> str:
        return f"task group {self.handle:#x} ({len(self.kernels)} kernel(s), {self.updates_applied} update(s))"


@dataclass(eq=False)
class GroupTask:
    """The place of a task group in its lane."""

    group: TaskGroup
    api: str = "aclmdlRICaptureTaskGrpEnd"

    def describe(self) -> str:
        return self.group.describe()

    def title(self) -> str:
        return f"task group {self.group.handle:#x}"

    async def run(self, lane: Lane) -> None:
        for kernel in self.group.kernels:  # the tuple is taken once: an update mid-replay cannot mix
            await traced(lane.machine.tracer, kernel, lane, lane.where, self.group.handle)


@dataclass(eq=False)
class UpdateApplyTask:
    """Swaps a group's kernels for the ones an update collected; queued on the update stream."""

    group: TaskGroup
    kernels: tuple[AnyKernel, ...]
    api: str = "aclmdlRICaptureTaskUpdateEnd"

    def describe(self) -> str:
        return f"update of {self.group.describe()}"

    def title(self) -> str:
        return f"update of task group {self.group.handle:#x}"

    async def run(self, lane: Lane) -> None:
        model = self.group.model
        for old, new in zip(self.group.kernels, self.kernels, strict=False):  # a kernel keeps its sequence number
            if id(old) in model.seq_ids:
                model.seq_ids[id(new)] = model.seq_ids.pop(id(old))
        self.group.kernels = self.kernels
        self.group.updates_applied += 1


@dataclass(eq=False)
class Update:
    """A task update in progress on a stream (aclmdlRICaptureTaskUpdateBegin .. End): the i-th kernel launched
    on the stream is collected as the new i-th kernel of `group`."""

    group: TaskGroup
    thread: Hashable = None  # the client thread that began it (a process that dies drops its updates)
    kernels: list[AnyKernel] = field(default_factory=list)

    def collect(self, task: Task) -> None:
        if not isinstance(task, AnyKernel):
            raise AclError(
                ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
                f"only kernel launches (aclnn phase 2, custom kernels) may be issued during a task update, not "
                f"{task.describe()}",
            )
        index = len(self.kernels)
        if index >= len(self.group.kernels):
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR,
                f"one launch too many: {self.group.describe()} has {len(self.group.kernels)} kernel(s)",
            )
        old = self.group.kernels[index]
        if not isinstance(old, AnyKernel):
            raise AclError(
                ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
                f"task #{index} of {self.group.describe()} is no longer a kernel ({old.describe()}, made by "
                "aclmdlRITaskSetParams): it cannot be updated",
            )
        if _kind(old) != _kind(task):
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR,
                f"kernel #{index} of {self.group.describe()} is a {_kind(old)} kernel ({old.describe()}); "
                f"a {_kind(task)} kernel ({task.describe()}) cannot replace it",
            )
        self.kernels.append(task)


def _kind(task: AnyKernel) -> str:
    """aclnn kernels by their engine (vector, cube); a custom kernel only by a custom kernel."""
    return task.kernel_kind if isinstance(task, CustomKernelTask) else task.kernel.kernel_kind
