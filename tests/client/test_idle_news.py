"""Synchronizes answered without a request (client.idlenews, server.api.idle): a synchronize of a stream the
daemon said is finished sends no frame and returns what a request would have -- values, errors and all -- and
anything that could change the stream (a call of any thread, a failed task, another session joining the context)
makes the next synchronize ask the daemon again. Frames are counted where the client hands them to the socket."""

from __future__ import annotations

import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import client.acl as acl
import proto.aclnn as nn
from client.config import EMBEDDED, Config
from client.session import Session
from proto import fatbin
from proto.errors import ACL_ERROR_RT_DEVICE_MEM_ERROR, ACL_ERROR_RT_INVALID_HANDLE, AclError
from tests.server.npu.devicekit import tensor_at

F32 = acl.ACL_FLOAT
H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
N = 64


class Counted:
    """A session whose frames to the daemon are counted, with device 0 set."""

    def __init__(self, config: Config) -> None:
        self.session = Session(config)
        self.frames = 0
        assert self.session._outbox is not None
        send = self.session._outbox._send

        def counting(data: bytes) -> None:
            self.frames += 1
            send(data)

        self.session._outbox._send = counting
        self.call("aclInit", None)
        self.call("aclrtSetDevice", 0)

    def call(self, api: str, *values: Any) -> Any:
        return self.session.call(api, *values)

    def frames_of(self, api: str, *values: Any) -> int:
        before = self.frames
        self.call(api, *values)
        return self.frames - before

    def array(self, host: np.ndarray) -> int:
        ptr = self.call("aclrtMalloc", host.nbytes, 0)
        self.call("aclrtMemcpy", ptr, host.nbytes, host.tobytes(), host.nbytes, H2D)
        return int(ptr)

    def read(self, ptr: int) -> np.ndarray:
        out = np.empty(N, np.float32)
        self.call("aclrtMemcpy", out, out.nbytes, ptr, out.nbytes, D2H)
        return out

    def add(self, a: int, b: int, out: int, alpha: float, stream: int) -> None:
        ws, ex = nn.aclnnAddGetWorkspaceSize(
            tensor_at(a, (N,), F32), tensor_at(b, (N,), F32), nn.aclCreateScalar(alpha, F32), tensor_at(out, (N,), F32)
        )
        self.call("aclnnAdd", 0, ws, ex, stream)

    def close(self) -> None:
        self.session.close()


@pytest.fixture(params=["daemon", "embedded"])
def counted(request: pytest.FixtureRequest, daemon: str) -> Iterator[Counted]:
    client = Counted(Config(endpoint=daemon if request.param == "daemon" else EMBEDDED))
    try:
        yield client
    finally:
        client.close()


def operands(client: Counted, seed: int) -> tuple[np.ndarray, np.ndarray, int, int, int]:
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    return a, b, client.array(a), client.array(b), client.array(np.zeros(N, np.float32))


def test_a_stream_known_finished_is_synchronized_without_a_frame(counted: Counted) -> None:
    a, b, pa, pb, pout = operands(counted, 1)
    stream = counted.call("aclrtCreateStream")
    counted.add(pa, pb, pout, 0.75, stream)
    assert counted.frames_of("aclrtSynchronizeStream", stream) == 1  # the launch and the synchronize, one frame
    assert [counted.frames_of("aclrtSynchronizeStream", stream) for _ in range(3)] == [0, 0, 0]
    np.testing.assert_allclose(counted.read(pout), a.astype(np.float64) + 0.75 * b, rtol=1e-6)
    counted.add(pout, pb, pout, -2.0, stream)  # a call since: the next synchronize asks
    assert counted.frames_of("aclrtSynchronizeStream", stream) == 1
    np.testing.assert_allclose(counted.read(pout), a.astype(np.float64) - 1.25 * b, rtol=1e-5)


def test_a_stream_that_finishes_after_the_reply_is_reported_and_not_asked(counted: Counted) -> None:
    """The seed's step: a stream waits on an event that another stream records; the synchronize of the recording
    stream is one frame, and the waiting stream's synchronize none: its finish is reported (or was known)."""
    a, b, pa, pb, pout = operands(counted, 2)
    first, second = counted.call("aclrtCreateStream"), counted.call("aclrtCreateStream")
    event = counted.call("aclrtCreateEventWithFlag", acl.ACL_EVENT_EXTERNAL)
    for step in range(5):
        counted.call("aclrtStreamWaitEvent", first, event)
        counted.call("aclrtResetEvent", event, first)
        counted.add(pa, pb, pout, float(step), first)
        counted.call("aclrtRecordEvent", event, second)
        assert counted.frames_of("aclrtSynchronizeStream", second) == 1
        assert counted.frames_of("aclrtSynchronizeStream", first) == 0
        np.testing.assert_allclose(counted.read(pout), a.astype(np.float64) + step * b, rtol=1e-6)


def test_a_failed_task_is_raised_by_the_daemon_and_then_the_stream_is_finished_again(counted: Counted) -> None:
    """A task that fails on the device leaves its stream's error for the next synchronize: that one asks (one
    frame) and raises it, exactly; the stream then works on, and is known finished again."""
    _, _, pa, pb, pout = operands(counted, 3)
    stream, other = counted.call("aclrtCreateStream"), counted.call("aclrtCreateStream")
    event = counted.call("aclrtCreateEventWithFlag", acl.ACL_EVENT_EXTERNAL)
    counted.call("aclrtStreamWaitEvent", stream, event)
    counted.add(pa, pb, pout, 1.0, stream)  # queued behind the wait: it runs after pb is freed
    counted.call("aclrtFree", pb)  # a waiting call: its reply says the stream is still running
    counted.call("aclrtRecordEvent", event, other)
    before = counted.frames
    with pytest.raises(AclError) as failed:
        counted.call("aclrtSynchronizeStream", stream)
    assert failed.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR
    assert failed.value.api == "aclrtSynchronizeStream" and "freed" in failed.value.message
    assert counted.frames - before in (1, 2)  # the synchronize; the pending record with it, or just before it
    assert counted.frames_of("aclrtSynchronizeStream", stream) == 1  # the error reply vouched for nothing
    assert counted.frames_of("aclrtSynchronizeStream", stream) == 0
    counted.call("aclrtDestroyStream", other)
    with pytest.raises(AclError) as gone:  # a destroyed stream: the daemon says so, as before
        counted.call("aclrtSynchronizeStream", other)
    assert gone.value.code == ACL_ERROR_RT_INVALID_HANDLE


def test_a_call_of_another_thread_makes_the_synchronize_ask(counted: Counted) -> None:
    a, b, pa, pb, pout = operands(counted, 4)
    stream = counted.call("aclrtCreateStream")
    counted.call("aclrtSynchronizeStream", stream)
    assert counted.frames_of("aclrtSynchronizeStream", stream) == 0

    def launch() -> None:
        counted.call("aclrtSetDevice", 0)
        counted.add(pa, pb, pout, 3.0, stream)  # pipelined: it returns before the daemon has it

    thread = threading.Thread(target=launch)
    thread.start()
    thread.join(30)
    assert not thread.is_alive()
    assert counted.frames_of("aclrtSynchronizeStream", stream) >= 1  # the launch went out with it, or before it
    np.testing.assert_allclose(counted.read(pout), a.astype(np.float64) + 3.0 * b, rtol=1e-6)


def test_a_session_joining_the_context_makes_the_synchronize_ask(daemon: str) -> None:
    """Another process's session joins the context and queues work on the stream (its own waiting call has been
    answered): the first session's next synchronize must see that work, so it asks."""
    first = Counted(Config(endpoint=daemon))
    try:
        a, b, pa, pb, pout = operands(first, 5)
        stream = first.call("aclrtCreateStream")
        first.call("aclrtSynchronizeStream", stream)
        assert first.frames_of("aclrtSynchronizeStream", stream) == 0
        second = Counted(Config(endpoint=daemon, context=first.session.context_id))
        try:
            second.add(pa, pb, pout, -0.5, stream)
            second.call("aclrtGetDeviceCount")  # answered: the launch is queued on the stream
            assert first.frames_of("aclrtSynchronizeStream", stream) == 1
            np.testing.assert_allclose(first.read(pout), a.astype(np.float64) - 0.5 * b, rtol=1e-6)
        finally:
            second.close()
    finally:
        first.close()


def test_kernel_printf_comes_with_the_synchronize_and_no_synchronize_is_answered_locally_after(
    daemon: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A kernel's printf comes on the synchronizing call's reply (no second request to collect it); once a kernel
    that may print was issued, every synchronize asks, so text printed later is never skipped."""
    client = Counted(Config(endpoint=daemon))
    try:
        acl.use(client.session)
        path = tmp_path / "kernels.o"
        path.write_bytes(fatbin.dumps(["DeviceWrite"]))
        write = acl.aclrtBinaryGetFunction(acl.aclrtBinaryLoadFromFile(str(path)), "DeviceWrite")
        words = acl.aclrtMalloc(16, 0)
        value = int(np.random.default_rng(6).integers(-1000, 1000))
        args = acl.aclrtKernelArgsInit(write)
        acl.aclrtKernelArgsAppend(args, struct.pack("<Q", words))
        acl.aclrtKernelArgsAppend(args, np.int32(value))
        acl.aclrtKernelArgsFinalize(args)
        stream = acl.aclrtCreateStream()
        acl.aclrtLaunchKernelWithConfig(write, 2, stream, None, args, None)
        assert "Source data" not in capsys.readouterr().out
        assert client.frames_of("aclrtSynchronizeStream", stream) == 1
        assert capsys.readouterr().out == f"Source data: {value}\n" * 2
        assert client.frames_of("aclrtSynchronizeStream", stream) == 1
        assert capsys.readouterr().out == ""
    finally:
        acl.use(None)
        client.close()
