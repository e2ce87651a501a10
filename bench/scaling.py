"""Figure 8: 1, 2, 4, 8 client processes each running the seed loop at once -- aggregate steps/s.

The eight worker processes (`bench.worker seed`) connect and capture once; each round then starts k of them at
the same instant for a fixed window. The rounds go 1, 2, 4, 8, 1, 2, 4, 8, ... so drift touches every level. The
daemon's CPU time over each round, as a share of one core, says where its core saturates (the daemon runs the
calls of every client on one event loop)."""

from __future__ import annotations

import contextlib
import select
import subprocess
import time

from bench.daemon import spawn, stop
from bench.report import Goal, Row, summary
from bench.wire import Bench


def _line(worker: subprocess.Popen[str], timeout: float) -> str:
    assert worker.stdout is not None
    ready, _, _ = select.select([worker.stdout], [], [], timeout)
    if not ready:
        raise RuntimeError(f"worker {worker.pid} said nothing within {timeout:g} s")
    line = worker.stdout.readline()
    if not line:
        raise RuntimeError(f"worker {worker.pid} exited ({worker.poll()})")
    return line.strip()


def figure8(bench: Bench) -> list[Row]:
    levels = bench.pick([1, 2, 4, 8], [1, 2])
    window = bench.pick(1.5, 0.3)
    workers = [spawn(["-m", "bench.worker", "seed", bench.daemon.endpoint]) for _ in range(max(levels))]
    rates: dict[int, list[float]] = {k: [] for k in levels}
    busy: dict[int, list[float]] = {k: [] for k in levels}  # the daemon's CPU seconds per second of the round
    try:
        for w in workers:
            if _line(w, 60) != "ready":
                raise RuntimeError("a seed worker did not start")
        for _ in range(bench.reps if bench.quick else max(3, bench.reps - 2)):
            for k in levels:
                start = time.monotonic() + 0.1
                for w in workers[:k]:
                    assert w.stdin is not None
                    w.stdin.write(f"run {start:.6f} {window}\n")
                    w.stdin.flush()
                total = 0.0
                cpu = bench.daemon.cpu_seconds()
                for w in workers[:k]:
                    _, steps, elapsed = _line(w, window + 30).split()
                    total += int(steps) / float(elapsed)
                rates[k].append(total)
                busy[k].append((bench.daemon.cpu_seconds() - cpu) / max(time.monotonic() - start, window))
        for w in workers:
            assert w.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                w.stdin.write("quit\n")
                w.stdin.flush()
        for w in workers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                w.wait(20)
    finally:
        for w in workers:
            stop(w, 5)
    failed = [w.returncode for w in workers if w.returncode != 0]
    if failed:
        raise RuntimeError(f"seed workers exited with {failed}")
    one = rates[levels[0]]
    rows = []
    for k in levels:
        ratio = [r / base for r, base in zip(rates[k], one, strict=True)]
        rows.append(
            Row(
                "8",
                f"{k} client process{'es' if k > 1 else ''} running the seed loop, aggregate",
                "/s",
                rates[k],
                "1 client process" if k > 1 else None,
                one if k > 1 else None,
                ratio=ratio if k > 1 else None,
                ratio_meaning="of one client's rate",
                goal=Goal(">=", 1.0) if k == max(levels) and k > 1 else None,
                note=f"daemon {summary(busy[k])['median']:.0%} of a core",
                extra={"window_s": window, "daemon_core_share": busy[k]},
            )
        )
    rows[0].extra["curve_steps_per_s"] = {k: summary(v)["median"] for k, v in rates.items()}
    return rows
