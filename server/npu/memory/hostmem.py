"""Pinned host memory (`aclrtMallocHost`): one POSIX shared-memory segment per allocation.

The daemon owns the segments, so a client on the same machine can map one by its name and share it zero-copy,
and a captured host-to-device copy reads the buffer when the model runs, not when it was captured. Host
pointers are ints in their own address range, disjoint from every device's. Segments are named
`vnpu-<pid>-<128 random bits in hex>`, mode 0600, and unlinked on free and on `close`; `sweep_stale` removes those
of daemons that died. Every process of the daemon's user can still open them (uid is Unix's trust boundary).
"""

from __future__ import annotations

import bisect
import contextlib
import mmap
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from proto.addresses import HOST_BASE
from server.npu.memory.arena import MemoryFault

SHM_DIR = Path("/dev/shm")
_PAGE = mmap.PAGESIZE


@dataclass
class HostBuffer:
    """One aclrtMallocHost block: its pointer, size and the shared-memory segment behind it."""

    ptr: int
    size: int
    name: str
    array: np.ndarray = field(repr=False)
    _map: mmap.mmap = field(repr=False)

    @property
    def end(self) -> int:
        return self.ptr + self.size


FREED_KEPT = 4096  # freed buffers remembered (host pointers are never reused, so this only bounds the messages)


class HostMemory:
    def __init__(self) -> None:
        self.prefix = f"vnpu-{os.getpid()}"
        self._next_ptr = HOST_BASE
        self._starts: list[int] = []
        self._live: dict[int, HostBuffer] = {}
        self._freed: dict[int, int] = {}  # recently freed ptr -> size, to explain a double free or a stale pointer

    @property
    def used_bytes(self) -> int:
        return sum(b.size for b in self._live.values())

    def __contains__(self, ptr: int) -> bool:
        return HOST_BASE <= ptr < self._next_ptr

    @staticmethod
    def available() -> int:
        """Bytes /dev/shm can still hold: pinned memory must be real, not a sparse promise."""
        stat = os.statvfs(SHM_DIR)
        return stat.f_bavail * stat.f_frsize

    def malloc(self, size: int) -> HostBuffer:
        name = f"{self.prefix}-{secrets.token_hex(16)}"  # unguessable: no tenant can name another's segment
        path = SHM_DIR / name
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, size)
            mapping = mmap.mmap(fd, size)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        finally:
            os.close(fd)
        ptr = self._next_ptr
        self._next_ptr += -(-size // _PAGE) * _PAGE + _PAGE  # a guard page between buffers
        buf = HostBuffer(ptr, size, name, np.frombuffer(mapping, dtype=np.uint8), mapping)
        bisect.insort(self._starts, ptr)
        self._live[ptr] = buf
        return buf

    def free(self, ptr: int) -> HostBuffer:
        buf = self._live.pop(ptr, None)
        if buf is None:
            if ptr in self._freed:
                raise MemoryFault(f"host pointer {ptr:#x} was already freed (double free)")
            raise MemoryFault(f"{ptr:#x} is not the start of an aclrtMallocHost buffer")
        self._starts.pop(bisect.bisect_left(self._starts, ptr))
        if len(self._freed) >= FREED_KEPT:
            self._freed.pop(next(iter(self._freed)))
        self._freed[ptr] = buf.size
        self._release(buf)
        return buf

    def find(self, ptr: int) -> HostBuffer | None:
        i = bisect.bisect_right(self._starts, ptr) - 1
        if i >= 0:
            buf = self._live[self._starts[i]]
            if ptr < buf.end:
                return buf
        return None

    def region(self, ptr: int, nbytes: int) -> np.ndarray:
        buf = self.find(ptr)
        if buf is None:
            freed = any(p <= ptr < p + max(n, 1) for p, n in self._freed.items())
            why = "a freed aclrtMallocHost buffer" if freed else "no live aclrtMallocHost buffer"
            raise MemoryFault(f"host pointer {ptr:#x} points into {why}")
        if ptr + nbytes > buf.end:
            raise MemoryFault(
                f"{nbytes} bytes at host pointer {ptr:#x} run {ptr + nbytes - buf.end} bytes past the end of "
                f"the {buf.size}-byte aclrtMallocHost buffer at {buf.ptr:#x}"
            )
        start = ptr - buf.ptr
        return buf.array[start : start + nbytes]

    def close(self) -> None:
        """Unlink every segment (at shutdown)."""
        for buf in list(self._live.values()):
            self._release(buf)
        self._live.clear()
        self._starts.clear()

    @staticmethod
    def _release(buf: HostBuffer) -> None:
        (SHM_DIR / buf.name).unlink(missing_ok=True)
        buf.array = np.empty(0, dtype=np.uint8)  # drop our own view so that the mapping can close now
        with contextlib.suppress(BufferError):  # a view is still alive; the mapping goes with the last one
            buf._map.close()


def sweep_stale(shm_dir: Path = SHM_DIR) -> list[str]:
    """Unlink the segments of vnpu daemons that are no longer running; returns their names."""
    removed = []
    for path in shm_dir.glob("vnpu-*-*"):
        match = re.fullmatch(r"vnpu-(\d+)-[0-9a-f]+", path.name)
        if match and not _alive(int(match.group(1))):
            path.unlink(missing_ok=True)
            removed.append(path.name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
