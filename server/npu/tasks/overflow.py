"""Overflow status tasks: a copy of an ACL context's overflow status into device memory, and its clearing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from server.npu.tasks.pins import Pins, check_pins

if TYPE_CHECKING:
    from server.npu.core.lane import Lane


OVERFLOW_AREA = 512  # bytes of an ACL context's overflow status area (the runtime's OVERFLOW_ADDR_MAX_SIZE)
OVERFLOW_OUTPUT = 64  # bytes of status aclrtGetOverflowStatus copies (the runtime's OVERFLOW_OUTPUT_SIZE)


@dataclass(frozen=True, eq=False)
class StatusReadTask:
    """aclrtGetOverflowStatus: the first 64 bytes of an ACL context's status area into device memory."""

    api: str
    dst: int
    area: np.ndarray
    pins: Pins

    def describe(self) -> str:
        return f"{self.api} of the overflow status ({OVERFLOW_OUTPUT} bytes) into {self.dst:#x}"

    async def run(self, lane: Lane) -> None:
        check_pins(lane, self.pins)
        lane.machine.device_region(self.dst, OVERFLOW_OUTPUT)[:] = self.area[:OVERFLOW_OUTPUT]


@dataclass(frozen=True, eq=False)
class StatusClearTask:
    """aclrtResetOverflowStatus: every byte of an ACL context's status area to 0."""

    api: str
    area: np.ndarray

    def describe(self) -> str:
        return f"{self.api}: the overflow status ({OVERFLOW_AREA} bytes) cleared"

    async def run(self, lane: Lane) -> None:
        self.area.fill(0)
