"""Fuzz: three threads of one process set and reset device 0 (force resets and the context's teardown too),
allocate and free, create and destroy streams and queue work, in random interleavings (a reset waits for queued
work, and the others go on meanwhile). Each call either succeeds or fails with the code its state explains; the
device's counts never go negative and always equal what the process holds, and after the last reset nothing is
left."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from proto.errors import (
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.core.caller import calling_thread
from server.npu.core.lane import Lane
from server.npu.process.memory_tables import device_cost

THREADS = 3
# what a call may answer when another thread's reset took the device, the stream or the block first
EXPLAINED = {
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
}

op = st.one_of(
    st.tuples(st.just("set")),
    st.tuples(st.just("reset")),
    st.tuples(st.just("force")),
    st.tuples(st.just("reclaim")),  # the context's teardown (its client went away), under the others
    st.tuples(st.just("malloc"), st.integers(1, 1 << 16)),
    st.tuples(st.just("free"), st.integers(0, 7)),
    st.tuples(st.just("stream")),
    st.tuples(st.just("destroy"), st.integers(0, 7)),
    st.tuples(st.just("work"), st.integers(1, 20)),
    st.tuples(st.just("pause"), st.integers(1, 20)),
)


@dataclass(frozen=True)
class Busy:
    """Queued work that takes `turns` turns of the event loop (a reset waits for it)."""

    turns: int
    api: str = "aclrtMemcpyAsync"

    async def run(self, lane: Lane) -> None:
        for _ in range(self.turns):
            await asyncio.sleep(0)

    def describe(self) -> str:
        return f"busy for {self.turns} turns"


def check_counts(machine: Machine, rt: Runtime) -> None:
    device = machine.devices[0]
    live = [s for s in (*rt.ctx.streams.values(), *rt.ctx.default_streams.values()) if s.device is device]
    assert device.streams.used >= 0 and device.arena.used_bytes >= 0
    assert device.streams.used >= len(live)  # more only while a release closes what it took


async def step(rt: Runtime, o: tuple, ptrs: list[int], streams: list[int]) -> None:
    kind = o[0]
    if kind == "set":
        rt.aclrtSetDevice(0)
    elif kind == "reset":
        await rt.aclrtResetDevice(0)
    elif kind == "force":
        await rt.aclrtResetDeviceForce(0)
    elif kind == "reclaim":
        await rt.release_all()
    elif kind == "malloc":
        ptrs.append(rt.aclrtMalloc(o[1], 0))
    elif kind == "free" and ptrs:
        rt.aclrtFree(ptrs.pop(o[1] % len(ptrs)))
    elif kind == "stream":
        streams.append(rt.aclrtCreateStream())
    elif kind == "destroy" and streams:
        await rt.aclrtDestroyStream(streams.pop(o[1] % len(streams)))
    elif kind == "work":
        rt.ctx.issue(rt.ctx.stream(0), Busy(o[1]))
    elif kind == "pause":
        for _ in range(o[1]):
            await asyncio.sleep(0)


async def thread(machine: Machine, rt: Runtime, ident: tuple[int, int], ops: list[tuple]) -> None:
    ptrs: list[int] = []
    streams: list[int] = []
    with calling_thread(ident):
        for o in ops:
            try:
                await step(rt, o, ptrs, streams)
            except AclError as error:
                assert error.code in EXPLAINED, error
            check_counts(machine, rt)


async def run(programs: list[list[tuple]]) -> None:
    machine = Machine(devices=1, memory_bytes=8 << 20, max_streams=128)
    device = machine.devices[0]
    rt = Runtime(machine)
    rt.aclInit()
    try:
        threads = [thread(machine, rt, (1, i), ops) for i, ops in enumerate(programs)]
        await asyncio.wait_for(asyncio.gather(*threads), 20)
        live = [s for s in (*rt.ctx.streams.values(), *rt.ctx.default_streams.values()) if s.device is device]
        assert device.streams.used == len(live)  # every release is over: the count is exact
        blocks = [device.arena.find(ptr) for ptr in rt.ctx.memory.allocations]
        assert rt.ctx.memory.used == sum(device_cost(b.size) for b in blocks if b is not None) and None not in blocks
        with calling_thread((1, 0)):
            for _ in range(4 * sum(len(p) for p in programs) + 1):  # the process's remaining references
                if 0 not in rt.ctx.primaries:
                    break
                await rt.aclrtResetDevice(0)
        assert 0 not in rt.ctx.primaries and not rt.ctx.memory.allocations and rt.ctx.memory.used == 0
        assert (device.streams.used, device.arena.used_bytes) == (len(rt.ctx.streams), 0) == (0, 0)
    finally:
        await rt.release_all()
        machine.close()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(op, max_size=12), min_size=THREADS, max_size=THREADS))
def test_set_reset_malloc_stream_races_keep_exact_counts(programs: list[list[tuple]]) -> None:
    asyncio.run(run(programs))
