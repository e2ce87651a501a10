"""Tenants: with tokens every /v1 route and the WebSocket need `Authorization: Bearer` (or `?token=`), and one
tenant's handles, pointers, contexts, sessions and models are, for another tenant, exactly like ones that never
existed: same error code, same message, nothing about the other tenant's state."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import msgpack
import pytest
import websockets
from fastapi import FastAPI

from proto.constants import ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_PARAM_INVALID, AclError
from server.app import create_app
from tests.server.api.callers import RestCaller
from tests.server.api.conftest import start_live
from tests.server.api.conftest import test_settings as make_settings

A, B = {"Authorization": "Bearer token-of-alice"}, {"Authorization": "Bearer token-of-bob"}


@pytest.fixture
def tokens_file(tmp_path: Path) -> str:
    path = tmp_path / "tokens"
    path.write_text("# tenant token\nalice token-of-alice\n\nbob   token-of-bob\n")
    return str(path)


@pytest.fixture
async def tenants_app(tokens_file: str) -> AsyncIterator[FastAPI]:
    application = create_app(make_settings(tokens_file=tokens_file))
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def client(tenants_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(tenants_app), base_url="http://vnpu") as c:
        yield c


async def tenant(client: httpx.AsyncClient, headers: dict[str, str]) -> RestCaller:
    """A RestCaller of one tenant in a session of its own, with device 0 set."""
    session = (await client.post("/v1/sessions", headers=headers)).json()["session"]
    caller = RestCaller(httpx.AsyncClient(transport=client._transport, base_url="http://vnpu", headers=headers))
    caller.session = session
    await caller("aclInit", configPath=None)
    await caller("aclrtSetDevice", deviceId=0)
    return caller


async def refused(caller: RestCaller, api: str, **args: Any) -> AclError:
    with pytest.raises(AclError) as info:
        await caller(api, **args)
    return info.value


def same_error(mine: AclError, other: AclError, handle: int, never: int) -> None:
    """The error for another tenant's `handle` is the one for the never-issued `never`, handle aside."""
    assert (mine.code, mine.api) == (other.code, other.api)
    assert mine.message.replace(f"{handle:#x}", "H") == other.message.replace(f"{never:#x}", "H")


def fill(path: str) -> str:
    fills = {"ptr": "4096", "api": "aclInit", "session_id": "abc", "device_id": "0", "model_id": "4096"}
    return re.sub(r"\{(\w+)\}", lambda m: fills[m.group(1)], path)


async def test_every_route_needs_a_token_but_healthz_and_the_docs(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    routes = [(m.upper(), path) for path, item in schema["paths"].items() for m in item if path != "/healthz"]
    assert len(routes) > 60  # every call of the table, raw memory, sessions, views
    routes += [("POST", "/v1/call/aclNoSuchCall"), ("GET", "/v1/nowhere")]  # no token: not even a 404
    for method, path in routes:
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "token-of-alice"}):
            r = await client.request(method, fill(path), params={"count": 1}, headers=headers)
            assert r.status_code == 401, (method, path, r.text)
            assert r.headers["www-authenticate"] == "Bearer"
            error = r.json()["error"]
            assert error["code"] == ACL_ERROR_INVALID_PARAM and "Authorization: Bearer" in error["message"]
    assert (await client.post("/v1/call/aclInit", headers=A)).status_code == 200
    assert (await client.post("/v1/call/aclInit", params={"token": "token-of-bob"})).status_code == 200
    assert (await client.get("/healthz")).json() == {"status": "ok", "devices": 2}
    # the schema and its page describe the API, the same for everyone, and hold no tenant's data
    assert (await client.get("/openapi.json")).status_code == 200
    assert (await client.get("/docs")).status_code == 200


async def test_the_websocket_refuses_a_missing_or_wrong_token(tokens_file: str) -> None:
    server, task = await start_live(make_settings(tokens_file=tokens_file))
    try:
        nobody = {"Authorization": "Bearer token-of-nobody"}
        for url, headers in ((server.ws_url, {}), (server.ws_url + "?token=nope", {}), (server.ws_url, nobody)):
            with pytest.raises(websockets.InvalidStatus) as info:
                async with websockets.connect(url, additional_headers=headers, open_timeout=5):
                    pass
            response = info.value.response  # the same answer as REST: 401, WWW-Authenticate, the JSON error body
            assert response.status_code == 401 and response.headers["WWW-Authenticate"] == "Bearer"
            assert json.loads(response.body)["error"]["code"] == ACL_ERROR_INVALID_PARAM
        for url, headers in ((server.ws_url + "?token=token-of-bob", {}), (server.ws_url, A)):
            async with websockets.connect(url, additional_headers=headers, open_timeout=5) as ws:
                hello = msgpack.unpackb(await ws.recv())["hello"]
                assert hello["tenant"] == ("bob" if "token" in url else "alice")
                await ws.send(msgpack.packb({"id": 1, "api": "aclInit", "args": {}}))
                assert msgpack.unpackb(await ws.recv()) == {"id": 1, "result": {}}
    finally:
        server.server.should_exit = True
        await task


async def test_a_websocket_refused_for_its_context_says_why(tokens_file: str) -> None:
    server, task = await start_live(make_settings(tokens_file=tokens_file))
    try:
        with pytest.raises(websockets.InvalidStatus) as info:
            async with websockets.connect(f"{server.ws_url}?context=0123456789abcdef", additional_headers=A):
                pass
        assert info.value.response.status_code == 404
        error = json.loads(info.value.response.body)["error"]
        assert error["message"] == "no context '0123456789abcdef': it never existed or has ended"
    finally:
        server.server.should_exit = True
        await task


async def test_handles_of_another_tenant_are_invalid_handles(client: httpx.AsyncClient) -> None:
    alice, bob = await tenant(client, A), await tenant(client, B)
    stream = (await alice("aclrtCreateStream"))["stream"]
    event = (await alice("aclrtCreateEvent"))["event"]
    await alice("aclmdlRICaptureBegin", stream=stream, mode=0)
    model = (await alice("aclmdlRICaptureEnd", stream=stream))["modelRI"]
    never = 0x7FFF_FFF0
    for api, arg, handle in (
        ("aclrtSynchronizeStream", "stream", stream),
        ("aclrtDestroyStream", "stream", stream),
        ("aclrtStreamQuery", "stream", stream),
        ("aclrtQueryEventStatus", "event", event),
        ("aclrtDestroyEvent", "event", event),
        ("aclmdlRIDebugPrint", "modelRI", model),
        ("aclmdlRIDestroy", "modelRI", model),
    ):
        theirs, nothing = await refused(bob, api, **{arg: handle}), await refused(bob, api, **{arg: never})
        assert theirs.code == ACL_ERROR_RT_INVALID_HANDLE
        same_error(theirs, nothing, handle, never)
    other = await refused(bob, "aclrtRecordEvent", event=event, stream=0)
    same_error(other, await refused(bob, "aclrtRecordEvent", event=never, stream=0), event, never)
    # and alice's handles are untouched by all that
    await alice("aclrtSynchronizeStream", stream=stream)
    assert (await alice("aclmdlRIDebugPrint", modelRI=model))["text"]
    await alice("aclrtDestroyEvent", event=event)


async def test_another_tenant_cannot_join_a_context_or_use_a_session(client: httpx.AsyncClient) -> None:
    opened = (await client.post("/v1/sessions", headers=A)).json()
    session, context = opened["session"], opened["context"]
    joined = await client.post("/v1/sessions", json={"context": context}, headers=A)
    assert joined.status_code == 200 and joined.json()["context"] == context
    for body in ({"context": context}, {"context": "0123456789abcdef"}):
        r = await client.post("/v1/sessions", json=body, headers=B)
        assert r.status_code == 400
        assert r.json()["error"]["code"] == ACL_ERROR_INVALID_PARAM
        assert r.json()["error"]["message"] == f"no context {body['context']!r}: it never existed or has ended"
    for method, path, headers in (
        ("POST", "/v1/call/aclInit", B | {"X-Vnpu-Session": session}),
        ("DELETE", f"/v1/sessions/{session}", B),
    ):
        r = await client.request(method, path, headers=headers)
        assert r.status_code == 400
        assert r.json()["error"]["message"] == f"no session {session!r}: it never existed or has ended"
    # the session is still alice's
    assert (await client.post("/v1/call/aclInit", headers=A | {"X-Vnpu-Session": session})).status_code == 200


async def test_another_tenants_context_is_refused_on_the_websocket(tokens_file: str) -> None:
    server, task = await start_live(make_settings(tokens_file=tokens_file))
    try:
        async with websockets.connect(server.ws_url, additional_headers=A, open_timeout=5) as ws:
            context = msgpack.unpackb(await ws.recv())["hello"]["context"]
            with pytest.raises(websockets.InvalidStatus):
                async with websockets.connect(f"{server.ws_url}?context={context}", additional_headers=B):
                    pass
            async with websockets.connect(f"{server.ws_url}?context={context}", additional_headers=A) as joined:
                assert msgpack.unpackb(await joined.recv())["hello"]["context"] == context
    finally:
        server.server.should_exit = True
        await task


async def test_views_show_a_tenant_only_its_own_streams_and_models(client: httpx.AsyncClient) -> None:
    alice, bob = await tenant(client, A), await tenant(client, B)
    stream = (await alice("aclrtCreateStream"))["stream"]
    await alice("aclmdlRICaptureBegin", stream=stream, mode=0)
    ptr = (await alice("aclrtMalloc", size=64, policy=0))["devPtr"]
    await alice("aclrtMemsetAsync", devPtr=ptr, maxCount=64, value=7, count=64, stream=stream)
    model = (await alice("aclmdlRICaptureEnd", stream=stream))["modelRI"]
    bob_stream = (await bob("aclrtCreateStream"))["stream"]

    def handles(view: dict[str, Any], kind: str) -> set[int]:
        return {x["handle"] for ctx in view["contexts"] for x in ctx[kind]}

    seen_by_alice = (await client.get("/v1/devices/0", headers=A)).json()
    seen_by_bob = (await client.get("/v1/devices/0", headers=B)).json()
    assert stream in handles(seen_by_alice, "streams") and model in handles(seen_by_alice, "models")
    assert bob_stream not in handles(seen_by_alice, "streams")
    assert stream not in handles(seen_by_bob, "streams") and bob_stream in handles(seen_by_bob, "streams")
    assert handles(seen_by_bob, "models") == set()
    assert {c["id"] for c in seen_by_alice["contexts"]}.isdisjoint(c["id"] for c in seen_by_bob["contexts"])
    assert (await client.get(f"/v1/models/{model}", headers=A)).json()["handle"] == model
    theirs = await client.get(f"/v1/models/{model}", headers=B)
    nothing = await client.get(f"/v1/models/{model + 1000}", headers=B)
    assert theirs.status_code == nothing.status_code == 404
    assert theirs.json()["error"]["message"] == f"no model {model:#x} in your contexts"
    assert theirs.json()["error"]["code"] == nothing.json()["error"]["code"]


# --- pointers: another tenant's memory is memory that was never allocated, for reading, writing and freeing ---


async def test_another_tenants_memory_is_like_memory_never_allocated(client: httpx.AsyncClient) -> None:
    alice, bob = await tenant(client, A), await tenant(client, B)
    mine, theirs = A | {"X-Vnpu-Session": str(alice.session)}, B | {"X-Vnpu-Session": str(bob.session)}
    ptr = (await alice("aclrtMalloc", size=4096, policy=0))["devPtr"]
    host = (await alice("aclrtMallocHost", size=4096))["hostPtr"]
    assert (await client.put(f"/v1/memory/{ptr}", content=b"device secret", headers=mine)).status_code == 204
    assert (await client.put(f"/v1/host/{host}", content=b"pinned secret", headers=mine)).status_code == 204
    bob_ptr = (await bob("aclrtMalloc", size=4096, policy=0))["devPtr"]
    bob_host = (await bob("aclrtMallocHost", size=4096))["hostPtr"]
    d2h, d2d = ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE
    for target, never in ((ptr + 64, ptr + (32 << 20)), (host + 64, host + (1 << 30))):
        attempts: list[tuple[str, dict[str, Any]]] = [
            ("aclrtMemcpy", {"dst": None, "destMax": 13, "src": target, "count": 13, "kind": d2h}),
            ("aclrtMemcpy", {"dst": bob_ptr, "destMax": 13, "src": target, "count": 13, "kind": d2d}),
            ("aclrtMemcpy", {"dst": target, "destMax": 13, "src": bob_ptr, "count": 13, "kind": d2d}),
            ("aclrtMemcpy", {"dst": target, "destMax": 4, "src": b"evil", "count": 4, "kind": 1}),
            ("aclrtMemset", {"devPtr": target, "maxCount": 13, "value": 0, "count": 13}),
            ("aclrtMemcpyAsync", {"dst": target, "destMax": 13, "src": bob_host, "count": 13, "kind": 0, "stream": 0}),
        ]
        for api, args in attempts:
            got = await refused(bob, api, **args)
            assert got.code == ACL_ERROR_RT_PARAM_INVALID, (api, args, got)
            replaced = {k: never if v == target else v for k, v in args.items()}
            same_error(got, await refused(bob, api, **replaced), target, never)
        free = "aclrtFree" if target < host else "aclrtFreeHost"
        got = await refused(bob, free, **{"devPtr" if target < host else "hostPtr": target - 64})
        nothing = await refused(bob, free, **{"devPtr" if target < host else "hostPtr": never})
        assert "4096" not in got.message  # nothing about alice's block
        same_error(got, nothing, target - 64, never)
    for path, addr in (("memory", ptr), ("host", host)):
        stolen = await client.get(f"/v1/{path}/{addr}", params={"count": 13}, headers=theirs)
        assert stolen.status_code == 400 and stolen.json()["error"]["code"] == ACL_ERROR_RT_PARAM_INVALID
    # alice's bytes are intact, and hers to use
    assert (await client.get(f"/v1/memory/{ptr}", params={"count": 13}, headers=mine)).content == b"device secret"
    assert (await client.get(f"/v1/host/{host}", params={"count": 13}, headers=mine)).content == b"pinned secret"
    await alice("aclrtFree", devPtr=ptr)
    await alice("aclrtFreeHost", hostPtr=host)


async def test_tdt_queues_and_channels_are_the_tenants_own(client: httpx.AsyncClient) -> None:
    """issue 39, 2: bob dequeued, enqueued into and destroyed alice's queue by its small id, and opened her channel."""
    alice, bob = await tenant(client, A), await tenant(client, B)
    qid = (await alice("acltdtCreateQueue", name="alice-private", depth=4))["qid"]
    await alice("acltdtEnqueueData", qid=qid, data=b"alice secret", userData=b"", timeout=0, rsv=0)
    never = 999
    for api, args in (
        ("acltdtDequeueData", {"dataSize": 64, "userDataSize": 0, "timeout": 0}),
        ("acltdtEnqueueData", {"data": b"forged", "userData": b"", "timeout": 0, "rsv": 0}),
        ("acltdtDestroyQueue", {}),
    ):
        mine, other = await refused(bob, api, qid=qid, **args), await refused(bob, api, qid=never, **args)
        assert (mine.code, mine.message.replace(str(qid), "Q")) == (other.code, other.message.replace(str(never), "Q"))
    channel = (await alice("acltdtCreateChannelWithCapacity", deviceId=0, name="alice-chan", capacity=2))["handle"]
    item = {"tensorType": 0, "dims": [4], "dataType": 4, "data": b"data", "sliceNum": 0, "sliceId": 0}
    await alice("acltdtSendTensor", handle=channel, name="ds", items=[item], timeout=0)
    his = (await bob("acltdtCreateChannelWithCapacity", deviceId=0, name="alice-chan", capacity=2))["handle"]
    assert (await bob("acltdtQueryChannelSize", handle=his))["size"] == 0
    got = await alice("acltdtDequeueData", qid=qid, dataSize=64, userDataSize=0, timeout=0)
    assert got["data"] == b"alice secret"


async def test_one_tenants_trace_cannot_push_anothers_out(tokens_file: str) -> None:
    """issue 39, 10: one ring for all tenants, so bob's markers pushed alice's events out of her trace."""
    application = create_app(make_settings(tokens_file=tokens_file, trace_capacity=400))
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(application)
        async with httpx.AsyncClient(transport=transport, base_url="http://vnpu") as client:
            alice, bob = await tenant(client, A), await tenant(client, B)
            stream = (await alice("aclrtCreateStream"))["stream"]
            ptr = (await alice("aclrtMalloc", size=64, policy=0))["devPtr"]
            for value in range(50):
                await alice("aclrtMemsetAsync", devPtr=ptr, maxCount=64, value=value, count=64, stream=stream)
            await alice("aclrtSynchronizeStream", stream=stream)
            for n in range(1000):  # more than the whole ring
                await bob("vnpuMarkerMark", message=f"bob {n}", domain=None, stream=None)
            mine = (await client.get("/v1/trace", headers=A)).json()["traceEvents"]
            assert sum(1 for e in mine if e.get("cat") == "memset") == 50
            his = (await client.get("/v1/trace", headers=B)).json()["traceEvents"]
            marks = [e for e in his if e.get("cat") == "mark"]
            assert 0 < len(marks) <= 200 and marks[-1]["name"] == "bob 999"  # his share: half the ring
