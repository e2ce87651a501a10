"""The Build API (modelri spec 2): each check-order row with its exact code and proof that the model, the stream and
the context still work; then how a Build model runs (HEAD and DEFAULT lanes, switch over int32 and int64, activate,
loops, re-execution, pageable copies at build time, unbind, destroy)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import numpy as np
import pytest

from proto.constants import (
    ACL_EVENT_SYNC,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_STREAM_FLAG_DEFAULT,
    ACL_MODEL_STREAM_FLAG_HEAD,
    ACL_STOP_ON_FAILURE,
    ACL_STREAM_DEVICE_USE_ONLY,
    ACL_STREAM_FAST_LAUNCH,
    ACL_STREAM_PERSISTENT,
    aclrtCompareDataType,
    aclrtCondition,
    aclrtStreamStatus,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_CONTEXT,
    ACL_ERROR_RT_MODEL_EXECUTE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_MODEL,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    AclError,
)
from server.npu import Runtime
from server.npu.model.build import BuildLane, BuildModel
from server.npu.model.state import ModelKind, ModelStatus
from tests.server.npu.devicekit import Vec, counter_add, download, upload, upload_into

HEAD, DEFAULT = ACL_MODEL_STREAM_FLAG_HEAD, ACL_MODEL_STREAM_FLAG_DEFAULT
I32, I64 = aclrtCompareDataType.ACL_RT_SWITCH_INT32, aclrtCompareDataType.ACL_RT_SWITCH_INT64
EQ = aclrtCondition.ACL_RT_EQUAL
RNG = np.random.default_rng(7)


class Kit:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.x = Vec(rt, RNG.standard_normal(8).astype(np.float32))
        self.y = Vec(rt, np.zeros(8, np.float32))
        self.exec = rt.aclrtCreateStream()

    def persistent(self) -> int:
        return self.rt.aclrtCreateStreamWithConfig(0, ACL_STREAM_PERSISTENT)

    def fails(self, code: int, call: object, *args: object) -> AclError:
        with pytest.raises(AclError) as info:
            assert callable(call)
            call(*args)
        assert info.value.code == code, info.value
        return info.value

    async def afails(self, code: int, call: object, *args: object) -> AclError:
        with pytest.raises(AclError) as info:
            assert callable(call)
            await call(*args)
        assert info.value.code == code, info.value
        return info.value

    async def model(self, *streams: tuple[int, int]) -> int:
        model = self.rt.aclmdlRIBuildBegin(0)
        for stream, flag in streams:
            await self.rt.aclmdlRIBindStream(model, stream, flag)
        return model

    async def run(self, model: int) -> None:
        self.rt.aclmdlRIExecuteAsync(model, self.exec)
        await self.rt.aclrtSynchronizeStream(self.exec)

    async def works(self, model: int | None = None, stream: int | None = None) -> None:
        """Finish (or make) a one-stream model computing y = x + 3, run it twice and check y."""
        if model is None:
            stream = self.persistent()
            model = await self.model((stream, HEAD))
        assert stream is not None
        self.y.adds(self.x, 3.0, stream)
        self.rt.aclmdlRIEndTask(model, stream)
        self.rt.aclmdlRIBuildEnd(model, None)
        for _ in range(2):
            await self.run(model)
            np.testing.assert_allclose(self.y.read(), self.x.read().astype(np.float64) + 3.0, rtol=1e-6)
        await self.rt.aclrtSynchronizeStream(self.exec)


@pytest.fixture
async def kit(rt: Runtime) -> AsyncIterator[Kit]:
    yield Kit(rt)


def build(rt: Runtime, model: int) -> BuildModel:
    found = rt.ctx.models[model]
    assert isinstance(found, BuildModel)
    return found


# --- BuildBegin -----------------------------------------------------------------------------------------------


async def test_build_begin_makes_an_empty_build_model(kit: Kit) -> None:
    kit.fails(ACL_ERROR_RT_PARAM_INVALID, kit.rt.aclmdlRIBuildBegin, 1)
    model = kit.rt.aclmdlRIBuildBegin(0)
    found = build(kit.rt, model)
    assert (found.kind, found.status, found.lanes, found.state) == (ModelKind.BUILD, ModelStatus.NONE, [], "built")
    s = kit.persistent()
    await kit.rt.aclmdlRIBindStream(model, s, HEAD)
    await kit.works(model, s)


# --- BindStream -----------------------------------------------------------------------------------------------


async def test_bind_keeps_the_latest_stream_first_with_its_flag(kit: Kit) -> None:
    a, b, c = kit.persistent(), kit.persistent(), kit.persistent()
    model = await kit.model((a, HEAD), (b, DEFAULT), (c, HEAD))
    lanes = build(kit.rt, model).lanes
    assert [lane.stream_handle for lane in lanes] == [c, b, a]
    assert all(isinstance(lane, BuildLane) for lane in lanes)
    assert [lane.flag for lane in lanes if isinstance(lane, BuildLane)] == [HEAD, DEFAULT, HEAD]
    await kit.works(model, a)


async def test_bind_check_order(kit: Kit) -> None:
    rt = kit.rt
    model, s = rt.aclmdlRIBuildBegin(0), kit.persistent()
    await kit.afails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRIBindStream, 0, s, HEAD)
    await kit.afails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIBindStream, model, s, 1)
    await kit.afails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIBindStream, 0x7654321, s, 5)  # the flag comes first
    dead = rt.aclmdlRIBuildBegin(0)
    await rt.aclmdlRIDestroy(dead)
    error = await kit.afails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIBindStream, dead, s, HEAD)
    assert "was destroyed" in error.message
    gone = kit.persistent()
    await rt.aclrtDestroyStream(gone)
    await kit.afails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIBindStream, model, gone, HEAD)
    plain = rt.aclrtCreateStream()
    error = await kit.afails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIBindStream, model, plain, HEAD)
    assert "ACL_STREAM_PERSISTENT" in error.message
    await kit.afails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIBindStream, model, 0, HEAD)  # NULL: vnpu's choice
    assert build(rt, model).lanes == []
    await rt.aclmdlRIBindStream(model, s, HEAD)
    other = rt.aclmdlRIBuildBegin(0)
    for target in (model, other):
        error = await kit.afails(ACL_ERROR_RT_STREAM_MODEL, rt.aclmdlRIBindStream, target, s, DEFAULT)
        assert "already bound" in error.message
    assert build(rt, other).lanes == [] and len(build(rt, model).lanes) == 1
    await kit.works(model, s)


async def test_bind_refuses_a_capture_model_and_a_capturing_stream(kit: Kit) -> None:
    rt = kit.rt
    origin, s = rt.aclrtCreateStream(), kit.persistent()
    rt.aclmdlRICaptureBegin(origin, 0)
    captured = rt.aclmdlRICaptureGetInfo(origin)[1]
    error = await kit.afails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIBindStream, captured, s, HEAD)
    assert "captured model" in error.message
    kit.y.adds(kit.x, 1.0, origin)
    rt.aclmdlRIExecuteAsync(rt.aclmdlRICaptureEnd(origin), kit.exec)  # the capture was not disturbed
    await rt.aclrtSynchronizeStream(kit.exec)
    np.testing.assert_allclose(kit.y.read(), kit.x.read() + 1.0, rtol=1e-6)
    model = rt.aclmdlRIBuildBegin(0)
    rt.aclmdlRICaptureBegin(s, 0)
    await kit.afails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclmdlRIBindStream, model, s, HEAD)
    await rt.aclmdlRIDestroy(rt.aclmdlRICaptureEnd(s))
    await rt.aclmdlRIBindStream(model, s, HEAD)
    await kit.works(model, s)


@pytest.mark.parametrize(
    ("flags", "code"),
    [
        (ACL_STREAM_PERSISTENT | ACL_STREAM_DEVICE_USE_ONLY, ACL_ERROR_RT_INTERNAL_ERROR),
        (ACL_STREAM_PERSISTENT | ACL_STREAM_FAST_LAUNCH, ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
    ],
)
async def test_bind_refuses_streams_a_model_cannot_drive(kit: Kit, flags: int, code: int) -> None:
    model = kit.rt.aclmdlRIBuildBegin(0)
    await kit.afails(code, kit.rt.aclmdlRIBindStream, model, kit.rt.aclrtCreateStreamWithConfig(0, flags), HEAD)
    assert build(kit.rt, model).lanes == []
    s = kit.persistent()
    await kit.rt.aclmdlRIBindStream(model, s, HEAD)
    await kit.works(model, s)


async def test_bind_refuses_a_stream_in_stop_on_failure_mode(kit: Kit) -> None:
    rt = kit.rt
    model, s = rt.aclmdlRIBuildBegin(0), kit.persistent()
    rt.aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE)
    error = await kit.afails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclmdlRIBindStream, model, s, HEAD)
    assert "ACL_STOP_ON_FAILURE" in error.message
    rt.aclrtCreateContext(0)  # a context of its own, whose streams are not in STOP mode
    await kit.works()


async def test_a_model_of_another_acl_context(kit: Kit) -> None:
    rt = kit.rt
    primary = rt.aclrtGetCurrentContext()
    model = rt.aclmdlRIBuildBegin(0)
    mine = kit.persistent()
    rt.aclrtCreateContext(0)
    theirs = kit.persistent()
    await kit.afails(ACL_ERROR_RT_MODEL_CONTEXT, rt.aclmdlRIBindStream, model, theirs, HEAD)
    kit.fails(ACL_ERROR_RT_MODEL_CONTEXT, rt.aclmdlRIBuildEnd, model, None)
    kit.fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclmdlRIEndTask, model, mine)
    rt.aclrtSetCurrentContext(primary)
    await rt.aclmdlRIBindStream(model, mine, HEAD)
    await kit.works(model, mine)


# --- EndTask, BuildEnd ----------------------------------------------------------------------------------------


async def test_end_task_check_order(kit: Kit) -> None:
    rt = kit.rt
    s, unbound = kit.persistent(), kit.persistent()
    model = await kit.model((s, HEAD))
    kit.fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRIEndTask, 0, s)
    kit.fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIEndTask, 0x7654321, s)
    kit.fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIEndTask, model, 0x7654321)
    origin = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(origin, 0)
    captured = rt.aclmdlRICaptureGetInfo(origin)[1]
    kit.fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIEndTask, captured, s)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclmdlRIEndTask, model, origin)
    await rt.aclmdlRIDestroy(rt.aclmdlRICaptureEnd(origin))
    error = kit.fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclmdlRIEndTask, model, unbound)
    assert "is not bound to" in error.message
    kit.fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclmdlRIEndTask, model, 0)  # the default stream, never bound
    other = await kit.model((unbound, HEAD))
    kit.fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclmdlRIEndTask, model, unbound)  # bound, to another model
    await kit.works(model, s)
    error = kit.fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclmdlRIEndTask, model, s)
    assert "already has its end task" in error.message
    assert sum(len(lane.tasks) for lane in build(rt, model).lanes) == 2  # the kernel and the one end task
    await kit.works(other, unbound)


async def test_build_end_check_order(kit: Kit) -> None:
    rt = kit.rt
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    kit.fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRIBuildEnd, 0, None)
    kit.fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRIBuildEnd, model, 0x1000)
    kit.fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIBuildEnd, 0x7654321, None)
    origin = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(origin, 0)
    kit.fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIBuildEnd, rt.aclmdlRICaptureGetInfo(origin)[1], None)
    await rt.aclmdlRIDestroy(rt.aclmdlRICaptureEnd(origin))
    assert not build(rt, model).loaded
    await kit.works(model, s)
    rt.aclmdlRIBuildEnd(model, None)  # again: nothing changes
    await kit.run(model)


# --- Unbind ---------------------------------------------------------------------------------------------------


async def test_unbind_check_order(kit: Kit) -> None:
    rt = kit.rt
    s, loose = kit.persistent(), kit.persistent()
    model = await kit.model((s, HEAD))
    other = await kit.model((loose, HEAD))
    await kit.afails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRIUnbindStream, 0, s)
    await kit.afails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIUnbindStream, model, 0x7654321)
    origin = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(origin, 0)
    await kit.afails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIUnbindStream, rt.aclmdlRICaptureGetInfo(origin)[1], s)
    await kit.afails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclmdlRIUnbindStream, model, origin)
    await rt.aclmdlRIDestroy(rt.aclmdlRICaptureEnd(origin))
    await kit.afails(ACL_ERROR_RT_STREAM_MODEL, rt.aclmdlRIUnbindStream, model, 0)  # the default stream
    error = await kit.afails(ACL_ERROR_RT_STREAM_MODEL, rt.aclmdlRIUnbindStream, model, loose)
    assert f"bound to model {other:#x}" in error.message
    await kit.afails(ACL_ERROR_RT_STREAM_MODEL, rt.aclmdlRIUnbindStream, model, rt.aclrtCreateStream())
    primary = rt.aclrtGetCurrentContext()
    rt.aclrtCreateContext(0)
    await kit.afails(ACL_ERROR_RT_MODEL_CONTEXT, rt.aclmdlRIUnbindStream, model, s)
    rt.aclrtSetCurrentContext(primary)
    await kit.works(model, s)


async def test_an_unbound_stream_is_ordinary_again(kit: Kit) -> None:
    rt = kit.rt
    s, end = kit.persistent(), kit.persistent()
    model = await kit.model((s, HEAD), (end, DEFAULT))
    kit.y.adds(kit.x, 1.0, s)
    rt.aclrtActiveStream(end, s)
    rt.aclmdlRIEndTask(model, end)
    rt.aclmdlRIBuildEnd(model, None)
    await kit.run(model)
    await rt.aclmdlRIUnbindStream(model, s)
    assert [lane.stream_handle for lane in build(rt, model).lanes] == [end]
    kit.y.muls(kit.x, 2.0, s)  # runs now, like on any stream
    await rt.aclrtDestroyStream(s)
    np.testing.assert_allclose(kit.y.read(), kit.x.read().astype(np.float64) * 2.0, rtol=1e-6)
    error = await kit.afails(ACL_ERROR_RT_MODEL_EXECUTE, rt.aclmdlRIExecute, model, 5000)  # no HEAD lane is left
    assert "without reaching its end task" in error.message
    await rt.aclmdlRIUnbindStream(model, end)
    kit.fails(ACL_ERROR_RT_MODEL_EXECUTE, rt.aclmdlRIExecuteAsync, model, kit.exec)  # its end task went too


async def test_a_bound_stream_is_destroyed_after_its_model(kit: Kit) -> None:
    rt = kit.rt
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    error = await kit.afails(ACL_ERROR_RT_STREAM_MODEL, rt.aclrtDestroyStream, s)
    assert "aclmdlRIUnbindStream" in error.message
    await kit.afails(ACL_ERROR_RT_STREAM_MODEL, rt.aclrtDestroyStreamForce, s)
    await kit.works(model, s)
    await rt.aclmdlRIDestroy(model)
    assert not rt.ctx.bound
    kit.y.muls(kit.x, -1.0, s)
    await rt.aclrtDestroyStream(s)
    np.testing.assert_allclose(kit.y.read(), -kit.x.read(), rtol=1e-6)


# --- Tasks on bound streams -----------------------------------------------------------------------------------


async def test_bound_streams_keep_their_work(kit: Kit) -> None:
    rt = kit.rt
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    kit.y.adds(kit.x, 3.0, s)
    await rt.aclrtSynchronizeStream(s)  # a persistent stream: returns at once
    await rt.aclrtSynchronizeStreamWithTimeout(s, 10)
    assert rt.aclrtStreamQuery(s) == aclrtStreamStatus.ACL_STREAM_STATUS_COMPLETE
    np.testing.assert_array_equal(kit.y.read(), np.zeros(8))  # kept, not run
    rt.aclmdlRIEndTask(model, s)
    rt.aclmdlRIBuildEnd(model, None)
    await kit.run(model)
    np.testing.assert_allclose(kit.y.read(), kit.x.read().astype(np.float64) + 3.0, rtol=1e-6)


async def test_a_pageable_copy_runs_once_at_build_time(kit: Kit) -> None:
    rt = kit.rt
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    host = RNG.standard_normal(8).astype(np.float32)
    await rt.aclrtMemcpyAsync(kit.y.ptr, 32, host.view(np.uint8), 32, ACL_MEMCPY_HOST_TO_DEVICE, s)
    np.testing.assert_array_equal(kit.y.read(), host)  # done at once
    assert build(rt, model).lanes[0].tasks == []  # and not part of the model
    target = Vec(rt, np.zeros(8, np.float32))
    await rt.aclrtMemcpyAsync(target.ptr, 32, kit.y.ptr, 32, ACL_MEMCPY_DEVICE_TO_DEVICE, s)  # kept
    rt.aclmdlRIEndTask(model, s)
    rt.aclmdlRIBuildEnd(model, None)
    upload_into(rt, kit.y.ptr, host * 2)
    await kit.run(model)
    np.testing.assert_array_equal(target.read(), host * 2)  # the device copy reads memory when it runs


async def test_events_on_bound_streams(kit: Kit) -> None:
    rt = kit.rt
    a, b, c = kit.persistent(), kit.persistent(), kit.persistent()
    model = await kit.model((a, HEAD), (b, HEAD), (c, DEFAULT))
    for event in (rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC), rt.aclrtCreateEvent()):
        error = kit.fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtRecordEvent, event, a)
        assert "aclrtCreateEventWithFlag(ACL_EVENT_SYNC)" in error.message
        kit.fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtStreamWaitEvent, b, event)
    assert all(lane.tasks == [] for lane in build(rt, model).lanes)
    event = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)  # a binary event: lane b waits for lane a's record
    rt.aclrtStreamWaitEvent(b, event)
    kit.y.muls(kit.y, 2.0, b)
    rt.aclrtResetEvent(event, b)
    rt.aclrtActiveStream(c, b)
    kit.y.adds(kit.x, 1.0, a)
    rt.aclrtRecordEvent(event, a)
    rt.aclmdlRIEndTask(model, c)
    rt.aclmdlRIBuildEnd(model, None)
    for _ in range(2):
        await kit.run(model)
        np.testing.assert_allclose(kit.y.read(), (kit.x.read().astype(np.float64) + 1.0) * 2.0, rtol=1e-6)


async def test_a_bound_stream_cannot_capture_or_execute(kit: Kit) -> None:
    rt = kit.rt
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    error = kit.fails(ACL_ERROR_RT_STREAM_MODEL, rt.aclmdlRICaptureBegin, s, 0)
    assert "cannot capture" in error.message
    assert rt.aclmdlRICaptureGetInfo(s) == (0, 0)
    other = await kit.model()
    error = kit.fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIExecuteAsync, other, s)
    assert "ordinary stream" in error.message
    kit.fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIExecuteAsync, model, s)  # its own model too
    await kit.works(model, s)


# --- ActiveStream and SwitchStream checks ---------------------------------------------------------------------


async def test_active_stream_check_order(kit: Kit) -> None:
    rt = kit.rt
    a, b, loose, stranger = kit.persistent(), kit.persistent(), kit.persistent(), kit.persistent()
    model = await kit.model((a, HEAD), (b, DEFAULT))
    await kit.model((stranger, HEAD))
    kit.fails(ACL_ERROR_INVALID_PARAM, rt.aclrtActiveStream, 0, a)
    kit.fails(ACL_ERROR_INVALID_PARAM, rt.aclrtActiveStream, b, 0)
    kit.fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtActiveStream, 0x7654321, a)
    error = kit.fails(ACL_ERROR_RT_STREAM_MODEL, rt.aclrtActiveStream, b, loose)
    assert "stream" in error.message and "is not bound to a model" in error.message
    kit.fails(ACL_ERROR_RT_STREAM_MODEL, rt.aclrtActiveStream, loose, a)
    error = kit.fails(ACL_ERROR_RT_STREAM_MODEL, rt.aclrtActiveStream, stranger, a)
    assert "of its own model" in error.message
    assert all(lane.tasks == [] for lane in build(rt, model).lanes)
    rt.aclrtActiveStream(b, a)
    await kit.works(model, b)


async def test_stream_control_from_another_acl_context(kit: Kit) -> None:
    rt = kit.rt
    primary = rt.aclrtGetCurrentContext()
    a, b = kit.persistent(), kit.persistent()
    model = await kit.model((a, HEAD), (b, DEFAULT))
    n = upload(rt, np.array([1], np.int32))
    rt.aclrtCreateContext(0)
    kit.fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtActiveStream, b, a)
    kit.fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtSwitchStream, n, EQ, n, I32, b, 0, a)
    rt.aclrtSetCurrentContext(primary)
    rt.aclrtSwitchStream(n, EQ, n, I32, b, 0, a)
    await kit.works(model, b)


async def test_switch_stream_check_order(kit: Kit) -> None:
    rt = kit.rt
    a, b, loose = kit.persistent(), kit.persistent(), kit.persistent()
    model = await kit.model((a, HEAD), (b, DEFAULT))
    n = upload(rt, np.array([1, 0], np.int32))
    for args in (
        (0, EQ, n, I32, b, 0, a),
        (n, EQ, 0, I32, b, 0, a),
        (n, EQ, n, I32, 0, 0, a),
        (n, EQ, n, I32, b, 0, 0),
    ):
        kit.fails(ACL_ERROR_INVALID_PARAM, rt.aclrtSwitchStream, *args)
    error = kit.fails(ACL_ERROR_INVALID_PARAM, rt.aclrtSwitchStream, n, EQ, n, I32, b, a, a)
    assert "falseStream must be NULL" in error.message
    kit.fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtSwitchStream, n, 6, n, I32, b, 0, a)
    kit.fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtSwitchStream, n, -1, n, I32, b, 0, a)
    kit.fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtSwitchStream, n, EQ, n, 2, b, 0, a)
    kit.fails(ACL_ERROR_RT_STREAM_MODEL, rt.aclrtSwitchStream, n, EQ, n, I32, loose, 0, a)
    kit.fails(ACL_ERROR_RT_STREAM_MODEL, rt.aclrtSwitchStream, n, EQ, n, I32, b, 0, loose)
    error = kit.fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtSwitchStream, 0x1000, EQ, n, I32, b, 0, a)
    assert "leftValue must be device memory" in error.message
    kit.fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtSwitchStream, n + 4, EQ, n, I64, b, 0, a)  # 8 bytes past the end
    assert all(lane.tasks == [] for lane in build(rt, model).lanes)
    rt.aclrtSwitchStream(n, EQ, n + 4, I32, b, 0, a)  # 1 == 0: false, a goes on
    rt.aclrtActiveStream(b, a)
    await kit.works(model, b)


# --- Execution ------------------------------------------------------------------------------------------------


async def test_execute_needs_an_end_task_and_build_end(kit: Kit) -> None:
    rt = kit.rt
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    kit.y.adds(kit.x, 3.0, s)
    error = kit.fails(ACL_ERROR_RT_MODEL_EXECUTE, rt.aclmdlRIExecuteAsync, model, kit.exec)
    assert "aclmdlRIEndTask" in error.message
    await kit.afails(ACL_ERROR_RT_MODEL_EXECUTE, rt.aclmdlRIExecute, model, -1)
    rt.aclmdlRIEndTask(model, s)
    error = kit.fails(ACL_ERROR_RT_MODEL_EXECUTE, rt.aclmdlRIExecuteAsync, model, kit.exec)
    assert "aclmdlRIBuildEnd" in error.message
    await kit.afails(ACL_ERROR_RT_MODEL_EXECUTE, rt.aclmdlRIExecute, model, -1)
    capturing = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(capturing, 0)
    rt.aclmdlRIBuildEnd(model, None)
    kit.fails(ACL_ERROR_RT_STREAM_CAPTURED, rt.aclmdlRIExecuteAsync, model, capturing)
    await rt.aclmdlRIDestroy(rt.aclmdlRICaptureEnd(capturing))
    assert build(rt, model).executions == 0
    await kit.afails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRIExecute, 0, -1)
    await kit.afails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIExecute, model, 0)
    await kit.afails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIExecute, model, -2)
    await rt.aclmdlRIExecute(model, 5000)
    np.testing.assert_allclose(kit.y.read(), kit.x.read().astype(np.float64) + 3.0, rtol=1e-6)
    rt.aclmdlRIExecuteAsync(model, 0)  # the default stream
    await rt.aclrtSynchronizeStream(0)
    assert build(rt, model).executions == 2


async def test_execute_timeout_is_a_stream_sync_timeout(kit: Kit) -> None:
    rt = kit.rt
    s, other = kit.persistent(), rt.aclrtCreateStream()
    model = await kit.model((s, HEAD))
    event = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, event)
    rt.aclrtResetEvent(event, s)
    kit.y.adds(kit.x, 3.0, s)
    rt.aclmdlRIEndTask(model, s)
    rt.aclmdlRIBuildEnd(model, None)
    error = await kit.afails(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, rt.aclmdlRIExecute, model, 50)
    assert "did not finish within 50 ms" in error.message
    rt.aclrtRecordEvent(event, other)  # the execution goes on and finishes
    await build(rt, model).wait_idle()
    np.testing.assert_allclose(kit.y.read(), kit.x.read().astype(np.float64) + 3.0, rtol=1e-6)
    rt.aclrtRecordEvent(event, other)
    await rt.aclmdlRIExecute(model, 5000)


async def test_a_failing_task_fails_the_execution_and_names_it(kit: Kit) -> None:
    rt = kit.rt
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    scratch = Vec(rt, np.zeros(8, np.float32))
    scratch.adds(kit.x, 1.0, s)
    kit.y.adds(kit.x, 3.0, s)
    rt.aclmdlRIEndTask(model, s)
    rt.aclmdlRIBuildEnd(model, None)
    rt.aclrtFree(scratch.ptr)
    rt.aclmdlRIExecuteAsync(model, kit.exec)
    error = await kit.afails(ACL_ERROR_RT_DEVICE_MEM_ERROR, rt.aclrtSynchronizeStream, kit.exec)
    assert f"model {model:#x}, task #0 of stream {s:#x}" in error.message
    np.testing.assert_allclose(kit.y.read(), kit.x.read().astype(np.float64) + 3.0, rtol=1e-6)  # its lane went on


# --- Replay semantics -----------------------------------------------------------------------------------------

CASES = [
    (aclrtCondition.ACL_RT_EQUAL, 5, 5, True),
    (aclrtCondition.ACL_RT_EQUAL, 5, 6, False),
    (aclrtCondition.ACL_RT_NOT_EQUAL, 5, 6, True),
    (aclrtCondition.ACL_RT_NOT_EQUAL, -3, -3, False),
    (aclrtCondition.ACL_RT_GREATER, 7, -7, True),
    (aclrtCondition.ACL_RT_GREATER, -7, 7, False),
    (aclrtCondition.ACL_RT_GREATER_OR_EQUAL, 4, 4, True),
    (aclrtCondition.ACL_RT_GREATER_OR_EQUAL, -5, 4, False),
    (aclrtCondition.ACL_RT_LESS, -(2**31), 0, True),
    (aclrtCondition.ACL_RT_LESS, 2**31 - 1, 0, False),
    (aclrtCondition.ACL_RT_LESS_OR_EQUAL, 9, 9, True),
    (aclrtCondition.ACL_RT_LESS_OR_EQUAL, 10, 9, False),
]


@pytest.mark.parametrize("data_type", [I32, I64])
@pytest.mark.parametrize(("cond", "left", "right", "holds"), CASES)
async def test_switch_jumps_when_the_condition_holds(
    kit: Kit, data_type: int, cond: int, left: int, right: int, holds: bool
) -> None:
    """s: y = x + 1, switch(left cond right -> t), y = y * 2; t: y = y - 5 (activate end); both end on `end`."""
    rt = kit.rt
    s, t, end = kit.persistent(), kit.persistent(), kit.persistent()
    model = await kit.model((s, HEAD), (t, DEFAULT), (end, DEFAULT))
    dtype = np.int32 if data_type == I32 else np.int64
    words = upload(rt, np.array([left, right], dtype))
    size = np.dtype(dtype).itemsize
    kit.y.adds(kit.x, 1.0, s)
    rt.aclrtSwitchStream(words, cond, words + size, data_type, t, None, s)
    kit.y.muls(kit.y, 2.0, s)
    rt.aclrtActiveStream(end, s)
    kit.y.adds(kit.y, -5.0, t)
    rt.aclrtActiveStream(end, t)
    rt.aclmdlRIEndTask(model, end)
    rt.aclmdlRIBuildEnd(model, None)
    await kit.run(model)
    x = kit.x.read().astype(np.float64)
    np.testing.assert_allclose(kit.y.read(), x + 1.0 - 5.0 if holds else (x + 1.0) * 2.0, rtol=1e-5, atol=1e-6)


async def test_switch_compares_int64_words_in_full(kit: Kit) -> None:
    """2**32 + 1 and 1 agree in their low 32 bits: equal as int32, different as int64."""
    rt = kit.rt
    words = upload(rt, np.array([2**32 + 1, 1], np.int64))
    for data_type, jumped in ((I32, True), (I64, False)):
        s, t = kit.persistent(), kit.persistent()
        model = await kit.model((s, HEAD), (t, DEFAULT))
        rt.aclrtSwitchStream(words, EQ, words + 8, data_type, t, None, s)
        kit.y.adds(kit.x, 10.0, s)
        kit.y.adds(kit.x, 20.0, t)
        rt.aclmdlRIEndTask(model, t if jumped else s)
        rt.aclmdlRIBuildEnd(model, None)
        await kit.run(model)
        np.testing.assert_allclose(kit.y.read(), kit.x.read() + (20.0 if jumped else 10.0), rtol=1e-6)


async def test_switch_reads_the_words_at_every_execution(kit: Kit) -> None:
    rt = kit.rt
    s, t, end = kit.persistent(), kit.persistent(), kit.persistent()
    model = await kit.model((s, HEAD), (t, DEFAULT), (end, DEFAULT))
    flag, one = upload(rt, np.array([0], np.int32)), upload(rt, np.array([1], np.int32))
    rt.aclrtSwitchStream(flag, EQ, one, I32, t, None, s)
    kit.y.adds(kit.x, 1.0, s)
    rt.aclrtActiveStream(end, s)
    kit.y.adds(kit.x, 2.0, t)
    rt.aclrtActiveStream(end, t)
    rt.aclmdlRIEndTask(model, end)
    rt.aclmdlRIBuildEnd(model, None)
    for value, add in ((0, 1.0), (1, 2.0), (0, 1.0)):
        upload_into(rt, flag, np.array([value], np.int32))
        await kit.run(model)
        np.testing.assert_allclose(kit.y.read(), kit.x.read() + add, rtol=1e-6)


async def test_activate_runs_both_lanes(kit: Kit) -> None:
    rt = kit.rt
    s, t, end = kit.persistent(), kit.persistent(), kit.persistent()
    model = await kit.model((s, HEAD), (t, DEFAULT), (end, DEFAULT))
    z = Vec(rt, np.zeros(8, np.float32))
    rt.aclrtActiveStream(t, s)
    kit.y.adds(kit.x, 1.0, s)
    z.adds(kit.x, 2.0, t)
    rt.aclrtActiveStream(end, t)
    rt.aclmdlRIEndTask(model, end)
    rt.aclmdlRIBuildEnd(model, None)
    await kit.run(model)
    np.testing.assert_allclose(kit.y.read(), kit.x.read() + 1.0, rtol=1e-6)
    np.testing.assert_allclose(z.read(), kit.x.read() + 2.0, rtol=1e-6)


async def test_a_dormant_lane_does_not_run(kit: Kit) -> None:
    rt = kit.rt
    s, dormant = kit.persistent(), kit.persistent()
    model = await kit.model((s, HEAD), (dormant, DEFAULT))
    kit.y.adds(kit.x, 1.0, dormant)
    rt.aclmdlRIEndTask(model, s)
    rt.aclmdlRIBuildEnd(model, None)
    await kit.run(model)
    np.testing.assert_array_equal(kit.y.read(), np.zeros(8))


async def test_an_execution_that_never_reaches_its_end(kit: Kit) -> None:
    rt = kit.rt
    s, end = kit.persistent(), kit.persistent()
    model = await kit.model((s, HEAD), (end, DEFAULT))
    kit.y.adds(kit.x, 1.0, s)
    rt.aclmdlRIEndTask(model, end)
    rt.aclmdlRIBuildEnd(model, None)
    rt.aclmdlRIExecuteAsync(model, kit.exec)
    error = await kit.afails(ACL_ERROR_RT_MODEL_EXECUTE, rt.aclrtSynchronizeStream, kit.exec)
    assert f"started stream {end:#x}, which holds the aclmdlRIEndTask" in error.message
    np.testing.assert_allclose(kit.y.read(), kit.x.read() + 1.0, rtol=1e-6)  # the HEAD lane ran
    rt.aclrtActiveStream(end, s)  # work added after BuildEnd is kept too
    await kit.run(model)


async def test_a_loop_restarts_a_finished_lane(kit: Kit) -> None:
    """body: count += 1, then switch(count < 5 -> body) jumps back to itself; at 5 it goes on to activate end."""
    rt = kit.rt
    body, end = kit.persistent(), kit.persistent()
    model = await kit.model((body, HEAD), (end, DEFAULT))
    count, five = upload(rt, np.array([0], np.int64)), upload(rt, np.array([5], np.int64))
    counter_add(rt, count, 1, body)
    rt.aclrtSwitchStream(count, aclrtCondition.ACL_RT_LESS, five, I64, body, None, body)
    rt.aclrtActiveStream(end, body)
    rt.aclmdlRIEndTask(model, end)
    rt.aclmdlRIBuildEnd(model, None)
    await kit.run(model)
    assert download(rt, count, (1,), np.int64)[0] == 5
    await kit.run(model)  # memory is not reset: 6 is not < 5, one pass
    assert download(rt, count, (1,), np.int64)[0] == 6


async def test_a_running_lane_activated_again_runs_once(kit: Kit) -> None:
    rt = kit.rt
    a, b, worker = kit.persistent(), kit.persistent(), kit.persistent()
    model = await kit.model((a, HEAD), (b, HEAD), (worker, DEFAULT))
    count = upload(rt, np.array([0], np.int64))
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtActiveStream(worker, a)
    rt.aclrtActiveStream(worker, b)  # while worker waits on the gate: it is already active
    rt.aclrtRecordEvent(gate, b)
    rt.aclrtStreamWaitEvent(worker, gate)
    rt.aclrtResetEvent(gate, worker)
    counter_add(rt, count, 1, worker)
    rt.aclmdlRIEndTask(model, worker)
    rt.aclmdlRIBuildEnd(model, None)
    await kit.run(model)
    assert download(rt, count, (1,), np.int64)[0] == 1


async def test_executions_repeat_the_kept_work_and_later_work_waits(kit: Kit) -> None:
    rt = kit.rt
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    count = upload(rt, np.array([0], np.int64))
    counter_add(rt, count, 3, s)
    rt.aclmdlRIEndTask(model, s)
    rt.aclmdlRIBuildEnd(model, None)
    out = upload(rt, np.array([-1], np.int64))
    for _ in range(4):
        rt.aclmdlRIExecuteAsync(model, kit.exec)
    await rt.aclrtMemcpyAsync(out, 8, count, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, kit.exec)  # after the four executions
    await asyncio.wait_for(rt.aclrtSynchronizeStream(kit.exec), 10)
    assert download(rt, out, (1,), np.int64)[0] == 12
    assert build(rt, model).executions == 4
