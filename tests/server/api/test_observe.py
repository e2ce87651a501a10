"""The trace endpoint, model graphs (DOT and SVG) and the Prometheus metrics, after a known workload."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET

import httpx
import numpy as np

import proto.aclnn as nn
from proto.constants import aclDataType
from tests.server.api.callers import RestCaller
from tests.server.api.test_calls import Remote
from tests.server.npu.devicekit import tensor_at

F32 = aclDataType.ACL_FLOAT


async def seed_model(c: RestCaller) -> dict[str, int]:
    """A two-stream model: a fork/join with an Ex event, an EXTERNAL wait and a two-kernel task group."""
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    r = Remote(c)
    x, y = await r.put(np.ones(8)), await r.put(np.zeros(8))
    xt, yt = tensor_at(x, (8,), F32), tensor_at(y, (8,), F32)
    s1, s2 = (await c("aclrtCreateStream"))["stream"], (await c("aclrtCreateStream"))["stream"]
    fork = (await c("aclrtCreateEventExWithFlag", flag=1))["event"]
    join = (await c("aclrtCreateEventExWithFlag", flag=1))["event"]
    ext = (await c("aclrtCreateEventWithFlag", flag=0x20))["event"]
    await c("aclmdlRICaptureBegin", stream=s1, mode=0)
    await c("aclrtRecordEvent", event=fork, stream=s1)
    await c("aclrtStreamWaitEvent", stream=s2, event=fork)
    await r.launch("Muls", s2, xt, nn.aclCreateScalar(2.0, F32), yt)
    await c("aclrtRecordEvent", event=join, stream=s2)
    await c("aclrtStreamWaitEvent", stream=s1, event=join)
    await c("aclrtStreamWaitEvent", stream=s1, event=ext)
    await c("aclmdlRICaptureTaskGrpBegin", stream=s1)
    for value in (1.0, 2.0):
        await r.launch("Adds", s1, yt, nn.aclCreateScalar(value, F32), nn.aclCreateScalar(1.0, F32), yt)
    group = (await c("aclmdlRICaptureTaskGrpEnd", stream=s1))["handle"]
    model = (await c("aclmdlRICaptureEnd", stream=s1))["modelRI"]
    return {"model": model, "group": group, "s1": s1, "s2": s2, "ext": ext}


async def test_graph_dot_and_svg(http: httpx.AsyncClient) -> None:
    c = RestCaller(http)
    ids = await seed_model(c)
    dot = (await http.get(f"/v1/models/{ids['model']}/graph", params={"format": "dot"})).text
    assert dot.startswith(f'digraph "model {ids["model"]:#x}"')
    assert dot.count("subgraph cluster_lane") == 2
    assert f"subgraph cluster_group_{ids['group']:x}" in dot and "0 update(s)" in dot
    assert dot.count("aclnnAdds") == 2 and "aclnnMuls" in dot
    assert dot.count('style=dashed, color="#2b6cb0", label="event"') == 2  # fork and join edges
    assert "wait (EXTERNAL)" in dot and 'fillcolor="#ffd08a"' in dot  # the EXTERNAL wait is highlighted
    response = await http.get(f"/v1/models/{ids['model']}/graph")
    assert response.headers["content-type"].startswith("image/svg+xml")
    svg = ET.fromstring(response.text)
    texts = "".join(svg.itertext())
    assert f"task group {ids['group']:#x}" in texts and "stream #1" in texts
    assert len(svg.findall(".//{http://www.w3.org/2000/svg}line")) == 2
    missing = await http.get("/v1/models/12345/graph")
    assert missing.status_code == 404


async def test_trace_endpoint_follows_the_work(http: httpx.AsyncClient) -> None:
    c = RestCaller(http)
    ids = await seed_model(c)
    first = (await http.get("/v1/trace")).json()
    assert first["enabled"] is True
    now = first["now"]
    await c("aclrtRecordEvent", event=ids["ext"], stream=ids["s2"])
    await c("aclmdlRIExecuteAsync", modelRI=ids["model"], stream=ids["s1"])
    await c("aclrtSynchronizeStream", stream=ids["s1"])
    later = (await http.get("/v1/trace", params={"since": now})).json()["traceEvents"]
    complete = [e for e in later if e["ph"] == "X"]
    assert all(e["ts"] >= 0 for e in complete)
    replayed = [e for e in complete if e["args"].get("Model Id") == ids["model"]]
    kernels = [e for e in replayed if e["cat"] == "kernel"]
    assert len(kernels) == 3 and sum(1 for k in kernels if k["args"].get("Task Group") == f"{ids['group']:#x}") == 2
    assert {e["tid"] for e in replayed} == {f"model {ids['model']:#x} stream #0", f"model {ids['model']:#x} stream #1"}
    assert any(e["cat"] == "model" for e in complete)  # the execute task on s1 itself


async def test_metrics_after_a_known_workload(http: httpx.AsyncClient) -> None:
    c = RestCaller(http)
    ids = await seed_model(c)
    await c("aclrtRecordEvent", event=ids["ext"], stream=ids["s2"])
    await c("aclmdlRIExecuteAsync", modelRI=ids["model"], stream=ids["s1"])
    await c("aclrtSynchronizeStream", stream=ids["s1"])
    await http.post("/v1/call/aclrtMalloc", json={"size": 0, "policy": 0})  # one 100000
    text = (await http.get("/metrics")).text
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    assert values['vnpu_calls_total{api="aclmdlRICaptureBegin",code="0"}'] == 1
    assert values['vnpu_calls_total{api="aclrtMalloc",code="100000"}'] == 1
    assert values['vnpu_calls_total{api="aclnnAdds",code="0"}'] == 2
    assert values['vnpu_call_seconds_count{api="aclrtSynchronizeStream"}'] == 1
    buckets = sorted(
        (float(k.split('le="')[1].rstrip('"}')), v)
        for k, v in values.items()
        if k.startswith('vnpu_call_seconds_bucket{api="aclnnAdds"')
    )
    assert len(buckets) == 14 and buckets[-1] == (float("inf"), 2)  # 13 bounds and +Inf, cumulative
    assert all(a[1] <= b[1] for a, b in itertools.pairwise(buckets))
    assert 0 < values['vnpu_call_seconds_sum{api="aclnnAdds"}'] < 10
    assert values['vnpu_tasks_total{kind="kernel"}'] == 3  # the replayed Muls and two Adds (none ran eagerly)
    assert values['vnpu_tasks_total{kind="group"}'] == 1
    assert values["vnpu_models"] == 1 and values["vnpu_contexts"] == 1 and values["vnpu_sessions"] == 1
    assert values['vnpu_device_memory_used_bytes{device="0"}'] > 0
    assert values['vnpu_device_memory_total_bytes{device="0"}'] == 64 << 20
    depth = [k for k in values if k.startswith("vnpu_stream_queue_depth")]
    assert len(depth) == 3  # the default stream and the two streams
