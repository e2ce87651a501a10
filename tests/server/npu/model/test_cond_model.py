"""Conditional models (modelri spec 4): cond handles, aclmdlRIAddCondTask's IF / WHILE / SWITCH branches,
aclmdlRICaptureToModelRIBegin, the parent's End (107045), ASSIGN_DEFAULT, nesting, the WHILE bound, and the
sub-model gate (G6). Every check-order row is followed by proof that the stream, the model and the context still
work; every value is checked against numpy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from proto.aclnn import aclCreateScalar, aclnnAddsGetWorkspaceSize
from proto.constants import (
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
    ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
    aclDataType,
    aclmdlRICaptureStatus,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_CAPTURED,
    ACL_ERROR_RT_MODEL_EXECUTE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_NOT_CAPTURED,
    ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING,
    AclError,
)
from server.npu import Runtime
from server.npu.model import graph as modelgraph
from tests.server.npu.devicekit import Vec, download, tensor_at, upload, upload_into

IF, WHILE, SWITCH = 0, 1, 2
ASSIGN = 1
LOCAL = ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL
I64 = aclDataType.ACL_INT64
RNG = np.random.default_rng(11)


def fails(code: int, call: Callable[..., Any], *args: Any) -> AclError:
    with pytest.raises(AclError) as caught:
        call(*args)
    assert caught.value.code == code, caught.value
    return caught.value


async def afails(code: int, call: Callable[..., Any], *args: Any) -> AclError:
    with pytest.raises(AclError) as caught:
        await call(*args)
    assert caught.value.code == code, caught.value
    return caught.value


def add_to_word(rt: Runtime, word: int, value: int, stream: int) -> None:
    """word += value, computed on the device by a kernel (aclnnAdds over the int64 word)."""
    t = tensor_at(word, (1,), I64)
    ws, ex = aclnnAddsGetWorkspaceSize(t, aclCreateScalar(value, I64), aclCreateScalar(1, I64), t)
    rt.aclnnAdds(0, ws, ex, stream)


def word(rt: Runtime, ptr: int) -> int:
    return int(download(rt, ptr, (1,), np.int64)[0])


def set_word(rt: Runtime, ptr: int, value: int) -> None:
    upload_into(rt, ptr, np.array([value], np.int64))


class Cond:
    """A parent capture on s with one condition task whose branches are captured on s2 by `bodies`."""

    def __init__(self, rt: Runtime, kind: int, bodies: list[Callable[[int], None]], flag: int = 0, default: int = 0):
        self.rt = rt
        self.s, self.s2, self.launch = rt.aclrtCreateStream(), rt.aclrtCreateStream(), rt.aclrtCreateStream()
        rt.aclmdlRICaptureBegin(self.s, LOCAL)
        _, self.parent = rt.aclmdlRICaptureGetInfo(self.s)
        self.handle = rt.aclmdlRICondHandleCreate(self.parent, default, flag)
        self.word = rt.aclmdlRICondHandleGetCondPtr(self.handle)
        self.before(self.s)
        self.subs = rt.aclmdlRIAddCondTask({"handle": self.handle, "type": kind, "size": len(bodies)}, self.s, 0)
        for sub, body in zip(self.subs, bodies, strict=True):
            rt.aclmdlRICaptureToModelRIBegin(self.s2, sub, LOCAL)
            body(self.s2)
            assert rt.aclmdlRICaptureEnd(self.s2) == sub
        self.model = rt.aclmdlRICaptureEnd(self.s)
        assert self.model == self.parent

    def before(self, stream: int) -> None:
        """Tasks captured ahead of the condition task (none by default)."""

    async def run(self) -> None:
        self.rt.aclmdlRIExecuteAsync(self.model, self.launch)
        await self.rt.aclrtSynchronizeStream(self.launch)


def vectors(rt: Runtime, n: int = 16) -> tuple[np.ndarray, Vec, Vec]:
    data = RNG.standard_normal(n).astype(np.float32)
    return data, Vec(rt, data), Vec(rt, np.zeros(n, np.float32))


# --- semantics ---------------------------------------------------------------------------------------------------


async def test_if_runs_the_branch_the_word_chooses_at_run_time(rt: Runtime) -> None:
    data, x, out = vectors(rt)
    cond = Cond(rt, IF, [lambda s: out.muls(x, 2.0, s), lambda s: out.muls(x, -3.0, s)])
    for value, scale in ((1, 2.0), (0, -3.0), (-7, 2.0), (2**40, 2.0)):
        set_word(rt, cond.word, value)  # flag 0: the host's value stays
        await cond.run()
        np.testing.assert_allclose(out.read(), data.astype(np.float64) * scale, rtol=1e-6)
    text = rt.aclmdlRIDebugPrint(cond.model)
    assert "[0] ran 3x" in text and "[1] ran 1x" in text and text.count("aclnnMuls") == 2


async def test_if_with_one_branch_runs_nothing_on_zero(rt: Runtime) -> None:
    data, x, out = vectors(rt)
    cond = Cond(rt, IF, [lambda s: out.adds(x, 1.5, s)])
    await cond.run()  # a fresh word reads 0
    assert not out.read().any()
    set_word(rt, cond.word, 1)
    await cond.run()
    np.testing.assert_allclose(out.read(), data.astype(np.float64) + 1.5, rtol=1e-6)


async def test_the_word_computed_by_a_kernel_before_the_cond_task_decides(rt: Runtime) -> None:
    data, x, out = vectors(rt)

    class Computed(Cond):
        def before(self, stream: int) -> None:
            rt.aclrtValueWrite(self.word, 0, 0, stream)  # captured: word = 0, then word += 1 by a kernel
            add_to_word(rt, self.word, 1, stream)

    cond = Computed(rt, IF, [lambda s: out.muls(x, 4.0, s), lambda s: out.muls(x, 0.5, s)])
    set_word(rt, cond.word, 0)
    await cond.run()
    np.testing.assert_allclose(out.read(), data.astype(np.float64) * 4.0, rtol=1e-6)
    assert word(rt, cond.word) == 1


async def test_while_reruns_its_body_until_the_body_clears_the_word(rt: Runtime) -> None:
    data, _x, out = vectors(rt)
    counter = Vec(rt, np.zeros(1, np.float32))

    def body(s: int) -> None:
        out.adds(out, 1.0, s)  # out += 1 per iteration
        counter.adds(counter, 1.0, s)
        add_to_word(rt, cond_word[0], -1, s)  # the body counts the word down

    cond_word: list[int] = []

    class Loop(Cond):
        def before(self, stream: int) -> None:
            cond_word.append(self.word)

    cond = Loop(rt, WHILE, [body])
    upload_into(rt, out.ptr, data)
    set_word(rt, cond.word, 5)
    await cond.run()
    np.testing.assert_allclose(out.read(), data.astype(np.float64) + 5, rtol=1e-6)
    assert word(rt, cond.word) == 0 and counter.read()[0] == 5
    await cond.run()  # 0 at the first look: the body never runs
    np.testing.assert_allclose(out.read(), data.astype(np.float64) + 5, rtol=1e-6)
    text = rt.aclmdlRIDebugPrint(cond.model)
    assert "[0] ran 5x" in text and "1x no branch" in text


async def test_while_body_ended_by_a_device_copy_as_in_the_sample(rt: Runtime) -> None:
    _data, _x, out = vectors(rt)
    zero = upload(rt, np.zeros(1, np.int64))
    s, s2, launch = rt.aclrtCreateStream(), rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(s, LOCAL)
    _, parent = rt.aclmdlRICaptureGetInfo(s)
    handle = rt.aclmdlRICondHandleCreate(parent, 0, 0)
    ptr = rt.aclmdlRICondHandleGetCondPtr(handle)
    (body,) = rt.aclmdlRIAddCondTask({"handle": handle, "type": WHILE, "size": 1}, s, 0)
    rt.aclmdlRICaptureToModelRIBegin(s2, body, LOCAL)
    out.adds(out, 2.0, s2)
    await rt.aclrtMemcpyAsync(ptr, 8, zero, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s2)
    rt.aclmdlRICaptureEnd(s2)
    model = rt.aclmdlRICaptureEnd(s)
    set_word(rt, ptr, 1)
    rt.aclmdlRIExecuteAsync(model, launch)
    await rt.aclrtSynchronizeStream(launch)
    np.testing.assert_allclose(out.read(), np.full(16, 2.0), rtol=1e-6)


async def test_switch_picks_the_case_and_ignores_values_out_of_range(rt: Runtime) -> None:
    data, x, out = vectors(rt)
    scales = (1.0, 2.0, 0.5)
    cond = Cond(rt, SWITCH, [lambda s, k=k: out.muls(x, k, s) for k in scales])
    for case, scale in enumerate(scales):
        set_word(rt, cond.word, case)
        await cond.run()
        np.testing.assert_allclose(out.read(), data.astype(np.float64) * scale, rtol=1e-6)
    for outside in (3, -1, -(2**63)):  # past the last case, negative: nothing runs
        upload_into(rt, out.ptr, np.zeros(16, np.float32))
        set_word(rt, cond.word, outside)
        await cond.run()
        assert not out.read().any()
    assert "3x no branch" in rt.aclmdlRIDebugPrint(cond.model)


async def test_assign_default_overwrites_host_writes_at_every_launch(rt: Runtime) -> None:
    data, x, out = vectors(rt)
    cond = Cond(rt, IF, [lambda s: out.muls(x, 2.0, s), lambda s: out.muls(x, 0.5, s)], flag=ASSIGN, default=0)
    for host_value in (1, 7):
        set_word(rt, cond.word, host_value)
        await cond.run()
        np.testing.assert_allclose(out.read(), data.astype(np.float64) * 0.5, rtol=1e-6)  # always the default 0
        assert word(rt, cond.word) == 0
    other = Cond(rt, IF, [lambda s: out.muls(x, 3.0, s), lambda s: out.muls(x, 0.25, s)], flag=ASSIGN, default=9)
    assert word(rt, other.word) == 0  # created zeroed; the default lands at a launch, not before
    await other.run()
    np.testing.assert_allclose(out.read(), data.astype(np.float64) * 3.0, rtol=1e-6)
    assert word(rt, other.word) == 9


async def test_a_handle_without_a_cond_task_is_not_reset(rt: Runtime) -> None:
    s, launch = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(s, LOCAL)
    _, parent = rt.aclmdlRICaptureGetInfo(s)
    spare = rt.aclmdlRICondHandleGetCondPtr(rt.aclmdlRICondHandleCreate(parent, 5, ASSIGN))
    model = rt.aclmdlRICaptureEnd(s)
    set_word(rt, spare, 3)
    rt.aclmdlRIExecuteAsync(model, launch)
    await rt.aclrtSynchronizeStream(launch)
    assert word(rt, spare) == 3


async def test_nested_if_inside_a_branch_with_its_own_handle(rt: Runtime) -> None:
    data, x, out = vectors(rt)
    s, s2, s3, launch = (rt.aclrtCreateStream() for _ in range(4))
    rt.aclmdlRICaptureBegin(s, LOCAL)
    _, parent = rt.aclmdlRICaptureGetInfo(s)
    outer = rt.aclmdlRICondHandleCreate(parent, 0, 0)
    (branch,) = rt.aclmdlRIAddCondTask({"handle": outer, "type": IF, "size": 1}, s, 0)
    rt.aclmdlRICaptureToModelRIBegin(s2, branch, LOCAL)
    inner = rt.aclmdlRICondHandleCreate(branch, 0, 0)  # a handle of the capturing sub-model
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIAddCondTask, {"handle": inner, "type": IF, "size": 1}, s, 0)
    leaves = rt.aclmdlRIAddCondTask({"handle": inner, "type": IF, "size": 2}, s2, 0)
    for leaf, scale in zip(leaves, (10.0, 20.0), strict=True):
        rt.aclmdlRICaptureToModelRIBegin(s3, leaf, LOCAL)
        out.muls(x, scale, s3)
        rt.aclmdlRICaptureEnd(s3)
    rt.aclmdlRICaptureEnd(s2)
    model = rt.aclmdlRICaptureEnd(s)
    outer_word, inner_word = rt.aclmdlRICondHandleGetCondPtr(outer), rt.aclmdlRICondHandleGetCondPtr(inner)
    for outer_value, inner_value, want in ((1, 1, 10.0), (1, 0, 20.0), (0, 1, None)):
        upload_into(rt, out.ptr, np.zeros(16, np.float32))
        set_word(rt, outer_word, outer_value)
        set_word(rt, inner_word, inner_value)
        rt.aclmdlRIExecuteAsync(model, launch)
        await rt.aclrtSynchronizeStream(launch)
        expected = np.zeros(16) if want is None else data.astype(np.float64) * want
        np.testing.assert_allclose(out.read(), expected, rtol=1e-6)
    graph = modelgraph.dot(rt.ctx.models[model])
    assert graph.count("subgraph cluster_") == 1 + 1 + 2 and "ran 2x" in graph
    picture = modelgraph.svg(rt.ctx.models[model])
    assert "IF on cond handle" in picture and picture.count('group">[0] ') == 2 and picture.count('group">[1] ') == 1
    assert "ran 2x" in picture and picture.count('">#0 aclnnMuls') == 2  # the leaves' kernels under their branches
    await rt.aclmdlRIDestroy(model)
    for gone in (branch, *leaves):
        fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRICaptureToModelRIBegin, s3, gone, LOCAL)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRICondHandleGetCondPtr, inner)


async def test_a_while_that_never_clears_its_word_fails_at_the_bound(rt: Runtime) -> None:
    rt.ctx.machine.max_while_iterations = 50
    data, x, out = vectors(rt)
    cond = Cond(rt, WHILE, [lambda s: out.adds(out, 1.0, s)])
    set_word(rt, cond.word, 1)
    rt.aclmdlRIExecuteAsync(cond.model, cond.launch)
    with pytest.raises(AclError) as caught:
        await rt.aclrtSynchronizeStream(cond.launch)
    assert caught.value.code == ACL_ERROR_RT_MODEL_EXECUTE
    assert "50 times" in caught.value.message and "VNPU_MAX_WHILE_ITERATIONS" in caught.value.message
    assert f"{cond.model:#x}" in caught.value.message and f"{cond.subs[0]:#x}" in caught.value.message
    np.testing.assert_allclose(out.read(), np.full(16, 50.0))
    set_word(rt, cond.word, 0)  # the stream and the model still work
    await cond.run()
    out.adds(x, 0.0, cond.launch)
    await rt.aclrtSynchronizeStream(cond.launch)
    np.testing.assert_allclose(out.read(), data, rtol=1e-6)


# --- the parent's End and the sub-model gate ---------------------------------------------------------------------


async def test_parent_end_with_a_branch_never_captured_destroys_the_tree(rt: Runtime) -> None:
    s, s2 = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(s, LOCAL)
    _, parent = rt.aclmdlRICaptureGetInfo(s)
    handle = rt.aclmdlRICondHandleCreate(parent, 0, 0)
    subs = rt.aclmdlRIAddCondTask({"handle": handle, "type": IF, "size": 2}, s, 0)
    rt.aclmdlRICaptureToModelRIBegin(s2, subs[0], LOCAL)
    rt.aclmdlRICaptureEnd(s2)
    error = fails(ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING, rt.aclmdlRICaptureEnd, s)
    assert f"{subs[1]:#x}" in error.message and "never captured" in error.message
    assert rt.aclmdlRICaptureGetInfo(s) == (aclmdlRICaptureStatus.ACL_MODEL_RI_CAPTURE_STATUS_NONE, 0)
    for gone in (parent, *subs):
        await afails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIDestroy, gone)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRICondHandleGetCondPtr, handle)
    assert not rt.ctx.sub_models and not rt.ctx.memory.words and rt.ctx.machine.devices[0].models.used == 0
    rt.aclmdlRICaptureBegin(s, LOCAL)  # the stream captures again
    assert rt.aclmdlRICaptureEnd(s)


async def test_parent_end_while_a_branch_is_capturing_ends_that_capture_too(rt: Runtime) -> None:
    data, x, out = vectors(rt)
    s, s2 = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    _, parent = rt.aclmdlRICaptureGetInfo(s)
    handle = rt.aclmdlRICondHandleCreate(parent, 0, 0)
    (sub,) = rt.aclmdlRIAddCondTask({"handle": handle, "type": WHILE, "size": 1}, s, 0)
    rt.aclmdlRICaptureToModelRIBegin(s2, sub, LOCAL)
    error = fails(ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING, rt.aclmdlRICaptureEnd, s)
    assert "still capturing" in error.message
    assert rt.aclmdlRICaptureGetInfo(s2)[0] == aclmdlRICaptureStatus.ACL_MODEL_RI_CAPTURE_STATUS_NONE
    out.adds(x, 1.0, s2)  # s2 runs work again
    await rt.aclrtSynchronizeStream(s2)
    np.testing.assert_allclose(out.read(), data.astype(np.float64) + 1, rtol=1e-6)


async def test_a_failed_sub_model_end_keeps_it_ready_and_it_cannot_be_captured_again(rt: Runtime) -> None:
    data, x, out = vectors(rt)
    s, s2, s3, launch = (rt.aclrtCreateStream() for _ in range(4))
    rt.aclmdlRICaptureBegin(s, LOCAL)
    _, parent = rt.aclmdlRICaptureGetInfo(s)
    handle = rt.aclmdlRICondHandleCreate(parent, 1, ASSIGN)
    (sub,) = rt.aclmdlRIAddCondTask({"handle": handle, "type": IF, "size": 1}, s, 0)
    rt.aclmdlRICaptureToModelRIBegin(s2, sub, LOCAL)
    out.muls(x, 2.0, s2)
    fails(ACL_ERROR_RT_STREAM_NOT_CAPTURED, rt.aclmdlRICaptureEnd, s3)
    fork = rt.aclrtCreateEventExWithFlag(1)
    rt.aclrtRecordEvent(fork, s2)
    rt.aclrtStreamWaitEvent(s3, fork)  # s3 joins the sub-model's capture and never rejoins
    out.adds(out, 0.0, s3)
    fails(107025, rt.aclmdlRICaptureEnd, s2)
    fails(ACL_ERROR_RT_MODEL_CAPTURED, rt.aclmdlRICaptureToModelRIBegin, s2, sub, LOCAL)
    model = rt.aclmdlRICaptureEnd(s)  # the branch is READY with what it captured
    rt.aclmdlRIExecuteAsync(model, launch)
    await rt.aclrtSynchronizeStream(launch)
    np.testing.assert_allclose(out.read(), data.astype(np.float64) * 2, rtol=1e-6)


async def test_sub_models_are_refused_by_the_root_model_calls(rt: Runtime) -> None:
    data, x, out = vectors(rt)
    cond = Cond(rt, IF, [lambda s: out.muls(x, 2.0, s)])
    sub = cond.subs[0]
    for error in (
        fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclmdlRIExecuteAsync, sub, cond.launch),
        await afails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclmdlRIDestroy, sub),
    ):
        assert f"{cond.model:#x}" in error.message and "sub-model" in error.message
    await afails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIExecute, sub, 1000)
    assert sub not in rt.ctx.models and sub in rt.ctx.sub_models  # kept out of the user's models
    assert "ready" in rt.aclmdlRIDebugPrint(sub)
    set_word(rt, cond.word, 1)
    await cond.run()  # the root still runs
    np.testing.assert_allclose(out.read(), data.astype(np.float64) * 2, rtol=1e-6)
    await rt.aclmdlRIDestroy(cond.model)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRICondHandleGetCondPtr, cond.handle)
    await afails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIDestroy, sub)


async def test_capture_end_with_a_null_model_pointer(rt: Runtime) -> None:
    s, s2 = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(s, LOCAL)
    _, parent = rt.aclmdlRICaptureGetInfo(s)
    (sub,) = rt.aclmdlRIAddCondTask({"handle": rt.aclmdlRICondHandleCreate(parent, 0, 0), "type": IF, "size": 1}, s, 0)
    rt.aclmdlRICaptureToModelRIBegin(s2, sub, LOCAL)
    rt.vnpuCaptureEndNoModel(s2)  # a sub-model's capture may end without an out pointer
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.vnpuCaptureEndNoModel, s)
    assert error.api == "aclmdlRICaptureEnd" and "NULL" in error.message
    assert rt.aclmdlRICaptureGetInfo(s)[0] == aclmdlRICaptureStatus.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
    assert rt.aclmdlRICaptureEnd(s) == parent


# --- check orders ------------------------------------------------------------------------------------------------


async def test_cond_handle_create_and_get_cond_ptr_check_order(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRICondHandleCreate, None, 0, 9)  # NULL before the flag
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRICondHandleCreate, 0xDEAD, 0, 9)  # stale before the flag
    rt.aclmdlRICaptureBegin(s, LOCAL)
    _, parent = rt.aclmdlRICaptureGetInfo(s)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRICondHandleCreate, parent, 0, 2)
    handle = rt.aclmdlRICondHandleCreate(parent, 0, 0)
    model = rt.aclmdlRICaptureEnd(s)
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRICondHandleCreate, model, 0, 0)  # ended
    assert "ready" in error.message
    ptr = rt.aclmdlRICondHandleGetCondPtr(handle)  # usable after End
    assert ptr % 8 == 0 and word(rt, ptr) == 0
    fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRICondHandleGetCondPtr, None)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRICondHandleGetCondPtr, model)  # a model is not a cond handle
    rt.aclrtValueWrite(ptr, 42, 0, s)  # the word is device memory of the context
    await rt.aclrtSynchronizeStream(s)
    assert word(rt, ptr) == 42
    await rt.aclmdlRIDestroy(model)
    error = fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRICondHandleGetCondPtr, handle)
    assert "destroyed" in error.message
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtValueWrite, ptr, 1, 0, s)  # freed with its model


async def test_add_cond_task_check_order(rt: Runtime) -> None:
    data, x, out = vectors(rt)
    s, other, branch = rt.aclrtCreateStream(), rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(s, LOCAL)
    _, parent = rt.aclmdlRICaptureGetInfo(s)
    h = rt.aclmdlRICondHandleCreate(parent, 0, 0)

    def p(**fields: Any) -> dict[str, Any]:
        return {"handle": h, "type": IF, "size": 1} | fields

    add = rt.aclmdlRIAddCondTask
    fails(ACL_ERROR_INVALID_PARAM, add, p(type=9), None, 1)  # 1: stream NULL first
    fails(ACL_ERROR_RT_INVALID_HANDLE, add, p(handle=0xDEAD, type=9), s, 1)  # 2: a stale handle
    fails(ACL_ERROR_RT_PARAM_INVALID, add, p(type=3), s, 0)  # 3: type
    fails(ACL_ERROR_RT_PARAM_INVALID, add, p(), s, 1)  # 3: flags
    fails(ACL_ERROR_RT_PARAM_INVALID, add, p(handle=None), s, 0)  # 3: handle NULL
    fails(ACL_ERROR_RT_PARAM_INVALID, add, p(modelRIArray=0), s, 0)  # 3: modelRIArray NULL
    fails(ACL_ERROR_RT_STREAM_NOT_CAPTURED, add, p(size=0), other, 0)  # 6 before 10
    rt.aclmdlRICaptureBegin(other, LOCAL)
    _, unrelated = rt.aclmdlRICaptureGetInfo(other)
    error = fails(ACL_ERROR_RT_PARAM_INVALID, add, p(size=0), other, 0)  # 8: not the handle's model
    assert f"{parent:#x}" in error.message
    for kind, size in ((IF, 0), (IF, 3), (WHILE, 0), (WHILE, 2), (SWITCH, 0)):  # 10
        fails(ACL_ERROR_RT_PARAM_INVALID, add, p(type=kind, size=size), s, 0)
    assert not rt.ctx.sub_models  # no sub-model was left behind
    rt.aclmdlRICaptureTaskGrpBegin(s)
    fails(507009, add, p(), s, 0)  # in an open task group
    assert not rt.ctx.sub_models
    fails(507009, rt.aclmdlRICaptureTaskGrpEnd, s)  # the group reports its failed task
    (sub,) = add(p(), s, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, add, p(), s, 0)  # 4: the handle already drives a task
    rt.aclmdlRICaptureToModelRIBegin(branch, sub, LOCAL)
    out.muls(x, 3.0, branch)
    rt.aclmdlRICaptureEnd(branch)
    model = rt.aclmdlRICaptureEnd(s)
    assert rt.aclmdlRICaptureEnd(other) == unrelated
    set_word(rt, rt.aclmdlRICondHandleGetCondPtr(h), 1)
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_allclose(out.read(), data.astype(np.float64) * 3, rtol=1e-6)


async def test_capture_to_model_begin_check_order(rt: Runtime) -> None:
    s, s2, s3 = rt.aclrtCreateStream(), rt.aclrtCreateStream(), rt.aclrtCreateStream()
    begin = rt.aclmdlRICaptureToModelRIBegin
    rt.aclmdlRICaptureBegin(s, LOCAL)
    _, parent = rt.aclmdlRICaptureGetInfo(s)
    (sub,) = rt.aclmdlRIAddCondTask({"handle": rt.aclmdlRICondHandleCreate(parent, 0, 0), "type": IF, "size": 1}, s, 0)
    fails(ACL_ERROR_INVALID_PARAM, begin, None, sub, 9)
    fails(ACL_ERROR_INVALID_PARAM, begin, s2, None, 9)
    fails(ACL_ERROR_RT_INVALID_HANDLE, begin, s2, 0xDEAD, 9)
    fails(ACL_ERROR_RT_PARAM_INVALID, begin, s2, sub, 3)  # mode
    error = fails(ACL_ERROR_RT_PARAM_INVALID, begin, s2, parent, LOCAL)  # a root model
    assert "aclmdlRICaptureBegin" in error.message
    default = rt.ctx.acl_context().default_stream.handle
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, begin, default, sub, LOCAL)
    fails(ACL_ERROR_RT_STREAM_CAPTURED, begin, s, sub, LOCAL)  # the parent's own capturing stream
    begin(s2, sub, LOCAL)
    fails(ACL_ERROR_RT_MODEL_CAPTURED, begin, s3, sub, LOCAL)  # once only (before 107027)
    fails(ACL_ERROR_RT_MODEL_CAPTURED, begin, s2, sub, LOCAL)
    assert rt.aclmdlRICaptureGetInfo(s2) == (aclmdlRICaptureStatus.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, sub)
    assert rt.aclmdlRICaptureEnd(s2) == sub
    fails(ACL_ERROR_RT_MODEL_CAPTURED, begin, s3, sub, LOCAL)
    await rt.aclmdlRIDestroy(rt.aclmdlRICaptureEnd(s))
