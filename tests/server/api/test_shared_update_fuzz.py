"""Reliability 14, fuzzed: a process of a shared context goes away at every point of a task update -- before it
begins, between UpdateBegin and its kernels, before and after UpdateEnd, while its model replays -- each time with
its calls waited for or pipelined (still queued in the daemon when the connection ends). After each, the process
that stays sees the update the other one ended (and only that one), updates the group itself, and replays the model
to the values it set: nothing is left locked, lost or half-applied."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import numpy as np

import proto.aclnn as nn
from proto.constants import aclDataType
from tests.server.api.callers import WsCaller
from tests.server.api.conftest import LiveServer
from tests.server.api.test_calls import Remote
from tests.server.npu.devicekit import tensor_at

F32 = aclDataType.ACL_FLOAT
N = 8


class Update:
    """The calls of one task update of the model's group, cut after `steps` of them."""

    def __init__(self, caller: WsCaller, parts: dict[str, Any], pipelined: bool) -> None:
        self.c, self.parts, self.pipelined = caller, parts, pipelined

    async def call(self, api: str, **args: Any) -> None:
        if self.pipelined:
            await self.c.send(api, reply=False, **args)
        else:
            await self.c(api, **args)

    async def run(self, steps: int, added: float) -> None:
        p = self.parts
        _, executor = nn.aclnnAddsGetWorkspaceSize(p["x"], nn.aclCreateScalar(added, F32), p["one"], p["y"])
        kernel = executor.kernel.to_wire()
        script = [
            ("aclmdlRICaptureTaskUpdateBegin", {"stream": p["updater"], "handle": p["group"]}),
            ("aclnnAdds", {"workspace": 0, "workspaceSize": 0, "executor": kernel, "stream": p["updater"]}),
            ("aclmdlRICaptureTaskUpdateEnd", {"stream": p["updater"]}),
            ("aclrtSynchronizeStream", {"stream": p["updater"]}),
            ("aclmdlRIExecuteAsync", {"modelRI": p["model"], "stream": p["replay"]}),
            ("aclrtSynchronizeStream", {"stream": p["replay"]}),
        ]
        for api, args in script[:steps]:
            await self.call(api, **args)


async def gone(live: LiveServer, caller: WsCaller) -> None:
    """Wait until the daemon has ended `caller`'s session (its queued calls drained, its updates aborted)."""
    sessions = live.app.state.registry.sessions
    for _ in range(500):
        if caller.hello["session"] not in sessions:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"session {caller.hello['session']} outlived its connection")


async def test_a_process_leaving_at_any_point_of_an_update_leaves_the_group_usable(live: LiveServer) -> None:
    rng = random.Random(16)
    stays = await WsCaller.connect(live.ws_url)
    try:
        await stays("aclInit", configPath=None)
        await stays("aclrtSetDevice", deviceId=0)
        r = Remote(stays)
        values = np.random.default_rng(14).standard_normal(N).astype(np.float32)
        x, y = await r.put(values), await r.put(np.zeros(N, np.float32))
        parts: dict[str, Any] = {"x": tensor_at(x, (N,), F32), "y": tensor_at(y, (N,), F32)}
        parts["one"] = nn.aclCreateScalar(1.0, F32)
        for name in ("replay", "updater", "capture"):
            parts[name] = (await stays("aclrtCreateStream"))["stream"]
        await stays("aclmdlRICaptureBegin", stream=parts["capture"], mode=0)
        await stays("aclmdlRICaptureTaskGrpBegin", stream=parts["capture"])
        await r.launch("Adds", parts["capture"], parts["x"], parts["one"], parts["one"], parts["y"])
        parts["group"] = (await stays("aclmdlRICaptureTaskGrpEnd", stream=parts["capture"]))["handle"]
        parts["model"] = (await stays("aclmdlRICaptureEnd", stream=parts["capture"]))["modelRI"]
        added = 1.0  # what the model adds now
        cases = [(steps, pipelined) for steps in range(7) for pipelined in (False, True)]
        rng.shuffle(cases)
        for steps, pipelined in cases:
            leaves = await WsCaller.connect(live.ws_url, context=stays.hello["context"])
            await leaves("aclInit", configPath=None)
            await leaves("aclrtSetDevice", deviceId=0)
            theirs = round(rng.uniform(-8, 8), 3)
            await Update(leaves, parts, pipelined).run(steps, theirs)
            await leaves.ws.close()
            await gone(live, leaves)
            case = f"left after {steps} calls, {'pipelined' if pipelined else 'each waited for'}"
            assert leaves.orphans == [], (case, leaves.orphans)
            if steps >= 3:  # its UpdateEnd was taken: the update it ended is the model's
                added = theirs
            await stays("aclmdlRIExecuteAsync", modelRI=parts["model"], stream=parts["replay"])
            await stays("aclrtSynchronizeStream", stream=parts["replay"])
            got = await r.get(y, (N,))
            np.testing.assert_allclose(got, values.astype(np.float64) + added, rtol=1e-6, atol=1e-6, err_msg=case)
            ours = round(rng.uniform(-8, 8), 3)  # the group is not locked: the process that stays updates it
            await Update(stays, parts, pipelined=False).run(6, ours)
            np.testing.assert_allclose(await r.get(y, (N,)), values.astype(np.float64) + ours, rtol=1e-6, atol=1e-6)
            added = ours
    finally:
        await stays.ws.close()
