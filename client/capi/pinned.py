"""Pinned host memory seen from C: the address translation between the program's pointers and the daemon's.

A C program writes `aclrtMallocHost` memory through plain pointers, so each buffer must be real memory of the
program. On the daemon's machine it is the daemon's shared-memory segment mapped here (zero-copy: the daemon and
the program see the same bytes). With the daemon elsewhere (or VNPU_HOST_MEMORY=remote) it is a local buffer
kept in step with the daemon's copy: before a call that may read host memory on the device side (a copy, a
memset, an execute, a synchronize) each buffer whose bytes changed since the last exchange is sent, and after a
call that completes device work (a synchronize, a synchronous copy or memset, a synchronous execute) every buffer
is read back. A pointer inside a buffer (`out_h + 4`) translates to the daemon's pointer at the same offset.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from client.hostbuf import HostBuffer


@dataclass
class Pinned:
    local: int  # the program's address of the first byte
    buffer: HostBuffer
    memory: Any  # what keeps the local bytes alive: the mapped numpy view, or a cffi char[]
    shadow: bytes | None = field(default=None)  # remote only: the bytes as last exchanged with the daemon
    managed: bool = False  # aclrtMemAllocManaged memory: its program address is also the device's (kernel arguments)

    @property
    def size(self) -> int:
        return self.buffer.size


class PinnedTable:
    def __init__(self, ffi: Any) -> None:
        self._ffi = ffi
        self._lock = threading.Lock()
        self._starts: list[int] = []
        self._entries: dict[int, Pinned] = {}
        self.remote = 0  # how many entries are kept in step through the wire
        # held while buffers are exchanged, and by whoever frees a buffer on the daemon: no exchange of a freed one
        self.exchange = threading.RLock()

    def add(self, buffer: HostBuffer, managed: bool = False) -> int:
        """Map `buffer` into the program; its local address."""
        if buffer.local:
            view = buffer.numpy()
            entry = Pinned(int(view.ctypes.data), buffer, view, managed=managed)
        else:
            memory = self._ffi.new("char[]", buffer.size)
            entry = Pinned(int(self._ffi.cast("uintptr_t", memory)), buffer, memory, managed=managed)
            data = buffer.read()
            self._ffi.memmove(memory, data, len(data))
            entry.shadow = data
        with self._lock:
            bisect.insort(self._starts, entry.local)
            self._entries[entry.local] = entry
            self.remote += entry.shadow is not None
        return entry.local

    def find(self, address: int) -> tuple[Pinned, int] | None:
        """The buffer holding `address` and the offset in it, or None (pageable memory, or a device pointer)."""
        if not self._starts:
            return None
        with self._lock:
            i = bisect.bisect_right(self._starts, address) - 1
            if i < 0:
                return None
            entry = self._entries[self._starts[i]]
        offset = address - entry.local
        return (entry, offset) if offset < entry.size else None

    def to_daemon(self, address: int) -> int:
        """The daemon's pointer for a program address inside a pinned buffer; any other address unchanged."""
        found = self.find(address)
        return address if found is None else found[0].buffer.ptr + found[1]

    def managed_to_daemon(self, block: bytes) -> bytes:
        """An argument block with each 8-byte slot that points into managed memory mapped here turned into the
        daemon's pointer: a kernel takes the pointer the program writes through, as on the device. A remote
        buffer it names is sent first (what the program wrote is what the kernel reads)."""
        if not any(entry.managed for entry in self._entries.values()):
            return block
        slots = np.frombuffer(block, "<u8", len(block) // 8).copy()
        for i, value in enumerate(slots.tolist()):
            found = self.find(value)
            if found is not None and found[0].managed:
                entry, offset = found
                slots[i] = entry.buffer.ptr + offset
                if entry.shadow is not None:
                    with self.exchange:
                        self._push(entry)
        return slots.tobytes() + block[len(slots) * 8 :]

    def remove(self, address: int) -> None:
        with self._lock:
            entry = self._entries.pop(address, None)
            if entry is None:
                return
            self._starts.remove(address)
            self.remote -= entry.shadow is not None
        entry.memory = None
        entry.buffer.release()

    def is_start(self, address: int) -> bool:
        return address in self._entries

    # -- remote buffers ------------------------------------------------------------------------------------------

    def _remote_entries(self) -> list[Pinned]:
        with self._lock:
            return [e for e in self._entries.values() if e.shadow is not None]

    def push(self) -> None:
        """Send what the program changed in each remote buffer since the last exchange (the changed span only, so
        bytes the device wrote meanwhile elsewhere in the buffer are kept)."""
        if not self.remote:
            return
        with self.exchange:
            for entry in self._remote_entries():
                self._push(entry)

    def pull(self) -> None:
        """Bring each remote buffer in step after device work completed: bytes the device changed since the last
        exchange are written into the program's memory, bytes the program changed are sent. Only changed bytes
        are written, so another thread's writes to the rest of a buffer are never undone."""
        if not self.remote:
            return
        with self.exchange:
            for entry in self._remote_entries():
                self._push(entry)
                daemon = np.frombuffer(entry.buffer.read(), np.uint8)
                shadow = np.frombuffer(entry.shadow or b"", np.uint8)
                changed = daemon != shadow
                if changed.any():
                    np.frombuffer(self._ffi.buffer(entry.memory), np.uint8)[changed] = daemon[changed]
                    entry.shadow = daemon.tobytes()

    def _push(self, entry: Pinned) -> None:
        local = np.frombuffer(self._ffi.buffer(entry.memory), np.uint8)
        shadow = np.frombuffer(entry.shadow or b"", np.uint8)
        changed = np.flatnonzero(local != shadow)
        if changed.size:
            first, last = int(changed[0]), int(changed[-1]) + 1
            span = local[first:last].tobytes()
            entry.buffer.write(span, first)
            entry.shadow = entry.shadow[:first] + span + entry.shadow[last:]  # type: ignore[index]
