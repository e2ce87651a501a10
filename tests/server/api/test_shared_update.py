"""Reliability 14, shared contexts: a process that goes away in the middle of a task update (its connection ends)
does not leave the task group locked for the other processes of its context -- the update ends unapplied, and
another process updates the group and replays the model."""

from __future__ import annotations

import asyncio

import numpy as np

import proto.aclnn as nn
from proto.constants import aclDataType
from tests.server.api.callers import WsCaller
from tests.server.api.conftest import LiveServer
from tests.server.api.test_calls import Remote
from tests.server.npu.devicekit import tensor_at

F32 = aclDataType.ACL_FLOAT


async def test_an_update_of_a_process_that_left_ends_unapplied(live: LiveServer) -> None:
    first = await WsCaller.connect(live.ws_url)
    await first("aclInit", configPath=None)
    await first("aclrtSetDevice", deviceId=0)
    r = Remote(first)
    values = np.random.default_rng(9).standard_normal(8).astype(np.float32)
    x, y = await r.put(values), await r.put(np.zeros(8, np.float32))
    xt, yt = tensor_at(x, (8,), F32), tensor_at(y, (8,), F32)
    one = nn.aclCreateScalar(1.0, F32)
    s, updater = (await first("aclrtCreateStream"))["stream"], (await first("aclrtCreateStream"))["stream"]
    await first("aclmdlRICaptureBegin", stream=s, mode=0)
    await first("aclmdlRICaptureTaskGrpBegin", stream=s)
    await r.launch("Adds", s, xt, one, one, yt)
    group = (await first("aclmdlRICaptureTaskGrpEnd", stream=s))["handle"]
    model = (await first("aclmdlRICaptureEnd", stream=s))["modelRI"]
    second = await WsCaller.connect(live.ws_url, context=first.hello["context"])
    try:
        await second("aclInit", configPath=None)
        await second("aclrtSetDevice", deviceId=0)
        await first("aclmdlRICaptureTaskUpdateBegin", stream=updater, handle=group)
        await first.ws.close()  # the first process dies mid-update
        registry = live.app.state.registry
        for _ in range(200):
            if first.hello["session"] not in registry.sessions:
                break
            await asyncio.sleep(0.01)
        assert first.hello["session"] not in registry.sessions
        await second("aclmdlRICaptureTaskUpdateBegin", stream=updater, handle=group)  # it was 107033 for ever
        await Remote(second).launch("Adds", updater, xt, nn.aclCreateScalar(5.0, F32), one, yt)
        await second("aclmdlRICaptureTaskUpdateEnd", stream=updater)
        await second("aclrtSynchronizeStream", stream=updater)
        await second("aclmdlRIExecuteAsync", modelRI=model, stream=s)
        await second("aclrtSynchronizeStream", stream=s)
        np.testing.assert_allclose(await Remote(second).get(y, (8,)), values.astype(np.float64) + 5.0, rtol=1e-6)
    finally:
        await second.ws.close()
