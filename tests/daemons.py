"""A real daemon process for end-to-end tests: `python -m server.cli serve` on a free 127.0.0.1 port (or a Unix
socket), waited for on /healthz, stopped with SIGTERM (by PID) when the block ends."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Daemon:
    proc: subprocess.Popen[bytes]
    url: str
    err: Path

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            pytest.fail(f"the daemon exited with {self.proc.returncode}:\n{self.err.read_text()[-3000:]}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def free_ports(count: int) -> list[int]:
    """`count` different free ports: all bound at once, then released (free_port() twice may give one port twice)."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]


def listening(path: Path) -> bool:
    """Whether a daemon listens on the Unix socket `path` (asked first: httpx leaks a socket it could not connect)."""
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
        return True


def clean_env() -> dict[str, str]:
    """This process's environment without vnpu's own variables."""
    return {k: v for k, v in os.environ.items() if not k.startswith("VNPU_")}


def build_toolkit(root: Path, *options: str) -> Path:
    """`vnpu toolkit [options]` into `root` (VNPU_TOOLKIT_DIR), as a user builds it; the directory it printed."""
    env = {**clean_env(), "VNPU_TOOLKIT_DIR": str(root)}
    command = [sys.executable, "-m", "server.cli", "toolkit", *options]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == root
    return root


@contextlib.contextmanager
def serving(logs: Path, *extra: str, env: dict[str, str] | None = None, uds: Path | None = None) -> Iterator[Daemon]:
    """The daemon on a free port, or on the Unix socket `uds` (its url then unix:PATH, the client's endpoint)."""
    port = free_port()
    where = ["--uds", str(uds)] if uds else ["--port", str(port)]
    args = [sys.executable, "-m", "server.cli", "serve", *where, "--memory", "64MiB", "--log-level", "warning", *extra]
    with (logs / "out.txt").open("wb") as out, (logs / "err.txt").open("wb") as err:
        proc = subprocess.Popen(args, cwd=ROOT, env=clean_env() | (env or {}), stdout=out, stderr=err)
    daemon = Daemon(proc, f"unix:{uds}" if uds else f"http://127.0.0.1:{port}", logs / "err.txt")
    probe = httpx.Client(transport=httpx.HTTPTransport(uds=str(uds))) if uds else httpx.Client()
    base = "http://localhost" if uds else daemon.url
    try:
        deadline = time.monotonic() + 20
        while True:
            daemon.check_alive()
            try:
                if (not uds or listening(uds)) and probe.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the daemon did not answer /healthz within 20 s:\n{daemon.err.read_text()[-3000:]}")
            time.sleep(0.05)
        yield daemon
    finally:
        probe.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
            pytest.fail("the daemon did not stop within 20 s of SIGTERM")
