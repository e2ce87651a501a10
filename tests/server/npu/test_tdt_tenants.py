"""TDT under tenants (issue 39, 2 and 7): queues and channels belong to their tenant -- another tenant's qid or
channel name reads exactly like one that never existed -- their contents are charged to the memory of the
context that put them there (its quota and its tenant's) until they leave, and a tenant holds at most its share
of a device's queues."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_INVALID_QUEUE_ID,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_QUEUE_EMPTY,
    ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.memory.quota import Quota, Share
from server.npu.tdt import ENTRY_CHARGE

MiB = 1 << 20
MEMORY = 4 * MiB  # each tenant's memory quota
QUEUES = 3  # each tenant's share of queues


def quota(tenant: str) -> Quota:
    return Quota(
        tenant,
        {
            **{kind: Share(kind, 64, ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "X") for kind in ("stream", "event", "model")},
            "memory": Share("bytes of memory", MEMORY, ACL_ERROR_RT_MEMORY_ALLOCATION, "B"),
            "queue": Share("queues", QUEUES, ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "Q"),
        },
    )


@pytest.fixture
async def machine() -> AsyncIterator[Machine]:
    m = Machine(1, 16 * MiB)
    yield m
    m.close()


def context(machine: Machine, tenant: Quota | None) -> Runtime:
    rt = Runtime(machine, quota=tenant)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    return rt


async def code_of(coroutine: object) -> int:
    with pytest.raises(AclError) as caught:
        await coroutine  # type: ignore[misc]
    return caught.value.code


def item(data: bytes) -> dict[str, object]:
    return {"tensorType": 0, "dims": [len(data)], "dataType": 4, "data": data, "sliceNum": 0, "sliceId": 0}


async def test_another_tenants_queues_and_channels_are_not_there(machine: Machine) -> None:
    alice, bob = quota("alice"), quota("bob")
    a, b = context(machine, alice), context(machine, bob)
    a2 = context(machine, alice)  # another process of alice's: it shares her queues and channels, as before
    qid = a.acltdtCreateQueue("alice-private", 4)
    await a.acltdtEnqueueData(qid, b"alice secret", b"", 0, 0)
    # bob: the qid, the name, a route and the channel name are as if they never existed
    assert await code_of(b.acltdtDequeueData(qid, 64, 0, 0)) == ACL_ERROR_INVALID_QUEUE_ID
    assert await code_of(b.acltdtEnqueueData(qid, b"forged", b"", 0, 0)) == ACL_ERROR_INVALID_QUEUE_ID
    with pytest.raises(AclError) as caught:
        b.acltdtDestroyQueue(qid)
    assert caught.value.code == ACL_ERROR_INVALID_QUEUE_ID and "alice" not in caught.value.message
    own = b.acltdtCreateQueue("alice-private", 4)  # the same name is bob's own queue, not a clash
    assert b.acltdtQueryQueueRoutes(0, qid, own) == []
    with pytest.raises(AclError):
        b.acltdtBindQueueRoutes([(qid, own)])
    ch = a.acltdtCreateChannelWithCapacity(0, "alice-chan", 2)
    await a.acltdtSendTensor(ch, "ds", [item(b"alice data")], 0)
    bobs = b.acltdtCreateChannelWithCapacity(0, "alice-chan", 2)  # a channel of his own
    assert b.acltdtQueryChannelSize(bobs) == 0
    assert await code_of(b.acltdtReceiveTensor(bobs, 0)) == ACL_ERROR_RT_QUEUE_EMPTY
    # alice's data is where she left it, and her other process sees it
    assert (await a2.acltdtDequeueData(qid, 64, 0, 0))[0] == b"alice secret"
    ch2 = a2.acltdtCreateChannelWithCapacity(0, "alice-chan", 2)
    assert (await a2.acltdtReceiveTensor(ch2, 0))[1][0]["data"] == b"alice data"
    for rt in (a, b, a2):
        await rt.release_all()


async def test_queued_bytes_are_charged_until_they_leave(machine: Machine) -> None:
    alice, bob = quota("alice"), quota("bob")
    a, b = context(machine, alice), context(machine, bob)
    qid = a.acltdtCreateQueue("q", 64)
    chunk = b"\x5a" * MiB
    for _ in range(3):
        await a.acltdtEnqueueData(qid, chunk, b"u", 0, 0)
    assert a.ctx.memory.used == alice.shares["memory"].used == 3 * (MiB + 1 + ENTRY_CHARGE)
    # a fourth MiB passes her quota: refused with the memory code, and nothing is queued
    with pytest.raises(AclError) as caught:
        await a.acltdtEnqueueData(qid, chunk, b"", 0, 0)
    assert caught.value.code == ACL_ERROR_RT_MEMORY_ALLOCATION and "tenant 'alice'" in caught.value.message
    assert a.acltdtQueryQueueRoutes(0, qid, qid) == [] and alice.shares["memory"].used == 3 * (MiB + 1 + ENTRY_CHARGE)
    # bob is not touched by it
    mine = b.acltdtCreateQueue("q", 4)
    await b.acltdtEnqueueData(mine, chunk, b"", 0, 0)
    # what leaves gives its bytes back: a dequeue, the queue's destroy, the context's end
    assert (await a.acltdtDequeueData(qid, MiB, 1, 0))[0] == chunk
    assert alice.shares["memory"].used == 2 * (MiB + 1 + ENTRY_CHARGE)
    a.acltdtDestroyQueue(qid)
    assert alice.shares["memory"].used == 0 == a.ctx.memory.used
    ch = a.acltdtCreateChannelWithCapacity(0, "c", 8)
    await a.acltdtSendTensor(ch, "name", [item(chunk), item(b"xy")], 0)
    assert alice.shares["memory"].used == MiB + 2 + len("name") + 3 * ENTRY_CHARGE
    await a.acltdtCleanChannel(ch)
    assert alice.shares["memory"].used == 0
    await a.acltdtSendTensor(ch, "", [item(chunk)], 0)
    await a.release_all()
    assert alice.shares["memory"].used == 0
    await b.release_all()
    assert bob.shares["memory"].used == 0


async def test_small_entries_cost_their_bookkeeping(machine: Machine) -> None:
    """1-byte entries are charged ENTRY_CHARGE each: the quota bounds how many a tenant may queue."""
    alice = quota("alice")
    a = context(machine, alice)
    qid = a.acltdtCreateQueue("tiny", 8192)
    with pytest.raises(AclError) as caught:
        for _ in range(8192):
            await a.acltdtEnqueueData(qid, b"x", b"", 0, 0)
    assert caught.value.code == ACL_ERROR_RT_MEMORY_ALLOCATION
    assert alice.shares["memory"].used <= MEMORY
    await a.release_all()
    assert alice.shares["memory"].used == 0


async def test_a_tenant_holds_its_share_of_the_queues(machine: Machine) -> None:
    alice, bob = quota("alice"), quota("bob")
    a, b = context(machine, alice), context(machine, bob)
    made = [a.acltdtCreateQueue(f"q{n}", 2) for n in range(QUEUES)]
    with pytest.raises(AclError) as caught:
        a.acltdtCreateQueue("one more", 2)
    assert caught.value.code == ACL_ERROR_RT_RESOURCE_ALLOC_FAIL and "queues" in caught.value.message
    assert len({b.acltdtCreateQueue(f"q{n}", 2) for n in range(QUEUES)}) == QUEUES  # bob has his own share
    a.acltdtDestroyQueue(made[0])
    again = a.acltdtCreateQueue("again", 2)  # a destroyed queue gives its slot back
    await a.release_all()
    assert alice.shares["queue"].used == 0
    with pytest.raises(AclError) as caught:  # her qid past his: not his, and she had it
        await b.acltdtEnqueueData(again, b"x", b"", 0, 0)
    assert caught.value.code == ACL_ERROR_INVALID_QUEUE_ID
    await b.release_all()
    assert bob.shares["queue"].used == 0


async def test_one_tenant_keeps_the_device_limits(machine: Machine) -> None:
    a = context(machine, None)
    qid = a.acltdtCreateQueue("q", 2)
    await a.acltdtEnqueueData(qid, b"abc", b"", 0, 0)
    assert a.ctx.memory.used == 3 + ENTRY_CHARGE
    with pytest.raises(AclError) as caught:
        a.acltdtCreateQueue("q", 2)
    assert caught.value.code == ACL_ERROR_INVALID_PARAM  # the name is taken in the one namespace
    await a.release_all()
    assert a.ctx.memory.used == 0


async def test_a_send_abandoned_while_it_waits_gives_its_charge_back(machine: Machine) -> None:
    a = context(machine, quota("alice"))
    qid = a.acltdtCreateQueue("full", 1)
    await a.acltdtEnqueueData(qid, b"first", b"", 0, 0)
    charged = a.ctx.memory.used
    waiting = asyncio.ensure_future(a.acltdtEnqueueData(qid, b"second", b"", -1, 0))  # waits for room forever
    await asyncio.sleep(0.05)
    waiting.cancel()  # its caller went away
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert a.ctx.memory.used == charged
    await a.release_all()
    assert a.ctx.memory.used == 0
