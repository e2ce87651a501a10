"""PyTorch on vnpu: torch and torch_npu (the test extras pin 2.13.0) against a daemon the tests start and stop by
PID, in a torch process of their own (`source <toolkit>/bin/setenv.bash`, then python): torch loads torch_npu at
import, which loads the toolkit's libraries, and a crash or a hang must not take the test process with it.

When torch or torch_npu is missing the tests skip, except under CI=true, where they fail: CI installs both."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.daemons import ROOT, Daemon, clean_env, serving

HERE = Path(__file__).parent
TORCH_TIMEOUT_S = 240  # a torch process: ~7 s to import torch and torch_npu, then its cases


def _missing() -> list[str]:
    return [name for name in ("torch", "torch_npu") if importlib.util.find_spec(name) is None]


@pytest.fixture(scope="session")
def torch_installed() -> None:
    missing = _missing()
    if missing:
        why = (
            f"{' and '.join(missing)} not installed (pip install -e '.[test]' brings torch==2.13.0, torch-npu==2.13.0)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="session")
def toolkit(toolkit: Path, torch_installed: None) -> Path:
    """The session's toolkit, once torch and torch_npu are known to be installed."""
    return toolkit


@pytest.fixture(params=["1", "0"], ids=["queue-on", "queue-off"])
def queue(request: pytest.FixtureRequest) -> str:
    """torch_npu's task queue (TASK_QUEUE_ENABLE), on and off: the native libraries hold no interpreter, so a queue
    thread's ACL call never waits for the GIL the main thread holds (the CFFI libraries deadlocked there)."""
    value: str = request.param
    return value


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, torch_installed: None) -> Iterator[Daemon]:
    with serving(tmp_path_factory.mktemp("daemon"), "--memory", "1GiB") as running:
        yield running


@dataclass
class TorchRun:
    returncode: int
    stdout: str
    stderr: str

    def cases(self) -> dict[str, dict[str, str]]:
        """The JSON lines a case script printed, by case name."""
        found = {}
        for line in self.stdout.splitlines():
            if line.startswith("{"):
                record = json.loads(line)
                found[record["case"]] = record
        return found


def run_torch(
    toolkit: Path,
    daemon: Daemon,
    script: Path,
    *args: str,
    queue: str | None = "0",
    timeout: float = TORCH_TIMEOUT_S,
    port: int | None = None,
) -> TorchRun:
    """`script` in a torch process set up as a user would: the toolkit's setenv.bash, the daemon's endpoint, and
    torch_npu's task queue as `queue` says (None: unset, torch_npu's default); `port`: torch.distributed's."""
    daemon.check_alive()
    env = clean_env() | {"VNPU_ENDPOINT": daemon.url, "PYTHONPATH": str(ROOT)}
    if port is not None:
        env |= {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
    env.pop("TASK_QUEUE_ENABLE", None)
    if queue is not None:
        env["TASK_QUEUE_ENABLE"] = queue
    quoted = " ".join(f"'{a}'" for a in (sys.executable, str(script), *args))
    command = f"source {toolkit}/bin/setenv.bash && exec {quoted}"
    done = subprocess.run(["bash", "-c", command], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    return TorchRun(done.returncode, done.stdout, done.stderr)
