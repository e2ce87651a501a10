"""The state of one daemon context, and the `acl_call` decorator that every ACL entry point wears.

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
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
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
from server.npu.memory.arena import Allocation, MemoryFault
from server.npu.memory.hostmem import HostBuffer
from server.npu.memory.vmem import Mapping, PhysicalMemory, Reservation, Window
from server.npu.model import capture_modes
from server.npu.model.build import BuildLane, BuildModel
from server.npu.model.capture import Capture
from server.npu.model.labels import Label, LabelIds, LabelList
from server.npu.model.model import ModelRI, TaskGroup, Update
from server.npu.model.state import ModelKind
from server.npu.tdt import Channel

if TYPE_CHECKING:
    from server.npu.memory.hostreg import Registration
    from server.npu.memory.ipc import IpcMemory
    from server.npu.memory.quota import Quota
    from server.npu.model.cond import CondHandle
    from server.npu.model.editing import ModelTasks, TaskRef
    from server.npu.model.model import ModelLane
    from server.npu.tasks.kernel import CheckedLaunch

OVERFLOW_AREA = 512  # bytes of an ACL context's overflow status area (calls_overflow)


@dataclass(eq=False)
class AclContext:
    """aclrtContext: a device and the context's default stream (the primary one's is the device's)."""

    handle: int
    device: Device
    default_stream: Stream
    primary: bool
    refs: int = 0  # primary only: aclrtSetDevice calls not yet matched by an aclrtResetDevice
    # its overflow status (the runtime's OVERFLOW_ADDR_MAX_SIZE bytes): read and cleared by stream tasks
    overflow_status: np.ndarray = field(default_factory=lambda: np.zeros(OVERFLOW_AREA, np.uint8), repr=False)

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
        self.memory_quota = memory_quota  # bytes of device + pinned host memory this context may hold
        self.max_handles = max_handles  # streams, events, models and task groups this context may hold
        self.quota = quota  # its tenant's, shared by the tenant's contexts (None: one tenant, no quota)
        self._memory_used = 0
        self.init_count = 0
        self.acl_contexts: dict[int, AclContext] = {}  # handle -> every live ACL context, primary or created
        self.primaries: dict[int, AclContext] = {}  # device index -> its primary ACL context
        self.current: dict[Hashable, AclContext] = {}  # thread -> its current ACL context
        self.default_streams: dict[int, Stream] = {}  # handle -> the default stream of an ACL context
        self.streams: dict[int, Stream] = {}  # handle -> a stream the program created
        self.stream_contexts: dict[int, AclContext] = {}  # stream handle (default or created) -> its ACL context
        self.events: dict[int, Event] = {}
        self.notifies: dict[int, Notify] = {}
        self.channels: dict[int, Channel] = {}  # handle -> a TDT channel this context opened (calls_tdt)
        self.opened_events: set[int] = set()  # IPC events of other contexts opened here (not ours to destroy)
        self.imported_notifies: set[int] = set()  # the same for notifies (aclrtNotifyImportByKey)
        self.callbacks = Callbacks()  # subscriptions of streams to the threads that run their callbacks
        self.allocations: dict[int, Device] = {}  # device pointer -> its device
        self.checked_launches: dict[tuple[object, ...], CheckedLaunch] = {}  # aclnn launches checked (calls_aclnn)
        self.host_buffers: set[int] = set()
        self.ipc_exports: dict[str, IpcMemory] = {}  # aclrtIpcMemGetExportKey's keys of this context's memory
        self.ipc_imports: dict[str, tuple[IpcMemory, Window]] = {}  # imported IPC keys -> their window here
        self.physicals: dict[int, PhysicalMemory] = {}  # aclrtDrvMemHandle -> physical memory (made or imported)
        self.owned_physicals: set[int] = set()  # the handles this context allocated (aclrtMallocPhysical)
        self.reservations: dict[int, Reservation] = {}  # virtual address -> aclrtReserveMemAddress's range
        self.windows: dict[int, Window] = {}  # device address -> a host registration's window, managed memory
        self.registrations: dict[int, Registration] = {}  # host pointer -> aclrtHostRegisterV2's registration
        self.freed: dict[int, tuple[int, str]] = {}  # pointers freed lately -> (size, by what call), to explain use
        self.peer_access: set[tuple[int, int]] = set()  # (device, peer it may access): aclrtDeviceEnablePeerAccess
        self.res_limits: dict[tuple[int, int], int] = {}  # (device, aclrtDevResLimitType) -> cores allowed
        self.op_wait_timeout: float | None = None  # aclrtSetOpWaitTimeout, None = wait forever
        self.models: dict[int, ModelRI] = {}
        self.sub_models: dict[int, ModelRI] = {}  # branches of condition tasks: not user models (server.npu.model.cond)
        self.cond_handles: dict[int, CondHandle[ModelRI]] = {}
        self.cond_words: dict[int, CondHandle[ModelRI]] = {}  # device word -> its cond handle (memory the runtime owns)
        self.gone: dict[int, str] = {}  # handles this context destroyed lately -> what they were (bounded)
        self.groups: dict[int, TaskGroup] = {}
        self.binaries: dict[int, Binary] = {}  # aclrtBinHandle -> a loaded kernel binary (server.npu.calls.kernel)
        self.marker_ranges: dict[int, OpenRange] = {}  # range id -> a range marker not ended (server.npu.core.markers)
        self.functions: dict[int, Function] = {}  # aclrtFuncHandle -> a kernel of one of them
        self.printed = Printed()  # kernel printf not yet collected by the process (vnpuTakePrinted)
        self.capturing: dict[Stream, Capture] = {}  # every stream of every active capture
        self.updating: dict[Stream, Update] = {}  # streams between TaskUpdateBegin and End
        self.bound: dict[Stream, BuildLane] = {}  # persistent streams bound to a Build model (aclmdlRIBindStream)
        self.labels: dict[int, Label] = {}  # aclrtLabel handle -> its label (server.npu.model.labels)
        self.label_ids = LabelIds()
        self.label_lists: dict[int, LabelList] = {}  # device address -> the label list made there
        self.exchange_modes: dict[Hashable, aclmdlRICaptureMode] = {}
        self.last_task_ids: dict[Hashable, int] = {}  # thread -> the id of the last task it queued
        self.sat_mode = aclrtFloatOverflowMode.ACL_RT_OVERFLOW_MODE_INFNAN  # aclrtSetDeviceSatMode (process-wide)
        self.releases: dict[int, asyncio.Lock] = {}  # device index -> held while a release of it frees (one at a time)
        # aclmdlRI introspection and editing (calls.model.edit)
        self.ri_tasks: dict[int, TaskRef] = {}  # aclmdlRITask handle -> its task
        self.ri_models: dict[int, ModelTasks] = {}  # model handle -> its task handles
        self.ri_lanes: dict[int, tuple[ModelRI, ModelLane]] = {}  # capture stream handle -> its model lane
        self.func_handles: dict[str, int] = {}  # operator -> its aclrtFuncHandle
        self.func_ops: dict[int, str] = {}

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
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.not_a("stream", handle))
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
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.not_a("stream", handle))
        return stream

    def own_stream(self, handle: int | None) -> Stream:
        """The stream `handle`, which must belong to the thread's current ACL context (107003 otherwise)."""
        target, current = self.stream(handle), self.acl_context()
        if self.stream_contexts.get(target.handle) is not current:
            raise AclError(ACL_ERROR_RT_STREAM_CONTEXT, f"{target} is not a stream of this thread's {current}")
        return target

    @property
    def memory_used(self) -> int:
        """Bytes of device + pinned host memory the context holds; its tenant's count moves with it."""
        return self._memory_used

    @memory_used.setter
    def memory_used(self, value: int) -> None:
        if self.quota is not None:
            self.quota.give("memory", self._memory_used - value)
        self._memory_used = value

    def charge_memory(self, size: int) -> None:
        """Account `size` more bytes to the context, refusing to pass its quota or its tenant's."""
        if self.memory_quota is not None and self.memory_used + size > self.memory_quota:
            raise AclError(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                f"this context's memory quota is {self.memory_quota} bytes and {self.memory_used} are in use: "
                f"{size} more do not fit",
            )
        if self.quota is not None:
            self.quota.check("memory", size)
        self.memory_used += size

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
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.not_a("model", handle or 0))
        return model

    def root_model(
        self, handle: int | None, api: str, null_code: int = ACL_ERROR_INVALID_PARAM,
        code: int = ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ) -> ModelRI:  # fmt: skip
        """`model`, for the calls that refuse a sub-model with `code` (modelri spec G6: 207000)."""
        model = self.model(handle, null_code)
        if model.kind is ModelKind.SUB:
            raise AclError(
                code,
                f"{model} is a branch of a condition task (aclmdlRIAddCondTask) of {model.parent}: {api} does not "
                "accept a sub-model; it lives and runs with its parent, so pass the root model",
            )
        return model

    def not_a(self, what: str, handle: int) -> str:
        """Why `handle` is not a live `what` of this context."""
        article = "an" if what[0] in "aeiou" else "a"
        if self.gone.get(handle) == what:
            return f"{handle:#x} is {article} {what} that was destroyed"
        return f"{handle:#x} is not {article} {what} of this context"

    def bury(self, handle: int, what: str) -> None:
        """Remember that `handle`, a `what`, was destroyed (to say so when it is used again)."""
        if len(self.gone) >= 4096:
            self.gone.pop(next(iter(self.gone)))
        self.gone[handle] = what

    def event(self, handle: int | None) -> Event:
        require(bool(handle), "event is NULL")
        assert handle is not None
        event = self.events.get(handle)
        if event is None:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.not_a("event", handle))
        return event

    def drop_event(self, handle: int) -> None:
        """Forget event `handle`; the context that created it also destroys it (an opened IPC event stays)."""
        event = self.events.pop(handle)
        self.bury(handle, "event")
        if handle in self.opened_events:
            self.opened_events.discard(handle)
            return
        event.destroy()
        if event.legacy:
            event.device.events.give(self.quota)
        if event.ipc_handle is not None:
            self.machine.ipc.events.pop(event.ipc_handle, None)

    def notify(self, handle: int | None) -> Notify:
        """The notify `handle` of this process (107000 for any other handle, as the runtime's notify calls)."""
        require(bool(handle), "notify is NULL")
        assert handle is not None
        found = self.notifies.get(handle)
        if found is None:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"{handle:#x} is not a notify of this process")
        return found

    def drop_notify(self, handle: int) -> None:
        """Forget notify `handle`; an exported one of ours stops being importable."""
        notify = self.notifies.pop(handle)
        if handle in self.imported_notifies:
            self.imported_notifies.discard(handle)
        elif notify.ipc_key is not None:
            self.machine.ipc.notifies.pop(notify.ipc_key, None)

    def owns(self, owner: object) -> bool:
        """Whether this context may touch the memory object `owner` (what `Machine.owner` gives)."""
        if isinstance(owner, Allocation):
            return owner.ptr in self.allocations or owner.ptr in self.cond_words
        if isinstance(owner, HostBuffer):
            return owner.ptr in self.host_buffers
        if isinstance(owner, Mapping):
            return self.reservations.get(owner.reservation.va) is owner.reservation
        if isinstance(owner, Window):
            return self.windows.get(owner.va) is owner
        return False

    def device_range(self, name: str, ptr: int, count: int) -> None:
        """[ptr, ptr + count) is device memory of this context (107000 otherwise)."""
        owner = self.machine.owner(ptr)
        if self.machine.device_of(ptr) is None or not self.owns(owner):
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"{name} must be device memory: {self.explain(ptr)}")
        try:
            self.machine.region(ptr, count)
        except MemoryFault as fault:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"{name}: {fault}") from None

    def region(self, ptr: int, nbytes: int) -> np.ndarray:
        """A view of [ptr, ptr + nbytes) in memory this context allocated, mapped or imported (device or pinned
        host); MemoryFault otherwise. Another context's memory is treated exactly like memory never allocated."""
        if not self.owns(self.machine.owner(ptr)):
            raise MemoryFault(self.explain(ptr))
        return self.machine.region(ptr, nbytes)

    def explain(self, ptr: int) -> str:
        """Why `ptr` is not usable, from what this context alone knows."""
        for start, (size, by) in self.freed.items():
            if start <= ptr < start + max(size, 1):
                return f"{ptr:#x} lies in the {size}-byte block at {start:#x}, which was freed by {by}"
        device = self.machine.device_of(ptr)
        if device is not None and ptr in device.virtual:
            found = device.virtual.find_range(ptr)
            if isinstance(found, Reservation) and self.reservations.get(found.va) is found:
                return f"{ptr:#x} lies in {found} but no physical memory is mapped there (aclrtMapMem)"
            return device.virtual.explain(ptr)
        return f"{ptr:#x} is not in memory allocated by this context (aclrtMalloc or aclrtMallocHost)"

    def forget(self, ptr: int, size: int, by: str) -> None:
        """Remember that the call `by` freed [ptr, ptr + size) of this context, to explain a later use (bounded)."""
        if len(self.freed) >= 4096:
            self.freed.pop(next(iter(self.freed)))
        self.freed[ptr] = (size, by)

    def pins(self, *ptrs: int) -> tuple[tuple[int, object], ...]:
        """What the pointers point into now, for a task to check when it runs (see `tasks`)."""
        return tuple((ptr, self.machine.owner(ptr)) for ptr in ptrs)

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
        into one of them ends) and its cond handles, whose words are freed; a Build model's streams are unbound."""
        for child in model.children:
            for capture in self.captures():
                if capture.model is child:
                    self.leave_capture(capture)
            self.drop_model(child)
        for cond in model.conds:
            self.cond_handles.pop(cond.handle, None)
            if self.cond_words.pop(cond.ptr, None) is not None:
                model.device.arena.free(cond.ptr)
            self.bury(cond.handle, "cond handle")
        model.release()
        if isinstance(model, BuildModel):
            for lane in list(model.lanes):
                assert isinstance(lane, BuildLane) and lane.stream is not None
                self.unbind(lane.stream)
        for handle in model.groups:
            self.groups.pop(handle, None)
        if self.models.pop(model.handle, None) is not None or self.sub_models.pop(model.handle, None) is not None:
            model.device.models.give(self.quota)
            self.bury(model.handle, "model")
        tasks = self.ri_models.pop(model.handle, None)  # the argument blocks of its edited tasks go with it
        for ref in tasks.refs() if tasks is not None else ():
            self.free_args_block(ref)

    def free_args_block(self, ref: TaskRef) -> None:
        """The device argument block of an edited kernel task goes (with its model, or when it grows)."""
        ptr, capacity = ref.args_block
        device = self.allocations.pop(ptr, None) if ptr else None
        if device is not None:
            device.arena.free(ptr)
            self.memory_used -= capacity
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
