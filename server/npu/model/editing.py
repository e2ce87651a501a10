"""aclmdlRITask: one task of a model, as the introspection and editing calls see it (spec-modelri 3).

A `TaskRef` is the handle of one persisted task: a task of a lane, or one kernel of a task group (a group's
kernels are tasks of their own, listed in issue order where the group stands). Handles are made the first time a
task is listed and stay the same across aclmdlRIUpdate for the tasks it keeps.

Editing works on a host copy, as in the runtime: aclmdlRITaskSetParams puts the new task in `edit` and
aclmdlRITaskDisable sets `disabled`; replays keep running what the lanes hold until `apply_edits` (aclmdlRIUpdate)
rewrites them: edited tasks replace their originals in place (a grouped kernel keeps its slot, so a later task
update rewrites it again), disabled ones leave their lane or group, and a lane left with no task gets a NOP.

`task_type` is the mapping of aclmdlRITaskGetType (3.4) and `EVENT_FORMS` the event members of
aclmdlRITaskGetParams (3.5): a task class absent from `TASK_TYPES` is DEFAULT. Both are tables other task kinds
extend (an EXTERNAL record is DEFAULT for GetType and an EVENT_RECORD with flag 1 for GetParams, an EXTERNAL wait
an EVENT_WAIT with flag 1: the runtime's kernel_utils.cc ConvertTaskType and memory_task.cc GetCapture*TaskParams).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from proto.aclnn import aclScalar
from proto.constants import aclmdlRITaskType
from server.npu.kernels.task import AnyKernel, CustomKernelTask
from server.npu.model.external import ExternalRecordTask, ExternalWaitTask
from server.npu.model.groups import GroupTask, TaskGroup
from server.npu.model.model import CaptureRecord, CaptureWait, ModelLane, ModelRI
from server.npu.tasks.event import RecordTask, ResetTask, WaitTask
from server.npu.tasks.kernel import KernelTask
from server.npu.tasks.value import ValueWaitTask, ValueWriteTask

if TYPE_CHECKING:
    from server.npu.core.lane import Lane, Task

T = aclmdlRITaskType
TASK_TYPES: dict[type, aclmdlRITaskType] = {
    KernelTask: T.ACL_MODEL_RI_TASK_KERNEL,
    CustomKernelTask: T.ACL_MODEL_RI_TASK_KERNEL,
    RecordTask: T.ACL_MODEL_RI_TASK_EVENT_RECORD,
    CaptureRecord: T.ACL_MODEL_RI_TASK_EVENT_RECORD,
    WaitTask: T.ACL_MODEL_RI_TASK_EVENT_WAIT,
    CaptureWait: T.ACL_MODEL_RI_TASK_EVENT_WAIT,
    ResetTask: T.ACL_MODEL_RI_TASK_EVENT_RESET,
    ValueWriteTask: T.ACL_MODEL_RI_TASK_VALUE_WRITE,
    ValueWaitTask: T.ACL_MODEL_RI_TASK_VALUE_WAIT,
}
# task class -> (the params type GetParams reports, its union member, the member's flag field, the flag's value)
EVENT_FORMS: dict[type, tuple[aclmdlRITaskType, str, str, int]] = {
    RecordTask: (T.ACL_MODEL_RI_TASK_EVENT_RECORD, "eventRecordTaskParams", "recordFlag", 0),
    CaptureRecord: (T.ACL_MODEL_RI_TASK_EVENT_RECORD, "eventRecordTaskParams", "recordFlag", 0),
    WaitTask: (T.ACL_MODEL_RI_TASK_EVENT_WAIT, "eventWaitTaskParams", "waitFlag", 0),
    CaptureWait: (T.ACL_MODEL_RI_TASK_EVENT_WAIT, "eventWaitTaskParams", "waitFlag", 0),
    ResetTask: (T.ACL_MODEL_RI_TASK_EVENT_RESET, "eventResetTaskParams", "resetFlag", 0),
    ExternalRecordTask: (T.ACL_MODEL_RI_TASK_EVENT_RECORD, "eventRecordTaskParams", "recordFlag", 1),
    ExternalWaitTask: (T.ACL_MODEL_RI_TASK_EVENT_WAIT, "eventWaitTaskParams", "waitFlag", 1),
}
UNION: dict[str, dict[str, Any]] = {
    "kernelTaskParams": {"funcHandle": 0, "cfg": None, "args": 0, "isHostArgs": 0, "argsSize": 0, "numBlocks": 0},
    "eventRecordTaskParams": {"event": 0, "eventFlag": 0, "recordFlag": 0},
    "eventWaitTaskParams": {"event": 0, "eventFlag": 0, "waitFlag": 0},
    "eventResetTaskParams": {"event": 0, "eventFlag": 0, "resetFlag": 0},
    "valueWriteTaskParams": {"devAddr": 0, "value": 0},
    "valueWaitTaskParams": {"devAddr": 0, "value": 0, "flag": 0},
}


def describe_params(task: Task) -> str:
    """A task with the parameters an edit may change: a kernel's scalars, a value task's fields."""
    if isinstance(task, KernelTask):
        scalars = [
            f"{name}={_shown(arg.value)}" for name, arg in task.kernel.args.items() if isinstance(arg, aclScalar)
        ]
        return f"{task.kernel.op}({', '.join(scalars)})"
    return task.describe()


def _shown(value: object) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def task_type(task: Task) -> aclmdlRITaskType:
    """aclmdlRITaskGetType's answer for `task` (memcpy, memset, host functions, NOPs... are DEFAULT)."""
    return TASK_TYPES.get(type(task), T.ACL_MODEL_RI_TASK_DEFAULT)


def zeroed_params() -> dict[str, Any]:
    """aclmdlRITaskParams with every field zero, as GetParams starts from."""
    params: dict[str, Any] = {"type": 0, "taskGrp": 0, "opInfoPtr": 0, "opInfoSize": 0}
    params.update({member: dict(fields) for member, fields in UNION.items()})
    return params


@dataclass(frozen=True)
class NopTask:
    """What aclmdlRIUpdate leaves in a lane whose every task was disabled (a DEFAULT task)."""

    api: str = "aclmdlRIUpdate"

    def describe(self) -> str:
        return "NOP (every task of this stream was disabled)"

    async def run(self, lane: Lane) -> None:
        return None


@dataclass(eq=False)
class TaskRef:
    """aclmdlRITask: a task of `model`'s `lane`, or (with `group`) kernel number `index` of a task group."""

    handle: int
    model: ModelRI
    lane: ModelLane
    seq: int
    base: Task | None = None  # the lane's task (ungrouped)
    group: TaskGroup | None = None
    index: int = 0
    edit: Task | None = None  # aclmdlRITaskSetParams' task, which aclmdlRIUpdate puts in place
    disabled: bool = False
    removed: bool = False  # disabled, and taken out by aclmdlRIUpdate: the handle dangles
    attrs: dict[int, int] = field(default_factory=dict)  # launch attributes (aclrtLaunchKernelAttrId -> value)
    op_info: tuple[int, int] = (0, 0)  # opInfoPtr, opInfoSize
    num_blocks: int = 1
    args_block: tuple[int, int] = (0, 0)  # the device argument block GetParams made: pointer, capacity

    def __str__(self) -> str:
        where = f"kernel #{self.index} of {self.group.describe()}" if self.group else self.live.describe()
        return f"task {self.handle:#x} ({where}) of {self.model}"

    @property
    def live(self) -> Task:
        """What replays run now."""
        if self.group is not None:
            return self.group.kernels[self.index]
        assert self.base is not None
        return self.base

    @property
    def current(self) -> Task:
        """The host copy: the edited task once SetParams succeeded, what GetParams reports."""
        return self.edit if self.edit is not None else self.live


class ModelTasks:
    """The task handles of one model, and its lanes' stream handles (aclmdlRIGetStreams)."""

    def __init__(self, model: ModelRI) -> None:
        self.model = model
        self.by_task: dict[int, TaskRef] = {}  # id() of a lane's task -> its ref
        self.by_slot: dict[tuple[int, int], TaskRef] = {}  # (group handle, index) -> ref
        self.lane_handles: dict[int, int] = {}  # id() of a lane -> its stream handle

    def refs(self) -> list[TaskRef]:
        return [*self.by_task.values(), *self.by_slot.values()]

    def listing(self, lane: ModelLane, new_handle: Any) -> list[TaskRef]:
        """The tasks of `lane` in issue order, a group's kernels one by one; `new_handle()` numbers new refs."""
        found = []
        for task in lane.tasks:
            if isinstance(task, GroupTask):
                group = task.group
                for index, kernel in enumerate(group.kernels):
                    ref = self.by_slot.get((group.handle, index))
                    if ref is None:
                        seq = self.model.seq_ids.get(id(kernel), -1)
                        ref = TaskRef(new_handle(), self.model, lane, seq, group=group, index=index)
                        self.by_slot[(group.handle, index)] = ref
                    found.append(ref)
                continue
            ref = self.by_task.get(id(task))
            if ref is None or ref.base is not task:
                ref = TaskRef(new_handle(), self.model, lane, self.model.seq_ids.get(id(task), -1), base=task)
                self.by_task[id(task)] = ref
            found.append(ref)
        return found

    def apply_edits(self) -> None:
        """aclmdlRIUpdate: the edits reach the lanes the replays run."""
        model = self.model
        for lane in model.lanes:
            kept: list[Task] = []
            for task in lane.tasks:
                if isinstance(task, GroupTask):
                    self._apply_group(task.group)
                    kept.append(task)
                    continue
                ref = self.by_task.get(id(task))
                if ref is None or ref.base is not task:
                    kept.append(task)
                elif ref.disabled:
                    ref.removed = True
                    del self.by_task[id(task)]
                    model.edits.append(f"disabled {task.describe()}")
                elif ref.edit is not None:
                    new, ref.edit = ref.edit, None
                    model.edits.append(f"{describe_params(task)} -> {describe_params(new)}")
                    model.edited.discard(id(task))
                    model.edited.add(id(new))
                    del self.by_task[id(task)]
                    model.seq_ids.pop(id(task), None)
                    model.seq_ids[id(new)] = ref.seq
                    ref.base = new
                    self.by_task[id(new)] = ref
                    kept.append(new)
                else:
                    kept.append(task)
            if not any(not isinstance(t, GroupTask) or t.group.kernels for t in kept):
                nop = NopTask()
                model.number(nop)
                kept.append(nop)
            lane.tasks[:] = kept

    def _apply_group(self, group: TaskGroup) -> None:
        kernels: list[Task] = []
        refs: list[TaskRef] = []
        for index, kernel in enumerate(group.kernels):
            ref = self.by_slot.pop((group.handle, index), None)
            if ref is not None and ref.disabled:
                ref.removed = True
                self.model.edits.append(f"disabled {kernel.describe()} (kernel #{index} of {group.describe()})")
                continue
            if ref is not None and ref.edit is not None:
                before, (kernel, ref.edit) = kernel, (cast(KernelTask, ref.edit), None)
                self.model.edits.append(f"{describe_params(before)} -> {describe_params(kernel)} (in a task group)")
                self.model.edited.add(id(kernel))
                self.model.seq_ids[id(kernel)] = ref.seq
            if ref is not None:
                ref.index = len(kernels)
                refs.append(ref)
            kernels.append(kernel)
        for ref in refs:
            self.by_slot[(group.handle, ref.index)] = ref
        group.kernels = cast(tuple[AnyKernel, ...], tuple(kernels))  # a converted kernel may be a value task now
