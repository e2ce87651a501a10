"""Tenant quotas through the daemon (a tokens file naming two tenants): contexts and sessions are counted by the
registry, device slots and memory by the device; reaching a quota answers the exact code with a message naming the
setting, the other tenant goes on, and a killed client gives its tenant's counts back. One tenant, as before."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from client.config import Config
from client.errors import TransportError
from client.session import Session
from proto.errors import ACL_ERROR_RT_NO_STREAM_RESOURCE, ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, AclError
from server.api.sessions import Registry
from server.app import create_app
from tests.server.api.callers import RestCaller
from tests.server.api.conftest import start_live
from tests.server.api.conftest import test_settings as make_settings

ROOT = Path(__file__).resolve().parents[3]
ALICE, BOB = {"Authorization": "Bearer token-of-alice"}, {"Authorization": "Bearer token-of-bob"}
ZERO = {"stream": 0, "event": 0, "model": 0, "memory": 0, "queue": 0, "context": 0, "session": 0}


def tokens(tmp_path: Path, text: str = "alice token-of-alice\nbob token-of-bob\n") -> str:
    path = tmp_path / "tokens"
    path.write_text(text)
    return str(path)


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[FastAPI]:
    settings = make_settings(tokens_file=tokens(tmp_path), max_streams=8, tenant_contexts=2, tenant_sessions=3)
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def http(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://vnpu") as client:
        yield client


async def opened(http: httpx.AsyncClient, who: dict[str, str], context: str | None = None) -> httpx.Response:
    return await http.post("/v1/sessions", headers=who, json={"context": context} if context else None)


async def eventually(check: object, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"not within {seconds} s"
        await asyncio.sleep(0.02)


def refusal(response: httpx.Response, code: int, message: str) -> None:
    assert response.status_code == 400, response.text
    assert (response.json()["error"]["code"], response.json()["error"]["message"]) == (code, message)


async def test_contexts_and_sessions_quotas(app: FastAPI, http: httpx.AsyncClient) -> None:
    registry: Registry = app.state.registry
    first = (await opened(http, ALICE)).json()
    await opened(http, ALICE)
    full = "tenant 'alice' holds 2 of its quota of 2 contexts (VNPU_TENANT_CONTEXTS=2): 1 more does not fit"
    refusal(await opened(http, ALICE), ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, full)
    joined = await opened(http, ALICE, first["context"])  # joining one of its contexts is a session, not a context
    assert joined.status_code == 200
    full = "tenant 'alice' holds 3 of its quota of 3 sessions (VNPU_TENANT_SESSIONS=3): 1 more does not fit"
    refusal(await opened(http, ALICE, first["context"]), ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, full)
    assert registry.quotas["alice"].used() == ZERO | {"context": 2, "session": 3, "stream": 0}
    assert (await opened(http, BOB)).status_code == 200  # bob has quotas of his own
    # a closed session gives its count back; a context's comes back when it is reclaimed
    for session in (first["session"], joined.json()["session"]):
        assert (await http.delete(f"/v1/sessions/{session}", headers=ALICE)).status_code == 204
    assert registry.quotas["alice"].used()["session"] == 1
    await eventually(lambda: registry.quotas["alice"].used()["context"] == 1)
    assert (await opened(http, ALICE)).status_code == 200


async def test_the_stream_quota_names_its_setting(http: httpx.AsyncClient) -> None:
    session = (await opened(http, ALICE)).json()["session"]
    alice = RestCaller(httpx.AsyncClient(transport=http._transport, base_url="http://vnpu", headers=ALICE), session)
    await alice("aclInit", configPath=None)
    await alice("aclrtSetDevice", deviceId=0)
    streams = [(await alice("aclrtCreateStream"))["stream"] for _ in range(3)]
    with pytest.raises(AclError) as info:
        await alice("aclrtCreateStream")
    assert (info.value.code, info.value.api) == (ACL_ERROR_RT_NO_STREAM_RESOURCE, "aclrtCreateStream")
    assert info.value.message == (
        "tenant 'alice' holds 4 of its quota of 4 streams (VNPU_TENANT_SHARE=0.5 of VNPU_MAX_STREAMS=8): "
        "1 more does not fit"
    )
    await alice("aclrtDestroyStream", stream=streams[0])  # the stream after the error works on, and one more fits
    await alice("aclrtSynchronizeStream", stream=streams[1])
    await alice("aclrtCreateStream")


async def test_one_tenant_has_no_quota(tmp_path: Path) -> None:
    settings = make_settings(tokens_file=tokens(tmp_path, "alice a1\nalice a2\n"), tenant_contexts=1)
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(application), base_url="http://vnpu") as http:
            for _ in range(3):
                assert (await opened(http, {"Authorization": "Bearer a2"})).status_code == 200
        assert application.state.registry.quotas == {}


CLIENT = r"""
import sys, time
import msgpack
from websockets.sync.client import connect

ws = connect(sys.argv[1], max_size=None, open_timeout=10, additional_headers={"Authorization": "Bearer token-of-alice"})
msgpack.unpackb(ws.recv())

def call(ident, api, **args):
    envelope = {"id": ident, "api": api, "args": args, "thread": [1234, 1], "reply": True}
    ws.send(msgpack.packb(envelope, use_bin_type=True))
    reply = msgpack.unpackb(ws.recv(timeout=10))
    assert reply["id"] == ident and "result" in reply, reply
    return reply["result"]

call(1, "aclInit", configPath=None)
call(2, "aclrtSetDevice", deviceId=0)
call(3, "aclrtCreateStream")
call(4, "aclrtCreateEvent")
call(5, "aclrtMalloc", size=1 << 20, policy=0)
call(6, "aclrtMallocHost", size=1 << 16)
print("READY", flush=True)
time.sleep(60)
"""


async def test_a_killed_client_gives_its_tenant_counts_back(tmp_path: Path) -> None:
    server, task = await start_live(make_settings(tokens_file=tokens(tmp_path), context_grace=0.2))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLIENT, server.ws_url, cwd=ROOT, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        assert (await asyncio.wait_for(proc.stdout.readline(), 20)).decode().strip() == "READY"
        quota = server.app.state.registry.quotas["alice"]
        held = ZERO | {"stream": 2, "event": 1, "memory": (1 << 20) + (1 << 16), "context": 1, "session": 1}
        assert quota.used() == held
        proc.kill()
        assert await asyncio.wait_for(proc.wait(), 10) == -9
        await eventually(lambda: quota.used() == ZERO)
    finally:
        if proc.returncode is None:
            proc.kill()
            await asyncio.wait_for(proc.wait(), 10)
        server.server.should_exit = True
        await asyncio.wait_for(task, 10)


async def test_the_client_is_told_its_quota_as_an_acl_error(tmp_path: Path) -> None:
    """A session refused at its opening (the WebSocket handshake, POST /v1/sessions) is aclInit's AclError with the
    daemon's code and message, not a transport error about tokens."""
    server, task = await start_live(make_settings(tokens_file=tokens(tmp_path), tenant_sessions=1))
    first = await asyncio.to_thread(Session, Config(server.url, "token-of-alice"))
    try:
        for transport in ("ws", "http"):
            with pytest.raises(AclError) as info:
                await asyncio.to_thread(Session, Config(server.url, "token-of-alice", transport))
            assert (info.value.code, info.value.api) == (ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "aclInit")
            assert info.value.message == (
                "tenant 'alice' holds 1 of its quota of 1 sessions (VNPU_TENANT_SESSIONS=1): 1 more does not fit"
            )
        with pytest.raises(TransportError, match=r"check VNPU_TOKEN \(it was not accepted\) \(HTTP 401\)"):
            await asyncio.to_thread(Session, Config(server.url, "token-of-nobody"))
        await asyncio.to_thread(first.close)
        await eventually(lambda: server.app.state.registry.quotas["alice"].used()["session"] == 0)
        second = await asyncio.to_thread(Session, Config(server.url, "token-of-alice"))
        await asyncio.to_thread(second.close)
    finally:
        server.server.should_exit = True
        await asyncio.wait_for(task, 10)
