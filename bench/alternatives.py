"""Figure 7: what a user would pick instead to use numpy remotely -- RPyC, and vnpu's own REST -- running the eager
loop of figure 1 (one 8-element add per call, then wait for the last)."""

from __future__ import annotations

import subprocess
import time
from typing import Any

from bench.daemon import free_port, spawn, stop
from bench.report import Goal, Row, interleave
from bench.wire import AddOperands, Bench, close_session, open_session
from client import acl


def figure7(bench: Bench) -> list[Row]:
    count, rest_count = bench.pick(2000, 200), bench.pick(300, 30)
    bench.use()
    ops = AddOperands(8)
    stream = acl.aclrtCreateStream()

    def vnpu() -> float:
        bench.use()
        begin = time.perf_counter()
        for _ in range(count):
            ops.launch(stream)
        acl.aclrtSynchronizeStream(stream)
        return count / (time.perf_counter() - begin)

    rows = [_rpyc_row(bench, vnpu, count), _rest_row(bench, vnpu, rest_count)]
    bench.use()
    acl.aclrtDestroyStream(stream)
    ops.free()
    return rows


def _rpyc_row(bench: Bench, vnpu: Any, count: int) -> Row:
    label = f"eager loop over vnpu's WebSocket, {count} adds"
    try:
        import rpyc
    except ImportError:
        return Row("7", label, "/s", [], "RPyC", note="rpyc is not installed: pip install -e '.[bench]'")
    port = free_port()
    server = spawn(["-m", "bench.worker", "rpyc", str(port)])
    try:
        connection = _connect_rpyc(rpyc, port, server)
        try:
            rnp = connection.modules.numpy
            a, b, o = (rnp.ones(8, dtype="float32") for _ in range(3))
            add = rnp.add  # looked up once, as a user would

            def remote() -> float:
                begin = time.perf_counter()
                for _ in range(count):
                    add(a, b, out=o)
                return count / (time.perf_counter() - begin)

            ours, theirs = interleave(bench.reps, vnpu, remote)
        finally:
            connection.close()
    finally:
        stop(server)
    return Row(
        "7",
        label,
        "/s",
        ours,
        "RPyC: np.add(out=) on a remote numpy (netrefs)",
        theirs,
        ratio=[a / b for a, b in zip(ours, theirs, strict=True)],
        ratio_meaning="faster",
        goal=Goal(">=", 5, 20),
        extra={"rpyc_version": rpyc.__version__},
    )


def _connect_rpyc(rpyc: Any, port: int, server: subprocess.Popen[str], timeout: float = 30.0) -> Any:
    """Connect once the server listens (a bare probe connection would make the server log a failed handshake)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return rpyc.classic.connect("127.0.0.1", port)
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _rest_row(bench: Bench, vnpu: Any, count: int) -> Row:
    rest = open_session(bench.daemon.endpoint, transport="http")
    try:
        bench.use(rest)
        ops = AddOperands(8)
        stream = acl.aclrtCreateStream()

        def over_rest() -> float:
            bench.use(rest)
            begin = time.perf_counter()
            for _ in range(count):
                ops.launch(stream)
            acl.aclrtSynchronizeStream(stream)
            return count / (time.perf_counter() - begin)

        ours, theirs = interleave(bench.reps, vnpu, over_rest)
        bench.use(rest)
        acl.aclrtDestroyStream(stream)
        ops.free()
    finally:
        close_session(rest)
        bench.use()
    return Row(
        "7",
        "eager loop over vnpu's WebSocket (as above)",
        "/s",
        ours,
        f"vnpu's REST, one POST per launch ({count} adds, httpx)",
        theirs,
        ratio=[a / b for a, b in zip(ours, theirs, strict=True)],
        ratio_meaning="faster",
        goal=Goal(">=", 20),
    )
