"""Which allocation a tensor's memory starts in, as far as phase 1 can know it: a better diagnosis, never a new refusal.

Phase 1 runs on the host and knows no device memory, as in CANN. But when its overlap check finds two tensors
that partially overlap, the usual cause is not aliasing: it is a tensor larger than its allocation, whose bytes
run into the next one (aclrtMalloc's blocks sit next to each other). To say so, phase 1 asks `allocation_of`:

- in a client process, `KNOWN`: the aclrtMalloc blocks this process made and has not freed (the client adds and
  removes them; a block another process of a shared context made is not known, and the overlap is reported);
- on the daemon, the context's own allocations, set with `resolving` around phase 2's revalidation.

Only the message changes: the code is ACLNN_ERR_PARAM_INVALID either way.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

Resolver = Callable[[int], tuple[int, int] | None]  # ptr -> (base, size) of the live allocation holding it
MAX_KNOWN: Final = 1 << 20  # allocations a process remembers; past that it starts over (the diagnosis only)

_resolver: ContextVar[Resolver | None] = ContextVar("vnpu_extent_resolver", default=None)


class Allocations:
    """A process's live device allocations (base -> size), thread-safe, found by any pointer inside one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bases: list[int] = []
        self._sizes: dict[int, int] = {}

    def add(self, base: int, size: int) -> None:
        """A new block: entries it covers are stale (their memory was freed in a way the client did not see)."""
        with self._lock:
            if len(self._bases) >= MAX_KNOWN:
                self._bases.clear()
                self._sizes.clear()
            low = bisect.bisect_left(self._bases, base)
            high = bisect.bisect_left(self._bases, base + max(size, 1))
            for stale in self._bases[low:high]:
                del self._sizes[stale]
            self._bases[low:high] = [base]
            self._sizes[base] = size

    def remove(self, base: int) -> None:
        with self._lock:
            if self._sizes.pop(base, None) is not None:
                del self._bases[bisect.bisect_left(self._bases, base)]

    def clear(self) -> None:
        with self._lock:
            self._bases.clear()
            self._sizes.clear()

    def find(self, ptr: int) -> tuple[int, int] | None:
        with self._lock:
            i = bisect.bisect_right(self._bases, ptr) - 1
            if i < 0:
                return None
            base = self._bases[i]
            size = self._sizes[base]
            return (base, size) if ptr < base + max(size, 1) else None


KNOWN: Final = Allocations()


def allocation_of(ptr: int) -> tuple[int, int] | None:
    resolver = _resolver.get()
    return resolver(ptr) if resolver is not None else KNOWN.find(ptr)


@contextmanager
def resolving(resolver: Resolver) -> Iterator[None]:
    """Phase 1's checks inside this block find allocations with `resolver` (the daemon's, for one context)."""
    token = _resolver.set(resolver)
    try:
        yield
    finally:
        _resolver.reset(token)


def past_its_allocation(name: str, start: int, nbytes: int) -> str | None:
    """The message for a tensor whose `nbytes` at `start` begin in a known allocation and run past its end."""
    found = allocation_of(start)
    if found is None:
        return None
    base, size = found
    if start + nbytes <= base + size:
        return None
    return (
        f"{name} is larger than its allocation: its {nbytes} bytes at {start:#x} (offset {start - base} in the "
        f"{size}-byte allocation at {base:#x}) run {start + nbytes - base - size} bytes past its end, into "
        "memory that is not its own (check its shape and strides against the size given to aclrtMalloc)"
    )
