"""Figure 12: a waiting call and the seed loop step against the raw round trip of the same transport, over loopback
TCP and over a Unix socket (`vnpu serve --uds`). The floors are plain-Python echo servers in processes of their own
(bench.echo_server), measured in the same repetitions."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.daemon import ROOT, Daemon, child_env, free_port, stop
from bench.echo_server import connect, round_trips
from bench.launches import SeedLoop
from bench.report import Goal, Row, interleave
from bench.wire import Bench, close_session, open_session
from client.session import Session

# a waiting call that reaches the daemon: a plain aclrtSynchronizeStream of a stream known finished is answered by
# the client without a request (client/idlenews.py), which would measure nothing of the round trip
WAITING = "aclrtSynchronizeStreamWithTimeout"


def echo_process(kind: str, address: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "bench.echo_server", kind, address]
    process = subprocess.Popen(command, cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        stop(process)
        raise RuntimeError(f"the {kind} echo server did not start")
    return process


def per_call(count: int, run: Callable[[], object]) -> Callable[[], float]:
    def measure() -> float:
        begin = time.perf_counter()
        for _ in range(count):
            run()
        return (time.perf_counter() - begin) / count

    return measure


def figure12(bench: Bench) -> list[Row]:
    calls, steps = bench.pick(3000, 200), bench.pick(300, 20)
    with tempfile.TemporaryDirectory(prefix="vnpu-bench-") as folder:
        socket_path, echo_path = Path(folder) / "vnpu.sock", str(Path(folder) / "echo.sock")
        port = str(free_port())
        echoes = [echo_process("tcp", port), echo_process("unix", echo_path)]
        try:
            tcp_echo, unix_echo = connect("tcp", port), connect("unix", echo_path)
            with Daemon(memory="256MiB", uds=socket_path) as unix_daemon:
                unix_session = open_session(unix_daemon.endpoint)
                rows = _measure(bench, calls, steps, (tcp_echo, unix_echo), (bench.session, unix_session))
                close_session(unix_session)
            tcp_echo.close()
            unix_echo.close()
        finally:
            for process in echoes:
                stop(process)
    return rows


def _measure(
    bench: Bench, calls: int, steps: int, echoes: tuple[socket.socket, ...], sessions: tuple[Session, ...]
) -> list[Row]:
    """Rows of figure 12: over TCP (echoes[0], sessions[0]) and over the Unix socket (echoes[1], sessions[1])."""
    idle = []
    seeds = []
    for session in sessions:
        bench.use(session)
        idle.append(session.call("aclrtCreateStream"))
        seeds.append(SeedLoop())

    def seed_steps(i: int) -> Callable[[], float]:
        def measure() -> float:
            bench.use(sessions[i])
            begin = time.perf_counter()
            for _ in range(steps):
                seeds[i].step()
            return (time.perf_counter() - begin) / steps

        return measure

    samples = interleave(
        bench.reps,
        per_call(calls, lambda: round_trips(echoes[0], 1)),
        per_call(calls, lambda: round_trips(echoes[1], 1)),
        per_call(calls, lambda: sessions[0].call(WAITING, idle[0], -1)),
        per_call(calls, lambda: sessions[1].call(WAITING, idle[1], -1)),
        seed_steps(0),
        seed_steps(1),
    )
    tcp_rt, unix_rt = samples[:2]
    for i, session in enumerate(sessions):
        bench.use(session)
        seeds[i].check()
        seeds[i].close()
        session.call("aclrtDestroyStream", idle[i])
    bench.use()
    rows = []
    for name, floor, call, step in (
        ("loopback TCP", tcp_rt, samples[2], samples[4]),
        ("a Unix socket", unix_rt, samples[3], samples[5]),
    ):
        rows.append(
            Row(
                "12",
                f"a waiting call over {name} ({WAITING}, idle stream)",
                "s",
                call,
                f"a raw round trip over {name} (Python echo, 64 B)",
                floor,
                ratio=[c / f for c, f in zip(call, floor, strict=True)],
                ratio_meaning="raw round trips",
                goal=Goal("<=", 2, 1.5),
                extra={"calls_per_rep": calls},
            )
        )
        rows.append(
            Row(
                "12",
                f"the seed loop step over {name}",
                "s",
                step,
                f"a raw round trip over {name} (Python echo, 64 B)",
                floor,
                ratio=[s / f for s, f in zip(step, floor, strict=True)],
                ratio_meaning="raw round trips",
                goal=Goal("<=", 5, 3),
                extra={"steps_per_rep": steps},
            )
        )
    return rows
