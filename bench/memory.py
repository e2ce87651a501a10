"""Figure 9: the daemon's memory -- resident set when idle, bytes per captured task, and whether device and pinned
host memory return exactly to their baseline after a client disconnects without freeing anything."""

from __future__ import annotations

import contextlib
import os
import signal
import time

from bench.daemon import Daemon, spawn, stop
from bench.launches import capture
from bench.report import Goal, Row
from bench.scaling import _line
from bench.wire import AddOperands, Bench, close_session, open_session
from client import acl

MiB = 1 << 20


def idle_row(daemon: Daemon) -> Row:
    """Measured right after start, before any client connected."""
    samples = []
    for _ in range(3):
        samples.append(float(daemon.rss()))
        time.sleep(0.05)
    return Row("9", "daemon RSS, idle (no client yet)", "B", samples, note="VmRSS")


def figure9(bench: Bench, idle: Row) -> list[Row]:
    return [idle, _per_task(bench), *_disconnect(bench)]


def _per_task(bench: Bench) -> Row:
    """RSS growth of the daemon per captured task: models of `tasks` 8-element aclnnAdd launches captured one after
    another and kept alive, each model's growth divided by its tasks (the median of the models)."""
    tasks, models = bench.pick(10_000, 1000), bench.pick(3, 2)
    session = open_session(bench.daemon.endpoint)
    bench.use(session)
    ops = AddOperands(8)
    stream = acl.aclrtCreateStream()
    kept, per_task = [], []
    try:
        warm, _ = capture(ops, stream, 100)  # allocator and caches warmed before the first measured model
        acl.aclmdlRIDestroy(warm)
        for _ in range(models):
            before = bench.daemon.rss()
            model, _ = capture(ops, stream, tasks)
            acl.aclrtGetDevice()  # a round trip: every launch before it has been handled
            per_task.append((bench.daemon.rss() - before) / tasks)
            kept.append(model)
        for model in kept:
            acl.aclmdlRIDestroy(model)
        acl.aclrtDestroyStream(stream)
        ops.free()
    finally:
        close_session(session)
        bench.use()
    return Row(
        "9",
        f"daemon memory per captured task ({tasks // 1000}k-task models, RSS growth)",
        "B",
        per_task,
        goal=Goal("<=", 1024, on="value"),
        extra={"tasks_per_model": tasks, "models": models},
    )


def _disconnect(bench: Bench) -> list[Row]:
    """A client process allocates 64 MiB of device and of pinned host memory, a stream, an event and a model,
    queues a copy, and is killed (SIGKILL: no aclFinalize, no close frame). Its context must be reclaimed."""
    nbytes = bench.pick(64 * MiB, 4 * MiB)
    daemon = bench.daemon
    device_delta, pinned_delta, segment_delta, rss_delta, seconds = [], [], [], [], []
    for _ in range(bench.pick(2, 1)):
        device0, (segments0, pinned0), rss0 = daemon.device_used(), daemon.pinned(), daemon.rss()
        leaker = spawn(["-m", "bench.worker", "leak", daemon.endpoint, str(nbytes)])
        try:
            if _line(leaker, 60) != "ready":
                raise RuntimeError("the leaking client did not start")
            if daemon.device_used() - device0 < nbytes or daemon.pinned()[1] - pinned0 < nbytes:
                raise RuntimeError("the leaking client's memory is not visible in the daemon")
            with contextlib.suppress(ProcessLookupError):
                os.kill(leaker.pid, signal.SIGKILL)
            leaker.wait(10)
        finally:
            stop(leaker, 5)
        gone = time.monotonic()
        deadline = gone + 10
        while time.monotonic() < deadline:
            if daemon.device_used() == device0 and daemon.pinned() == (segments0, pinned0):
                break
            time.sleep(0.02)
        seconds.append(time.monotonic() - gone)
        device_delta.append(float(daemon.device_used() - device0))
        segments, pinned = daemon.pinned()
        pinned_delta.append(float(pinned - pinned0))
        segment_delta.append(segments - segments0)
        rss_delta.append(float(daemon.rss() - rss0))
    note = f"{nbytes // MiB} MiB each, client killed; grace 0.2 s"
    extra = {
        "seconds_to_baseline": seconds,
        "pinned_segments_delta": segment_delta,
        "daemon_rss_delta_bytes (information: freed device pages stay in the arena's buffer)": rss_delta,
    }
    return [
        Row(
            "9",
            "device memory after the client disconnects, vs before",
            "B",
            device_delta,
            goal=Goal("exact", 0, on="value"),
            note=note,
            extra=extra,
        ),
        Row(
            "9",
            "pinned host memory after the client disconnects, vs before",
            "B",
            pinned_delta,
            goal=Goal("exact", 0, on="value"),
            note=note,
        ),
    ]
