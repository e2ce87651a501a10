"""The tasks a stream runs: frozen records of what was issued, resolved against memory when they run.

A task reads device memory when it runs, not when it was issued (so an async copy sees the data of the tasks
before it, and a captured task sees the memory of its replay). A task also pins the allocations its pointers
fell in when it was issued: if one of them was freed since -- even if the address now belongs to a new
allocation -- the task fails with ACL_ERROR_RT_DEVICE_MEM_ERROR naming the address, instead of silently touching
reused memory (undefined behaviour on the real device). A kernel, the one task a replay runs by the thousand,
checks its pins again only after some device memory has been freed (`Machine.epoch`), and runs the plan of its
description from the machine's `PlanCache` (its views, dtypes and numpy call resolved once).

A big task runs on the kernel pool (`offload`), holding its allocations meanwhile: one freed during the run is
quarantined until the run ends (`server.npu.memory.arena`), and the task then fails like one that found it freed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from proto.aclnn import KernelDesc
from proto.errors import (
    ACL_ERROR_RT_AICORE_TIMEOUT,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_STREAM_ABORT,
    ACL_ERROR_RT_WAIT_TIMEOUT,
    AclError,
)
from server.npu.core.event import Event, RecordMark
from server.npu.core.pool import PoolClosed
from server.npu.memory.arena import MemoryFault
from server.npu.ops import plan_kernel, uncached

if TYPE_CHECKING:
    from server.npu.core.stream import Lane


Pins = tuple[tuple[int, object], ...]  # (pointer, the allocation it fell in at issue time)


def check_pins(lane: Lane, pins: Pins, when: str = "") -> None:
    for ptr, owner in pins:
        if lane.machine.owner(ptr) is not owner:
            raise AclError(
                ACL_ERROR_RT_DEVICE_MEM_ERROR,
                f"invalid memory access: the allocation that held {ptr:#x} when the task was issued has been freed"
                + when,
            )


async def offload(lane: Lane, pins: Pins, work: Callable[[], object]) -> None:
    """Run `work` on the kernel pool, holding the allocations of `pins` until it has ended.

    Fails with 507053 if one of them was freed during the run (its range stayed quarantined), and with 507014,
    the AI Core timeout, after the machine's launch time limit: the run is abandoned, ends in the background and
    keeps its memory held until then."""
    machine = lane.machine
    held = machine.hold(pins)
    try:
        done = machine.pool.submit(lane.where.owner, work)
    except PoolClosed:
        machine.release(held)
        raise AclError(ACL_ERROR_RT_STREAM_ABORT, "the daemon is shutting down: the task did not run") from None
    done.add_done_callback(lambda _: machine.release(held))
    try:
        await asyncio.wait_for(asyncio.shield(done), machine.launch_timeout)
    except TimeoutError:
        raise AclError(
            ACL_ERROR_RT_AICORE_TIMEOUT,
            f"the task ran longer than {machine.launch_timeout:g} s, the launch time limit (VNPU_LAUNCH_TIMEOUT): "
            "vnpu abandoned it; it ends in the background and its memory is not reused before",
        ) from None
    except PoolClosed:
        raise AclError(ACL_ERROR_RT_STREAM_ABORT, "the daemon is shutting down: the task did not run") from None
    check_pins(lane, pins, " while the task ran (what it wrote there was discarded)")


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
        # fresh views, resolved here on the loop (where memory is freed), run on the pool
        await offload(lane, self.pins, plan_kernel(self.kernel, uncached(machine.device_region), workspace))


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
            await offload(lane, self.pins, partial(np.copyto, dst, src))
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
