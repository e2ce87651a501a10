"""The daemon under measurement, and the other processes the benchmarks start: each bound to 127.0.0.1 on a free
port, each stopped by its PID (SIGTERM, then SIGKILL after a timeout)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
SHM_DIR = Path("/dev/shm")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def stop(process: subprocess.Popen[bytes] | subprocess.Popen[str], timeout: float = 15.0) -> int | None:
    """SIGTERM the process by its PID, SIGKILL it if it is still there after `timeout`; its exit status."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            process.wait(5)
    return process.returncode


def wait_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process {process.pid} exited with {process.returncode} before listening")
        with socket.socket() as probe:
            probe.settimeout(0.2)
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listened on 127.0.0.1:{port} within {timeout:g} s")


def wait_listening(path: Path, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Wait until something accepts connections on the Unix socket `path`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process {process.pid} exited with {process.returncode} before listening")
        with socket.socket(socket.AF_UNIX) as probe:
            if probe.connect_ex(str(path)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listened on unix:{path} within {timeout:g} s")


class Daemon:
    """`vnpu serve` in a process of its own (as users run it), on a free loopback port.

    Two settings differ from the defaults, neither of which changes what a call does: VNPU_CONTEXT_GRACE=0.2 (a
    disconnected client's context is reclaimed after 0.2 s instead of 2 s, so figure 9 waits less) and
    VNPU_MAX_MESSAGE=512MiB (figure 5 writes a 256 MiB host buffer in one remote call, whose envelope is a few
    bytes over the default 256 MiB limit)."""

    def __init__(self, memory: str = "1GiB", extra_env: dict[str, str] | None = None, uds: Path | None = None) -> None:
        """On a free loopback port, or on the Unix socket `uds` (`vnpu serve --uds`; the endpoint is unix:PATH)."""
        self.port = free_port()
        self.endpoint = f"unix:{uds}" if uds else f"http://127.0.0.1:{self.port}"
        env = child_env(VNPU_CONTEXT_GRACE="0.2", VNPU_MAX_MESSAGE="512MiB", **(extra_env or {}))
        where = ["--uds", str(uds)] if uds else ["--host", "127.0.0.1", "--port", str(self.port)]
        command = [sys.executable, "-m", "server.cli", "serve", *where, "--memory", memory, "--log-level", "warning"]
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
        transport = httpx.HTTPTransport(uds=str(uds)) if uds else None
        self.http = httpx.Client(base_url="http://localhost" if uds else self.endpoint, timeout=30, transport=transport)
        try:
            wait_listening(uds, self.process) if uds else wait_port(self.port, self.process)
            self.wait_healthy()
        except BaseException:
            self.http.close()
            stop(self.process)
            raise

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_healthy(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if self.http.get("/healthz", timeout=2).status_code == 200:
                    return
            time.sleep(0.05)
        raise RuntimeError("the daemon did not become healthy")

    def rss(self) -> int:
        """The daemon's resident set size, bytes (VmRSS)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the daemon has used so far, from /proc (clock-tick resolution)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def pinned(self) -> tuple[int, int]:
        """(segments, bytes) of the daemon's pinned host memory: its /dev/shm/vnpu-<pid>-* files."""
        sizes = [p.stat().st_size for p in SHM_DIR.glob(f"vnpu-{self.pid}-*")]
        return len(sizes), sum(sizes)

    def device_used(self, device: int = 0) -> int:
        used: int = self.http.get("/v1/devices").json()[device]["memory"]["used"]
        return used

    def close(self) -> None:
        self.http.close()
        stop(self.process)

    def __enter__(self) -> Daemon:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def spawn(args: Sequence[str], **env: str) -> subprocess.Popen[str]:
    """A Python helper process (`python -m bench.worker ...`, an RPyC server) with pipes for its stdin/stdout."""
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        env=child_env(**env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
