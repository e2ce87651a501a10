"""Stream memory operations: aclrtValueWrite and aclrtValueWait on a 64-bit word of device memory
(spec-breadth 14). A wait blocks its stream until the word satisfies the condition, whoever writes it: another
stream's value write, a copy, a kernel, the host."""

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
from proto.errors import ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_ABORT, AclError
from server.npu.context import Context, acl_call, require
from server.npu.tasks.base import Pins, check_pins

if TYPE_CHECKING:
    from server.npu.core.stream import Lane

MASK = 2**64 - 1
CONDITIONS: dict[int, tuple[str, Callable[[int, int], bool]]] = {
    ACL_STREAM_WAIT_VALUE_GEQ: (">=", lambda word, value: word >= value),
    ACL_STREAM_WAIT_VALUE_EQ: ("==", lambda word, value: word == value),
    ACL_STREAM_WAIT_VALUE_AND: ("&", lambda word, value: word & value != 0),
    ACL_STREAM_WAIT_VALUE_NOR: ("nor", lambda word, value: ~(word | value) & MASK != 0),
}
POLL_FIRST, POLL_MOST = 0.0002, 0.01  # seconds between looks at the word: doubling from the first to the most


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


class ValueCalls(Context):
    @acl_call
    def aclrtValueWrite(self, dev_addr: int | None, value: int, flag: int, stream: int | None) -> None:
        require(flag == 0, f"flag must be 0, got {flag}", ACL_ERROR_RT_PARAM_INVALID)
        on = self.stream(stream)
        ptr = self._word_address(dev_addr)
        self.issue(on, ValueWriteTask("aclrtValueWrite", ptr, value, self.pins(ptr)))

    @acl_call
    def aclrtValueWait(self, dev_addr: int | None, value: int, flag: int, stream: int | None) -> None:
        require(
            flag in CONDITIONS,
            f"flag {flag} is not an ACL_STREAM_WAIT_VALUE_* condition (GEQ 0, EQ 1, AND 2, NOR 3)",
            ACL_ERROR_RT_PARAM_INVALID,
        )
        on = self.stream(stream)
        ptr = self._word_address(dev_addr)
        self.issue(on, ValueWaitTask("aclrtValueWait", ptr, value, flag, self.pins(ptr)))

    def _word_address(self, ptr: int | None) -> int:
        """A 64-bit word, 8-byte aligned, in device memory of this process (107000 otherwise)."""
        require(bool(ptr), "devAddr is NULL")
        assert ptr is not None
        self.device_range("devAddr", ptr, 8)
        require(ptr % 8 == 0, f"devAddr {ptr:#x} is not 8-byte aligned", ACL_ERROR_RT_PARAM_INVALID)
        return ptr
