"""Callbacks and host functions through the Python client (spec-breadth 4): Python callables run in the thread
the runtime says, see the device work issued before them, and hold their stream while they run."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

import proto.aclnn as nn
from client import acl, aio, callbacks
from client.config import Config
from client.session import Session
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_REPORT_TIMEOUT,
    ACL_ERROR_RT_STREAM_SUBSCRIBE,
    AclError,
)
from tests.server.npu.devicekit import tensor_at

F32 = acl.ACL_FLOAT
N = 64


class Reporter:
    """A thread subscribed to `stream` that runs its callbacks (the samples' ProcessReport loop)."""

    def __init__(self, session: Session, stream: int) -> None:
        self.session, self.stream = session, stream
        self.subscribed = threading.Event()
        self.stop = threading.Event()
        self.ident = 0
        self.thread = threading.Thread(target=self._loop, name="reporter")
        self.thread.start()
        assert self.subscribed.wait(10)

    def _loop(self) -> None:
        self.ident = threading.get_ident()
        self.session.call("aclrtSubscribeReport", self.ident, self.stream)
        self.subscribed.set()
        while not self.stop.is_set():
            try:
                callbacks.aclrtProcessReport(self.session.call, 50)
            except AclError as error:
                assert error.code == ACL_ERROR_RT_REPORT_TIMEOUT, error
        self.session.call("aclrtUnSubscribeReport", self.ident, self.stream)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


@pytest.fixture(params=[("ws", "local"), ("ws", "remote"), ("http", "local")], ids=lambda p: "-".join(p))
def session(daemon: str, request: pytest.FixtureRequest) -> Iterator[Session]:
    transport, host_memory = request.param
    made = Session(Config(endpoint=daemon, transport=transport, host_memory=host_memory))
    made.call("aclInit", None)
    made.call("aclrtSetDevice", 0)
    yield made
    made.call("aclrtResetDevice", 0)
    made.call("aclFinalize")
    made.close()


def add_then_copy_out(session: Session, stream: int, a: np.ndarray, b: np.ndarray, host: object) -> None:
    """host <- a + 2 b, computed on the device and copied out, queued on `stream`."""
    c = session.call
    ptrs = [c("aclrtMalloc", N * 4, 0) for _ in range(3)]
    for ptr, data in zip(ptrs, (a, b), strict=False):
        c("aclrtMemcpy", ptr, N * 4, data, N * 4, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    ws, ex = nn.aclnnAddGetWorkspaceSize(*(tensor_at(p, (N,), F32) for p in ptrs[:2]), nn.aclCreateScalar(2.0, F32),
                                         tensor_at(ptrs[2], (N,), F32))  # fmt: skip
    c("aclnnAdd", 0, ws, ex, stream)
    c("aclrtMemcpyAsync", host, N * 4, ptrs[2], N * 4, acl.ACL_MEMCPY_DEVICE_TO_HOST, stream)


def test_a_blocking_callback_sees_the_work_before_it_and_holds_the_work_after(session: Session) -> None:
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    stream = session.call("aclrtCreateStream")
    host = session.call("aclrtMallocHost", N * 4)
    flag = session.call("aclrtMalloc", 8, 0)
    reporter = Reporter(session, stream)
    seen: list[tuple[str, np.ndarray, int]] = []
    release = threading.Event()

    def callback(tag: str) -> None:
        seen.append((tag, np.frombuffer(host.read(), np.float32).copy(), threading.get_ident()))
        assert release.wait(10)

    try:
        add_then_copy_out(session, stream, a, b, host)
        callbacks.aclrtLaunchCallback(session.call, callback, "after the add", acl.ACL_CALLBACK_BLOCK, stream)
        session.call("aclrtMemsetAsync", flag, 8, 1, 8, stream)
        for _ in range(1000):  # until the callback runs (10 s at most)
            if seen:
                break
            time.sleep(0.01)
        assert session.call("aclrtStreamQuery", stream) == acl.ACL_STREAM_STATUS_NOT_READY  # held by the callback
        release.set()
        session.call("aclrtSynchronizeStream", stream)
    finally:
        release.set()
        reporter.close()
    ((tag, values, thread),) = seen
    assert tag == "after the add" and thread == reporter.ident  # in the subscribed thread
    np.testing.assert_allclose(values, a.astype(np.float64) + 2 * b.astype(np.float64), rtol=1e-6)
    out = bytearray(8)
    session.call("aclrtMemcpy", out, 8, flag, 8, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert out == bytes([1]) * 8
    assert len(callbacks.KEPT) == 0  # the callable and its userData were let go once it ran


def test_host_functions_run_on_the_session_thread_in_order(session: Session) -> None:
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    stream = session.call("aclrtCreateStream")
    host = session.call("aclrtMallocHost", N * 4)
    seen: list[tuple[int, np.ndarray, str]] = []

    def host_func(index: int) -> None:
        seen.append((index, np.frombuffer(host.read(), np.float32).copy(), threading.current_thread().name))

    add_then_copy_out(session, stream, a, b, host)
    for index in range(3):
        callbacks.aclrtLaunchHostFunc(session.call, stream, host_func, index)
    session.call("aclrtSynchronizeStream", stream)
    assert [i for i, _, _ in seen] == [0, 1, 2]
    assert {name for _, _, name in seen} == {"vnpu-host-functions"}
    for _, values, _ in seen:
        np.testing.assert_allclose(values, a.astype(np.float64) + 2 * b.astype(np.float64), rtol=1e-6)
    session.call("aclrtDestroyStream", stream)  # no stream runs host functions now: the thread ends ...
    for _ in range(300):
        if not any(t.name == "vnpu-host-functions" for t in threading.enumerate()):
            break
        time.sleep(0.01)
    again = session.call("aclrtCreateStream")
    callbacks.aclrtLaunchHostFunc(session.call, again, host_func, 3)  # ... and the next launch starts it again
    session.call("aclrtSynchronizeStream", again)
    assert [i for i, _, _ in seen] == [0, 1, 2, 3]


def test_a_raising_callback_is_reported_and_the_stream_goes_on(
    session: Session, capfd: pytest.CaptureFixture[str]
) -> None:
    stream = session.call("aclrtCreateStream")
    flag = session.call("aclrtMalloc", 8, 0)

    def broken(_: object) -> None:
        raise ValueError("a bug in the program's host function")

    callbacks.aclrtLaunchHostFunc(session.call, stream, broken, None)
    session.call("aclrtMemsetAsync", flag, 8, 2, 8, stream)
    session.call("aclrtSynchronizeStream", stream)
    out = bytearray(8)
    session.call("aclrtMemcpy", out, 8, flag, 8, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert out == bytes([2]) * 8
    assert "a bug in the program's host function" in capfd.readouterr().err


def test_launch_errors_come_back_from_the_launch(session: Session) -> None:
    stream = session.call("aclrtCreateStream")
    reporter = Reporter(session, stream)
    try:
        with pytest.raises(AclError) as info:  # callback/0's mistake: not pipelined, so the program sees it here
            callbacks.aclrtLaunchHostFunc(session.call, stream, print, 1)
        assert info.value.code == ACL_ERROR_RT_STREAM_SUBSCRIBE
        with pytest.raises(AclError) as info:
            callbacks.aclrtLaunchCallback(session.call, "not a function", None, acl.ACL_CALLBACK_BLOCK, stream)
        assert info.value.code == ACL_ERROR_INVALID_PARAM and "callable" in info.value.message
        with pytest.raises(AclError) as info:
            callbacks.aclrtLaunchCallback(session.call, print, None, 7, stream)
        assert info.value.code == ACL_ERROR_INVALID_PARAM
        assert len(callbacks.KEPT) == 0  # a refused launch keeps nothing
    finally:
        reporter.close()


def test_the_module_functions_and_the_asyncio_client(daemon: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VNPU_ENDPOINT", daemon)
    acl.aclInit(None)
    try:
        acl.aclrtSetDevice(0)
        stream = acl.aclrtCreateStream()
        ran = threading.Event()
        acl.aclrtSubscribeReport(threading.get_ident(), stream)  # this thread runs them, between its own calls
        acl.aclrtLaunchCallback(lambda event: event.set(), ran, acl.ACL_CALLBACK_NO_BLOCK, stream)
        acl.aclrtProcessReport(5000)
        assert ran.is_set()
        with pytest.raises(AclError) as info:
            acl.aclrtProcessReport(0)
        assert info.value.code == ACL_ERROR_INVALID_PARAM
        acl.aclrtUnSubscribeReport(threading.get_ident(), stream)
        acl.aclrtResetDevice(0)
    finally:
        acl.aclFinalize()

    async def refused() -> int:  # its coroutines are one client thread: a wait for callbacks would stall them
        with pytest.raises(AclError) as info:
            await aio.aclrtProcessReport(100)
        return info.value.code

    assert asyncio.run(refused()) == ACL_ERROR_RT_FEATURE_NOT_SUPPORT
