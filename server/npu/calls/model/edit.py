"""Introspection and editing of a model (spec-modelri 3): aclmdlRIGetStreams, aclmdlRIGetTasksByStream,
aclmdlRITaskGetType, aclmdlRITaskGetSeqId, aclmdlRITaskGetParams, aclmdlRITaskSetParams, aclmdlRITaskDisable,
aclmdlRIKernelTaskGetAttribute and aclmdlRIUpdate, with the capture-model status machine of 3.1.

The streams of a capture model are the runtime's internal capture streams, one per lane: each gets a stream
handle of its own, which only aclmdlRIGetTasksByStream accepts. A Build model's streams are the user's bound ones.

vnpu's kernels are aclnn kernels, and a kernel task's arguments are its kernel description (`KernelDesc`):
- `funcHandle` is a handle naming the operator (one per operator and context);
- `args`/`argsSize` point to a device argument block vnpu allocates for the task (freed with its model), which
  holds the description as compact JSON (its wire form). SetParams reads the block back (or host bytes with
  `isHostArgs`), so a Get -> Set round trip, a copy of another task's arguments or an edited JSON text all work;
- `kernel` (vnpu's own field, for Python): the description's wire form; when SetParams is given one, it is the
  arguments and `args`/`argsSize` are not needed.
The new description is checked as a launch is (its operator's rules, live memory) and keeps the task's workspace.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from proto.aclnn import KernelDesc
from proto.constants import aclmdlRITaskType, aclrtLaunchKernelAttrId
from proto.enumtext import not_member
from proto.errors import (
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_UPDATE_FAILED,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.memory.allocator import OutOfSpace
from server.npu.memory.arena import MemoryFault
from server.npu.model import state
from server.npu.model.editing import EVENT_FORMS, ModelTasks, NopTask, TaskRef, task_type, zeroed_params
from server.npu.model.model import ModelLane, ModelRI
from server.npu.model.state import ModelKind, ModelStatus
from server.npu.process import launch
from server.npu.tasks.kernel import KernelTask
from server.npu.tasks.value import CONDITIONS, ValueWaitTask, ValueWriteTask

T = aclmdlRITaskType
A = aclrtLaunchKernelAttrId
BAD = ACL_ERROR_RT_PARAM_INVALID
NEVER = 2**64 - 1  # the task's timeout when a launch attribute set it to 0 (never time out)
# Ascend 910B timeouts (the runtime's kernel credits: 254 x 4294967.296 us): default (ms, rounded up), maximum
DEFAULT_TIMEOUT_US = 1_090_922 * 1000
MAX_TIMEOUT_US = 1_090_921_694
UNSUPPORTED_ATTRS: tuple[int, ...] = (
    A.ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE,
    A.ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET,
)
UNSUPPORTED_ATTRS += (A.ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH,)
ARGS_BLOCK = 512  # the smallest argument block vnpu allocates for a kernel task


class EditCalls(Area):
    # -- introspection ------------------------------------------------------------------------------------------

    @acl_call
    def aclmdlRIGetStreams(self, model: int | None, streams: bool, num_streams: int | None) -> tuple[list[int], int]:
        """(the streams, their count), most recently added first; `streams` False: NULL array, the count only."""
        if model and model not in self.ctx.models:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.ctx.not_a("model", model))
        require(num_streams is not None, "numStreams is NULL", BAD)
        target = self.ctx.model(model, BAD)
        self._not_sub(target, "aclmdlRIGetStreams")
        lanes = list(reversed(self._lanes(target)))
        if not streams:
            return [], len(lanes)
        assert num_streams is not None
        if num_streams < len(lanes):
            raise AclError(
                ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY,
                f"{target} has {len(lanes)} stream(s) but the array holds {num_streams}; it is left untouched "
                "(call with streams NULL to get the count)",
            )
        if target.kind is ModelKind.BUILD:
            return [lane.stream_handle for lane in lanes], len(lanes)
        return [self._lane_handle(target, lane) for lane in lanes], len(lanes)

    @acl_call
    def aclmdlRIGetTasksByStream(self, stream: int | None, tasks: bool, num_tasks: int | None) -> tuple[list[int], int]:
        """(the tasks, their count) in issue order; `tasks` False: NULL array, the count only. An array smaller
        than the count gets 107039 (C: after the array was filled with the first ones)."""
        if (
            stream
            and stream not in self.ctx.ri_lanes
            and stream not in self.ctx.streams
            and stream not in self.ctx.default_streams
        ):
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.ctx.not_a("stream", stream))
        require(bool(stream), "stream is NULL: pass one of the streams aclmdlRIGetStreams returns", BAD)
        require(num_tasks is not None, "numTasks is NULL", BAD)
        assert stream is not None and num_tasks is not None
        model, lane = self._model_lane(stream)
        refs = self._tasks_of(model).listing(lane, self.machine.new_handle)
        for ref in refs:
            self.ctx.ri_tasks.setdefault(ref.handle, ref)
        if tasks and num_tasks < len(refs):
            raise AclError(
                ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY,
                f"stream {stream:#x} of {model} has {len(refs)} task(s) but the array holds {num_tasks}",
            )
        return ([ref.handle for ref in refs] if tasks else []), len(refs)

    @acl_call
    def aclmdlRITaskGetType(self, task: int | None) -> aclmdlRITaskType:
        ref = self._ref(task)
        self._not_sub(ref.model, "aclmdlRITaskGetType")
        if ref.model.destroyed:
            raise AclError(BAD, f"{ref} has no stream: its model was destroyed")
        return task_type(ref.current)

    @acl_call
    def aclmdlRITaskGetSeqId(self, task: int | None) -> int:
        """The task's number in the model-wide capture order, from 0."""
        ref = self._ref(task)
        self._alive(ref)
        if ref.model.kind is not ModelKind.CAPTURE:
            self._not_sub(ref.model, "aclmdlRITaskGetSeqId")
            raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{ref.model} is not a capture model: no sequence ids")
        return ref.seq

    @acl_call
    def aclmdlRITaskGetParams(self, task: int | None) -> dict[str, Any]:
        """aclmdlRITaskParams as a dict: `type`, `taskGrp`, `opInfoPtr`, `opInfoSize` and every union member, only
        the one of `type` filled."""
        ref = self._ref(task)
        self._alive(ref)
        self._not_sub(ref.model, "aclmdlRITaskGetParams")
        current = ref.current
        if isinstance(current, NopTask):
            raise AclError(BAD, f"{ref} is a task the runtime added: it has no parameters")
        params = zeroed_params()
        params["type"] = int(task_type(current))
        if isinstance(current, KernelTask):
            if ref.model.kind is not ModelKind.CAPTURE:
                raise AclError(
                    ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{ref}: kernel parameters exist in capture models only"
                )
            params["taskGrp"] = ref.group.handle if ref.group is not None else 0
            params["opInfoPtr"], params["opInfoSize"] = ref.op_info
            params["kernelTaskParams"] = self._kernel_params(ref, current)
        elif type(current) in EVENT_FORMS:
            kind, member, flag_name, flag = EVENT_FORMS[type(current)]
            params["type"] = int(kind)
            event_handle = getattr(current, "event_handle", None) or getattr(getattr(current, "record", None),
                                                                             "event_handle", None)  # fmt: skip
            event = getattr(current, "event", None) or self.ctx.events.get(event_handle or 0)
            handle = event.handle if event is not None else event_handle or 0
            params[member] = {"event": handle, "eventFlag": _event_flag(event), flag_name: flag}
        elif isinstance(current, ValueWriteTask):
            params["valueWriteTaskParams"] = {"devAddr": current.ptr, "value": current.value}
        elif isinstance(current, ValueWaitTask):
            params["valueWaitTaskParams"] = {"devAddr": current.ptr, "value": current.value, "flag": current.flag}
        else:
            raise AclError(BAD, f"{ref} ({current.describe()}) has no parameters aclmdlRITaskGetParams can give")
        return params

    @acl_call
    def aclmdlRIKernelTaskGetAttribute(self, task: int | None, attr_id: int) -> int:
        """The attribute's aclrtLaunchKernelAttrValue, as the union's first 8 bytes (little-endian)."""
        require(bool(task), "task is NULL")
        ref = self._ref(task)
        if not isinstance(ref.current, KernelTask):
            raise AclError(BAD, f"{ref} is not a kernel task: check aclmdlRITaskGetType first")
        attrs = ref.attrs
        if attr_id == A.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE:
            return attrs.get(A.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, 0)  # an aclnn kernel's own mode is 0
        if attr_id == A.ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE:
            return attrs.get(A.ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE, 0)
        if attr_id == A.ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP:
            return attrs.get(A.ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP, 0)
        if attr_id in (A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US):
            configured = attrs.get(A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US)
            if configured is None:
                real = DEFAULT_TIMEOUT_US
            else:
                real = 0 if configured == NEVER else min(configured, MAX_TIMEOUT_US)
            return (real // 1_000_000) & 0xFFFF if attr_id == A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT else real
        if attr_id in UNSUPPORTED_ATTRS:
            raise AclError(BAD, f"attrId {A(attr_id).name} cannot be read back from a task")
        raise AclError(BAD, f"attrId {attr_id} is not one aclmdlRIKernelTaskGetAttribute reads (1, 2 or 6-8)")

    # -- editing ------------------------------------------------------------------------------------------------

    @acl_call
    def aclmdlRITaskSetParams(self, task: int | None, params: dict[str, Any] | None) -> None:
        """Edit the task's host copy (the model becomes UPDATING; replays see it after aclmdlRIUpdate). Any
        failure after the model checks leaves the model FAULT."""
        ref = self._ref(task)
        require(params is not None, "params is NULL", BAD)
        assert params is not None
        self._editable(ref)
        ref.model.status = ModelStatus.UPDATING
        try:
            self._set_params(ref, params)
        except AclError as error:
            ref.model.status = ModelStatus.FAULT
            raise AclError(
                error.code, f"{error.message}; {ref.model} is now FAULT (only aclmdlRIDestroy helps)"
            ) from None
        ref.disabled = False

    @acl_call
    def aclmdlRITaskDisable(self, task: int | None) -> None:
        """Mark the task for removal at aclmdlRIUpdate (the model becomes UPDATING)."""
        ref = self._ref(task)
        self._editable(ref)
        ref.model.status = ModelStatus.UPDATING
        if task_type(ref.current) is T.ACL_MODEL_RI_TASK_DEFAULT:
            ref.model.status = ModelStatus.FAULT
            raise AclError(
                BAD,
                f"{ref} is a task of type DEFAULT ({ref.current.describe()}), which cannot be disabled; "
                f"{ref.model} is now FAULT (only aclmdlRIDestroy helps)",
            )
        ref.op_info = (0, 0)
        ref.disabled = True

    @acl_call
    def aclmdlRIUpdate(self, model: int | None) -> None:
        """Apply the edits: from the next launch on, replays run the edited tasks and no disabled one."""
        target = self.ctx.model(model, BAD)
        if target.kind is not ModelKind.CAPTURE:
            raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{target} is not a capture model: nothing to update")
        if not state.check_updatable(target, target.status):
            return
        self._tasks_of(target).apply_edits()
        target.status = ModelStatus.READY

    # -- helpers ------------------------------------------------------------------------------------------------

    def _ref(self, handle: int | None) -> TaskRef:
        require(bool(handle), "task is NULL", BAD)
        ref = self.ctx.ri_tasks.get(handle or 0)
        if ref is None:
            raise AclError(BAD, f"{handle:#x} is not a task of this context (take one from aclmdlRIGetTasksByStream)")
        if ref.removed:
            raise AclError(BAD, f"task {ref.handle:#x} was disabled and aclmdlRIUpdate removed it from {ref.model}")
        return ref

    @staticmethod
    def _alive(ref: TaskRef) -> None:
        if ref.model.destroyed:
            raise AclError(ACL_ERROR_RT_INTERNAL_ERROR, f"{ref} has no model any more: {ref.model} was destroyed")

    @staticmethod
    def _not_sub(model: ModelRI, api: str) -> None:
        if model.kind is ModelKind.SUB:
            raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{api} does not take a branch of a conditional task")

    def _editable(self, ref: TaskRef) -> None:
        """The runtime's CheckCaptureModelForUpdate: a capture model, READY or UPDATING, no replay in flight."""
        self._alive(ref)
        model = ref.model
        if model.kind is not ModelKind.CAPTURE:
            self._not_sub(model, "editing")
            raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{model} is not a capture model: its tasks are fixed")
        state.check_editable(model, model.status)
        if model.in_flight:
            raise AclError(
                ACL_ERROR_RT_MODEL_UPDATE_FAILED,
                f"{model} has {model.in_flight} replay(s) launched and not finished: synchronize their streams first",
            )

    def _lanes(self, model: ModelRI) -> list[ModelLane]:
        if model.capturing:
            for capture in self.ctx.captures():
                if capture.model is model:
                    return list(capture.lanes.values())
        return model.lanes

    def _tasks_of(self, model: ModelRI) -> ModelTasks:
        tasks = self.ctx.ri_models.get(model.handle)
        if tasks is None:
            tasks = self.ctx.ri_models[model.handle] = ModelTasks(model)
        return tasks

    def _lane_handle(self, model: ModelRI, lane: ModelLane) -> int:
        handles = self._tasks_of(model).lane_handles
        handle = handles.get(id(lane))
        if handle is None:
            handle = handles[id(lane)] = self.machine.new_handle()
            self.ctx.ri_lanes[handle] = (model, lane)
        return handle

    def _model_lane(self, stream: int) -> tuple[ModelRI, ModelLane]:
        found = self.ctx.ri_lanes.get(stream)
        if found is not None:
            if found[0].destroyed:
                raise AclError(ACL_ERROR_RT_INTERNAL_ERROR, f"stream {stream:#x} belonged to {found[0]}, destroyed")
            return found
        for model in self.ctx.models.values():
            lane = model.bound_lane(stream)
            if lane is not None:
                return model, lane
        capturing = " (it is capturing: the model's own streams come from aclmdlRIGetStreams)"
        target = self.ctx.streams.get(stream) or self.ctx.default_streams[stream]
        raise AclError(
            BAD,
            f"{target} is not bound to a model" + (capturing if target in self.ctx.capturing else "")
            + "; pass a stream that aclmdlRIGetStreams returns",
        )  # fmt: skip

    def _func_handle(self, op: str) -> int:
        handle = self.ctx.func_handles.get(op)
        if handle is None:
            handle = self.ctx.func_handles[op] = self.machine.new_handle()
            self.ctx.func_ops[handle] = op
        return handle

    def _kernel_params(self, ref: TaskRef, kernel: KernelTask) -> dict[str, Any]:
        data = json.dumps(kernel.kernel.to_wire(), separators=(",", ":")).encode()
        ptr = self._write_block(ref, data)
        return {
            "funcHandle": self._func_handle(kernel.kernel.op),
            "cfg": None,
            "args": ptr,
            "isHostArgs": 0,
            "argsSize": len(data),
            "numBlocks": ref.num_blocks,
            "kernel": kernel.kernel.to_wire(),
        }

    def _write_block(self, ref: TaskRef, data: bytes) -> int:
        """The task's device argument block, holding `data` (made, or grown, here)."""
        ptr, capacity = ref.args_block
        if capacity < len(data):
            self.ctx.free_args_block(ref)
            device = ref.model.device
            capacity = max(ARGS_BLOCK, 1 << (len(data) - 1).bit_length())
            self.ctx.charge_memory(capacity)
            try:
                ptr = device.arena.malloc(capacity, 0).ptr
            except OutOfSpace as full:
                self.ctx.memory_used -= capacity
                raise AclError(
                    ACL_ERROR_RT_INTERNAL_ERROR, f"no device memory for the argument block of {ref}: {full}"
                ) from None
            self.ctx.allocations[ptr] = device
            ref.args_block = (ptr, capacity)
        self.machine.region(ptr, len(data))[:] = np.frombuffer(data, np.uint8)
        return ptr

    def _set_params(self, ref: TaskRef, params: dict[str, Any]) -> None:
        kind = params.get("type")
        if kind == T.ACL_MODEL_RI_TASK_KERNEL:
            self._set_kernel(ref, params)
        elif kind in (
            T.ACL_MODEL_RI_TASK_EVENT_RECORD,
            T.ACL_MODEL_RI_TASK_EVENT_WAIT,
            T.ACL_MODEL_RI_TASK_EVENT_RESET,
        ):
            raise AclError(BAD, f"params.type {T(kind).name}: the parameters of event tasks cannot be changed")
        elif kind in (T.ACL_MODEL_RI_TASK_VALUE_WRITE, T.ACL_MODEL_RI_TASK_VALUE_WAIT):
            self._set_value(ref, params, kind)
        else:
            raise AclError(BAD, f"params.type {kind} is not a task type SetParams takes (KERNEL 1, VALUE_WRITE 5, "
                           "VALUE_WAIT 6)")  # fmt: skip

    def _set_kernel(self, ref: TaskRef, params: dict[str, Any]) -> None:
        current = ref.current
        if not isinstance(current, KernelTask):
            raise AclError(BAD, f"{ref} is not a kernel task ({current.describe()}): params.type KERNEL needs one")
        if params.get("taskGrp"):
            raise AclError(
                BAD,
                "params.taskGrp must be NULL: clear the taskGrp that aclmdlRITaskGetParams reported (the task keeps "
                "its place in its task group)",
            )
        p = params.get("kernelTaskParams") or {}
        func = p.get("funcHandle") or 0
        if func and func not in self.ctx.func_ops:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, f"funcHandle {func:#x} is not a function handle of vnpu")
        require(bool(func), "kernelTaskParams.funcHandle is NULL", BAD)
        kernel = p.get("kernel")
        if kernel is None:
            require(bool(p.get("args")), "kernelTaskParams.args is NULL", BAD)
            require(bool(p.get("argsSize")), "kernelTaskParams.argsSize is 0: it must be greater than 0", BAD)
        attrs = _launch_attrs(p.get("cfg"))
        desc = kernel if isinstance(kernel, KernelDesc) else self._description(kernel, p)
        if self.ctx.func_ops[func] != desc.op:
            raise AclError(
                BAD,
                f"funcHandle {func:#x} is aclnn{self.ctx.func_ops[func]}, but the arguments describe aclnn{desc.op}",
            )
        try:
            new = launch.kernel_task(
                self.ctx, f"aclnn{desc.op}", current.workspace, current.workspace_size, desc, ref.model.device
            )
        except AclError as error:
            raise AclError(BAD, f"the new arguments of {ref} are not a valid launch: {error.message}") from None
        ref.edit, ref.attrs, ref.num_blocks = new, attrs, p.get("numBlocks") or 0
        ptr, size = params.get("opInfoPtr") or 0, params.get("opInfoSize") or 0
        ref.op_info = (ptr, size) if ptr and size else (0, 0)

    def _description(self, kernel: Any, p: dict[str, Any]) -> KernelDesc:
        """The kernel description in `kernel` (a wire form), or else in the argument block `args` points to."""
        try:
            if kernel is None:
                args, size = p["args"], p["argsSize"]
                host = isinstance(args, bytes | bytearray)
                data = bytes(args[:size]) if host else self.ctx.region(args, size).tobytes()
                kernel = json.loads(data.decode())
            return KernelDesc.from_wire(kernel)
        except MemoryFault as fault:
            raise AclError(BAD, f"kernelTaskParams.args: {fault}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise AclError(BAD, f"kernelTaskParams.args is not a kernel description (JSON): {error}") from None
        except AclError as error:
            raise AclError(BAD, f"kernelTaskParams: {error.message}") from None

    def _set_value(self, ref: TaskRef, params: dict[str, Any], kind: int) -> None:
        current = ref.current
        if task_type(current) is T.ACL_MODEL_RI_TASK_DEFAULT:
            raise AclError(BAD, f"{ref} ({current.describe()}) is a DEFAULT task: it cannot become a value task")
        if params.get("taskGrp") or params.get("opInfoPtr") or params.get("opInfoSize"):
            raise AclError(BAD, "params.taskGrp and params.opInfoPtr must be NULL and opInfoSize 0 for value tasks")
        write = kind == T.ACL_MODEL_RI_TASK_VALUE_WRITE
        p = params.get("valueWriteTaskParams" if write else "valueWaitTaskParams") or {}
        ptr, value = p.get("devAddr") or 0, p.get("value") or 0
        require(bool(ptr), "devAddr is NULL", BAD)
        self.ctx.device_range("devAddr", ptr, 8)
        require(ptr % 8 == 0, f"devAddr {ptr:#x} is not 8-byte aligned", BAD)
        api = "aclmdlRITaskSetParams"
        if write:
            ref.edit = ValueWriteTask(api, ptr, value, self.ctx.pins(ptr))
        else:
            flag = p.get("flag") or 0
            require(
                flag in CONDITIONS, f"flag {flag} is not an ACL_STREAM_WAIT_VALUE_* (GEQ 0, EQ 1, AND 2, NOR 3)", BAD
            )
            ref.edit = ValueWaitTask(api, ptr, value, flag, self.ctx.pins(ptr))
        ref.op_info, ref.attrs = (0, 0), {}


def _event_flag(event: Any) -> int:
    """The event's internal flag bits: aclrtCreateEvent's RT_EVENT_DEFAULT (0xE), else the creation flag."""
    if event is None:
        return 0
    return 0xE if event.api == "aclrtCreateEvent" else int(event.flags)


def _launch_attrs(cfg: Any) -> dict[int, int]:
    """aclrtLaunchKernelCfg's attributes as the task keeps them; None (NULL) means the defaults."""
    if cfg is None:
        return {}
    attrs = cfg.get("attrs") if isinstance(cfg, dict) else None
    if attrs is None:
        raise AclError(BAD, "kernelTaskParams.cfg->attrs is NULL (pass cfg NULL for the default attributes)")
    kept: dict[int, int] = {}
    for attr in attrs:
        ident, value = attr.get("id"), attr.get("value") or 0
        if ident == A.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE:
            kept[ident] = value & 0xFF
        elif ident == A.ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE:
            kept[ident] = value & 0xFFFFFFFF
        elif ident == A.ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP:
            kept[ident] = 1 if value & 0xFF == 1 else 0
        elif ident in (A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US):
            us = (value & 0xFFFF) * 1_000_000 if ident == A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT else value
            kept[A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US] = us or NEVER
        elif ident in (*UNSUPPORTED_ATTRS, A.ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING):
            continue  # accepted, not kept: nothing reads them back
        else:
            raise AclError(BAD, f"kernelTaskParams.cfg: {not_member('attribute id', ident, A)}")
    return kept
