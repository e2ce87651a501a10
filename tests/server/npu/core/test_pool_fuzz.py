"""Fuzz the kernel pool's lifetime against frees: tenants launch copies and kernels that run on the pool while
they and the others free and allocate. No live allocation's bytes change unless its owner wrote them, a task
whose memory was freed fails with 507053 and nothing else, and every byte goes back to the allocator.
"""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from proto.aclnn import aclnnGeluGetWorkspaceSize
from proto.constants import ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_HOST_TO_DEVICE
from proto.errors import ACL_ERROR_RT_DEVICE_MEM_ERROR, AclError
from server.npu import Machine, Runtime
from tests.server.npu.devicekit import read_bytes, tensor_at

pytestmark = pytest.mark.slow

SIZE = 1 << 20  # bytes per block: 256 Ki float32 elements
STEPS, TENANTS, SECONDS = 100, 3, 4.0


class Tenant:
    def __init__(self, machine: Machine, seed: int) -> None:
        self.rt = Runtime(machine)
        self.rt.aclInit()
        self.rt.aclrtSetDevice(0)
        self.rng = np.random.default_rng(seed)
        self.stable: dict[int, bytes] = {}  # blocks only host copies write, with their bytes
        self.targets: list[int] = []  # blocks the pool's tasks write
        self.stream = self.rt.aclrtCreateStream()
        self.failures = 0
        self.quarantines = 0  # frees that found the block held by a running task

    def malloc_stable(self) -> None:
        ptr = self.rt.aclrtMalloc(SIZE, 0)
        data = self.rng.integers(0, 256, SIZE, dtype=np.uint8)
        self.rt.aclrtMemcpy(ptr, SIZE, data, SIZE, ACL_MEMCPY_HOST_TO_DEVICE)
        self.stable[ptr] = data.tobytes()

    async def launch(self) -> None:
        if not self.stable:
            return
        src = list(self.stable)[self.rng.integers(len(self.stable))]
        dst = self.rt.aclrtMalloc(SIZE, 0)
        self.targets.append(dst)
        if self.rng.random() < 0.5:
            await self.rt.aclrtMemcpyAsync(dst, SIZE, src, SIZE, ACL_MEMCPY_DEVICE_TO_DEVICE, self.stream)
        else:
            shape = (SIZE // 4,)
            _, executor = aclnnGeluGetWorkspaceSize(tensor_at(src, shape, 0), tensor_at(dst, shape, 0))
            self.rt.aclnnGelu(0, 0, executor, self.stream)

    def free_one(self) -> None:
        pool = self.targets if self.targets and self.rng.random() < 0.7 else list(self.stable)
        if pool:
            ptr = pool[0 if self.rng.random() < 0.5 else self.rng.integers(len(pool))]  # the oldest: likely running
            self.rt.aclrtFree(ptr)  # possibly under a task that is queued or running on the pool
            self.quarantines += self.rt.ctx.machine.devices[0].arena.quarantined_bytes > 0
            if ptr in self.stable:
                del self.stable[ptr]
            else:
                self.targets.remove(ptr)

    async def synchronize(self) -> None:
        try:
            await self.rt.aclrtSynchronizeStream(self.stream)
        except AclError as error:
            assert error.code == ACL_ERROR_RT_DEVICE_MEM_ERROR, error
            self.failures += 1

    def check(self) -> None:
        for ptr, data in self.stable.items():
            assert read_bytes(self.rt, ptr, SIZE) == data, f"{ptr:#x} changed under its owner"


async def run_tenant(me: Tenant, everyone: list[Tenant], deadline: float) -> None:
    for step in range(4 * STEPS):  # STEPS, and more until some free has landed under a running task
        if time.monotonic() > deadline or (step >= STEPS and any(t.quarantines for t in everyone)):
            break
        action = me.rng.random()
        try:
            if action < 0.25:
                me.malloc_stable()
            elif action < 0.6:
                await me.launch()
            elif action < 0.9:
                me.free_one()
                everyone[me.rng.integers(len(everyone))].malloc_stable()  # likely where the freed block was
            else:
                await me.synchronize()
        except AclError as error:  # the 64 MiB device is full: free something
            assert "out of memory" in error.message, error
            me.free_one()
        if step % 4 == 0:
            for tenant in everyone:
                tenant.check()
        await asyncio.sleep(0.0005 * me.rng.random())


async def test_frees_under_pool_tasks_never_touch_live_memory() -> None:
    machine = Machine(memory_bytes=64 << 20, kernel_threads=2, offload_bytes=64 << 10)
    tenants = [Tenant(machine, seed) for seed in range(TENANTS)]
    try:
        deadline = time.monotonic() + SECONDS
        await asyncio.gather(*(run_tenant(t, tenants, deadline) for t in tenants))
        for tenant in tenants:
            await tenant.synchronize()
            tenant.check()
        assert sum(t.quarantines for t in tenants) > 0 and sum(t.failures for t in tenants) > 0
        for tenant in tenants:
            await tenant.rt.release_all()
        arena = machine.devices[0].arena
        assert (arena.free_bytes, arena.quarantined_bytes) == (arena.capacity, 0)
    finally:
        machine.close()
