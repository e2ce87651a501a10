"""Memory tasks: an asynchronous copy and memset of device or pinned host memory."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from server.npu.tasks.pins import Pins, check_pins, offload, task_region

if TYPE_CHECKING:
    from server.npu.core.lane import Lane


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
        src = task_region(lane, self.src, self.count)
        dst = task_region(lane, self.dst, self.count)
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
        task_region(lane, self.ptr, self.count).fill(self.value)
