"""A real daemon process for end-to-end tests: `python -m server.cli serve` on a free 127.0.0.1 port, waited for
on /healthz, stopped with SIGTERM (by PID) when the block ends."""

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


def clean_env() -> dict[str, str]:
    """This process's environment without vnpu's own variables."""
    return {k: v for k, v in os.environ.items() if not k.startswith("VNPU_")}


@contextlib.contextmanager
def serving(logs: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[Daemon]:
    port = free_port()
    args = [sys.executable, "-m", "server.cli", "serve", "--port", str(port), "--memory", "64MiB"]
    args += ["--log-level", "warning", *extra]
    with (logs / "out.txt").open("wb") as out, (logs / "err.txt").open("wb") as err:
        proc = subprocess.Popen(args, cwd=ROOT, env=clean_env() | (env or {}), stdout=out, stderr=err)
    daemon = Daemon(proc, f"http://127.0.0.1:{port}", logs / "err.txt")
    try:
        deadline = time.monotonic() + 20
        while True:
            daemon.check_alive()
            try:
                if httpx.get(f"{daemon.url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the daemon did not answer /healthz within 20 s:\n{daemon.err.read_text()[-3000:]}")
            time.sleep(0.05)
        yield daemon
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
            pytest.fail("the daemon did not stop within 20 s of SIGTERM")
