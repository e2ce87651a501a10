"""Ten answers read in the runtime's code (GitHub hicann/runtime at 681ef761, the A2/A3 device), each where vnpu
answered otherwise before (issue 39); every refusal is followed by proof that the object still works."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from proto.constants import (
    ACL_EVENT_RECORD_EXTERNAL,
    ACL_EVENT_SYNC,
    ACL_EVENT_WAIT_EXTERNAL,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
    ACL_MODEL_STREAM_FLAG_HEAD,
    ACL_STOP_ON_FAILURE,
    ACL_STREAM_PERSISTENT,
    aclmdlRITaskType,
)
from proto.errors import (
    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_EXECUTE,
    ACL_ERROR_RT_STREAM_MODEL,
    AclError,
)
from server.npu import Runtime
from tests.server.npu.devicekit import Vec

T = aclmdlRITaskType
RELAXED = ACL_MODEL_RI_CAPTURE_MODE_RELAXED
RNG = np.random.default_rng(39)


def fails(code: int, call: Callable[..., Any], *args: Any) -> AclError:
    with pytest.raises(AclError) as caught:
        call(*args)
    assert caught.value.code == code, caught.value
    return caught.value


async def built(rt: Runtime, end: bool = True) -> tuple[int, int, Vec, Vec]:
    """A Build model on one HEAD stream computing y = x + 1 (with its end task unless `end` is False)."""
    stream = rt.aclrtCreateStreamWithConfig(0, ACL_STREAM_PERSISTENT)
    model = rt.aclmdlRIBuildBegin(0)
    await rt.aclmdlRIBindStream(model, stream, ACL_MODEL_STREAM_FLAG_HEAD)
    x, y = Vec(rt, RNG.standard_normal(8).astype(np.float32)), Vec(rt, np.zeros(8, np.float32))
    y.adds(x, 1.0, stream)
    if end:
        rt.aclmdlRIEndTask(model, stream)
    return model, stream, x, y


async def runs(rt: Runtime, model: int, x: Vec, y: Vec) -> None:
    on = rt.aclrtCreateStream()
    rt.aclmdlRIExecuteAsync(model, on)
    await rt.aclrtSynchronizeStream(on)
    np.testing.assert_allclose(y.read(), x.read().astype(np.float64) + 1.0, rtol=1e-6)


# 1, 2. src/runtime/feature/model/model.cc Model::LoadCompleteByStreamPrep: no stream bound is RT_ERROR_MODEL_STREAM
# (107005); no end task (endGraphNotify_ NULL on a STARS device) is RT_ERROR_MODEL_NOT_END (507011)


async def test_build_end_of_a_model_with_no_stream_is_107005(rt: Runtime) -> None:
    model = rt.aclmdlRIBuildBegin(0)
    error = fails(ACL_ERROR_RT_STREAM_MODEL, rt.aclmdlRIBuildEnd, model, None)
    assert "aclmdlRIBindStream" in error.message
    stream = rt.aclrtCreateStreamWithConfig(0, ACL_STREAM_PERSISTENT)
    await rt.aclmdlRIBindStream(model, stream, ACL_MODEL_STREAM_FLAG_HEAD)
    rt.aclmdlRIEndTask(model, stream)
    rt.aclmdlRIBuildEnd(model, None)  # the model was left as it was


async def test_build_end_without_an_end_task_is_507011(rt: Runtime) -> None:
    model, stream, x, y = await built(rt, end=False)
    error = fails(ACL_ERROR_RT_MODEL_EXECUTE, rt.aclmdlRIBuildEnd, model, None)
    assert "aclmdlRIEndTask" in error.message
    rt.aclmdlRIEndTask(model, stream)
    rt.aclmdlRIBuildEnd(model, None)
    await runs(rt, model, x, y)


# 3, 4. src/runtime/core/src/task/task_info/memory/memory_task.cc GetCaptureRecordTaskParams and
# GetCaptureWaitTaskParams (reached from src/runtime/api/impl/api_impl.cc ApiImpl::TaskGetParams for the
# CAPTURE_RECORD_EXTERNAL and CAPTURE_WAIT_EXTERNAL tasks): EVENT_RECORD with recordFlag 1, EVENT_WAIT with waitFlag 1;
# kernel_utils.cc ConvertTaskType leaves them DEFAULT for aclmdlRITaskGetType


async def test_task_params_of_external_record_and_wait_tasks(rt: Runtime) -> None:
    stream, event, waited = rt.aclrtCreateStream(), *(rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) for _ in "ab")
    rt.aclmdlRICaptureBegin(stream, RELAXED)
    rt.aclrtStreamWaitEventWithFlag(stream, waited, 0, ACL_EVENT_WAIT_EXTERNAL)
    rt.aclrtRecordEventWithFlag(event, stream, ACL_EVENT_RECORD_EXTERNAL)
    model = rt.aclmdlRICaptureEnd(stream)
    lanes, _ = rt.aclmdlRIGetStreams(model, True, 4)
    wait, record = rt.aclmdlRIGetTasksByStream(lanes[0], True, 4)[0]
    assert [rt.aclmdlRITaskGetType(t) for t in (wait, record)] == [T.ACL_MODEL_RI_TASK_DEFAULT] * 2
    got = rt.aclmdlRITaskGetParams(record)
    assert got["type"] == T.ACL_MODEL_RI_TASK_EVENT_RECORD == 2
    assert got["eventRecordTaskParams"] == {"event": event, "eventFlag": ACL_EVENT_SYNC, "recordFlag": 1}
    got = rt.aclmdlRITaskGetParams(wait)
    assert got["type"] == T.ACL_MODEL_RI_TASK_EVENT_WAIT == 3
    assert got["eventWaitTaskParams"] == {"event": waited, "eventFlag": ACL_EVENT_SYNC, "waitFlag": 1}
    rt.aclmdlRIExecuteAsync(model, stream)
    await rt.aclrtSynchronizeStream(stream)


# 5. src/runtime/api/api_c_standard_soc.cc rtModelGetStreams validates the handle, then numStreams; then
# src/runtime/api/impl/api_error.cc ApiErrorDecorator::ModelGetStreams refuses a sub ACL graph (207000)


async def test_get_streams_of_a_sub_model_is_207000(rt: Runtime) -> None:
    stream, body = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(stream, RELAXED)
    _, parent = rt.aclmdlRICaptureGetInfo(stream)
    cond = rt.aclmdlRICondHandleCreate(parent, 0, 0)
    (sub,) = rt.aclmdlRIAddCondTask({"handle": cond, "type": 0, "size": 1}, stream, 0)
    rt.aclmdlRICaptureToModelRIBegin(body, sub, RELAXED)
    rt.aclmdlRICaptureEnd(body)
    rt.aclmdlRICaptureEnd(stream)
    error = fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclmdlRIGetStreams, sub, True, 4)
    assert "sub-model" in error.message
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclmdlRIGetStreams, sub, False, 0)
    assert rt.aclmdlRIGetStreams(parent, False, 0)[1] == 1


# 6. src/runtime/api/api_c_memory.cc rtsValueWrite / rtsValueWait validate the stream handle
# (RT_VALIDATE_AND_UNWRAP_OBJECT: 107017) before ApiErrorDecorator::MemWriteValue / MemWaitValue check the flag


async def test_value_write_and_wait_validate_the_stream_before_the_flag(rt: Runtime) -> None:
    word, gone = rt.aclrtMalloc(8, 0), rt.aclrtCreateStream()
    await rt.aclrtDestroyStream(gone)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtValueWrite, word, 5, 1, gone)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtValueWait, word, 5, 9, gone)
    stream = rt.aclrtCreateStream()
    rt.aclrtValueWrite(word, 5, 0, stream)
    await rt.aclrtSynchronizeStream(stream)
    out = bytearray(8)
    rt.aclrtMemcpy(out, 8, word, 8, 2)
    assert int.from_bytes(out, "little") == 5


# 7. src/runtime/api/api_c.cc rtNotifyRecord (and every notify call) validates the handle first:
# RT_VALIDATE_AND_UNWRAP_OBJECT(notify, Notify, ...) answers 107017 for a destroyed notify


async def test_notify_calls_on_a_destroyed_notify_are_107017(rt: Runtime) -> None:
    notify, stream = rt.aclrtCreateNotify(0), rt.aclrtCreateStream()
    rt.aclrtDestroyNotify(notify)
    for call, args in (
        (rt.aclrtRecordNotify, (notify, stream)),
        (rt.aclrtWaitAndResetNotify, (notify, stream, 0)),
        (rt.aclrtGetNotifyId, (notify,)),
        (rt.aclrtDestroyNotify, (notify,)),
    ):
        error = fails(ACL_ERROR_RT_INVALID_HANDLE, call, *args)
        assert "was destroyed" in error.message
    live = rt.aclrtCreateNotify(0)
    rt.aclrtRecordNotify(live, stream)
    rt.aclrtWaitAndResetNotify(live, stream, 0)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(stream), 5)


# 8. src/runtime/api/impl/api_impl.cc ApiImpl::StreamSetMode: a stream bound to a model (GetBindFlag) is
# RT_ERROR_FEATURE_NOT_SUPPORT (207000), before the same-mode shortcut


async def test_failure_mode_of_a_bound_stream_is_207000(rt: Runtime) -> None:
    model, stream, x, y = await built(rt)
    for mode in (ACL_STOP_ON_FAILURE, 0):
        error = fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtSetStreamFailureMode, stream, mode)
        assert f"model {model:#x}" in error.message
    rt.aclmdlRIBuildEnd(model, None)
    await runs(rt, model, x, y)
    rt.aclrtSetStreamFailureMode(rt.aclrtCreateStream(), ACL_STOP_ON_FAILURE)  # an ordinary stream may


# 9. src/runtime/core/src/context/context.cc Context::StreamAbort: a stream bound to a model is
# RT_ERROR_STREAM_INVALID (507000), after ApiImpl::StreamAbort's context check


async def test_abort_of_a_bound_stream_is_507000(rt: Runtime) -> None:
    model, stream, x, y = await built(rt)
    error = fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtStreamAbort, stream)
    assert f"model {model:#x}" in error.message
    rt.aclmdlRIBuildEnd(model, None)
    await runs(rt, model, x, y)


# 10. src/runtime/core/src/event/event.cc Event::ElapsedTime: an event with no record is RT_ERROR_EVENT_RECORDER_NULL
# (507000); one whose record has not run has no timestamp yet, RT_ERROR_EVENT_TIMESTAMP_INVALID (107006)


async def test_elapsed_time_of_a_never_recorded_event_is_507000(rt: Runtime) -> None:
    start, end, stream = rt.aclrtCreateEvent(), rt.aclrtCreateEvent(), rt.aclrtCreateStream()
    rt.aclrtRecordEvent(start, stream)
    await rt.aclrtSynchronizeStream(stream)
    error = fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtEventElapsedTime, start, end)
    assert "never recorded" in error.message
    fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtEventElapsedTime, end, start)
    word = rt.aclrtMalloc(8, 0)
    rt.aclrtMemcpy(word, 8, np.zeros(1, np.uint64), 8, ACL_MEMCPY_HOST_TO_DEVICE)
    rt.aclrtValueWait(word, 1, 1, stream)  # holds the stream: the record below cannot run yet
    rt.aclrtRecordEvent(end, stream)
    fails(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, rt.aclrtEventElapsedTime, start, end)
    rt.aclrtMemcpy(word, 8, np.ones(1, np.uint64), 8, ACL_MEMCPY_HOST_TO_DEVICE)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(stream), 5)
    assert rt.aclrtEventElapsedTime(start, end) >= 0.0
