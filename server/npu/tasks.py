"""The tasks a stream runs: frozen records of what was issued, resolved against memory when they run.

A task reads device memory when it runs, not when it was issued (so an async copy sees the data of the tasks
before it, and a captured task sees the memory of its replay). A task also pins the allocations its pointers
fell in when it was issued: if one of them was freed since -- even if the address now belongs to a new
allocation -- the task fails with ACL_ERROR_RT_DEVICE_MEM_ERROR naming the address, instead of silently touching
reused memory (undefined behaviour on the real device). A kernel, the one task a replay runs by the thousand,
checks its pins again only after some device memory has been freed (`Machine.epoch`), and runs the plan of its
description from the machine's `PlanCache` (its views, dtypes and numpy call resolved once).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from proto.aclnn import KernelDesc
from proto.errors import ACL_ERROR_RT_DEVICE_MEM_ERROR, ACL_ERROR_RT_STREAM_ABORT, ACL_ERROR_RT_WAIT_TIMEOUT, AclError
from server.npu.arena import MemoryFault
from server.npu.event import Event, RecordMark
from server.npu.ops import run_kernel

if TYPE_CHECKING:
    from server.npu.stream import Lane


Pins = tuple[tuple[int, object], ...]  # (pointer, the allocation it fell in at issue time)


def check_pins(lane: Lane, pins: Pins) -> None:
    for ptr, owner in pins:
        if lane.machine.owner(ptr) is not owner:
            raise AclError(
                ACL_ERROR_RT_DEVICE_MEM_ERROR,
                f"invalid memory access: the allocation that held {ptr:#x} when the task was issued has been freed",
            )


def _region(lane: Lane, ptr: int, nbytes: int) -> np.ndarray:
    try:
        return lane.machine.region(ptr, nbytes)
    except MemoryFault as fault:
        raise AclError(ACL_ERROR_RT_DEVICE_MEM_ERROR, f"invalid memory access: {fault}") from None


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
        launch = partial(run_kernel, self.kernel, machine.device_region, workspace)  # fresh views: off the loop
        await asyncio.get_running_loop().run_in_executor(machine.pool, launch)


@dataclass(frozen=True)
class MemcpyTask:
    api: str
    dst: int
    src: int
    count: int
    pins: Pins

    def describe(self) -> str:
        return f"{self.api} of {self.count} bytes {self.src:#x} -> {self.dst:#x}"

    async def run(self, lane: Lane) -> None:
        check_pins(lane, self.pins)
        src = _region(lane, self.src, self.count)
        dst = _region(lane, self.dst, self.count)
        if self.count > lane.machine.offload_bytes:
            await asyncio.get_running_loop().run_in_executor(lane.machine.pool, np.copyto, dst, src)
        else:
            dst[:] = src


@dataclass(frozen=True)
class MemsetTask:
    api: str
    ptr: int
    value: int
    count: int
    pins: Pins

    def describe(self) -> str:
        return f"{self.api} of {self.count} bytes at {self.ptr:#x} to {self.value:#04x}"

    async def run(self, lane: Lane) -> None:
        check_pins(lane, self.pins)
        _region(lane, self.ptr, self.count).fill(self.value)


@dataclass(frozen=True)
class RecordTask:
    """A record of a real event; `mark` (None in a model, whose replays are not host-visible records) lets the
    host synchronize on and query this record."""

    api: str
    event: Event
    mark: RecordMark | None

    def describe(self) -> str:
        return f"{self.api} of {self.event}"

    async def run(self, lane: Lane) -> None:
        self.event.recorded(self.mark)

    def abandon(self) -> None:
        """Dropped before it ran: a host that waits for this record stops waiting (the flag stays as it is)."""
        if self.mark is not None and not self.mark.done:
            self.mark.complete()


@dataclass(frozen=True)
class WaitTask:
    """A stream wait: on the device flag (`mark` None) or on one record snapshot."""

    api: str
    event: Event
    mark: RecordMark | None
    timeout: float | None

    def describe(self) -> str:
        return f"{self.api} on {self.event}"

    async def run(self, lane: Lane) -> None:
        if self.mark is None:
            await self.event.wait_flag(lane, self.timeout)
        elif not self.mark.done:
            done, _ = await asyncio.wait(
                {self.mark.future, lane.closing}, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if not self.mark.done and lane.closing.done():
                raise AclError(ACL_ERROR_RT_STREAM_ABORT, f"{lane} gave up its wait on {self.event}")
            if not done:
                raise AclError(
                    ACL_ERROR_RT_WAIT_TIMEOUT,
                    f"{lane} waited {self.timeout:g} s on the record of {self.event} on {self.mark.stream}",
                )


@dataclass(frozen=True)
class ResetTask:
    api: str
    event: Event

    def describe(self) -> str:
        return f"{self.api} of {self.event}"

    async def run(self, lane: Lane) -> None:
        self.event.reset()
