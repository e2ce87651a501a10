"""The hardware of the daemon: devices (memory and resource limits), pinned host memory, the kernel pool."""

from __future__ import annotations

import heapq
import os
import time
from itertools import count
from typing import TYPE_CHECKING

import numpy as np

from proto.addresses import DEVICE_BASE, DEVICE_STRIDE
from proto.errors import (
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_NO_EVENT_RESOURCE,
    ACL_ERROR_RT_NO_MODEL_RESOURCE,
    ACL_ERROR_RT_NO_STREAM_RESOURCE,
    AclError,
)
from server.npu.core.pool import KernelPool
from server.npu.core.trace import Tracer
from server.npu.memory.arena import Allocation, Arena, Epoch, MemoryFault
from server.npu.memory.hostmem import HostMemory
from server.npu.memory.vmem import Mapping, PhysicalMemory, VirtualSpace, Window
from server.npu.ops import ViewCache
from server.npu.ops.plans import PlanCache
from server.npu.tdt import DeviceTdt

if TYPE_CHECKING:
    from collections.abc import Iterable

    from server.npu.calls.memory.ipcmem import IpcMemory
    from server.npu.core.event import Event
    from server.npu.core.notify import Notify
    from server.npu.memory.quota import Quota

DEFAULT_MEMORY = 8 << 30
MAX_WHILE_ITERATIONS = 1_000_000  # VNPU_MAX_WHILE_ITERATIONS: a conditional WHILE model's bound per evaluation
VIRTUAL_OFFSET = DEVICE_STRIDE // 2  # where a device's virtual zone starts in its address window
# Kernels and copies touching more bytes than this run on the kernel thread pool; smaller ones run inline on the
# event loop. Measured with bench/offload.py on the 2-core CI machine: a pool hop costs 40-150 µs, and np.add
# reaches that duration at ~4-6 MB touched. Below it the hop would cost more than the kernel; above it the
# kernel would stall the loop (and every other stream and client) for longer than a hop.
OFFLOAD_BYTES = 4 << 20
# The work of one launch (server.npu.launch_bounds): elements computed, workspace bytes, seconds on the pool.
MAX_LAUNCH_ELEMENTS = 1 << 34  # VNPU_MAX_LAUNCH_ELEMENTS: numpy adds ~1e9 a second per core, BLAS multiply-adds ~1e11
MAX_LAUNCH_WORKSPACE = 4 << 30  # VNPU_MAX_LAUNCH_WORKSPACE
LAUNCH_TIMEOUT = 60.0  # VNPU_LAUNCH_TIMEOUT


class Limit:
    """A counted resource of a device (streams, events, models) with the error code of its exhaustion; a slot
    taken for a tenant with a quota counts against it too (`what` is its kind there)."""

    def __init__(self, what: str, maximum: int, code: int) -> None:
        self.what, self.maximum, self.code, self.used = what, maximum, code, 0

    def take(self, quota: Quota | None = None) -> None:
        if self.used >= self.maximum:
            raise AclError(self.code, f"no {self.what} resource left: all {self.maximum} are in use on this device")
        if quota is not None:
            quota.take(self.what)
        self.used += 1

    def give(self, quota: Quota | None = None) -> None:
        self.used -= 1
        if quota is not None:
            quota.give(self.what)


class IdPool:
    """Small integer ids, the smallest free one first (the driver's model ids: freed and reused)."""

    def __init__(self) -> None:
        self._free: list[int] = []
        self._next = 0

    def take(self) -> int:
        if self._free:
            return heapq.heappop(self._free)
        self._next += 1
        return self._next - 1

    def give(self, ident: int) -> None:
        heapq.heappush(self._free, ident)


class Device:
    """One virtual NPU: its memory (an Arena) and its limits on streams, events and models."""

    def __init__(
        self,
        index: int,
        memory_bytes: int = DEFAULT_MEMORY,
        max_streams: int = 1984,
        max_events: int = 65536,
        max_models: int = 1024,
        epoch: Epoch | None = None,
    ) -> None:
        if not 0 < memory_bytes <= VIRTUAL_OFFSET:
            raise ValueError(f"device memory must be between 1 byte and {VIRTUAL_OFFSET} bytes")
        self.index = index
        base = DEVICE_BASE + index * DEVICE_STRIDE
        self.arena = Arena(base, memory_bytes, epoch)
        # the upper half of the device's address window: reservations and host-memory windows (server.npu.memory.vmem)
        self.virtual = VirtualSpace(base + VIRTUAL_OFFSET, DEVICE_STRIDE - VIRTUAL_OFFSET, self.arena.epoch)
        self.streams = Limit("stream", max_streams, ACL_ERROR_RT_NO_STREAM_RESOURCE)
        self.events = Limit("event", max_events, ACL_ERROR_RT_NO_EVENT_RESOURCE)
        self.models = Limit("model", max_models, ACL_ERROR_RT_NO_MODEL_RESOURCE)
        self.model_ids = IdPool()  # aclmdlRIGetId
        self.stream_ids = count()  # aclrtStreamGetId
        self.notify_ids = count()  # aclrtGetNotifyId
        self.tdt = DeviceTdt()  # TDT channels, queues and queue routes (server.npu.tdt)
        self.started = time.perf_counter()  # the device clock's zero (aclrtEventGetTimestamp)

    def __contains__(self, ptr: int) -> bool:
        return ptr in self.arena or ptr in self.virtual

    def find(self, ptr: int) -> Allocation | Mapping | Window | None:
        """The live object of this device's memory that `ptr` falls in."""
        return self.arena.find(ptr) if ptr in self.arena else self.virtual.find(ptr)

    def region(self, ptr: int, nbytes: int) -> np.ndarray:
        """A uint8 view of [ptr, ptr + nbytes) of this device's memory; MemoryFault unless all of it is live."""
        return self.arena.region(ptr, nbytes) if ptr in self.arena else self.virtual.region(ptr, nbytes)


class Machine:
    """Everything the daemon simulates: its devices, the pinned host memory, and handle numbering."""

    def __init__(
        self,
        devices: int = 1,
        memory_bytes: int = DEFAULT_MEMORY,
        *,
        max_streams: int = 1984,
        max_events: int = 65536,
        max_models: int = 1024,
        offload_bytes: int = OFFLOAD_BYTES,
        kernel_threads: int | None = None,
        trace_capacity: int = 100_000,
        max_while_iterations: int = MAX_WHILE_ITERATIONS,
        max_launch_elements: int = MAX_LAUNCH_ELEMENTS,
        max_launch_workspace: int = MAX_LAUNCH_WORKSPACE,
        launch_timeout: float = LAUNCH_TIMEOUT,
        pool_share: int | None = None,
    ) -> None:
        self.epoch = Epoch()  # moves on every free of device memory
        self.devices = [
            Device(i, memory_bytes, max_streams, max_events, max_models, self.epoch) for i in range(devices)
        ]
        self.host = HostMemory()
        # The views inline kernels see, shared by all that name the same memory alike; device memory only (a
        # free of host memory does not move the epoch).
        self.views = ViewCache(self.device_region, self.epoch)
        self.plans = PlanCache(self.views, self.device_region, self.epoch)  # the plans of inline kernels
        self.offload_bytes = offload_bytes
        self.max_while_iterations = max_while_iterations  # body runs of one WHILE evaluation (server.npu.model.cond)
        self.tracer = Tracer(trace_capacity)
        self.max_launch_elements, self.max_launch_workspace = max_launch_elements, max_launch_workspace
        self.launch_timeout = launch_timeout
        threads = kernel_threads or os.cpu_count() or 2
        # one context may take half the kernel threads (at least one): the rest stay for the others
        self.pool = KernelPool(threads, pool_share or max(1, threads // 2))
        self._handles = count(0x1000)
        self.ipc_events: dict[bytes, Event] = {}  # aclrtIpcGetEventHandle's handles, for any context to open
        self.ipc_notifies: dict[str, Notify] = {}  # aclrtNotifyGetExportKey's keys, for any context to import
        self.ipc_memory: dict[str, IpcMemory] = {}  # aclrtIpcMemGetExportKey's keys
        self.shareable: dict[int, PhysicalMemory] = {}  # aclrtMemExportToShareableHandle's handles

    def new_handle(self) -> int:
        return next(self._handles)

    def device_of(self, ptr: int) -> Device | None:
        index = (ptr - DEVICE_BASE) // DEVICE_STRIDE
        if ptr >= DEVICE_BASE and index < len(self.devices) and ptr in self.devices[index]:
            return self.devices[index]
        return None

    def owner(self, ptr: int) -> object | None:
        """The live allocation (device or pinned host) that `ptr` falls in; a new object for every malloc."""
        device = self.device_of(ptr)
        if device is not None:
            return device.find(ptr)
        return self.host.find(ptr) if ptr in self.host else None

    def hold(self, pins: Iterable[tuple[int, object]]) -> list[tuple[Arena, Allocation]]:
        """Hold the device allocations of a task's pins while it runs off the loop (see `server.npu.memory.arena`)."""
        held = []
        for ptr, owner in pins:
            device = self.device_of(ptr)
            if isinstance(owner, Allocation) and device is not None and ptr in device.arena:
                device.arena.hold(owner)
                held.append((device.arena, owner))
        return held

    @staticmethod
    def release(held: list[tuple[Arena, Allocation]]) -> None:
        for arena, block in held:
            arena.release(block)

    def device_region(self, ptr: int, nbytes: int) -> np.ndarray:
        """A uint8 view of [ptr, ptr + nbytes) of device memory, as a kernel reads it: AclError 507053 unless
        all of it is live device memory."""
        device = self.device_of(ptr)
        try:
            if device is None:
                raise MemoryFault(f"{ptr:#x} is not device memory (aclrtMalloc)")
            return device.region(ptr, nbytes)
        except MemoryFault as fault:
            raise AclError(ACL_ERROR_RT_DEVICE_MEM_ERROR, f"invalid memory access: {fault}") from None

    def region(self, ptr: int, nbytes: int) -> np.ndarray:
        """A uint8 view of [ptr, ptr + nbytes) of device or pinned host memory; MemoryFault if not all live."""
        device = self.device_of(ptr)
        if device is not None:
            return device.region(ptr, nbytes)
        if ptr in self.host:
            return self.host.region(ptr, nbytes)
        raise MemoryFault(f"{ptr:#x} is neither device memory (aclrtMalloc) nor pinned host memory (aclrtMallocHost)")

    def close(self) -> None:
        self.pool.close()  # a kernel still running is abandoned: the process does not wait for it
        self.host.close()
