"""VNPU_ENDPOINT=embedded: the daemon's application inside the calling process -- the same calls, codes and
pipelining as over a daemon, no socket -- and what it cannot do (another process's context, plain HTTP)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import client.acl as acl
import proto.aclnn as nn
from client import aio
from client.config import EMBEDDED, Config
from client.embedded import EmbeddedDevice
from client.errors import TransportError
from client.session import Session
from proto.errors import ACL_ERROR_RT_PARAM_INVALID, AclError
from tests.client.test_acl import run_seed
from tests.daemons import ROOT, clean_env
from tests.server.npu.devicekit import tensor_at

F32 = acl.ACL_FLOAT
SHM = Path("/dev/shm")


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> Iterator[Config]:
    """A small embedded device for the test, closed after it (a later session would start a fresh one)."""
    monkeypatch.setenv("VNPU_MEMORY", "64MiB")
    monkeypatch.setenv("VNPU_DEVICE_COUNT", "2")
    yield Config(endpoint=EMBEDDED)
    device = EmbeddedDevice._instance
    if device is not None:
        device.close()


@pytest.mark.parametrize("host_memory", ["local", "remote"])
def test_the_seed_runs_on_the_embedded_device(embedded: Config, host_memory: str) -> None:
    session = Session(Config(endpoint=EMBEDDED, host_memory=host_memory))
    try:
        outputs = run_seed(session)
    finally:
        session.close()
    for i, out in enumerate(outputs):
        np.testing.assert_allclose(out, np.full(8, 6.6 if i % 2 else 2.2), rtol=1e-6)


def test_values_codes_and_late_errors_are_the_daemons(embedded: Config) -> None:
    session = Session(embedded)
    c = session.call
    try:
        c("aclInit", None)
        c("aclrtSetDevice", 1)
        rng = np.random.default_rng(7)
        a, b = rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((3, 5)).astype(np.float32)
        pa, pb, pout = (c("aclrtMalloc", a.nbytes, 0) for _ in range(3))
        for ptr, host in ((pa, a), (pb, b)):
            c("aclrtMemcpy", ptr, host.nbytes, host.tobytes(), host.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        stream = c("aclrtCreateStream")
        ta, tb, tout = (tensor_at(p, a.shape, F32) for p in (pa, pb, pout))
        ws, ex = nn.aclnnAddGetWorkspaceSize(ta, tb, nn.aclCreateScalar(-2.5, F32), tout)
        c("aclnnAdd", 0, ws, ex, stream)
        c("aclrtSynchronizeStream", stream)
        out = np.empty_like(a)
        c("aclrtMemcpy", out, out.nbytes, pout, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        np.testing.assert_allclose(out, a.astype(np.float64) - 2.5 * b, rtol=1e-6)
        # a pipelined call's error comes at the next wait, naming this file's line, as over a daemon
        c("aclrtFree", pb)
        c("aclrtMemsetAsync", pb, 8, 0, 8, stream)
        line = sys._getframe().f_lineno - 1
        with pytest.raises(AclError) as late:
            c("aclrtSynchronizeStream", stream)
        assert late.value.code == ACL_ERROR_RT_PARAM_INVALID
        assert f"aclrtMemsetAsync (tests/client/test_embedded.py:{line})" in late.value.message
        assert "which was freed" in late.value.message
        c("aclrtSynchronizeStream", stream)  # the stream works on
        c("aclrtDestroyStream", stream)
        c("aclrtResetDevice", 1)
    finally:
        session.close()


def test_two_sessions_of_one_process_share_a_context(embedded: Config) -> None:
    first = Session(embedded)
    try:
        first.call("aclInit", None)
        first.call("aclrtSetDevice", 0)
        ptr = first.call("aclrtMalloc", 16, 0)
        first.call("aclrtMemcpy", ptr, 16, bytes(range(16)), 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        second = Session(Config(endpoint=EMBEDDED, context=first.context_id))
        try:
            second.call("aclInit", None)
            second.call("aclrtSetDevice", 0)
            back = bytearray(16)
            second.call("aclrtMemcpy", back, 16, ptr, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST)
            assert back == bytes(range(16))
        finally:
            second.close()
    finally:
        first.close()


def test_what_needs_a_daemon_says_so(embedded: Config) -> None:
    with pytest.raises(TransportError) as joined:
        Session(Config(endpoint=EMBEDDED, context="ctx-of-another-process"))
    assert "joining another process's context needs a daemon (vnpu serve)" in str(joined.value)
    with pytest.raises(TransportError, match="VNPU_TRANSPORT=http needs a daemon"):
        Session(Config(endpoint=EMBEDDED, transport="http"))
    with pytest.raises(TransportError, match="VNPU_TRANSPORT=http needs a daemon"):
        asyncio.run(aio.AsyncSession.connect(Config(endpoint=EMBEDDED, transport="http")))


def test_the_asyncio_client_on_the_embedded_device(embedded: Config) -> None:
    async def program() -> bytes:
        session = await aio.AsyncSession.connect(embedded)
        try:
            await session.call("aclInit", None)
            await session.call("aclrtSetDevice", 0)
            ptr = await session.call("aclrtMalloc", 32, 0)
            stream = await session.call("aclrtCreateStream")
            await session.call("aclrtMemsetAsync", ptr, 32, 0x5A, 32, stream)
            await session.call("aclrtSynchronizeStream", stream)
            data = bytearray(32)
            await session.call("aclrtMemcpy", data, 32, ptr, 32, acl.ACL_MEMCPY_DEVICE_TO_HOST)
            with pytest.raises(AclError) as bad:
                await session.call("aclrtSetDevice", 7)
            assert bad.value.code == acl.ACL_ERROR_RT_INVALID_DEVICEID
            return bytes(data)
        finally:
            await session.close()

    assert asyncio.run(program()) == b"\x5a" * 32


def test_a_program_that_exits_without_finalize_leaves_no_shared_memory(tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(
        "import client.acl as acl\n"
        "acl.aclInit(None); acl.aclrtSetDevice(0)\n"
        "host = acl.aclrtMallocHost(4096); host.write(b'x' * 4096)\n"
        "assert host.local\n"
        "print(acl._current.call('vnpuHostInfo', host.ptr)[0])\n"
    )
    env = {**clean_env(), "VNPU_ENDPOINT": EMBEDDED, "VNPU_MEMORY": "64MiB", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    segment = done.stdout.strip()
    assert segment.startswith("vnpu-"), done.stdout
    assert not (SHM / segment).exists()  # released at exit, as a daemon releases at SIGTERM


def test_the_embedded_device_builds_the_websocket_alone(tmp_path: Path) -> None:
    """The in-process client reaches the device through /v1/ws only: no REST route, view or dashboard is built, and
    their modules are not imported (building the REST routes took most of a second of every embedded start)."""
    program = (
        "import json, sys, client.acl as acl\n"
        "from client.embedded import EmbeddedDevice\n"
        "acl.aclInit(None); acl.aclrtSetDevice(0)\n"
        "print(json.dumps([getattr(r, 'path', repr(r)) for r in EmbeddedDevice.get().app.routes]))\n"
        "print(json.dumps([m for m in sys.modules if m.startswith('server.api.')]))\n"
    )
    env = {**clean_env(), "VNPU_ENDPOINT": EMBEDDED, "VNPU_MEMORY": "64MiB", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    routes, modules = (json.loads(line) for line in done.stdout.splitlines())
    assert routes == ["/v1/ws"]
    daemon_only = {"rest", "phase1", "views", "observe", "dashboard", "echo", "openapi"}
    assert {m.removeprefix("server.api.") for m in modules} & daemon_only == set()
