"""Device memory: one numpy byte buffer per device, carved up by an offset allocator.

A device pointer is an int, `base + offset`, so `ptr + n` works as in C. `find` maps any pointer to the live
allocation it falls in (a bisect over allocation starts), and `region` hands out a bounds-checked numpy view:
kernels and copies work on views of the arena, never on copies of it.

The buffer is a shared mapping of an anonymous memory file (memfd, Linux), so physical memory handed out by
aclrtMallocPhysical -- a block of this arena -- can be mapped a second time into a reserved virtual range
(`server.npu.memory.vmem`); where there is no memfd, it is plain zeroed memory and virtual memory is not offered.
"""

from __future__ import annotations

import bisect
import mmap
import os
import weakref
from dataclasses import dataclass, field

import numpy as np

from server.npu.memory.allocator import OffsetAllocator, OutOfSpace

ALIGNMENT = 64  # aclrtMalloc returns 64-byte aligned addresses
_PAD = 32  # the runtime rounds sizes up to 32 bytes and adds 32 on A2/A3/310P/910


@dataclass(frozen=True)
class Allocation:
    """One live aclrtMalloc block; `size` is what the caller asked for and all that may be touched."""

    ptr: int
    size: int
    reserved: int
    policy: int
    freed_by: list[str] = field(default_factory=list, compare=False, repr=False)  # the call that freed it, once

    @property
    def end(self) -> int:
        return self.ptr + self.size

    def describe(self, ptr: int) -> str:
        return f"{ptr:#x} (offset {ptr - self.ptr} in the {self.size}-byte allocation at {self.ptr:#x})"


class Epoch:
    """Counts frees of device memory (every arena of a machine shares one): whatever was checked against live
    memory at one value -- a task's pins, a view -- still holds while the value stays the same."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class MemoryFault(Exception):
    """An access outside live memory; the caller turns it into the AclError its API returns."""


class Arena:
    """The memory of one device (HBM in CANN terms)."""

    def __init__(self, base: int, capacity: int, epoch: Epoch | None = None) -> None:
        capacity = -(-capacity // ALIGNMENT) * ALIGNMENT
        self.base = base
        self.epoch = epoch or Epoch()
        self.capacity = capacity
        self.fd = _memory_file(capacity)  # -1: none (not Linux)
        if self.fd >= 0:
            weakref.finalize(self, os.close, self.fd)
            self.buffer = np.frombuffer(mmap.mmap(self.fd, capacity), dtype=np.uint8)
        else:
            self.buffer = np.zeros(capacity, dtype=np.uint8)  # pages are committed on first touch either way
        self._allocator = OffsetAllocator(capacity, ALIGNMENT)
        self._starts: list[int] = []
        self._live: dict[int, Allocation] = {}
        self._freed: dict[int, int] = {}  # recently freed ptr -> size, to explain a double free or a stale pointer
        self._holds: dict[int, int] = {}  # block ptr -> the running off-loop tasks that hold it
        self._quarantine: dict[int, Allocation] = {}  # blocks freed while held, by ptr

    def __contains__(self, ptr: int) -> bool:
        return self.base <= ptr < self.base + self.capacity

    @property
    def free_bytes(self) -> int:
        return self._allocator.free_bytes

    @property
    def used_bytes(self) -> int:
        return self.capacity - self._allocator.free_bytes

    @property
    def quarantined_bytes(self) -> int:
        return sum(block.reserved for block in self._quarantine.values())

    def hold(self, block: Allocation) -> None:
        """A running task uses `block` (live): a free of it keeps its range out of the allocator until `release`."""
        self._holds[block.ptr] = self._holds.get(block.ptr, 0) + 1

    def release(self, block: Allocation) -> None:
        """One holder of `block` ended; the last one gives a block freed meanwhile back to the allocator."""
        holders = self._holds.pop(block.ptr) - 1
        if holders:
            self._holds[block.ptr] = holders
        elif self._quarantine.pop(block.ptr, None) is not None:
            self._allocator.free(block.ptr - self.base, block.reserved)

    def malloc(self, size: int, policy: int, padding: bool = True) -> Allocation:
        """Reserve `size` bytes (> 0), rounded up to 32 and, with `padding` (aclrtMalloc, not aclrtMallocAlign32),
        32 more; raises OutOfSpace when no block is large enough."""
        padded = -(-size // 32) * 32 + (_PAD if padding else 0)
        offset, reserved = self._allocator.alloc(padded)
        block = Allocation(self.base + offset, size, reserved, policy)
        bisect.insort(self._starts, block.ptr)
        self._live[block.ptr] = block
        self._freed.pop(block.ptr, None)
        return block

    def free(self, ptr: int, by: str = "") -> Allocation:
        """Free the block at `ptr`; `by`, the call that frees it, is what a task that still pins it will name."""
        block = self._live.get(ptr)
        if block is None:
            raise MemoryFault(self.explain_not_start(ptr))
        if by:
            block.freed_by.append(by)
        del self._live[ptr]
        self.epoch.value += 1
        self._starts.pop(bisect.bisect_left(self._starts, ptr))
        if ptr in self._holds:
            self._quarantine[ptr] = block
        else:
            self._allocator.free(ptr - self.base, block.reserved)
        if len(self._freed) > 4096:
            self._freed.pop(next(iter(self._freed)))
        self._freed[ptr] = block.size
        return block

    def find(self, ptr: int) -> Allocation | None:
        i = bisect.bisect_right(self._starts, ptr) - 1
        if i >= 0:
            block = self._live[self._starts[i]]
            if ptr < block.end:
                return block
        return None

    def region(self, ptr: int, nbytes: int) -> np.ndarray:
        """A uint8 view of [ptr, ptr + nbytes), which must lie inside one live allocation."""
        block = self.find(ptr)
        if block is None:
            raise MemoryFault(self.explain_unmapped(ptr))
        if ptr + nbytes > block.end:
            raise MemoryFault(
                f"{nbytes} bytes at {block.describe(ptr)} run {ptr + nbytes - block.end} bytes past its end"
            )
        start = ptr - self.base
        return self.buffer[start : start + nbytes]

    def explain_unmapped(self, ptr: int) -> str:
        for start, size in self._freed.items():
            if start <= ptr < start + max(size, 1):
                return f"{ptr:#x} lies in the {size}-byte allocation at {start:#x}, which was freed"
        return f"{ptr:#x} is not inside any live allocation of this device"

    def explain_not_start(self, ptr: int) -> str:
        if ptr in self._freed:
            return f"{ptr:#x} was already freed (double free)"
        block = self.find(ptr)
        if block is not None:
            return f"{ptr:#x} is not the start of an allocation: it is {block.describe(ptr)}"
        return self.explain_unmapped(ptr)


def _memory_file(size: int) -> int:
    create = getattr(os, "memfd_create", None)
    if create is None:
        return -1
    fd: int = create("vnpu-device-memory")  # close-on-exec
    os.ftruncate(fd, size)
    return fd


__all__ = ["ALIGNMENT", "Allocation", "Arena", "Epoch", "MemoryFault", "OutOfSpace"]
