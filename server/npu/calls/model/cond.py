"""Conditional model calls: aclmdlRICondHandleCreate, aclmdlRICondHandleGetCondPtr, aclmdlRIAddCondTask,
aclmdlRICaptureToModelRIBegin (modelri spec 4), with the checks in the runtime's order; the semantics live in
`server.npu.model.cond`. A sub-model's capture ends with aclmdlRICaptureEnd (calls.model.capture); from C its
modelRI may be NULL, which reaches the daemon as vnpuCaptureEndNoModel (there too)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from proto.constants import ACL_STREAM_CPU_SCHEDULE, aclmdlRICaptureMode, aclmdlRICondTaskType
from proto.enumtext import not_member
from proto.errors import (
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_MODEL_CAPTURED,
    ACL_ERROR_RT_OVER_LIMIT,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_NOT_CAPTURED,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.core.caller import caller_thread
from server.npu.memory.arena import OutOfSpace
from server.npu.model import cond as conditions
from server.npu.model.capture import Capture
from server.npu.model.cond import IF, SWITCH, WHILE, CondHandle, CondTask
from server.npu.model.model import ModelRI, depth_of
from server.npu.model.state import ModelKind, ModelStatus

P = ACL_ERROR_RT_PARAM_INVALID
_SIZES = {IF: "1 or 2", WHILE: "1", SWITCH: "at least 1"}


class CondCalls(Area):
    @acl_call
    def aclmdlRICondHandleCreate(self, model_ri: int | None, default_launch_value: int, flag: int) -> int:
        """An 8-byte device word, zeroed, owned by the capturing `model_ri` (freed with it)."""
        owner = self.ctx.model(model_ri)
        require(flag in (0, 1), f"flag {flag} is not 0 or ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT (1)", P)
        if owner.kind is ModelKind.BUILD:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                f"{owner} is a Build model (aclmdlRIBuildBegin): cond handles belong to captured models",
            )
        if owner.status is not ModelStatus.CAPTURE_ACTIVE:
            raise AclError(
                P,
                f"{owner} is {owner.state}: a cond handle is created on a model while its capture is active "
                "(between aclmdlRICaptureBegin or aclmdlRICaptureToModelRIBegin and aclmdlRICaptureEnd)",
            )
        try:
            block = owner.device.arena.malloc(8, 0)
        except OutOfSpace as full:
            raise AclError(ACL_ERROR_RT_MEMORY_ALLOCATION, f"no room for the cond handle's word: {full}") from None
        owner.device.arena.region(block.ptr, 8)[:] = 0
        cond = CondHandle(self.machine.new_handle(), owner, block.ptr, default_launch_value, flag)
        owner.conds.append(cond)
        self.ctx.cond_handles[cond.handle] = cond
        self.ctx.memory.words.add(cond.ptr)
        return cond.handle

    @acl_call
    def aclmdlRICondHandleGetCondPtr(self, handle: int | None) -> int:
        """The handle's device word (a uint64_t *), usable as long as its model lives."""
        return self._cond(handle).ptr

    @acl_call
    def aclmdlRIAddCondTask(self, params: Mapping[str, Any] | None, stream: int | None, flags: int) -> list[int]:
        """Creates `size` empty sub-models (the C modelRIArray, returned) and appends the condition task to the
        capturing `stream`."""
        require(bool(stream), "stream is NULL")
        require(params is not None, "params is NULL", P)
        assert params is not None
        target = self.ctx.stream(stream)
        handle, kind, size = params.get("handle"), params.get("type", 0), params.get("size", 0)
        cond = self._cond(handle) if handle else None
        if kind not in aclmdlRICondTaskType._value2member_map_:
            raise AclError(P, not_member("params.type", kind, aclmdlRICondTaskType))
        require(flags == 0, f"flags is reserved and must be 0, got {flags}", P)
        require(cond is not None, "params.handle is NULL: create one with aclmdlRICondHandleCreate", P)
        require(params.get("modelRIArray") != 0, "params.modelRIArray is NULL: it receives the sub-models", P)
        assert cond is not None
        if cond.task is not None:
            raise AclError(P, f"{cond} already has a condition task: one handle drives one task")
        if self.ctx.stream_contexts.get(target.handle) is not self.ctx.acl_context():
            raise AclError(ACL_ERROR_RT_STREAM_CONTEXT, f"{target} is not a stream of this thread's context")
        capture = self.ctx.capturing.get(target)
        if capture is None:
            raise AclError(ACL_ERROR_RT_STREAM_NOT_CAPTURED, f"{target} is not capturing: a condition task is captured")
        if capture.model is not cond.model:
            raise AclError(
                P, f"{target} captures {capture.model}, but {cond} belongs to {cond.model}: add the task to its owner"
            )
        kind = aclmdlRICondTaskType(kind)
        if not (size in (1, 2) if kind is IF else size == 1 if kind is WHILE else size >= 1):
            raise AclError(P, f"params.size {size}: a {kind.name} task takes {_SIZES[kind]} sub-model(s)")
        depth, bound = depth_of(capture.model) + 1, conditions.MAX_COND_DEPTH
        if depth > bound:
            raise AclError(
                ACL_ERROR_RT_OVER_LIMIT,
                f"the branches of this condition task would be sub-models {depth} deep below their root model: "
                f"vnpu nests conditional models at most {bound} deep (MAX_COND_DEPTH)",
            )
        branches = tuple(self._sub_model(capture.model) for _ in range(size))
        task = CondTask(cond, kind, branches)
        try:
            self.ctx.issue(target, task)
        except AclError:
            for branch in branches:
                capture.model.children.remove(branch)
                self.ctx.drop_model(branch)
            raise
        cond.task = task
        return [branch.handle for branch in branches]

    @acl_call
    def aclmdlRICaptureToModelRIBegin(self, stream: int | None, model_ri: int | None, mode: int) -> None:
        """Capture `stream`'s work into the sub-model `model_ri`, as aclmdlRICaptureBegin does into a new model."""
        require(bool(stream), "stream is NULL")
        require(bool(model_ri), "modelRI is NULL")
        target = self.ctx.stream(stream)
        sub = self.ctx.model(model_ri)
        if mode not in aclmdlRICaptureMode._value2member_map_:
            raise AclError(P, not_member("mode", mode, aclmdlRICaptureMode))
        if target.flags & ACL_STREAM_CPU_SCHEDULE:
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR, f"{target} was created with ACL_STREAM_CPU_SCHEDULE, which cannot capture"
            )
        if sub.kind is not ModelKind.SUB:
            raise AclError(
                P,
                f"{sub} is not a sub-model: aclmdlRICaptureToModelRIBegin captures into a branch that "
                "aclmdlRIAddCondTask created; use aclmdlRICaptureBegin for a model of its own",
            )
        if self.ctx.stream_contexts.get(target.handle) is not self.ctx.acl_context():
            raise AclError(ACL_ERROR_RT_STREAM_CONTEXT, f"{target} is not a stream of this thread's context")
        if target.default:
            raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"the {target} cannot capture: use a stream of your own")
        if sub.status is not ModelStatus.NONE:
            raise AclError(
                ACL_ERROR_RT_MODEL_CAPTURED, f"{sub} is {sub.state}: a sub-model is captured once, and only once"
            )
        if target in self.ctx.capturing:
            raise AclError(
                ACL_ERROR_RT_STREAM_CAPTURED, f"{target} is already capturing ({self.ctx.capturing[target]})"
            )
        sub.status = ModelStatus.CAPTURE_ACTIVE
        self.ctx.capturing[target] = Capture(sub, target, mode, caller_thread())

    def _cond(self, handle: int | None) -> CondHandle[ModelRI]:
        require(bool(handle), "handle is NULL")
        cond = self.ctx.cond_handles.get(handle or 0)
        if cond is None:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.ctx.handles.not_a("cond handle", handle or 0))
        return cond

    def _sub_model(self, parent: ModelRI) -> ModelRI:
        parent.device.models.take(self.ctx.quota)
        sub = ModelRI(self.machine.new_handle(), parent.device, ModelKind.SUB)
        sub.parent = parent
        parent.children.append(sub)
        self.ctx.sub_models[sub.handle] = sub
        return sub
