"""Load and fault tests against a real daemon: `python -m server.cli serve` as a subprocess on a free 127.0.0.1
port, one per test module, stopped by its PID with SIGTERM (SIGKILL if it does not stop in time).

Fixtures and helpers other modules of this directory use (keep the names stable):

- `daemon` (module scope): a `Daemon` with `.url`, `.pid`, `.port`, `.proc` and `.log` (its stderr file);
  `idle_daemon`: the same, once no context of an earlier test is left;
- `device_free(url, device=0) -> int`: the device's free memory from GET /v1/devices/{device};
- `device_view(url, device=0)`: that whole view; `context_ids(url)`: the contexts it lists;
- `start_daemon(...)` / `Daemon.stop()`: a daemon of a test's own (a restart test, other settings);
- `child_env(**variables)`: the environment of a client process (PYTHONPATH = the repository root, no VNPU_*
  variable of the test run's own);
- `rss_kib(pid)`: VmRSS of a process; `eventually(check, seconds)`: a bounded poll;
- `ClientThread`, `gather`: calls made from threads of the test process, each bounded in time.
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
DAEMON_MEMORY = "256MiB"
CONTEXT_GRACE_S = 0.5  # how long a context outlives its last session in the fixture's daemon
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def child_env(**variables: str) -> dict[str, str]:
    """The environment of a process the tests start: this one's, without VNPU_* settings, with the repository
    root importable (tests.load.workers, client, proto, server) and `variables` added."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VNPU_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env.update(variables)
    return env


@dataclass
class Daemon:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            pytest.fail(f"the daemon (pid {self.pid}) exited with {self.proc.returncode}:\n{self.log_tail()}")

    def healthy(self, timeout: float = 2.0) -> bool:
        try:
            return httpx.get(f"{self.url}/healthz", timeout=timeout).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT_S) -> int:
        """Send `sig` to the daemon's PID and wait for it (SIGKILL after `timeout`); returns its exit status."""
        if self.proc.poll() is None:
            os.kill(self.pid, sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
                pytest.fail(f"the daemon (pid {self.pid}) did not stop within {timeout} s of signal {sig}")
        return self.proc.returncode


def start_daemon(
    log_dir: Path,
    port: int | None = None,
    memory: str = DAEMON_MEMORY,
    **settings: str,
) -> Daemon:
    """`python -m server.cli serve` on `port` (a free one by default); returns once /healthz answers.
    `settings` become VNPU_<NAME> variables (context_grace="0.5" -> VNPU_CONTEXT_GRACE=0.5)."""
    port = port or free_port()
    env = child_env(**{f"VNPU_{name.upper()}": value for name, value in settings.items()})
    args = [sys.executable, "-m", "server.cli", "serve", "--port", str(port), "--memory", memory]
    args += ["--log-level", "warning"]
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"daemon-{port}-{time.monotonic_ns()}.txt"
    with log.open("wb") as err:
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
    daemon = Daemon(proc, port, log, env)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not daemon.healthy(timeout=1.0):
        if proc.poll() is not None or time.monotonic() > deadline:
            daemon.stop(signal.SIGKILL, timeout=10)
            pytest.fail(f"the daemon did not answer /healthz within {START_TIMEOUT_S} s:\n{daemon.log_tail()}")
        time.sleep(0.05)
    return daemon


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon for the module (256 MiB, a context grace period of CONTEXT_GRACE_S); SIGTERM at the end, and
    the daemon must exit cleanly (status 0) within STOP_TIMEOUT_S."""
    started = start_daemon(tmp_path_factory.mktemp("daemon"), context_grace=str(CONTEXT_GRACE_S), shutdown_deadline="5")
    try:
        yield started
    finally:
        status = started.stop()
    assert status == 0, f"the daemon exited with {status}:\n{started.log_tail()}"


@pytest.fixture
def idle_daemon(daemon: Daemon) -> Daemon:
    """The module's daemon once no context of an earlier test is listed any more (a reclaim is asynchronous: it
    comes a grace period after a client's last session ends)."""
    eventually(lambda: device_view(daemon.url)["contexts"] == [], CONTEXT_GRACE_S + 10, "earlier contexts end")
    daemon.check_alive()
    return daemon


def device_view(url: str, device: int = 0) -> dict[str, Any]:
    """GET /v1/devices/{device}: memory, stream/event/model counts, and the caller's contexts in detail."""
    response = httpx.get(f"{url}/v1/devices/{device}", timeout=10)
    response.raise_for_status()
    view: dict[str, Any] = response.json()
    return view


def device_free(url: str, device: int = 0) -> int:
    """The device's free memory in bytes (GET /v1/devices/{device})."""
    free: int = device_view(url, device)["memory"]["free"]
    return free


def context_ids(url: str, device: int = 0) -> set[str]:
    return {c["id"] for c in device_view(url, device)["contexts"]}


def rss_kib(pid: int) -> int:
    """VmRSS of process `pid` in KiB (/proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


def eventually(check: Callable[[], bool], seconds: float, what: str, interval: float = 0.05) -> None:
    """Poll `check` until it is true; fail naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds} s: {what}")
        time.sleep(interval)


Answer = queue.Queue[tuple[bool, Any]]


class ClientThread:
    """One thread of the test process acting as a client thread: jobs run one after another in it, so the daemon
    sees one client thread (with its own current device and capture exchange mode). `submit` returns at once;
    `call` waits for the result within a bound, and a call that neither returns nor raises in time is a hang that
    fails the test. What a job raised is raised to whoever collects its answer."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.Queue[tuple[Callable[[], Any], Answer] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            function, answer = job
            try:
                answer.put((True, function()))
            except BaseException as error:
                answer.put((False, error))

    def submit(self, function: Callable[[], Any]) -> Answer:
        answer: Answer = queue.Queue()
        self._jobs.put((function, answer))
        return answer

    def call(self, seconds: float, function: Callable[..., Any], *args: Any) -> Any:
        answer = self.submit(lambda: function(*args))
        try:
            ok, value = answer.get(timeout=seconds)
        except queue.Empty:
            pytest.fail(f"{getattr(function, 'func', function)!r}{args!r:.200} did not return within {seconds} s")
        if not ok:
            raise value
        return value

    def stop(self) -> None:
        """Let the thread end after its current job (a daemon thread: a hung job does not keep the run alive)."""
        self._jobs.put(None)
        self._thread.join(1)


def gather(answers: list[Answer], seconds: float = 30) -> list[Any]:
    """The results of jobs submitted to several ClientThreads (which ran concurrently); raises the first failure."""
    outcomes = [answer.get(timeout=seconds) for answer in answers]
    for ok, value in outcomes:
        if not ok:
            raise value
    return [value for _, value in outcomes]
