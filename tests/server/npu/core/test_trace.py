"""The trace against a known program: order per stream, how long a wait blocked, where an update landed, replayed
models and their groups, errors, the Chrome export, and tracing off."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from proto.constants import ACL_EVENT_EXTERNAL, ACL_EVENT_SYNC, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
from proto.errors import AclError
from server.npu import Machine, Runtime
from server.npu.core.trace import chrome
from tests.server.npu.devicekit import Vec


async def test_trace_of_a_known_program(rt: Runtime, machine: Machine) -> None:
    tracer = machine.tracer
    s1, s2 = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    x, y = Vec(rt, np.ones(8, np.float32)), Vec(rt, np.zeros(8, np.float32))
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    t0 = tracer.clock()
    rt.aclrtStreamWaitEvent(s2, ev)
    y.adds(x, 1.0, s2)
    y.muls(y, 2.0, s1)
    await asyncio.sleep(0.05)  # s2 blocks on the event meanwhile
    recorded_at = tracer.clock()
    rt.aclrtRecordEvent(ev, s1)
    await rt.aclrtSynchronizeDevice()
    events = tracer.events(since=t0)
    lanes = {e.where.lane for e in events}
    assert f"stream {s1:#x} of device 0" in lanes and f"stream {s2:#x} of device 0" in lanes
    on_s2 = [e for e in events if e.where.lane == f"stream {s2:#x} of device 0"]
    assert [e.kind for e in on_s2] == ["wait", "kernel"]
    assert "aclnnAdds" in on_s2[1].name
    assert on_s2[0].start < recorded_at < on_s2[0].end  # the wait blocked until the record was issued
    record = next(e for e in events if e.kind == "record")
    assert record.end <= on_s2[0].end + 1e-3 and on_s2[1].start >= on_s2[0].end
    on_s1 = [e.kind for e in events if e.where.lane == f"stream {s1:#x} of device 0"]
    assert on_s1 == ["kernel", "record"]


async def test_trace_of_replays_groups_and_updates(rt: Runtime, machine: Machine) -> None:
    tracer = machine.tracer
    s, u = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    ext = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    x, y = Vec(rt, np.ones(8, np.float32)), Vec(rt, np.zeros(8, np.float32))
    rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    rt.aclrtStreamWaitEvent(s, ext)
    rt.aclrtResetEvent(ext, s)
    rt.aclmdlRICaptureTaskGrpBegin(s)
    y.adds(x, 1.0, s)
    group = rt.aclmdlRICaptureTaskGrpEnd(s)
    model = rt.aclmdlRICaptureEnd(s)
    t0 = tracer.clock()
    rt.aclmdlRIExecuteAsync(model, s)
    rt.aclmdlRICaptureTaskUpdateBegin(u, group)
    y.adds(x, 5.0, u)
    rt.aclmdlRICaptureTaskUpdateEnd(u)
    rt.aclrtRecordEvent(ext, u)
    await rt.aclrtSynchronizeStream(u)
    await rt.aclrtSynchronizeStream(s)
    events = tracer.events(since=t0)
    replay = [e for e in events if e.where.model == model]
    assert [e.kind for e in replay] == ["wait", "reset", "kernel", "group"]  # the group closes after its kernel
    kernel = replay[2]
    assert kernel.group == group and "aclnnAdds" in kernel.name
    update = next(e for e in events if e.kind == "update")
    assert update.end <= replay[0].end + 1e-3  # the update landed before the replay's wait was released
    assert kernel.start >= update.end  # so the replayed kernel is the updated one
    np.testing.assert_array_equal(y.read(), np.full(8, 6.0))
    outer = next(e for e in events if e.kind == "model")
    assert outer.start <= replay[0].start and outer.end >= replay[-1].end
    trace = chrome(events, tracer.epoch)
    complete = [e for e in trace if e["ph"] == "X"]
    assert len(complete) == len(events)
    assert all(e["dur"] >= 0 and isinstance(e["tid"], str) for e in complete)
    assert any(e["ph"] == "M" and e["args"]["name"] == "device 0" for e in trace)
    assert next(e for e in complete if e["cat"] == "kernel" and e["args"].get("Task Group") == f"{group:#x}")
    # slice names are stable (a viewer aggregates them); what changes between runs is in the args
    named = {e["cat"]: e for e in complete if e["cat"] in ("group", "update")}
    assert named["group"]["name"] == f"task group {group:#x}"
    assert named["update"]["name"] == f"update of task group {group:#x}"
    assert named["group"]["args"]["Detail"] == f"task group {group:#x} (1 kernel(s), 1 update(s))"
    assert named["update"]["args"]["Detail"] == f"update of task group {group:#x} (1 kernel(s), 1 update(s))"


async def test_failed_tasks_are_traced_with_their_error(rt: Runtime, machine: Machine) -> None:
    s = rt.aclrtCreateStream()
    x, y = Vec(rt, np.ones(8, np.float32)), Vec(rt, np.zeros(8, np.float32))
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtStreamWaitEvent(s, gate)
    y.adds(x, 1.0, s)
    rt.aclrtFree(x.ptr)
    rt.aclrtRecordEvent(gate, 0)
    t0 = machine.tracer.clock()
    with pytest.raises(AclError) as raised:
        await rt.aclrtSynchronizeStream(s)
    failed = [e for e in machine.tracer.events(since=t0) if e.error]
    # as AclError prints it, with the code (the dashboard's Errors panel shows both); synchronize says which task
    head, _, message = (failed[0].error or "").partition(": ")
    assert len(failed) == 1 and head == "ACL_ERROR_RT_DEVICE_MEM_ERROR (507053)"
    assert raised.value.message.endswith(f": {message}") and "freed" in message


async def test_tracing_off_records_nothing() -> None:
    machine = Machine(devices=1, memory_bytes=1 << 20, trace_capacity=0)
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    x = Vec(rt, np.ones(8, np.float32))
    x.adds(x, 1.0, 0)
    await rt.aclrtSynchronizeStream(0)
    assert not machine.tracer.enabled and machine.tracer.events() == []
    await rt.release_all()
    machine.close()


async def test_the_ring_is_bounded() -> None:
    machine = Machine(devices=1, memory_bytes=1 << 20, trace_capacity=10)
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    x = Vec(rt, np.ones(8, np.float32))
    for _ in range(50):
        x.adds(x, 1.0, 0)
    await rt.aclrtSynchronizeStream(0)
    assert len(machine.tracer.events()) == 10
    await rt.release_all()
    machine.close()


async def test_records_of_one_kernel_share_their_name() -> None:
    """A kernel launched again and again is recorded under one name string, not a copy per record: a full ring of
    100k records would otherwise hold 100k equal strings (bench figure 13)."""
    machine = Machine(devices=1, memory_bytes=1 << 20, trace_capacity=100)
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    start = np.random.default_rng(3).random(8, dtype=np.float32)
    x = Vec(rt, start)
    for _ in range(20):
        x.adds(x, 0.5, 0)
    await rt.aclrtSynchronizeStream(0)
    names = [record[1] for record in machine.tracer.ring]
    assert len(names) == 20 and len(set(names)) == 1 and "aclnnAdds" in names[0]
    assert len({id(name) for name in names}) == 1
    np.testing.assert_allclose(x.read(), start.astype(np.float64) + 10, rtol=1e-6)
    await rt.release_all()
    machine.close()


def test_reading_since_a_time_is_the_filter_of_the_whole_ring() -> None:
    """`events(since, owners)` reads back only from the newest record (reliability 20) and answers what filtering
    the whole ring would, for every `since` and owner set."""
    from server.npu.core.trace import Tracer, Where

    tracer = Tracer(capacity=500)
    rng = np.random.default_rng(7)
    owners = [object() for _ in range(3)]
    for i in range(800):  # the ring keeps the last 500
        owner = owners[int(rng.integers(3))]
        where = Where(0, "stream", None, owner)
        tracer.ring.append((int, f"t{i}", where, float(i), float(i) + 0.5, None, None, None))
    for since in (-1.0, 0.0, 299.5, 300.0, 650.2, 799.5, 1e9):
        for chosen in (None, {id(owners[0])}, {id(owners[1]), id(owners[2])}):
            expected = [r[1] for r in tracer.ring if r[4] > since and (chosen is None or id(r[2].owner) in chosen)]
            assert [e.name for e in tracer.events(since, chosen)] == expected
