"""The state of one daemon context: what one process holds, in tables grouped by domain.

A Context (a daemon context) is what one process sees of the CANN runtime: its aclInit count, the devices it set
(refcounted), its ACL contexts, each thread's current ACL context, and the handles it created. Handles are ints,
unique in the daemon; a handle of another daemon context is indistinguishable from an invalid one.

An AclContext is the runtime's `aclrtContext`, which lives inside a daemon context: one device and a default
stream. Each device a process sets has one primary ACL context (`aclrtSetDevice`, refcounted, released by the last
`aclrtResetDevice` or by `aclrtResetDeviceForce`); `aclrtCreateContext` makes more. Every thread has its own
current ACL context, which decides its device and what a NULL stream means.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from proto.constants import aclmdlRICaptureMode, aclrtFloatOverflowMode
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
    ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_CONTEXT,
    AclError,
    require,
)
from server.npu.core.callbacks import Callbacks
from server.npu.core.caller import caller_thread
from server.npu.core.event import Event
from server.npu.core.lane import Task
from server.npu.core.markers import OpenRange
from server.npu.core.notify import Notify
from server.npu.core.stream import Stream
from server.npu.device import Device
from server.npu.kernels.binary import Binary, Function
from server.npu.kernels.task import Printed
from server.npu.machine import Machine
from server.npu.model import capture_modes
from server.npu.model.build import BuildLane, BuildModel
from server.npu.model.capture import Capture
from server.npu.model.groups import TaskGroup, Update
from server.npu.model.labels import Label, LabelIds, LabelList
from server.npu.model.model import ModelRI, tree
from server.npu.process.counts import PerProcess
from server.npu.process.handles import Handles, HandleTable
from server.npu.process.memory_tables import MemoryTables
from server.npu.tasks.overflow import OVERFLOW_AREA
from server.npu.tdt import Channel

if TYPE_CHECKING:
    from server.npu.memory.quota import Quota
    from server.npu.model.cond import CondHandle
    from server.npu.model.editing import ModelTasks, TaskRef
    from server.npu.model.model import ModelLane
    from server.npu.tasks.kernel import CheckedLaunch


@dataclass(eq=False)
class AclContext:
    """aclrtContext: a device and the context's default stream (the primary one's is the device's)."""

    handle: int
    device: Device
    default_stream: Stream
    primary: bool
    refs: PerProcess = field(default_factory=PerProcess)  # primary only: aclrtSetDevice calls not yet reset, by process
    # its overflow status (the runtime's OVERFLOW_ADDR_MAX_SIZE bytes): read and cleared by stream tasks
    overflow_status: np.ndarray = field(default_factory=lambda: np.zeros(OVERFLOW_AREA, np.uint8), repr=False)
    sys_params: dict[int, int] = field(default_factory=dict)  # aclrtCtxSetSysParamOpt: no default

    def __str__(self) -> str:
        kind = "primary context" if self.primary else "context"
        return f"{kind} {self.handle:#x} of device {self.device.index}"


class Context:
    """One client context (in CANN terms: one process) of the daemon."""

    def __init__(
        self, machine: Machine, memory_quota: int | None = None, max_handles: int | None = None,
        quota: Quota | None = None,
    ) -> None:  # fmt: skip
        self.machine = machine
        self.max_handles = max_handles  # streams, events, models and task groups this context may hold
        self.quota = quota  # its tenant's, shared by the tenant's contexts (None: one tenant, no quota)
        self.inits = PerProcess()  # aclInit calls not yet matched by an aclFinalize, by process
        self.handles = Handles()  # one table per kind of handle (`process.handles`), and the dead ones
        table = self.handles.table
        self.memory = MemoryTables(machine, memory_quota, quota)  # what memory the process holds, and its charge
        # ACL contexts (`AclContext`) and streams
        self.acl_contexts: HandleTable[AclContext] = table("ACL context")  # every live one, primary or created
        self.primaries: dict[int, AclContext] = {}  # device index -> its primary ACL context
        self.current: dict[Hashable, AclContext] = {}  # thread -> its current ACL context
        self.default_streams: HandleTable[Stream] = table("stream")  # the default stream of an ACL context
        self.streams: HandleTable[Stream] = table("stream")  # the streams the program created
        self.stream_contexts: dict[int, AclContext] = {}  # stream handle (default or created) -> its ACL context
        self.callbacks = Callbacks()  # subscriptions of streams to the threads that run their callbacks
        self.last_task_ids: dict[Hashable, int] = {}  # thread -> the id of the last task it queued
        # events, notifies, TDT channels (IPC ones opened from other processes are not ours to destroy)
        self.events: HandleTable[Event] = table("event")
        self.notifies: HandleTable[Notify] = table("notify")
        self.channels: HandleTable[Channel] = table("TDT channel")  # a channel this context opened (calls.tdt)
        self.opened_events: set[int] = set()  # IPC events of other contexts opened here
        self.imported_notifies: set[int] = set()  # the same for notifies (aclrtNotifyImportByKey)
        # models: captured or built, their sub-models, task groups, cond handles, labels; capture and update state
        self.models: HandleTable[ModelRI] = table("model")
        self.sub_models: HandleTable[ModelRI] = table("model")  # branches of condition tasks (server.npu.model.cond)
        self.groups: HandleTable[TaskGroup] = table("task group")
        self.cond_handles: HandleTable[CondHandle[ModelRI]] = table("cond handle")
        self.labels: HandleTable[Label] = table("label")  # aclrtLabel -> its label (server.npu.model.labels)
        self.label_ids = LabelIds()
        self.label_lists: dict[int, LabelList] = {}  # device address -> the label list made there
        self.capturing: dict[Stream, Capture] = {}  # every stream of every active capture
        self.updating: dict[Stream, Update] = {}  # streams between TaskUpdateBegin and End
        self.bound: dict[Stream, BuildLane] = {}  # persistent streams bound to a Build model (aclmdlRIBindStream)
        self.exchange_modes: dict[Hashable, aclmdlRICaptureMode] = {}
        # aclmdlRI introspection and editing (calls.model.edit)
        self.ri_tasks: dict[int, TaskRef] = {}  # aclmdlRITask handle -> its task
        self.ri_models: dict[int, ModelTasks] = {}  # model handle -> its task handles
        self.ri_lanes: dict[int, tuple[ModelRI, ModelLane]] = {}  # capture stream handle -> its model lane
        self.func_handles: dict[str, int] = {}  # operator -> its aclrtFuncHandle
        self.func_ops: dict[int, str] = {}
        # kernels: loaded binaries and their functions, aclnn launches checked, printf not yet collected
        self.binaries: HandleTable[Binary] = table("loaded binary")  # aclrtBinHandle (server.npu.calls.kernel)
        self.functions: HandleTable[Function] = table("function of a loaded binary")  # aclrtFuncHandle
        self.checked_launches: dict[tuple[object, ...], CheckedLaunch] = {}  # aclnn launches checked (launch)
        self.printed = Printed()  # kernel printf not yet collected by the process (vnpuTakePrinted)
        self.marker_ranges: dict[int, OpenRange] = {}  # range id -> a range marker not ended (core.markers)
        # device settings of the process
        self.peer_access: set[tuple[int, int]] = set()  # (device, peer it may access): aclrtDeviceEnablePeerAccess
        self.res_limits: dict[tuple[int, int], int] = {}  # (device, aclrtDevResLimitType) -> cores allowed
        self.op_wait_timeout: float | None = None  # aclrtSetOpWaitTimeout, None = wait forever
        self.op_execute_timeout_us = 0  # aclrtSetOpExecuteTimeOut(V2): 0 = the device's default
        self.sys_params: dict[int, int] = {}  # aclrtSetSysParamOpt: each option 0 until set
        self.sat_mode = aclrtFloatOverflowMode.ACL_RT_OVERFLOW_MODE_INFNAN  # aclrtSetDeviceSatMode (process-wide)
        self.releases: dict[int, asyncio.Lock] = {}  # device index -> held while a release of it frees (one at a time)

    @property
    def init_count(self) -> int:
        """aclInit calls of all its processes not yet finalized: the context takes calls while there are any."""
        return self.inits.total

    @property
    def tenant(self) -> str | None:
        """The tenant whose context this is (None: the daemon has one tenant, or none)."""
        return self.quota.tenant if self.quota is not None else None

    def acl_context(self) -> AclContext:
        """The calling thread's current ACL context."""
        current = self.current.get(caller_thread())
        if current is None:
            raise AclError(ACL_ERROR_RT_CONTEXT_NULL, "this thread has no current device: call aclrtSetDevice first")
        return current

    def device(self) -> Device:
        """The calling thread's current device."""
        return self.acl_context().device

    def has_peer_access(self, peer: Device) -> bool:
        """Whether the calling thread's device was granted access to `peer` (aclrtDeviceEnablePeerAccess)."""
        return (self.device().index, peer.index) in self.peer_access

    def stream(self, handle: int | None) -> Stream:
        """The stream `handle` (None or 0: the current ACL context's default stream), which must be on the
        thread's current device."""
        current = self.acl_context()
        device = current.device
        if not handle:
            return current.default_stream
        stream = self.streams.get(handle) or self.default_streams.get(handle)
        if stream is None:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.handles.not_a("stream", handle))
        if stream.device is not device:
            raise AclError(
                ACL_ERROR_RT_STREAM_CONTEXT,
                f"{stream} belongs to device {stream.device.index}, but this thread's device is {device.index}",
            )
        return stream

    def any_stream(self, handle: int | None) -> Stream:
        """The stream `handle` of this process on any device and in any of its ACL contexts (None or 0: the current
        ACL context's default stream), for the runtime's calls that check no more than that."""
        if not handle:
            return self.acl_context().default_stream
        stream = self.streams.get(handle) or self.default_streams.get(handle)
        if stream is None:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.handles.not_a("stream", handle))
        return stream

    def own_stream(self, handle: int | None) -> Stream:
        """The stream `handle`, which must belong to the thread's current ACL context (107003 otherwise)."""
        target, current = self.stream(handle), self.acl_context()
        if self.stream_contexts.get(target.handle) is not current:
            raise AclError(ACL_ERROR_RT_STREAM_CONTEXT, f"{target} is not a stream of this thread's {current}")
        return target

    def check_handles(self) -> None:
        """Refuse a new handle when the context holds its maximum."""
        held = len(self.streams) + len(self.events) + len(self.notifies) + len(self.models) + len(self.groups)
        held += len(self.binaries)
        if self.max_handles is not None and held >= self.max_handles:
            raise AclError(
                ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
                f"this context holds {held} handles (streams, events, notifies, models, task groups, binaries), "
                "its limit",
            )

    def idle_stream(self, handle: int | None, api: str) -> Stream:
        """The stream `handle`, which must not be capturing (spec 1.4: 107027)."""
        stream = self.stream(handle)
        if stream in self.capturing:
            raise AclError(
                ACL_ERROR_RT_STREAM_CAPTURED,
                f"{api} is not allowed on {stream} while it is capturing ({self.capturing[stream]})",
            )
        return stream

    def model(self, handle: int | None, null_code: int = ACL_ERROR_INVALID_PARAM) -> ModelRI:
        """The model `handle` of this context (its sub-models included); NULL answers `null_code`, any other
        handle that is not a live model of this context 107017, as the runtime's handle validation does."""
        require(bool(handle), "modelRI is NULL", null_code)
        model = self.models.get(handle or 0) or self.sub_models.get(handle or 0)
        if model is None:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.handles.not_a("model", handle or 0))
        return model

    def root_model(
        self, handle: int | None, api: str, null_code: int = ACL_ERROR_INVALID_PARAM,
        code: int = ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ) -> ModelRI:  # fmt: skip
        """`model`, for the calls that refuse a sub-model with `code` (modelri spec G6: 207000)."""
        model = self.model(handle, null_code)
        model.refuse_sub(api, code)
        return model

    def event(self, handle: int | None) -> Event:
        return self.events.live(handle)

    def drop_event(self, handle: int) -> None:
        """Forget event `handle`; the context that created it also destroys it (an opened IPC event stays)."""
        event = self.events.drop(handle)
        if handle in self.opened_events:
            self.opened_events.discard(handle)
            return
        event.destroy()
        if event.legacy:
            event.device.events.give(self.quota)
        if event.ipc_handle is not None:
            self.machine.ipc.events.pop(event.ipc_handle, None)

    def notify(self, handle: int | None) -> Notify:
        """The notify `handle` of this process: NULL is 100000 (the ACL layer's check), any other handle 107017, as
        the runtime's notify calls validate it first (RT_VALIDATE_AND_UNWRAP_OBJECT)."""
        return self.notifies.live(handle)

    def drop_notify(self, handle: int) -> None:
        """Forget notify `handle`; an exported one of ours stops being importable."""
        notify = self.notifies.drop(handle)
        if handle in self.imported_notifies:
            self.imported_notifies.discard(handle)
        elif notify.ipc_key is not None:
            self.machine.ipc.notifies.pop(notify.ipc_key, None)

    def issue(self, stream: Stream, task: Task) -> None:
        """The one place where issued work enters the device: a stream in a task update collects it, a
        capturing stream records it into its model, a stream bound to a Build model persists it into its lane,
        any other stream queues it."""
        update = self.updating.get(stream)
        if update is not None:
            update.collect(task)
            return
        capture = self.capturing.get(stream)
        if capture is not None:
            capture.add(stream, task)
            return
        lane = self.bound.get(stream)
        if lane is not None and lane.model is not None:
            lane.model.persist(lane, task)
            return
        thread = caller_thread()
        tid = thread[1] if isinstance(thread[1], int) else 0
        self.last_task_ids[thread] = stream.submit(task, tid)

    def end_update(self, stream: Stream) -> None:
        """The task update in progress on `stream`, if any, ends unapplied: its group can be updated again."""
        update = self.updating.pop(stream, None)
        if update is not None:
            update.group.updater = None

    def abandon_updates(self, begun_by: Callable[[Hashable], bool]) -> int:
        """End, unapplied, the task updates begun by the client threads `begun_by` accepts (a process of a shared
        context that went away); how many."""
        gone = [stream for stream, update in self.updating.items() if begun_by(update.thread)]
        for stream in gone:
            self.end_update(stream)
        return len(gone)

    def leave_capture(self, capture: Capture) -> None:
        """Every stream of `capture` stops capturing."""
        for stream in capture.streams:
            self.capturing.pop(stream, None)

    def drop_model(self, model: ModelRI) -> None:
        """Forget `model` and its task groups (a replay in progress finishes on its own), its sub-models (a capture
        into one of them ends) and its cond handles, whose words are freed; a Build model's streams are unbound.
        The sub-models go deepest first, without recursion."""
        for member in reversed(list(tree(model))):
            if member is not model:
                for capture in self.captures():
                    if capture.model is member:
                        self.leave_capture(capture)
            self._drop_one(member)

    def _drop_one(self, model: ModelRI) -> None:
        """`drop_model` of one model, its sub-models aside."""
        for cond in model.conds:
            self.cond_handles.pop(cond.handle, None)
            if cond.ptr in self.memory.words:
                self.memory.words.discard(cond.ptr)
                model.device.arena.free(cond.ptr)
            self.handles.bury(cond.handle, "cond handle")
        model.release()
        if isinstance(model, BuildModel):
            for lane in list(model.lanes):
                assert isinstance(lane, BuildLane) and lane.stream is not None
                self.unbind(lane.stream)
        for handle in model.groups:
            self.groups.pop(handle, None)
        if self.models.pop(model.handle, None) is not None or self.sub_models.pop(model.handle, None) is not None:
            model.device.models.give(self.quota)
            self.handles.bury(model.handle, "model")
        tasks = self.ri_models.pop(model.handle, None)  # the argument blocks of its edited tasks go with it
        for ref in tasks.refs() if tasks is not None else ():
            self.free_args_block(ref)

    def free_args_block(self, ref: TaskRef) -> None:
        """The device argument block of an edited kernel task goes (with its model, or when it grows)."""
        ptr, capacity = ref.args_block
        device = self.memory.allocations.pop(ptr, None) if ptr else None
        if device is not None:
            device.arena.free(ptr)
            self.memory.used -= capacity
        ref.args_block = (0, 0)

    def unbind(self, stream: Stream) -> None:
        """`stream` leaves its Build model's lanes (with its persisted tasks) and is an ordinary stream again."""
        lane = self.bound.pop(stream, None)
        if lane is None or lane.model is None:
            return
        model = lane.model
        model.lanes = [other for other in model.lanes if other is not lane]
        if model.end is lane:
            model.end = None

    def captures(self) -> list[Capture]:
        return list({id(c): c for c in self.capturing.values()}.values())

    def check_unsafe(self, code: int, what: str) -> None:
        """Refuse an unsafe call (see `capture_modes`) with `code` when the capture modes deny it."""
        thread = caller_thread()
        captures = self.captures()
        ctx = min((c.mode for c in captures), default=capture_modes.NONE)
        thr = min((c.mode for c in captures if c.thread == thread), default=capture_modes.NONE)
        x = self.exchange_modes.get(thread, capture_modes.GLOBAL)
        if not capture_modes.unsafe_call_allowed(ctx, thr, x):
            modes = ", ".join(f"{c} in {aclmdlRICaptureMode(c.mode).name}" for c in captures)
            raise AclError(
                code,
                f"{what} is not allowed while {modes} (this thread's exchange mode is "
                f"{aclmdlRICaptureMode(x).name}); switch with aclmdlRICaptureThreadExchangeMode if it is safe",
            )
