"""Introspection and editing of a captured model (spec-modelri 3): every check-order row with its exact code,
then proof that the stream, the model (or, once FAULT, a fresh one) and the context still work; the status
machine (READY -> UPDATING -> READY, FAULT for good); edits visible at once to the Get calls and to replays only
after aclmdlRIUpdate; grouped kernels; conversions into value tasks; disabled tasks removed."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from proto.aclnn import KernelDesc, aclCreateScalar, aclnnAddsGetWorkspaceSize
from proto.constants import (
    ACL_EVENT_SYNC,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
    aclDataType,
    aclmdlRITaskType,
    aclrtLaunchKernelAttrId,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_EXECUTE,
    ACL_ERROR_RT_MODEL_UPDATE_FAILED,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu import Runtime
from server.npu.model.state import ModelStatus
from tests.server.npu.devicekit import Vec, read_bytes

T = aclmdlRITaskType
A = aclrtLaunchKernelAttrId
F32 = aclDataType.ACL_FLOAT
N = 8
RNG = np.random.default_rng(11)


class Setup:
    """Captured on s: a = x + 1 (Adds), copy b <- a (memcpy), group{ c = b * 2, d = c * 3 } (Muls), w = value."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.s = rt.aclrtCreateStream()
        self.x0 = RNG.standard_normal(N).astype(np.float32)
        self.x, self.a, self.b, self.c, self.d = (Vec(rt, v) for v in [self.x0] + [np.zeros(N, np.float32)] * 4)
        self.word = rt.aclrtMalloc(64, 0)
        rt.aclmdlRICaptureBegin(self.s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        self.a.adds(self.x, 1.0, self.s)

    async def finish(self) -> None:
        rt, s = self.rt, self.s
        await rt.aclrtMemcpyAsync(self.b.ptr, N * 4, self.a.ptr, N * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s)
        rt.aclmdlRICaptureTaskGrpBegin(s)
        self.c.muls(self.b, 2.0, s)
        self.d.muls(self.c, 3.0, s)
        self.group = rt.aclmdlRICaptureTaskGrpEnd(s)
        rt.aclrtValueWrite(self.word, 7, 0, s)
        self.model = rt.aclmdlRICaptureEnd(s)
        (self.lane,), _ = rt.aclmdlRIGetStreams(self.model, True, 1)
        tasks, _ = rt.aclmdlRIGetTasksByStream(self.lane, True, 8)
        self.adds, self.copy, self.mul1, self.mul2, self.value = tasks

    async def replay(self) -> None:
        self.rt.aclmdlRIExecuteAsync(self.model, self.s)
        await self.rt.aclrtSynchronizeStream(self.s)

    def word_value(self) -> int:
        return int(np.frombuffer(read_bytes(self.rt, self.word, 8), np.uint64)[0])


@pytest.fixture
async def m(rt: Runtime) -> Setup:
    setup = Setup(rt)
    await setup.finish()
    return setup


def code_of(call: Any, *args: Any) -> int:
    with pytest.raises(AclError) as caught:
        call(*args)
    assert caught.value.message  # every error says what and why
    return caught.value.code


async def still_works(rt: Runtime, s: int) -> None:
    """The stream runs work and the context captures and replays a fresh model."""
    src, dst = Vec(rt, RNG.standard_normal(N).astype(np.float32)), Vec(rt, np.zeros(N, np.float32))
    dst.adds(src, 2.5, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_allclose(dst.read(), src.read().astype(np.float64) + 2.5, rtol=1e-6)
    rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    dst.muls(src, -2.0, s)
    model = rt.aclmdlRICaptureEnd(s)
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_allclose(dst.read(), src.read().astype(np.float64) * -2.0, rtol=1e-6)
    await rt.aclmdlRIDestroy(model)


async def replays_as_captured(m: Setup) -> None:
    await m.replay()
    a = m.x0.astype(np.float64) + 1
    np.testing.assert_allclose(m.d.read(), a * 6, rtol=1e-6)
    assert m.word_value() == 7


def with_scalar(desc: KernelDesc, value: float) -> dict[str, Any]:
    return KernelDesc(desc.op, {**desc.args, "other": aclCreateScalar(value, F32)}, desc.workspace_size).to_wire()


def kernel_params(rt: Runtime, task: int, value: float) -> dict[str, Any]:
    params = rt.aclmdlRITaskGetParams(task)
    params["taskGrp"] = 0
    kernel = params["kernelTaskParams"]
    kernel["kernel"] = with_scalar(KernelDesc.from_wire(kernel["kernel"]), value)
    return params


# -- aclmdlRIGetStreams ---------------------------------------------------------------------------------------


async def test_get_streams_check_order(rt: Runtime, m: Setup) -> None:
    doomed = Setup(rt)
    await doomed.finish()
    await rt.aclmdlRIDestroy(doomed.model)
    assert code_of(rt.aclmdlRIGetStreams, doomed.model, True, 4) == ACL_ERROR_RT_INVALID_HANDLE
    assert code_of(rt.aclmdlRIGetStreams, doomed.model, True, None) == ACL_ERROR_RT_INVALID_HANDLE  # stale first
    assert code_of(rt.aclmdlRIGetStreams, m.model, True, None) == ACL_ERROR_RT_PARAM_INVALID
    assert code_of(rt.aclmdlRIGetStreams, None, True, 4) == ACL_ERROR_RT_PARAM_INVALID
    assert rt.aclmdlRIGetStreams(m.model, False, 0) == ([], 1)  # the count; the input is ignored
    assert code_of(rt.aclmdlRIGetStreams, m.model, True, 0) == ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY
    assert rt.aclmdlRIGetStreams(m.model, True, 5) == ([m.lane], 1)  # the same handle each time
    await replays_as_captured(m)
    await still_works(rt, m.s)


async def test_streams_most_recent_first_and_during_capture(rt: Runtime) -> None:
    s0, s1, s2 = (rt.aclrtCreateStream() for _ in range(3))
    fork, j1, j2 = (rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) for _ in range(3))
    v = [Vec(rt, RNG.standard_normal(N).astype(np.float32)) for _ in range(4)]
    rt.aclmdlRICaptureBegin(s0, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    _, model = rt.aclmdlRICaptureGetInfo(s0)
    v[1].muls(v[0], 2.0, s0)
    rt.aclrtRecordEvent(fork, s0)
    assert rt.aclmdlRIGetStreams(model, False, 0) == ([], 1)  # allowed while capturing
    rt.aclrtStreamWaitEvent(s1, fork)
    rt.aclrtStreamWaitEvent(s2, fork)
    v[2].adds(v[1], 1.0, s1)
    v[3].adds(v[1], 3.0, s2)
    rt.aclrtRecordEvent(j1, s1)
    rt.aclrtRecordEvent(j2, s2)
    rt.aclrtStreamWaitEvent(s0, j1)
    rt.aclrtStreamWaitEvent(s0, j2)
    streams, count = rt.aclmdlRIGetStreams(model, True, 3)
    assert count == 3
    assert rt.aclmdlRICaptureEnd(s0) == model
    sizes = [rt.aclmdlRIGetTasksByStream(h, False, 0)[1] for h in streams]
    assert sizes == [3, 3, 4]  # s2's lane, s1's lane, then the origin's (the runtime's push_front order)
    origin = rt.aclmdlRIGetTasksByStream(streams[2], True, 4)[0]
    kinds = [T.ACL_MODEL_RI_TASK_KERNEL, T.ACL_MODEL_RI_TASK_EVENT_RECORD] + [T.ACL_MODEL_RI_TASK_EVENT_WAIT] * 2
    assert [rt.aclmdlRITaskGetType(t) for t in origin] == kinds
    # sequence ids follow the model-wide capture order across the streams
    assert [rt.aclmdlRITaskGetSeqId(t) for t in origin] == [0, 1, 8, 9]
    side = rt.aclmdlRIGetTasksByStream(streams[1], True, 4)[0]
    assert [rt.aclmdlRITaskGetSeqId(t) for t in side] == [2, 4, 6]
    params = rt.aclmdlRITaskGetParams(origin[1])
    assert params["type"] == T.ACL_MODEL_RI_TASK_EVENT_RECORD
    assert params["eventRecordTaskParams"] == {"event": fork, "eventFlag": ACL_EVENT_SYNC, "recordFlag": 0}
    assert rt.aclmdlRITaskGetParams(origin[2])["eventWaitTaskParams"]["event"] == j1
    assert code_of(rt.aclmdlRITaskSetParams, origin[1], params) == ACL_ERROR_RT_PARAM_INVALID  # events: fixed


# -- aclmdlRIGetTasksByStream ---------------------------------------------------------------------------------


async def test_get_tasks_by_stream_check_order(rt: Runtime, m: Setup) -> None:
    gone = rt.aclrtCreateStream()
    await rt.aclrtDestroyStream(gone)
    assert code_of(rt.aclmdlRIGetTasksByStream, gone, True, 8) == ACL_ERROR_RT_INVALID_HANDLE
    assert code_of(rt.aclmdlRIGetTasksByStream, None, True, 8) == ACL_ERROR_RT_PARAM_INVALID  # not the default
    assert code_of(rt.aclmdlRIGetTasksByStream, m.lane, True, None) == ACL_ERROR_RT_PARAM_INVALID
    assert code_of(rt.aclmdlRIGetTasksByStream, m.s, True, 8) == ACL_ERROR_RT_PARAM_INVALID  # the user's stream
    assert rt.aclmdlRIGetTasksByStream(m.lane, False, 0) == ([], 5)  # a group's kernels count one by one
    assert code_of(rt.aclmdlRIGetTasksByStream, m.lane, True, 4) == ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY
    assert rt.aclmdlRIGetTasksByStream(m.lane, True, 9)[0] == [m.adds, m.copy, m.mul1, m.mul2, m.value]
    doomed = Setup(rt)
    await doomed.finish()
    await rt.aclmdlRIDestroy(doomed.model)
    assert code_of(rt.aclmdlRIGetTasksByStream, doomed.lane, True, 8) == ACL_ERROR_RT_INTERNAL_ERROR
    await replays_as_captured(m)
    await still_works(rt, m.s)


# -- aclmdlRITaskGetType / GetSeqId ---------------------------------------------------------------------------


async def test_get_type_and_seq_id(rt: Runtime, m: Setup) -> None:
    assert [rt.aclmdlRITaskGetType(t) for t in (m.adds, m.copy, m.mul1, m.mul2, m.value)] == [
        T.ACL_MODEL_RI_TASK_KERNEL,
        T.ACL_MODEL_RI_TASK_DEFAULT,  # a memcpy
        T.ACL_MODEL_RI_TASK_KERNEL,
        T.ACL_MODEL_RI_TASK_KERNEL,
        T.ACL_MODEL_RI_TASK_VALUE_WRITE,
    ]
    assert [rt.aclmdlRITaskGetSeqId(t) for t in (m.adds, m.copy, m.mul1, m.mul2, m.value)] == [0, 1, 2, 3, 4]
    assert code_of(rt.aclmdlRITaskGetType, None) == ACL_ERROR_RT_PARAM_INVALID
    assert code_of(rt.aclmdlRITaskGetSeqId, None) == ACL_ERROR_RT_PARAM_INVALID
    assert code_of(rt.aclmdlRITaskGetType, 0xDEAD) == ACL_ERROR_RT_PARAM_INVALID
    await rt.aclmdlRIDestroy(m.model)
    assert code_of(rt.aclmdlRITaskGetSeqId, m.adds) == ACL_ERROR_RT_INTERNAL_ERROR  # no model any more
    assert code_of(rt.aclmdlRITaskGetType, m.adds) == ACL_ERROR_RT_PARAM_INVALID  # no stream any more
    await still_works(rt, m.s)


# -- aclmdlRITaskGetParams ------------------------------------------------------------------------------------


async def test_get_params(rt: Runtime, m: Setup) -> None:
    assert code_of(rt.aclmdlRITaskGetParams, None) == ACL_ERROR_RT_PARAM_INVALID
    assert code_of(rt.aclmdlRITaskGetParams, m.copy) == ACL_ERROR_RT_PARAM_INVALID  # a memcpy has none
    grouped = rt.aclmdlRITaskGetParams(m.mul1)
    assert grouped["type"] == T.ACL_MODEL_RI_TASK_KERNEL and grouped["taskGrp"] == m.group
    kernel = grouped["kernelTaskParams"]
    assert kernel["cfg"] is None and kernel["isHostArgs"] == 0 and kernel["funcHandle"]
    block = json.loads(read_bytes(rt, kernel["args"], kernel["argsSize"]))  # the device argument block
    assert KernelDesc.from_wire(block) == KernelDesc.from_wire(kernel["kernel"])
    assert block["op"] == "Muls" and block["args"]["other"]["value"] == 2.0
    plain = rt.aclmdlRITaskGetParams(m.adds)
    assert plain["taskGrp"] == 0 and plain["opInfoPtr"] == 0 and plain["opInfoSize"] == 0
    assert plain["kernelTaskParams"]["funcHandle"] != kernel["funcHandle"]  # one handle per operator
    assert rt.aclmdlRITaskGetParams(m.mul2)["kernelTaskParams"]["funcHandle"] == kernel["funcHandle"]
    assert rt.aclmdlRITaskGetParams(m.value)["valueWriteTaskParams"] == {"devAddr": m.word, "value": 7}
    await replays_as_captured(m)
    await rt.aclmdlRIDestroy(m.model)
    assert code_of(rt.aclmdlRITaskGetParams, m.adds) == ACL_ERROR_RT_INTERNAL_ERROR
    await still_works(rt, m.s)


# -- aclmdlRITaskSetParams ------------------------------------------------------------------------------------


async def test_set_params_null_and_in_flight_leave_the_model_ready(rt: Runtime, m: Setup) -> None:
    params = kernel_params(rt, m.adds, 4.0)
    assert code_of(rt.aclmdlRITaskSetParams, None, params) == ACL_ERROR_RT_PARAM_INVALID
    assert code_of(rt.aclmdlRITaskSetParams, m.adds, None) == ACL_ERROR_RT_PARAM_INVALID
    blocker = rt.aclrtCreateEventWithFlag(0x20)  # EXTERNAL: the replay below waits for it
    other = rt.aclrtCreateStream()
    rt.aclrtStreamWaitEvent(other, blocker)
    rt.aclmdlRIExecuteAsync(m.model, other)  # queued behind the wait: in flight, not yet running
    assert code_of(rt.aclmdlRITaskSetParams, m.adds, params) == ACL_ERROR_RT_MODEL_UPDATE_FAILED
    assert code_of(rt.aclmdlRITaskDisable, m.adds) == ACL_ERROR_RT_MODEL_UPDATE_FAILED
    assert rt.ctx.models[m.model].status is ModelStatus.READY
    rt.aclrtRecordEvent(blocker, m.s)
    await rt.aclrtSynchronizeStream(other)
    rt.aclmdlRITaskSetParams(m.adds, params)  # nothing in flight now
    assert rt.ctx.models[m.model].status is ModelStatus.UPDATING
    rt.aclmdlRIUpdate(m.model)
    await m.replay()
    np.testing.assert_allclose(m.a.read(), m.x0.astype(np.float64) + 4.0, rtol=1e-6)


@pytest.mark.parametrize(
    "breaks",
    [
        "group",
        "event-type",
        "unknown-type",
        "not-a-kernel",
        "stale-func",
        "null-func",
        "null-args",
        "zero-size",
        "bad-cfg",
        "null-attrs",
        "other-op",
        "bad-memory",
        "value-on-default",
        "value-op-info",
    ],
)
async def test_set_params_failures_leave_the_model_fault(rt: Runtime, m: Setup, breaks: str) -> None:
    params = kernel_params(rt, m.mul1, 5.0)
    kernel = params["kernelTaskParams"]
    target = m.mul1
    code = ACL_ERROR_RT_PARAM_INVALID
    if breaks == "group":
        params["taskGrp"] = m.group  # the naive Get -> Set of a grouped kernel
    elif breaks == "event-type":
        params["type"] = T.ACL_MODEL_RI_TASK_EVENT_RECORD
    elif breaks == "unknown-type":
        params["type"] = 9
    elif breaks == "not-a-kernel":
        target = m.value
    elif breaks == "stale-func":
        kernel["funcHandle"], code = 0xBAD, ACL_ERROR_RT_INVALID_HANDLE
    elif breaks == "null-func":
        kernel["funcHandle"] = 0
    elif breaks == "null-args":
        kernel["kernel"], kernel["args"] = None, 0
    elif breaks == "zero-size":
        kernel["kernel"], kernel["argsSize"] = None, 0
    elif breaks == "bad-cfg":
        kernel["cfg"] = {"attrs": [{"id": 42, "value": 0}]}
    elif breaks == "null-attrs":
        kernel["cfg"] = {"attrs": None}
    elif breaks == "other-op":
        kernel["funcHandle"] = rt.aclmdlRITaskGetParams(m.adds)["kernelTaskParams"]["funcHandle"]
    elif breaks == "bad-memory":
        kernel["kernel"]["args"]["out"]["data"] = 0x10
    elif breaks == "value-on-default":
        target, params = m.copy, {"type": T.ACL_MODEL_RI_TASK_VALUE_WRITE, "valueWriteTaskParams": {
            "devAddr": m.word, "value": 1}}  # fmt: skip
    elif breaks == "value-op-info":
        params = {"type": T.ACL_MODEL_RI_TASK_VALUE_WRITE, "opInfoPtr": 0x1000, "opInfoSize": 8,
                  "valueWriteTaskParams": {"devAddr": m.word, "value": 1}}  # fmt: skip
    assert code_of(rt.aclmdlRITaskSetParams, target, params) == code
    assert rt.ctx.models[m.model].status is ModelStatus.FAULT
    # no way out of FAULT: only destroy helps
    assert code_of(rt.aclmdlRIExecuteAsync, m.model, m.s) == ACL_ERROR_RT_MODEL_EXECUTE
    assert code_of(rt.aclmdlRITaskSetParams, m.mul1, kernel_params(rt, m.mul1, 1.0)) == ACL_ERROR_RT_MODEL_UPDATE_FAILED
    assert code_of(rt.aclmdlRITaskDisable, m.adds) == ACL_ERROR_RT_MODEL_UPDATE_FAILED
    assert code_of(rt.aclmdlRIUpdate, m.model) == ACL_ERROR_RT_MODEL_UPDATE_FAILED
    await rt.aclmdlRIDestroy(m.model)
    await still_works(rt, m.s)


async def test_edits_take_effect_only_after_update(rt: Runtime, m: Setup) -> None:
    assert code_of(rt.aclmdlRIUpdate, None) == ACL_ERROR_RT_PARAM_INVALID
    rt.aclmdlRIUpdate(m.model)  # READY: nothing to do
    rt.aclmdlRITaskSetParams(m.mul1, kernel_params(rt, m.mul1, 10.0))  # taskGrp cleared: it stays in its group
    convert = {"type": T.ACL_MODEL_RI_TASK_VALUE_WRITE, "valueWriteTaskParams": {"devAddr": m.word, "value": 99}}
    rt.aclmdlRITaskSetParams(m.value, {**convert})
    rt.aclmdlRITaskSetParams(m.value, {"type": T.ACL_MODEL_RI_TASK_VALUE_WAIT,  # a write becomes a wait
                                       "valueWaitTaskParams": {"devAddr": m.word, "value": 0, "flag": 0}})  # fmt: skip
    assert rt.aclmdlRITaskGetType(m.value) == T.ACL_MODEL_RI_TASK_VALUE_WAIT  # the host copy, at once
    rt.aclmdlRITaskSetParams(m.value, convert)
    assert rt.aclmdlRITaskGetParams(m.value)["valueWriteTaskParams"]["value"] == 99
    assert rt.aclmdlRITaskGetParams(m.mul1)["kernelTaskParams"]["kernel"]["args"]["other"]["value"] == 10.0
    assert code_of(rt.aclmdlRIExecuteAsync, m.model, m.s) == ACL_ERROR_RT_MODEL_EXECUTE  # UPDATING
    with pytest.raises(AclError) as caught:  # capture models run through aclmdlRIExecuteAsync only (spec 8.1)
        await rt.aclmdlRIExecute(m.model, 1000)
    assert caught.value.code == ACL_ERROR_RT_PARAM_INVALID
    rt.aclmdlRIUpdate(m.model)
    assert rt.aclmdlRIGetTasksByStream(m.lane, True, 8)[0] == [m.adds, m.copy, m.mul1, m.mul2, m.value]  # stable
    assert rt.aclmdlRITaskGetSeqId(m.value) == 4
    await m.replay()
    a = m.x0.astype(np.float64) + 1
    np.testing.assert_allclose(m.d.read(), a * 30, rtol=1e-6)
    assert m.word_value() == 99
    # the edited grouped kernel kept its slot: a task update rewrites it again
    up = rt.aclrtCreateStream()
    rt.aclmdlRICaptureTaskUpdateBegin(up, m.group)
    m.c.muls(m.b, -1.0, up)
    m.d.muls(m.c, 0.5, up)
    rt.aclmdlRICaptureTaskUpdateEnd(up)
    await rt.aclrtSynchronizeStream(up)
    await m.replay()
    np.testing.assert_allclose(m.d.read(), a * -0.5, rtol=1e-6)
    assert rt.aclmdlRITaskGetSeqId(m.mul2) == 3  # kept across the group update
    await still_works(rt, m.s)


async def test_round_trips_through_the_argument_block(rt: Runtime, m: Setup) -> None:
    """C's way: no `kernel` field, the arguments read back from device memory, or taken from host bytes."""
    params = rt.aclmdlRITaskGetParams(m.adds)
    params["kernelTaskParams"]["kernel"] = None
    rt.aclmdlRITaskSetParams(m.adds, params)  # Get -> Set: the same kernel
    other = rt.aclmdlRITaskGetParams(m.mul2)  # mul1 gets mul2's arguments: d = c * 3, computed early
    other["taskGrp"] = 0
    text = read_bytes(rt, other["kernelTaskParams"]["args"], other["kernelTaskParams"]["argsSize"])
    edited = text.replace(b'"value":3.0', b'"value":-4.0')
    kernel = other["kernelTaskParams"]
    kernel.update(kernel=None, args=edited, isHostArgs=1, argsSize=len(edited))
    rt.aclmdlRITaskSetParams(m.mul2, other)
    rt.aclmdlRIUpdate(m.model)
    await m.replay()
    a = m.x0.astype(np.float64) + 1
    np.testing.assert_allclose(m.d.read(), a * 2 * -4.0, rtol=1e-6)


# -- aclmdlRITaskDisable --------------------------------------------------------------------------------------


async def test_disable(rt: Runtime, m: Setup) -> None:
    assert code_of(rt.aclmdlRITaskDisable, None) == ACL_ERROR_RT_PARAM_INVALID
    rt.aclmdlRITaskDisable(m.mul1)  # c keeps what it held: zeros
    rt.aclmdlRITaskDisable(m.value)
    rt.aclmdlRITaskSetParams(m.value, {"type": T.ACL_MODEL_RI_TASK_VALUE_WRITE,  # re-enabled by new parameters
                                       "valueWriteTaskParams": {"devAddr": m.word, "value": 5}})  # fmt: skip
    rt.aclmdlRIUpdate(m.model)
    assert rt.aclmdlRIGetTasksByStream(m.lane, True, 8)[0] == [m.adds, m.copy, m.mul2, m.value]
    assert code_of(rt.aclmdlRITaskGetParams, m.mul1) == ACL_ERROR_RT_PARAM_INVALID  # the handle dangles
    await m.replay()
    np.testing.assert_allclose(m.d.read(), np.zeros(N), rtol=0)
    assert m.word_value() == 5
    up = rt.aclrtCreateStream()  # the group has one kernel now
    rt.aclmdlRICaptureTaskUpdateBegin(up, m.group)
    m.d.muls(m.b, 7.0, up)
    rt.aclmdlRICaptureTaskUpdateEnd(up)
    await rt.aclrtSynchronizeStream(up)
    await m.replay()
    np.testing.assert_allclose(m.d.read(), (m.x0.astype(np.float64) + 1) * 7, rtol=1e-6)


async def test_disable_default_task_faults(rt: Runtime, m: Setup) -> None:
    assert code_of(rt.aclmdlRITaskDisable, m.copy) == ACL_ERROR_RT_PARAM_INVALID
    assert rt.ctx.models[m.model].status is ModelStatus.FAULT
    assert code_of(rt.aclmdlRIExecuteAsync, m.model, m.s) == ACL_ERROR_RT_MODEL_EXECUTE
    await rt.aclmdlRIDestroy(m.model)
    await still_works(rt, m.s)


async def test_a_lane_left_empty_gets_a_nop(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    src, dst = Vec(rt, RNG.standard_normal(N).astype(np.float32)), Vec(rt, np.zeros(N, np.float32))
    rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    dst.adds(src, 1.0, s)
    model = rt.aclmdlRICaptureEnd(s)
    (lane,), _ = rt.aclmdlRIGetStreams(model, True, 1)
    (only,), _ = rt.aclmdlRIGetTasksByStream(lane, True, 1)
    rt.aclmdlRITaskDisable(only)
    rt.aclmdlRIUpdate(model)
    (nop,), _ = rt.aclmdlRIGetTasksByStream(lane, True, 1)
    assert rt.aclmdlRITaskGetType(nop) == T.ACL_MODEL_RI_TASK_DEFAULT
    assert code_of(rt.aclmdlRITaskGetParams, nop) == ACL_ERROR_RT_PARAM_INVALID
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_array_equal(dst.read(), np.zeros(N, np.float32))


async def test_update_while_capturing(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    src, dst = Vec(rt, RNG.standard_normal(N).astype(np.float32)), Vec(rt, np.zeros(N, np.float32))
    rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    _, model = rt.aclmdlRICaptureGetInfo(s)
    assert code_of(rt.aclmdlRIUpdate, model) == ACL_ERROR_RT_MODEL_UPDATE_FAILED
    dst.adds(src, 1.0, s)
    (lane,), _ = rt.aclmdlRIGetStreams(model, True, 1)
    (task,), _ = rt.aclmdlRIGetTasksByStream(lane, True, 1)  # listed during the capture
    assert code_of(rt.aclmdlRITaskDisable, task) == ACL_ERROR_RT_MODEL_UPDATE_FAILED
    assert rt.aclmdlRICaptureEnd(s) == model
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_allclose(dst.read(), src.read().astype(np.float64) + 1, rtol=1e-6)


# -- aclmdlRIKernelTaskGetAttribute ---------------------------------------------------------------------------


async def test_kernel_attributes(rt: Runtime, m: Setup) -> None:
    get = rt.aclmdlRIKernelTaskGetAttribute
    assert code_of(get, None, A.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE) == ACL_ERROR_INVALID_PARAM
    assert code_of(get, m.copy, A.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE) == ACL_ERROR_RT_PARAM_INVALID
    defaults = {A.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE: 0, A.ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE: 0,
                A.ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP: 0, A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT: 1090,
                A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US: 1_090_922_000}  # fmt: skip
    assert {attr: get(m.adds, attr) for attr in defaults} == defaults
    for attr in (3, 4, 5, 9, 0, 10):  # ENGINE_TYPE, BLOCKDIM_OFFSET, BLOCK_TASK_PREFETCH, ENABLE_PROFILING, others
        assert code_of(get, m.adds, attr) == ACL_ERROR_RT_PARAM_INVALID
    params = rt.aclmdlRITaskGetParams(m.adds)
    params["kernelTaskParams"]["cfg"] = {"attrs": [
        {"id": A.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, "value": 1},
        {"id": A.ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP, "value": 1},
        {"id": A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, "value": 3},
    ]}  # fmt: skip
    rt.aclmdlRITaskSetParams(m.adds, params)  # visible at once, before aclmdlRIUpdate
    assert get(m.adds, A.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE) == 1
    assert get(m.adds, A.ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP) == 1
    assert get(m.adds, A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US) == 3_000_000
    params["kernelTaskParams"]["cfg"] = {"attrs": [{"id": A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US, "value": 0}]}
    rt.aclmdlRITaskSetParams(m.adds, params)
    assert get(m.adds, A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT) == 0  # never
    assert get(m.adds, A.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE) == 0  # not set this time
    params["kernelTaskParams"]["cfg"] = {"attrs": [{"id": A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US, "value": 2**40}]}
    rt.aclmdlRITaskSetParams(m.adds, params)
    assert get(m.adds, A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US) == 1_090_921_694  # capped to the hardware's most
    params["kernelTaskParams"]["cfg"] = None  # a plain Get -> Set drops the attributes
    rt.aclmdlRITaskSetParams(m.adds, params)
    assert {attr: get(m.adds, attr) for attr in defaults} == defaults
    rt.aclmdlRIUpdate(m.model)
    await replays_as_captured(m)


async def test_a_workspace_too_small_for_new_arguments(rt: Runtime, m: Setup) -> None:
    """The edited kernel keeps the task's workspace: arguments needing more are refused."""
    params = rt.aclmdlRITaskGetParams(m.adds)
    desc = KernelDesc.from_wire(params["kernelTaskParams"]["kernel"])
    _, ex = aclnnAddsGetWorkspaceSize(m.x.t, aclCreateScalar(1.0, F32), aclCreateScalar(1.0, F32), m.a.t)
    bigger = KernelDesc(desc.op, dict(ex.kernel.args), 4096)
    params["kernelTaskParams"]["kernel"] = bigger.to_wire()
    assert code_of(rt.aclmdlRITaskSetParams, m.adds, params) == ACL_ERROR_RT_PARAM_INVALID
    assert rt.ctx.models[m.model].status is ModelStatus.FAULT
    await rt.aclmdlRIDestroy(m.model)
    await still_works(rt, m.s)
