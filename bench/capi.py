"""Figure 10: calls from C through the toolkit's libraries vs the same calls from the Python client.

A C program (`bench/c/calls.cpp`, built against `vnpu toolkit`) times, inside itself, eager aclnnAdd launches
(phase 1 + phase 2, pipelined, then a synchronize) and the waiting call `aclrtSynchronizeStream` on an idle
stream; this process times the same loops through `client.acl` on the same daemon, A B A B: the native C client
against the Python one (figure 16 sets the same launches against the daemon's own ceiling, and the waiting call
against a raw round trip).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from bench.report import Goal, Row, interleave
from bench.wire import AddOperands, Bench
from client import acl
from client.native import build as toolkit

SOURCE = Path(__file__).parent / "c" / "calls.cpp"


def build() -> tuple[Path, Path]:
    """The toolkit and the benchmark program built against it (in a temporary directory)."""
    root = toolkit.ensure()
    binary = Path(tempfile.mkdtemp(prefix="vnpu-bench-c-")) / "calls"
    command = ["g++", "-O2", "-std=c++17", str(SOURCE), f"-I{root}/include", f"-L{root}/lib64"]
    subprocess.run([*command, "-lascendcl", "-lnnopbase", "-lopapi", "-o", str(binary)], check=True)
    return root, binary


def figure10(bench: Bench) -> list[Row]:
    launches, waits = bench.pick(20_000, 500), bench.pick(500, 50)
    root, binary = build()
    env = {**os.environ, "VNPU_ENDPOINT": bench.daemon.endpoint, "LD_LIBRARY_PATH": f"{root}/lib64"}
    c_samples: dict[str, list[float]] = {"launch": [], "wait": []}

    def run_c() -> None:
        done = subprocess.run(
            [str(binary), str(launches), str(waits)], env=env, capture_output=True, text=True, timeout=600, check=True
        )
        values = dict(line.split() for line in done.stdout.splitlines())
        c_samples["launch"].append(float(values["launches_per_s"]))
        c_samples["wait"].append(float(values["wait_s"]))

    bench.use()
    ops = AddOperands(8)
    stream = acl.aclrtCreateStream()

    def python_launches() -> float:
        start = time.perf_counter()
        for _ in range(launches):
            ops.launch(stream)
        acl.aclrtSynchronizeStream(stream)
        return launches / (time.perf_counter() - start)

    def python_wait() -> float:
        start = time.perf_counter()
        for _ in range(waits):
            acl.aclrtSynchronizeStreamWithTimeout(stream, -1)  # reaches the daemon (see bench/c/calls.cpp)
        return (time.perf_counter() - start) / waits

    python: dict[str, list[float]] = {"launch": [], "wait": []}

    def c_round() -> float:
        run_c()
        return c_samples["launch"][-1]

    def py_round() -> float:
        python["wait"].append(python_wait())
        return python_launches()

    python_launches()  # warm-up
    _, py_launch = interleave(bench.reps, c_round, py_round, warmup=False)
    acl.aclrtDestroyStream(stream)
    ops.free()
    c_launch, c_wait, py_wait = c_samples["launch"], c_samples["wait"], python["wait"]
    return [
        Row(
            "10",
            f"eager aclnnAdd launches from C, {launches} × 8 elements + synchronize",
            "/s",
            c_launch,
            "the same launches from the Python client",
            py_launch,
            ratio=[a / b for a, b in zip(c_launch, py_launch, strict=True)],
            ratio_meaning="of the Python client's rate",
            goal=Goal(">=", 0.8),
        ),
        Row(
            "10",
            "a waiting call from C (aclrtSynchronizeStreamWithTimeout, idle stream)",
            "s",
            c_wait,
            "the same call from the Python client",
            py_wait,
            ratio=[a / b for a, b in zip(c_wait, py_wait, strict=True)],
            ratio_meaning="of the Python client's time",
            goal=Goal("<=", 1.2),
        ),
    ]
