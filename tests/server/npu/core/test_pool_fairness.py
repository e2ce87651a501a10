"""The kernel pool is fair between contexts: owners are served round robin, one owner holds at most `share`
threads, and a closed pool abandons what runs (reliability probe §17: one context's big kernels held every pool
thread, and another context's 8 MiB copy waited 21 s)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from proto.aclnn import aclCreateTensor, aclnnGeluGetWorkspaceSize
from proto.constants import ACL_MEMCPY_DEVICE_TO_DEVICE, aclDataType, aclFormat
from server.npu import Machine, Runtime
from server.npu.core.pool import KernelPool, PoolClosed
from tests.server.npu.devicekit import device_tensor, read_bytes, upload

WAIT_S = 5.0  # the most any job of these tests waits for a gate


def job(ran: list[str], name: str, gate: threading.Event | None = None) -> Callable[[], str]:
    def work() -> str:
        if gate is not None:
            assert gate.wait(WAIT_S)
        ran.append(name)
        return name

    return work


async def test_owners_are_served_round_robin() -> None:
    pool = KernelPool(threads=1, share=1)
    ran: list[str] = []
    gate = threading.Event()
    try:
        first = pool.submit("c", job(ran, "c0", gate))  # holds the only thread while the others queue
        jobs = [pool.submit("a", job(ran, f"a{i}")) for i in range(3)] + [pool.submit("b", job(ran, "b0"))]
        gate.set()
        assert await asyncio.wait_for(asyncio.gather(first, *jobs), WAIT_S) == ["c0", "a0", "a1", "a2", "b0"]
        assert ran == ["c0", "a0", "b0", "a1", "a2"]  # b's job does not wait for all of a's
    finally:
        pool.close()


async def test_an_owner_holds_at_most_its_share_of_threads() -> None:
    pool = KernelPool(threads=2, share=1)
    ran: list[str] = []
    gate = threading.Event()
    try:
        a0, a1 = pool.submit("a", job(ran, "a0", gate)), pool.submit("a", job(ran, "a1"))
        b0 = pool.submit("b", job(ran, "b0"))
        assert await asyncio.wait_for(b0, WAIT_S) == "b0"  # the second thread was kept for b
        assert ran == ["b0"] and not a1.done()
        gate.set()
        await asyncio.wait_for(asyncio.gather(a0, a1), WAIT_S)
        assert ran == ["b0", "a0", "a1"]
    finally:
        pool.close()


async def test_close_drops_the_queue_and_does_not_wait_for_the_running() -> None:
    pool = KernelPool(threads=1, share=1)
    gate = threading.Event()
    running = pool.submit("a", job([], "a0", gate))
    queued = pool.submit("a", job([], "a1"))
    await asyncio.sleep(0.05)
    started = time.monotonic()
    pool.close()
    assert time.monotonic() - started < 0.5
    with pytest.raises(PoolClosed):
        await asyncio.wait_for(queued, WAIT_S)
    with pytest.raises(PoolClosed):
        pool.submit("a", job([], "a2"))
    gate.set()  # the abandoned job ends on its own thread
    assert await asyncio.wait_for(running, WAIT_S) == "a0"


@pytest.mark.slow
async def test_big_kernels_of_one_context_do_not_starve_another_contexts_copy() -> None:
    machine = Machine(memory_bytes=128 << 20, kernel_threads=2)
    alice, bob = Runtime(machine), Runtime(machine)
    for rt in (alice, bob):
        rt.aclInit()
        rt.aclrtSetDevice(0)
    try:
        _, one = device_tensor(alice, np.float16([0.7]))
        n = 1 << 24  # a float16 Gelu of ~0.5-1 s over a zero-stride input, two of them on two streams
        x = aclCreateTensor([n], aclDataType.ACL_FLOAT16, [0], 0, aclFormat.ACL_FORMAT_ND, [1], one)
        streams = [alice.aclrtCreateStream() for _ in range(2)]
        for stream in streams:
            out_t, _ = device_tensor(alice, np.zeros(n, np.float16))
            _, executor = aclnnGeluGetWorkspaceSize(x, out_t)
            alice.aclnnGelu(0, 0, executor, stream)
        await asyncio.sleep(0.05)  # both are queued on the pool, the first one runs
        data = np.random.default_rng(3).integers(0, 256, 8 << 20, dtype=np.uint8)
        src, dst = upload(bob, data), bob.aclrtMalloc(data.nbytes, 0)
        mine = bob.aclrtCreateStream()
        await bob.aclrtMemcpyAsync(dst, data.nbytes, src, data.nbytes, ACL_MEMCPY_DEVICE_TO_DEVICE, mine)
        await bob.aclrtSynchronizeStream(mine)
        assert all(alice.ctx.stream(s).running is not None for s in streams)  # bob's copy did not wait for them
        assert read_bytes(bob, dst, data.nbytes) == data.tobytes()
        for stream in streams:
            await alice.aclrtSynchronizeStream(stream)
    finally:
        for rt in (alice, bob):
            await rt.release_all()
        machine.close()
