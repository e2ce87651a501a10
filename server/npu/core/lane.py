"""The task contract: where a task runs (`Lane`), what a task is (`Task`), and the memory it runs against
(`Memory`, which `server.npu.machine.Machine` satisfies). Every kind of task is written against these alone, so
nothing below the machine needs to know it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from server.npu.core.pool import KernelPool
    from server.npu.core.trace import Tracer, Where
    from server.npu.memory.arena import Allocation, Arena, Epoch
    from server.npu.ops.plans import PlanCache

Held = list[tuple["Arena", "Allocation"]]  # device allocations a task holds while it runs off the loop


class Memory(Protocol):
    """What tasks see of the machine: its memory, its kernel pool and plans, its limits and its trace."""

    epoch: Epoch  # moves on every free of device memory
    pool: KernelPool
    plans: PlanCache
    tracer: Tracer
    offload_bytes: int  # bytes a task touches above which it runs on the pool
    launch_timeout: float
    max_while_iterations: int

    def owner(self, ptr: int) -> object | None: ...

    def region(self, ptr: int, nbytes: int) -> np.ndarray: ...

    def device_region(self, ptr: int, nbytes: int) -> np.ndarray: ...

    def hold(self, pins: Iterable[tuple[int, object]]) -> Held: ...

    def release(self, held: Held) -> None: ...


class Lane(Protocol):
    """Where a task runs: a stream, or one stream of a model being replayed on a stream."""

    @property
    def machine(self) -> Memory: ...

    closing: asyncio.Future[None]  # done when the lane is torn down: waits give up
    where: Where  # for the trace


class Task(Protocol):
    """A unit of device work (frozen records in `server.npu.tasks` and beside their domains); `api` is the C call
    that issued it."""

    @property
    def api(self) -> str: ...

    async def run(self, lane: Lane) -> None: ...

    def describe(self) -> str: ...


def abandon(task: Task) -> None:
    """A task that will never run releases whoever waits for it on the host (a record's mark)."""
    release = getattr(task, "abandon", None)
    if release is not None:
        release()
