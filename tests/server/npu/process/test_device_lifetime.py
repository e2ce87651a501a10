"""The last aclrtResetDevice while other threads of the process go on: it waits for the device's work, and what
another thread sets, allocates or creates meanwhile is that thread's and stays; a release running into another one
of the same device (the context reclaimed under a reset) frees everything exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from proto.constants import ACL_EVENT_SYNC
from proto.errors import ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_PARAM_INVALID, AclError
from server.npu import Machine, Runtime
from server.npu.core.caller import calling_thread
from server.npu.core.lane import Lane
from tests.server.npu.devicekit import read_bytes

A, B = (1, 1), (1, 2)  # two threads of one process
MiB = 1 << 20
SHM = Path("/dev/shm")


@dataclass(eq=False)
class Held:
    """Queued work that lasts until the test lets it go (a stream's close waits for it, as for a long copy)."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)
    api: str = "aclrtMemcpyAsync"

    async def run(self, lane: Lane) -> None:
        await self.gate.wait()

    def describe(self) -> str:
        return "work held by the test"


def hold(rt: Runtime, stream: int) -> Held:
    work = Held()
    rt.ctx.issue(rt.ctx.stream(stream), work)
    return work


@contextmanager
def on(thread: tuple[int, int]) -> Iterator[None]:
    with calling_thread(thread):
        yield


async def settle() -> None:
    for _ in range(50):
        await asyncio.sleep(0)


def snapshot(machine: Machine) -> tuple[int, int, int]:
    device = machine.devices[0]
    return device.streams.used, device.events.used, device.arena.used_bytes


async def test_a_set_during_the_last_reset_keeps_its_device_memory_and_stream(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    before = snapshot(machine)
    with on(A):
        rt.aclrtSetDevice(0)
        mine = rt.aclrtCreateStream()
        old = rt.aclrtMalloc(4096, 0)
        work = hold(rt, mine)
        reset = asyncio.create_task(rt.aclrtResetDevice(0))  # the last reference: it waits for `work`
    await settle()
    assert not reset.done()
    with on(B):
        rt.aclrtSetDevice(0)
        ptr = rt.aclrtMalloc(MiB, 0)
        stream = rt.aclrtCreateStream()
        event = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    work.gate.set()
    await asyncio.wait_for(reset, 5)

    with on(B):  # B's set holds the device: its memory, stream and event are intact
        assert rt.aclrtGetDevice() == 0
        rt.aclrtMemsetAsync(ptr, MiB, 0x5A, MiB, stream)
        rt.aclrtRecordEvent(event, stream)
        await rt.aclrtSynchronizeStream(stream)
        assert read_bytes(rt, ptr, 16) == b"\x5a" * 16
        streams, events, used = snapshot(machine)
        assert (streams, events) == (before[0] + 2, before[1] + 1)  # its default stream and its stream; its event
        assert before[2] + MiB <= used < before[2] + MiB + 4096  # its block (rounded up), and not A's
        with pytest.raises(AclError) as info:
            rt.aclrtMemsetAsync(old, 4096, 0, 4096, stream)  # A's block went with A's reset
        assert info.value.code == ACL_ERROR_RT_PARAM_INVALID
        assert f"block at {old:#x}, which was freed by aclrtResetDevice" in info.value.message
        await rt.aclrtResetDevice(0)
        with pytest.raises(AclError) as info:
            rt.aclrtGetDevice()
        assert info.value.code == ACL_ERROR_RT_CONTEXT_NULL
    assert snapshot(machine) == before
    await rt.release_all()
    assert snapshot(machine) == before


async def test_a_freed_block_says_what_freed_it(rt: Runtime) -> None:
    ptr = rt.aclrtMalloc(256, 0)
    rt.aclrtFree(ptr)
    with pytest.raises(AclError) as info:
        rt.aclrtMemset(ptr + 8, 8, 0, 8)
    assert info.value.code == ACL_ERROR_RT_PARAM_INVALID
    assert f"lies in the 256-byte block at {ptr:#x}, which was freed by aclrtFree" in info.value.message
    host = rt.aclrtMallocHost(64)
    rt.aclrtFreeHost(host)
    with pytest.raises(AclError) as info:
        rt.aclrtMemset(host, 8, 0, 8)
    assert "which was freed by aclrtFreeHost" in info.value.message


async def test_the_context_reclaimed_during_a_reset_releases_the_device_once(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    before = snapshot(machine)
    with on(A):
        rt.aclrtSetDevice(0)
        streams = [rt.aclrtCreateStream() for _ in range(3)]
        event = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
        ptr = rt.aclrtMalloc(MiB, 0)
        for stream in streams:  # work queued on every stream, behind the held work
            rt.aclrtStreamWaitEvent(stream, event)
            rt.aclrtMemsetAsync(ptr, MiB, 1, MiB, stream)
        host = rt.aclrtMallocHost(MiB)
        segment = SHM / rt.vnpuHostInfo(host)[0]
        work = hold(rt, 0)  # on the default stream, which closes first
        rt.aclrtRecordEvent(event, 0)
        reset = asyncio.create_task(rt.aclrtResetDevice(0))
    await settle()
    reclaim = asyncio.create_task(rt.release_all())  # the client died: its context is reclaimed
    await settle()
    assert not reset.done() and not reclaim.done()  # the reclaim waits for the release in progress
    assert snapshot(machine)[0] == before[0] + 4 and segment.exists()
    work.gate.set()
    await asyncio.wait_for(reclaim, 5)
    assert snapshot(machine) == before  # every count exact, none released twice
    assert machine.host.find(host) is None and not segment.exists() and rt.ctx.memory.used == 0
    await asyncio.wait_for(reset, 5)
    assert snapshot(machine) == before
