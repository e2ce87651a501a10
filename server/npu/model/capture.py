"""A stream capture in progress (aclmdlRICaptureBegin .. aclmdlRICaptureEnd) and its rules (spec 1.2, 2, 3.4).

Work issued to a capturing stream is recorded into the capture's lanes instead of being run. Streams join the
capture by waiting on one of its events; a task group collects kernels between TaskGrpBegin and TaskGrpEnd.
`end_problem` runs the checks of aclmdlRICaptureEnd that are about the captured graph, in the runtime's order.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from proto.errors import (
    ACL_ERROR_RT_CAPTURE_DEPENDENCY,
    ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
    ACL_ERROR_RT_STREAM_UNJOINED,
    ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
    ACL_ERROR_STREAM_TASK_GROUP_INTR,
    ACL_ERROR_STREAM_TASK_GROUP_STATUS,
    AclError,
)
from server.npu.kernels.task import AnyKernel
from server.npu.model.groups import GroupTask, TaskGroup
from server.npu.model.model import CaptureRecord, CaptureWait, ModelLane, ModelRI
from server.npu.model.state import ModelStatus

if TYPE_CHECKING:
    from server.npu.core.event import Event
    from server.npu.core.lane import Task
    from server.npu.core.stream import Stream


class Capture:
    """The capture of `model`, begun on `origin` by `thread` in `mode`."""

    def __init__(self, model: ModelRI, origin: Stream, mode: int, thread: Hashable) -> None:
        self.model = model
        self.origin = origin
        self.mode = mode
        self.thread = thread
        self.lanes: dict[Stream, ModelLane] = {origin: ModelLane(origin.handle)}
        self.events: dict[Event, CaptureRecord] = {}  # capture events: their latest record in this capture
        self.invalid: AclError | None = None
        self.group: GroupTask | None = None
        self.group_stream: Stream | None = None
        self.group_kernels: list[AnyKernel] = []
        self.group_error: AclError | None = None

    def __repr__(self) -> str:
        return f"the capture of {self.model} begun on {self.origin}"

    @property
    def streams(self) -> list[Stream]:
        return list(self.lanes)

    def join(self, stream: Stream) -> None:
        self.lanes[stream] = ModelLane(stream.handle)

    def invalidate(self, error: AclError) -> None:
        if self.invalid is None:
            self.invalid = error
            self.model.status = ModelStatus.CAPTURE_INVALIDATED

    def add(self, stream: Stream, task: Task) -> None:
        """Record `task`, issued to `stream`, into the model (the group rules first)."""
        if self.group is not None:
            if stream is not self.group_stream:
                self._group_fails(
                    ACL_ERROR_STREAM_TASK_GROUP_INTR,
                    f"a task group is open on {self.group_stream}: no other stream of the capture may issue work "
                    f"until aclmdlRICaptureTaskGrpEnd ({task.describe()} on {stream})",
                )
            if not isinstance(task, AnyKernel):
                self._group_fails(
                    ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
                    "only kernel launches (aclnn phase 2, custom kernels) may be in a task group, not "
                    f"{task.describe()}",
                )
            assert isinstance(task, AnyKernel)
            self.model.number(task)
            self.group_kernels.append(task)
            return
        self.model.persist(self.lanes[stream], task)

    def begin_group(self, stream: Stream, handle: int) -> None:
        self.group = GroupTask(TaskGroup(handle, self.model))
        self.group_stream = stream
        self.group_kernels = []
        self.group_error = None

    def end_group(self) -> TaskGroup:
        """Close the open group; raise its error (or the capture's invalidation) instead of returning it."""
        assert self.group is not None and self.group_stream is not None
        slot, stream, error = self.group, self.group_stream, self.group_error
        self.group, self.group_stream, self.group_error = None, None, None
        if error is not None:
            raise AclError(error.code, f"the task group failed while it was open: {error.message}")
        if self.invalid is not None:
            raise AclError(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, f"{self} was invalidated: {self.invalid}")
        slot.group.kernels = tuple(self.group_kernels)
        self.lanes[stream].tasks.append(slot)
        self.model.groups[slot.group.handle] = slot.group
        return slot.group

    def end_problem(self) -> AclError | None:
        """What aclmdlRICaptureEnd finds wrong with the captured graph, in the runtime's order, or None."""
        if self.invalid is not None:
            return AclError(
                ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, f"{self} was invalidated by an earlier error: {self.invalid}"
            )
        if self.group is not None:
            return AclError(
                ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                f"a task group is still open on {self.group_stream}: call aclmdlRICaptureTaskGrpEnd first",
            )
        unjoined = self._unjoined()
        if unjoined:
            return AclError(
                ACL_ERROR_RT_STREAM_UNJOINED,
                f"{', '.join(map(str, unjoined))} did not rejoin {self.origin}: the last task of every other stream "
                "of the capture must record an event (made with aclrtCreateEventExWithFlag) that the origin waits on",
            )
        recorded = {t for lane in self.lanes.values() for t in lane.tasks if isinstance(t, CaptureRecord)}
        for lane in self.lanes.values():
            for task in lane.tasks:
                if isinstance(task, CaptureWait) and task.record not in recorded:
                    return AclError(
                        ACL_ERROR_RT_CAPTURE_DEPENDENCY, f"{task.describe()} has no matching record in the capture"
                    )
        return None

    def _unjoined(self) -> list[Stream]:
        """Streams whose last task is not a record that the origin waits on, directly or through others."""
        waited_by: dict[CaptureRecord, set[Stream]] = {}
        for stream, lane in self.lanes.items():
            for task in lane.tasks:
                if isinstance(task, CaptureWait):
                    waited_by.setdefault(task.record, set()).add(stream)
        joined = {self.origin}
        changed = True
        while changed:
            changed = False
            for stream, lane in self.lanes.items():
                last = lane.tasks[-1] if lane.tasks else None
                if stream not in joined and isinstance(last, CaptureRecord) and waited_by.get(last, set()) & joined:
                    joined.add(stream)
                    changed = True
        return [s for s in self.lanes if s not in joined]

    def _group_fails(self, code: int, message: str) -> None:
        error = AclError(code, message)
        if self.group_error is None:
            self.group_error = error
        raise error
