"""The machine: everything the daemon simulates -- its devices, the pinned host memory, the kernel pool, the trace, the
plans of inline kernels, handle numbering and what processes share (`server.npu.memory.ipc`)."""

from __future__ import annotations

import os
from itertools import count
from typing import TYPE_CHECKING

import numpy as np

from proto.addresses import DEVICE_BASE, DEVICE_STRIDE
from proto.errors import (
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_INVALID_DEVICEID,
    AclError,
)
from server.npu.core.pool import KernelPool
from server.npu.core.trace import Tracer
from server.npu.device import DEFAULT_MEMORY, Device
from server.npu.memory.arena import Allocation, Arena, Epoch, MemoryFault
from server.npu.memory.hostmem import HostMemory
from server.npu.memory.ipc import IpcRegistry
from server.npu.ops import ViewCache
from server.npu.ops.plans import PlanCache

if TYPE_CHECKING:
    from collections.abc import Iterable


MAX_WHILE_ITERATIONS = 1_000_000  # VNPU_MAX_WHILE_ITERATIONS: a conditional WHILE model's bound per evaluation
# Kernels and copies touching more bytes than this run on the kernel thread pool; smaller ones run inline on the
# event loop. Measured with bench/offload.py on the 2-core CI machine: a pool hop costs 40-150 µs, and np.add
# reaches that duration at ~4-6 MB touched. Below it the hop would cost more than the kernel; above it the
# kernel would stall the loop (and every other stream and client) for longer than a hop.
OFFLOAD_BYTES = 4 << 20
# The work of one launch (server.npu.launch_bounds): elements computed, workspace bytes, seconds on the pool.
MAX_LAUNCH_ELEMENTS = 1 << 34  # VNPU_MAX_LAUNCH_ELEMENTS: numpy adds ~1e9 a second per core, BLAS multiply-adds ~1e11
MAX_LAUNCH_WORKSPACE = 4 << 30  # VNPU_MAX_LAUNCH_WORKSPACE
LAUNCH_TIMEOUT = 60.0  # VNPU_LAUNCH_TIMEOUT


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
        trace_shares: int = 1,
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
        self.tracer = Tracer(trace_capacity, trace_shares)  # a ring per tenant (shares: how many tenants)
        self.max_launch_elements, self.max_launch_workspace = max_launch_elements, max_launch_workspace
        self.launch_timeout = launch_timeout
        threads = kernel_threads or os.cpu_count() or 2
        # one context may take half the kernel threads (at least one): the rest stay for the others
        self.pool = KernelPool(threads, pool_share or max(1, threads // 2))
        self._handles = count(0x1000)
        self.ipc = IpcRegistry()  # what processes share

    def new_handle(self) -> int:
        return next(self._handles)

    def device(self, device_id: int) -> Device:
        """Device `device_id` of this daemon (aclrtSetDevice's and the device queries' argument); 107001 otherwise."""
        if not 0 <= device_id < len(self.devices):
            raise AclError(
                ACL_ERROR_RT_INVALID_DEVICEID,
                f"device {device_id} does not exist: this daemon has {len(self.devices)} device(s)",
            )
        return self.devices[device_id]

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
