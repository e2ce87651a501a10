"""Figure 12: a waiting call and the seed loop step against the raw round trip of the same transport, over loopback
TCP and over a Unix socket (`vnpu serve --uds`). The floors are plain-Python echo servers in processes of their own
(bench.echo_server), measured in the same repetitions and under the same placement: the servers (echo, daemon) on
one core and this process on another, and once everything on one core (bench.placement says why)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.daemon import ROOT, Daemon, child_env, free_port, stop
from bench.echo_server import connect, round_trips
from bench.launches import SeedLoop
from bench.placement import ONE_CORE, TWO_CORES, Placement
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


@contextlib.contextmanager
def raw_echo(kind: str, address: str) -> Iterator[tuple[socket.socket, int]]:
    """A plain-Python echo server of `kind` ("tcp" or "unix") at `address` in a process of its own: a client socket
    connected to it and the server's PID; the socket closed and the process stopped (by its PID) afterwards."""
    process = echo_process(kind, address)
    try:
        with connect(kind, address) as sock:
            yield sock, process.pid
    finally:
        stop(process)


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
        with (
            raw_echo("tcp", str(free_port())) as (tcp_echo, tcp_pid),
            raw_echo("unix", echo_path) as (unix_echo, unix_pid),
            Daemon(memory="256MiB", uds=socket_path) as unix_daemon,
        ):
            unix_session = open_session(unix_daemon.endpoint)
            over = (
                Transport("loopback TCP", tcp_echo, bench.session, (tcp_pid, bench.daemon.pid)),
                Transport("a Unix socket", unix_echo, unix_session, (unix_pid, unix_daemon.pid)),
            )
            try:
                rows = _measure(bench, calls, steps, over)
            finally:
                close_session(unix_session)
    return rows


@dataclass
class Transport:
    """One way to the daemon, with its raw floor: the echo socket, the session, the PIDs to pin (echo, daemon)."""

    name: str
    echo: socket.socket
    session: Session
    servers: tuple[int, int]
    idle: int = 0  # a stream with nothing queued (the waiting call's argument)
    seed: SeedLoop | None = None

    def open(self, bench: Bench) -> None:
        bench.use(self.session)
        self.idle = self.session.call("aclrtCreateStream")
        self.seed = SeedLoop()

    def close(self, bench: Bench) -> None:
        bench.use(self.session)
        assert self.seed is not None
        self.seed.check()
        self.seed.close()
        self.session.call("aclrtDestroyStream", self.idle)
        bench.use()

    def measures(self, bench: Bench, placement: Placement, calls: int, steps: int) -> list[Callable[[], float]]:
        """The raw round trip, the waiting call and the seed step, each under `placement`."""

        def seed_steps() -> float:
            bench.use(self.session)
            assert self.seed is not None
            begin = time.perf_counter()
            for _ in range(steps):
                self.seed.step()
            return (time.perf_counter() - begin) / steps

        return [
            placement.around(self.servers, measure)
            for measure in (
                per_call(calls, lambda: round_trips(self.echo, 1)),
                per_call(calls, lambda: self.session.call(WAITING, self.idle, -1)),
                seed_steps,
            )
        ]


def _measure(bench: Bench, calls: int, steps: int, over: tuple[Transport, ...]) -> list[Row]:
    """Rows of figure 12: the waiting call and the seed step over each transport with daemon and client on two
    cores, against the raw round trip on two cores; and the waiting call over TCP with everything on one core."""
    for transport in over:
        transport.open(bench)
    # (transport, placement, how many of its measures: the one-core run has no seed step)
    runs = [(transport, TWO_CORES, 3) for transport in over] + [(over[0], ONE_CORE, 2)]
    measures = [m for t, placement, k in runs for m in t.measures(bench, placement, calls, steps)[:k]]
    samples = interleave(bench.reps, *measures)
    for transport in over:
        transport.close(bench)
    rows = []
    at = 0
    for transport, placement, k in runs:
        floor, call, *seed = samples[at : at + k]
        at += k
        floor_label = f"a raw round trip over {transport.name} {placement.name} (Python echo, 64 B)"
        rows.append(
            Row(
                "12",
                f"a waiting call over {transport.name} ({WAITING}, idle stream), daemon and client {placement.name}",
                "s",
                call,
                floor_label,
                floor,
                ratio=[c / f for c, f in zip(call, floor, strict=True)],
                ratio_meaning="raw round trips",
                goal=Goal("<=", 2, 1.5) if seed else None,  # the one-core row shows the CPU, not the goal
                extra={"calls_per_rep": calls},
            )
        )
        if not seed:
            continue
        step = seed[0]
        rows.append(
            Row(
                "12",
                f"the seed loop step over {transport.name}, daemon and client {placement.name}",
                "s",
                step,
                floor_label,
                floor,
                ratio=[s / f for s, f in zip(step, floor, strict=True)],
                ratio_meaning="raw round trips",
                goal=Goal("<=", 5, 3),
                extra={"steps_per_rep": steps},
            )
        )
    return rows
