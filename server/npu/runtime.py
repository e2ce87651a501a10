"""`Runtime`: the ACL call surface of one client context, under the exact C names.

The methods keep the C names, the C argument order (array length arguments dropped, snake_case parameter
names) and return the C out-parameters (a tuple in C order when there are several); errors raise `AclError`
with the exact code. Calls that wait for the device (synchronize, destroy, reset, pageable async copies) are
coroutines; the others return at once, as their C counterparts do. This is the device's one public API: the
daemon's call table dispatches to it by name.
"""

from __future__ import annotations

from server.npu.calls_aclnn import AclnnCalls
from server.npu.calls_build import BuildCalls
from server.npu.calls_callback import CallbackCalls
from server.npu.calls_cond import CondCalls
from server.npu.calls_context import ContextCalls
from server.npu.calls_devinfo import DeviceInfoCalls
from server.npu.calls_edit import EditCalls
from server.npu.calls_event import EventCalls
from server.npu.calls_hostreg import HostRegistrationCalls
from server.npu.calls_ipc import IpcCalls
from server.npu.calls_ipcmem import IpcMemoryCalls
from server.npu.calls_kernel import KernelCalls
from server.npu.calls_label import LabelCalls
from server.npu.calls_marker import MarkerCalls
from server.npu.calls_memory import MemoryCalls
from server.npu.calls_misc import MiscModelCalls
from server.npu.calls_model import ModelCalls
from server.npu.calls_notify import NotifyCalls
from server.npu.calls_overflow import OverflowCalls
from server.npu.calls_peer import PeerCalls
from server.npu.calls_random import RandomCalls
from server.npu.calls_reduce import ReduceCalls
from server.npu.calls_stream import StreamCalls
from server.npu.calls_stream_attr import StreamAttributeCalls
from server.npu.calls_tdt import TdtCalls
from server.npu.calls_value import ValueCalls
from server.npu.calls_vmm import VirtualMemoryCalls


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
