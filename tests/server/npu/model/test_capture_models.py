"""Models: cross-stream fork/join, "method 1", one execution at a time, Execute/Destroy, use after free,
debug prints, and task updates landing between concurrent replays without ever being half applied."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from proto.constants import (
    ACL_EVENT_EXTERNAL,
    ACL_EVENT_SYNC,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
    aclmdlRITaskType,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    AclError,
)
from server.npu import Runtime
from server.npu.model.state import ModelKind
from tests.server.npu.devicekit import Vec

GLOBAL = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
RNG = np.random.default_rng(7)


def program(rt: Runtime, s: list[int], v: list[Vec], events: list[int]) -> None:
    """A fork/join over three streams: s0 forks to s1 and s2, which work in parallel and join back."""
    fork, j1, j2 = events
    v[1].muls(v[0], 2.0, s[0])  # v1 = 2 v0
    rt.aclrtRecordEvent(fork, s[0])
    rt.aclrtStreamWaitEvent(s[1], fork)
    rt.aclrtStreamWaitEvent(s[2], fork)
    v[2].adds(v[1], 1.0, s[1])  # v2 = v1 + 1
    v[3].muls(v[1], -3.0, s[2])  # v3 = -3 v1
    v[3].adds(v[3], 0.5, s[2])  # v3 += 0.5
    rt.aclrtRecordEvent(j1, s[1])
    rt.aclrtRecordEvent(j2, s[2])
    rt.aclrtStreamWaitEvent(s[0], j1)
    rt.aclrtStreamWaitEvent(s[0], j2)
    v[4].muls(v[2], 1.0, s[0])
    v[4].adds(v[4], 0.0, s[0])


async def test_fork_join_over_three_streams_equals_eager(rt: Runtime) -> None:
    s = [rt.aclrtCreateStream() for _ in range(3)]
    events = [rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) for _ in range(3)]
    data = RNG.standard_normal(64).astype(np.float32)
    v = [Vec(rt, data)] + [Vec(rt, np.zeros(64, np.float32)) for _ in range(4)]
    program(rt, s, v, events)
    await rt.aclrtSynchronizeDevice()
    eager = [x.read() for x in v]
    for x in v[1:]:
        x.muls(x, 0.0, s[0])
    await rt.aclrtSynchronizeDevice()
    rt.aclmdlRICaptureBegin(s[0], GLOBAL)
    program(rt, s, v, events)
    model = rt.aclmdlRICaptureEnd(s[0])
    assert all(x.read().sum() == 0 for x in v[1:])  # captured, not run
    text = rt.aclmdlRIDebugPrint(model)
    assert text.count("stream #") == 3
    launcher = rt.aclrtCreateStream()
    for _ in range(3):  # the internal capture events start clean at every replay
        rt.aclmdlRIExecuteAsync(model, launcher)
        await rt.aclrtSynchronizeStream(launcher)
        for x, want in zip(v, eager, strict=True):
            np.testing.assert_array_equal(x.read(), want)
    np.testing.assert_allclose(eager[2], 2 * data.astype(np.float64) + 1, rtol=1e-6)


async def test_method_one_models_around_an_eager_task(rt: Runtime) -> None:
    """G3 "method 1": the work before and after the task to change is captured as two models."""
    s = rt.aclrtCreateStream()
    a, b, c = (
        Vec(rt, RNG.standard_normal(16).astype(np.float32)),
        Vec(rt, np.zeros(16, np.float32)),
        Vec(rt, np.zeros(16, np.float32)),
    )
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    b.muls(a, 2.0, s)
    before = rt.aclmdlRICaptureEnd(s)
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    c.adds(b, 1.0, s)
    after = rt.aclmdlRICaptureEnd(s)
    for value in (3.0, -1.0, 0.25):
        rt.aclmdlRIExecuteAsync(before, s)
        b.muls(b, value, s)  # the variable task, launched eagerly between the models
        rt.aclmdlRIExecuteAsync(after, s)
        await rt.aclrtSynchronizeStream(s)
        np.testing.assert_allclose(c.read(), a.read().astype(np.float64) * 2 * value + 1, rtol=1e-6)


async def test_one_execution_of_a_model_at_a_time(rt: Runtime) -> None:
    s, t, u = rt.aclrtCreateStream(), rt.aclrtCreateStream(), rt.aclrtCreateStream()
    ext = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    x, y = Vec(rt, np.ones(4, np.float32)), Vec(rt, np.zeros(4, np.float32))
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    rt.aclrtStreamWaitEvent(s, ext)
    rt.aclrtResetEvent(ext, s)
    y.adds(y, 1.0, s)
    model = rt.aclmdlRICaptureEnd(s)
    rt.aclmdlRIExecuteAsync(model, s)
    rt.aclmdlRIExecuteAsync(model, t)  # queues behind the first execution
    for _ in range(10):
        await asyncio.sleep(0)
    rt.aclrtRecordEvent(ext, u)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_array_equal(y.read(), np.ones(4))  # only the first replay ran; the second waits
    rt.aclrtRecordEvent(ext, u)
    await rt.aclrtSynchronizeStream(t)
    np.testing.assert_array_equal(y.read(), 2 * np.ones(4))
    del x


async def test_execute_synchronously_with_timeout(rt: Runtime) -> None:
    """aclmdlRIExecute runs Build models only (the runtime refuses capture models with 107000): the model is
    turned into one here to drive the host path, whose expiry is 507046 (modelri spec 8.1-8.2)."""
    s = rt.aclrtCreateStream()
    ext = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    y = Vec(rt, np.zeros(4, np.float32))
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    rt.aclrtStreamWaitEvent(s, ext)
    rt.aclrtResetEvent(ext, s)
    y.adds(y, 1.0, s)
    model = rt.aclmdlRICaptureEnd(s)
    with pytest.raises(AclError) as info:
        await rt.aclmdlRIExecute(model, 50)
    assert info.value.code == ACL_ERROR_RT_PARAM_INVALID and "aclmdlRIExecuteAsync" in info.value.message
    rt.ctx.models[model].kind = ModelKind.BUILD
    with pytest.raises(AclError) as info:
        await rt.aclmdlRIExecute(model, 50)
    assert info.value.code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    rt.aclrtRecordEvent(ext, s)  # lets the timed-out replay finish
    rt.aclrtRecordEvent(ext, s)
    await rt.aclrtSynchronizeStream(s)
    rt.aclrtRecordEvent(ext, s)
    await asyncio.wait_for(rt.aclmdlRIExecute(model, -1), 5)
    destroy = asyncio.ensure_future(rt.aclmdlRIDestroy(model))
    await asyncio.wait_for(destroy, 5)
    np.testing.assert_array_equal(y.read(), 2 * np.ones(4))
    with pytest.raises(AclError) as info:
        rt.aclmdlRIExecuteAsync(model, s)
    assert info.value.code == ACL_ERROR_RT_INVALID_HANDLE


async def test_destroy_waits_for_a_running_replay(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    ext = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    y = Vec(rt, np.zeros(4, np.float32))
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    rt.aclrtStreamWaitEvent(s, ext)
    y.adds(y, 1.0, s)
    model = rt.aclmdlRICaptureEnd(s)
    rt.aclmdlRIExecuteAsync(model, s)
    for _ in range(10):
        await asyncio.sleep(0)
    destroy = asyncio.ensure_future(rt.aclmdlRIDestroy(model))
    await asyncio.sleep(0.02)
    assert not destroy.done()
    rt.aclrtRecordEvent(ext, rt.aclrtCreateStream())
    await asyncio.wait_for(destroy, 5)
    np.testing.assert_array_equal(y.read(), np.ones(4))


async def test_replay_after_free_names_the_task_and_address(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    x, y = Vec(rt, np.ones(4, np.float32)), Vec(rt, np.zeros(4, np.float32))
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    y.adds(x, 1.0, s)
    model = rt.aclmdlRICaptureEnd(s)
    rt.aclrtFree(x.ptr)
    reuse = Vec(rt, np.full(4, 9, np.float32))  # may land on the freed address: still refused
    rt.aclmdlRIExecuteAsync(model, s)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(s)
    assert info.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR
    assert f"{x.ptr:#x}" in info.value.message and "task #0" in info.value.message
    assert "aclnnAdds" in info.value.message
    np.testing.assert_array_equal(y.read(), np.zeros(4))
    del reuse


async def test_a_free_between_replays_is_caught_even_at_the_same_address(rt: Runtime) -> None:
    """A replay skips re-checking its pins and re-resolving its views only while no memory has been freed."""
    s = rt.aclrtCreateStream()
    x, y = Vec(rt, np.ones(4, np.float32)), Vec(rt, np.zeros(4, np.float32))
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    y.adds(x, 1.0, s)
    model = rt.aclmdlRICaptureEnd(s)
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_array_equal(y.read(), np.full(4, 2))
    rt.aclrtMemcpy(x.ptr, 16, np.full(4, 5, np.float32), 16, ACL_MEMCPY_HOST_TO_DEVICE)
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_array_equal(y.read(), np.full(4, 6))  # read when it runs, through the same views
    rt.aclrtFree(x.ptr)
    assert rt.aclrtMalloc(16, 0) == x.ptr  # first fit: the very same address, a new allocation
    rt.aclmdlRIExecuteAsync(model, s)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(s)
    assert info.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR and f"{x.ptr:#x}" in info.value.message
    np.testing.assert_array_equal(y.read(), np.full(4, 6))


async def test_replayed_kernels_share_views_of_the_same_memory(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    x, y = Vec(rt, np.ones(4, np.float32)), Vec(rt, np.zeros(4, np.float32))
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    for _ in range(100):
        y.adds(y, 1.0, s)  # fresh tensors and executors every time, naming the same memory
    model = rt.aclmdlRICaptureEnd(s)
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_array_equal(y.read(), np.full(4, 100))
    assert len(rt.ctx.machine.views) <= 4  # y read and y written, not a view per task
    rt.aclrtFree(x.ptr)
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_array_equal(y.read(), np.full(4, 200))


async def test_debug_json_print_is_chrome_trace(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    ext = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    x, y = Vec(rt, np.ones(4, np.float32)), Vec(rt, np.zeros(4, np.float32))
    rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    rt.aclrtStreamWaitEvent(s, ext)
    rt.aclrtResetEvent(ext, s)
    rt.aclmdlRICaptureTaskGrpBegin(s)
    y.adds(x, 1.0, s)
    handle = rt.aclmdlRICaptureTaskGrpEnd(s)
    model = rt.aclmdlRICaptureEnd(s)
    trace = json.loads(rt.aclmdlRIDebugJsonPrint(model, "model.json", 0))
    assert [e["args"]["Task Type"] for e in trace] == [
        aclmdlRITaskType.ACL_MODEL_RI_TASK_EVENT_WAIT.name,
        aclmdlRITaskType.ACL_MODEL_RI_TASK_EVENT_RESET.name,
        aclmdlRITaskType.ACL_MODEL_RI_TASK_KERNEL.name,
    ]
    assert all(
        e["ph"] == "X" and e["tid"] == "stream0" and e["args"]["Model Id"] == rt.aclmdlRIGetId(model) for e in trace
    )
    text = rt.aclmdlRIDebugPrint(model)
    assert f"task group {handle:#x}" in text and "aclnnAdds" in text
    with pytest.raises(AclError) as info:
        rt.aclmdlRIDebugJsonPrint(model, "x.json", 7)
    assert info.value.code == ACL_ERROR_INVALID_PARAM


async def test_updates_between_concurrent_replays_are_never_half_applied(rt: Runtime) -> None:
    """A replay loop on one stream, updates on another, guarded by the EXTERNAL event: every replay must see the
    three kernels of the group from the same update (they write the same value to three slices)."""
    s, u = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    ext = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    zero = Vec(rt, np.zeros(4, np.float32))
    outs = [Vec(rt, np.zeros(4, np.float32)) for _ in range(3)]
    snap = [Vec(rt, np.zeros(4, np.float32)) for _ in range(3)]
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    rt.aclrtStreamWaitEvent(s, ext)
    rt.aclrtResetEvent(ext, s)
    rt.aclmdlRICaptureTaskGrpBegin(s)
    for o in outs:
        o.adds(zero, 0.0, s)
    handle = rt.aclmdlRICaptureTaskGrpEnd(s)
    for o, c in zip(outs, snap, strict=True):
        c.adds(o, 0.0, s)
    model = rt.aclmdlRICaptureEnd(s)
    seen = []
    for i in range(1, 31):
        rt.aclmdlRIExecuteAsync(model, s)
        rt.aclmdlRICaptureTaskUpdateBegin(u, handle)
        for o in outs:
            o.adds(zero, float(i), u)
        rt.aclmdlRICaptureTaskUpdateEnd(u)
        rt.aclrtRecordEvent(ext, u)
        await rt.aclrtSynchronizeStream(u)
        await rt.aclrtSynchronizeStream(s)
        values = [float(c.read()[0]) for c in snap]
        assert len(set(values)) == 1, f"replay {i} saw a half-applied group: {values}"
        seen.append(values[0])
    assert seen == [float(i) for i in range(1, 31)]


async def test_an_update_racing_a_long_replay_is_all_or_nothing(rt: Runtime) -> None:
    """Without the event guard, an update may land while a replay is inside the group (its kernels are large
    enough to run on the kernel pool, so the loop runs the update in between): the replay still sees one version
    of the whole group."""
    s, u = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    n = rt.ctx.machine.offload_bytes // 4
    zero = Vec(rt, np.zeros(n, np.float32))
    outs = [Vec(rt, np.zeros(n, np.float32)) for _ in range(6)]
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    rt.aclmdlRICaptureTaskGrpBegin(s)
    for o in outs:
        o.adds(zero, 1.0, s)
    handle = rt.aclmdlRICaptureTaskGrpEnd(s)
    model = rt.aclmdlRICaptureEnd(s)
    for i in range(2, 12):
        rt.aclmdlRIExecuteAsync(model, s)
        await asyncio.sleep(0)
        rt.aclmdlRICaptureTaskUpdateBegin(u, handle)
        for o in outs:
            o.adds(zero, float(i), u)
        rt.aclmdlRICaptureTaskUpdateEnd(u)
        await asyncio.gather(rt.aclrtSynchronizeStream(s), rt.aclrtSynchronizeStream(u))
        firsts = {float(o.read()[0]) for o in outs}
        assert len(firsts) == 1, firsts
