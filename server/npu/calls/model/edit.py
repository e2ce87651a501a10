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

from proto.aclnn import KernelDesc
from proto.constants import aclmdlRITaskType, aclrtLaunchKernelAttrId
from proto.errors import (
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.memory.arena import MemoryFault
from server.npu.model import state
from server.npu.model.editing import EVENT_FORMS, NopTask, TaskRef, task_type, zeroed_params
from server.npu.model.state import ModelKind, ModelStatus
from server.npu.process import launch, model_tasks
from server.npu.tasks.kernel import KernelTask
from server.npu.tasks.launch_attrs import DEFAULT_TIMEOUT_US, MAX_TIMEOUT_US, NEVER, UNSUPPORTED_ATTRS, launch_attrs
from server.npu.tasks.value import CONDITIONS, ValueWaitTask, ValueWriteTask

T = aclmdlRITaskType
A = aclrtLaunchKernelAttrId
BAD = ACL_ERROR_RT_PARAM_INVALID


class EditCalls(Area):
    # -- introspection ------------------------------------------------------------------------------------------

    @acl_call
    def aclmdlRIGetStreams(self, model: int | None, streams: bool, num_streams: int | None) -> tuple[list[int], int]:
        """(the streams, their count), most recently added first; `streams` False: NULL array, the count only."""
        if model and model not in self.ctx.models and model not in self.ctx.sub_models:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.ctx.handles.not_a("model", model))
        require(num_streams is not None, "numStreams is NULL", BAD)
        target = self.ctx.model(model, BAD)
        target.refuse_sub("aclmdlRIGetStreams")
        lanes = list(reversed(model_tasks.lanes_of(self.ctx, target)))
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
        return [model_tasks.lane_handle(self.ctx, target, lane) for lane in lanes], len(lanes)

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
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.ctx.handles.not_a("stream", stream))
        require(bool(stream), "stream is NULL: pass one of the streams aclmdlRIGetStreams returns", BAD)
        require(num_tasks is not None, "numTasks is NULL", BAD)
        assert stream is not None and num_tasks is not None
        model, lane = model_tasks.model_lane(self.ctx, stream)
        refs = model_tasks.tasks_of(self.ctx, model).listing(lane, self.machine.new_handle)
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
        ref = model_tasks.task_ref(self.ctx, task)
        ref.model.refuse_sub("aclmdlRITaskGetType")
        if ref.model.destroyed:
            raise AclError(BAD, f"{ref} has no stream: its model was destroyed")
        return task_type(ref.current)

    @acl_call
    def aclmdlRITaskGetSeqId(self, task: int | None) -> int:
        """The task's number in the model-wide capture order, from 0."""
        ref = model_tasks.task_ref(self.ctx, task)
        model_tasks.check_alive(ref)
        if ref.model.kind is not ModelKind.CAPTURE:
            ref.model.refuse_sub("aclmdlRITaskGetSeqId")
            raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{ref.model} is not a capture model: no sequence ids")
        return ref.seq

    @acl_call
    def aclmdlRITaskGetParams(self, task: int | None) -> dict[str, Any]:
        """aclmdlRITaskParams as a dict: `type`, `taskGrp`, `opInfoPtr`, `opInfoSize` and every union member, only
        the one of `type` filled."""
        ref = model_tasks.task_ref(self.ctx, task)
        model_tasks.check_alive(ref)
        ref.model.refuse_sub("aclmdlRITaskGetParams")
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
        ref = model_tasks.task_ref(self.ctx, task)
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
        ref = model_tasks.task_ref(self.ctx, task)
        require(params is not None, "params is NULL", BAD)
        assert params is not None
        model_tasks.check_editable(self.ctx, ref)
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
        ref = model_tasks.task_ref(self.ctx, task)
        model_tasks.check_editable(self.ctx, ref)
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
        model_tasks.tasks_of(self.ctx, target).apply_edits()
        target.status = ModelStatus.READY

    # -- helpers ------------------------------------------------------------------------------------------------

    def _kernel_params(self, ref: TaskRef, kernel: KernelTask) -> dict[str, Any]:
        data = json.dumps(kernel.kernel.to_wire(), separators=(",", ":")).encode()
        ptr = model_tasks.write_block(self.ctx, ref, data)
        return {
            "funcHandle": model_tasks.func_handle(self.ctx, kernel.kernel.op),
            "cfg": None,
            "args": ptr,
            "isHostArgs": 0,
            "argsSize": len(data),
            "numBlocks": ref.num_blocks,
            "kernel": kernel.kernel.to_wire(),
        }

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
        attrs = launch_attrs(p.get("cfg"))
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
                data = bytes(args[:size]) if host else self.ctx.memory.region(args, size).tobytes()
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
        self.ctx.memory.device_range("devAddr", ptr, 8)
        require(ptr % 8 == 0, f"devAddr {ptr:#x} is not 8-byte aligned", BAD)
        api = "aclmdlRITaskSetParams"
        if write:
            ref.edit = ValueWriteTask(api, ptr, value, self.ctx.memory.pins(ptr))
        else:
            flag = p.get("flag") or 0
            require(
                flag in CONDITIONS, f"flag {flag} is not an ACL_STREAM_WAIT_VALUE_* (GEQ 0, EQ 1, AND 2, NOR 3)", BAD
            )
            ref.edit = ValueWaitTask(api, ptr, value, flag, self.ctx.memory.pins(ptr))
        ref.op_info, ref.attrs = (0, 0), {}


def _event_flag(event: Any) -> int:
    """The event's internal flag bits: aclrtCreateEvent's RT_EVENT_DEFAULT (0xE), else the creation flag."""
    if event is None:
        return 0
    return 0xE if event.api == "aclrtCreateEvent" else int(event.flags)
