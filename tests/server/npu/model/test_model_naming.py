"""A model's name, id, abort and destroy callbacks (modelri spec 5), and the Destroy corrections of spec 8.3:
each call's checks in the runtime's order with the exact codes, then proof that the model still works."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator

import numpy as np
import pytest

import server.npu.calls.model.model
from client.config import Config
from client.session import Session
from proto.constants import (
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
    ACL_STREAM_WAIT_VALUE_EQ,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_ABORT_NORMAL,
    ACL_ERROR_RT_MODEL_CAPTURED,
    ACL_ERROR_RT_MODEL_CONTEXT,
    ACL_ERROR_RT_MODEL_RUNNING,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu import Runtime
from server.npu.model.model import ModelRI
from server.npu.model.state import ModelKind
from tests.client.conftest import daemon_thread
from tests.server.npu.devicekit import Vec

GLOBAL = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL


def fails(code: int, fn: object, *args: object) -> AclError:
    with pytest.raises(AclError) as info:
        fn(*args)  # type: ignore[operator]
    assert info.value.code == code, info.value
    return info.value


async def afails(code: int, fn: object, *args: object) -> AclError:
    with pytest.raises(AclError) as info:
        await fn(*args)  # type: ignore[operator]
    assert info.value.code == code, info.value
    return info.value


def captured(rt: Runtime, s: int, y: Vec, x: Vec) -> int:
    """A model computing y = x + 1 on s."""
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    y.adds(x, 1.0, s)
    return rt.aclmdlRICaptureEnd(s)


def blocking(rt: Runtime, s: int, word: int, y: Vec) -> int:
    """A model that waits until *word == 1, then computes y = y + 1: it runs until the word is written."""
    rt.aclrtMemcpy(word, 8, np.zeros(1, np.uint64), 8, ACL_MEMCPY_HOST_TO_DEVICE)
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    rt.aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, s)
    y.adds(y, 1.0, s)
    return rt.aclmdlRICaptureEnd(s)


async def replays(rt: Runtime, model: int, s: int, y: Vec, x: Vec, want: np.ndarray) -> None:
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_array_equal(y.read(), want)
    del x


@pytest.fixture
async def parts(rt: Runtime) -> tuple[int, Vec, Vec]:
    x = Vec(rt, np.arange(8, dtype=np.float32))
    return rt.aclrtCreateStream(), x, Vec(rt, np.zeros(8, np.float32))


# --- names ---------------------------------------------------------------------------------------------------


async def test_names_are_kept_whole_and_the_last_one_wins(rt: Runtime, parts: tuple[int, Vec, Vec]) -> None:
    s, x, y = parts
    model = captured(rt, s, y, x)
    assert rt.aclmdlRIGetName(model, 1) == ""  # never set: the empty string and its NUL
    rt.aclmdlRISetName(model, "first")
    rt.aclmdlRISetName(model, "décodeur " + "x" * 600)  # no 512-byte cap, bytes counted in UTF-8
    name = "décodeur " + "x" * 600
    size = len(name.encode()) + 1
    assert rt.aclmdlRIGetName(model, size) == name
    error = fails(ACL_ERROR_RT_INTERNAL_ERROR, rt.aclmdlRIGetName, model, size - 1)  # no truncation
    assert f"takes {size} bytes" in error.message and f"maxLen is {size - 1}" in error.message
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIGetName, model, 0)
    await replays(rt, model, s, y, x, np.arange(8) + 1)


async def test_name_checks_in_order(rt: Runtime, parts: tuple[int, Vec, Vec]) -> None:
    s, x, y = parts
    model = captured(rt, s, y, x)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRISetName, 0, "a")  # NULL model first
    fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRISetName, model, None)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRIGetName, 0, 0)
    await rt.aclmdlRIDestroy(model)
    error = fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRISetName, model, "a")
    assert "model that was destroyed" in error.message
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIGetName, model, 0)  # stale before maxLen


async def test_a_model_of_another_device_is_refused(rt: Runtime, parts: tuple[int, Vec, Vec]) -> None:
    s, x, y = parts
    model = captured(rt, s, y, x)
    rt.aclmdlRISetName(model, "zero")
    rt.aclrtSetDevice(1)
    fails(ACL_ERROR_RT_MODEL_CONTEXT, rt.aclmdlRISetName, model, "one")
    fails(ACL_ERROR_RT_MODEL_CONTEXT, rt.aclmdlRIGetName, model, 16)
    fails(ACL_ERROR_RT_MODEL_CONTEXT, rt.aclmdlRIExecuteAsync, model, 0)
    rt.aclrtSetDevice(0)
    assert rt.aclmdlRIGetName(model, 16) == "zero"


# --- ids -----------------------------------------------------------------------------------------------------


async def test_ids_are_small_reused_after_destroy_and_in_the_debug_json(
    rt: Runtime, parts: tuple[int, Vec, Vec]
) -> None:
    s, x, y = parts
    first = captured(rt, s, y, x)
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    _, during = rt.aclmdlRICaptureGetInfo(s)
    second_id = rt.aclmdlRIGetId(during)  # available during the capture
    y.adds(x, 1.0, s)
    second = rt.aclmdlRICaptureEnd(s)
    ids = rt.aclmdlRIGetId(first), rt.aclmdlRIGetId(second)
    assert ids[1] == second_id and ids[0] != ids[1] and max(ids) < 2
    trace = json.loads(rt.aclmdlRIDebugJsonPrint(second, None, 0))
    assert {e["args"]["Model Id"] for e in trace} == {ids[1]}
    await rt.aclmdlRIDestroy(first)
    third = captured(rt, s, y, x)
    assert rt.aclmdlRIGetId(third) == ids[0]  # the freed id comes back
    fails(ACL_ERROR_INVALID_PARAM, rt.aclmdlRIGetId, 0)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIGetId, first)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIGetId, 0xBAD)
    await replays(rt, third, s, y, x, np.arange(8) + 1)


# --- abort ---------------------------------------------------------------------------------------------------


async def test_abort_stops_the_running_replay_and_the_model_runs_again(
    rt: Runtime, parts: tuple[int, Vec, Vec]
) -> None:
    s, _, y = parts
    word = rt.aclrtMalloc(8, 0)
    model = blocking(rt, s, word, y)
    rt.aclmdlRIExecuteAsync(model, s)
    for _ in range(20):
        await asyncio.sleep(0)
    assert rt.ctx.models[model].running
    await asyncio.wait_for(rt.aclmdlRIAbort(model), 5)
    assert not rt.ctx.models[model].running
    error = await afails(ACL_ERROR_RT_MODEL_ABORT_NORMAL, rt.aclrtSynchronizeStream, s)
    assert "aclmdlRIAbort" in error.message
    np.testing.assert_array_equal(y.read(), np.zeros(8))  # the kernel after the wait never ran
    rt.aclrtMemcpy(word, 8, np.ones(1, np.uint64), 8, ACL_MEMCPY_HOST_TO_DEVICE)
    rt.aclmdlRIExecuteAsync(model, s)  # executable again
    await asyncio.wait_for(rt.aclrtSynchronizeStream(s), 5)
    np.testing.assert_array_equal(y.read(), np.ones(8))
    await rt.aclmdlRIAbort(model)  # not running: nothing to do
    await rt.aclrtSynchronizeStream(s)


async def test_abort_checks(rt: Runtime, parts: tuple[int, Vec, Vec]) -> None:
    s, x, y = parts
    model = captured(rt, s, y, x)
    await afails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIAbort, 0)  # no ACL check: the runtime's 107000
    await afails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIAbort, 0xBAD)
    sub = ModelRI(rt.ctx.machine.new_handle(), rt.ctx.machine.devices[0], ModelKind.SUB)
    rt.ctx.models[sub.handle] = sub
    await afails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclmdlRIAbort, sub.handle)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclmdlRIDestroyRegisterCallback, sub.handle, 0x10, 0)
    rt.aclrtSetDevice(1)
    await afails(ACL_ERROR_RT_MODEL_CONTEXT, rt.aclmdlRIAbort, model)
    rt.aclrtSetDevice(0)
    await replays(rt, model, s, y, x, np.arange(8) + 1)


# --- destroy callbacks and destroy -----------------------------------------------------------------------------


async def test_callbacks_come_back_from_destroy_ordered_by_function(rt: Runtime, parts: tuple[int, Vec, Vec]) -> None:
    s, x, y = parts
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    _, model = rt.aclmdlRICaptureGetInfo(s)
    rt.aclmdlRIDestroyRegisterCallback(model, 0x7000, 0x1)  # allowed during the capture
    y.adds(x, 1.0, s)
    assert rt.aclmdlRICaptureEnd(s) == model
    rt.aclmdlRIDestroyRegisterCallback(model, 0x3000, 0)
    rt.aclmdlRIDestroyRegisterCallback(model, 0x5000, 0x2)
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIDestroyRegisterCallback, model, 0x5000, 0x9)
    assert "already registered" in error.message  # keyed by func alone
    rt.aclmdlRIDestroyUnregisterCallback(model, 0x7000)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIDestroyUnregisterCallback, model, 0x7000)
    rt.aclmdlRIDestroyRegisterCallback(model, 0x7000, 0x3)  # registered again, with other data
    await replays(rt, model, s, y, x, np.arange(8) + 1)
    due = await rt.aclmdlRIDestroy(model)
    assert due == [
        {"func": 0x3000, "userData": 0},
        {"func": 0x5000, "userData": 0x2},
        {"func": 0x7000, "userData": 0x3},
    ]
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIDestroyRegisterCallback, model, 0x10, 0)


async def test_callback_checks_and_a_failed_destroy_keeps_them(rt: Runtime, parts: tuple[int, Vec, Vec]) -> None:
    s, x, y = parts
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIDestroyRegisterCallback, 0, 0x10, 0)  # no ACL checks: 107000
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIDestroyUnregisterCallback, 0xBAD, 0x10)
    rt.aclmdlRICaptureBegin(s, GLOBAL)
    _, model = rt.aclmdlRICaptureGetInfo(s)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIDestroyRegisterCallback, model, 0, 0x1)  # func NULL
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclmdlRIDestroyUnregisterCallback, model, 0)
    rt.aclmdlRIDestroyRegisterCallback(model, 0x10, 0x20)
    await afails(ACL_ERROR_RT_MODEL_CAPTURED, rt.aclmdlRIDestroy, model)  # fails: no callback is handed out
    y.adds(x, 1.0, s)
    rt.aclmdlRICaptureEnd(s)
    await replays(rt, model, s, y, x, np.arange(8) + 1)
    assert await rt.aclmdlRIDestroy(model) == [{"func": 0x10, "userData": 0x20}]


async def test_destroy_of_a_model_still_running_after_the_deadline_is_refused_and_keeps_it(
    rt: Runtime, parts: tuple[int, Vec, Vec], monkeypatch: pytest.MonkeyPatch
) -> None:
    """modelri spec 8.3: the runtime waits ~10 s, then answers 107037 and keeps the model (vnpu used to drop it
    and succeed)."""
    monkeypatch.setattr(server.npu.calls.model.model, "DESTROY_WAIT", 0.05)
    s, _, y = parts
    word = rt.aclrtMalloc(8, 0)
    model = blocking(rt, s, word, y)
    rt.aclmdlRIDestroyRegisterCallback(model, 0x10, 0)
    rt.aclmdlRIExecuteAsync(model, s)
    for _ in range(20):
        await asyncio.sleep(0)
    error = await afails(ACL_ERROR_RT_MODEL_RUNNING, rt.aclmdlRIDestroy, model)
    assert "still running after 0.05 s" in error.message and "kept" in error.message
    assert rt.aclmdlRIGetId(model) >= 0 and not rt.ctx.models[model].destroyed  # kept, its id too
    rt.aclrtValueWrite(word, 1, 0, rt.aclrtCreateStream())  # the replay goes on and ends
    await asyncio.wait_for(rt.aclrtSynchronizeStream(s), 5)
    np.testing.assert_array_equal(y.read(), np.ones(8))
    assert await rt.aclmdlRIDestroy(model) == [{"func": 0x10, "userData": 0}]


async def test_destroy_waits_for_a_replay_that_ends_in_time(rt: Runtime, parts: tuple[int, Vec, Vec]) -> None:
    s, _, y = parts
    word = rt.aclrtMalloc(8, 0)
    model = blocking(rt, s, word, y)
    rt.aclmdlRIExecuteAsync(model, s)
    for _ in range(20):
        await asyncio.sleep(0)
    destroy = asyncio.ensure_future(rt.aclmdlRIDestroy(model))
    await asyncio.sleep(0.02)
    assert not destroy.done() and model in rt.ctx.models  # the model lives while it runs
    rt.aclrtValueWrite(word, 1, 0, rt.aclrtCreateStream())
    assert await asyncio.wait_for(destroy, 5) == []
    np.testing.assert_array_equal(y.read(), np.ones(8))
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclmdlRIGetId, model)


# --- the Python client: callables run on the destroying thread --------------------------------------------------


@pytest.fixture(scope="module")
def daemon() -> Iterator[str]:
    with daemon_thread() as url:
        yield url


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_client_destroy_callbacks_run_on_the_destroying_thread(daemon: str, transport: str) -> None:
    from client import callbacks

    session = Session(Config(endpoint=daemon, transport=transport))
    c = session.call
    c("aclInit", None)
    c("aclrtSetDevice", 0)
    try:
        s = c("aclrtCreateStream")
        c("aclmdlRICaptureBegin", s, GLOBAL)
        c("aclrtMemsetAsync", c("aclrtMalloc", 64, 0), 64, 1, 64, s)
        model = c("aclmdlRICaptureEnd", s)
        c("aclmdlRISetName", model, "named")
        assert c("aclmdlRIGetName", model, 6) == "named" and c("aclmdlRIGetId", model) >= 0
        ran: list[tuple[str, object, int]] = []

        class Owner:
            def method(self, data: object) -> None:
                ran.append(("method", data, threading.get_ident()))

        owner = Owner()
        callbacks.aclmdlRIDestroyRegisterCallback(c, model, lambda d: ran.append(("lambda", d, 0)), None)
        callbacks.aclmdlRIDestroyRegisterCallback(c, model, owner.method, {"k": 1})
        with pytest.raises(AclError) as info:  # an equal bound method is the same function
            callbacks.aclmdlRIDestroyRegisterCallback(c, model, owner.method, None)
        assert info.value.code == ACL_ERROR_RT_PARAM_INVALID
        kept = ["x"]
        callbacks.aclmdlRIDestroyRegisterCallback(c, model, kept.append, "never")
        callbacks.aclmdlRIDestroyUnregisterCallback(c, model, kept.append)
        with pytest.raises(AclError) as info:
            callbacks.aclmdlRIDestroyRegisterCallback(c, model, "not callable", None)
        assert info.value.code == ACL_ERROR_INVALID_PARAM
        c("aclmdlRIExecuteAsync", model, s)
        assert not ran
        callbacks.aclmdlRIDestroy(c, model)
        assert sorted(r[0] for r in ran) == ["lambda", "method"] and kept == ["x"]
        assert [r for r in ran if r[0] == "method"] == [("method", {"k": 1}, threading.get_ident())]
        assert not callbacks.DESTROY._kept  # nothing left held
        c("aclrtSynchronizeStream", s)
    finally:
        c("aclrtResetDevice", 0)
        c("aclFinalize")
        session.close()
