"""IPC: what processes share through the daemon -- memory by key (aclrtIpcMemGetExportKey), events by handle
(aclrtIpcGetEventHandle), notifies by key (aclrtNotifyGetExportKey) and physical memory by shareable handle
(aclrtMemExportToShareableHandle) -- in one registry the machine holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.npu.core.event import Event
    from server.npu.core.notify import Notify
    from server.npu.memory.vmem import PhysicalMemory

from dataclasses import dataclass, field

from server.npu.device import Device
from server.npu.memory.arena import Allocation
from server.npu.memory.vmem import VirtualSpace, Window

PREFIX = "vnpu-ipc-mem-"


KEY_BYTES = 46  # len(PREFIX) + 32 hex digits + NUL: fits the 65 bytes the documentation asks for


@dataclass(eq=False)
class IpcMemory:
    """One exported range: [ptr, ptr + size) of `block`, and the windows importers opened onto it."""

    key: str
    device: Device
    block: Allocation
    ptr: int
    size: int
    pid_validation: bool
    import_pids: set[int] = field(default_factory=set)
    windows: list[tuple[VirtualSpace, Window]] = field(default_factory=list)

    def __str__(self) -> str:
        return f"the IPC memory {self.key!r} ({self.size} bytes at {self.ptr:#x})"

    def open(self, machine_keys: dict[str, IpcMemory]) -> bool:
        return machine_keys.get(self.key) is self

    def close(self, machine_keys: dict[str, IpcMemory]) -> None:
        """The key goes (if open) and every importer's window closes."""
        if machine_keys.get(self.key) is self:
            del machine_keys[self.key]
        for space, window in self.windows:
            space.close_window(window)
        self.windows.clear()


@dataclass(eq=False)
class IpcRegistry:
    """What any process may open by the name another one gave it, daemon-wide (the machine holds it)."""

    events: dict[bytes, Event] = field(default_factory=dict)  # aclrtIpcGetEventHandle's handles
    notifies: dict[str, Notify] = field(default_factory=dict)  # aclrtNotifyGetExportKey's keys
    memory: dict[str, IpcMemory] = field(default_factory=dict)  # aclrtIpcMemGetExportKey's keys
    shareable: dict[int, PhysicalMemory] = field(default_factory=dict)  # aclrtMemExportToShareableHandle's handles
