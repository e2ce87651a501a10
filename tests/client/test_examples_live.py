"""The client examples end to end: a real `python -m server.cli serve` process on a free 127.0.0.1 port, and every
examples/*.py that talks to a daemon run as a user runs it (`VNPU_ENDPOINT=... python examples/NAME.py`), each
checking its own results against float64. The seed's example must print exactly what the C program prints, over
both transports and with the daemon's host memory mapped here (auto) or reached through the wire (remote)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemons import Daemon, serving

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
RUN_TIMEOUT_S = 60

# what the C program of the seed prints (ACL_LOG adds "\n" to a format that already ends in "\n")
SEED_OUTPUT = (
    "[INFO] execute model, loop: 0\n"
    f"[INFO] {' '.join(['2.200000'] * 8)}\n\n"
    "[INFO] execute model, loop: 1\n"
    "[INFO] update alpha value of aclnnAdd\n"
    f"[INFO] {' '.join(['6.600000'] * 8)}\n\n"
)

# the lines each example must print, in this order (other lines may come between them)
KEY_LINES: dict[str, list[str]] = {
    "task_update_concurrent.py": SEED_OUTPUT.splitlines(),
    "task_update_then_execute.py": [
        line
        for i, value in enumerate(["5.5", "1.1", "2.0", "5.5", "1.1"])
        for line in (
            f"[INFO] update alpha value of aclnnAdd to {value}",
            f"[INFO] execute model, loop: {i}",
            f"[INFO] loop {i} matches float64",
        )
    ],
    "split_models.py": [
        line
        for i, value in enumerate(["1.1", "5.5", "1.1", "5.5"])
        for line in (
            f"[INFO] execute model 1, loop: {i}",
            f"[INFO] launch aclnnAdd with alpha {value}",
            f"[INFO] execute model 2, loop: {i}",
            f"[INFO] loop {i} matches float64",
        )
    ],
    "cross_stream_capture.py": ["[INFO] stream2 capture status: 1"]
    + [
        line
        for i in range(4)
        for line in (f"[INFO] execute model, loop: {i}", f"[INFO] loop {i} equals eager execution and matches float64")
    ],
    "host_function_pipeline.py": [f"[INFO] batch {i} matches float64" for i in range(6)]
    + ["[INFO] the report thread ran the progress callbacks [0, 1, 2, 3, 4, 5]"],
    "ipc_event.py": [
        "[INFO] parent: exported a 64-byte handle",
        "[INFO] child: my stream waits for the parent's record: True",
        "[INFO] child: released by the parent's record: True",
        "[INFO] parent: the child exited with 0",
    ],
    "virtual_memory.py": [
        "[INFO] parent: granule 2097152 bytes; the pool mapped 4 blocks for 3 tensors",
        "[INFO] parent: x + 2 * y across the seams matches float64: True",
        "[INFO] parent: put the child's pid on the whitelist",
        "[INFO] parent: the child mapped the first block and read x: True",
    ],
    "built_model_switch.py": [
        f"[INFO] selector {choice}: took the {path} path, matches float64: True"
        for choice, path in ((0, "small"), (1, "big"), (0, "small"))
    ],
    "edit_model_per_step.py": [f"[INFO] edit step {i}: scale" for i in range(4)]
    + [f"[INFO] group step {i}: scale" for i in range(4)]
    + ["[INFO] both loops match float64: True; they agree bit for bit: True"],
    "cond_model.py": [
        "[INFO] WHILE: the body ran while the word counted 3, 2, 1, matches float64: True",
        "[INFO] SWITCH: votes [0, 1, 1] chose case 2, matches float64: True",
        "[INFO] SWITCH: votes [1, 0, 0] chose case 1, matches float64: True",
        "[INFO] SWITCH: votes [0, 0, 0] chose case 0, matches float64: True",
        "[INFO] IF: the host wrote 1, the launch's default 0 took the false branch, matches float64: True",
    ],
    "external_sync.py": [
        f"[INFO] step {i}: the consumer saw the producer's result of this step, matches float64: True" for i in range(4)
    ],
    "fia_decode_update.py": [f"[INFO] step {i} matches float64" for i in range(10)],
    "update_from_another_process.py": [
        line
        for i, (value, result) in enumerate([("1.1", "2.2"), ("5.5", "6.6"), ("1.1", "2.2"), ("5.5", "6.6")])
        for line in (
            f"execute model, loop: {i}",
            f"update alpha value of aclnnAdd to {value}",
            " ".join([f"{result}00000"] * 8),
            f"loop {i} matches float64",
        )
    ]
    + ["stopped"],
}


def daemon_examples() -> list[str]:
    """The examples that talk to a daemon (through client.acl); eager_add.py drives the device in-process."""
    return sorted(p.name for p in EXAMPLES.glob("*.py") if "client.acl" in p.read_text())


@pytest.fixture(scope="module")
def daemon_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """`python -m server.cli serve` on a free port; /healthz answers before the tests start; SIGTERM at the end."""
    with serving(tmp_path_factory.mktemp("daemon")) as daemon:
        yield daemon


def run_example(daemon: Daemon, script: str, **variables: str) -> subprocess.CompletedProcess[str]:
    daemon.check_alive()
    env = {k: v for k, v in os.environ.items() if not k.startswith("VNPU_")}
    env.update(PYTHONPATH=str(ROOT), VNPU_ENDPOINT=daemon.url, **variables)
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, f"{script} exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def assert_lines_in_order(stdout: str, expected: list[str]) -> None:
    """Each expected line is contained in a line of `stdout`, in this order."""
    lines = iter(stdout.splitlines())
    for want in expected:
        if not any(want in line for line in lines):
            pytest.fail(f"missing (in order): {want!r}\n--- stdout ---\n{stdout}")


def test_every_daemon_example_is_checked() -> None:
    assert set(daemon_examples()) == set(KEY_LINES)
    assert "eager_add.py" not in daemon_examples()


@pytest.mark.parametrize("host_memory", ["auto", "remote"])
@pytest.mark.parametrize("transport", ["ws", "http"])
def test_seed_example_prints_the_c_output(daemon_process: Daemon, transport: str, host_memory: str) -> None:
    done = run_example(
        daemon_process, "task_update_concurrent.py", VNPU_TRANSPORT=transport, VNPU_HOST_MEMORY=host_memory
    )
    assert done.stdout == SEED_OUTPUT, done.stdout + done.stderr


def test_seed_example_with_launch_blocking(daemon_process: Daemon) -> None:
    """Every call waits: the empty update's 507000 comes from aclmdlRICaptureTaskUpdateEnd itself, as in C."""
    done = run_example(daemon_process, "task_update_concurrent.py", VNPU_LAUNCH_BLOCKING="1")
    assert done.stdout == SEED_OUTPUT, done.stdout + done.stderr


@pytest.mark.parametrize("script", [s for s in daemon_examples() if s != "task_update_concurrent.py"])
def test_example(daemon_process: Daemon, script: str) -> None:
    done = run_example(daemon_process, script)
    assert_lines_in_order(done.stdout, KEY_LINES[script])


@pytest.mark.parametrize("script", [s for s in daemon_examples() if s != "task_update_concurrent.py"])
def test_example_remote_over_http(daemon_process: Daemon, script: str) -> None:
    """The same output when every call waits and host memory goes through the wire."""
    done = run_example(daemon_process, script, VNPU_TRANSPORT="http", VNPU_HOST_MEMORY="remote")
    assert_lines_in_order(done.stdout, KEY_LINES[script])
