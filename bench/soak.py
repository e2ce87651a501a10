"""A bounded soak of the vnpu daemon: many client processes, a mixed workload, every result checked.

    python bench/soak.py [--seconds 60] [--processes 8] [--rss-growth-mib 64] [--memory 512MiB]

Starts its own daemon (`python -m server.cli serve` on a free 127.0.0.1 port, a subprocess stopped by its PID),
then runs N client processes (multiprocessing 'spawn'), each with its own context, mixing until the time is up:

- eager aclnn launches (Add, Mul, Muls, Relu over random lengths), checked against numpy;
- replays of a captured model whose task group a task update rewrites before each replay (the seed's concurrent
  pattern: an EXTERNAL event, the update on its own stream), checked against numpy;
- copies: pinned host -> device -> device -> pinned host with memsets in between, on a stream, checked byte for byte;
- allocations: bursts of aclrtMalloc of random sizes, each filled and read back, freed in random order.

It reports calls/s (every call, pipelined ones too), the p50/p99 latency of the calls that wait for a reply, the
error count (any exception or wrong result; it must be 0), the daemon's RSS (/proc/<pid>/status VmRSS) at launch,
after the warm-up (the first 20 % of the time, at most 10 s: the device memory the workload touches and the
interpreter's caches settle there), every 5 s, and at the end, and that every byte of device memory is free once
the clients have gone. (The trace's ring buffer, VNPU_TRACE_CAPACITY events, fills for the first ~100 s of a run
at the default rate: about 35 MiB; `--daemon-env VNPU_TRACE_CAPACITY=0` turns it off.) Exit status 1 if there
was an error, the RSS grew by more than the bound after the warm-up, device memory stayed in use, a client did not
finish, or the daemon did not stop cleanly on SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing as mp
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from array import array
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the project's packages (spawned clients inherit sys.path)
    sys.path.insert(0, str(ROOT))

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0
RECLAIM_TIMEOUT_S = 15.0
CONTEXT_GRACE_S = 0.2
RSS_EVERY_S = 5.0
WORKER_SLACK_S = 60.0  # a client still running this long after the end is stopped (and counted as a failure)
MIB = 1 << 20


# --- the daemon ---------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def get_json(url: str, timeout: float = 5.0) -> Any:
    import httpx

    response = httpx.get(url, timeout=timeout)
    response.raise_for_status()
    return response.json()


def start_daemon(port: int, memory: str, log: Path, settings: dict[str, str]) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VNPU_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env["VNPU_CONTEXT_GRACE"] = str(CONTEXT_GRACE_S)
    env.update(settings)
    args = [sys.executable, "-m", "server.cli", "serve", "--port", str(port), "--memory", memory]
    with log.open("wb") as err:
        proc = subprocess.Popen([*args, "--log-level", "warning"], cwd=ROOT, env=env, stdout=err, stderr=err)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        with contextlib.suppress(Exception):
            if get_json(f"http://127.0.0.1:{port}/healthz", timeout=1.0)["status"] == "ok":
                return proc
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_daemon(proc, signal.SIGKILL)
            raise RuntimeError(f"the daemon did not answer /healthz within {START_TIMEOUT_S} s:\n{log.read_text()}")
        time.sleep(0.05)


def stop_daemon(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> int:
    """Signal the daemon by its PID and wait (SIGKILL after STOP_TIMEOUT_S); its exit status."""
    if proc.poll() is None:
        os.kill(proc.pid, sig)
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
    return proc.returncode


# --- a client process ---------------------------------------------------------------------------------------------


class Client:
    """One process's session, counting every call and timing the ones that wait for a reply."""

    def __init__(self, url: str) -> None:
        from client.config import Config
        from client.session import Session
        from proto.calltable import CALLS

        self.session = Session(Config(endpoint=url))
        self.waits = {name: not call.asynchronous for name, call in CALLS.items()}  # launches: asynchronous
        self.calls = 0
        self.latencies = array("d")

    def __call__(self, api: str, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.session.call(api, *args)
        finally:
            self.calls += 1
            if self.waits.get(api, False):
                self.latencies.append(time.perf_counter() - start)


class WrongResult(Exception):
    pass


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise WrongResult(what)


class Workload:
    """The resources one client keeps for its whole run, and the four kinds of work."""

    N = 256  # float32 elements of the replayed model's tensors
    COPY_BYTES = 64 << 10

    def __init__(self, c: Client, seed: int) -> None:
        import numpy as np

        import proto.aclnn as nn
        from proto.constants import ACL_EVENT_EXTERNAL, aclmdlRICaptureMode

        self.np, self.nn, self.c = np, nn, c
        self.rng = np.random.default_rng(seed)
        c("aclInit", None)
        c("aclrtSetDevice", 0)
        self.stream, self.update_stream, self.copy_stream = (c("aclrtCreateStream") for _ in range(3))
        self.event = c("aclrtCreateEventWithFlag", ACL_EVENT_EXTERNAL)
        size = self.N * 4
        self.x, self.y, self.out = (c("aclrtMalloc", size, 0) for _ in range(3))
        self.tx, self.ty, self.tout = (self.tensor(p, self.N) for p in (self.x, self.y, self.out))
        # the seed's model: wait for the update's event, re-arm it, then the task group
        c("aclmdlRICaptureBegin", self.stream, aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        c("aclrtStreamWaitEvent", self.stream, self.event)
        c("aclrtResetEvent", self.event, self.stream)
        c("aclmdlRICaptureTaskGrpBegin", self.stream)
        c("aclnnAdd", 0, *self.add(1.0), self.stream)
        self.group = c("aclmdlRICaptureTaskGrpEnd", self.stream)
        self.model = c("aclmdlRICaptureEnd", self.stream)
        self.host_in, self.host_out = (c("aclrtMallocHost", self.COPY_BYTES) for _ in range(2))
        self.dev_a, self.dev_b = (c("aclrtMalloc", self.COPY_BYTES, 0) for _ in range(2))
        self.done: Counter[str] = Counter()

    def tensor(self, ptr: int, n: int) -> Any:
        from proto.constants import aclDataType, aclFormat

        return self.nn.aclCreateTensor([n], aclDataType.ACL_FLOAT, [1], 0, aclFormat.ACL_FORMAT_ND, [n], ptr)

    def add(self, alpha: float) -> tuple[int, Any]:
        from proto.constants import aclDataType

        result: tuple[int, Any] = self.nn.aclnnAddGetWorkspaceSize(
            self.tx, self.ty, self.nn.aclCreateScalar(alpha, aclDataType.ACL_FLOAT), self.tout
        )
        return result

    def read(self, ptr: int, n: int) -> Any:
        from proto.constants import aclrtMemcpyKind

        out = self.np.empty(n, self.np.float32)
        self.c("aclrtMemcpy", out, n * 4, ptr, n * 4, aclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST)
        return out

    def write(self, ptr: int, values: Any) -> None:
        from proto.constants import aclrtMemcpyKind

        self.c("aclrtMemcpy", ptr, values.nbytes, values, values.nbytes, aclrtMemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE)

    def eager(self) -> None:
        from proto.constants import aclDataType

        np, nn, c = self.np, self.nn, self.c
        n = int(self.rng.integers(1, 4097))
        a, b = (self.rng.standard_normal(n).astype(np.float32) for _ in range(2))
        ptrs = [c("aclrtMalloc", n * 4, 0) for _ in range(3)]
        ta, tb, to = (self.tensor(p, n) for p in ptrs)
        self.write(ptrs[0], a)
        self.write(ptrs[1], b)
        op = self.rng.choice(["Add", "Mul", "Muls", "Relu"])
        scalar = nn.aclCreateScalar(0.5, aclDataType.ACL_FLOAT)
        if op == "Add":
            ws, ex = nn.aclnnAddGetWorkspaceSize(ta, tb, scalar, to)
            want = a + np.float32(0.5) * b
        elif op == "Mul":
            ws, ex = nn.aclnnMulGetWorkspaceSize(ta, tb, to)
            want = a * b
        elif op == "Muls":
            ws, ex = nn.aclnnMulsGetWorkspaceSize(ta, scalar, to)
            want = a * np.float32(0.5)
        else:
            ws, ex = nn.aclnnReluGetWorkspaceSize(ta, to)
            want = np.maximum(a, 0)
        c(f"aclnn{op}", 0, ws, ex, self.stream)
        c("aclrtSynchronizeStream", self.stream)
        got = self.read(ptrs[2], n)
        expect(bool(np.allclose(got, want, rtol=1e-6, atol=1e-6)), f"aclnn{op} over {n} elements")
        for ptr in ptrs:
            c("aclrtFree", ptr)
        self.done["eager"] += 1

    def replay(self) -> None:
        np, c = self.np, self.c
        x, y = (self.rng.standard_normal(self.N).astype(np.float32) for _ in range(2))
        self.write(self.x, x)
        self.write(self.y, y)
        alpha = float(self.rng.integers(1, 8)) / 4
        c("aclmdlRIExecuteAsync", self.model, self.stream)
        c("aclmdlRICaptureTaskUpdateBegin", self.update_stream, self.group)
        c("aclnnAdd", 0, *self.add(alpha), self.update_stream)
        c("aclmdlRICaptureTaskUpdateEnd", self.update_stream)
        c("aclrtRecordEvent", self.event, self.update_stream)
        c("aclrtSynchronizeStream", self.update_stream)
        c("aclrtSynchronizeStream", self.stream)
        got = self.read(self.out, self.N)
        expect(bool(np.allclose(got, x + np.float32(alpha) * y, rtol=1e-6, atol=1e-6)), f"replay, alpha {alpha}")
        self.done["replay"] += 1

    def copies(self) -> None:
        from proto.constants import aclrtMemcpyKind

        h2d, d2d, d2h = (
            aclrtMemcpyKind[f"ACL_MEMCPY_{k}"] for k in ("HOST_TO_DEVICE", "DEVICE_TO_DEVICE", "DEVICE_TO_HOST")
        )
        np, c, s, size = self.np, self.c, self.copy_stream, self.COPY_BYTES
        data = self.rng.integers(0, 256, size, dtype=np.uint8)
        self.host_in.write(data)
        n = int(self.rng.integers(1, size // 2))
        start = int(self.rng.integers(0, size - n))
        value = int(self.rng.integers(0, 256))
        c("aclrtMemcpyAsync", self.dev_a, size, self.host_in, size, h2d, s)
        c("aclrtMemcpyAsync", self.dev_b, size, self.dev_a, size, d2d, s)
        c("aclrtMemsetAsync", self.dev_b + start, n, value, n, s)
        c("aclrtMemcpyAsync", self.host_out, size, self.dev_b, size, d2h, s)
        c("aclrtSynchronizeStream", s)
        want = data.copy()
        want[start : start + n] = value
        expect(bytes(self.host_out.read()) == want.tobytes(), f"copy chain with a memset of {n} bytes at {start}")
        self.done["copies"] += 1

    def allocations(self) -> None:
        from proto.constants import aclrtMemcpyKind

        c = self.c
        blocks = []
        for _ in range(int(self.rng.integers(4, 16))):
            size = int(self.rng.integers(64, 256 << 10))
            ptr = c("aclrtMalloc", size, 0)
            value = int(self.rng.integers(0, 256))
            c("aclrtMemset", ptr, size, value, size)
            blocks.append((ptr, size, value))
        for ptr, size, value in blocks:
            tail = bytearray(16)
            c("aclrtMemcpy", tail, 16, ptr + size - 16, 16, aclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST)
            expect(tail == bytes([value]) * 16, f"the last bytes of a {size}-byte block")
        for i in self.rng.permutation(len(blocks)):
            c("aclrtFree", blocks[int(i)][0])
        self.done["allocations"] += 1

    def close(self) -> None:
        c = self.c
        c("aclmdlRIDestroy", self.model)
        c("aclrtResetDevice", 0)
        c("aclFinalize")


def client_main(url: str, index: int, end: float, results: Any) -> None:
    """One client process: work until `end` (time.time()), then put its figures on `results`. Never raises."""
    report: dict[str, Any] = {"index": index, "calls": 0, "errors": 0, "messages": [], "done": {}}
    latencies = array("d")
    try:
        c = Client(url)
        work = Workload(c, seed=index)
        kinds = [work.eager, work.replay, work.copies, work.allocations]
        weights = [0.35, 0.3, 0.2, 0.15]
        while time.time() < end:
            job = kinds[int(work.rng.choice(len(kinds), p=weights))]
            try:
                job()
            except Exception as error:
                report["errors"] += 1
                if len(report["messages"]) < 5:
                    report["messages"].append(f"{job.__name__}: {error!r:.300}")
                if type(error).__name__ == "TransportError":
                    break
        work.close()
        c.session.close()
        report["calls"], report["done"] = c.calls, dict(work.done)
        latencies = c.latencies
    except Exception:
        report["errors"] += 1
        report["messages"].append(traceback.format_exc(limit=5)[-1500:])
    report["latencies"] = latencies.tobytes()
    results.put(report)


# --- the soak -----------------------------------------------------------------------------------------------------


def percentile(sorted_values: list[float], fraction: float) -> float:
    if not sorted_values:
        return math.nan
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


def run(
    seconds: float, processes: int, rss_growth_mib: float, memory: str, settings: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The soak; its figures, and what failed (empty: it passed)."""
    failures: list[str] = []
    warmup = min(10.0, seconds * 0.2)
    with tempfile.TemporaryDirectory(prefix="vnpu-soak-") as tmp:
        log = Path(tmp) / "daemon.log"
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        daemon = start_daemon(port, memory, log, settings or {})
        figures: dict[str, Any] = {"seconds": seconds, "processes": processes, "pid": daemon.pid, "url": url}
        workers: list[Any] = []
        reports: list[dict[str, Any]] = []
        elapsed = math.nan
        try:
            figures["rss_launch"] = rss_bytes(daemon.pid)
            ctx = mp.get_context("spawn")
            results = ctx.Queue()
            start = time.time()
            end = start + seconds
            workers = [ctx.Process(target=client_main, args=(url, i, end, results)) for i in range(processes)]
            for worker in workers:
                worker.start()
            time.sleep(max(0.0, start + warmup - time.time()))
            figures["rss_warm"] = rss_bytes(daemon.pid)
            samples = figures["rss_samples"] = [figures["rss_warm"]]  # every RSS_EVERY_S until the end
            while time.time() < end - 1 and daemon.poll() is None:
                time.sleep(min(RSS_EVERY_S, end - time.time()))
                samples.append(rss_bytes(daemon.pid))
            for _ in workers:
                try:
                    reports.append(results.get(timeout=max(1.0, end + WORKER_SLACK_S - time.time())))
                except queue.Empty:
                    break
            elapsed = time.time() - start
            for worker in workers:
                worker.join(10)
            if len(reports) < processes:
                failures.append(f"{processes - len(reports)} client process(es) did not report")
            if daemon.poll() is not None:
                failures.append(f"the daemon died (status {daemon.returncode})")
            used = None
            deadline = time.monotonic() + RECLAIM_TIMEOUT_S
            while daemon.poll() is None and time.monotonic() < deadline:
                used = sum(d["memory"]["used"] for d in get_json(f"{url}/v1/devices"))
                if used == 0:
                    break
                time.sleep(0.1)
            figures["device_used_after"] = used
            if used != 0:
                failures.append(f"{used} bytes of device memory still in use {RECLAIM_TIMEOUT_S:g} s after the end")
            figures["rss_end"] = rss_bytes(daemon.pid) if daemon.poll() is None else None
        finally:
            for worker in workers:  # stragglers, by their PIDs
                if worker.is_alive():
                    worker.terminate()
                    worker.join(5)
                    if worker.is_alive():
                        worker.kill()
                        worker.join(5)
            figures["exit_status"] = stop_daemon(daemon)
        if figures["exit_status"] != 0:
            failures.append(f"the daemon exited with {figures['exit_status']} on SIGTERM:\n{log.read_text()[-2000:]}")
    latencies = sorted(v for r in reports for v in array("d", r["latencies"]))
    done: Counter[str] = Counter()
    for r in reports:
        done.update(r["done"])
    figures |= {
        "elapsed": elapsed,
        "calls": sum(r["calls"] for r in reports),
        "waiting_calls": len(latencies),
        "p50_ms": percentile(latencies, 0.50) * 1e3,
        "p99_ms": percentile(latencies, 0.99) * 1e3,
        "errors": sum(r["errors"] for r in reports),
        "messages": [m for r in reports for m in r["messages"]][:10],
        "done": dict(done),
        "rss_growth_bound": rss_growth_mib * MIB,
    }
    figures["calls_per_s"] = figures["calls"] / elapsed
    if figures["errors"]:
        failures.append(f"{figures['errors']} error(s): " + "; ".join(figures["messages"]))
    if figures.get("rss_end") is not None and figures["rss_end"] - figures["rss_warm"] > figures["rss_growth_bound"]:
        failures.append(f"the daemon's RSS grew by more than {rss_growth_mib:g} MiB after the warm-up")
    return figures, failures


def describe(f: dict[str, Any]) -> str:
    def mib(value: int | None) -> str:
        return "-" if value is None else f"{value / MIB:.1f} MiB"

    growth = (f["rss_end"] - f["rss_warm"]) / MIB if f.get("rss_end") is not None else math.nan
    done = ", ".join(f"{kind} {f['done'].get(kind, 0)}" for kind in ("eager", "replay", "copies", "allocations"))
    return "\n".join(
        [
            f"soak: {f['seconds']:g} s, {f['processes']} client processes, daemon pid {f['pid']} at {f['url']}",
            f"calls: {f['calls']} in {f['elapsed']:.1f} s = {f['calls_per_s']:.0f} calls/s "
            f"({f['waiting_calls']} waited for a reply)",
            f"latency of waiting calls: p50 {f['p50_ms']:.2f} ms, p99 {f['p99_ms']:.2f} ms",
            f"work done, each result checked: {done}",
            f"errors: {f['errors']}",
            f"daemon RSS: {mib(f['rss_launch'])} at launch, {mib(f['rss_warm'])} after the warm-up, "
            f"{mib(f.get('rss_end'))} at the end ({growth:+.1f} MiB; bound {f['rss_growth_bound'] / MIB:g} MiB)",
            f"daemon RSS every {RSS_EVERY_S:g} s after the warm-up (MiB): "
            + " ".join(f"{v / MIB:.0f}" for v in f.get("rss_samples", [])),
            f"device memory in use after the clients left: {f['device_used_after']} bytes",
            f"daemon exit status on SIGTERM: {f['exit_status']}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the clients work (default 60)")
    parser.add_argument("--processes", type=int, default=8, help="client processes (default 8)")
    parser.add_argument(
        "--rss-growth-mib", type=float, default=64.0, help="allowed RSS growth after the warm-up (default 64)"
    )
    parser.add_argument("--memory", default="512MiB", help="device memory of the daemon (default 512MiB)")
    parser.add_argument(
        "--daemon-env", action="append", default=[], metavar="VNPU_NAME=VALUE", help="a setting of the daemon"
    )
    args = parser.parse_args(argv)
    settings = dict(item.split("=", 1) for item in args.daemon_env)
    if not all(name.startswith("VNPU_") for name in settings):
        parser.error("--daemon-env takes VNPU_NAME=VALUE")
    if not (0 < args.seconds <= 24 * 3600 and 0 < args.processes <= 256):
        parser.error("--seconds must be in (0, 86400] and --processes in [1, 256]")
    figures, failures = run(args.seconds, args.processes, args.rss_growth_mib, args.memory, settings)
    print(describe(figures))
    print("figures: " + json.dumps({k: v for k, v in figures.items() if k != "messages"}), flush=True)
    for failure in failures:
        print(f"FAILED: {failure}")
    print("soak FAILED" if failures else "soak passed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
