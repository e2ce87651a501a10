"""An aclnn kernel task: phase 2's launch of one kernel description over views of device memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from proto.aclnn import KernelDesc
from server.npu.ops import plan_kernel, uncached
from server.npu.tasks.pins import Pins, check_pins, offload

if TYPE_CHECKING:
    from server.npu.core.lane import Lane


@dataclass(frozen=True)
class KernelTask:
    """An aclnn phase-2 launch: one kernel over views of device memory."""

    api: str
    kernel: KernelDesc
    workspace: int
    workspace_size: int
    pins: Pins
    work: int  # bytes the kernel computes over (elements viewed x itemsize): decides if it leaves the event loop
    checked: int = field(default=-1, compare=False, repr=False)  # the memory epoch its pins were last checked in

    def describe(self) -> str:
        return f"{self.api} kernel {self.kernel.op}"

    async def run(self, lane: Lane) -> None:
        """Runs inline under the caller's `np.errstate(all="ignore")` (the stream's worker, a model's replay), or
        on the kernel pool, which silences numpy itself. Its memory is device memory only (checked at issue)."""
        machine = lane.machine
        if self.checked != machine.epoch.value:
            check_pins(lane, self.pins)
            object.__setattr__(self, "checked", machine.epoch.value)
        if self.work <= machine.offload_bytes:
            machine.plans.get(self.kernel, self.workspace, self.workspace_size)()
            return
        workspace = machine.device_region(self.workspace, self.workspace_size) if self.workspace_size else None
        # fresh views, resolved here on the loop (where memory is freed), run on the pool
        await offload(lane, self.pins, plan_kernel(self.kernel, uncached(machine.device_region), workspace))


@dataclass(frozen=True, slots=True)
class CheckedLaunch:
    """A launch's description as checked in memory epoch `epoch`: its pins and work hold until the epoch moves."""

    kernel: KernelDesc
    epoch: int
    pins: Pins
    work: int
