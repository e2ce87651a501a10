"""Browser origins (issue 39, 1): a web page the user visits must not reach a tokenless loopback daemon. A request
or WebSocket handshake whose `Origin` is not the daemon's own (or on VNPU_ALLOW_ORIGINS) is refused with 403 and
the JSON error body, before it touches a context; programs (which send no Origin) and the dashboard (same origin)
go on."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import msgpack
import pytest
import websockets

from proto.errors import ACL_ERROR_INVALID_PARAM
from tests.server.api.conftest import LiveServer, start_live
from tests.server.api.conftest import test_settings as make_settings

EVIL = "https://evil.example"


@pytest.fixture
async def daemon(request: pytest.FixtureRequest) -> AsyncIterator[LiveServer]:
    allow = getattr(request, "param", "")
    server, task = await start_live(make_settings(**({"allow_origins": allow} if allow else {})))
    yield server
    server.server.should_exit = True
    await task


SETUP = [
    ("aclInit", {"configPath": None}),
    ("aclrtSetDevice", {"deviceId": 0}),
    ("aclrtMalloc", {"size": 16, "policy": 0}),
]


async def victim(server: LiveServer) -> tuple[websockets.ClientConnection, str]:
    """A program (no Origin) holding device memory: its connection and its context."""
    ws = await websockets.connect(server.ws_url, max_size=None)
    hello = msgpack.unpackb(await ws.recv())["hello"]
    for n, (api, args) in enumerate(SETUP):
        await ws.send(msgpack.packb({"id": n, "api": api, "args": args, "thread": [1, 1]}))
        assert "result" in msgpack.unpackb(await ws.recv())
    return ws, hello["context"]


def refused_handshake(error: websockets.InvalidStatus) -> None:
    assert error.response.status_code == 403
    body = json.loads(error.response.body)["error"]
    assert body["code"] == ACL_ERROR_INVALID_PARAM and "VNPU_ALLOW_ORIGINS" in body["message"], body


async def test_a_foreign_page_cannot_join_a_context_or_read_the_trace(daemon: LiveServer) -> None:
    ws, context = await victim(daemon)
    for path in (f"/v1/ws?context={context}", "/v1/ws", "/v1/trace/live"):
        url = daemon.ws_url.removesuffix("/v1/ws") + path
        with pytest.raises(websockets.InvalidStatus) as info:
            await websockets.connect(url, origin=EVIL)  # type: ignore[arg-type]
        refused_handshake(info.value)
    async with httpx.AsyncClient(base_url=daemon.url) as http:
        for method, path, body in (
            ("POST", "/v1/call/aclInit", "{}"),  # a CORS "simple request": text/plain, no preflight
            ("GET", "/v1/trace", None),
            ("GET", "/v1/devices/0", None),
        ):
            headers = {"Origin": EVIL, "Content-Type": "text/plain"}
            r = await http.request(method, path, content=body, headers=headers)
            assert r.status_code == 403 and r.json()["error"]["code"] == ACL_ERROR_INVALID_PARAM, r.text
            assert "https://evil.example" in r.json()["error"]["message"]
        # a page that rebinds its own name to 127.0.0.1: its origin is the Host it names, which is not loopback
        rebound = {"Origin": f"http://evil.example:{daemon.port}", "Host": f"evil.example:{daemon.port}"}
        assert (await http.get("/v1/trace", headers=rebound)).status_code == 403
        assert (await http.get("/healthz", headers={"Origin": EVIL})).status_code == 200  # nothing to protect
    # the program goes on, and its own origin (the dashboard's) is let in
    await ws.send(msgpack.packb({"id": 9, "api": "aclrtGetDevice", "args": {}, "thread": [1, 1]}))
    assert msgpack.unpackb(await ws.recv())["result"] == {"deviceId": 0}
    own = f"http://127.0.0.1:{daemon.port}"
    async with websockets.connect(daemon.ws_url.removesuffix("/v1/ws") + "/v1/trace/live", origin=own) as live:  # type: ignore[arg-type]
        assert "traceEvents" in json.loads(await live.recv())
    async with websockets.connect(f"{daemon.ws_url}?context={context}", origin=own) as joined:  # type: ignore[arg-type]
        assert msgpack.unpackb(await joined.recv())["hello"]["context"] == context
    await ws.close()


@pytest.mark.parametrize("daemon", ["https://ok.example, http://lab.example:8888"], indirect=True)
async def test_the_allow_list_lets_named_origins_in(daemon: LiveServer) -> None:
    for origin in ("https://ok.example", "http://lab.example:8888"):
        async with websockets.connect(daemon.ws_url, origin=origin) as ws:  # type: ignore[arg-type]
            assert "hello" in msgpack.unpackb(await ws.recv())
    for origin in (EVIL, "http://ok.example", "null"):
        with pytest.raises(websockets.InvalidStatus) as info:
            await websockets.connect(daemon.ws_url, origin=origin)  # type: ignore[arg-type]
        refused_handshake(info.value)


def test_the_policy() -> None:
    from server.api.origins import OriginPolicy

    loopback = OriginPolicy("", loopback_only=True)
    assert loopback.allows("http://127.0.0.1:9470", "127.0.0.1:9470")
    assert loopback.allows("http://localhost:9470", "localhost:9470")
    assert loopback.allows("http://[::1]:9470", "[::1]:9470")
    assert not loopback.allows("http://127.0.0.1:9471", "127.0.0.1:9470")  # another port is another origin
    assert not loopback.allows("http://vnpu.example:9470", "vnpu.example:9470")  # DNS rebinding
    assert not loopback.allows("null", "127.0.0.1:9470")
    public = OriginPolicy("", loopback_only=False)  # behind a name: its own origin is the Host it is reached by
    assert public.allows("https://vnpu.example", "vnpu.example")
    assert not public.allows(EVIL, "vnpu.example")
    anything = OriginPolicy("*", loopback_only=True)
    assert anything.allows(EVIL, "127.0.0.1:9470")
