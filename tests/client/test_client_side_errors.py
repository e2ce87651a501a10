"""Mistakes the client sees first are AclErrors with the daemon's codes (never a raw TypeError, ValueError or an
encoder's error), and a loop of failing pipelined calls holds one error, not one per call (reliability 25)."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from typing import Annotated, Any

import httpx
import numpy as np
import pytest
from pydantic import ConfigDict, TypeAdapter, ValidationError

import client.acl as acl
from client import aio
from client import tdt as client_tdt
from client.config import Config
from client.session import Session
from proto.calltable import CALLS, Call
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_REPEAT_FINALIZE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_UNINITIALIZE,
    AclError,
)

D2H = acl.ACL_MEMCPY_DEVICE_TO_HOST


@pytest.fixture(params=["ws", "http"])
def session(daemon: str, request: pytest.FixtureRequest) -> Iterator[Session]:
    s = Session(Config(endpoint=daemon, transport=request.param))
    s.call("aclInit", None)
    s.call("aclrtSetDevice", 0)
    try:
        yield s
    finally:
        s.call("aclrtResetDevice", 0)
        s.close()


def filled(s: Session, size: int) -> tuple[int, bytes]:
    """A device block of `size` random bytes."""
    data = np.random.default_rng().integers(0, 256, size, dtype=np.uint8).tobytes()
    dev = s.call("aclrtMalloc", size, 0)
    s.call("aclrtMemcpy", dev, size, data, size, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    return dev, data


def read(s: Session, dev: int, size: int) -> bytes:
    out = bytearray(size)
    s.call("aclrtMemcpy", out, size, dev, size, D2H)
    return bytes(out)


def works_on(s: Session) -> None:
    """A pipelined launch and copies: nothing left over from the failure."""
    dev, data = filled(s, 256)
    stream = s.call("aclrtCreateStream")
    s.call("aclrtMemsetAsync", dev, 256, 9, 128, stream)
    s.call("aclrtSynchronizeStream", stream)
    assert read(s, dev, 256) == b"\x09" * 128 + data[128:]
    s.call("aclrtDestroyStream", stream)
    s.call("aclrtFree", dev)


def test_failing_pipelined_calls_keep_one_error_and_a_count(daemon: str) -> None:
    """Reliability 25: failing pipelined launches hold one error and a count until the next wait, which raises
    the first one and says how many more failed (it used to hold them all: 200000 held 182 MiB)."""
    n = 5000
    s = Session(Config(endpoint=daemon))
    try:
        s.call("aclInit", None)
        s.call("aclrtSetDevice", 0)
        dev, data = filled(s, 64)
        stream = s.call("aclrtCreateStream")

        def fail_n_times() -> None:
            for _ in range(n):
                s.call("aclrtMemsetAsync", dev, 128, 1, 128, stream)  # 64 bytes past the block's end

        fail_n_times()
        with pytest.raises(AclError) as info:
            s.call("aclrtSynchronizeStream", stream)
        error = info.value
        assert (error.code, error.api) == (ACL_ERROR_RT_PARAM_INVALID, "aclrtMemsetAsync")
        assert error.message.startswith("aclrtMemsetAsync (tests/client/") and "past its end" in error.message
        assert f"; and {n - 1} more pipelined calls failed (the first 15 shown): aclrtMemsetAsync: " in error.message
        assert "(raised at aclrtSynchronizeStream" in error.message
        assert len(error.pipelined) == 15 and all("past its end" in str(e) for e in error.pipelined)
        s.call("aclrtSynchronizeStream", stream)  # reported once

        fail_n_times()  # again, looking at what the client holds before the wait
        failed = s.protocol._failed
        deadline = time.monotonic() + 60
        while sum(f.more + 1 for f in failed.values()) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(failed) == 1  # one entry (this thread): one error object and a count, not n errors
        (held,) = failed.values()
        assert held.more == n - 1 and isinstance(held.first, AclError) and len(held.later) == 15  # bounded
        with pytest.raises(AclError, match=f"and {n - 1} more pipelined calls failed"):
            s.call("aclrtSynchronizeStream", stream)
        assert not failed
        assert read(s, dev, 64) == data  # none of them touched the block
        works_on(s)
    finally:
        s.close()


@pytest.mark.parametrize("api", ["aclrtMemcpy", "aclrtMemcpyAsync"])
def test_a_d2h_copy_into_a_smaller_host_buffer(session: Session, api: str) -> None:
    dev, data = filled(session, 64)
    out = bytearray(b"\xaa" * 16)
    stream = (session.call("aclrtCreateStream"),) if api == "aclrtMemcpyAsync" else ()
    with pytest.raises(AclError) as info:
        session.call(api, out, 64, dev, 64, D2H, *stream)  # destMax says 64, the buffer holds 16
    error = info.value
    assert (error.code, error.api) == (ACL_ERROR_INVALID_PARAM, api)  # what the daemon says for a pageable buffer
    assert error.message == "dst is a 16-byte host buffer, too small for 64 bytes"
    assert out == b"\xaa" * 16
    assert read(session, dev, 64) == data
    session.call(api, out, 16, dev, 16, D2H, *stream)  # a count that fits
    assert out == data[:16]
    works_on(session)


def test_a_numpy_array_as_a_device_pointer(session: Session, daemon: str) -> None:
    """Refused before it is sent (a pipelined call too), with the code and the words REST uses for a pointer
    that is not an integer."""
    dev, data = filled(session, 64)
    stream = session.call("aclrtCreateStream")
    for api, args in (
        ("aclrtMemset", (np.array([dev]), 64, 0, 64)),
        ("aclrtMemsetAsync", (np.array([dev]), 64, 0, 64, stream)),
    ):
        with pytest.raises(AclError) as info:
            session.call(api, *args)
        assert (info.value.code, info.value.api) == (ACL_ERROR_INVALID_PARAM, api)
        assert info.value.message.startswith("devPtr: Input should be a valid integer (got array(")
    session.call("aclrtSynchronizeStream", stream)
    assert read(session, dev, 64) == data
    rest = httpx.post(f"{daemon}/v1/call/aclrtMemset", json={"devPtr": [dev], "maxCount": 64, "value": 0, "count": 64})
    assert rest.status_code == 422
    assert rest.json()["error"]["code"] == ACL_ERROR_INVALID_PARAM
    assert rest.json()["error"]["message"].startswith("devPtr: Input should be a valid integer")
    works_on(session)


def test_calls_before_acl_init(daemon: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the C toolkit and the daemon answer them: 100001, and 100037 for aclFinalize; then aclInit works."""
    assert acl.__dict__["_current"] is None
    monkeypatch.setenv("VNPU_ENDPOINT", daemon)
    for function, code in (
        (lambda: acl.aclrtMalloc(64, 0), ACL_ERROR_UNINITIALIZE),
        (acl.aclFinalize, ACL_ERROR_REPEAT_FINALIZE),
    ):
        with pytest.raises(AclError) as info:
            function()
        assert info.value.code == code
        assert "aclInit" in info.value.message

    async def main() -> list[int]:
        codes = []
        for coroutine in (aio.aclrtMalloc(64, 0), aio.aclFinalize()):
            try:
                await coroutine
            except AclError as error:
                assert "aclInit" in error.message
                codes.append(error.code)
        return codes

    assert asyncio.run(main()) == [ACL_ERROR_UNINITIALIZE, ACL_ERROR_REPEAT_FINALIZE]
    bare = Session(Config(endpoint=daemon))  # a session of its own, without aclInit: the daemon's answer
    try:
        with pytest.raises(AclError) as info:
            bare.call("aclrtMalloc", 64, 0)
        assert info.value.code == ACL_ERROR_UNINITIALIZE
    finally:
        bare.close()
    acl.aclInit(None)
    try:
        acl.aclrtSetDevice(0)
        acl.aclrtFree(acl.aclrtMalloc(64, 0))
        acl.aclrtResetDevice(0)
    finally:
        acl.aclFinalize()
    assert acl.__dict__["_current"] is None


# --- every argument of every call, given a Python value of the wrong type ------------------------------------------

WRONG: dict[str, Any] = {
    "numpy array": np.zeros(3, np.int64),
    "object": object(),
    "set": {1},
    "int past 64 bits": 2**70,
    "str": "x",
    "float": 1.5,
}
ANY_OBJECT = {"userData", "args"}  # a callback's data: any Python object is fine


def accepts(call: Call, name: str, value: Any) -> bool:
    """Whether `value` is fine for the argument (its wire type, or a pageable buffer where a copy takes one)."""
    copy = call.name in ("aclrtMemcpy", "aclrtMemcpyAsync")
    if name in ANY_OBJECT or (copy and name in ("dst", "src") and isinstance(value, np.ndarray)):
        return True
    field = call.request.model_fields[name]
    adapter = TypeAdapter(Annotated[field.annotation, field], config=ConfigDict(strict=True))
    try:
        adapter.validate_python(value)
    except ValidationError:
        return False
    return True


def wrong_cases() -> list[tuple[str, int, str, Any]]:
    cases = []
    for api, call in CALLS.items():
        if api.startswith("vnpu") or not hasattr(acl, api):
            continue
        for i, name in enumerate(call.arg_names):
            cases += [(api, i, label, bad) for label, bad in WRONG.items() if not accepts(call, name, bad)]
    return cases


def test_numpy_integers_are_ints_as_c_sees_them(session: Session) -> None:
    """A size from an array's shape or a pointer computed with numpy is an int, pipelined calls included."""
    size = np.prod(np.array([4, 16]))  # a numpy int64
    dev = session.call("aclrtMalloc", size, np.int32(0))
    stream = session.call("aclrtCreateStream")
    session.call("aclrtMemsetAsync", np.uint64(dev) + np.uint64(16), size - 16, np.uint8(3), np.int64(32), stream)
    session.call("aclrtSynchronizeStream", stream)
    assert read(session, dev, 64)[16:48] == b"\x03" * 32
    session.call("aclrtDestroyStream", stream)
    session.call("aclrtFree", dev)


def test_every_argument_of_the_wrong_type_is_an_acl_error(session: Session) -> None:
    """Each call of the table through client.acl, each argument in turn given each wrong-typed value (the other
    arguments 0): ACL_ERROR_INVALID_PARAM naming the argument, raised at the call or, for a pipelined call that
    reached the daemon, at the next wait; nothing else, and the session goes on."""
    # the TDT calls over host objects (client.tdt.STEPS) take datasets, attributes and route lists, not the
    # table's wire arguments: their host objects are checked in tests/client/test_tdt_client.py
    cases = [case for case in wrong_cases() if case[0] not in client_tdt.STEPS]
    assert len(cases) > 1500
    acl.use(session)
    wrong = []
    try:
        for api, i, label, bad in cases:
            names = CALLS[api].arg_names
            values: list[Any] = [None if n in ("fn", "func") else 0 for n in names]  # NULL callback: no error
            values[i] = bad
            try:
                getattr(acl, api)(*values)
                acl.aclrtGetDevice()  # a pipelined call's error comes here
                wrong.append(f"{api}({names[i]}={label}): no error")
            except AclError as error:
                if error.code != ACL_ERROR_INVALID_PARAM or names[i] not in error.message:
                    wrong.append(f"{api}({names[i]}={label}): {error!r:.200}")
            except Exception as error:  # what this test is about
                wrong.append(f"{api}({names[i]}={label}): {error!r:.200}")
    finally:
        acl.use(None)
    assert not wrong, f"{len(wrong)} of {len(cases)}:\n" + "\n".join(wrong[:40])
    works_on(session)


def test_every_message_of_a_few_failed_pipelined_calls_is_kept(daemon: str) -> None:
    """Two pipelined mistakes before a wait: the raised error says both, and holds the second one."""
    s = Session(Config(endpoint=daemon))
    try:
        s.call("aclInit", None)
        s.call("aclrtSetDevice", 0)
        update = s.call("aclrtCreateStream")
        s.call("aclmdlRICaptureTaskUpdateBegin", update, 0x99999)  # not a task group
        s.call("aclmdlRICaptureTaskUpdateEnd", update)  # and no update begun
        with pytest.raises(AclError) as info:
            s.call("aclrtSynchronizeStream", update)
        error = info.value
        assert error.api == "aclmdlRICaptureTaskUpdateBegin" and "0x99999 is not a task group" in error.message
        assert "; and 1 more pipelined call failed: aclmdlRICaptureTaskUpdateEnd: " in error.message
        assert "is not in a task update" in error.message
        (later,) = error.pipelined
        assert isinstance(later, AclError) and later.api == "aclmdlRICaptureTaskUpdateEnd"
        works_on(s)
    finally:
        s.close()


def test_a_replay_of_freed_memory_names_the_free_and_what_to_do(daemon: str) -> None:
    """A model replayed after the program freed memory it captured: the error names the block, the aclrtFree that
    freed it with its line in the program, and how to keep a model's memory."""
    s = Session(Config(endpoint=daemon))
    try:
        s.call("aclInit", None)
        s.call("aclrtSetDevice", 0)
        dev = s.call("aclrtMalloc", 64, 0)
        stream = s.call("aclrtCreateStream")
        s.call("aclmdlRICaptureBegin", stream, 0)
        s.call("aclrtMemsetAsync", dev, 64, 7, 64, stream)
        model = s.call("aclmdlRICaptureEnd", stream)
        freed_at = sys._getframe().f_lineno + 1
        s.call("aclrtFree", dev)
        s.call("aclmdlRIExecuteAsync", model, stream)
        with pytest.raises(AclError) as info:
            s.call("aclrtSynchronizeStream", stream)
        message = info.value.message
        assert f"the 64-byte allocation at {dev:#x}, which held {dev:#x} when the task was issued, has been " in message
        assert f"freed by aclrtFree (tests/client/test_client_side_errors.py:{freed_at})" in message
        assert "keep it allocated until aclmdlRIDestroy, or capture the model again" in message
        s.call("aclmdlRIDestroy", model)
        works_on(s)
    finally:
        s.close()
