"""ACL_EVENT_RECORD_EXTERNAL / ACL_EVENT_WAIT_EXTERNAL in captured models (modelri spec 6): binding at launch, the
three scenarios of CANN's 4_model_sync_external sample, every check with its exact code (then proof that the
capture and the stream still work), and value write/wait tasks re-run by every replay."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from proto.constants import (
    ACL_EVENT_RECORD_EXTERNAL,
    ACL_EVENT_SYNC,
    ACL_EVENT_TIME_LINE,
    ACL_EVENT_WAIT_EXTERNAL,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
    ACL_STREAM_WAIT_VALUE_EQ,
    aclmdlRICaptureStatus,
    aclmdlRITaskType,
    aclrtStreamStatus,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_NOT_CAPTURED,
    ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
    AclError,
)
from server.npu import Runtime
from tests.server.npu.devicekit import Vec

RELAXED = ACL_MODEL_RI_CAPTURE_MODE_RELAXED
REC, WAIT = ACL_EVENT_RECORD_EXTERNAL, ACL_EVENT_WAIT_EXTERNAL
BUSY = aclrtStreamStatus.ACL_STREAM_STATUS_NOT_READY
RNG = np.random.default_rng(61)


def fails(code: int, fn: object, *args: object) -> AclError:
    with pytest.raises(AclError) as info:
        fn(*args)  # type: ignore[operator]
    assert info.value.code == code, info.value
    return info.value


class Gate:
    """A word of device memory that a stream waits on (aclrtValueWait EQ 1) until the test opens it."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.word = rt.aclrtMalloc(8, 0)
        self.close()

    def close(self) -> None:
        self.rt.aclrtMemcpy(self.word, 8, np.zeros(1, np.uint64), 8, ACL_MEMCPY_HOST_TO_DEVICE)

    def hold(self, stream: int) -> None:
        self.rt.aclrtValueWait(self.word, 1, ACL_STREAM_WAIT_VALUE_EQ, stream)

    def open(self) -> None:
        self.rt.aclrtMemcpy(self.word, 8, np.ones(1, np.uint64), 8, ACL_MEMCPY_HOST_TO_DEVICE)


class Setup:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.graph, self.outside, self.other = (rt.aclrtCreateStream() for _ in range(3))
        self.event = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
        self.src = Vec(rt, RNG.standard_normal(8).astype(np.float32))
        self.dst = Vec(rt, np.zeros(8, np.float32))
        self.gate = Gate(rt)

    async def copy(self, stream: int) -> None:
        await self.rt.aclrtMemcpyAsync(self.dst.ptr, 32, self.src.ptr, 32, ACL_MEMCPY_DEVICE_TO_DEVICE, stream)

    async def settle(self) -> None:
        for _ in range(30):
            await asyncio.sleep(0)

    async def done(self, *streams: int) -> None:
        for s in streams:
            await asyncio.wait_for(self.rt.aclrtSynchronizeStream(s), 5)


@pytest.fixture
async def k(rt: Runtime) -> Setup:
    return Setup(rt)


# --- the three scenarios of the S4 sample ----------------------------------------------------------------------


async def test_scenario_1_stream_record_then_graph_wait_external(rt: Runtime, k: Setup) -> None:
    rt.aclmdlRICaptureBegin(k.graph, RELAXED)
    rt.aclrtStreamWaitEventWithFlag(k.graph, k.event, 0, WAIT)
    await k.copy(k.graph)
    model = rt.aclmdlRICaptureEnd(k.graph)
    k.gate.hold(k.outside)  # the outside record has not run when the graph is launched
    rt.aclrtRecordEvent(k.event, k.outside)
    rt.aclmdlRIExecuteAsync(model, k.graph)
    await k.settle()
    assert rt.aclrtStreamQuery(k.graph) == BUSY and not k.dst.read().any()  # the replay waits for that record
    k.gate.open()
    await k.done(k.outside, k.graph)
    np.testing.assert_array_equal(k.dst.read(), k.src.read())


async def test_scenario_2_graph_record_external_then_stream_wait(rt: Runtime, k: Setup) -> None:
    out = Vec(rt, np.zeros(8, np.float32))
    rt.aclmdlRICaptureBegin(k.graph, RELAXED)
    k.gate.hold(k.graph)
    await k.copy(k.graph)
    rt.aclrtRecordEventWithFlag(k.event, k.graph, REC)
    model = rt.aclmdlRICaptureEnd(k.graph)
    rt.aclmdlRIExecuteAsync(model, k.graph)
    rt.aclrtStreamWaitEvent(k.outside, k.event)  # after the launch: waits for this replay's record
    await rt.aclrtMemcpyAsync(out.ptr, 32, k.dst.ptr, 32, ACL_MEMCPY_DEVICE_TO_DEVICE, k.outside)
    await k.settle()
    assert rt.aclrtStreamQuery(k.outside) == BUSY
    k.gate.open()
    await k.done(k.graph, k.outside)
    np.testing.assert_array_equal(out.read(), k.src.read())


async def test_scenario_3_graph1_record_external_then_graph2_wait_external(rt: Runtime, k: Setup) -> None:
    rt.aclmdlRICaptureBegin(k.graph, RELAXED)
    k.gate.hold(k.graph)
    rt.aclrtRecordEventWithFlag(k.event, k.graph, REC)
    first = rt.aclmdlRICaptureEnd(k.graph)
    rt.aclmdlRICaptureBegin(k.other, RELAXED)
    rt.aclrtStreamWaitEventWithFlag(k.other, k.event, 0, WAIT)  # the same event, another graph: allowed
    await k.copy(k.other)
    second = rt.aclmdlRICaptureEnd(k.other)
    rt.aclmdlRIExecuteAsync(first, k.graph)
    rt.aclmdlRIExecuteAsync(second, k.other)
    await k.settle()
    assert rt.aclrtStreamQuery(k.other) == BUSY and not k.dst.read().any()
    k.gate.open()
    await k.done(k.graph, k.other)
    np.testing.assert_array_equal(k.dst.read(), k.src.read())


# --- binding at launch -------------------------------------------------------------------------------------------


async def test_a_wait_on_a_never_recorded_event_passes_and_a_later_record_does_not_count(rt: Runtime, k: Setup) -> None:
    rt.aclmdlRICaptureBegin(k.graph, RELAXED)
    rt.aclrtStreamWaitEventWithFlag(k.graph, k.event, 0, WAIT)
    await k.copy(k.graph)
    model = rt.aclmdlRICaptureEnd(k.graph)
    rt.aclmdlRIExecuteAsync(model, k.graph)  # never recorded: nothing to wait for
    k.gate.hold(k.outside)
    rt.aclrtRecordEvent(k.event, k.outside)  # issued after the launch: not this replay's
    await k.done(k.graph)
    np.testing.assert_array_equal(k.dst.read(), k.src.read())
    rt.aclrtMemsetAsync(k.dst.ptr, 32, 0, 32, k.graph)
    rt.aclmdlRIExecuteAsync(model, k.graph)  # this launch binds the pending record
    await k.settle()
    assert rt.aclrtStreamQuery(k.graph) == BUSY and not k.dst.read().any()
    k.gate.open()
    await k.done(k.outside, k.graph)
    np.testing.assert_array_equal(k.dst.read(), k.src.read())


async def test_every_replay_records_afresh_and_a_plain_wait_takes_the_latest_launch(rt: Runtime, k: Setup) -> None:
    rt.aclmdlRICaptureBegin(k.graph, RELAXED)
    k.gate.hold(k.graph)
    rt.aclrtRecordEventWithFlag(k.event, k.graph, REC)
    model = rt.aclmdlRICaptureEnd(k.graph)
    k.gate.open()
    rt.aclmdlRIExecuteAsync(model, k.graph)
    await k.done(k.graph)
    assert rt.aclrtQueryEventStatus(k.event) == 1  # the first replay's record has run
    k.gate.close()
    rt.aclmdlRIExecuteAsync(model, k.other)  # another stream: the latest record switches now, on the host
    assert rt.aclrtQueryEventStatus(k.event) == 0  # NOT_READY: this replay's record is pending
    rt.aclrtStreamWaitEvent(k.outside, k.event)
    rt.aclrtMemsetAsync(k.dst.ptr, 32, 7, 32, k.outside)
    await k.settle()
    assert rt.aclrtStreamQuery(k.outside) == BUSY and not k.dst.read().any()
    k.gate.open()
    await k.done(k.other, k.outside)
    assert k.dst.read().view(np.uint8).tolist() == [7] * 32
    await asyncio.wait_for(rt.aclrtSynchronizeEvent(k.event), 5)


async def test_external_tasks_in_the_debug_views_and_no_capture_event(rt: Runtime, k: Setup) -> None:
    waited = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclmdlRICaptureBegin(k.graph, RELAXED)
    rt.aclrtStreamWaitEventWithFlag(k.graph, waited, 0, WAIT)
    rt.aclrtRecordEventWithFlag(k.event, k.graph, REC)
    rt.aclrtStreamWaitEvent(k.other, k.event)  # not a capture event: the other stream does not join
    assert rt.aclmdlRICaptureGetInfo(k.other)[0] == aclmdlRICaptureStatus.ACL_MODEL_RI_CAPTURE_STATUS_NONE
    model = rt.aclmdlRICaptureEnd(k.graph)  # its last task is an EXTERNAL record, and it is the origin: fine
    kinds = [e["args"]["Task Type"] for e in json.loads(rt.aclmdlRIDebugJsonPrint(model, None, 0))]
    assert kinds == [
        aclmdlRITaskType.ACL_MODEL_RI_TASK_EVENT_WAIT.name,
        aclmdlRITaskType.ACL_MODEL_RI_TASK_EVENT_RECORD.name,
    ]
    assert "ACL_EVENT_WAIT_EXTERNAL" in rt.aclmdlRIDebugPrint(model)
    rt.aclmdlRIExecuteAsync(model, k.graph)
    await k.done(k.graph, k.other)


# --- the checks, in the runtime's order -------------------------------------------------------------------------


async def test_record_external_checks(rt: Runtime, k: Setup) -> None:
    legacy = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    timed = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtRecordEventWithFlag, 0, k.graph, REC)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtRecordEventWithFlag, k.event, k.graph, 2)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtRecordEventWithFlag, 0xBAD, k.graph, REC)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtRecordEventWithFlag, k.event, 0xBAD, REC)
    for wrong in (legacy, timed):  # exactly aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
        assert (
            "ACL_EVENT_SYNC"
            in fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtRecordEventWithFlag, wrong, 0, REC).message
        )
    error = fails(ACL_ERROR_RT_STREAM_NOT_CAPTURED, rt.aclrtRecordEventWithFlag, k.event, k.outside, REC).message
    assert "not capturing" in error
    fails(ACL_ERROR_RT_STREAM_NOT_CAPTURED, rt.aclrtRecordEventWithFlag, k.event, 0, REC)  # NULL: default stream
    # the failed EXTERNAL records fixed the event's record flag: a plain record is refused now
    assert "one flag per event" in fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtRecordEvent, k.event, k.outside).message
    plain = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclrtRecordEvent(plain, k.outside)
    rt.aclmdlRICaptureBegin(k.graph, RELAXED)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtRecordEventWithFlag, plain, k.graph, REC)  # locked to DEFAULT
    rt.aclrtRecordEventWithFlag(k.event, k.graph, REC)
    dup = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtRecordEventWithFlag, k.event, k.graph, REC)
    assert "one EXTERNAL record or one EXTERNAL wait per model" in dup.message
    waited = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEventWithFlag(k.graph, waited, 0, WAIT)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtRecordEventWithFlag, waited, k.graph, REC)  # waited in this graph
    grouped = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclmdlRICaptureTaskGrpBegin(k.graph)
    fails(ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, rt.aclrtRecordEventWithFlag, grouped, k.graph, REC)
    fails(ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, rt.aclmdlRICaptureTaskGrpEnd, k.graph)
    # none of those invalidated the capture
    assert rt.aclmdlRICaptureGetInfo(k.graph)[0] == aclmdlRICaptureStatus.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
    await k.copy(k.graph)
    model = rt.aclmdlRICaptureEnd(k.graph)
    rt.aclmdlRIExecuteAsync(model, k.graph)
    await k.done(k.graph, k.outside)
    np.testing.assert_array_equal(k.dst.read(), k.src.read())


async def test_wait_external_checks(rt: Runtime, k: Setup) -> None:
    legacy = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    no_wait = rt.aclrtCreateEventExWithFlag(ACL_EVENT_TIME_LINE)
    timed = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtStreamWaitEventWithFlag, k.graph, 0, 0, WAIT)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtStreamWaitEventWithFlag, k.graph, k.event, 0, 2)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtStreamWaitEventWithFlag, k.graph, k.event, 5, WAIT)  # no timeout
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtStreamWaitEventWithFlag, k.graph, 0xBAD, 0, WAIT)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtStreamWaitEventWithFlag, k.graph, no_wait, 0, WAIT)  # no wait
    for wrong in (legacy, timed):
        fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtStreamWaitEventWithFlag, k.graph, wrong, 0, WAIT)
    fails(ACL_ERROR_RT_STREAM_NOT_CAPTURED, rt.aclrtStreamWaitEventWithFlag, k.outside, k.event, 0, WAIT)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtStreamWaitEvent, k.outside, k.event)  # its wait flag is EXTERNAL now
    plain = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(k.outside, plain)
    rt.aclmdlRICaptureBegin(k.graph, RELAXED)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtStreamWaitEventWithFlag, k.graph, plain, 0, WAIT)  # locked to DEFAULT
    rt.aclrtStreamWaitEventWithFlag(k.graph, k.event, 0, WAIT)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtStreamWaitEventWithFlag, k.graph, k.event, 0, WAIT)  # twice
    recorded = rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    rt.aclrtRecordEventWithFlag(recorded, k.graph, REC)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtStreamWaitEventWithFlag, k.graph, recorded, 0, WAIT)
    assert rt.aclmdlRICaptureGetInfo(k.graph)[0] == aclmdlRICaptureStatus.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
    await k.copy(k.graph)
    model = rt.aclmdlRICaptureEnd(k.graph)
    rt.aclmdlRIExecuteAsync(model, k.graph)
    await k.done(k.graph, k.outside)
    np.testing.assert_array_equal(k.dst.read(), k.src.read())


async def test_a_wait_on_an_event_without_a_wait_task_is_207000_everywhere(rt: Runtime, k: Setup) -> None:
    """modelri spec 8.8: the runtime refuses it before any implementation runs (spec 3.2 said 107000)."""
    no_wait = rt.aclrtCreateEventExWithFlag(ACL_EVENT_TIME_LINE)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtStreamWaitEvent, k.outside, no_wait)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtStreamWaitEventWithFlag, k.outside, no_wait, 0, 0)
    rt.aclmdlRICaptureBegin(k.graph, RELAXED)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtStreamWaitEvent, k.graph, no_wait)
    await k.copy(k.graph)
    model = rt.aclmdlRICaptureEnd(k.graph)  # not invalidated
    rt.aclmdlRIExecuteAsync(model, k.graph)
    await k.done(k.graph)
    np.testing.assert_array_equal(k.dst.read(), k.src.read())


# --- value tasks in a capture ---------------------------------------------------------------------------------


async def test_value_write_and_wait_are_model_tasks_run_by_every_replay(rt: Runtime, k: Setup) -> None:
    """Each replay waits until the host raises the flag, copies, then lowers the flag itself (a ValueWrite)."""
    rt.aclmdlRICaptureBegin(k.graph, RELAXED)
    k.gate.hold(k.graph)
    await k.copy(k.graph)
    rt.aclrtValueWrite(k.gate.word, 0, 0, k.graph)
    model = rt.aclmdlRICaptureEnd(k.graph)
    kinds = [e["args"]["Task Type"] for e in json.loads(rt.aclmdlRIDebugJsonPrint(model, None, 0))]
    assert len(kinds) == 3
    for _ in range(3):
        rt.aclrtMemsetAsync(k.dst.ptr, 32, 0, 32, k.outside)
        await k.done(k.outside)
        rt.aclmdlRIExecuteAsync(model, k.graph)
        await k.settle()
        assert rt.aclrtStreamQuery(k.graph) == BUSY and not k.dst.read().any()
        k.gate.open()
        await k.done(k.graph)
        np.testing.assert_array_equal(k.dst.read(), k.src.read())
        word = np.empty(1, np.uint64)
        rt.aclrtMemcpy(word, 8, k.gate.word, 8, 2)
        assert int(word[0]) == 0  # lowered by the replay's ValueWrite
