"""A Build model whose aclrtSwitchStream or aclrtActiveStream loops back forever (issue 39, 3): the restarts of one
execution are bounded as label jumps are (VNPU_MAX_WHILE_ITERATIONS, then 507011 naming the bound), the replay
keeps nothing per restart, and aclrtStreamAbort on its stream or aclmdlRIAbort stops it at once."""

from __future__ import annotations

import asyncio
import time
import tracemalloc

import numpy as np
import pytest

from proto.constants import (
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_STREAM_FLAG_DEFAULT,
    ACL_MODEL_STREAM_FLAG_HEAD,
    ACL_STREAM_PERSISTENT,
    aclrtCompareDataType,
    aclrtCondition,
)
from proto.errors import (
    ACL_ERROR_RT_MODEL_ABORT_NORMAL,
    ACL_ERROR_RT_MODEL_EXECUTE,
    ACL_ERROR_RT_STREAM_ABORT,
    AclError,
)
from server.npu import Runtime

HEAD, DEFAULT = ACL_MODEL_STREAM_FLAG_HEAD, ACL_MODEL_STREAM_FLAG_DEFAULT
I32 = aclrtCompareDataType.ACL_RT_SWITCH_INT32
EQ = aclrtCondition.ACL_RT_EQUAL


async def model_of(rt: Runtime, *lanes: int) -> tuple[int, list[int]]:
    model = rt.aclmdlRIBuildBegin(0)
    streams = []
    for flag in lanes:
        stream = rt.aclrtCreateStreamWithConfig(0, ACL_STREAM_PERSISTENT)
        await rt.aclmdlRIBindStream(model, stream, flag)
        streams.append(stream)
    return model, streams


async def self_switch(rt: Runtime) -> tuple[int, int]:
    """The probe's model: one HEAD stream S whose first task switches to S while two zero words are equal; its
    end task is after the switch. Returns the model and the words (write 1 at words + 8 to leave the loop)."""
    model, (s,) = await model_of(rt, HEAD)
    words = rt.aclrtMalloc(16, 0)
    rt.aclrtMemcpy(words, 16, np.zeros(2, np.int64), 16, ACL_MEMCPY_HOST_TO_DEVICE)
    rt.aclrtSwitchStream(words, EQ, words + 8, I32, s, None, s)
    rt.aclmdlRIEndTask(model, s)
    rt.aclmdlRIBuildEnd(model, None)
    return model, words


async def ping_pong(rt: Runtime) -> int:
    """Two lanes that activate each other, and an end task no lane reaches."""
    model, (a, b, end) = await model_of(rt, HEAD, DEFAULT, DEFAULT)
    rt.aclrtActiveStream(b, a)
    rt.aclrtActiveStream(a, b)
    rt.aclmdlRIEndTask(model, end)
    rt.aclmdlRIBuildEnd(model, None)
    return model


async def synchronize_fails(rt: Runtime, stream: int, seconds: float) -> AclError:
    with pytest.raises(AclError) as caught:
        await asyncio.wait_for(rt.aclrtSynchronizeStream(stream), seconds)
    return caught.value


async def test_a_switch_to_its_own_stream_is_bounded(rt: Runtime) -> None:
    rt.ctx.machine.max_while_iterations = 500
    model, words = await self_switch(rt)
    on = rt.aclrtCreateStream()
    rt.aclmdlRIExecuteAsync(model, on)
    error = await synchronize_fails(rt, on, 10)
    assert error.code == ACL_ERROR_RT_MODEL_EXECUTE and "VNPU_MAX_WHILE_ITERATIONS" in error.message
    assert "500" in error.message
    rt.aclrtMemcpy(words + 8, 8, np.ones(1, np.int64), 8, ACL_MEMCPY_HOST_TO_DEVICE)  # the loop may end now
    rt.aclmdlRIExecuteAsync(model, on)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(on), 10)


async def test_lanes_that_activate_each_other_are_bounded(rt: Runtime) -> None:
    rt.ctx.machine.max_while_iterations = 500
    model = await ping_pong(rt)
    on = rt.aclrtCreateStream()
    rt.aclmdlRIExecuteAsync(model, on)
    error = await synchronize_fails(rt, on, 10)
    assert error.code == ACL_ERROR_RT_MODEL_EXECUTE and "VNPU_MAX_WHILE_ITERATIONS" in error.message
    await rt.aclmdlRIDestroy(model)


async def test_a_looping_replay_keeps_nothing_per_restart(rt: Runtime) -> None:
    rt.ctx.machine.max_while_iterations = 20_000
    model, _ = await self_switch(rt)
    on = rt.aclrtCreateStream()
    tracemalloc.start()
    try:
        rt.aclmdlRIExecuteAsync(model, on)
        error = await synchronize_fails(rt, on, 60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error.code == ACL_ERROR_RT_MODEL_EXECUTE
    assert peak < 8 << 20, f"{peak / 2**20:.1f} MiB for 20000 restarts"


@pytest.mark.parametrize("how", ["aclrtStreamAbort", "aclmdlRIAbort"])
async def test_an_abort_stops_an_endless_build_replay(rt: Runtime, how: str) -> None:
    rt.ctx.machine.max_while_iterations = 10**9
    model, words = await self_switch(rt)
    on = rt.aclrtCreateStream()
    rt.aclmdlRIExecuteAsync(model, on)
    await asyncio.sleep(0.2)
    started = time.monotonic()
    if how == "aclrtStreamAbort":
        rt.aclrtStreamAbort(on)
        expected = ACL_ERROR_RT_STREAM_ABORT
    else:
        await rt.aclmdlRIAbort(model)
        expected = ACL_ERROR_RT_MODEL_ABORT_NORMAL
    error = await synchronize_fails(rt, on, 5)
    assert error.code == expected, error
    assert time.monotonic() - started < 3
    assert not rt.ctx.models[model].running
    rt.aclrtMemcpy(words + 8, 8, np.ones(1, np.int64), 8, ACL_MEMCPY_HOST_TO_DEVICE)
    rt.aclmdlRIExecuteAsync(model, on)  # the stream and the model work on
    await asyncio.wait_for(rt.aclrtSynchronizeStream(on), 10)
    await rt.aclmdlRIDestroy(model)
