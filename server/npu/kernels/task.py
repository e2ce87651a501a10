"""A launch of a registered kernel (aclrtLaunchKernel*, a `<<<>>>` launch): a task like an aclnn kernel, captured,
grouped and updated alike. Its arguments are decoded at issue; its pointers become views when it runs."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from proto.errors import ACL_ERROR_RT_VECTOR_CORE_EXCEPTION, AclError
from server.npu.kernels.registry import ArgType, Block, Kernel, KernelTrap
from server.npu.tasks.kernel import KernelTask
from server.npu.tasks.pins import Pins, check_pins, offload

if TYPE_CHECKING:
    from server.npu.core.lane import Lane, Memory

MAX_PRINTED = 1 << 20  # characters of kernel printf a process has not collected yet; older text is dropped


class Printed:
    """The text a process's kernels printed (AscendC::printf), in stream order, until the client collects it."""

    def __init__(self, limit: int = MAX_PRINTED) -> None:
        self.limit = limit
        self._parts: deque[str] = deque()
        self._size = 0
        self.dropped = 0
        self.armed = False  # a kernel that may print was issued in this context

    @property
    def pending(self) -> bool:
        return bool(self._parts or self.dropped)

    def add(self, text: str) -> None:
        self._parts.append(text)
        self._size += len(text)
        while self._size > self.limit and self._parts:
            gone = self._parts.popleft()
            self._size -= len(gone)
            self.dropped += len(gone)

    def take(self) -> str:
        text = "".join(self._parts)
        if self.dropped:
            text = f"[vnpu: {self.dropped} characters of kernel printf were dropped: collect them sooner]\n" + text
        self._parts.clear()
        self._size = self.dropped = 0
        return text


Value = int | float | bytes | None  # a scalar, a device pointer (int; None for NULL), a placeholder's bytes


@dataclass(frozen=True)
class CustomKernelTask:
    """`kernel` over `blocks` blocks with its decoded arguments (pointers as addresses, placeholders as bytes)."""

    api: str
    kernel: Kernel
    blocks: int
    values: tuple[Value, ...]
    pins: Pins
    printed: Printed = field(compare=False, repr=False)
    kernel_kind: str = "custom"

    def describe(self) -> str:
        return f"{self.api} kernel {self.kernel.name} over {self.blocks} block(s)"

    async def run(self, lane: Lane) -> None:
        check_pins(lane, self.pins)
        views = [
            self._view(lane.machine, arg, value) for arg, value in zip(self.kernel.signature, self.values, strict=True)
        ]
        out: list[str] = []
        run = partial(self._blocks, views, out)
        try:  # on the kernel pool: an implementation may take long (LongOPf), the other streams go on
            await offload(lane, self.pins, run)
        finally:
            if out:
                self.printed.add("".join(out))

    def _view(self, machine: Memory, arg: ArgType, value: Value) -> object:
        if value is None or not arg.pointer:
            return value
        dtype = arg.dtype
        if isinstance(value, bytes):
            data = np.frombuffer(bytearray(value), np.uint8)
        else:
            address = int(value)
            owner = machine.owner(address)
            start = int(getattr(owner, "ptr", 0) or getattr(owner, "va", address))
            end = start + int(getattr(owner, "size", 0))
            data = machine.device_region(address, max(end - address, 1))  # from the pointer to its allocation's end
        usable = len(data) // dtype.itemsize * dtype.itemsize
        return data[:usable].view(dtype)

    def _blocks(self, views: list[object], out: list[str]) -> None:
        name = self.kernel.name
        indices: list[int | None] = [None] if self.kernel.grid else list(range(self.blocks))
        with np.errstate(all="ignore"):
            for index in indices:
                try:
                    self.kernel.impl(Block(index, self.blocks, out), *views)
                except KernelTrap as trap:
                    raise AclError(
                        ACL_ERROR_RT_VECTOR_CORE_EXCEPTION, f"kernel {name} trapped in block {index}: {trap}"
                    ) from None
                except AclError:
                    raise
                except Exception as error:
                    raise AclError(
                        ACL_ERROR_RT_VECTOR_CORE_EXCEPTION,
                        f"the numpy implementation of kernel {name} failed in block {index}: {error!r}",
                    ) from None


AnyKernel = KernelTask | CustomKernelTask  # what a task group holds and a task update collects
