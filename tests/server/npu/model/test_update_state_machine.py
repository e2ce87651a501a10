"""Reliability 13, 14, 22: the task-update state machine under misuse. A record refused on an update stream leaves
the event as it was; destroying an update stream mid-update frees its task group; a capture cannot begin on a
stream in a task update. After each error the group updates, the model replays and the values match float64."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from proto.constants import ACL_EVENT_SYNC, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, aclrtEventRecordedStatus
from proto.errors import ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, ACL_ERROR_STREAM_TASK_GROUP_STATUS, AclError
from server.npu import Runtime
from tests.server.npu.devicekit import Vec

COMPLETE = aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_COMPLETE


class Grouped:
    """y = x + 1 captured as a one-kernel task group; `update(value)` rewrites it to y = x + value."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.x = Vec(rt, np.random.default_rng(3).standard_normal(8).astype(np.float32))
        self.y = Vec(rt, np.zeros(8, np.float32))
        self.s = rt.aclrtCreateStream()
        rt.aclmdlRICaptureBegin(self.s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        rt.aclmdlRICaptureTaskGrpBegin(self.s)
        self.y.adds(self.x, 1.0, self.s)
        self.group = rt.aclmdlRICaptureTaskGrpEnd(self.s)
        self.model = rt.aclmdlRICaptureEnd(self.s)

    async def update_and_check(self, value: float) -> None:
        updater = self.rt.aclrtCreateStream()
        self.rt.aclmdlRICaptureTaskUpdateBegin(updater, self.group)
        self.y.adds(self.x, value, updater)
        self.rt.aclmdlRICaptureTaskUpdateEnd(updater)
        await self.rt.aclrtSynchronizeStream(updater)
        self.rt.aclmdlRIExecuteAsync(self.model, self.s)
        await self.rt.aclrtSynchronizeStream(self.s)
        np.testing.assert_allclose(self.y.read(), self.x.read().astype(np.float64) + value, rtol=1e-6)
        await self.rt.aclrtDestroyStream(updater)


def fails(code: int, fn: object, *args: object) -> AclError:
    with pytest.raises(AclError) as info:
        fn(*args)  # type: ignore[operator]
    assert info.value.code == code, info.value
    return info.value


async def test_a_record_refused_on_an_update_stream_leaves_the_event_as_it_was(rt: Runtime) -> None:
    g = Grouped(rt)
    event = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtRecordEvent(event, 0)
    await rt.aclrtSynchronizeStream(0)
    assert rt.aclrtQueryEventStatus(event) == COMPLETE
    updater = rt.aclrtCreateStream()
    rt.aclmdlRICaptureTaskUpdateBegin(updater, g.group)
    fails(ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, rt.aclrtRecordEvent, event, updater)
    assert rt.aclrtQueryEventStatus(event) == COMPLETE  # it used to stay NOT_READY for ever
    await asyncio.wait_for(rt.aclrtSynchronizeEvent(event), 5)
    g.y.adds(g.x, 3.0, updater)
    rt.aclmdlRICaptureTaskUpdateEnd(updater)
    await rt.aclrtSynchronizeStream(updater)
    await g.update_and_check(2.5)


async def test_destroying_an_update_stream_mid_update_frees_its_group(rt: Runtime) -> None:
    g = Grouped(rt)
    updater = rt.aclrtCreateStream()
    rt.aclmdlRICaptureTaskUpdateBegin(updater, g.group)
    await rt.aclrtDestroyStream(updater)
    await g.update_and_check(4.0)  # a new update of the group is accepted and applied


async def test_a_capture_cannot_begin_on_a_stream_in_a_task_update(rt: Runtime) -> None:
    g = Grouped(rt)
    updater = rt.aclrtCreateStream()
    rt.aclmdlRICaptureTaskUpdateBegin(updater, g.group)
    error = fails(ACL_ERROR_STREAM_TASK_GROUP_STATUS, rt.aclmdlRICaptureBegin, updater, 0)
    assert "aclmdlRICaptureTaskUpdateEnd" in error.message
    g.y.adds(g.x, -1.5, updater)  # still an update: the launch is collected for the group
    rt.aclmdlRICaptureTaskUpdateEnd(updater)
    await rt.aclrtSynchronizeStream(updater)
    rt.aclmdlRIExecuteAsync(g.model, g.s)
    await rt.aclrtSynchronizeStream(g.s)
    np.testing.assert_allclose(g.y.read(), g.x.read().astype(np.float64) - 1.5, rtol=1e-6)
    await g.update_and_check(0.5)
