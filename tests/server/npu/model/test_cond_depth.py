"""Conditional models nested deep (issue 39, 5): aclmdlRIAddCondTask refuses a branch deeper than MAX_COND_DEPTH
with 207012 naming the bound, a model nested to the bound runs, and the release of a context frees every level's
model and stream slots without recursion (it gave up with RecursionError at ~500 levels, keeping the slots)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from proto.constants import ACL_MODEL_RI_CAPTURE_MODE_RELAXED
from proto.errors import ACL_ERROR_RT_OVER_LIMIT, AclError
from server.npu import Machine, Runtime
from server.npu.model import cond as cond_model
from tests.server.npu.devicekit import counter_add, download, upload

RELAXED = ACL_MODEL_RI_CAPTURE_MODE_RELAXED
IF = 0


@pytest.fixture
async def big() -> AsyncIterator[Machine]:
    m = Machine(1, 64 << 20, max_streams=2048, max_models=2048)
    yield m
    m.close()


def nest(rt: Runtime, levels: int, count: int | None = None) -> tuple[int, list[int]]:
    """A root capture whose IF task's branch holds an IF task of its own, `levels` sub-models deep, every capture
    open at once; each branch adds 1 to `count` (when given). Returns the root and the streams, root first."""
    streams = [rt.aclrtCreateStream()]
    rt.aclmdlRICaptureBegin(streams[0], RELAXED)
    model = root = rt.aclmdlRICaptureGetInfo(streams[0])[1]
    for _ in range(levels):
        handle = rt.aclmdlRICondHandleCreate(model, 1, 1)  # ASSIGN_DEFAULT 1: every IF runs its branch
        (model,) = rt.aclmdlRIAddCondTask({"handle": handle, "type": IF, "size": 1}, streams[-1], 0)
        streams.append(rt.aclrtCreateStream())
        rt.aclmdlRICaptureToModelRIBegin(streams[-1], model, RELAXED)
        if count is not None:
            counter_add(rt, count, 1, streams[-1])
    return root, streams


def end_all(rt: Runtime, streams: list[int]) -> None:
    for stream in reversed(streams):  # deepest first, as the runtime requires
        rt.aclmdlRICaptureEnd(stream)


async def test_nesting_is_bounded_at_creation_and_the_bound_runs(big: Machine) -> None:
    rt = Runtime(big)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    depth = getattr(cond_model, "MAX_COND_DEPTH", 64)
    count = upload(rt, np.zeros(1, np.int64))
    root, streams = nest(rt, depth, count)
    deepest = rt.aclmdlRICaptureGetInfo(streams[-1])[1]
    handle = rt.aclmdlRICondHandleCreate(deepest, 1, 1)
    with pytest.raises(AclError) as caught:
        rt.aclmdlRIAddCondTask({"handle": handle, "type": IF, "size": 1}, streams[-1], 0)
    assert caught.value.code == ACL_ERROR_RT_OVER_LIMIT
    assert f"{depth}" in caught.value.message and "MAX_COND_DEPTH" in caught.value.message
    used = big.devices[0].models.used
    end_all(rt, streams)  # the capture was not invalidated by the refusal
    assert big.devices[0].models.used == used == depth + 1
    on = rt.aclrtCreateStream()
    for run in (1, 2):
        rt.aclmdlRIExecuteAsync(root, on)
        await rt.aclrtSynchronizeStream(on)
        assert download(rt, count, (1,), np.int64)[0] == run * depth
    assert rt.aclmdlRIDebugPrint(root).count("[0] ran 2x:") == depth  # the print nests as deep
    await rt.release_all()
    assert (big.devices[0].models.used, big.devices[0].streams.used) == (0, 0)


async def test_a_context_nested_1200_deep_is_released_without_recursion(
    big: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cond_model, "MAX_COND_DEPTH", 1200, raising=False)  # what the bound now prevents
    rt = Runtime(big)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    _, streams = nest(rt, 1200)
    end_all(rt, streams)
    assert big.devices[0].models.used == 1201
    await rt.release_all()
    assert (big.devices[0].models.used, big.devices[0].streams.used) == (0, 0)
