"""Figure 13: the daemon's memory per call (tracemalloc, in a second daemon started by bench/traced_daemon.py):
bytes retained per call once the daemon is warm, the transient peak of a call, and what the device's trace ring
holds per record while it fills.

The trace ring keeps the last VNPU_TRACE_CAPACITY task records (100k by default): until it is full every traced
task adds a record, which is bounded memory, not garbage. The traced daemon gets a small ring, filled by the
warm-up, so that what an eager launch retains afterwards is what a launch leaves behind for good; the ring's cost
per record is measured on its own while it fills."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

from bench.daemon import free_port, spawn, stop, wait_port
from bench.report import Goal, Row
from bench.wire import AddOperands, Bench, close_session, open_session
from client import acl

TRACE = "server/npu/core/trace.py"  # where the trace ring's records are made


def _ask(process: subprocess.Popen[str], command: str) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(command + "\n")
    for line in process.stdout:
        if line.startswith("trace "):
            answer: dict[str, Any] = json.loads(line[6:])
            return answer
    raise RuntimeError("the traced daemon stopped answering")


class Traced:
    """Runs of calls against the traced daemon, each between a "reset" and a "read"."""

    def __init__(self, daemon: subprocess.Popen[str]) -> None:
        self.daemon = daemon
        self.sites: dict[str, list[list[Any]]] = {}

    def retained(self, run: Callable[[int], object], n: int, kind: str) -> float:
        """Bytes retained per call over `n` calls of `run`; the sites that grew most, per call, under `kind`."""
        before = _ask(self.daemon, "reset")["current"]
        run(n)
        after = _ask(self.daemon, "read")
        self.sites[kind] = [[site, size / n, blocks / n] for site, size, blocks in after["grown"]]
        return float(after["current"] - before) / n

    def peak(self, run: Callable[[int], object], n: int) -> float:
        """The transient peak over `n` calls of `run`, per call."""
        before = _ask(self.daemon, "reset")["current"]
        run(n)
        return float(_ask(self.daemon, "read")["peak"] - before) / n


def figure13(bench: Bench) -> list[Row]:
    calls, ring = bench.pick(2000, 50), bench.pick(1000, 100)
    warm = ring + calls // 2  # past the ring's capacity: the ring is full before anything is measured
    port = free_port()
    daemon = spawn(["-m", "bench.traced_daemon", str(port)], VNPU_TRACE_CAPACITY=str(ring))
    try:
        wait_port(port, daemon)  # type: ignore[arg-type]
        session = open_session(f"http://127.0.0.1:{port}")
        bench.use(session)
        try:
            stream = acl.aclrtCreateStream()
            ops = AddOperands(8)

            def waits(n: int) -> None:
                for _ in range(n):
                    acl.aclrtSynchronizeStreamWithTimeout(stream, -1)

            def launches(n: int) -> None:
                for _ in range(n):
                    ops.launch(stream)
                acl.aclrtSynchronizeStream(stream)

            traced = Traced(daemon)
            waits(20)
            launches(ring // 4)  # warm, and the ring a quarter full
            traced.retained(launches, ring // 2, "ring")  # three quarters full: not full yet
            # what the trace itself keeps (a first run also fills free lists: bytes other sites keep for good)
            per_record = sum(size for site, size, _ in traced.sites["ring"] if site.startswith(TRACE))
            waits(warm)
            wait_retained = traced.retained(waits, calls, "wait")
            wait_peak = traced.peak(waits, 1)
            launches(warm)  # the ring is full from here on
            launch_retained = traced.retained(launches, calls, "launch")
            batch_peak = traced.peak(launches, calls)
            acl.aclrtDestroyStream(stream)
            ops.free()
        finally:
            close_session(session)
            bench.use()
    finally:
        stop(daemon, 10)
    note = f"tracemalloc, {calls} calls after {warm} of warm-up, trace ring of {ring}"
    return [
        Row(
            "13",
            "daemon bytes retained per waiting call",
            "B",
            [wait_retained],
            goal=Goal("<=", 64, on="value"),
            note=note,
            extra={"grown_sites_per_call": traced.sites["wait"]},
        ),
        Row("13", "daemon transient bytes of one waiting call (peak)", "B", [wait_peak], note=note),
        Row(
            "13",
            "daemon bytes retained per eager launch",
            "B",
            [launch_retained],
            goal=Goal("<=", 64, on="value"),
            note=note,
            extra={"grown_sites_per_call": traced.sites["launch"]},
        ),
        Row("13", "daemon transient bytes per eager launch (batch peak / calls)", "B", [batch_peak], note=note),
        Row(
            "13",
            "the device's trace ring: bytes per task record (bounded by VNPU_TRACE_CAPACITY records)",
            "B",
            [per_record],
            note=f"tracemalloc: what {TRACE} kept over {ring // 2} eager launches into a ring of {ring} a quarter full",
            extra={"grown_sites_per_call": traced.sites["ring"]},
        ),
    ]
