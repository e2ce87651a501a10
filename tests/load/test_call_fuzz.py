"""Every call of the call table, over REST and over the WebSocket, with random and malformed arguments, against a real
daemon (issue 39): never a 5xx or a vnpu fault (500000 "vnpu internal error"), never a crash, never a hang, and
after each call the device works on -- for the fuzzed session, and for a witness in a context of its own -- and
once the fuzzed sessions are gone the device's memory is whole again.

Arguments are drawn from each request model's annotations: values of the right type (interesting integers within
the field's range, the session's live handles and pointers, NULLs, bytes, text, structs, lists) or malformed ones
(a wrong type, past the range, deep nesting, a missing or an unknown field). Bounded: VARIANTS requests per call
and transport, every call waited for at most CALL_TIMEOUT_S, the whole test within DEADLINE_S.
"""

from __future__ import annotations

import base64
import inspect
import itertools
import json
import random
import time
import types
from collections.abc import Iterator
from typing import Annotated, Any, Union, get_args, get_origin

import httpx
import msgpack
import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from websockets.sync.client import ClientConnection, connect

from proto.callenums import ENUM_ARGS
from proto.calltable import CALLS, Call
from proto.errors import ACL_ERROR_INTERNAL_ERROR
from tests.load.conftest import Daemon, device_free, eventually

SEED = 39
VARIANTS = 6  # requests per call and transport: plausible, at the edges of their types, malformed
CALL_TIMEOUT_S = 3.0  # what a call may take before it counts as waiting
ANSWER_TIMEOUT_S = 10.0  # what a call that does not wait, and every check, may take
DEADLINE_S = 420.0
ERROR_KEYS = {"code", "name", "message", "api"}
# calls that may wait for work their random arguments made wait forever (an event never recorded, a value never
# written, an empty queue with timeout -1): a wait is their answer, not a hang; the session is checked to go on
MAY_WAIT = {
    "aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout", "aclrtSynchronizeDevice",
    "aclrtSynchronizeDeviceWithTimeout", "aclrtSynchronizeEvent", "aclrtSynchronizeEventWithTimeout",
    "aclrtDestroyStream", "aclrtDestroyStreamForce", "aclrtDestroyContext", "aclrtResetDevice",
    "aclrtResetDeviceForce", "aclFinalize", "aclmdlRIExecute", "aclmdlRIDestroy", "aclmdlRIBindStream",
    "aclmdlRIUnbindStream", "aclmdlRIAbort", "acltdtSendTensor", "acltdtReceiveTensor", "acltdtEnqueueData",
    "acltdtDequeueData", "aclrtProcessReport", "aclrtMemcpy", "aclrtMemset", "aclrtLaunchCallback",
    "aclrtLaunchHostFunc", "aclrtSetDevice", "aclmdlRICaptureTaskUpdateEnd", "vnpuTakeReports", "vnpuTakeHostFuncs",
}  # fmt: skip
pytestmark = [pytest.mark.slow, pytest.mark.timeout(DEADLINE_S + 120)]
SETUP = [("aclInit", {"configPath": None}), ("aclrtSetDevice", {"deviceId": 0})]


class Live:
    """What a fuzzed session holds, for the draws to name: live streams, events, pointers, host buffers."""

    def __init__(self) -> None:
        self.handles: list[int] = []

    def values(self) -> list[int]:
        return self.handles + [h + 8 for h in self.handles[:2]]


# --- drawing arguments from the request models -------------------------------------------------------------------


def _bounds(metadata: list[Any]) -> tuple[int, int]:
    lo, hi = -(1 << 63), (1 << 64) - 1
    for item in metadata:
        for inner in getattr(item, "metadata", [item]):
            lo = getattr(inner, "ge", lo)
            hi = getattr(inner, "le", hi)
    return lo, hi


def draw(tp: Any, metadata: list[Any], rng: random.Random, live: Live, edge: bool, depth: int = 0) -> Any:
    """A value of type `tp` (the annotation of a request field), within its bounds: a plausible one (small numbers,
    the session's live handles and pointers, rarely NULL) or, with `edge`, one anywhere in the field's range."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return draw(args[0], metadata + list(args[1:]), rng, live, edge, depth)
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) < len(args) and rng.random() < (0.5 if edge else 0.1):
            return None
        return draw(rng.choice(options), metadata, rng, live, edge, depth)
    if tp is type(None):
        return None
    if origin is list:
        count = rng.choice((0, 1, 2, 3) if edge else (1, 1, 2))
        return [draw(args[0], [], rng, live, edge, depth + 1) for _ in range(count)]
    if origin is dict or tp is dict:
        return {} if depth > 1 else {"op": rng.choice(["Add", "Nope", ""]), "args": {}, "workspace_size": 0}
    if tp is bool:
        return rng.random() < 0.5
    if tp is int:
        lo, hi = _bounds(metadata)
        plausible = [0, 1, 2, 64, *live.values(), *live.values()]
        edges = [-1, 3, 7, 4096, lo, hi, hi - 1, rng.randint(lo, hi)]
        return rng.choice([c for c in (plausible + edges if edge else plausible) if lo <= c <= hi] or [lo])
    if tp is float:
        return rng.choice([0.0, 1.5, -2.0, 1e30])
    if tp is bytes:
        return rng.randbytes(rng.choice((0, 1, 8, 64) if edge else (8, 64)))
    if tp is str:
        return rng.choice(["", "x", "vnpu-fuzz", "é" * 10, "a" * 300, "0x10"] if edge else ["vnpu-fuzz", "x"])
    if inspect.isclass(tp) and issubclass(tp, BaseModel):
        fields = tp.model_fields.items()
        return {name: draw(f.annotation, list(f.metadata), rng, live, edge, depth + 1) for name, f in fields}
    return None


DEEP = "<deep>"  # nested 1500 deep in a REST body (with an enum argument named: the RecursionError of probe 3), 60 in
# a WebSocket frame (its decoder's own tests go deeper)


def malformed(rng: random.Random) -> Any:
    return rng.choice(["text", 3.5, [1, [2]], {"a": {"b": 1}}, 1 << 70, -(1 << 70), True, DEEP, b"\xff" * 9, None])


def nested(depth: int) -> Any:
    deep: Any = 0
    for _ in range(depth):
        deep = [deep]
    return deep


def requests_of(call: Call, rng: random.Random, live: Live) -> Iterator[tuple[str, dict[str, Any]]]:
    """VARIANTS argument mappings of `call`, each with what it is: plausible, at the edges, then malformed."""
    fields: dict[str, FieldInfo] = call.request.model_fields
    for n in range(VARIANTS):
        edge = n >= VARIANTS // 3
        args = {name: draw(f.annotation, list(f.metadata), rng, live, edge) for name, f in fields.items()}
        if n < VARIANTS // 2 or not fields:
            yield ("edges" if edge else "plausible"), args
            continue
        how = rng.choice(["wrong", "wrong", "missing", "unknown"])
        name = rng.choice(list(fields))
        if how == "wrong":
            args[name] = malformed(rng)
        elif how == "missing":
            del args[name]
        else:
            args["notAnArgument"] = 1
        yield f"{how} {name}", args


# --- the two transports ------------------------------------------------------------------------------------------


def _json(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    return value


def _msgpack(value: Any) -> Any:
    """What msgpack can carry: ints past 64 bits become floats."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < 1 << 64:
        return float(value)
    if value == DEEP:
        return nested(60)
    if isinstance(value, dict):
        return {k: _msgpack(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_msgpack(v) for v in value]
    return value


class Rest:
    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=CALL_TIMEOUT_S)
        self.session = self.http.post("/v1/sessions").json()["session"]

    def call(self, api: str, args: dict[str, Any]) -> tuple[str, Any]:
        """("result", mapping) | ("error", code) | ("waiting", None)."""
        headers = {"X-Vnpu-Session": self.session, "X-Vnpu-Thread": "7-1", "Content-Type": "application/json"}
        body = _json(args)
        if DEEP in body.values():
            names = {arg: next(iter(enum)).name for arg, enum in ENUM_ARGS.get(api, {}).items()}
            body |= {arg: name for arg, name in names.items() if arg in body and body[arg] != DEEP}
        text = json.dumps(body).replace(f'"{DEEP}"', "[" * 1500 + "]" * 1500)
        try:
            r = self.http.post(f"/v1/call/{api}", content=text, headers=headers)
        except httpx.TimeoutException:
            return "waiting", None
        assert r.status_code < 500, f"REST {api}: {r.status_code} {r.text[:400]}"
        body = r.json()
        if r.status_code >= 400:
            assert set(body) == {"error"} and set(body["error"]) == ERROR_KEYS, body
            return "error", body["error"]
        return "result", body

    def close(self) -> None:
        self.http.delete(f"/v1/sessions/{self.session}")
        self.http.close()


class Ws:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        msgpack.unpackb(self.ws.recv(timeout=ANSWER_TIMEOUT_S))
        self.ids = itertools.count(1)
        self.thread = 1  # a call that waits keeps its thread: the next ones use a fresh one

    def call(self, api: str, args: dict[str, Any]) -> tuple[str, Any]:
        ident = next(self.ids)
        envelope = {"id": ident, "api": api, "args": _msgpack(args), "thread": [7, self.thread]}
        self.ws.send(msgpack.packb(envelope, use_bin_type=True))
        deadline = time.monotonic() + CALL_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = msgpack.unpackb(self.ws.recv(timeout=left), strict_map_key=False)
            except TimeoutError:
                break
            if message.get("id") != ident:
                continue  # a late answer of a call that waited, or a pipelined error
            if "error" in message:
                return "error", message["error"]
            return "result", message["result"]
        self.thread += 1
        return "waiting", None

    def close(self) -> None:
        pass  # the connection is its `with` block's


def no_fault(transport: str, api: str, what: str, outcome: tuple[str, Any]) -> None:
    kind, value = outcome
    if kind == "error":
        fault = value["code"] == ACL_ERROR_INTERNAL_ERROR and "vnpu internal error" in value["message"]
        assert not fault, f"{transport} {api} ({what}): a vnpu fault: {value['message'][:400]}"
    if kind == "waiting":
        assert api in MAY_WAIT, f"{transport} {api} ({what}): no answer within {CALL_TIMEOUT_S} s"


def ready(client: Rest | Ws, live: Live) -> None:
    """aclInit and device 0 (again: the fuzz may have finalized or reset), and fresh live objects."""
    for api, args in SETUP:
        kind, value = client.call(api, args)
        assert kind == "result", (api, value)
    live.handles = []
    for api, args, out in (
        ("aclrtCreateStream", {}, "stream"),
        ("aclrtCreateEventWithFlag", {"flag": 1}, "event"),
        ("aclrtMalloc", {"size": 4096, "policy": 0}, "devPtr"),
        ("aclrtMallocHost", {"size": 4096}, "hostPtr"),
    ):
        kind, value = client.call(api, args)
        if kind == "result":
            live.handles.append(value[out])


def witness(url: str) -> None:
    """A program of its own context: device memory written, read back and freed, within the time bound."""
    with httpx.Client(base_url=url, timeout=ANSWER_TIMEOUT_S) as http:
        session = http.post("/v1/sessions").json()["session"]
        headers = {"X-Vnpu-Session": session}

        def call(api: str, **args: Any) -> dict[str, Any]:
            r = http.post(f"/v1/call/{api}", json=_json(args), headers=headers)
            assert r.status_code == 200, f"the witness's {api}: {r.text[:400]}"
            result: dict[str, Any] = r.json()
            return result

        call("aclInit", configPath=None)
        call("aclrtSetDevice", deviceId=0)
        ptr = call("aclrtMalloc", size=64, policy=0)["devPtr"]
        call("aclrtMemcpy", dst=ptr, destMax=64, src=b"w" * 64, count=64, kind=1)
        got = call("aclrtMemcpy", dst=None, destMax=64, src=ptr, count=64, kind=2)
        assert base64.b64decode(got["data"]) == b"w" * 64
        call("aclrtFree", devPtr=ptr)
        http.delete(f"/v1/sessions/{session}")


def test_every_call_with_random_and_malformed_arguments(idle_daemon: Daemon) -> None:
    daemon = idle_daemon
    free_before = device_free(daemon.url)
    with connect(daemon.url.replace("http", "ws") + "/v1/ws", max_size=None) as ws:
        clients: dict[str, Rest | Ws] = {"REST": Rest(daemon.url), "WebSocket": Ws(ws)}
        answered = fuzz(daemon, clients, time.monotonic())
    assert all(n > len(CALLS) * VARIANTS // 2 for n in answered.values()), answered
    daemon.check_alive()
    eventually(lambda: device_free(daemon.url) == free_before, 30, "the fuzzed contexts give every byte back")


def fuzz(daemon: Daemon, clients: dict[str, Rest | Ws], started: float) -> dict[str, int]:
    """Every call through every client; how many answered (did not wait), by client."""
    rng = random.Random(SEED)
    lives = {name: Live() for name in clients}
    answered = {name: 0 for name in clients}
    try:
        for name, client in clients.items():
            ready(client, lives[name])
        for api in sorted(CALLS):
            assert time.monotonic() - started < DEADLINE_S, f"past {DEADLINE_S} s, at {api}"
            for transport, client in clients.items():
                for what, args in requests_of(CALLS[api], rng, lives[transport]):
                    outcome = client.call(api, args)
                    no_fault(transport, api, what, outcome)
                    answered[transport] += outcome[0] != "waiting"
                daemon.check_alive()
                kind, _ = client.call("aclrtGetDevice", {})  # the session goes on (0, or 107002 after a reset)
                assert kind in ("result", "error"), f"{transport}: no answer after {api}"
                ready(client, lives[transport])
            witness(daemon.url)
    finally:
        for client in clients.values():
            client.close()
    return answered
