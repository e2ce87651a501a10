"""Contexts and sessions: sessions of one context share its handles; the context outlives each session but the
last (plus a grace period), and then everything it held -- device memory, pinned host memory and its shared-memory
segment, streams -- is reclaimed: after DELETE, after an idle timeout, and after its client process was killed."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from proto.errors import ACL_ERROR_INVALID_PARAM, AclError
from server.api.sessions import Registry
from server.app import create_app
from tests.server.api.callers import RestCaller, WsCaller
from tests.server.api.conftest import LiveServer, start_live
from tests.server.api.conftest import test_settings as make_settings

ROOT = Path(__file__).resolve().parents[3]
SHM = Path("/dev/shm")
MiB = 1 << 20


async def running(settings: Any) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(application)
        async with httpx.AsyncClient(transport=transport, base_url="http://vnpu") as client:
            yield application, client


@pytest.fixture
async def graceful() -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    async for pair in running(make_settings(context_grace=0.3)):
        yield pair


@pytest.fixture
async def idle() -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    async for pair in running(make_settings(session_idle=0.3)):
        yield pair


async def used(client: httpx.AsyncClient, device: int = 0) -> int:
    memory: dict[str, int] = (await client.get(f"/v1/devices/{device}")).json()["memory"]
    assert memory["used"] + memory["free"] == memory["total"]
    return memory["used"]


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, f"not within {seconds} s"
        await asyncio.sleep(0.02)


async def open_session(client: httpx.AsyncClient, context: str | None = None) -> tuple[RestCaller, str]:
    r = await client.post("/v1/sessions", json={"context": context} if context else None)
    assert r.status_code == 200, r.text
    opened = r.json()
    if context:
        assert opened["context"] == context
    return RestCaller(client, opened["session"]), opened["context"]


async def test_sessions_of_a_context_share_handles_and_the_last_one_reclaims_it(
    graceful: tuple[FastAPI, httpx.AsyncClient],
) -> None:
    app, client = graceful
    registry: Registry = app.state.registry
    baseline = await used(client)
    first, context = await open_session(client)
    second, _ = await open_session(client, context)
    await first("aclInit", configPath=None)
    await first("aclrtSetDevice", deviceId=0)
    await second("aclrtSetDevice", deviceId=0)  # the current device is per thread, and each session has its own
    stream = (await first("aclrtCreateStream"))["stream"]
    ptr = (await first("aclrtMalloc", size=MiB, policy=0))["devPtr"]
    host = (await second("aclrtMallocHost", size=4096))["hostPtr"]
    segment = SHM / (await first("vnpuHostInfo", hostPtr=host))["name"]
    await second("aclrtMemsetAsync", devPtr=ptr, maxCount=MiB, value=0x5A, count=MiB, stream=stream)
    await second("aclrtSynchronizeStream", stream=stream)
    head = await first("aclrtMemcpy", dst=None, destMax=4, src=ptr, count=4, kind=2)
    assert head["data"] == b"\x5a" * 4
    assert await used(client) >= baseline + MiB and segment.exists()

    # the first session goes: the context stays, with everything in it
    assert (await client.delete(f"/v1/sessions/{first.session}")).status_code == 204
    with pytest.raises(AclError, match="no session"):
        await first("aclrtGetDevice")
    await asyncio.sleep(0.5)  # past the grace period: the context still has a session
    await second("aclrtSynchronizeStream", stream=stream)
    assert context in registry.contexts and await used(client) >= baseline + MiB

    # the last one goes: after the grace period, memory and the segment are back
    assert (await client.delete(f"/v1/sessions/{second.session}")).status_code == 204
    assert context in registry.contexts  # within the grace period
    await eventually(lambda: _gone(registry, context))
    assert await used(client) == baseline and not segment.exists()
    r = await client.post("/v1/sessions", json={"context": context})
    assert r.status_code == 400
    assert r.json()["error"]["message"] == f"no context {context!r}: it never existed or has ended"
    assert (await client.delete(f"/v1/sessions/{second.session}")).status_code == 400


async def _gone(registry: Registry, context: str) -> bool:
    return context not in registry.contexts


async def test_joining_within_the_grace_period_keeps_the_context(graceful: tuple[FastAPI, httpx.AsyncClient]) -> None:
    app, client = graceful
    first, context = await open_session(client)
    await first("aclInit", configPath=None)
    await first("aclrtSetDevice", deviceId=0)
    stream = (await first("aclrtCreateStream"))["stream"]
    assert (await client.delete(f"/v1/sessions/{first.session}")).status_code == 204
    again, _ = await open_session(client, context)  # a process restarting its connection
    await asyncio.sleep(0.5)
    assert context in app.state.registry.contexts
    await again("aclrtSetDevice", deviceId=0)
    await again("aclrtSynchronizeStream", stream=stream)


async def test_an_idle_rest_session_ends_and_its_context_is_reclaimed(idle: tuple[FastAPI, httpx.AsyncClient]) -> None:
    app, client = idle
    registry: Registry = app.state.registry
    baseline = await used(client)
    sleeper, sleeping = await open_session(client)
    busy, active = await open_session(client)
    for c in (sleeper, busy):
        await c("aclInit", configPath=None)
        await c("aclrtSetDevice", deviceId=0)
        await c("aclrtMalloc", size=MiB, policy=0)
    host = (await sleeper("aclrtMallocHost", size=4096))["hostPtr"]
    segment = SHM / (await sleeper("vnpuHostInfo", hostPtr=host))["name"]
    assert await used(client) >= baseline + 2 * MiB
    deadline = time.monotonic() + 5
    while sleeping in registry.contexts:  # the reaper (period: session_idle / 4) ends the sleeper; busy calls on
        assert time.monotonic() < deadline, "the idle session was not reaped within 5 s"
        await busy("aclrtGetDevice")
        await asyncio.sleep(0.05)
    assert not segment.exists()
    assert active in registry.contexts
    assert baseline + MiB <= await used(client) < baseline + 2 * MiB
    with pytest.raises(AclError, match=r"expired at .* without a call") as info:
        await sleeper("aclrtGetDevice")
    assert info.value.code == ACL_ERROR_INVALID_PARAM


async def test_expire_idle_ends_only_rest_sessions_past_the_limit(idle: tuple[FastAPI, httpx.AsyncClient]) -> None:
    app, client = idle
    registry: Registry = app.state.registry
    await open_session(client)
    fresh, _ = await open_session(client)
    ws_session = registry.open("default", "ws")
    for session in registry.sessions.values():
        session.last_seen -= 10  # all of them long idle ...
    registry.sessions[str(fresh.session)].last_seen = time.monotonic()  # ... but one
    registry.expire_idle()
    assert set(registry.sessions) == {fresh.session, ws_session.id}  # a WebSocket ends when its connection does
    registry.close(ws_session)


async def test_a_rest_session_with_a_call_in_flight_does_not_expire(idle: tuple[FastAPI, httpx.AsyncClient]) -> None:
    app, client = idle
    registry: Registry = app.state.registry
    main, context = await open_session(client)
    await main("aclInit", configPath=None)
    await main("aclrtSetDevice", deviceId=0)
    stream = (await main("aclrtCreateStream"))["stream"]
    event = (await main("aclrtCreateEventWithFlag", flag=0x1))["event"]  # legacy: a wait blocks until a record
    await main("aclrtStreamWaitEvent", stream=stream, event=event)
    sync = asyncio.create_task(main("aclrtSynchronizeStream", stream=stream))
    await asyncio.sleep(1.0)  # over three times session_idle: the reaper has looked many times
    registry.expire_idle()
    assert not sync.done() and main.session in registry.sessions and context in registry.contexts
    other = RestCaller(client, main.session, thread="other")  # another thread of the same process
    await other("aclrtSetDevice", deviceId=0)
    await other("aclrtRecordEvent", event=event, stream=0)
    assert await asyncio.wait_for(sync, 5) == {}  # the real result
    assert (await main("aclrtQueryEventStatus", event=event))["status"] == 1  # the session lives on

    session = registry.sessions[str(main.session)]
    with session.calling():
        session.last_seen -= 10  # a call began long ago and is still in flight
        registry.expire_idle()
        assert session.calls == 1 and session.id in registry.sessions
    registry.expire_idle()
    assert session.calls == 0 and session.id in registry.sessions  # idle counts from the end of its last call


async def test_a_websocket_session_cannot_be_ended_or_used_over_rest(live: LiveServer) -> None:
    ws = await WsCaller.connect(live.ws_url)
    try:
        await ws("aclInit", configPath=None)
        await ws("aclrtSetDevice", deviceId=0)
        async with httpx.AsyncClient(base_url=live.url) as client:
            session = ws.hello["session"]
            for method, path in (("DELETE", f"/v1/sessions/{session}"), ("POST", "/v1/call/aclrtGetDevice")):
                r = await client.request(method, path, headers={"X-Vnpu-Session": session})
                assert r.status_code == 400
                assert r.json()["error"]["message"] == f"no session {session!r}: it never existed or has ended"
            await asyncio.sleep(0.2)  # past the grace period: nothing was reclaimed under the connection
            assert ws.hello["context"] in live.app.state.registry.contexts
        assert (await ws("aclrtGetDevice"))["deviceId"] == 0
    finally:
        await ws.close()


@pytest.mark.parametrize("cleanup", ["finalize twice", "reset twice", "force reset"])
async def test_a_joined_process_cannot_free_the_first_ones_context(live: LiveServer, cleanup: str) -> None:
    """issue 39, 6: the aclInit count and the device references were the context's, so the joined process's extra
    aclFinalize, extra aclrtResetDevice or aclrtResetDeviceForce freed the first process's memory."""
    first = await WsCaller.connect(live.ws_url)
    joined = await WsCaller.connect(live.ws_url, first.hello["context"])
    first.thread, joined.thread = [100, 1], [200, 1]
    try:
        await first("aclInit", configPath=None)
        await first("aclrtSetDevice", deviceId=0)
        ptr = (await first("aclrtMalloc", size=64, policy=0))["devPtr"]
        await first("aclrtMemcpy", dst=ptr, destMax=64, src=b"A" * 64, count=64, kind=1)
        await joined("aclInit", configPath=None)
        if cleanup == "finalize twice":
            await joined("aclFinalize")
            with pytest.raises(AclError) as caught:
                await joined("aclFinalize")
            assert caught.value.code == 100037
        else:
            await joined("aclrtSetDevice", deviceId=0)
            await joined("aclrtResetDeviceForce" if cleanup == "force reset" else "aclrtResetDevice", deviceId=0)
            with pytest.raises(AclError) as caught:
                await joined("aclrtResetDevice", deviceId=0)
            assert caught.value.code == 507007
        got = await first("aclrtMemcpy", dst=None, destMax=64, src=ptr, count=64, kind=2)
        assert got["data"] == b"A" * 64
    finally:
        await joined.close()
        await first.close()


CLIENT = r"""
import sys, time
import msgpack
from websockets.sync.client import connect

ws = connect(sys.argv[1], max_size=None, open_timeout=10)
hello = msgpack.unpackb(ws.recv())["hello"]

def call(ident, api, **args):
    envelope = {"id": ident, "api": api, "args": args, "thread": [1234, 1], "reply": True}
    ws.send(msgpack.packb(envelope, use_bin_type=True))
    reply = msgpack.unpackb(ws.recv(timeout=10))
    assert reply["id"] == ident and "result" in reply, reply
    return reply["result"]

call(1, "aclInit", configPath=None)
call(2, "aclrtSetDevice", deviceId=0)
call(3, "aclrtMalloc", size=1 << 20, policy=0)
host = call(4, "aclrtMallocHost", size=1 << 16)["hostPtr"]
print("READY", hello["context"], call(5, "vnpuHostInfo", hostPtr=host)["name"], flush=True)
time.sleep(60)
"""


async def test_a_killed_client_process_gives_everything_back() -> None:
    server, task = await start_live(make_settings(context_grace=1.0))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLIENT, server.ws_url, cwd=ROOT, stdout=asyncio.subprocess.PIPE
    )
    try:
        async with httpx.AsyncClient(base_url=server.url) as client:
            baseline = await used(client)
            assert proc.stdout is not None
            line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode().split()
            assert line[0] == "READY", line
            context, segment = line[1], SHM / line[2]
            assert segment.exists() and segment.stat().st_size == 1 << 16
            view = (await client.get("/v1/devices/0")).json()
            assert view["memory"]["used"] >= baseline + MiB
            assert [c["sessions"] for c in view["contexts"] if c["id"] == context] == [1]
            proc.kill()
            assert await asyncio.wait_for(proc.wait(), 10) == -9
            registry: Registry = server.app.state.registry
            await eventually(lambda: _gone(registry, context))  # disconnect, then the grace period, then reclaim
            assert await used(client) == baseline
            assert not segment.exists()
            view = (await client.get("/v1/devices/0")).json()
            assert view["contexts"] == [] and view["streams"]["used"] == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await asyncio.wait_for(proc.wait(), 10)
        server.server.should_exit = True
        await asyncio.wait_for(task, 10)
