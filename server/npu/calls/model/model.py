"""Model calls: aclmdlRIExecuteAsync, aclmdlRIExecute, aclmdlRIDestroy, aclmdlRIDebugPrint, aclmdlRIDebugJsonPrint."""

from __future__ import annotations

import asyncio
import contextlib
import json

from proto.constants import aclmdlRITaskType
from proto.errors import (
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_CAPTURED,
    ACL_ERROR_RT_MODEL_CONTEXT,
    ACL_ERROR_RT_MODEL_RUNNING,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.core.lane import Task
from server.npu.core.trace import Where
from server.npu.kernels.task import CustomKernelTask
from server.npu.model import external, state
from server.npu.model.build import BuildModel, runnable_build
from server.npu.model.cond import CondTask
from server.npu.model.groups import GroupTask
from server.npu.model.model import CaptureRecord, CaptureWait, ModelRI, assign_defaults
from server.npu.model.state import ModelKind
from server.npu.process.context import Context
from server.npu.tasks.event import RecordTask, ResetTask, WaitTask
from server.npu.tasks.kernel import KernelTask

DESTROY_WAIT = 10.0  # seconds aclmdlRIDestroy waits for a running replay (context.cc: ~10 s); tests shorten it


class _HostLane:
    """Where aclmdlRIExecute replays a model: on no stream, for a waiting host thread."""

    def __init__(self, ctx: Context, device: int) -> None:
        self.machine = ctx.machine
        self.closing: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.where = Where(device, "aclmdlRIExecute", None, ctx)

    def __str__(self) -> str:
        return "aclmdlRIExecute"


class ModelCalls(Area):
    @acl_call
    def aclmdlRIExecuteAsync(self, model: int | None, stream: int | None) -> None:
        """Queue one replay of `model` on `stream`; replays of one model run one at a time."""
        target = self.ctx.root_model(model, "aclmdlRIExecuteAsync")
        bound = self.ctx.bound.get(self.ctx.stream(stream))
        if bound is not None:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"stream {bound.stream_handle:#x} is bound to {bound.model}: execute a model on an ordinary stream",
            )
        on = self.ctx.idle_stream(stream, "aclmdlRIExecuteAsync")
        self._runnable(target, on.device.index)
        assign_defaults(target)  # on the host, before the replay is queued (modelri spec 4)
        task, events = external.launch(target, on)  # EXTERNAL records and waits bind now, on the host
        self.ctx.issue(on, task)
        target.queued.add(task)
        external.commit(task, events)

    @acl_call
    async def aclmdlRIExecute(self, model: int | None, timeout: int) -> None:
        """Replay a Build model and wait for it; `timeout` in ms, -1 to wait forever. The runtime's checks in its
        order: NULL (100000), a stale handle (107017), the timeout (107000), a capture model (107000: the runtime
        runs those with aclmdlRIExecuteAsync only), another device's model (107004); a replay that outlasts the
        timeout answers 507046, as a stream synchronize does, and goes on."""
        target = self.ctx.model(model)
        require(
            timeout == -1 or timeout > 0, f"timeout must be -1 or > 0 ms, got {timeout}", ACL_ERROR_RT_PARAM_INVALID
        )
        if target.kind is not ModelKind.BUILD:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"{target} is a captured model (ACL graph), which aclmdlRIExecute does not run: use "
                "aclmdlRIExecuteAsync and synchronize its stream",
            )
        self._runnable(target, self.ctx.device().index)
        assign_defaults(target)
        replay = asyncio.ensure_future(target.replay(_HostLane(self.ctx, target.device.index)))
        done, _ = await asyncio.wait({replay}, timeout=None if timeout == -1 else timeout / 1000)
        if not done:  # the replay goes on; the model stays consistent
            raise AclError(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, f"{target} did not finish within {timeout} ms")
        replay.result()

    @acl_call
    async def aclmdlRIDestroy(self, model: int | None) -> list[dict[str, int]]:
        """Waits up to DESTROY_WAIT (10 s) for a running replay to finish, as the runtime does; a model still
        running then is kept and the call answers 107037. Otherwise the model and its task groups go, and the
        destroy callbacks registered on it are returned, ordered by function address (the runtime's std::set
        order), for the client to run on the calling thread: [{"func": ..., "userData": ...}]."""
        target = self.ctx.root_model(model, "aclmdlRIDestroy")
        if target.capturing:
            raise AclError(ACL_ERROR_RT_MODEL_CAPTURED, f"{target} is still capturing: end the capture first")
        if target.running:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(target.wait_idle()), DESTROY_WAIT)
        if target.running:
            raise AclError(
                ACL_ERROR_RT_MODEL_RUNNING,
                f"{target} is still running after {DESTROY_WAIT:g} s (a replay waits for something that does not "
                "come); it is kept: stop it (aclmdlRIAbort, or aclrtStreamAbort on its stream), then destroy it",
            )
        if target.destroyed:  # another destroy finished while this one waited
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.ctx.handles.not_a("model", target.handle))
        self.ctx.drop_model(target)
        return [{"func": f, "userData": d} for f, d in sorted(target.destroy_callbacks.items())]

    @acl_call
    def aclmdlRIDebugPrint(self, model: int | None) -> str:
        """A readable dump of the model (the runtime writes it to its log; vnpu returns it)."""
        target = self.ctx.model(model)
        return "\n".join(_debug_lines(target, ""))

    @acl_call
    def aclmdlRIDebugJsonPrint(self, model: int | None, path: str | None, flags: int) -> str:
        """The model as chrome-trace JSON (spec 1.2). The daemon cannot write the caller's `path`: the text is
        returned and the client writes it."""
        target = self.ctx.model(model)
        require(flags in (0, 1), f"flags {flags} is not ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY (0) or _VERBOSE (1)")
        events = []
        for index, lane in enumerate(target.lanes):
            for number, task in enumerate(lane.tasks):
                args: dict[str, object] = {
                    "Model Id": target.ident,
                    "Stream Id": lane.stream_handle,
                    "Task Id": number,
                    "Task Type": _task_type(task).name,
                }
                if flags:
                    args["Detail"] = task.describe()
                events.append(
                    {
                        "name": task.describe(),
                        "pid": target.handle,
                        "tid": f"stream{index}",
                        "ts": number,
                        "dur": 1,
                        "ph": "X",
                        "args": args,
                    }
                )
        return json.dumps(events, indent=1 if flags else None)

    @staticmethod
    def _runnable(model: ModelRI, device: int) -> None:
        if model.capturing:
            raise AclError(ACL_ERROR_RT_MODEL_CAPTURED, f"{model} is still capturing: end the capture first")
        if model.kind is ModelKind.CAPTURE:
            state.check_runnable(model, model.status)
        if model.device.index != device:
            raise AclError(ACL_ERROR_RT_MODEL_CONTEXT, f"{model} belongs to device {model.device.index}, not {device}")
        if isinstance(model, BuildModel):
            runnable_build(model)


def _debug_lines(target: ModelRI, indent: str) -> list[str]:
    """aclmdlRIDebugPrint's text; the sub-models of a condition task are printed under it, indented."""
    lines = [f"{indent}{target.title}: {target.state}, {len(target.lanes)} stream(s), {target.executions} execution(s)"]
    for index, lane in enumerate(target.lanes):
        lines.append(f"{indent}  {lane.title(index)}:")
        for number, task in enumerate(lane.tasks):
            lines.append(f"{indent}    {number:4d}  {_task_type(task).name:<32} {task.describe()}")
            if isinstance(task, GroupTask):
                for k, kernel in enumerate(task.group.kernels):
                    lines.append(f"{indent}          [{k}] {kernel.describe()}")
            if isinstance(task, CondTask):
                for k, branch in enumerate(task.branches):
                    lines.append(f"{indent}          [{k}] ran {task.runs[k]}x:")
                    lines.extend(_debug_lines(branch, indent + "            "))
    if target.edits:
        lines.append(f"{indent}  edits applied by aclmdlRIUpdate (the last {len(target.edits)}):")
        lines.extend(f"{indent}    {edit}" for edit in target.edits)
    return lines


def _task_type(task: Task) -> aclmdlRITaskType:
    if isinstance(task, KernelTask | CustomKernelTask | GroupTask):
        return aclmdlRITaskType.ACL_MODEL_RI_TASK_KERNEL
    if isinstance(task, RecordTask | CaptureRecord | external.ExternalRecordTask):
        return aclmdlRITaskType.ACL_MODEL_RI_TASK_EVENT_RECORD
    if isinstance(task, WaitTask | CaptureWait | external.ExternalWaitTask):
        return aclmdlRITaskType.ACL_MODEL_RI_TASK_EVENT_WAIT
    if isinstance(task, ResetTask):
        return aclmdlRITaskType.ACL_MODEL_RI_TASK_EVENT_RESET
    return aclmdlRITaskType.ACL_MODEL_RI_TASK_DEFAULT
