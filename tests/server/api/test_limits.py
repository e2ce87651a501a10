"""Limits that keep one client from hurting the others: a memory quota and a handle limit per context, a maximum
WebSocket message that closes only the connection that broke it, and a bounded queue per client thread that pushes
back on a client pipelining into a blocked stream without losing a single call."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from proto.constants import ACL_EVENT_SYNC
from proto.errors import ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, AclError
from server.app import create_app
from tests.server.api.callers import RestCaller, WsCaller
from tests.server.api.conftest import start_live
from tests.server.api.conftest import test_settings as make_settings

KiB, MiB = 1 << 10, 1 << 20


@pytest.fixture
async def limited() -> AsyncIterator[httpx.AsyncClient]:
    application = create_app(make_settings(context_memory=MiB, context_handles=4))
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(application)
        async with httpx.AsyncClient(transport=transport, base_url="http://vnpu") as client:
            yield client


async def context(client: httpx.AsyncClient) -> RestCaller:
    caller = RestCaller(client, (await client.post("/v1/sessions")).json()["session"])
    await caller("aclInit", configPath=None)
    await caller("aclrtSetDevice", deviceId=0)
    return caller


async def test_memory_quota_per_context(limited: httpx.AsyncClient) -> None:
    c = await context(limited)
    half = (await c("aclrtMalloc", size=512 * KiB, policy=0))["devPtr"]
    host = (await c("aclrtMallocHost", size=256 * KiB))["hostPtr"]  # pinned memory counts too
    for api, args in (("aclrtMalloc", {"size": 300 * KiB, "policy": 0}), ("aclrtMallocHost", {"size": 300 * KiB})):
        with pytest.raises(AclError) as info:
            await c(api, **args)
        assert info.value.code == ACL_ERROR_RT_MEMORY_ALLOCATION and info.value.api == api
        assert info.value.message == (
            f"this context's memory quota is {MiB} bytes and {768 * KiB} are in use: {300 * KiB} more do not fit"
        )
    last = (await c("aclrtMalloc", size=256 * KiB, policy=0))["devPtr"]  # exactly up to the quota
    with pytest.raises(AclError, match="memory quota") as info:
        await c("aclrtMalloc", size=1, policy=0)
    assert info.value.code == ACL_ERROR_RT_MEMORY_ALLOCATION
    # freeing gives the quota back; another context has a quota of its own
    await c("aclrtFree", devPtr=half)
    await c("aclrtFreeHost", hostPtr=host)
    await c("aclrtMalloc", size=768 * KiB, policy=0)
    other = await context(limited)
    await other("aclrtMalloc", size=MiB, policy=0)
    await c("aclrtFree", devPtr=last)
    assert (await c("aclrtGetMemInfo", attr=0))["total"] == 64 * MiB  # the quota is not the device's size


async def test_handle_limit_per_context(limited: httpx.AsyncClient) -> None:
    c = await context(limited)
    streams = [(await c("aclrtCreateStream"))["stream"] for _ in range(2)]
    events = [(await c("aclrtCreateEvent"))["event"] for _ in range(2)]
    for api in ("aclrtCreateStream", "aclrtCreateEvent", "aclrtCreateEventExWithFlag"):
        with pytest.raises(AclError) as info:
            await c(api, **({"flag": ACL_EVENT_SYNC} if "Flag" in api else {}))
        assert info.value.code == ACL_ERROR_RT_RESOURCE_ALLOC_FAIL and info.value.api == api
        assert "holds 4 handles" in info.value.message
    await c("aclrtDestroyStream", stream=streams[0])
    await c("aclrtDestroyEvent", event=events[0])
    assert (await c("aclrtCreateEvent"))["event"]
    assert (await c("aclrtCreateStream"))["stream"]
    other = await context(limited)  # another context counts its own
    for _ in range(4):
        await other("aclrtCreateEvent")


async def test_a_message_over_the_limit_closes_only_its_connection() -> None:
    server, task = await start_live(make_settings(max_message=64 * KiB))
    try:
        a, b = await WsCaller.connect(server.ws_url), await WsCaller.connect(server.ws_url)
        for c in (a, b):
            await c("aclInit", configPath=None)
            await c("aclrtSetDevice", deviceId=0)
        host = (await a("aclrtMallocHost", size=128 * KiB))["hostPtr"]
        await a("vnpuHostWrite", hostPtr=host, data=b"\x01" * (60 * KiB))  # under the limit: fine
        await a.send("vnpuHostWrite", hostPtr=host, data=b"\x02" * (100 * KiB))
        await asyncio.wait_for(a.ws.wait_closed(), 5)
        assert a.ws.close_code == 1009  # message too big
        assert (await b("aclrtGetDevice"))["deviceId"] == 0  # the other connection goes on
        ptr = (await b("aclrtMalloc", size=64, policy=0))["devPtr"]
        await b("aclrtMemset", devPtr=ptr, maxCount=64, value=3, count=64)
        registry = server.app.state.registry
        for _ in range(250):  # a's context is reclaimed (its grace is 0.05 s), b's is not
            if a.hello["context"] not in registry.contexts:
                break
            await asyncio.sleep(0.02)
        assert a.hello["context"] not in registry.contexts and b.hello["context"] in registry.contexts
        await a.close()
        await b.close()
    finally:
        server.server.should_exit = True
        await asyncio.wait_for(task, 10)


async def test_pipelining_into_a_blocked_stream_pushes_back_and_loses_nothing() -> None:
    """With max_pending=4, a client thread blocks in a synchronize on a stream that waits for an event, then
    pipelines 200 memsets behind it (reply: false). The server holds at most 4 calls of the connection queued and
    stops reading it (a call of another thread behind them waits too); once another connection of the context
    records the event, all 200 run, in order, and the other thread's call is answered."""
    server, task = await start_live(make_settings(max_pending=4))
    calls = 200
    try:
        a = await WsCaller.connect(server.ws_url)
        await a("aclInit", configPath=None)
        await a("aclrtSetDevice", deviceId=0)
        ptr = (await a("aclrtMalloc", size=calls, policy=0))["devPtr"]
        await a("aclrtMemset", devPtr=ptr, maxCount=calls, value=0xFF, count=calls)
        stream = (await a("aclrtCreateStream"))["stream"]
        event = (await a("aclrtCreateEventWithFlag", flag=ACL_EVENT_SYNC))["event"]
        await a.send("aclrtStreamWaitEvent", reply=False, stream=stream, event=event)
        blocked = await a.send("aclrtSynchronizeStream", stream=stream)
        for i in range(calls):  # byte i = i: the order shows in the result
            await a.send("aclrtMemsetAsync", reply=False, devPtr=ptr + i, maxCount=1, value=i, count=1, stream=stream)
        done = await a.send("aclrtSynchronizeStream", stream=stream)
        other = a._waiting[await a.send("aclrtGetDeviceCount", thread="other")]  # behind them on the wire
        await asyncio.sleep(0.3)
        assert not other.done()  # the server stopped reading: backpressure, not an unbounded buffer
        async with httpx.AsyncClient(base_url=server.url) as client:
            view = (await client.get("/v1/devices/0")).json()
        (mine,) = [s for c in view["contexts"] for s in c["streams"] if s["handle"] == stream]
        assert mine["queued"] == 1 and "wait" in mine["running"].lower()  # only the wait: the thread is blocked
        b = await WsCaller.connect(server.ws_url, context=a.hello["context"])
        await b("aclrtSetDevice", deviceId=0)
        await b("aclrtRecordEvent", event=event, stream=0)
        assert await a.reply(blocked, timeout=10) == {}
        assert await a.reply(done, timeout=10) == {}
        assert (await asyncio.wait_for(other, 10))["result"] == {"count": 2}
        data = (await a("aclrtMemcpy", dst=None, destMax=calls, src=ptr, count=calls, kind=2))["data"]
        assert data == bytes(range(calls))
        assert a.orphans == []  # no pipelined call failed
        await b.close()
        await a.close()
    finally:
        server.server.should_exit = True
        await asyncio.wait_for(task, 10)
