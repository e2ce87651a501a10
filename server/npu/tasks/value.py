"""Value tasks: a write of, and a stream wait on, a 64-bit word of device memory (aclrtValueWrite, aclrtValueWait)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from proto.constants import (
    ACL_STREAM_WAIT_VALUE_AND,
    ACL_STREAM_WAIT_VALUE_EQ,
    ACL_STREAM_WAIT_VALUE_GEQ,
    ACL_STREAM_WAIT_VALUE_NOR,
)
from proto.errors import ACL_ERROR_RT_STREAM_ABORT, AclError
from server.npu.tasks.pins import Pins, check_pins

if TYPE_CHECKING:
    from server.npu.core.lane import Lane


POLL_FIRST, POLL_MOST = 0.0002, 0.01  # seconds between looks at the word: doubling from the first to the most
MASK = 2**64 - 1


CONDITIONS: dict[int, tuple[str, Callable[[int, int], bool]]] = {
    ACL_STREAM_WAIT_VALUE_GEQ: (">=", lambda word, value: word >= value),
    ACL_STREAM_WAIT_VALUE_EQ: ("==", lambda word, value: word == value),
    ACL_STREAM_WAIT_VALUE_AND: ("&", lambda word, value: word & value != 0),
    ACL_STREAM_WAIT_VALUE_NOR: ("nor", lambda word, value: ~(word | value) & MASK != 0),
}


def _word(lane: Lane, ptr: int) -> np.ndarray:
    return lane.machine.device_region(ptr, 8).view(np.uint64)


@dataclass(frozen=True)
class ValueWriteTask:
    api: str
    ptr: int
    value: int
    pins: Pins

    def describe(self) -> str:
        return f"{self.api} of {self.value:#x} at {self.ptr:#x}"

    async def run(self, lane: Lane) -> None:
        check_pins(lane, self.pins)
        _word(lane, self.ptr)[0] = self.value


@dataclass(frozen=True)
class ValueWaitTask:
    api: str
    ptr: int
    value: int
    flag: int
    pins: Pins

    def describe(self) -> str:
        return f"{self.api} until *{self.ptr:#x} {CONDITIONS[self.flag][0]} {self.value:#x}"

    async def run(self, lane: Lane) -> None:
        holds = CONDITIONS[self.flag][1]
        pause = POLL_FIRST
        while True:
            check_pins(lane, self.pins)
            if holds(int(_word(lane, self.ptr)[0]), self.value):
                return
            if lane.closing.done():
                raise AclError(ACL_ERROR_RT_STREAM_ABORT, f"{lane} gave up its {self.describe()}")
            await asyncio.wait({lane.closing}, timeout=pause)
            pause = min(pause * 2, POLL_MOST)
