"""`Runtime`: the ACL call surface of one process's context, one table of C names gathered from the areas.

Each area (`server.npu.calls`) holds the calls of one part of the runtime as methods named as in C: the C argument
order (array length arguments dropped, snake_case parameter names), the C out-parameters returned (a tuple in C
order when there are several), errors raised as `AclError` with the exact code. Calls that wait for the device
(synchronize, destroy, reset, pageable async copies) are coroutines; the others return at once, as in C.

`TABLE` maps every C name to the area that defines it and is built at import, failing on a name two areas define.
A `Runtime` makes one context and one instance of each area, and `api` holds the bound calls; `runtime.aclrtMalloc`
reads the table, and `aclnn<Op>` of any declared operator resolves through the operator registry. This is the
device's one public API: the daemon dispatches to it by name.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Final

from proto.aclnn import OPS
from server.npu.area import Area
from server.npu.calls.aclnn import AclnnCalls
from server.npu.calls.device.context import ContextCalls
from server.npu.calls.device.device import DeviceCalls
from server.npu.calls.device.devinfo import DeviceInfoCalls
from server.npu.calls.device.params import ParamCalls
from server.npu.calls.device.peer import PeerCalls
from server.npu.calls.kernel import KernelCalls
from server.npu.calls.memory.hostreg import HostRegistrationCalls
from server.npu.calls.memory.ipcmem import IpcMemoryCalls
from server.npu.calls.memory.memory import MemoryCalls
from server.npu.calls.memory.random import RandomCalls
from server.npu.calls.memory.reduce import ReduceCalls
from server.npu.calls.memory.value import ValueCalls
from server.npu.calls.memory.vmm import VirtualMemoryCalls
from server.npu.calls.model.build import BuildCalls
from server.npu.calls.model.capture import CaptureCalls
from server.npu.calls.model.cond import CondCalls
from server.npu.calls.model.edit import EditCalls
from server.npu.calls.model.label import LabelCalls
from server.npu.calls.model.misc import MiscModelCalls
from server.npu.calls.model.model import ModelCalls
from server.npu.calls.stream.callback import CallbackCalls
from server.npu.calls.stream.event import EventCalls
from server.npu.calls.stream.ipc import IpcCalls
from server.npu.calls.stream.marker import MarkerCalls
from server.npu.calls.stream.notify import NotifyCalls
from server.npu.calls.stream.overflow import OverflowCalls
from server.npu.calls.stream.stream import StreamCalls
from server.npu.calls.stream.stream_attr import StreamAttributeCalls
from server.npu.calls.tdt import TdtCalls
from server.npu.core.stream import Stream
from server.npu.machine import Machine
from server.npu.memory.quota import Quota
from server.npu.process import devices, streams
from server.npu.process.context import Context

AREAS: Final[tuple[type[Area], ...]] = (
    DeviceCalls,
    ContextCalls,
    DeviceInfoCalls,
    ParamCalls,
    PeerCalls,
    StreamCalls,
    StreamAttributeCalls,
    EventCalls,
    NotifyCalls,
    IpcCalls,
    CallbackCalls,
    MarkerCalls,
    OverflowCalls,
    MemoryCalls,
    VirtualMemoryCalls,
    IpcMemoryCalls,
    HostRegistrationCalls,
    ValueCalls,
    ReduceCalls,
    RandomCalls,
    ModelCalls,
    CaptureCalls,
    BuildCalls,
    LabelCalls,
    CondCalls,
    EditCalls,
    MiscModelCalls,
    KernelCalls,
    AclnnCalls,
    TdtCalls,
)
C_PREFIXES: Final = ("acl", "vnpu")  # the runtime's names, and vnpu's own calls for its clients


def c_names(area: type[Area]) -> list[str]:
    """The calls `area` defines: its public methods with a C name."""
    return [name for name, value in vars(area).items() if name.startswith(C_PREFIXES) and callable(value)]


def build_table(areas: tuple[type[Area], ...]) -> dict[str, type[Area]]:
    """Every C name and the area that defines it; TypeError when two areas define one name."""
    table: dict[str, type[Area]] = {}
    for area in areas:
        for name in c_names(area):
            if name in table:
                raise TypeError(f"{name} is defined by both {table[name].__name__} and {area.__name__}")
            table[name] = area
    return table


TABLE: Final = build_table(AREAS)


class Runtime:
    """The ACL runtime as seen by one client context (one process, in CANN terms)."""

    def __init__(
        self, machine: Machine, memory_quota: int | None = None, max_handles: int | None = None,
        quota: Quota | None = None,
    ) -> None:  # fmt: skip
        self.machine = machine
        self.ctx = Context(machine, memory_quota, max_handles, quota)
        areas = {area: area(self.ctx) for area in AREAS}
        self.api: dict[str, Callable[..., Any]] = {name: getattr(areas[area], name) for name, area in TABLE.items()}
        self.__dict__.update(self.api)  # runtime.aclrtMalloc: a plain attribute lookup, as fast as a method's
        aclnn = areas[AclnnCalls]
        assert isinstance(aclnn, AclnnCalls)
        self._aclnn = aclnn

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """`aclnn<Op>` of any operator declared now (the other calls are attributes)."""
        if name.startswith("aclnn") and name[5:] in OPS:
            return self._aclnn.phase2(name)
        raise AttributeError(f"the vnpu runtime has no call {name!r}")

    # What the daemon's transports ask of a context beyond its calls.

    async def release_all(self) -> None:
        """Free everything the context holds (at the last aclFinalize, or when its client is gone)."""
        await devices.release_all(self.ctx)

    def abandon_updates(self, begun_by: Callable[[Hashable], bool]) -> int:
        """End, unapplied, the task updates begun by the client threads `begun_by` accepts; how many."""
        return self.ctx.abandon_updates(begun_by)

    def synchronize_outlook(self, handle: int) -> tuple[Stream, bool] | None:
        """What aclrtSynchronizeStream(handle) by the calling thread would do now (`process.streams`)."""
        return streams.synchronize_outlook(self.ctx, handle)
