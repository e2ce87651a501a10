"""A tenant's quota on the device: streams, events, models and memory count against it in all the tenant's
contexts, reaching it answers the resource's own code with a message naming the quota and its setting, another
tenant goes on, and every count comes back on each destroy path (destroy, reset, context end)."""

from __future__ import annotations

import gc
import mmap
import tracemalloc
from collections.abc import AsyncIterator

import pytest

from proto.constants import aclmdlRICaptureMode
from proto.errors import (
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_NO_EVENT_RESOURCE,
    ACL_ERROR_RT_NO_MODEL_RESOURCE,
    ACL_ERROR_RT_NO_STREAM_RESOURCE,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.memory.quota import Quota, Share

KiB = 1 << 10
RELAXED = aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_RELAXED
STREAMS, EVENTS, MODELS, MEMORY = 4, 3, 2, 64 * KiB  # each tenant's; the device has twice as many


def quota(tenant: str) -> Quota:
    return Quota(
        tenant,
        {
            "stream": Share("streams", STREAMS, ACL_ERROR_RT_NO_STREAM_RESOURCE, "S"),
            "event": Share("events", EVENTS, ACL_ERROR_RT_NO_EVENT_RESOURCE, "E"),
            "model": Share("models", MODELS, ACL_ERROR_RT_NO_MODEL_RESOURCE, "M"),
            "memory": Share("bytes of memory", MEMORY, ACL_ERROR_RT_MEMORY_ALLOCATION, "B"),
        },
    )


@pytest.fixture
async def machine() -> AsyncIterator[Machine]:
    m = Machine(1, 1 << 20, max_streams=2 * STREAMS, max_events=2 * EVENTS, max_models=2 * MODELS)
    yield m
    m.close()


def context(machine: Machine, tenant: Quota) -> Runtime:
    rt = Runtime(machine, quota=tenant)
    rt.aclInit()
    rt.aclrtSetDevice(0)  # its default stream is one of the tenant's streams
    return rt


def refused(code: int, message: str, call: object, *args: object) -> None:
    with pytest.raises(AclError) as info:
        call(*args)  # type: ignore[operator]
    assert (info.value.code, info.value.message) == (code, message)


def message(kind: str, used: int, maximum: int, setting: str, more: str = "1 more does not fit") -> str:
    return f"tenant 'alice' holds {used} of its quota of {maximum} {kind} ({setting}): {more}"


async def test_each_quota_answers_its_resource_code_and_the_other_tenant_goes_on(machine: Machine) -> None:
    alice, bob = quota("alice"), quota("bob")
    a1, a2, b = context(machine, alice), context(machine, alice), context(machine, bob)
    # the quota is the tenant's, across its contexts: two default streams, then two created
    streams = [a1.aclrtCreateStream(), a2.aclrtCreateStream()]
    refused(ACL_ERROR_RT_NO_STREAM_RESOURCE, message("streams", 4, 4, "S"), a1.aclrtCreateStream)
    third = Runtime(machine, quota=alice)
    third.aclInit()
    refused(ACL_ERROR_RT_NO_STREAM_RESOURCE, message("streams", 4, 4, "S"), third.aclrtSetDevice, 0)
    events = [a1.aclrtCreateEvent() for _ in range(EVENTS)]
    refused(ACL_ERROR_RT_NO_EVENT_RESOURCE, message("events", 3, 3, "E"), a2.aclrtCreateEvent)
    ptr = a1.aclrtMalloc(40 * KiB, 0)
    too_much = message("bytes of memory", 40 * KiB, MEMORY, "B", f"{24 * KiB + 1} more do not fit")
    refused(ACL_ERROR_RT_MEMORY_ALLOCATION, too_much, a2.aclrtMalloc, 24 * KiB + 1, 0)
    a2.aclrtMallocHost(24 * KiB)  # pinned memory counts too: exactly up to the quota
    full = message("bytes of memory", MEMORY, MEMORY, "B", "512 more do not fit")  # a small block is charged 512
    refused(ACL_ERROR_RT_MEMORY_ALLOCATION, full, a1.aclrtMalloc, 1, 0)
    models = []
    for _ in range(MODELS):
        a1.aclmdlRICaptureBegin(streams[0], RELAXED)
        models.append(a1.aclmdlRICaptureEnd(streams[0]))
    refused(ACL_ERROR_RT_NO_MODEL_RESOURCE, message("models", 2, 2, "M"), a1.aclmdlRICaptureBegin, streams[0], RELAXED)
    assert alice.used() == {"stream": 4, "event": 3, "model": 2, "memory": MEMORY}
    # nothing was taken by the refusals (bob holds his default stream), and bob has his whole quota
    device = machine.devices[0]
    assert (device.streams.used, device.events.used, device.models.used) == (5, 3, 2)
    bob_streams = [b.aclrtCreateStream() for _ in range(STREAMS - 1)]
    bob_events = [b.aclrtCreateEvent() for _ in range(EVENTS)]
    b.aclrtFree(b.aclrtMalloc(MEMORY, 0))
    assert bob.used() == {"stream": 4, "event": 3, "model": 0, "memory": 0}
    # destroying gives alice's counts back, and she creates again
    await a1.aclrtDestroyStream(streams[0])
    a1.aclrtDestroyEvent(events[0])
    a1.aclrtFree(ptr)
    await a1.aclmdlRIDestroy(models[0])
    assert alice.used() == {"stream": 3, "event": 2, "model": 1, "memory": 24 * KiB}
    a2.aclrtCreateStream()
    a2.aclrtCreateEvent()
    a2.aclrtMalloc(40 * KiB, 0)
    for rt in (a1, a2, b, third):
        await rt.release_all()
    assert alice.used() == bob.used() == {"stream": 0, "event": 0, "model": 0, "memory": 0}
    assert (device.streams.used, device.events.used, device.models.used, device.arena.used_bytes) == (0, 0, 0, 0)
    del bob_streams, bob_events


async def test_reset_and_context_end_give_every_count_back(machine: Machine) -> None:
    alice = quota("alice")
    rt = context(machine, alice)
    stream = rt.aclrtCreateStream()
    rt.aclrtCreateEvent()
    rt.aclrtMalloc(KiB, 0)
    rt.aclmdlRICaptureBegin(stream, RELAXED)
    rt.aclmdlRICaptureEnd(stream)
    assert alice.used() == {"stream": 2, "event": 1, "model": 1, "memory": KiB}
    await rt.aclrtResetDevice(0)
    assert alice.used() == {"stream": 0, "event": 0, "model": 0, "memory": 0}
    rt.aclrtSetDevice(0)
    context_handle = rt.aclrtCreateContext(0)  # a created ACL context's default stream is the tenant's too
    rt.aclrtCreateStream()  # in the created context, now current
    rt.aclrtMallocHost(4 * KiB)  # a whole page: what a pinned buffer is charged at least
    assert alice.used() == {"stream": 3, "event": 0, "model": 0, "memory": 4 * KiB}
    await rt.aclrtDestroyContext(context_handle)  # with its default stream and the one created in it
    assert alice.used() == {"stream": 1, "event": 0, "model": 0, "memory": 4 * KiB}
    await rt.release_all()
    assert alice.used() == {"stream": 0, "event": 0, "model": 0, "memory": 0}


async def test_without_a_quota_only_the_device_limits_apply(machine: Machine) -> None:
    rt = context(machine, None)  # type: ignore[arg-type]
    streams = [rt.aclrtCreateStream() for _ in range(2 * STREAMS - 1)]
    with pytest.raises(AclError) as info:
        rt.aclrtCreateStream()
    assert info.value.code == ACL_ERROR_RT_NO_STREAM_RESOURCE
    assert info.value.message == f"no stream resource left: all {2 * STREAMS} are in use on this device"
    assert len(streams) == 2 * STREAMS - 1
    await rt.release_all()


# --- small allocations are charged what they cost (issue 39, 9) ------------------------------------------------


async def test_a_small_allocation_is_charged_more_than_its_bookkeeping_costs(machine: Machine) -> None:
    """aclrtMalloc(1) was charged 1 byte but held ~250 bytes of the daemon's memory, so a memory quota did not
    bound the daemon (4 GiB -> ~18 GiB of RSS)."""
    rt = Runtime(machine, memory_quota=256 * KiB)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    rt.aclrtMalloc(1, 0)  # warm up the tables
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        ptrs = [rt.aclrtMalloc(1, 0) for _ in range(200)]
        gc.collect()
        cost = (tracemalloc.get_traced_memory()[0] - before) / len(ptrs)
    finally:
        tracemalloc.stop()
    charge = rt.ctx.memory.used / (len(ptrs) + 1)
    assert charge >= 1.5 * cost, (charge, cost)  # the quota bounds the daemon's own memory, with room to spare
    with pytest.raises(AclError) as caught:
        for _ in range(256 * KiB):
            ptrs.append(rt.aclrtMalloc(1, 0))
    assert caught.value.code == ACL_ERROR_RT_MEMORY_ALLOCATION
    assert len(ptrs) < 256 * KiB // 256  # far fewer 1-byte blocks than bytes of quota
    for _ in range(mmap.PAGESIZE // 512):
        rt.aclrtFree(ptrs.pop())
    assert rt.ctx.memory.used == (len(ptrs) + 1) * charge  # a free gives the same charge back
    host = rt.aclrtMallocHost(1)
    assert rt.ctx.memory.used == (len(ptrs) + 1) * charge + mmap.PAGESIZE  # a pinned buffer is at least a page
    rt.aclrtFreeHost(host)
    await rt.release_all()
    assert rt.ctx.memory.used == 0
