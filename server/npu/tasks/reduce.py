"""The reduce task of aclrtReduceAsync: dst[i] = dst[i] op src[i] over device memory, the SDMA engine's built-in
reduction, computed in the element type itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from proto.constants import aclrtReduceKind
from server.npu.tasks.pins import Pins, check_pins

if TYPE_CHECKING:
    from server.npu.core.lane import Lane


K = aclrtReduceKind
OPS = {
    K.ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM: np.add,
    K.ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX: np.maximum,
    K.ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN: np.minimum,
}


@dataclass(frozen=True)
class ReduceTask:
    api: str
    dst: int
    src: int
    count: int
    kind: aclrtReduceKind
    dtype: np.dtype
    pins: Pins

    def describe(self) -> str:
        op = self.kind.name.rsplit("_", 1)[-1]
        return f"{self.api} {op} of {self.count} bytes of {self.dtype} {self.src:#x} into {self.dst:#x}"

    async def run(self, lane: Lane) -> None:
        check_pins(lane, self.pins)
        dst = lane.machine.region(self.dst, self.count).view(self.dtype)
        src = lane.machine.region(self.src, self.count).view(self.dtype)
        OPS[self.kind](dst, src, out=dst)
