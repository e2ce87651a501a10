"""An offset allocator: hands out aligned ranges of a fixed-size address space, and nothing else.

Algorithm: address-ordered first fit over a free list of (offset, size) blocks kept sorted by offset. `alloc`
takes the lowest block that fits (after rounding the request up to `alignment`) and splits off the rest;
`free` puts the block back and merges it with the neighbours it touches, so the free list never holds two
adjacent blocks. Both are O(free blocks); a device rarely holds more than a few thousand, and first fit keeps
long-lived allocations packed at low addresses, which keeps fragmentation low in the capture/replay pattern
(allocate once, replay many times).
"""

from __future__ import annotations

import bisect


class OutOfSpace(Exception):
    """No free block is large enough; `largest` is the biggest one there is."""

    def __init__(self, size: int, free: int, largest: int) -> None:
        super().__init__(f"cannot allocate {size} bytes: {free} bytes free, largest free block {largest} bytes")
        self.size, self.free, self.largest = size, free, largest


class OffsetAllocator:
    def __init__(self, capacity: int, alignment: int) -> None:
        if capacity <= 0 or alignment <= 0 or capacity % alignment:
            raise ValueError("capacity must be a positive multiple of alignment")
        self.capacity = capacity
        self.alignment = alignment
        self._offsets: list[int] = [0]  # free blocks, sorted by offset
        self._sizes: list[int] = [capacity]
        self.free_bytes = capacity

    def rounded(self, size: int) -> int:
        return -(-size // self.alignment) * self.alignment

    def alloc(self, size: int) -> tuple[int, int]:
        """Reserve at least `size` bytes; returns (offset, reserved size)."""
        need = self.rounded(size)
        for i, block in enumerate(self._sizes):
            if block >= need:
                offset = self._offsets[i]
                if block == need:
                    del self._offsets[i], self._sizes[i]
                else:
                    self._offsets[i] += need
                    self._sizes[i] -= need
                self.free_bytes -= need
                return offset, need
        raise OutOfSpace(need, self.free_bytes, max(self._sizes, default=0))

    def free(self, offset: int, size: int) -> None:
        """Return a range that `alloc` handed out (the caller guarantees that it did, once)."""
        i = bisect.bisect_left(self._offsets, offset)
        merge_prev = i > 0 and self._offsets[i - 1] + self._sizes[i - 1] == offset
        merge_next = i < len(self._offsets) and offset + size == self._offsets[i]
        if merge_prev and merge_next:
            self._sizes[i - 1] += size + self._sizes[i]
            del self._offsets[i], self._sizes[i]
        elif merge_prev:
            self._sizes[i - 1] += size
        elif merge_next:
            self._offsets[i] = offset
            self._sizes[i] += size
        else:
            self._offsets.insert(i, offset)
            self._sizes.insert(i, size)
        self.free_bytes += size

    def free_blocks(self) -> list[tuple[int, int]]:
        return list(zip(self._offsets, self._sizes, strict=True))
