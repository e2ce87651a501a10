"""client.acl and client.aio: the public surface against the call table, and real calls against a live daemon
over both transports and both host-memory modes."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import client.acl as acl
import client.exceptions
import client.kernels
import client.tdt
import proto.aclnn as nn
import proto.host
import proto.legacyop
import proto.randomnum
from client import aio
from client.config import Config
from client.core import prepare
from client.errors import TransportError
from client.session import Session
from proto.calltable import CALLS
from proto.calltable import STRUCTS as WIRE_STRUCTS
from proto.constants import flat_constants
from proto.errors import (
    ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from tests.server.npu.devicekit import tensor_at

F32 = acl.ACL_FLOAT
DEVICE_CALLS = {name for name in CALLS if not name.startswith("vnpu")}


def test_all_matches_the_call_table_both_ways() -> None:
    exported = set(acl.__all__)
    assert exported >= DEVICE_CALLS  # every device call, under its C name
    host = {name for name in nn.__all__ if name.startswith("acl")}
    assert host <= exported  # aclCreateTensor, phase 1, executor calls
    functions = {name for name in exported if name.startswith("acl") and callable(getattr(acl, name))}
    functions -= set(acl.ENUM_TYPES)  # aclmdlRICaptureStatus, ...: C enum types (test_every_constant_is_exported)
    structs = {name for name in functions - host if isinstance(getattr(acl, name), type)}
    assert structs == set(proto.randomnum.STRUCTS) | {s.__name__ for s in WIRE_STRUCTS}  # C structs, C names
    functions -= structs
    local = set(proto.host.FUNCTIONS) | {"aclrtGetLastError", "aclrtPeekAtLastError"}  # no device: spec-breadth 16
    local |= {"aclrtProcessReport", "aclrtRegStreamStateCallback"} | set(client.exceptions.FUNCTIONS)
    local |= set(client.kernels.HOST) | {"aclrtBinaryLoadFromFile"}  # on the host: argument blocks, the file
    local |= set(client.tdt.HOST)  # TDT data items, datasets, queue attributes, routes: host objects
    local |= set(proto.legacyop.FUNCTIONS)  # tensor descriptions, operator attributes, compile options
    assert not local & DEVICE_CALLS
    operators = {f"aclnn{name}{phase}" for name in nn.RULES for phase in ("GetWorkspaceSize", "")}  # implemented
    assert functions == DEVICE_CALLS | host | local | operators | {"aclGetRecentErrMsg"}  # nothing else posing
    for name, value in flat_constants().items():
        assert getattr(acl, name) == value
    assert acl.ACL_ERROR_RT_STREAM_CAPTURED == 107027 and acl.ACLNN_ERR_PARAM_INVALID == 161002
    assert {n for n in aio.__all__ if n.startswith("acl")} == {n for n in exported if n.startswith("acl")} - {
        "aclGetRecentErrMsg"
    }
    for name in DEVICE_CALLS:
        assert asyncio.iscoroutinefunction(getattr(aio, name)), name


def test_every_constant_is_exported() -> None:
    """`from client.acl import *` gives a program every name the C headers get from proto: enum types and their
    members, #define flags and error codes (what newcomer-3 looked for with dir(): aclmdlRICaptureStatus)."""
    star: dict[str, object] = {}
    exec("from client.acl import *", star)
    from client.capi import headers

    for name, enum in headers.enums().items():
        assert star[name] is enum
        for member, value in enum.__members__.items():
            assert star[member] == value, member
    for name, value in headers.defines().items() | headers.codes().items():
        assert star[name] == value, name
    status = 1  # as aclmdlRICaptureGetInfo returns it: a plain int, named by its enum type
    assert star["aclmdlRICaptureStatus"](status).name == "ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE"
    aio_star: dict[str, object] = {}
    exec("from client.aio import *", aio_star)
    assert {n: aio_star[n] for n in headers.enums()} == {n: star[n] for n in headers.enums()}


def test_signatures_are_c_order() -> None:
    import inspect

    assert list(inspect.signature(acl.aclrtMemcpyAsync).parameters) == [
        "dst", "destMax", "src", "count", "kind", "stream"
    ]  # fmt: skip
    with pytest.raises(TypeError, match="takes 2 argument"):
        prepare("aclrtMalloc", (1,), False)


def test_unreachable_daemon_is_a_transport_error() -> None:
    from tests.server.api.conftest import free_port

    for transport in ("ws", "http"):
        with pytest.raises(TransportError, match=r"cannot reach .* \(is it running\? `vnpu serve` starts one\)"):
            Session(Config(endpoint=f"http://127.0.0.1:{free_port()}", transport=transport))


def run_seed(session: Session, iterations: int = 4) -> list[np.ndarray]:
    """The seed's concurrent task update through a client session; returns each iteration's output."""
    c = session.call
    c("aclInit", None)
    c("aclrtSetDevice", 0)
    size, shape = 32, (4, 2)
    ptrs = [c("aclrtMalloc", size, 0) for _ in range(4)]
    self_t, other_t, out_t, tmp_t = (tensor_at(p, shape, F32) for p in ptrs)
    self_d, other_d, out_d, _ = ptrs
    self_h, other_h, out_h = (c("aclrtMallocHost", size) for _ in range(3))
    self_h.write(np.zeros(8, np.float32))
    other_h.write(np.ones(8, np.float32))
    s1, us = c("aclrtCreateStream"), c("aclrtCreateStream")
    event = c("aclrtCreateEventWithFlag", acl.ACL_EVENT_EXTERNAL)
    alpha = nn.aclCreateScalar(1.1, F32)
    ws, ex = nn.aclnnAddGetWorkspaceSize(self_t, other_t, alpha, tmp_t)
    ws1, ex1 = nn.aclnnAddGetWorkspaceSize(tmp_t, other_t, alpha, out_t)
    c("aclmdlRICaptureBegin", s1, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    c("aclrtMemcpyAsync", self_d, size, self_h, size, acl.ACL_MEMCPY_HOST_TO_DEVICE, s1)
    c("aclrtMemcpyAsync", other_d, size, other_h, size, acl.ACL_MEMCPY_HOST_TO_DEVICE, s1)
    c("aclnnAdd", 0, ws, ex, s1)
    c("aclrtStreamWaitEvent", s1, event)
    c("aclrtResetEvent", event, s1)
    c("aclmdlRICaptureTaskGrpBegin", s1)
    c("aclnnAdd", 0, ws1, ex1, s1)
    handle = c("aclmdlRICaptureTaskGrpEnd", s1)
    c("aclrtMemcpyAsync", out_h, size, out_d, size, acl.ACL_MEMCPY_DEVICE_TO_HOST, s1)
    model = c("aclmdlRICaptureEnd", s1)
    outputs = []
    for i in range(iterations):
        c("aclmdlRIExecuteAsync", model, s1)
        c("aclmdlRICaptureTaskUpdateBegin", us, handle)
        ws2, ex2 = nn.aclnnAddGetWorkspaceSize(tmp_t, other_t, nn.aclCreateScalar(5.5 if i % 2 else 1.1, F32), out_t)
        c("aclnnAdd", 0, ws2, ex2, us)
        c("aclmdlRICaptureTaskUpdateEnd", us)
        c("aclrtRecordEvent", event, us)
        c("aclrtSynchronizeStream", us)
        c("aclrtSynchronizeStream", s1)
        outputs.append(out_h.numpy(np.float32).copy())
    c("aclmdlRIDestroy", model)
    c("aclrtResetDevice", 0)
    c("aclFinalize")
    return outputs


@pytest.mark.parametrize("transport", ["ws", "http"])
@pytest.mark.parametrize("host_memory", ["local", "remote"])
def test_seed_over_both_transports_and_host_memory_modes(daemon: str, transport: str, host_memory: str) -> None:
    session = Session(Config(endpoint=daemon, transport=transport, host_memory=host_memory))
    try:
        outputs = run_seed(session)
    finally:
        session.close()
    for i, out in enumerate(outputs):
        np.testing.assert_allclose(out, np.full(8, 6.6 if i % 2 else 2.2), rtol=1e-6)


def test_a_segment_this_process_may_not_open_stays_remote(daemon: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reliability 7 and 23: segment names are unguessable; a client that may not open one (running as another user
    than the daemon: PermissionError) gets a remote buffer that works, instead of dying in aclrtMallocHost."""
    import client.hostbuf

    session = Session(Config(endpoint=daemon))
    try:
        session.call("aclInit", None)
        session.call("aclrtSetDevice", 0)
        names = [session.call("vnpuHostInfo", session.call("aclrtMallocHost", 64))[0] for _ in range(2)]
        for name in names:
            pid, _, secret = name.removeprefix("vnpu-").partition("-")
            assert pid.isdigit() and len(secret) == 32 and int(secret, 16) >= 0  # 128 random bits, no counter

        def refused(path: object, *args: object) -> int:
            raise PermissionError(13, "Permission denied", str(path))

        # the client's view of the os module only (the daemon runs in this process, on the real one)
        monkeypatch.setattr(client.hostbuf, "os", types.SimpleNamespace(**{**vars(os), "open": refused}))
        buf = session.call("aclrtMallocHost", 64)
        assert not buf.local
        data = np.arange(16, dtype=np.float32)
        dev = session.call("aclrtMalloc", 64, 0)
        session.call("aclrtMemcpy", dev, 64, data, 64, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        session.call("aclrtMemcpy", buf, 64, dev, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        np.testing.assert_array_equal(np.frombuffer(buf.read(64), np.float32), data)
        session.call("aclrtFreeHost", buf)
    finally:
        session.close()


def test_host_buffer_local_view_is_live(daemon: str) -> None:
    session = Session(Config(endpoint=daemon))
    try:
        session.call("aclInit", None)
        session.call("aclrtSetDevice", 0)
        buf = session.call("aclrtMallocHost", 64)
        assert buf.local
        view = buf.numpy(np.float32)
        view[:] = np.arange(16)  # a plain store, as C's self_h[i] = i
        dev = session.call("aclrtMalloc", 64, 0)
        session.call("aclrtMemcpy", dev, 64, buf, 64, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        back = np.zeros(16, np.float32)
        session.call("aclrtMemcpy", back, 64, dev, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        np.testing.assert_array_equal(back, np.arange(16))
        session.call("aclrtFreeHost", buf)
        assert not buf.local
    finally:
        session.close()


@pytest.fixture
def initialized(daemon: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("VNPU_ENDPOINT", daemon)
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    yield
    acl.aclrtResetDevice(0)
    acl.aclFinalize()
    assert acl.__dict__["_current"] is None


def test_pipelined_error_is_raised_at_the_next_wait(initialized: None) -> None:
    a = acl.aclrtMalloc(64, 0)
    s = acl.aclrtCreateStream()
    line = sys._getframe().f_lineno + 1
    acl.aclrtMemcpyAsync(a, 128, a + 32, 128, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, s)  # pipelined, past the end
    acl.aclrtMemsetAsync(a, 64, 3, 64, s)
    with pytest.raises(AclError) as info:
        acl.aclrtSynchronizeStream(s)
    assert info.value.code == ACL_ERROR_RT_PARAM_INVALID
    # the error names the line that made the call, and where it was raised instead
    message = info.value.message
    assert message.startswith(f"aclrtMemcpyAsync ({os.path.relpath(__file__)}:{line}) #") and "past its end" in message
    assert message.endswith(
        "(raised at aclrtSynchronizeStream, the thread's next waiting call; "
        "VNPU_LAUNCH_BLOCKING=1 raises it at its own call)"
    )
    assert "aclrtMemcpyAsync" in (acl.aclGetRecentErrMsg() or "")
    assert acl.aclGetRecentErrMsg() is None  # cleared
    acl.aclrtSynchronizeStream(s)  # nothing else was lost
    out = bytearray(64)
    acl.aclrtMemcpy(out, 64, a, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert out == b"\x03" * 64


def test_launch_blocking_reports_at_the_call(daemon: str) -> None:
    session = Session(Config(endpoint=daemon, launch_blocking=True))
    try:
        session.call("aclInit", None)
        session.call("aclrtSetDevice", 0)
        a = session.call("aclrtMalloc", 64, 0)
        with pytest.raises(AclError) as info:
            session.call("aclrtMemcpyAsync", a, 128, a + 32, 128, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, 0)
        assert info.value.code == ACL_ERROR_RT_PARAM_INVALID and info.value.api == "aclrtMemcpyAsync"
    finally:
        session.close()


def test_over_http_an_asynchronous_call_reports_its_own_error(daemon: str) -> None:
    """Every HTTP call waits for its reply, so a launch's error is raised by the launch (it used to be dropped)."""

    async def main() -> AclError:
        session = await aio.AsyncSession.connect(Config(endpoint=daemon, transport="http"))
        try:
            await session.call("aclInit", None)
            await session.call("aclrtSetDevice", 0)
            a = await session.call("aclrtMalloc", 64, 0)
            with pytest.raises(AclError) as info:
                await session.call("aclrtMemcpyAsync", a, 128, a + 32, 128, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, 0)
            return info.value
        finally:
            await session.close()

    session = Session(Config(endpoint=daemon, transport="http"))
    try:
        session.call("aclInit", None)
        session.call("aclrtSetDevice", 0)
        a = session.call("aclrtMalloc", 64, 0)
        with pytest.raises(AclError) as info:
            session.call("aclrtMemcpyAsync", a, 128, a + 32, 128, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, 0)
        session.call("aclrtSynchronizeStream", 0)  # nothing left over
    finally:
        session.close()
    for error in (info.value, asyncio.run(main())):
        assert error.code == ACL_ERROR_RT_PARAM_INVALID and error.api == "aclrtMemcpyAsync", error


def test_threads_share_the_session_and_capture_modes_hold(initialized: None) -> None:
    s = acl.aclrtCreateStream()
    dev = acl.aclrtMalloc(64, 0)
    host = np.zeros(16, np.float32)
    outcome: dict[str, object] = {}

    def other_thread() -> None:
        acl.aclrtSetDevice(0)  # the current device is per thread, as in CANN
        try:
            acl.aclrtMemcpy(host, 64, dev, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)
            outcome["result"] = "copied"
        except AclError as error:
            outcome["result"] = error.code

    for mode, expected in (
        (acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT),
        (acl.ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL, "copied"),
    ):
        acl.aclmdlRICaptureBegin(s, mode)
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join(10)
        assert outcome["result"] == expected, mode
        with pytest.raises(AclError) as info:  # the capturing thread itself is blocked in both modes
            acl.aclrtMemcpy(host, 64, dev, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        assert info.value.code == ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
        acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(s))


def test_config_file_and_debug_json(daemon: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VNPU_ENDPOINT", raising=False)
    config = tmp_path / "acl.json"
    config.write_text(json.dumps({"vnpu": {"endpoint": daemon}}))
    acl.aclInit(str(config))
    try:
        acl.aclrtSetDevice(0)
        s = acl.aclrtCreateStream()
        acl.aclmdlRICaptureBegin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        acl.aclrtMemsetAsync(acl.aclrtMalloc(64, 0), 64, 0, 64, s)
        model = acl.aclmdlRICaptureEnd(s)
        out = tmp_path / "model.json"
        text = acl.aclmdlRIDebugJsonPrint(model, str(out), 0)
        assert json.loads(out.read_text()) == json.loads(text) and len(json.loads(text)) == 1
    finally:
        acl.aclrtResetDevice(0)
        acl.aclFinalize()


def test_aio_runs_the_seed(daemon: str) -> None:
    async def main() -> list[float]:
        session = await aio.AsyncSession.connect(Config(endpoint=daemon))
        aio.use(session)
        try:
            await session.call("aclInit", None)
            await aio.aclrtSetDevice(0)
            x = await aio.aclrtMalloc(32, 0)
            o = await aio.aclrtMalloc(32, 0)
            xt, ot = tensor_at(x, (8,), F32), tensor_at(o, (8,), F32)
            await aio.aclrtMemcpy(x, 32, np.arange(8, dtype=np.float32), 32, 1)
            s = await aio.aclrtCreateStream()
            ws, ex = aio.aclnnMulsGetWorkspaceSize(xt, nn.aclCreateScalar(2.0, F32), ot)
            await aio.aclnnMuls(0, ws, ex, s)
            await aio.aclrtSynchronizeStream(s)
            back = np.zeros(8, np.float32)
            await aio.aclrtMemcpy(back, 32, o, 32, 2)
            await aio.aclrtResetDevice(0)
            return [float(v) for v in back]
        finally:
            aio.use(None)
            await session.close()

    assert asyncio.run(main()) == [2.0 * i for i in range(8)]


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_bytes_results_are_bytes_over_both_transports(daemon: str, transport: str) -> None:
    """An out-parameter of bytes (an IPC event handle) is bytes whichever transport carried it (HTTP: base64)."""
    session = Session(Config(endpoint=daemon, transport=transport))
    try:
        session.call("aclInit", None)
        session.call("aclrtSetDevice", 0)
        event = session.call("aclrtCreateEventExWithFlag", acl.ACL_EVENT_IPC)
        handle = session.call("aclrtIpcGetEventHandle", event)
        assert isinstance(handle, bytes) and len(handle) == 64
        assert session.call("aclrtIpcOpenEventHandle", handle) == event
        session.call("aclrtResetDevice", 0)
    finally:
        session.close()
