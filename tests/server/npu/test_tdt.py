"""TDT on the device: channels (capacity, timeouts, order, sharing, clean, destroy), queues and routes."""

from __future__ import annotations

import asyncio
import random

import pytest

from proto.constants import ACL_TDT_QUEUE_ROUTE_BIND, ACL_TDT_QUEUE_ROUTE_UNBIND, acltdtQueueRouteQueryMode
from proto.errors import (
    ACL_ERROR_FEATURE_UNSUPPORTED,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_INVALID_QUEUE_ID,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_QUEUE_EMPTY,
    ACL_ERROR_RT_QUEUE_FULL,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.tdt import MAX_CAPACITY

Q = acltdtQueueRouteQueryMode


def item(data: bytes, dims: list[int]) -> dict[str, object]:
    return {"tensorType": 0, "dims": dims, "dataType": 0, "data": data, "sliceNum": 0, "sliceId": 0}


def payload(n: int) -> bytes:
    return random.Random(n).randbytes(4 * n)


async def code_of(coroutine: object) -> int:
    with pytest.raises(AclError) as caught:
        await coroutine  # type: ignore[misc]
    return caught.value.code


async def test_datasets_come_back_in_order_with_their_bytes(rt: Runtime) -> None:
    ch = rt.acltdtCreateChannelWithCapacity(0, "order", 3)
    sent = [payload(n) for n in (1, 5, 9)]
    for n, data in enumerate(sent):
        await rt.acltdtSendTensor(ch, f"ds{n}", [item(data, [1, len(data) // 4])], 0)
    assert rt.acltdtQueryChannelSize(ch) == 3
    for n, data in enumerate(sent):
        name, items = await rt.acltdtReceiveTensor(ch, 0)
        assert name == f"ds{n}" and items[0]["data"] == data and items[0]["dims"] == [1, len(data) // 4]
    assert rt.acltdtQueryChannelSize(ch) == 0


async def test_a_full_channel_refuses_or_times_out_and_keeps_what_it_holds(rt: Runtime) -> None:
    ch = rt.acltdtCreateChannelWithCapacity(0, "full", 2)
    first, second = payload(2), payload(3)
    await rt.acltdtSendTensor(ch, "", [item(first, [2])], 1000)
    await rt.acltdtSendTensor(ch, "", [item(second, [3])], 0)
    assert await code_of(rt.acltdtSendTensor(ch, "", [item(b"xxxx", [1])], 0)) == ACL_ERROR_RT_QUEUE_FULL
    assert await code_of(rt.acltdtSendTensor(ch, "", [item(b"xxxx", [1])], 20)) == ACL_ERROR_RT_QUEUE_FULL
    assert rt.acltdtQueryChannelSize(ch) == 2
    assert (await rt.acltdtReceiveTensor(ch, 0))[1][0]["data"] == first
    assert (await rt.acltdtReceiveTensor(ch, 0))[1][0]["data"] == second


async def test_an_empty_channel_times_out_and_a_waiting_receive_gets_a_later_send(rt: Runtime) -> None:
    ch = rt.acltdtCreateChannelWithCapacity(0, "wait", 1)
    assert await code_of(rt.acltdtReceiveTensor(ch, 0)) == ACL_ERROR_RT_QUEUE_EMPTY
    assert await code_of(rt.acltdtReceiveTensor(ch, 10)) == ACL_ERROR_RT_QUEUE_EMPTY
    waiting = asyncio.ensure_future(rt.acltdtReceiveTensor(ch, -1))
    await asyncio.sleep(0)
    assert not waiting.done()
    data = payload(7)
    await rt.acltdtSendTensor(ch, "late", [item(data, [7])], 0)
    name, items = await asyncio.wait_for(waiting, 5)
    assert name == "late" and items[0]["data"] == data


async def test_a_waiting_send_goes_in_once_a_receive_makes_room(rt: Runtime) -> None:
    ch = rt.acltdtCreateChannelWithCapacity(0, "room", 1)
    await rt.acltdtSendTensor(ch, "a", [item(payload(1), [1])], 0)
    blocked = asyncio.ensure_future(rt.acltdtSendTensor(ch, "b", [item(payload(2), [2])], -1))
    await asyncio.sleep(0)
    assert not blocked.done() and rt.acltdtQueryChannelSize(ch) == 1
    assert (await rt.acltdtReceiveTensor(ch, 0))[0] == "a"
    await asyncio.wait_for(blocked, 5)
    assert (await rt.acltdtReceiveTensor(ch, 0))[0] == "b"


async def test_two_processes_share_a_channel_by_name(machine: Machine, rt: Runtime) -> None:
    other = Runtime(machine)
    other.aclInit()
    other.aclrtSetDevice(0)
    mine = rt.acltdtCreateChannelWithCapacity(0, "shared", 2)
    theirs = other.acltdtCreateChannelWithCapacity(0, "shared", 2)
    data = payload(4)
    await rt.acltdtSendTensor(mine, "x", [item(data, [4])], 0)
    assert other.acltdtQueryChannelSize(theirs) == 1
    assert (await other.acltdtReceiveTensor(theirs, 0))[1][0]["data"] == data
    with pytest.raises(AclError) as caught:
        other.acltdtCreateChannelWithCapacity(0, "shared", 3)
    assert caught.value.code == ACL_ERROR_INVALID_PARAM and "capacity 2" in caught.value.message
    with pytest.raises(AclError) as caught:
        other.acltdtQueryChannelSize(mine)  # a handle is its process's
    assert caught.value.code == ACL_ERROR_RT_INVALID_HANDLE
    rt.acltdtDestroyChannel(mine)
    await other.acltdtSendTensor(theirs, "", [item(data, [4])], 0)  # still open through the other handle
    assert machine.devices[0].tdt_of(None).channels["shared"].users == 1
    await other.release_all()  # the other process ends: its handle was the last
    assert "shared" not in machine.devices[0].tdt_of(None).channels


async def test_clean_empties_stop_keeps_and_destroy_ends_the_handle(rt: Runtime) -> None:
    ch = rt.acltdtCreateChannelWithCapacity(1, "life", 4)
    for n in range(3):
        await rt.acltdtSendTensor(ch, "", [item(payload(n + 1), [n + 1])], 0)
    rt.acltdtStopChannel(ch)
    assert rt.acltdtQueryChannelSize(ch) == 3
    await rt.acltdtCleanChannel(ch)
    assert rt.acltdtQueryChannelSize(ch) == 0
    rt.acltdtDestroyChannel(ch)
    with pytest.raises(AclError) as caught:
        rt.acltdtQueryChannelSize(ch)
    assert caught.value.code == ACL_ERROR_RT_INVALID_HANDLE
    assert await code_of(rt.acltdtSendTensor(ch, "", [], 0)) == ACL_ERROR_RT_INVALID_HANDLE
    reopened = rt.acltdtCreateChannelWithCapacity(1, "life", 1)  # the last handle took the channel with it
    assert rt.acltdtQueryChannelSize(reopened) == 0


async def test_bad_channel_input_is_refused_before_any_work(rt: Runtime) -> None:
    cases = [
        (lambda: rt.acltdtCreateChannelWithCapacity(0, "c", 0), ACL_ERROR_INVALID_PARAM, "capacity 0"),
        (lambda: rt.acltdtCreateChannelWithCapacity(0, "c", MAX_CAPACITY + 1), ACL_ERROR_INVALID_PARAM, "capacity"),
        (lambda: rt.acltdtCreateChannelWithCapacity(0, None, 2), ACL_ERROR_INVALID_PARAM, "name is NULL"),
        (lambda: rt.acltdtCreateChannelWithCapacity(0, "n" * 128, 2), ACL_ERROR_INVALID_PARAM, "129 bytes"),
        (lambda: rt.acltdtCreateChannelWithCapacity(9, "c", 2), ACL_ERROR_RT_INVALID_DEVICEID, "device 9"),
        (lambda: rt.acltdtQueryChannelSize(None), ACL_ERROR_INVALID_PARAM, "NULL"),
    ]
    for make, code, words in cases:
        with pytest.raises(AclError) as caught:
            make()
        assert (caught.value.code, words in caught.value.message) == (code, True), caught.value
    assert rt.ctx.machine.devices[0].tdt_of(None).channels == {} and rt.ctx.channels == {}
    ch = rt.acltdtCreateChannelWithCapacity(0, "c", 1)
    assert await code_of(rt.acltdtSendTensor(ch, "", [], -2)) == ACL_ERROR_INVALID_PARAM
    assert rt.acltdtQueryChannelSize(ch) == 0


async def test_a_legacy_channel_takes_timeout_minus_one_only(rt: Runtime) -> None:
    ch = rt.acltdtCreateChannel(0, "legacy")
    assert await code_of(rt.acltdtSendTensor(ch, "", [item(b"abcd", [1])], 0)) == ACL_ERROR_INVALID_PARAM
    await rt.acltdtSendTensor(ch, "", [item(b"abcd", [1])], -1)
    assert (await rt.acltdtReceiveTensor(ch, -1))[1][0]["data"] == b"abcd"
    assert await code_of(rt.acltdtCleanChannel(ch)) == ACL_ERROR_FEATURE_UNSUPPORTED
    with pytest.raises(AclError) as caught:
        rt.acltdtQueryChannelSize(ch)
    assert caught.value.code == ACL_ERROR_FEATURE_UNSUPPORTED


async def test_queues_and_routes_are_bound_queried_and_unbound(rt: Runtime) -> None:
    a, b, c = (rt.acltdtCreateQueue(name, 4) for name in ("qa", "qb", ""))
    assert len({a, b, c}) == 3
    assert rt.acltdtBindQueueRoutes([[a, b], [a, c]]) == [ACL_TDT_QUEUE_ROUTE_BIND] * 2
    assert rt.acltdtQueryQueueRoutes(Q.ACL_TDT_QUEUE_ROUTE_QUERY_SRC, a, None) == [[a, b, 1], [a, c, 1]]
    assert rt.acltdtQueryQueueRoutes(Q.ACL_TDT_QUEUE_ROUTE_QUERY_DST, None, c) == [[a, c, 1]]
    assert rt.acltdtQueryQueueRoutes(Q.ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST, a, b) == [[a, b, 1]]
    assert rt.acltdtQueryQueueRoutes(Q.ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL, None, None) == []
    assert rt.acltdtUnbindQueueRoutes([[a, b]]) == [ACL_TDT_QUEUE_ROUTE_UNBIND]
    assert rt.acltdtQueryQueueRoutes(Q.ACL_TDT_QUEUE_ROUTE_QUERY_SRC, a, None) == [[a, c, 1]]
    rt.acltdtDestroyQueue(c)  # its routes go with it
    assert rt.acltdtQueryQueueRoutes(Q.ACL_TDT_QUEUE_ROUTE_QUERY_SRC, a, None) == []


async def test_bad_queue_input_names_the_problem(rt: Runtime) -> None:
    a = rt.acltdtCreateQueue("taken", 2)
    cases = [
        (lambda: rt.acltdtCreateQueue("taken", 2), ACL_ERROR_INVALID_PARAM, "already has a queue named 'taken'"),
        (lambda: rt.acltdtCreateQueue("q", 0), ACL_ERROR_INVALID_PARAM, "depth 0"),
        (lambda: rt.acltdtDestroyQueue(a + 100), ACL_ERROR_INVALID_QUEUE_ID, f"{a + 100}"),
        (lambda: rt.acltdtBindQueueRoutes([]), ACL_ERROR_INVALID_PARAM, "empty"),
        (lambda: rt.acltdtBindQueueRoutes([[a, a + 100]]), ACL_ERROR_INVALID_QUEUE_ID, "destination queue"),
        (lambda: rt.acltdtBindQueueRoutes([[a, a]]), ACL_ERROR_INVALID_PARAM, "to itself"),
        (lambda: rt.acltdtQueryQueueRoutes(7, a, a), ACL_ERROR_INVALID_PARAM, "query mode 7"),
    ]
    for make, code, words in cases:
        with pytest.raises(AclError) as caught:
            make()
        assert (caught.value.code, words in caught.value.message) == (code, True), caught.value
    assert list(rt.ctx.device().tdt_of(None).queues) == [a] and rt.ctx.device().tdt_of(None).routes == {}


async def test_a_context_takes_its_queues_and_channel_handles_with_it(machine: Machine) -> None:
    gone = Runtime(machine)
    gone.aclInit()
    gone.aclrtSetDevice(0)
    gone.acltdtCreateQueue("mine", 2)
    gone.acltdtCreateChannelWithCapacity(0, "mine", 2)
    await gone.release_all()
    assert machine.devices[0].tdt_of(None).queues == {} and machine.devices[0].tdt_of(None).channels == {}


async def test_queue_data_in_order_bounded_by_depth(rt: Runtime) -> None:
    q = rt.acltdtCreateQueue("data", 2)
    first, second = payload(3), payload(8)
    await rt.acltdtEnqueueData(q, first, b"user-1", 0, 0)
    await rt.acltdtEnqueueData(q, second, b"", -1, 0)
    assert await code_of(rt.acltdtEnqueueData(q, b"x", b"", 0, 0)) == ACL_ERROR_RT_QUEUE_FULL
    assert await code_of(rt.acltdtEnqueueData(q, b"x", b"", 10, 0)) == ACL_ERROR_RT_QUEUE_FULL
    assert await rt.acltdtDequeueData(q, 64, 4, 0) == (first, len(first), b"user")  # the user data cut to 4
    assert await code_of(rt.acltdtDequeueData(q, 8, 0, 0)) == ACL_ERROR_INVALID_PARAM  # 32 bytes do not fit in 8
    assert await rt.acltdtDequeueData(q, 32, 0, 0) == (second, 32, b"")  # the refused dequeue left it there
    assert await code_of(rt.acltdtDequeueData(q, 8, 0, 0)) == ACL_ERROR_RT_QUEUE_EMPTY
    assert await code_of(rt.acltdtEnqueueData(q, b"", b"", 0, 0)) == ACL_ERROR_INVALID_PARAM
    assert await code_of(rt.acltdtEnqueueData(q + 1, b"x", b"", 0, 0)) == ACL_ERROR_INVALID_QUEUE_ID
    waiting = asyncio.ensure_future(rt.acltdtDequeueData(q, 8, 8, -1))
    await asyncio.sleep(0)
    assert not waiting.done()
    await rt.acltdtEnqueueData(q, b"late", b"u", 0, 0)
    assert await asyncio.wait_for(waiting, 5) == (b"late", 4, b"u")
