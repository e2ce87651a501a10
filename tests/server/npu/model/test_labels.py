"""Labels in Build models (breadth spec 7.3, the runtime's acl/label.cpp, label.cc and its switch program): each
refusal with its exact code and the state after it; then what a label switch does when the model runs -- two
branches chosen by a device word changed between executions, the index clamped to maxValue - 1, a loop that
leaves and one that never does (bounded), a jump into another stream of the model, and what a destroyed label
or label list means for a model."""

from __future__ import annotations

import numpy as np
import pytest

from proto.constants import ACL_MODEL_STREAM_FLAG_DEFAULT, ACL_MODEL_STREAM_FLAG_HEAD, ACL_STREAM_PERSISTENT
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_LABEL_CONTEXT,
    ACL_ERROR_RT_MODEL_EXECUTE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_MODEL,
    AclError,
)
from proto.labels import LABEL_INFO_SIZE, MAX_LABELS
from server.npu import Runtime
from server.npu.model.labels import LabelSetTask, SwitchLabelTask
from server.npu.process.memory_tables import device_cost
from tests.server.npu.devicekit import Vec, counter_add, download, read_bytes, upload, upload_into

HEAD, DEFAULT = ACL_MODEL_STREAM_FLAG_HEAD, ACL_MODEL_STREAM_FLAG_DEFAULT
RNG = np.random.default_rng(11)


def fails(code: int, call: object, *args: object) -> AclError:
    with pytest.raises(AclError) as info:
        assert callable(call)
        call(*args)
    assert info.value.code == code, info.value
    return info.value


class Kit:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.x = Vec(rt, RNG.standard_normal(8).astype(np.float32))
        self.y = Vec(rt, np.zeros(8, np.float32))
        self.exec = rt.aclrtCreateStream()

    def persistent(self) -> int:
        return self.rt.aclrtCreateStreamWithConfig(0, ACL_STREAM_PERSISTENT)

    async def model(self, *streams: tuple[int, int]) -> int:
        model = self.rt.aclmdlRIBuildBegin(0)
        for stream, flag in streams:
            await self.rt.aclmdlRIBindStream(model, stream, flag)
        return model

    def word(self, value: int, dtype: type = np.uint32) -> int:
        return upload(self.rt, np.array([value], dtype))

    def set_word(self, ptr: int, value: int, dtype: type = np.uint32) -> None:
        upload_into(self.rt, ptr, np.array([value], dtype))

    def labels(self, n: int) -> tuple[list[int], int]:
        labels = [self.rt.aclrtCreateLabel() for _ in range(n)]
        return labels, self.rt.aclrtCreateLabelList(labels, n)

    def finish(self, model: int, stream: int) -> None:
        self.rt.aclmdlRIEndTask(model, stream)
        self.rt.aclmdlRIBuildEnd(model, None)

    async def run(self, model: int) -> None:
        self.rt.aclmdlRIExecuteAsync(model, self.exec)
        await self.rt.aclrtSynchronizeStream(self.exec)

    async def run_fails(self, model: int, code: int) -> AclError:
        self.rt.aclmdlRIExecuteAsync(model, self.exec)
        with pytest.raises(AclError) as info:
            await self.rt.aclrtSynchronizeStream(self.exec)
        assert info.value.code == code, info.value
        return info.value

    async def branches(self) -> tuple[int, int]:
        """One stream: switch on *index over [L0, L1]; L0: y = x + 1, then a switch on a zero word to Lend;
        L1: y = x + 2; Lend: the end. Returns (model, index word)."""
        s = self.persistent()
        model = await self.model((s, HEAD))
        index, zero = self.word(0), self.word(0)
        (l0, l1), branch = self.labels(2)
        (lend,), out = self.labels(1)
        self.rt.aclrtSwitchLabelByIndex(index, 2, branch, s)
        self.rt.aclrtSetLabel(l0, s)
        self.y.adds(self.x, 1.0, s)
        self.rt.aclrtSwitchLabelByIndex(zero, 1, out, s)
        self.rt.aclrtSetLabel(l1, s)
        self.y.adds(self.x, 2.0, s)
        self.rt.aclrtSetLabel(lend, s)
        self.finish(model, s)
        return model, index

    def expect_y(self, added: float) -> None:
        np.testing.assert_allclose(self.y.read(), self.x.read().astype(np.float64) + added, rtol=1e-6)


@pytest.fixture
async def kit(rt: Runtime) -> Kit:
    return Kit(rt)


# --- what a switch does when the model runs ---------------------------------------------------------------------


async def test_the_index_word_picks_the_branch_at_each_execution(kit: Kit) -> None:
    model, index = await kit.branches()
    for value, added in ((0, 1.0), (1, 2.0), (0, 1.0), (7, 2.0)):  # 7 >= maxValue 2: the last label (1)
        kit.y.adds(kit.y, -100.0, kit.exec)  # y changes before each run: only the chosen branch writes it back
        kit.set_word(index, value)
        await kit.run(model)
        kit.expect_y(added)
    assert kit.rt.ctx.models[model].executions == 4


async def test_the_samples_flow_jumps_over_a_label(kit: Kit) -> None:
    """label/0: the switch before two labels, index 1 goes on at the second one, then the end task."""
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    (l0, l1), labels = kit.labels(2)
    index = kit.word(1)
    kit.rt.aclrtSwitchLabelByIndex(index, 2, labels, s)
    kit.rt.aclrtSetLabel(l0, s)
    kit.y.adds(kit.x, 5.0, s)  # between the labels: skipped by index 1
    kit.rt.aclrtSetLabel(l1, s)
    kit.finish(model, s)
    await kit.run(model)
    np.testing.assert_array_equal(kit.y.read(), np.zeros(8, np.float32))
    kit.set_word(index, 0)
    await kit.run(model)
    kit.expect_y(5.0)
    await kit.rt.aclmdlRIUnbindStream(model, s)
    await kit.rt.aclmdlRIDestroy(model)
    kit.rt.aclrtDestroyLabelList(labels)
    for label in (l1, l0):
        kit.rt.aclrtDestroyLabel(label)
    assert kit.rt.ctx.labels == {}


async def test_a_backward_jump_loops_until_its_word_leads_out(kit: Kit) -> None:
    """counter = 3; LA: y += 1; counter -= 1; switch(counter, maxValue 2, [LB, LA]): 2 and 1 go back to LA
    (2 is clamped to 1), 0 goes on at LB."""
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    counter = kit.word(0, np.int64)
    (lb, la), labels = kit.labels(2)
    kit.rt.aclrtValueWrite(counter, 3, 0, s)
    kit.rt.aclrtSetLabel(la, s)
    kit.y.adds(kit.y, 1.0, s)
    counter_add(kit.rt, counter, -1, s)
    kit.rt.aclrtSwitchLabelByIndex(counter, 2, labels, s)
    kit.rt.aclrtSetLabel(lb, s)
    kit.finish(model, s)
    for runs in (1, 2):
        await kit.run(model)
        np.testing.assert_array_equal(kit.y.read(), np.full(8, 3.0 * runs, np.float32))
    assert download(kit.rt, counter, (1,), np.int64)[0] == 0


async def test_a_label_loop_that_never_leaves_fails_at_the_bound(kit: Kit) -> None:
    kit.rt.ctx.machine.max_while_iterations = 40
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    (la,), labels = kit.labels(1)
    zero = kit.word(0)
    kit.rt.aclrtSetLabel(la, s)
    kit.y.adds(kit.y, 1.0, s)
    kit.rt.aclrtSwitchLabelByIndex(zero, 1, labels, s)
    kit.x.adds(kit.x, 1000.0, s)  # after the failed switch its stream stops: never runs
    before = kit.x.read()
    kit.finish(model, s)
    error = await kit.run_fails(model, ACL_ERROR_RT_MODEL_EXECUTE)
    assert "jumped 40 times" in error.message and "VNPU_MAX_WHILE_ITERATIONS" in error.message
    np.testing.assert_array_equal(kit.y.read(), np.full(8, 41.0, np.float32))  # the body, then 40 jumps back
    np.testing.assert_array_equal(kit.x.read(), before)
    await kit.rt.aclrtSynchronizeStream(kit.exec)  # the error was raised once: the stream goes on
    kit.rt.ctx.machine.max_while_iterations = 100
    await kit.run_fails(model, ACL_ERROR_RT_MODEL_EXECUTE)
    np.testing.assert_array_equal(kit.y.read(), np.full(8, 41.0 + 101.0, np.float32))


async def test_a_label_on_another_stream_starts_it_there_and_stops_the_switching_one(kit: Kit) -> None:
    head, other = kit.persistent(), kit.persistent()
    model = await kit.model((head, HEAD), (other, DEFAULT))
    (lx,), labels = kit.labels(1)
    kit.rt.aclrtSwitchLabelByIndex(kit.word(0), 1, labels, head)
    kit.x.adds(kit.x, 1000.0, head)  # the switching stream stops: never runs
    kit.y.adds(kit.x, 100.0, other)  # before the label: skipped
    kit.rt.aclrtSetLabel(lx, other)
    kit.y.adds(kit.y, 4.0, other)
    before = kit.x.read()
    kit.finish(model, other)
    kit.y.adds(kit.x, 0.0, kit.exec)
    await kit.run(model)
    kit.expect_y(4.0)
    np.testing.assert_array_equal(kit.x.read(), before)


async def test_a_label_on_a_running_stream_fails_the_switch(kit: Kit) -> None:
    """The device's switch program refuses a busy stream: both HEAD streams are running when the switch does."""
    head, other = kit.persistent(), kit.persistent()
    model = await kit.model((other, HEAD), (head, HEAD))
    (lx,), labels = kit.labels(1)
    kit.rt.aclrtSwitchLabelByIndex(kit.word(0), 1, labels, head)
    kit.x.adds(kit.x, 1000.0, head)  # the failed switch stops its stream: never runs
    kit.rt.aclrtSetLabel(lx, other)
    kit.y.adds(kit.x, 4.0, other)
    before = kit.x.read()
    kit.finish(model, other)
    error = await kit.run_fails(model, ACL_ERROR_RT_MODEL_EXECUTE)
    assert "still running in this execution" in error.message, error.message
    kit.expect_y(4.0)  # the other stream ran as it would have
    np.testing.assert_array_equal(kit.x.read(), before)


async def test_a_destroyed_label_keeps_working_in_its_model(kit: Kit) -> None:
    model, index = await kit.branches()
    task_labels = [
        t.label for lane in kit.rt.ctx.models[model].lanes for t in lane.tasks if isinstance(t, LabelSetTask)
    ]
    for label in task_labels:
        kit.rt.aclrtDestroyLabel(label.handle)
    assert kit.rt.ctx.labels == {} and all(label.destroyed for label in task_labels)
    kit.set_word(index, 1)
    await kit.run(model)
    kit.expect_y(2.0)
    assert "destroyed" in kit.rt.aclmdlRIDebugPrint(model)
    error = fails(ACL_ERROR_RT_INVALID_HANDLE, kit.rt.aclrtSetLabel, task_labels[0].handle, kit.persistent())
    assert "was destroyed" in error.message


async def test_a_destroyed_label_list_fails_the_switch_that_reads_it(kit: Kit) -> None:
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    (la,), labels = kit.labels(1)
    kit.rt.aclrtSwitchLabelByIndex(kit.word(0), 1, labels, s)
    kit.rt.aclrtSetLabel(la, s)
    kit.finish(model, s)
    await kit.run(model)
    kit.rt.aclrtDestroyLabelList(labels)
    error = await kit.run_fails(model, ACL_ERROR_RT_DEVICE_MEM_ERROR)
    assert f"{labels:#x}" in error.message and "freed" in error.message
    error = fails(ACL_ERROR_RT_PARAM_INVALID, kit.rt.aclrtDestroyLabelList, labels)
    assert "double free" in error.message
    error = fails(ACL_ERROR_RT_INTERNAL_ERROR, kit.rt.aclrtCreateLabelList, [la], 1)  # its slot is for good
    assert "already has its slot" in error.message


async def test_an_index_past_the_labels_of_the_model_or_an_unset_slot_fails(kit: Kit) -> None:
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    (l0, _, l2), labels = kit.labels(3)
    index = kit.word(2)
    kit.rt.aclrtSwitchLabelByIndex(index, 3, labels, s)
    kit.rt.aclrtSetLabel(l0, s)
    kit.rt.aclrtSetLabel(l2, s)  # l1 is never set: 2 labels in the model
    kit.finish(model, s)
    error = await kit.run_fails(model, ACL_ERROR_RT_MODEL_EXECUTE)
    assert "index 2 (read 2" in error.message and "not below the 2 label(s)" in error.message
    kit.set_word(index, 1)
    error = await kit.run_fails(model, ACL_ERROR_RT_MODEL_EXECUTE)
    assert "slot 1 of label list" in error.message and "was not set" in error.message
    kit.set_word(index, 0)
    await kit.run(model)
    slots = read_bytes(kit.rt, labels, 3 * LABEL_INFO_SIZE)
    assert slots[LABEL_INFO_SIZE : 2 * LABEL_INFO_SIZE] == b"\xff" * LABEL_INFO_SIZE
    assert int.from_bytes(slots[4:8], "little") == 1  # l0 is task #1 of the stream (after the switch)


async def test_the_views_name_label_and_switch_tasks(kit: Kit) -> None:
    from server.npu.model.graph import dot, svg

    model, _ = await kit.branches()
    text = kit.rt.aclmdlRIDebugPrint(model)
    assert text.count("aclrtSetLabel: label") == 3 and text.count("aclrtSwitchLabelByIndex on *") == 2
    found = kit.rt.ctx.models[model]
    graph = dot(found)
    assert graph.count('label="label [0]"') == 2 and 'label="label [1]"' in graph
    assert "t0_0 -> t0_1 [style=bold" in graph and "t0_0 -> t0_4 [style=bold" in graph  # to L0 and L1
    assert svg(found).count("<title>label [") == 3
    assert [type(t) for t in found.lanes[0].tasks][:2] == [SwitchLabelTask, LabelSetTask]
    await kit.run(model)
    kinds = {(e.kind, e.name.split(" ")[0]) for e in kit.rt.ctx.machine.tracer.events() if e.where.model == model}
    assert {("label switch", "aclrtSwitchLabelByIndex"), ("label", "aclrtSetLabel:")} <= kinds


async def test_a_label_of_another_model_fails_the_switch(kit: Kit) -> None:
    a, b = kit.persistent(), kit.persistent()
    first, second = await kit.model((a, HEAD)), await kit.model((b, HEAD))
    (la,), labels = kit.labels(1)
    kit.rt.aclrtSetLabel(la, a)
    kit.finish(first, a)
    kit.rt.aclrtSwitchLabelByIndex(kit.word(0), 1, labels, b)
    kit.rt.aclrtSetLabel(kit.labels(1)[0][0], b)  # a label of its own, so the index is below its label count
    kit.finish(second, b)
    error = await kit.run_fails(second, ACL_ERROR_RT_MODEL_EXECUTE)
    assert f"set on stream {a:#x}, which is not bound to" in error.message
    await kit.run(first)


# --- refusals: the exact code, then the state ---------------------------------------------------------------------


async def test_create_label_list_checks_in_the_runtimes_order(kit: Kit) -> None:
    rt = kit.rt
    a, b = rt.aclrtCreateLabel(), rt.aclrtCreateLabel()
    used = rt.ctx.memory.used
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtCreateLabelList, None, 2)
    assert "num must be in (0, 65535]" in fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtCreateLabelList, [], 0).message
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtCreateLabelList, [a], MAX_LABELS + 1)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtCreateLabelList, [a, b], 3)
    assert "labels[1] is NULL" in fails(ACL_ERROR_INVALID_PARAM, rt.aclrtCreateLabelList, [a, None], 2).message
    assert "labels[0]" in fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtCreateLabelList, [0x1234, a], 2).message
    assert rt.ctx.memory.used == used and rt.ctx.label_lists == {}
    # a label twice: the list is freed, and (as in the runtime) the first `a` keeps the slot it got
    error = fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtCreateLabelList, [a, a], 2)
    assert "labels[1]" in error.message and rt.ctx.memory.used == used and rt.ctx.label_lists == {}
    fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtCreateLabelList, [a], 1)
    ok = rt.aclrtCreateLabelList([b], 1)
    assert (
        rt.ctx.memory.used == used + device_cost(LABEL_INFO_SIZE)
        and read_bytes(rt, ok, LABEL_INFO_SIZE) == b"\xff" * 16
    )
    rt.aclrtFree(ok)  # a list is device memory: aclrtFree frees it too
    assert rt.ctx.memory.used == used


async def test_set_label_checks_in_the_runtimes_order(kit: Kit) -> None:
    rt = kit.rt
    s, loose = kit.persistent(), kit.persistent()
    model = await kit.model((s, HEAD))
    (a, b), _ = kit.labels(2)
    orphan = rt.aclrtCreateLabel()
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtSetLabel, None, s)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtSetLabel, a, None)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtSetLabel, 0x4321, s)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtSetLabel, a, 0x4321)
    assert "not bound" in fails(ACL_ERROR_RT_STREAM_MODEL, rt.aclrtSetLabel, a, loose).message
    plain = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(plain, 0)
    assert "capturing" in fails(ACL_ERROR_RT_STREAM_MODEL, rt.aclrtSetLabel, a, plain).message
    rt.aclmdlRICaptureEnd(plain)
    assert "in no label list" in fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtSetLabel, orphan, s).message
    lane = rt.ctx.bound[rt.ctx.streams[s]]
    assert lane.tasks == []  # no refusal left a task behind
    rt.aclrtSetLabel(a, s)
    assert "set already" in fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtSetLabel, a, s).message
    other = kit.persistent()
    await rt.aclmdlRIBindStream(model, other, DEFAULT)
    assert "one place" in fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtSetLabel, a, other).message
    assert len(lane.tasks) == 1
    # another ACL context: its label 507031, its stream 107003
    mine = rt.aclrtGetCurrentContext()
    rt.aclrtCreateContext(0)
    fails(ACL_ERROR_RT_LABEL_CONTEXT, rt.aclrtSetLabel, b, s)
    fails(ACL_ERROR_RT_LABEL_CONTEXT, rt.aclrtDestroyLabel, b)
    theirs = rt.aclrtCreateLabel()
    rt.aclrtCreateLabelList([theirs], 1)  # the runtime checks no label context here
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtSetLabel, theirs, s)
    fails(ACL_ERROR_RT_STREAM_CONTEXT, rt.aclrtSwitchLabelByIndex, kit.word(0), 1, 0x10, s)
    rt.aclrtSetCurrentContext(mine)
    rt.aclrtSetLabel(b, s)
    assert len(lane.tasks) == 2


async def test_switch_and_destroy_refusals(kit: Kit) -> None:
    rt = kit.rt
    s = kit.persistent()
    model = await kit.model((s, HEAD))
    (a,), labels = kit.labels(1)
    word = kit.word(0)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtSwitchLabelByIndex, None, 1, labels, s)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtSwitchLabelByIndex, word, 1, None, s)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtSwitchLabelByIndex, word, 1, labels, None)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtSwitchLabelByIndex, word, 1, labels, 0x4321)
    fails(ACL_ERROR_RT_STREAM_MODEL, rt.aclrtSwitchLabelByIndex, word, 1, labels, kit.exec)
    assert rt.ctx.models[model].lanes[0].tasks == []
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtDestroyLabel, None)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtDestroyLabelList, None)
    rt.aclrtDestroyLabel(a)
    assert "was destroyed" in fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtDestroyLabel, a).message
    rt.aclrtDestroyLabelList(labels)
    assert rt.ctx.label_lists == {}


async def test_a_process_holds_at_most_65535_labels(rt: Runtime) -> None:
    labels = [rt.aclrtCreateLabel() for _ in range(MAX_LABELS)]
    error = fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtCreateLabel)
    assert "65535 labels" in error.message
    rt.aclrtDestroyLabel(labels[7])
    again = rt.aclrtCreateLabel()
    assert rt.ctx.labels[again].ident == 7 and len(rt.ctx.labels) == MAX_LABELS


async def test_setting_a_label_whose_list_was_destroyed_writes_nothing(kit: Kit) -> None:
    """The runtime's label task copies its position into the freed slot and only logs the failure: the call
    succeeds; vnpu writes nowhere, so memory allocated there since is left alone."""
    rt = kit.rt
    s = kit.persistent()
    await kit.model((s, HEAD))
    (la,), labels = kit.labels(1)
    rt.aclrtDestroyLabelList(labels)
    reused = rt.aclrtMalloc(LABEL_INFO_SIZE, 0)
    assert reused == labels  # first fit: the freed block comes back
    upload_into(rt, reused, np.arange(LABEL_INFO_SIZE, dtype=np.uint8))
    rt.aclrtSetLabel(la, s)
    assert read_bytes(rt, reused, LABEL_INFO_SIZE) == bytes(range(LABEL_INFO_SIZE))
    assert len(rt.ctx.bound[rt.ctx.streams[s]].tasks) == 1
    fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclrtSetLabel, la, s)  # it is set, all the same
