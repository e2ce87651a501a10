"""What an ended program did stays viewable by its tenant: its trace events while the ring holds them, its models
(view, debug print, graph) for the newest VNPU_KEEP_ENDED ended contexts; another tenant sees none of it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from fastapi import FastAPI

import proto.aclnn as nn
from proto.constants import aclDataType
from proto.errors import ACL_ERROR_INVALID_PARAM
from server.app import create_app
from tests.server.api.callers import RestCaller
from tests.server.api.conftest import test_settings as make_settings
from tests.server.api.test_calls import Remote
from tests.server.npu.devicekit import tensor_at

F32 = aclDataType.ACL_FLOAT
A, B = {"Authorization": "Bearer token-of-alice"}, {"Authorization": "Bearer token-of-bob"}


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice token-of-alice\nbob token-of-bob\n")
    app: FastAPI = create_app(make_settings(tokens_file=str(tokens), keep_ended=1))
    transport = httpx.ASGITransport(app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://vnpu") as c:
        yield c


async def program(client: httpx.AsyncClient, headers: dict[str, str], replays: int) -> dict[str, Any]:
    """A program that captures y = 3x, replays it `replays` times and ends; what it saw of its model before it ended."""
    opened = (await client.post("/v1/sessions", headers=headers)).json()
    c = RestCaller(httpx.AsyncClient(transport=client._transport, base_url="http://vnpu", headers=headers))
    c.session = opened["session"]
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    r = Remote(c)
    data = np.random.default_rng(replays).standard_normal(8).astype(np.float32)
    x, y = await r.put(data), await r.put(np.zeros(8, np.float32))
    stream = (await c("aclrtCreateStream"))["stream"]
    await c("aclmdlRICaptureBegin", stream=stream, mode=0)
    await r.launch("Muls", stream, tensor_at(x, (8,), F32), nn.aclCreateScalar(3.0, F32), tensor_at(y, (8,), F32))
    model = (await c("aclmdlRICaptureEnd", stream=stream))["modelRI"]
    for _ in range(replays):
        await c("aclmdlRIExecuteAsync", modelRI=model, stream=stream)
    await c("aclrtSynchronizeStream", stream=stream)
    np.testing.assert_allclose(await r.get(y, (8,)), data.astype(np.float64) * 3, rtol=1e-6)
    view = (await client.get(f"/v1/models/{model}", headers=headers)).json()
    assert (await client.delete(f"/v1/sessions/{opened['session']}", headers=headers)).status_code == 204
    for _ in range(200):  # reclaimed after the grace (0.05 s)
        contexts = (await client.get("/v1/devices/0", headers=headers)).json()["contexts"]
        if all(ctx["id"] != opened["context"] for ctx in contexts):
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the context was not reclaimed")
    return {"context": opened["context"], "model": model, "view": view}


def kernels(trace: dict[str, Any], context: str) -> list[dict[str, Any]]:
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and e["args"].get("Context") == context]


async def test_an_ended_programs_trace_and_model_stay_for_its_tenant(client: httpx.AsyncClient) -> None:
    first = await program(client, A, replays=3)
    trace = (await client.get("/v1/trace", params={"since": 0}, headers=A)).json()
    mine = kernels(trace, first["context"])
    assert [e["cat"] for e in mine if e["cat"] in ("kernel", "model")] == ["kernel", "model"] * 3  # 3 replays
    assert {"id": first["context"], "ended": True, "events": len(mine)} in trace["contexts"]
    view = (await client.get(f"/v1/models/{first['model']}", headers=A)).json()
    assert view["ended"] is not None and first["view"]["ended"] is None
    assert view["context"] == first["context"] and view["executions"] == 3
    assert view["debug"] == first["view"]["debug"] and "Muls" in view["debug"]
    svg = await client.get(f"/v1/models/{first['model']}/graph", headers=A)
    assert svg.status_code == 200 and "Muls" in svg.text
    # bob sees none of it
    theirs = (await client.get("/v1/trace", params={"since": 0}, headers=B)).json()
    assert not [e for e in theirs["traceEvents"] if e["ph"] == "X"] and theirs["contexts"] == []
    assert (await client.get(f"/v1/models/{first['model']}", headers=B)).status_code == 404
    assert (await client.get(f"/v1/models/{first['model']}/graph", headers=B)).status_code == 404
    # a second ended program: with keep_ended=1 the first's model goes, its trace events stay (the ring holds them)
    second = await program(client, A, replays=2)
    assert (await client.get(f"/v1/models/{first['model']}", headers=A)).status_code == 404
    assert (await client.get(f"/v1/models/{second['model']}", headers=A)).json()["executions"] == 2
    trace = (await client.get("/v1/trace", params={"since": 0}, headers=A)).json()
    assert len(kernels(trace, first["context"])) == len(mine) and kernels(trace, second["context"])
    only = (await client.get("/v1/trace", params={"since": 0, "context": second["context"]}, headers=A)).json()
    assert [c["id"] for c in only["contexts"]] == [second["context"]]
    assert all(e["args"]["Context"] == second["context"] for e in only["traceEvents"] if e["ph"] == "X")


async def test_a_run_label_picks_its_contexts_out_of_the_trace(client: httpx.AsyncClient) -> None:
    labelled = (await client.post("/v1/sessions", json={"run": "trace-abc.1"}, headers=A)).json()
    plain = (await client.post("/v1/sessions", headers=A)).json()
    for opened in (labelled, plain):
        c = RestCaller(httpx.AsyncClient(transport=client._transport, base_url="http://vnpu", headers=A))
        c.session = opened["session"]
        await c("aclInit", configPath=None)
        await c("aclrtSetDevice", deviceId=0)
        ptr = (await c("aclrtMalloc", size=64, policy=0))["devPtr"]
        await c("aclrtMemsetAsync", devPtr=ptr, maxCount=64, value=1, count=64, stream=None)
        await c("aclrtSynchronizeStream", stream=None)
    trace = (await client.get("/v1/trace", params={"since": 0, "run": "trace-abc.1"}, headers=A)).json()
    assert [c["id"] for c in trace["contexts"]] == [labelled["context"]]
    assert (await client.get("/v1/trace", params={"since": 0, "run": "trace-abc.1"}, headers=B)).json()[
        "contexts"
    ] == []
    for bad in ("", "has space", "x" * 65, 5):
        refused = await client.post("/v1/sessions", json={"run": bad}, headers=A)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == ACL_ERROR_INVALID_PARAM
        assert "is not a label" in refused.json()["error"]["message"]
