"""HostBuffer: what aclrtMallocHost returns -- pinned host memory of the daemon, usable wherever C passes the host
pointer (`int(buf)` and `buf.ptr` give it).

On the daemon's machine the buffer maps the daemon's shared-memory segment: `numpy()` is a live view, and writing
into it is what the C sample's `self_h[i] = 0` does; a captured host-to-device copy reads it when the model runs.
From another machine (or with VNPU_HOST_MEMORY=remote) the same methods go through the wire: `write` and `read`
move bytes, and `numpy()` returns a copy (write it back with `write`).
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SHM_DIR = Path("/dev/shm")


class HostBuffer:
    def __init__(
        self,
        ptr: int,
        size: int,
        remote_read: Callable[[int, int], bytes],
        remote_write: Callable[[int, bytes], None],
        segment: str | None = None,
        owner: object | None = None,
    ) -> None:
        self.ptr, self.size = ptr, size
        self.owner = owner  # the session (daemon) whose memory this is
        self._read, self._write = remote_read, remote_write
        self._map: mmap.mmap | None = None
        self._array: np.ndarray | None = None
        if segment is not None:
            self._map_local(segment)

    @staticmethod
    def shm_path(segment: str) -> Path:
        return SHM_DIR / segment

    def _map_local(self, segment: str) -> None:
        """Map the daemon's segment here; if this process may not open it (a client running as another user than
        the daemon), the buffer stays remote: every access goes through the daemon."""
        path = self.shm_path(segment)
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            return
        try:
            if os.fstat(fd).st_size != self.size:
                return
            self._map = mmap.mmap(fd, self.size)
        finally:
            os.close(fd)
        self._array = np.frombuffer(self._map, dtype=np.uint8)

    @property
    def local(self) -> bool:
        """True when the buffer is the daemon's memory mapped here (zero-copy)."""
        return self._array is not None

    def __index__(self) -> int:
        return self.ptr

    def __int__(self) -> int:
        return self.ptr

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"HostBuffer(ptr={self.ptr:#x}, size={self.size}, {'local' if self.local else 'remote'})"

    def write(self, data: Any, offset: int = 0) -> None:
        raw = memoryview(data).cast("B")
        self._check(offset, len(raw))
        if self._array is not None:
            self._array[offset : offset + len(raw)] = np.frombuffer(raw, dtype=np.uint8)
        else:
            self._write(self.ptr + offset, raw.tobytes())

    def read(self, count: int | None = None, offset: int = 0) -> bytes:
        count = self.size - offset if count is None else count
        self._check(offset, count)
        if self._array is not None:
            return self._array[offset : offset + count].tobytes()
        return self._read(self.ptr + offset, count)

    def numpy(self, dtype: Any = np.uint8) -> np.ndarray:
        """The whole buffer as `dtype`: a live view when local, a copy when remote."""
        itemsize = np.dtype(dtype).itemsize
        usable = self.size // itemsize * itemsize
        if self._array is not None:
            return self._array[:usable].view(dtype)
        return np.frombuffer(self.read(usable), dtype=dtype).copy()

    def release(self) -> None:
        """Drop the local mapping (after aclrtFreeHost)."""
        self._array = None
        if self._map is not None:
            with contextlib.suppress(BufferError):  # a numpy view is still alive; the mapping goes with it
                self._map.close()
            self._map = None

    def _check(self, offset: int, count: int) -> None:
        if offset < 0 or count < 0 or offset + count > self.size:
            raise IndexError(f"{count} bytes at offset {offset} do not fit the {self.size}-byte HostBuffer")
