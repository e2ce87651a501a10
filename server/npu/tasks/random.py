"""The random-number task of aclrtRandomNumAsync: the DSA engine's generator (`randomgen`) over device memory."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np

from proto.constants import aclrtRandomNumFuncType
from proto.randomnum import aclrtRandomParaInfo, rtRandomNumDataType
from server.npu.tasks import randomgen
from server.npu.tasks.pins import Pins, check_pins, offload

if TYPE_CHECKING:
    from server.npu.core.lane import Lane, Memory


RT = rtRandomNumDataType
WORD, COUNTER_BYTES, BLOCK_BYTES = 8, 16, 16
DTYPES = {
    RT.RT_RANDOM_NUM_DATATYPE_INT32: np.dtype(np.int32),
    RT.RT_RANDOM_NUM_DATATYPE_INT64: np.dtype(np.int64),
    RT.RT_RANDOM_NUM_DATATYPE_UINT32: np.dtype(np.uint32),
    RT.RT_RANDOM_NUM_DATATYPE_UINT64: np.dtype(np.uint64),
    RT.RT_RANDOM_NUM_DATATYPE_BF16: np.dtype(ml_dtypes.bfloat16),
    RT.RT_RANDOM_NUM_DATATYPE_FP16: np.dtype(np.float16),
    RT.RT_RANDOM_NUM_DATATYPE_FP32: np.dtype(np.float32),
}


@dataclass(frozen=True)
class Param:
    """A parameter as the task gets it: the first `size` bytes of valueOrAddr, zero-extended (value or address)."""

    by_address: bool
    raw: int

    @classmethod
    def of(cls, info: aclrtRandomParaInfo) -> Param:
        return cls(info.isAddr == 1, int.from_bytes(bytes(info.valueOrAddr[: info.size]), "little"))


def _read(machine: Memory, raw: int, by_address: bool, nbytes: int) -> bytes:
    """A parameter's bytes: the value itself, or `nbytes` of device memory at the address it holds."""
    if by_address:
        return machine.device_region(raw, nbytes).tobytes()
    return raw.to_bytes(WORD, "little")[:nbytes]


def _number(data: bytes, dtype: np.dtype) -> float | int:
    value = np.frombuffer(data, dtype)[0]
    return int(value) if dtype.kind in "iu" else float(value)


@dataclass(frozen=True)
class RandomNumTask:
    api: str
    func: aclrtRandomNumFuncType
    dtype: np.dtype
    by_address: tuple[bool, bool]  # the block's two parameters: addresses, or values
    block: bytes  # the block as copied at launch: read when para_addr is None (the runtime's own memory)
    para_addr: int | None
    seed: Param
    count: Param
    result: int
    counter: int
    pins: Pins

    def describe(self) -> str:
        func = self.func.name.removeprefix("ACL_RT_RANDOM_NUM_FUNC_TYPE_")
        return f"{self.api} {func} of {self.dtype} into {self.result:#x}, counter at {self.counter:#x}"

    async def run(self, lane: Lane) -> None:
        check_pins(lane, self.pins)
        machine = lane.machine
        seed = int.from_bytes(_read(machine, self.seed.raw, self.seed.by_address, WORD), "little")
        count = int.from_bytes(_read(machine, self.count.raw, self.count.by_address, WORD), "little")
        block = machine.device_region(self.para_addr, BLOCK_BYTES).tobytes() if self.para_addr else self.block
        values = []
        for i, by_address in enumerate(self.by_address):
            raw = int.from_bytes(block[i * WORD : (i + 1) * WORD], "little")
            values.append(_number(_read(machine, raw, by_address, self.dtype.itemsize), self.dtype))
        first, second = values
        state = machine.device_region(self.counter, COUNTER_BYTES)
        nbytes = randomgen.result_bytes(self.func, self.dtype, count)
        out = machine.device_region(self.result, nbytes)  # checked before a word is drawn
        words = randomgen.Words(seed, int.from_bytes(state.tobytes(), "little"))
        fill = partial(randomgen.generate, self.func, self.dtype, first, second, count, words, out)
        if nbytes > machine.offload_bytes:
            await offload(lane, self.pins, fill)
        else:
            fill()
        state[:] = np.frombuffer(words.counter.to_bytes(COUNTER_BYTES, "little"), np.uint8)
