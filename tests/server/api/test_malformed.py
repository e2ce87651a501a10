"""Malformed input never hurts the daemon: over REST every bad request gets a 4xx with the JSON error body naming
the problem (never a 500), and the session goes on; over the WebSocket every bad frame gets an error envelope and
the connection (and every other one) goes on. A property test throws random msgpack at a connection."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import msgpack
import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.sync.client import ClientConnection, connect

from proto.errors import (
    ACL_ERROR_API_NOT_SUPPORT,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
)
from server.app import create_app
from tests.server.api.callers import RestCaller, WsCaller
from tests.server.api.conftest import LiveServer, free_port
from tests.server.api.conftest import test_settings as make_settings

MAX_BODY = 4096
ERROR_KEYS = {"code", "name", "message", "api"}


@pytest.fixture
async def rest() -> AsyncIterator[tuple[httpx.AsyncClient, RestCaller]]:
    """A client that sees a 500 as a response (not as a raised exception), and one REST session in it."""
    application = create_app(make_settings(max_body=MAX_BODY))
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(application, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://vnpu") as client:
            caller = RestCaller(client, (await client.post("/v1/sessions")).json()["session"])
            await caller("aclInit", configPath=None)
            await caller("aclrtSetDevice", deviceId=0)
            yield client, caller


def check_error(response: httpx.Response, status: int, code: int, *words: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == ERROR_KEYS, body
    error: dict[str, Any] = body["error"]
    assert error["code"] == code, error
    for word in words:
        assert word in error["message"], (word, error)
    assert "Traceback" not in error["message"] and ".py" not in error["message"]
    return error


async def still_works(caller: RestCaller) -> None:
    ptr = (await caller("aclrtMalloc", size=64, policy=0))["devPtr"]
    await caller("aclrtMemcpy", dst=ptr, destMax=64, src=b"ok" * 32, count=64, kind=1)
    got = await caller("aclrtMemcpy", dst=None, destMax=2, src=ptr, count=2, kind=2)
    assert got["data"] == b"ok"
    await caller("aclrtFree", devPtr=ptr)


MALLOC = "/v1/call/aclrtMalloc"
REST_CASES: list[tuple[str, str, bytes, int, int, tuple[str, ...]]] = [
    # (name, path, body, status, code, words of the message)
    ("not JSON", MALLOC, b"{size: 1", 422, ACL_ERROR_INVALID_PARAM, ("Invalid JSON",)),
    ("not UTF-8", MALLOC, b"\xff\xfe\x00", 422, ACL_ERROR_INVALID_PARAM, ("Invalid JSON",)),
    ("an array", MALLOC, b"[1024, 0]", 422, ACL_ERROR_INVALID_PARAM, ("should be an object", "[1024, 0]")),
    ("null", MALLOC, b"null", 422, ACL_ERROR_INVALID_PARAM, ("should be an object",)),
    ("a number", MALLOC, b"42", 422, ACL_ERROR_INVALID_PARAM, ("should be an object",)),
    ("unknown field", MALLOC, b'{"size": 8, "policy": 0, "align": 4}', 422, ACL_ERROR_INVALID_PARAM,
     ("align", "Extra inputs are not permitted")),
    ("string for int", MALLOC, b'{"size": "8", "policy": 0}', 422, ACL_ERROR_INVALID_PARAM,
     ("size", "valid integer", "'8'")),
    ("float for int", MALLOC, b'{"size": 8.0, "policy": 0}', 422, ACL_ERROR_INVALID_PARAM, ("size", "valid integer")),
    ("fraction", MALLOC, b'{"size": 8.5, "policy": 0}', 422, ACL_ERROR_INVALID_PARAM, ("size", "valid integer")),
    ("bool for int", MALLOC, b'{"size": true, "policy": 0}', 422, ACL_ERROR_INVALID_PARAM, ("size", "True")),
    ("2**64", MALLOC, b'{"size": 18446744073709551616, "policy": 0}', 422, ACL_ERROR_INVALID_PARAM,
     ("size", "less than or equal to 18446744073709551615")),
    ("2**200", MALLOC, json.dumps({"size": 2**200, "policy": 0}).encode(), 422, ACL_ERROR_INVALID_PARAM, ("size",)),
    ("1e400", MALLOC, b'{"size": 1e400, "policy": 0}', 422, ACL_ERROR_INVALID_PARAM, ("size",)),
    ("NaN", MALLOC, b'{"size": NaN, "policy": 0}', 422, ACL_ERROR_INVALID_PARAM, ("size",)),
    ("negative size", MALLOC, b'{"size": -1, "policy": 0}', 422, ACL_ERROR_INVALID_PARAM,
     ("size", "greater than or equal to 0")),
    ("I32 overflow", "/v1/call/aclrtSetDevice", b'{"deviceId": 2147483648}', 422, ACL_ERROR_INVALID_PARAM,
     ("deviceId", "2147483647")),
    ("missing field", MALLOC, b'{"size": 8}', 422, ACL_ERROR_INVALID_PARAM, ("policy", "Field required")),
    ("empty body", MALLOC, b"", 422, ACL_ERROR_INVALID_PARAM, ("size: Field required", "policy: Field required")),
    ("bad base64", "/v1/call/vnpuHostWrite", b'{"hostPtr": 1, "data": "***"}', 422, ACL_ERROR_INVALID_PARAM,
     ("data",)),
    # values the schema accepts and the device refuses: the device's own code
    ("size 0", MALLOC, b'{"size": 0, "policy": 0}', 400, ACL_ERROR_INVALID_PARAM, ("size must be > 0",)),
    ("2**64-1 bytes", MALLOC, b'{"size": 18446744073709551615, "policy": 0}', 400, ACL_ERROR_RT_MEMORY_ALLOCATION,
     ("out of memory",)),
    ("policy 99", MALLOC, b'{"size": 8, "policy": 99}', 400, ACL_ERROR_INVALID_PARAM,
     ("policy 99 (0x63) is not an aclrtMemMallocPolicy: use ACL_MEM_MALLOC_HUGE_FIRST=0,",)),
    ("capture mode 7", "/v1/call/aclmdlRICaptureThreadExchangeMode", b'{"mode": 7}', 400, ACL_ERROR_RT_PARAM_INVALID,
     ("mode 7 is not an aclmdlRICaptureMode",)),
    ("memcpy kind 9", "/v1/call/aclrtMemcpy", b'{"dst": 1, "destMax": 1, "src": 1, "count": 1, "kind": 9}', 400,
     ACL_ERROR_INVALID_PARAM, ("kind 9",)),
    ("reduce into null", "/v1/call/aclrtReduceAsync",  # no destMax: a null dst is NULL, not pageable memory
     b'{"dst": null, "src": null, "count": 4, "kind": 0, "type": 0, "stream": null, "reserve": null}', 400,
     ACL_ERROR_INVALID_PARAM, ("dst is NULL",)),
    ("device 7", "/v1/call/aclrtSetDevice", b'{"deviceId": 7}', 400, ACL_ERROR_RT_INVALID_DEVICEID, ("device 7",)),
    ("meminfo attr 99", "/v1/call/aclrtGetMemInfo", b'{"attr": 99}', 400, ACL_ERROR_INVALID_PARAM, ("attr 99",)),
    ("raw read, no count", "/v1/memory/4096", b"", 422, ACL_ERROR_INVALID_PARAM, ("count", "Field required")),
    ("raw read, bad ptr", "/v1/memory/0xzz?count=4", b"", 422, ACL_ERROR_INVALID_PARAM, ("ptr",)),
    ("raw read, count -3", "/v1/memory/4096?count=-3", b"", 422, ACL_ERROR_INVALID_PARAM, ("greater than or equal",)),
    ("raw read, nowhere", "/v1/memory/4096?count=4", b"", 400, ACL_ERROR_RT_PARAM_INVALID, ("0x1000",)),
    ("raw host, nowhere", "/v1/host/4096?count=4", b"", 400, ACL_ERROR_RT_PARAM_INVALID, ("0x1000",)),
]  # fmt: skip


@pytest.mark.parametrize(("path", "body", "status", "code", "words"), [c[1:] for c in REST_CASES],
                         ids=[c[0] for c in REST_CASES])  # fmt: skip
async def test_a_bad_rest_call_gets_a_4xx_naming_the_problem(
    rest: tuple[httpx.AsyncClient, RestCaller], path: str, body: bytes, status: int, code: int, words: tuple[str, ...]
) -> None:
    client, caller = rest
    headers = {"X-Vnpu-Session": str(caller.session), "Content-Type": "application/json"}
    method = "GET" if path.startswith(("/v1/memory", "/v1/host")) else "POST"
    error = check_error(await client.request(method, path, content=body, headers=headers), status, code, *words)
    if path.startswith("/v1/call/"):
        assert error["api"] == path.removeprefix("/v1/call/")
    await still_works(caller)


DEEP = b"[" * 1500 + b"]" * 1500  # deeper than Python's recursion limit


@pytest.mark.parametrize("policy", [b'"ACL_MEM_MALLOC_HUGE_FIRST"', b"0"], ids=["enum named", "enum as a number"])
async def test_a_deeply_nested_body_is_a_422_whether_or_not_it_names_an_enum(
    rest: tuple[httpx.AsyncClient, RestCaller], policy: bytes
) -> None:
    """`enumargs.resolve` parsed a body that names an enum with `json.loads`, whose RecursionError became a 500."""
    client, caller = rest
    body = b'{"size": 8, "policy": ' + policy + b', "deep": ' + DEEP + b"}"
    headers = {"X-Vnpu-Session": str(caller.session), "Content-Type": "application/json"}
    check_error(await client.post(MALLOC, content=body, headers=headers), 422, ACL_ERROR_INVALID_PARAM)
    await still_works(caller)


@pytest.mark.parametrize(
    "thread",
    [b"1" * 5000 + b"-1", b"\xb2-1", b"7-\xb3", b"18446744073709551616-1"],
    ids=["5000 digits", "a Latin-1 digit", "a Latin-1 tid", "2**64"],
)
async def test_a_malformed_thread_header_is_a_400_naming_it(
    rest: tuple[httpx.AsyncClient, RestCaller], thread: bytes
) -> None:
    """`rest.thread_of` took `isdigit()` digits to `int()`: a pid of more than 4300 digits, or a Latin-1 superscript
    digit, raised ValueError, a 500 (even for aclInit)."""
    client, caller = rest
    headers = [(b"X-Vnpu-Session", str(caller.session).encode()), (b"X-Vnpu-Thread", thread)]
    for api, body in (("aclInit", {"configPath": None}), ("aclrtGetDevice", {})):
        r = await client.post(f"/v1/call/{api}", json=body, headers=headers)
        check_error(r, 400, ACL_ERROR_INVALID_PARAM, "X-Vnpu-Thread", "<pid>-<tid>")
    r = await client.post("/v1/call/aclrtGetDevice", json={}, headers={"X-Vnpu-Session": str(caller.session),
                                                                       "X-Vnpu-Thread": "12-34"})  # fmt: skip
    check_error(r, 400, 107002)  # a well-formed thread of its own: no current device yet
    await still_works(caller)


async def test_an_unknown_function_is_a_404_that_tells_nothing_else(rest: tuple[httpx.AsyncClient, RestCaller]) -> None:
    client, caller = rest
    for name in ("aclrtMallocc", "aclnnDoesNotExist", "../../etc/passwd", "x" * 10_000, "__init__", "release_all"):
        r = await client.post(f"/v1/call/{name}", json={"size": 1}, headers={"X-Vnpu-Session": str(caller.session)})
        if "/" in name:
            check_error(r, 404, ACL_ERROR_API_NOT_SUPPORT)  # no such route at all
            continue
        error = check_error(r, 404, ACL_ERROR_API_NOT_SUPPORT, "in vnpu's call table")
        message = f"no function named {name[:80]!r} in vnpu's call table"
        if name == "aclrtMallocc":  # near names are suggested, the nearest first
            assert error["message"].startswith(f"{message}: did you mean aclrtMalloc or ")
        elif name.startswith("aclnn"):  # perhaps an operator declared on the client only: the setting is named
            assert error["message"].startswith(f"{message}: the daemon does not know the operator {name}; ")
            assert "VNPU_OPERATORS=" in error["message"]
        else:  # no near name: where the names are
            assert error["message"] == f"{message} (the calls are listed on /docs)"
        assert error["api"] == name[:80] and len(r.content) < 400  # not the 10 KB name echoed back
    await still_works(caller)


async def test_a_request_no_route_takes_says_which_route_would(rest: tuple[httpx.AsyncClient, RestCaller]) -> None:
    client, caller = rest
    headers = {"X-Vnpu-Session": str(caller.session)}
    wrong_method = await client.get("/v1/call/aclrtMalloc", headers=headers)
    error = check_error(wrong_method, 405, ACL_ERROR_API_NOT_SUPPORT)
    assert error["message"] == "GET is not allowed on /v1/call/aclrtMalloc: use POST (the routes are on /docs)"
    assert wrong_method.headers["allow"] == "POST"
    no_call_prefix = await client.post("/v1/aclrtMalloc", json={"size": 64, "policy": 0}, headers=headers)
    error = check_error(no_call_prefix, 404, ACL_ERROR_API_NOT_SUPPORT)
    assert error["message"] == (
        "no route POST /v1/aclrtMalloc: an ACL call is POST /v1/call/aclrtMalloc (the routes are on /docs)"
    )
    error = check_error(await client.get("/v1/nothing/here", headers=headers), 404, ACL_ERROR_API_NOT_SUPPORT)
    assert error["message"] == (
        "no route GET /v1/nothing/here: the routes are on /docs, the calls at POST /v1/call/{name}"
    )
    # a route's own 404 keeps its message
    error = check_error(await client.get("/v1/models/1", headers=headers), 404, ACL_ERROR_RT_PARAM_INVALID)
    assert "no model 0x1" in error["message"]
    await still_works(caller)


async def test_a_body_over_max_body_is_a_413(rest: tuple[httpx.AsyncClient, RestCaller]) -> None:
    client, caller = rest
    headers = {"X-Vnpu-Session": str(caller.session)}
    host = (await caller("aclrtMallocHost", size=2 * MAX_BODY))["hostPtr"]
    big = b"\x07" * (MAX_BODY + 1)

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit is enforced while reading
        for _ in range(8):
            yield big[:1024]

    for path, content in (
        ("/v1/call/aclrtMalloc", b'{"size": 8, "policy": 0, "pad": "' + big + b'"}'),
        (f"/v1/host/{host}", big),
        (f"/v1/host/{host}", chunks()),
        ("/v1/sessions", big),
    ):
        method = "PUT" if path.startswith("/v1/host") else "POST"
        r = await client.request(method, path, content=content, headers=headers)
        check_error(r, 413, ACL_ERROR_INVALID_PARAM, "over the limit of 4096 bytes")
    got = await client.get(f"/v1/host/{host}", params={"count": 4}, headers=headers)
    assert got.content == b"\x00" * 4  # nothing of the refused bodies was written
    assert (await client.put(f"/v1/host/{host}", content=big[:MAX_BODY], headers=headers)).status_code == 204
    await still_works(caller)


async def test_a_pageable_copy_of_2_64_bytes_is_refused(rest: tuple[httpx.AsyncClient, RestCaller]) -> None:
    """`dispatch.invoke` turns `dst: null` into `bytearray(count)` before the device checks anything (not even
    count <= destMax or that `src` is valid): count 2**64-1 raises OverflowError -> 500 ACL_ERROR_INTERNAL_ERROR;
    a count of a few GiB (any destMax, any src) makes the daemon allocate and zero that much memory first."""
    client, caller = rest
    body = {"dst": None, "destMax": 1, "src": 4096, "count": 2**64 - 1, "kind": 2}
    headers = {"X-Vnpu-Session": str(caller.session)}
    r = await client.post("/v1/call/aclrtMemcpy", json=body, headers=headers)
    check_error(r, 400, ACL_ERROR_INVALID_PARAM, "destMax")


async def test_pinned_memory_of_2_64_bytes_is_refused(rest: tuple[httpx.AsyncClient, RestCaller]) -> None:
    """`HostMemory.malloc` catches OSError only; os.ftruncate(fd, 2**64-1) raises OverflowError, which becomes a
    500 ACL_ERROR_INTERNAL_ERROR instead of the 207001 that aclrtMalloc gives for the same size."""
    client, caller = rest
    r = await client.post(
        "/v1/call/aclrtMallocHost", json={"size": 2**64 - 1}, headers={"X-Vnpu-Session": str(caller.session)}
    )
    check_error(r, 400, ACL_ERROR_RT_MEMORY_ALLOCATION)


async def test_opening_a_session_refuses_unknown_fields_and_keeps_its_own(
    rest: tuple[httpx.AsyncClient, RestCaller],
) -> None:
    client, caller = rest
    registry = client._transport.app.state.registry  # type: ignore[attr-defined]
    before = len(registry.sessions)
    for body, words in (
        ({"contxt": "abc"}, "contxt: Extra inputs are not permitted (got 'abc')"),
        ({"context": 5}, "context: Input should be a valid string (got 5)"),
        ([1], "Input should be an object"),
    ):
        check_error(await client.post("/v1/sessions", json=body), 422, ACL_ERROR_INVALID_PARAM, words)
    assert len(registry.sessions) == before  # nothing was opened
    context = registry.sessions[str(caller.session)].context.id
    joined = await client.post("/v1/sessions", json={"context": context})
    assert joined.status_code == 200 and joined.json()["context"] == context
    assert (await client.post("/v1/sessions", json={"run": "nightly-1"})).status_code == 200
    assert (await caller("aclrtGetDevice"))["deviceId"] == 0  # the session goes on


# --- WebSocket ----------------------------------------------------------------------------------------------------


def envelope(ident: int, api: str, **args: Any) -> bytes:
    return bytes(msgpack.packb({"id": ident, "api": api, "args": args}, use_bin_type=True))


WS_CASES: list[tuple[str, bytes | str, str]] = [
    # (name, frame, words of the message); none of these has an id that can be read
    ("text frame", "hello", "binary msgpack"),
    ("not msgpack", b"\xc1\xc1", "not msgpack"),
    ("empty frame", b"", "not msgpack"),
    ("truncated", envelope(5, "aclrtGetDevice")[:-4], "not msgpack"),
    ("a batch of a non-envelope", msgpack.packb([1]), "must be a map, got int"),
    ("a batch in a batch", msgpack.packb([[{"id": 1, "api": "aclInit"}]]), "must be a map, got list"),
    ("a string", msgpack.packb("aclInit"), "must be a map"),
    ("an ext type", msgpack.packb(msgpack.ExtType(3, b"xy")), "must be a map"),
    ("id is a string", msgpack.packb({"id": "7", "api": "aclInit"}), "id must be an integer"),
    ("id is a bool", msgpack.packb({"id": True, "api": "aclInit"}), "id must be an integer"),
    ("id is missing", msgpack.packb({"api": "aclInit"}), "id must be an integer"),
    ("int keys", msgpack.packb({1: 2}), "unknown envelope field"),
]


async def ws_reply(c: WsCaller, timeout: float = 5) -> dict[str, Any]:
    """The next envelope that came without a request id."""
    for _ in range(int(timeout / 0.01)):
        if c.orphans:
            return c.orphans.pop(0)
        await asyncio.sleep(0.01)
    raise AssertionError("no envelope came back")


async def test_bad_frames_get_error_envelopes_and_the_connection_goes_on(live: LiveServer) -> None:
    c, other = await WsCaller.connect(live.ws_url), await WsCaller.connect(live.ws_url)
    try:
        for conn in (c, other):
            await conn("aclInit", configPath=None)
            await conn("aclrtSetDevice", deviceId=0)
        for name, frame, words in WS_CASES:
            await c.ws.send(frame)
            reply = await ws_reply(c)
            assert set(reply) == {"id", "error"} and reply["id"] is None, (name, reply)
            assert set(reply["error"]) == ERROR_KEYS and reply["error"]["code"] == ACL_ERROR_INVALID_PARAM
            assert words in reply["error"]["message"], (name, reply)
            assert (await c("aclrtGetDevice"))["deviceId"] == 0, name  # the connection goes on
        # errors of well-formed envelopes name their id and the call
        for api, args, code, words in (
            ("aclNoSuchCall", {}, ACL_ERROR_API_NOT_SUPPORT, "no function named 'aclNoSuchCall'"),
            ("aclrtMalloc", {"size": "8", "policy": 0}, ACL_ERROR_INVALID_PARAM, "size: Input should be a valid int"),
            ("aclrtMalloc", {"size": 8, "policy": 0, "x": 1}, ACL_ERROR_INVALID_PARAM, "x: Extra inputs"),
            ("aclrtMalloc", {"size": 2**64 - 1, "policy": 0}, ACL_ERROR_RT_MEMORY_ALLOCATION, "out of memory"),
            ("aclrtMalloc", {"size": b"8", "policy": 0}, ACL_ERROR_INVALID_PARAM, "size"),
            ("aclrtMalloc", {"size": -(2**63), "policy": 0}, ACL_ERROR_INVALID_PARAM, "greater than or equal to 0"),
            ("aclmdlRICaptureThreadExchangeMode", {"mode": 7}, ACL_ERROR_RT_PARAM_INVALID, "mode 7"),
        ):
            with pytest.raises(Exception) as info:
                await c(api, **args)
            error = info.value
            assert (getattr(error, "code", None), getattr(error, "api", None)) == (code, api), error
            assert words in str(getattr(error, "message", "")), error
            assert (await c("aclrtGetDevice"))["deviceId"] == 0
        await c.ws.send(msgpack.packb({"id": 900, "api": "aclrtSetDevice", "args": {1: 0}}))  # a key not a string
        reply = await ws_reply(c)
        assert reply["id"] == 900 and reply["error"]["api"] == "aclrtSetDevice"
        assert "deviceId: Field required" in reply["error"]["message"]
        assert c.orphans == [] and other.orphans == []
        assert (await other("aclrtGetDeviceCount"))["count"] == 2  # never disturbed
    finally:
        await c.close()
        await other.close()


ID_CASES: list[tuple[str, dict[Any, Any]]] = [
    ("api not a string", {"id": 41, "api": 5, "args": {}}),
    ("args not a map", {"id": 42, "api": "aclrtGetDevice", "args": [1, 2]}),
    ("reply not a bool", {"id": 43, "api": "aclrtGetDevice", "args": {}, "reply": "yes"}),
    ("thread a map", {"id": 44, "api": "aclrtGetDevice", "args": {}, "thread": {"a": 1}}),
    ("unknown field", {"id": 45, "api": "aclrtGetDevice", "args": {}, "priority": 1}),
]


@pytest.mark.parametrize("message", [c[1] for c in ID_CASES], ids=[c[0] for c in ID_CASES])
async def test_an_envelope_error_names_the_id_it_could_read(live: LiveServer, message: dict[Any, Any]) -> None:
    """`Connection.receive_forever` sends `error_envelope(None, error)` for every AclError of `parse_request`,
    so a client cannot tell which of its requests was malformed (and a waiting caller never gets its answer)
    although the envelope had a valid integer `id`."""
    c = await WsCaller.connect(live.ws_url)
    try:
        await c.ws.send(msgpack.packb(message, use_bin_type=True))
        reply = await ws_reply(c)
        assert reply["error"]["code"] == ACL_ERROR_INVALID_PARAM
        assert reply["id"] == message["id"], reply
    finally:
        await c.close()


# --- random msgpack at one connection -----------------------------------------------------------------------------

SAFE_APIS = [  # calls that never block a thread and never allocate host memory of the size they are given
    "aclInit", "aclFinalize", "aclrtSetDevice", "aclrtGetDevice", "aclrtGetDeviceCount", "aclrtMalloc", "aclrtFree",
    "aclrtGetMemInfo", "aclrtCreateStream", "aclrtCreateEvent", "aclrtQueryEvent", "aclrtDestroyEvent",
    "aclrtRecordEvent", "aclmdlRICaptureThreadExchangeMode", "vnpuHostInfo", "aclNoSuchCall",
]  # fmt: skip
ARG_NAMES = ["size", "policy", "deviceId", "stream", "event", "attr", "mode", "hostPtr", "configPath", "x"]

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=12)
    | st.binary(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6) | st.integers(-3, 3), inner),
    max_leaves=8,
)  # fmt: skip
envelopes = st.fixed_dictionaries(
    {
        "id": st.integers(0, 10_000) | values,
        "api": st.sampled_from(SAFE_APIS) | values,
        "args": st.dictionaries(st.sampled_from(ARG_NAMES), st.integers(-2, 2**64 - 1) | values, max_size=3) | values,
    },
    optional={"thread": st.sampled_from(["main", 1, [7, 8]]) | values, "reply": st.booleans() | values},
)
frames = st.one_of(
    values.map(lambda v: bytes(msgpack.packb(v, use_bin_type=True))),
    envelopes.map(lambda v: bytes(msgpack.packb(v, use_bin_type=True))),
    st.binary(max_size=40),
)


class ThreadedServer:
    """The daemon on a free port, served by uvicorn in a thread of its own (for a synchronous hypothesis test)."""

    def __init__(self) -> None:
        self.port = free_port()
        config = uvicorn.Config(create_app(make_settings()), host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="vnpu-test-server", daemon=True)

    def __enter__(self) -> ThreadedServer:
        self.thread.start()
        for _ in range(1000):
            if self.server.started:
                return self
            self.thread.join(0.01)
        raise AssertionError("uvicorn did not start within 10 s")

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        assert not self.thread.is_alive()


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[tuple[ClientConnection, ClientConnection]]:
    with ThreadedServer() as server:
        url = f"ws://127.0.0.1:{server.port}/v1/ws"
        with connect(url, open_timeout=10) as target, connect(url, open_timeout=10) as bystander:
            for conn in (target, bystander):
                conn.recv(timeout=5)  # hello
                conn.send(envelope(-1, "aclInit"))
                assert msgpack.unpackb(conn.recv(timeout=5)) == {"id": -1, "result": {}}
            yield target, bystander


def well_formed(reply: object) -> bool:
    if not isinstance(reply, dict):
        return False
    if set(reply) == {"id", "result"}:
        return isinstance(reply["id"], int) and isinstance(reply["result"], dict)
    if set(reply) - {"thread"} != {"id", "error"} or not (reply["id"] is None or isinstance(reply["id"], int)):
        return False  # an error may echo the request's thread
    error = reply["error"]
    return (
        isinstance(error, dict)
        and set(error) == ERROR_KEYS
        and isinstance(error["code"], int)
        and all(isinstance(error[k], str) for k in ("name", "message", "api"))
    )


SENTINELS = iter(range(-(10**9), -(10**9) + 10_000))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frame=frames)
def test_random_msgpack_gets_well_formed_envelopes_and_the_connection_survives(
    fuzzed: tuple[ClientConnection, ClientConnection], frame: bytes
) -> None:
    target, bystander = fuzzed
    target.send(frame)
    sentinel = next(SENTINELS)
    target.send(envelope(sentinel, "aclrtGetDeviceCount"))  # on thread "main", after the frame
    for _ in range(50):
        reply = msgpack.unpackb(target.recv(timeout=5), strict_map_key=False)
        assert well_formed(reply), (frame, reply)
        assert reply.get("error", {}).get("code") != 500000, (frame, reply)  # no vnpu fault
        if reply["id"] == sentinel:
            break
    else:
        pytest.fail("the connection stopped answering")
    bystander.send(envelope(sentinel, "aclrtGetDeviceCount"))
    assert msgpack.unpackb(bystander.recv(timeout=5)) == {"id": sentinel, "result": {"count": 2}}
