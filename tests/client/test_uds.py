"""`vnpu serve --uds PATH` and VNPU_ENDPOINT=unix:PATH: the daemon on a Unix socket of this machine (mode 0600, its
user only), every client transport over it (WebSocket, HTTP, asyncio, `vnpu status`) with host memory mapped as
over loopback, a socket file left by a killed daemon replaced, a live one or a file that is not a socket refused."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import client.acl as acl
import proto.aclnn as nn
from client import aio
from client.config import Config
from client.hostbuf import HostBuffer
from client.session import Session
from tests.client.test_acl import run_seed
from tests.daemons import ROOT, Daemon, clean_env, serving
from tests.server.npu.devicekit import tensor_at

F32 = acl.ACL_FLOAT


@pytest.fixture(scope="module")
def unix_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, Path]]:
    logs = tmp_path_factory.mktemp("uds")
    with serving(logs, uds=logs / "vnpu.sock") as daemon:
        yield daemon, logs / "vnpu.sock"


def test_the_socket_is_its_users_only_and_the_banner_names_it(unix_daemon: tuple[Daemon, Path]) -> None:
    daemon, path = unix_daemon
    mode = os.stat(path).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    out = (daemon.err.parent / "out.txt").read_text()
    assert f"listening on unix:{path} -- " in out, out


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_the_seed_runs_over_the_unix_socket_with_host_memory_mapped(
    unix_daemon: tuple[Daemon, Path], transport: str
) -> None:
    daemon, _ = unix_daemon
    config = Config(endpoint=daemon.url, transport=transport)
    assert config.on_this_machine  # a Unix socket's daemon shares this machine: its shared memory is mapped
    session = Session(config)
    try:
        outputs = run_seed(session)
        session.call("aclInit", None)
        session.call("aclrtSetDevice", 0)
        host = session.call("aclrtMallocHost", 64)
        assert isinstance(host, HostBuffer) and host.local
        session.call("aclrtFreeHost", host)
    finally:
        session.close()
    for i, out in enumerate(outputs):
        np.testing.assert_allclose(out, np.full(8, 6.6 if i % 2 else 2.2), rtol=1e-6)


def test_the_asyncio_client_over_the_unix_socket(unix_daemon: tuple[Daemon, Path]) -> None:
    daemon, _ = unix_daemon
    rng = np.random.default_rng(21)
    a, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)

    async def program() -> np.ndarray:
        session = await aio.AsyncSession.connect(Config(endpoint=daemon.url))
        try:
            c = session.call
            await c("aclInit", None)
            await c("aclrtSetDevice", 0)
            pa, pb, pout = [await c("aclrtMalloc", 64, 0) for _ in range(3)]
            for ptr, values in ((pa, a), (pb, b)):
                await c("aclrtMemcpy", ptr, 64, values.tobytes(), 64, acl.ACL_MEMCPY_HOST_TO_DEVICE)
            stream = await c("aclrtCreateStream")
            ta, tb, tout = (tensor_at(p, (16,), F32) for p in (pa, pb, pout))
            ws, ex = nn.aclnnMulGetWorkspaceSize(ta, tb, tout)
            await c("aclnnMul", 0, ws, ex, stream)
            await c("aclrtSynchronizeStream", stream)
            out = bytearray(64)
            await c("aclrtMemcpy", out, 64, pout, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)
            return np.frombuffer(bytes(out), np.float32)
        finally:
            await session.close()

    np.testing.assert_allclose(asyncio.run(program()), a.astype(np.float64) * b, rtol=1e-6)


def test_vnpu_status_reads_the_daemon_on_its_socket(unix_daemon: tuple[Daemon, Path]) -> None:
    daemon, _ = unix_daemon
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "status", "--endpoint", daemon.url],
        cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and f"vnpu at {daemon.url}\n" in done.stdout, done.stdout + done.stderr
    assert "/ 64 MiB" in done.stdout  # the daemon's device table


def serve(path: Path) -> subprocess.CompletedProcess[str]:
    """`vnpu serve --uds path` that is expected to exit at once (it cannot listen)."""
    args = [sys.executable, "-m", "server.cli", "serve", "--uds", str(path), "--memory", "16MiB"]
    return subprocess.run(args, cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=60)


def device_count(url: str) -> int:
    session = Session(Config(endpoint=url))
    try:
        session.call("aclInit", None)
        count: int = session.call("aclrtGetDeviceCount")
        return count
    finally:
        session.close()


def test_a_socket_in_use_or_a_file_is_refused_and_a_dead_daemons_socket_replaced(tmp_path: Path) -> None:
    path = tmp_path / "vnpu.sock"
    with serving(tmp_path, uds=path) as daemon:
        taken = serve(path)
        in_use = f"vnpu serve: cannot listen on unix:{path}: Address already in use\n"
        assert (taken.returncode, taken.stderr) == (1, in_use)
        assert device_count(daemon.url) == 1  # the first daemon serves on
        daemon.proc.send_signal(signal.SIGKILL)  # dies without removing its socket file
        daemon.proc.wait(timeout=10)
        assert stat.S_ISSOCK(os.stat(path).st_mode)
        (tmp_path / "again").mkdir()
        with serving(tmp_path / "again", uds=path) as second:
            assert device_count(second.url) == 1
    assert not path.exists()  # SIGTERM removed the socket file
    plain = tmp_path / "plain"
    plain.write_text("not a socket")
    refused = serve(plain)
    assert (refused.returncode, refused.stderr) == (
        1, f"vnpu serve: cannot listen on unix:{plain}: {plain} exists and is not a socket\n"
    )  # fmt: skip
    assert plain.read_text() == "not a socket"  # left as it was
