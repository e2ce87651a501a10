"""`Runtime`: the ACL call surface of one client context, under the exact C names.

The methods keep the C names, the C argument order (array length arguments dropped, snake_case parameter
names) and return the C out-parameters (a tuple in C order when there are several); errors raise `AclError`
with the exact code. Calls that wait for the device (synchronize, destroy, reset, pageable async copies) are
coroutines; the others return at once, as their C counterparts do. This is the device's one public API: the
daemon's call table dispatches to it by name.
"""

from __future__ import annotations

from server.npu.calls.aclnn import AclnnCalls
from server.npu.calls.device.context import ContextCalls
from server.npu.calls.device.devinfo import DeviceInfoCalls
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


class Runtime(
    ContextCalls,
    DeviceInfoCalls,
    PeerCalls,
    MemoryCalls,
    VirtualMemoryCalls,
    IpcMemoryCalls,
    HostRegistrationCalls,
    ValueCalls,
    ReduceCalls,
    KernelCalls,
    MarkerCalls,
    RandomCalls,
    StreamAttributeCalls,
    StreamCalls,
    OverflowCalls,
    EventCalls,
    IpcCalls,
    NotifyCalls,
    TdtCalls,
    CallbackCalls,
    ModelCalls,
    BuildCalls,
    LabelCalls,
    CondCalls,
    EditCalls,
    MiscModelCalls,
    AclnnCalls,
):
    """The ACL runtime as seen by one client context (one process, in CANN terms)."""
