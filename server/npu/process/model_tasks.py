"""A process's handles on the tasks of its models (aclmdlRITask, the capture streams of aclmdlRIGetStreams, the
funcHandles and argument blocks of kernel tasks): what introspection (`calls.model.introspect`) and editing
(`calls.model.edit`) share."""

from __future__ import annotations

import numpy as np

from proto.errors import (
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_MODEL_UPDATE_FAILED,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
    require,
)
from server.npu.memory.allocator import OutOfSpace
from server.npu.model import state
from server.npu.model.editing import ModelTasks, TaskRef
from server.npu.model.model import ModelLane, ModelRI
from server.npu.model.state import ModelKind
from server.npu.process.context import Context

BAD = ACL_ERROR_RT_PARAM_INVALID
ARGS_BLOCK = 512  # the smallest argument block vnpu allocates for a kernel task


def task_ref(ctx: Context, handle: int | None) -> TaskRef:
    require(bool(handle), "task is NULL", BAD)
    ref = ctx.ri_tasks.get(handle or 0)
    if ref is None:
        raise AclError(BAD, f"{handle:#x} is not a task of this context (take one from aclmdlRIGetTasksByStream)")
    if ref.removed:
        raise AclError(BAD, f"task {ref.handle:#x} was disabled and aclmdlRIUpdate removed it from {ref.model}")
    return ref


def check_alive(ref: TaskRef) -> None:
    if ref.model.destroyed:
        raise AclError(ACL_ERROR_RT_INTERNAL_ERROR, f"{ref} has no model any more: {ref.model} was destroyed")


def check_editable(ctx: Context, ref: TaskRef) -> None:
    """The runtime's CheckCaptureModelForUpdate: a capture model, READY or UPDATING, no replay in flight."""
    check_alive(ref)
    model = ref.model
    if model.kind is not ModelKind.CAPTURE:
        model.refuse_sub("editing")
        raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{model} is not a capture model: its tasks are fixed")
    state.check_editable(model, model.status)
    if model.in_flight:
        raise AclError(
            ACL_ERROR_RT_MODEL_UPDATE_FAILED,
            f"{model} has {model.in_flight} replay(s) launched and not finished: synchronize their streams first",
        )


def lanes_of(ctx: Context, model: ModelRI) -> list[ModelLane]:
    if model.capturing:
        for capture in ctx.captures():
            if capture.model is model:
                return list(capture.lanes.values())
    return model.lanes


def tasks_of(ctx: Context, model: ModelRI) -> ModelTasks:
    tasks = ctx.ri_models.get(model.handle)
    if tasks is None:
        tasks = ctx.ri_models[model.handle] = ModelTasks(model)
    return tasks


def lane_handle(ctx: Context, model: ModelRI, lane: ModelLane) -> int:
    handles = tasks_of(ctx, model).lane_handles
    handle = handles.get(id(lane))
    if handle is None:
        handle = handles[id(lane)] = ctx.machine.new_handle()
        ctx.ri_lanes[handle] = (model, lane)
    return handle


def model_lane(ctx: Context, stream: int) -> tuple[ModelRI, ModelLane]:
    found = ctx.ri_lanes.get(stream)
    if found is not None:
        if found[0].destroyed:
            raise AclError(ACL_ERROR_RT_INTERNAL_ERROR, f"stream {stream:#x} belonged to {found[0]}, destroyed")
        return found
    for model in ctx.models.values():
        lane = model.bound_lane(stream)
        if lane is not None:
            return model, lane
    capturing = " (it is capturing: the model's own streams come from aclmdlRIGetStreams)"
    target = ctx.streams.get(stream) or ctx.default_streams[stream]
    raise AclError(
        BAD,
        f"{target} is not bound to a model" + (capturing if target in ctx.capturing else "")
        + "; pass a stream that aclmdlRIGetStreams returns",
    )  # fmt: skip


def func_handle(ctx: Context, op: str) -> int:
    handle = ctx.func_handles.get(op)
    if handle is None:
        handle = ctx.func_handles[op] = ctx.machine.new_handle()
        ctx.func_ops[handle] = op
    return handle


def write_block(ctx: Context, ref: TaskRef, data: bytes) -> int:
    """The task's device argument block, holding `data` (made, or grown, here)."""
    ptr, capacity = ref.args_block
    if capacity < len(data):
        ctx.free_args_block(ref)
        device = ref.model.device
        capacity = max(ARGS_BLOCK, 1 << (len(data) - 1).bit_length())
        ctx.memory.charge(capacity)
        try:
            ptr = device.arena.malloc(capacity, 0).ptr
        except OutOfSpace as full:
            ctx.memory.used -= capacity
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR, f"no device memory for the argument block of {ref}: {full}"
            ) from None
        ctx.memory.allocations[ptr] = device
        ref.args_block = (ptr, capacity)
    ctx.machine.region(ptr, len(data))[:] = np.frombuffer(data, np.uint8)
    return ptr
