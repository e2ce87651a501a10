"""Where one waiting call's time goes: a per-stage profile of `aclrtSynchronizeStreamWithTimeout(stream, -1)` on an
idle stream, end to end (the plain synchronize of a stream known finished is answered by the client itself).

    python -m bench.profile_wait [--calls N] [--uds] [--py-spy]

Starts a daemon in a process of its own whose hot path carries timestamps (functions wrapped from outside, so the
daemon's code is what users run), drives it from this process through `client.session`, whose hot path carries
timestamps too, and prints the median of each stage over N calls. Both processes read CLOCK_MONOTONIC
(`time.perf_counter_ns` on Linux), so a stage may span the two. The wrappers cost about 0.3 µs per stamp (19
stamps a call): the "total" line is measured with them, the "unstamped" line without. With `--py-spy` (when
py-spy is installed: `pip install py-spy`) the daemon's stacks are sampled during a second, unstamped run and the
top frames printed.
"""

from __future__ import annotations

import argparse
import atexit
import bisect
import functools
import inspect
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

STAMPS: list[tuple[str, int]] = []
WAITING = "aclrtSynchronizeStreamWithTimeout"
now = time.perf_counter_ns

# (from, to, what happens in between): the stages in the order a call passes them
STAGES = (
    ("c.call", "c.send", "client: prepare, envelope, msgpack, outbox"),
    ("c.send", "s.bytes", "client WebSocket frame + send, socket to the daemon"),
    ("s.bytes", "s.receive", "uvicorn: frame parse, ASGI queue hop, starlette receive"),
    ("s.receive", "s.unpacked", "msgpack decode of the frame"),
    ("s.unpacked", "s.parsed", "envelope check (parse_request)"),
    ("s.parsed", "s.worker", "per-client-thread queue hop"),
    ("s.worker", "s.validate", "reply budget, metrics, call-table lookup"),
    ("s.validate", "s.validated", "argument validation (pydantic)"),
    ("s.validated", "s.device", "invoke: calling thread, method look-up"),
    ("s.device", "s.done", "the device call (aclrtSynchronizeStreamWithTimeout, idle)"),
    ("s.done", "s.packed", "result envelope, metrics, msgpack"),
    ("s.packed", "s.sent", "send: starlette, uvicorn, websockets frame, transport.write"),
    ("s.sent", "c.recv", "socket, daemon to client"),
    ("c.recv", "c.take", "client WebSocket frame parse"),
    ("c.take", "c.handed", "reply decode, hand-off to the waiting caller"),
    ("c.handed", "c.woke", "waiting caller's wake-up"),
    ("c.woke", "c.returned", "settle, result"),
)


def stamp(owner: Any, name: str, before: str | None = None, after: str | None = None) -> None:
    """Wrap `owner.name` (a function or coroutine function) to record `before` on entry and `after` on return."""
    fn = getattr(owner, name)
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            if before:
                STAMPS.append((before, now()))
            result = await fn(*args, **kwargs)
            if after:
                STAMPS.append((after, now()))
            return result

        setattr(owner, name, run_async)
        return

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        if before:
            STAMPS.append((before, now()))
        result = fn(*args, **kwargs)
        if after:
            STAMPS.append((after, now()))
        return result

    setattr(owner, name, run)


def stamp_daemon() -> None:
    from starlette.websockets import WebSocket
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    from server.api import budget, dispatch, ws
    from server.npu.runtime import TABLE

    stamp(WebSocketsSansIOProtocol, "data_received", before="s.bytes")
    stamp(WebSocket, "receive", after="s.receive")
    stamp(budget, "unpack_costed", after="s.unpacked")
    stamp(ws, "parse_request", after="s.parsed")
    stamp(ws.Connection, "_answer", before="s.worker")
    stamp(dispatch, "validate", before="s.validate", after="s.validated")
    stamp(TABLE[WAITING], WAITING, before="s.device", after="s.done")  # on the area that defines the call
    stamp(ws.Connection, "_tell", before="s.packed", after="s.sent")


def serve(out: str, argv: list[str]) -> None:
    """The daemon (`vnpu serve` with `argv`), stamped; its stamps go to the JSON file `out` when it exits."""
    from server import cli

    stamp_daemon()
    atexit.register(lambda: Path(out).write_text(json.dumps(STAMPS)))
    sys.exit(cli.main(["serve", *argv]))


class StampedSocket:
    """A socket whose `recv` records when the bytes arrived."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock

    def recv(self, size: int) -> bytes:
        data: bytes = self._sock.recv(size)
        STAMPS.append(("c.recv", now()))
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def stamp_client(session: Any) -> None:
    from client.core import Protocol
    from client.session import Session
    from client.wsconn import WsConnection

    stamp(Session, "_call", before="c.call", after="c.returned")
    stamp(WsConnection, "send", before="c.send")
    session._outbox._send = session._ws.send  # the outbox holds the method it was given
    stamp(Session, "_take", before="c.take", after="c.handed")
    stamp(Protocol, "settle", before="c.woke")
    session._ws._sock = StampedSocket(session._ws._sock)


def cycles(stamps: list[tuple[str, int]], start: str, needed: str) -> list[dict[str, int]]:
    """The stamps cut into one dict per call (each beginning with `start`), keeping those that saw `needed`."""
    found: list[dict[str, int]] = []
    for label, at in stamps:
        if label == start:
            found.append({})
        if found:
            found[-1].setdefault(label, at)
    return [c for c in found if needed in c]


def daemon(folder: str, uds: bool, stamped: bool) -> tuple[subprocess.Popen[bytes], str, str]:
    from bench.daemon import ROOT, child_env, free_port, wait_listening, wait_port

    out = str(Path(folder) / "stamps.json")
    port = free_port()
    sock = Path(folder) / "vnpu.sock"
    where = ["--uds", str(sock)] if uds else ["--host", "127.0.0.1", "--port", str(port)]
    if stamped:
        command = [sys.executable, "-m", "bench.profile_wait", "--serve", out, "--", *where]
    else:
        command = [sys.executable, "-m", "server.cli", "serve", *where]
    process = subprocess.Popen([*command, "--memory", "64MiB", "--log-level", "warning"], cwd=ROOT, env=child_env())
    wait_listening(sock, process) if uds else wait_port(port, process)
    return process, (f"unix:{sock}" if uds else f"http://127.0.0.1:{port}"), out


def waiting_calls(endpoint: str, calls: int, setup: Callable[[Any], None] | None = None) -> float:
    """Seconds per waiting call over `calls` synchronizes of an idle stream (after a warm-up)."""
    from bench.wire import close_session, open_session

    session = open_session(endpoint)
    try:
        stream = session.call("aclrtCreateStream")
        if setup is not None:
            setup(session)
        for _ in range(200):
            session.call(WAITING, stream, -1)
        STAMPS.clear()
        begin = time.perf_counter()
        for _ in range(calls):
            session.call(WAITING, stream, -1)
        seconds = (time.perf_counter() - begin) / calls
        session.call("aclrtDestroyStream", stream)
        return seconds
    finally:
        close_session(session)


def breakdown(client: list[dict[str, int]], server: list[dict[str, int]]) -> list[tuple[str, float]]:
    """The median µs of each stage over the calls seen on both sides."""
    starts = [s["s.bytes"] for s in server]
    merged = []
    for c in client:  # the daemon's cycle of a call is the one that began while the call was on its way
        i = bisect.bisect_left(starts, c.get("c.send", 0))
        if i < len(server) and starts[i] < c.get("c.recv", 0):
            merged.append({**c, **server[i]})
    rows = []
    for first, last, what in STAGES:
        spans = [(m[last] - m[first]) / 1000 for m in merged if first in m and last in m]
        rows.append((what, statistics.median(spans) if spans else float("nan")))
    totals = [(m["c.returned"] - m["c.call"]) / 1000 for m in merged]
    rows.append(("total (median, stamped)", statistics.median(totals)))

    return rows


def py_spy(pid: int, seconds: float, folder: str) -> str | None:
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        return None
    out = Path(folder) / "spy.txt"
    command = [spy, "record", "-p", str(pid), "-d", str(int(seconds)), "-f", "raw", "-o", str(out), "-r", "500"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30, check=False)
    if done.returncode != 0 or not out.exists():
        return f"py-spy failed: {done.stderr.strip()[-300:]}"
    totals: dict[str, int] = {}
    grand = 0
    for line in out.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        grand += int(count)
        leaf = stack.split(";")[-1]
        totals[leaf] = totals.get(leaf, 0) + int(count)
    top = sorted(totals.items(), key=lambda item: -item[1])[:15]
    return "\n".join(f"{100 * n / grand:5.1f}%  {frame}" for frame, n in top)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--serve"]:
        serve(argv[1], argv[3:])
    parser = argparse.ArgumentParser(prog="python -m bench.profile_wait", description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--uds", action="store_true", help="over a Unix socket (vnpu serve --uds)")
    parser.add_argument("--py-spy", action="store_true", help="sample the daemon with py-spy during a plain run")
    args = parser.parse_args(argv)
    from bench.daemon import stop

    with tempfile.TemporaryDirectory(prefix="vnpu-profile-") as folder:
        process, endpoint, out = daemon(folder, args.uds, stamped=False)
        try:
            unstamped = waiting_calls(endpoint, args.calls)
            spied = None
            if args.py_spy:
                seconds = 5.0
                runner = subprocess.Popen([sys.executable, "-m", "bench.profile_wait", "--loop", endpoint])
                time.sleep(1)
                spied = py_spy(process.pid, seconds, folder)
                os.kill(runner.pid, signal.SIGTERM)
                runner.wait(10)
        finally:
            stop(process)
        process, endpoint, out = daemon(folder, args.uds, stamped=True)
        try:
            stamped = waiting_calls(endpoint, args.calls, stamp_client)
            client_stamps = list(STAMPS)
        finally:
            stop(process)
        server = cycles([(label, at) for label, at in json.loads(Path(out).read_text())], "s.bytes", "s.device")
        client = cycles(client_stamps, "c.call", "c.woke")
    transport = "a Unix socket" if args.uds else "loopback TCP"
    print(f"one waiting call ({WAITING}, idle stream) over {transport}, median of {args.calls} calls\n")
    print("| stage | µs |\n|---|---|")
    for what, micros in breakdown(client, server):
        print(f"| {what} | {micros:.1f} |")
    print(f"| mean per call, stamped | {stamped * 1e6:.1f} |\n| mean per call, unstamped | {unstamped * 1e6:.1f} |")
    if spied:
        print("\npy-spy, the daemon's leaf frames during a plain run:\n" + spied)
    return 0


def loop(endpoint: str) -> None:
    """Waiting calls until stopped (SIGTERM): what py-spy samples."""
    from bench.wire import open_session

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    session = open_session(endpoint)
    stream = session.call("aclrtCreateStream")
    while True:
        session.call(WAITING, stream, -1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--loop"]:
        loop(sys.argv[2])
    sys.exit(main(sys.argv[1:]))
