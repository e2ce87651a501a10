"""Virtual device memory (spec-breadth 11) and the other device-address windows onto memory (12).

- Physical memory (aclrtMallocPhysical's aclrtDrvMemHandle) is a page-aligned block of a device's arena that no
  aclrtMalloc pointer names: it is reached only through the reservations it is mapped into.
- A reservation (aclrtReserveMemAddress) is a range of device addresses in the device's virtual zone (the upper
  half of its address window) with no backing; in the daemon it is an anonymous mapping of the same size.
- aclrtMapMem maps a physical block into a reservation with MAP_FIXED over the arena's memory file: the bytes at
  the virtual address *are* the arena's bytes. So every mapping of one block -- in this process or in one that
  imported it -- aliases it, and adjacent mappings form one contiguous view, as on the device.
- A window is a device-address range onto memory that has an address of its own: a registered aclrtMallocHost
  range (aclrtHostRegisterV2 with ACL_HOST_REG_MAPPED), managed memory (aclrtMemAllocManaged), or another
  process's device memory imported by an IPC key (aclrtIpcMemImportByKey).

Nothing here leaves a hole that a late reader could fault on: an unmapped or released range is replaced by fresh
anonymous memory (a kernel that still runs on an old view writes into scratch), and the checks made before every
task refuse the addresses themselves (`tasks.check_pins`, `region`). Released ranges of the daemon's address
space are reused by later reservations, so a loop of reserve/release does not grow it.
"""

from __future__ import annotations

import bisect
import ctypes
import mmap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from server.npu.memory.allocator import OffsetAllocator
from server.npu.memory.arena import Allocation, Arena, Epoch, MemoryFault

if TYPE_CHECKING:
    from server.npu.memory.hostmem import HostBuffer

GRANULARITY = 2 << 20  # aclrtMemGetAllocationGranularity: 2 MiB pages (1 GiB for the HUGE1G attributes)
HUGE1G = 1 << 30
_PAGE = mmap.PAGESIZE
_PROT_RW = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FIXED = 0x10  # Linux, every architecture vnpu runs on
_ANONYMOUS = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0x4000)
_RETIRED_KEPT = 64  # released ranges kept for reuse; beyond this the oldest is unmapped

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def _mmap(addr: int | None, length: int, flags: int, fd: int = -1, offset: int = 0) -> int:
    got = _libc.mmap(addr, length, _PROT_RW, flags, fd, offset)
    if got is None or got == ctypes.c_void_p(-1).value:
        raise OSError(ctypes.get_errno(), f"mmap of {length} bytes failed")
    return int(got)


def _scratch(addr: int, length: int) -> None:
    """Replace [addr, addr + length) of the daemon's memory by fresh anonymous pages."""
    _mmap(addr, length, _ANONYMOUS | _MAP_FIXED)


@dataclass(eq=False)
class PhysicalMemory:
    """aclrtDrvMemHandle: device memory that only mappings reach. It goes back to the arena when the last handle
    to it (its creator's, an importer's) is freed and the last mapping of it is gone."""

    handle: int
    arena: Arena
    device_index: int
    size: int
    block: Allocation  # the arena block it occupies
    offset: int  # page-aligned offset of its bytes in the arena's memory file
    refs: int = 1  # handles not yet freed + live mappings
    shareable: int | None = None  # aclrtMemExportToShareableHandle's value
    pid_validation: bool = True
    import_pids: set[int] = field(default_factory=set)
    released: Callable[[], None] | None = field(default=None, repr=False)  # gives its charge back (its allocator's)

    def __str__(self) -> str:
        return f"physical memory {self.handle:#x} ({self.size} bytes on device {self.device_index})"

    def drop(self) -> bool:
        """One reference fewer; True when the memory went back to the arena (and its charge with it)."""
        self.refs -= 1
        if self.refs:
            return False
        self.arena.free(self.block.ptr)
        if self.released is not None:
            self.released()
        return True


@dataclass(eq=False)
class Mapping:
    """One aclrtMapMem: a physical block at `va`. A new object for every map, so a task issued before an unmap
    sees that its memory changed (`tasks.check_pins`)."""

    va: int
    size: int
    physical: PhysicalMemory
    reservation: Reservation

    @property
    def ptr(self) -> int:
        return self.va

    @property
    def end(self) -> int:
        return self.va + self.size

    def describe(self, ptr: int) -> str:
        return f"{ptr:#x} (offset {ptr - self.va} in the {self.size}-byte mapping of {self.physical} at {self.va:#x})"


class Reservation:
    """aclrtReserveMemAddress: `size` bytes of device addresses from `va`, backed where mapped."""

    def __init__(self, va: int, size: int, host: int, host_size: int) -> None:
        self.va, self.size, self.host, self.host_size = va, size, host, host_size
        self.view = np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(host))
        self._starts: list[int] = []
        self.mappings: dict[int, Mapping] = {}

    def __str__(self) -> str:
        return f"the {self.size}-byte reservation at {self.va:#x}"

    @property
    def end(self) -> int:
        return self.va + self.size

    def find(self, ptr: int) -> Mapping | None:
        i = bisect.bisect_right(self._starts, ptr) - 1
        if i >= 0:
            mapping = self.mappings[self._starts[i]]
            if ptr < mapping.end:
                return mapping
        return None

    def overlapping(self, va: int, size: int) -> Mapping | None:
        i = bisect.bisect_left(self._starts, va + size) - 1
        if i >= 0 and self.mappings[self._starts[i]].end > va:
            return self.mappings[self._starts[i]]
        return None

    def map(self, va: int, physical: PhysicalMemory, fd: int) -> Mapping:
        _mmap(self.host + va - self.va, physical.size, mmap.MAP_SHARED | _MAP_FIXED, fd, physical.offset)
        mapping = Mapping(va, physical.size, physical, self)
        bisect.insort(self._starts, va)
        self.mappings[va] = mapping
        physical.refs += 1
        return mapping

    def unmap(self, mapping: Mapping) -> None:
        del self.mappings[mapping.va]
        self._starts.pop(bisect.bisect_left(self._starts, mapping.va))
        _scratch(self.host + mapping.va - self.va, mapping.size)
        mapping.physical.drop()

    def region(self, ptr: int, nbytes: int) -> np.ndarray:
        """The view of [ptr, ptr + nbytes), which adjacent mappings must cover without a gap."""
        at, end = ptr, ptr + max(nbytes, 1)
        while at < end:
            mapping = self.find(at)
            if mapping is None:
                where = "" if at == ptr else f" ({at - ptr} bytes after {ptr:#x})"
                raise MemoryFault(f"{at:#x}{where} lies in {self} but no physical memory is mapped there (aclrtMapMem)")
            at = mapping.end
        start = ptr - self.va
        return self.view[start : start + nbytes]


@dataclass(eq=False)
class Window:
    """Device addresses onto memory that has addresses of its own: a registered aclrtMallocHost range, managed
    memory (which owns its host buffer and is freed with aclrtFree), or an imported IPC range of another
    process's device memory. `array` is a view of exactly its bytes."""

    va: int
    size: int
    array: np.ndarray = field(repr=False)
    what: str  # for messages: "managed memory", "IPC memory imported by key ..."
    host: HostBuffer | None = None  # the host buffer behind it, if any
    managed: bool = False

    @property
    def ptr(self) -> int:
        return self.va

    @property
    def end(self) -> int:
        return self.va + self.size

    def __str__(self) -> str:
        return f"the {self.size} bytes of {self.what} at {self.va:#x}"

    def describe(self, ptr: int) -> str:
        return f"{ptr:#x} (offset {ptr - self.va} in {self})"

    def region(self, ptr: int, nbytes: int) -> np.ndarray:
        if ptr + nbytes > self.end:
            raise MemoryFault(
                f"{nbytes} bytes at {self.describe(ptr)} run {ptr + nbytes - self.end} bytes past its end"
            )
        return self.array[ptr - self.va : ptr - self.va + nbytes]


Range = Reservation | Window


class VirtualSpace:
    """The virtual zone of one device: its reservations and windows, found by address."""

    def __init__(self, base: int, size: int, epoch: Epoch) -> None:
        self.base, self.size, self.epoch = base, size, epoch
        self._allocator = OffsetAllocator(size, GRANULARITY)
        self._starts: list[int] = []
        self._ranges: dict[int, Range] = {}
        self._retired: list[tuple[int, int]] = []  # (address, size) of released daemon memory, for reuse
        self._gone: dict[int, tuple[int, str]] = {}  # recently released va -> (size, what), for the messages

    def __contains__(self, ptr: int) -> bool:
        return self.base <= ptr < self.base + self.size

    def find_range(self, ptr: int) -> Range | None:
        i = bisect.bisect_right(self._starts, ptr) - 1
        if i >= 0:
            found = self._ranges[self._starts[i]]
            if ptr < found.end:
                return found
        return None

    def find(self, ptr: int) -> Mapping | Window | None:
        """The live object `ptr` falls in (a mapping or a window; None in an unmapped part of a reservation)."""
        found = self.find_range(ptr)
        return found.find(ptr) if isinstance(found, Reservation) else found

    def region(self, ptr: int, nbytes: int) -> np.ndarray:
        found = self.find_range(ptr)
        if found is None:
            raise MemoryFault(self.explain(ptr))
        if ptr + nbytes > found.end:
            raise MemoryFault(
                f"{nbytes} bytes at {ptr:#x} run {ptr + nbytes - found.end} bytes past the end of {found}"
            )
        return found.region(ptr, nbytes)

    def explain(self, ptr: int) -> str:
        for start, (size, what) in self._gone.items():
            if start <= ptr < start + size:
                return f"{ptr:#x} lies in {what} at {start:#x}, which was released"
        return f"{ptr:#x} is in no reservation (aclrtReserveMemAddress) or mapped host memory of this device"

    def _take(self, size: int) -> int:
        offset, _ = self._allocator.alloc(size)
        return self.base + offset

    def _add(self, found: Range) -> None:
        bisect.insort(self._starts, found.va)
        self._ranges[found.va] = found
        self._gone.pop(found.va, None)

    def _remove(self, found: Range, what: str) -> None:
        del self._ranges[found.va]
        self._starts.pop(bisect.bisect_left(self._starts, found.va))
        self._allocator.free(found.va - self.base, self._allocator.rounded(found.size))
        self.epoch.value += 1
        if len(self._gone) >= 4096:
            self._gone.pop(next(iter(self._gone)))
        self._gone[found.va] = (found.size, what)

    def reserve(self, size: int) -> Reservation:
        """A reservation of `size` bytes (rounded up to the granularity); OutOfSpace when the zone is full."""
        size = -(-size // GRANULARITY) * GRANULARITY
        va = self._take(size)
        fits = [r for r in self._retired if r[1] >= size]
        if fits:
            host, host_size = min(fits, key=lambda r: r[1])
            self._retired.remove((host, host_size))
        else:
            try:
                host, host_size = _mmap(None, size, _ANONYMOUS), size
            except OSError:
                self._allocator.free(va - self.base, size)
                raise
        reservation = Reservation(va, size, host, host_size)
        self._add(reservation)
        return reservation

    def release(self, reservation: Reservation) -> None:
        """Give back an unmapped reservation."""
        self._remove(reservation, f"the {reservation.size}-byte reservation")
        _scratch(reservation.host, reservation.host_size)
        self._retired.append((reservation.host, reservation.host_size))
        if len(self._retired) > _RETIRED_KEPT:
            host, host_size = self._retired.pop(0)
            _libc.munmap(host, host_size)

    def unmap(self, mapping: Mapping) -> None:
        mapping.reservation.unmap(mapping)
        self.epoch.value += 1

    def open_window(
        self, array: np.ndarray, what: str, host: HostBuffer | None = None, managed: bool = False
    ) -> Window:
        """A window onto `array` (uint8) at a fresh address; OutOfSpace when the zone is full."""
        window = Window(self._take(len(array)), len(array), array, what, host, managed)
        self._add(window)
        return window

    def close_window(self, window: Window) -> None:
        if self._ranges.get(window.va) is window:
            self._remove(window, window.what)
