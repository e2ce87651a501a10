"""The hardware of the daemon: devices (memory and resource limits), pinned host memory, the kernel pool."""

from __future__ import annotations

import heapq
import time
from itertools import count
from typing import TYPE_CHECKING

import numpy as np

from proto.addresses import DEVICE_BASE, DEVICE_STRIDE
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_NO_EVENT_RESOURCE,
    ACL_ERROR_RT_NO_MODEL_RESOURCE,
    ACL_ERROR_RT_NO_STREAM_RESOURCE,
    AclError,
)
from server.npu.memory.arena import Allocation, Arena, Epoch
from server.npu.memory.vmem import Mapping, VirtualSpace, Window
from server.npu.tdt import MAX_QUEUES, DeviceTdt

if TYPE_CHECKING:
    from server.npu.memory.quota import Quota

DEFAULT_MEMORY = 8 << 30
VIRTUAL_OFFSET = DEVICE_STRIDE // 2  # where a device's virtual zone starts in its address window


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
        self.tdts: dict[str | None, DeviceTdt] = {}  # tenant -> its TDT channels, queues, routes (server.npu.tdt)
        self.queues = Limit("queue", MAX_QUEUES, ACL_ERROR_INVALID_PARAM)  # TDT queues, all tenants
        self.started = time.perf_counter()  # the device clock's zero (aclrtEventGetTimestamp)

    def __contains__(self, ptr: int) -> bool:
        return ptr in self.arena or ptr in self.virtual

    def tdt_of(self, tenant: str | None) -> DeviceTdt:
        """The TDT namespace of `tenant` (None: the one tenant of a daemon without quotas) on this device."""
        found = self.tdts.get(tenant)
        if found is None:
            found = self.tdts[tenant] = DeviceTdt()
        return found

    def find(self, ptr: int) -> Allocation | Mapping | Window | None:
        """The live object of this device's memory that `ptr` falls in."""
        return self.arena.find(ptr) if ptr in self.arena else self.virtual.find(ptr)

    def region(self, ptr: int, nbytes: int) -> np.ndarray:
        """A uint8 view of [ptr, ptr + nbytes) of this device's memory; MemoryFault unless all of it is live."""
        return self.arena.region(ptr, nbytes) if ptr in self.arena else self.virtual.region(ptr, nbytes)
