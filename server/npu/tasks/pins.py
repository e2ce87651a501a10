"""Pins: the allocations a task's pointers fell in when it was issued, checked when it runs; the kernel pool's run of
a big task (`offload`), holding its memory meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from proto.errors import (
    ACL_ERROR_RT_AICORE_TIMEOUT,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_STREAM_ABORT,
    AclError,
)
from server.npu.core.pool import PoolClosed
from server.npu.memory.arena import Allocation, MemoryFault

if TYPE_CHECKING:
    from server.npu.core.lane import Lane


Pins = tuple[tuple[int, object], ...]  # (pointer, the allocation it fell in at issue time)


def check_pins(lane: Lane, pins: Pins, when: str = "") -> None:
    for ptr, owner in pins:
        if lane.machine.owner(ptr) is not owner:
            raise AclError(ACL_ERROR_RT_DEVICE_MEM_ERROR, freed_message(lane, ptr, owner, when))


def freed_message(lane: Lane, ptr: int, owner: object, when: str = "") -> str:
    """Why a task's pinned memory is gone: which allocation, the call that freed it, and, in a model, what to do."""
    if isinstance(owner, Allocation):
        by = f" by {owner.freed_by[0]}" if owner.freed_by else ""
        what = f"the {owner.size}-byte allocation at {owner.ptr:#x}, which held {ptr:#x} when the task was issued,"
    else:
        by, what = "", f"the allocation that held {ptr:#x} when the task was issued"
    hint = ""
    if lane.where.model is not None:
        hint = (
            "; a model uses the memory it captured at every replay: keep it allocated until aclmdlRIDestroy, "
            "or capture the model again with the new memory"
        )
    return f"invalid memory access: {what} has been freed{by}{when}{hint}"


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


def task_region(lane: Lane, ptr: int, nbytes: int) -> np.ndarray:
    try:
        return lane.machine.region(ptr, nbytes)
    except MemoryFault as fault:
        raise AclError(ACL_ERROR_RT_DEVICE_MEM_ERROR, f"invalid memory access: {fault}") from None
