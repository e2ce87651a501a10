"""What the views show of the aclmdlRI family: a model's name, id and kind; a Build model's bound streams (HEAD or
DEFAULT) and the activate / switch edges between them; the edits aclmdlRIUpdate applied (before -> after) in the
debug print, the model view and the graph."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import httpx
import numpy as np

import proto.aclnn as nn
from proto.constants import aclDataType
from tests.server.api.callers import RestCaller
from tests.server.api.test_calls import Remote
from tests.server.npu.devicekit import tensor_at

F32 = aclDataType.ACL_FLOAT
HEAD, DEFAULT = 0, 0x7FFFFFFF


async def start(http: httpx.AsyncClient) -> tuple[RestCaller, Remote]:
    c = RestCaller(http)
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    return c, Remote(c)


async def test_a_built_model_shows_its_bound_streams_and_jumps(http: httpx.AsyncClient) -> None:
    c, r = await start(http)
    x = await r.put(np.ones(8, np.float32))
    xt = tensor_at(x, (8,), F32)
    p1, p2, p3 = [(await c("aclrtCreateStreamWithConfig", priority=0, flag=4))["stream"] for _ in range(3)]
    built = (await c("aclmdlRIBuildBegin", flag=0))["modelRI"]
    for stream, flag in ((p1, HEAD), (p2, DEFAULT), (p3, DEFAULT)):
        await c("aclmdlRIBindStream", modelRI=built, stream=stream, flag=flag)
    left, right = await r.put(np.zeros(1, np.int32)), await r.put(np.zeros(1, np.int32))
    await r.launch("Adds", p1, xt, nn.aclCreateScalar(1.0, F32), nn.aclCreateScalar(1.0, F32), xt)
    await c("aclrtSwitchStream", leftValue=left, cond=0, rightValue=right, dataType=0, trueStream=p2,
            falseStream=None, stream=p1)  # fmt: skip
    await c("aclrtActiveStream", activeStream=p3, stream=p2)
    await c("aclmdlRIEndTask", modelRI=built, stream=p3)
    await c("aclmdlRIBuildEnd", modelRI=built, reserve=None)
    await c("aclmdlRISetName", modelRI=built, name="switch demo")
    ident = (await c("aclmdlRIGetId", modelRI=built))["modelRIId"]

    view = (await http.get(f"/v1/models/{built}")).json()
    assert (view["name"], view["id"], view["kind"]) == ("switch demo", ident, "build")
    debug = view["debug"]
    assert f'model {built:#x} "switch demo" (id {ident}, build)' in debug
    assert f"bound stream {p1:#x} (HEAD: starts with the model)" in debug
    assert f"bound stream {p3:#x} (DEFAULT: starts when activated or switched to)" in debug
    dot = (await http.get(f"/v1/models/{built}/graph", params={"format": "dot"})).text
    assert 'label="switch (if true)"' in dot and 'label="activate"' in dot
    assert dot.count('color="#2f855a"') == 2  # one edge per jump
    svg = ET.fromstring((await http.get(f"/v1/models/{built}/graph")).text)
    texts = "".join(svg.itertext())
    assert "switch demo" in texts and "HEAD" in texts and "DEFAULT" in texts
    listed = (await http.get("/v1/devices/0")).json()["contexts"][0]["models"]
    assert {"handle": built, "name": "switch demo", "kind": "build"}.items() <= listed[0].items()
    await c("aclmdlRIDestroy", modelRI=built)


async def test_edits_are_shown_before_and_after(http: httpx.AsyncClient) -> None:
    c, r = await start(http)
    values = np.random.default_rng(5).standard_normal(8).astype(np.float32)
    x, y = await r.put(values), await r.put(np.zeros(8, np.float32))
    xt, yt = tensor_at(x, (8,), F32), tensor_at(y, (8,), F32)
    s = (await c("aclrtCreateStream"))["stream"]
    await c("aclmdlRICaptureBegin", stream=s, mode=0)
    await r.launch("Muls", s, xt, nn.aclCreateScalar(2.0, F32), yt)
    await r.launch("Adds", s, yt, nn.aclCreateScalar(1.0, F32), nn.aclCreateScalar(1.0, F32), yt)
    model = (await c("aclmdlRICaptureEnd", stream=s))["modelRI"]
    lanes = await c("aclmdlRIGetStreams", modelRI=model, streams=True, numStreams=1)
    muls, adds = (await c("aclmdlRIGetTasksByStream", stream=lanes["streams"][0], tasks=True, numTasks=2))["tasks"]
    params = (await c("aclmdlRITaskGetParams", task=muls))["params"]
    params["kernelTaskParams"]["kernel"]["args"]["other"]["value"] = -3.0
    await c("aclmdlRITaskSetParams", task=muls, params=params)
    await c("aclmdlRITaskDisable", task=adds)
    await c("aclmdlRIUpdate", modelRI=model)
    await c("aclmdlRIExecuteAsync", modelRI=model, stream=s)
    await c("aclrtSynchronizeStream", stream=s)
    np.testing.assert_allclose(await r.get(y, (8,)), values.astype(np.float64) * -3.0, rtol=1e-6)

    view = (await http.get(f"/v1/models/{model}")).json()
    assert view["edits"] == ["Muls(other=2) -> Muls(other=-3)", "disabled aclnnAdds kernel Adds"]
    assert "edits applied by aclmdlRIUpdate (the last 2):" in view["debug"]
    assert "Muls(other=2) -> Muls(other=-3)" in view["debug"]
    dot = (await http.get(f"/v1/models/{model}/graph", params={"format": "dot"})).text
    assert "edited: aclnnMuls kernel Muls" in dot and "Adds" not in dot  # the disabled task is gone
    await c("aclmdlRIDestroy", modelRI=model)
