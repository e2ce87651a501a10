"""Stream capture and task update calls: aclmdlRICaptureBegin/GetInfo/End/ThreadExchangeMode,
aclmdlRICaptureTaskGrpBegin/End and aclmdlRICaptureTaskUpdateBegin/End (spec sections 1 and 2)."""

from __future__ import annotations

from proto.constants import ACL_STREAM_CPU_SCHEDULE, ACL_STREAM_PERSISTENT, aclmdlRICaptureMode, aclmdlRICaptureStatus
from proto.enumtext import not_member
from proto.errors import (
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED,
    ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
    ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_MODEL,
    ACL_ERROR_RT_STREAM_NOT_CAPTURED,
    ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING,
    ACL_ERROR_STREAM_TASK_GROUP_INTR,
    ACL_ERROR_STREAM_TASK_GROUP_STATUS,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.core.caller import caller_thread
from server.npu.core.stream import Stream
from server.npu.model.capture import Capture
from server.npu.model.groups import TaskGroup, Update, UpdateApplyTask
from server.npu.model.model import ModelRI, unfinished
from server.npu.model.state import ModelKind, ModelStatus

RELAXED = aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_RELAXED


class CaptureCalls(Area):
    @acl_call
    def aclmdlRICaptureBegin(self, stream: int | None, mode: int) -> None:
        require(bool(stream), "stream is NULL: the default stream cannot be captured")
        target = self.ctx.idle_stream(stream, "aclmdlRICaptureBegin")
        if mode not in set(aclmdlRICaptureMode):
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, not_member("mode", mode, aclmdlRICaptureMode))
        if target in self.ctx.updating:
            raise AclError(
                ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                f"{target} is in a task update of {self.ctx.updating[target].group.describe()}: end it "
                "(aclmdlRICaptureTaskUpdateEnd) before capturing on this stream",
            )
        if target.flags & ACL_STREAM_CPU_SCHEDULE:
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR,
                f"{target} was created with ACL_STREAM_CPU_SCHEDULE, which cannot be captured",
            )
        if target in self.ctx.bound:
            raise AclError(
                ACL_ERROR_RT_STREAM_MODEL,
                f"{target} is bound to {self.ctx.bound[target].model} (aclmdlRIBindStream): a model stream cannot "
                "capture",
            )
        self.ctx.check_handles()
        target.device.models.take(self.ctx.quota)
        model = ModelRI(self.machine.new_handle(), target.device)
        self.ctx.models[model.handle] = model
        self.ctx.capturing[target] = Capture(model, target, mode, caller_thread())

    @acl_call
    def aclmdlRICaptureGetInfo(self, stream: int | None) -> tuple[aclmdlRICaptureStatus, int]:
        """(status, model): NONE and 0 when the stream is not capturing."""
        capture = self.ctx.capturing.get(self.ctx.stream(stream))
        if capture is None:
            return aclmdlRICaptureStatus.ACL_MODEL_RI_CAPTURE_STATUS_NONE, 0
        if capture.invalid is not None:
            return aclmdlRICaptureStatus.ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED, capture.model.handle
        return aclmdlRICaptureStatus.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, capture.model.handle

    @acl_call
    def aclmdlRICaptureEnd(self, stream: int | None) -> int:
        """The model; on any failure the model is destroyed and every stream of the capture leaves it."""
        target = self.ctx.stream(stream)
        capture = self._capture_of(target)
        if target is not capture.origin:
            problem: AclError | None = AclError(
                ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED,
                f"{target} joined {capture} through an event; only {capture.origin} can end it",
            )
        elif capture.mode != RELAXED and caller_thread() != capture.thread:
            problem = AclError(
                ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
                f"{capture} was begun by another thread in mode {aclmdlRICaptureMode(capture.mode).name}; "
                "only ACL_MODEL_RI_CAPTURE_MODE_RELAXED captures may end on another thread",
            )
        else:
            problem = capture.end_problem()
            if capture.invalid is None:  # the runtime looks at the branches right after the invalidation
                problem = unfinished_problem(capture) or problem
        self.ctx.leave_capture(capture)
        if capture.model.kind is ModelKind.SUB:  # a failed sub-model End keeps what it captured (modelri spec 4)
            capture.model.lanes = list(capture.lanes.values())
            capture.model.status = ModelStatus.READY
        if problem is not None:
            if capture.model.kind is not ModelKind.SUB:
                self.ctx.drop_model(capture.model)
            raise problem
        capture.model.lanes = list(capture.lanes.values())
        capture.model.status = ModelStatus.READY
        return capture.model.handle

    @acl_call
    def vnpuCaptureEndNoModel(self, stream: int | None) -> None:
        """aclmdlRICaptureEnd(stream, NULL) from C: ends a sub-model's capture; a root model's capture needs
        somewhere to put the model (107000, the capture goes on)."""
        capture = self.ctx.capturing.get(self.ctx.stream(stream))
        if capture is not None and capture.model.kind is not ModelKind.SUB:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"modelRI is NULL: ending {capture} returns the model through it (only a sub-model's capture may "
                "end with NULL); the capture goes on",
                "aclmdlRICaptureEnd",
            )
        self.aclmdlRICaptureEnd(stream)

    @acl_call
    def aclmdlRICaptureThreadExchangeMode(self, mode: int) -> aclmdlRICaptureMode:
        """Set the calling thread's mode for unsafe calls; returns the previous one."""
        if mode not in set(aclmdlRICaptureMode):
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, not_member("mode", mode, aclmdlRICaptureMode))
        thread = caller_thread()
        old = self.ctx.exchange_modes.get(thread, aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        self.ctx.exchange_modes[thread] = aclmdlRICaptureMode(mode)
        return old

    @acl_call
    def aclmdlRICaptureTaskGrpBegin(self, stream: int | None) -> None:
        target = self.ctx.stream(stream)
        capture = self._capture_of(target)
        if capture.group is not None:
            if capture.group_stream is target:
                raise AclError(ACL_ERROR_STREAM_TASK_GROUP_STATUS, f"a task group is already open on {target}")
            raise AclError(
                ACL_ERROR_STREAM_TASK_GROUP_INTR, f"a task group of the same capture is open on {capture.group_stream}"
            )
        if target in self.ctx.updating:
            raise AclError(ACL_ERROR_STREAM_TASK_GROUP_STATUS, f"{target} is in a task update")
        self.ctx.check_handles()
        capture.begin_group(target, self.machine.new_handle())

    @acl_call
    def aclmdlRICaptureTaskGrpEnd(self, stream: int | None) -> int:
        """The group's handle (an aclrtTaskGrp), which lives as long as its model."""
        target = self.ctx.stream(stream)
        capture = self._capture_of(target)
        if capture.group is None or capture.group_stream is not target:
            raise AclError(ACL_ERROR_STREAM_TASK_GROUP_STATUS, f"no task group is open on {target}")
        group = capture.end_group()
        self.ctx.groups[group.handle] = group
        return group.handle

    @acl_call
    def aclmdlRICaptureTaskUpdateBegin(self, stream: int | None, handle: int | None) -> None:
        require(bool(stream), "stream is NULL: updates need a stream of their own")
        require(bool(handle), "handle is NULL")
        target = self.ctx.stream(stream)
        group = self._group(handle)
        if target in self.ctx.capturing:
            raise AclError(ACL_ERROR_RT_STREAM_CAPTURED, f"{target} is capturing; an update stream must not be")
        if target.flags & ACL_STREAM_PERSISTENT:
            raise AclError(ACL_ERROR_RT_STREAM_MODEL, f"{target} is a model stream (ACL_STREAM_PERSISTENT)")
        if target in self.ctx.updating:
            raise AclError(ACL_ERROR_STREAM_TASK_GROUP_STATUS, f"{target} is already in a task update")
        if group.updater is not None:
            raise AclError(
                ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                f"{group.describe()} is being updated from {group.updater}: a task group is a critical resource, "
                "one update at a time",
            )
        group.updater = target
        self.ctx.updating[target] = Update(group, caller_thread())

    @acl_call
    def aclmdlRICaptureTaskUpdateEnd(self, stream: int | None) -> None:
        """Queues the update on the stream (success is not "applied"); a count mismatch leaves the group as it was."""
        target = self.ctx.stream(stream)
        update = self.ctx.updating.pop(target, None)
        if update is None:
            raise AclError(ACL_ERROR_STREAM_TASK_GROUP_STATUS, f"{target} is not in a task update")
        update.group.updater = None
        if len(update.kernels) != len(update.group.kernels):
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR,
                f"the update contains unupdated tasks: {update.group.describe()} needs {len(update.group.kernels)} "
                f"kernel launch(es) between Begin and End, got {len(update.kernels)}; the group is unchanged",
            )
        target.submit(UpdateApplyTask(update.group, tuple(update.kernels)))

    def _capture_of(self, stream: Stream) -> Capture:
        capture = self.ctx.capturing.get(stream)
        if capture is None:
            raise AclError(ACL_ERROR_RT_STREAM_NOT_CAPTURED, f"{stream} is not capturing")
        return capture

    def _group(self, handle: int | None) -> TaskGroup:
        group = self.ctx.groups.get(handle or 0)
        if group is None:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, self.ctx.handles.not_a("task group", handle or 0))
        return group


def unfinished_problem(capture: Capture) -> AclError | None:
    """107045 when a sub-model of the capture's model (at any depth) has not ended its capture."""
    branch = unfinished(capture.model)
    if branch is None:
        return None
    how = "is still capturing" if branch.capturing else "was never captured (aclmdlRICaptureToModelRIBegin)"
    return AclError(
        ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING,
        f"{branch}, a branch of a condition task of {branch.parent}, {how}: end every branch's capture before "
        f"its parent's" + ("" if capture.model.kind is ModelKind.SUB else f"; {capture.model} is destroyed with them"),
    )
