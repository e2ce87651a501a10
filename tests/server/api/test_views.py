"""The read-only views for people: /healthz, the devices (memory, resource counts), one device's streams with their
queues and what they run, a model with its debug dump and task groups, and the OpenAPI description of every call."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import numpy as np

import proto.aclnn as nn
from proto.calltable import CALLS
from proto.constants import ACL_EVENT_SYNC, aclDataType
from tests.server.api.callers import RestCaller
from tests.server.npu.devicekit import tensor_at

MiB = 1 << 20
F32 = aclDataType.ACL_FLOAT


async def ready(http: httpx.AsyncClient) -> RestCaller:
    c = RestCaller(http)
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    return c


async def devices(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    r = await http.get("/v1/devices")
    assert r.status_code == 200
    listed: list[dict[str, Any]] = r.json()
    return listed


async def test_healthz(http: httpx.AsyncClient) -> None:
    r = await http.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok", "devices": 2}


async def test_devices_show_memory_and_resources_as_they_change(http: httpx.AsyncClient) -> None:
    before = await devices(http)
    assert [d["id"] for d in before] == [0, 1]
    assert before[0]["memory"] == {"total": 64 * MiB, "used": 0, "free": 64 * MiB}
    assert before[0]["streams"] == {"used": 0, "max": 1984}
    c = await ready(http)
    ptr = (await c("aclrtMalloc", size=MiB, policy=0))["devPtr"]
    stream = (await c("aclrtCreateStream"))["stream"]
    await c("aclrtCreateEvent")
    after = await devices(http)
    memory = after[0]["memory"]
    assert MiB <= memory["used"] < MiB + 4096 and memory["free"] == 64 * MiB - memory["used"]
    assert after[0]["streams"]["used"] == 2  # the default stream and one more
    assert after[0]["events"]["used"] == 1
    assert after[1] == before[1]  # the other device did not move
    assert (await c("aclrtGetMemInfo", attr=0))["free"] == memory["free"]  # the view and the call agree
    await c("aclrtFree", devPtr=ptr)
    await c("aclrtDestroyStream", stream=stream)
    again = await devices(http)
    assert again[0]["memory"]["used"] == 0 and again[0]["streams"]["used"] == 1


async def test_a_device_shows_each_stream_queue_and_what_it_runs(http: httpx.AsyncClient) -> None:
    c = await ready(http)
    stream = (await c("aclrtCreateStream"))["stream"]
    event = (await c("aclrtCreateEventWithFlag", flag=ACL_EVENT_SYNC))["event"]
    ptr = (await c("aclrtMalloc", size=1024, policy=0))["devPtr"]
    await c("aclrtStreamWaitEvent", stream=stream, event=event)
    for value in range(3):
        await c("aclrtMemsetAsync", devPtr=ptr, maxCount=256, value=value, count=256, stream=stream)
    await asyncio.sleep(0.05)  # the stream's worker takes up the wait
    view = (await http.get("/v1/devices/0")).json()
    assert view["id"] == 0 and view["memory"]["used"] >= 256
    (context,) = view["contexts"]
    assert context["sessions"] == 1
    assert context["memory"] == 1024 and 0 <= context["age"] < 60  # what it holds (device + pinned), since when
    streams = {s["handle"]: s for s in context["streams"]}
    blocked, default = streams[stream], next(s for s in context["streams"] if s["default"])
    assert blocked["queued"] == 4 and blocked["capturing"] is False and blocked["default"] is False
    assert blocked["running"] == f"aclrtStreamWaitEvent on event {event:#x} (aclrtCreateEventWithFlag, flags 0x1)"
    assert default["queued"] == 0 and default["running"] is None
    assert context["events"] == [{"handle": event, "api": "aclrtCreateEventWithFlag", "flags": ACL_EVENT_SYNC,
                                  "flag": False}]  # fmt: skip
    await c("aclrtRecordEvent", event=event, stream=0)
    await c("aclrtSynchronizeStream", stream=stream)
    view = (await http.get("/v1/devices/0")).json()
    (released,) = [s for s in view["contexts"][0]["streams"] if s["handle"] == stream]
    assert released["queued"] == 0 and released["running"] is None
    assert view["contexts"][0]["events"][0]["flag"] is True
    nothing_there = {"id": context["id"], "sessions": 1, "memory": 1024, "streams": [], "events": [], "models": []}
    (other,) = (await http.get("/v1/devices/1")).json()["contexts"]
    assert other.pop("age") >= context["age"] and other == nothing_there  # the context's own figures
    missing = await http.get("/v1/devices/2")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == 107001


async def test_a_model_shows_its_debug_dump_and_task_groups(http: httpx.AsyncClient) -> None:
    c = await ready(http)
    stream = (await c("aclrtCreateStream"))["stream"]
    x = np.random.default_rng(3).standard_normal(16).astype(np.float32)
    ptr = (await c("aclrtMalloc", size=128, policy=0))["devPtr"]
    await c("aclrtMemcpy", dst=ptr, destMax=64, src=x.tobytes(), count=64, kind=1)
    xt = tensor_at(ptr, (16,), F32)
    await c("aclmdlRICaptureBegin", stream=stream, mode=0)
    capturing = (await http.get("/v1/devices/0")).json()["contexts"][0]
    assert {s["handle"]: s["capturing"] for s in capturing["streams"]}[stream] is True
    await c("aclrtMemsetAsync", devPtr=ptr + 64, maxCount=64, value=0x11, count=64, stream=stream)
    await c("aclmdlRICaptureTaskGrpBegin", stream=stream)
    ws, ex = nn.aclnnAddsGetWorkspaceSize(xt, nn.aclCreateScalar(2.0, F32), nn.aclCreateScalar(1.0, F32), xt)
    await c("aclnnAdds", workspace=0, workspaceSize=ws, executor=ex.kernel.to_wire(), stream=stream)
    group = (await c("aclmdlRICaptureTaskGrpEnd", stream=stream))["handle"]
    model = (await c("aclmdlRICaptureEnd", stream=stream))["modelRI"]
    for _ in range(2):
        await c("aclmdlRIExecuteAsync", modelRI=model, stream=stream)
    await c("aclrtSynchronizeStream", stream=stream)
    got = (await c("aclrtMemcpy", dst=None, destMax=128, src=ptr, count=128, kind=2))["data"]
    np.testing.assert_allclose(np.frombuffer(got[:64], np.float32), x.astype(np.float64) + 4.0, rtol=1e-6)
    assert got[64:] == b"\x11" * 64

    r = await http.get(f"/v1/models/{model}")
    assert r.status_code == 200
    view = r.json()
    assert (view["handle"], view["device"], view["state"], view["executions"]) == (model, 0, "ready", 2)
    assert view["groups"] == [{"handle": group, "kernels": ["aclnnAdds kernel Adds"], "updates": 0}]
    assert view["debug"] == (await c("aclmdlRIDebugPrint", modelRI=model))["text"]
    lines = view["debug"].splitlines()
    ident = (await c("aclmdlRIGetId", modelRI=model))["modelRIId"]
    assert lines[0] == f"model {model:#x} (id {ident}, capture): ready, 1 stream(s), 2 execution(s)"
    assert lines[1] == f"  stream #0 (origin), captured from stream {stream:#x}:"
    assert any(f"aclrtMemsetAsync of 64 bytes at {ptr + 64:#x} to 0x11" in line for line in lines)
    assert any("[0] aclnnAdds kernel Adds" in line for line in lines)
    listed = (await http.get("/v1/devices/0")).json()["contexts"][0]["models"]
    assert listed == [{"handle": model, "name": "", "id": ident, "kind": "capture", "state": "ready", "executions": 2}]
    await c("aclmdlRIDestroy", modelRI=model)
    gone = await http.get(f"/v1/models/{model}")
    assert gone.status_code == 404 and gone.json()["error"]["message"] == f"no model {model:#x} in your contexts"


async def test_openapi_lists_every_call_and_docs_answer(http: httpx.AsyncClient) -> None:
    schema = (await http.get("/openapi.json")).json()
    paths = schema["paths"]
    for name, call in CALLS.items():
        operation = paths[f"/v1/call/{name}"]["post"]
        assert operation["summary"] == name
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        assert set(body.get("properties", {})) == set(call.arg_names), name
        assert "200" in operation["responses"]
    calls = {p for p in paths if p.startswith("/v1/call/")}
    assert calls == {f"/v1/call/{name}" for name in CALLS} | {"/v1/call/{api}"}  # every operator's phase 2
    for view in ("/healthz", "/v1/devices", "/v1/devices/{device_id}", "/v1/models/{model_id}", "/v1/sessions"):
        assert view in paths
    assert {"put", "get"} <= set(paths["/v1/memory/{ptr}"]) and {"put", "get"} <= set(paths["/v1/host/{ptr}"])
    docs = await http.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower() and "/openapi.json" in docs.text
    # both pages work offline: every asset they load is the daemon's own, and it serves them
    for page, assets in (("/docs", ("swagger-ui-bundle.js", "swagger-ui.css")), ("/redoc", ("redoc.standalone.js",))):
        html = (await http.get(page)).text
        assert "cdn." not in html and "fonts.googleapis" not in html, page
        for asset in assets:
            assert f'"/docs-assets/{asset}"' in html, (page, asset)
            served = await http.get(f"/docs-assets/{asset}")
            assert served.status_code == 200 and len(served.content) > 100_000, asset
