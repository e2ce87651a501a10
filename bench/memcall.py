"""Figure 13: the daemon's memory per call (tracemalloc, in a second daemon started by bench/traced_daemon.py):
bytes retained per call after warm-up and the transient peak of a call, for a waiting call and an eager launch."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from bench.daemon import free_port, spawn, stop, wait_port
from bench.report import Goal, Row
from bench.wire import AddOperands, Bench, close_session, open_session
from client import acl


def _ask(process: subprocess.Popen[str], command: str) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(command + "\n")
    for line in process.stdout:
        if line.startswith("trace "):
            answer: dict[str, Any] = json.loads(line[6:])
            return answer
    raise RuntimeError("the traced daemon stopped answering")


def figure13(bench: Bench) -> list[Row]:
    calls, warm = bench.pick(2000, 50), bench.pick(300, 20)
    port = free_port()
    daemon = spawn(["-m", "bench.traced_daemon", str(port)])
    try:
        wait_port(port, daemon)  # type: ignore[arg-type]
        session = open_session(f"http://127.0.0.1:{port}")
        bench.use(session)
        try:
            stream = acl.aclrtCreateStream()
            ops = AddOperands(8)

            def wait() -> None:
                acl.aclrtSynchronizeStreamWithTimeout(stream, -1)

            def launches(n: int) -> None:
                for _ in range(n):
                    ops.launch(stream)
                acl.aclrtSynchronizeStream(stream)

            def measure(run: Any) -> tuple[float, float]:
                """(retained bytes per call over `calls`, transient bytes of one call)."""
                run(warm)
                before = _ask(daemon, "reset")["current"]
                run(1)
                single = _ask(daemon, "read")
                before = _ask(daemon, "reset")["current"]
                run(calls)
                after = _ask(daemon, "read")
                return (after["current"] - before) / calls, float(single["peak"] - before)

            wait_retained, wait_peak = measure(lambda n: [wait() for _ in range(n)])
            launch_retained, _ = measure(launches)
            before = _ask(daemon, "reset")["current"]
            launches(calls)
            batch_peak = (_ask(daemon, "read")["peak"] - before) / calls
            acl.aclrtDestroyStream(stream)
            ops.free()
        finally:
            close_session(session)
            bench.use()
    finally:
        stop(daemon, 10)
    note = f"tracemalloc, {calls} calls after {warm} of warm-up"
    return [
        Row(
            "13",
            "daemon bytes retained per waiting call",
            "B",
            [wait_retained],
            goal=Goal("<=", 64, on="value"),
            note=note,
        ),
        Row("13", "daemon transient bytes of one waiting call (peak)", "B", [wait_peak], note=note),
        Row(
            "13",
            "daemon bytes retained per eager launch",
            "B",
            [launch_retained],
            goal=Goal("<=", 64, on="value"),
            note=note,
        ),
        Row("13", "daemon transient bytes per eager launch (batch peak / calls)", "B", [batch_peak], note=note),
    ]
