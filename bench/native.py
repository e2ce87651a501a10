"""Figure 16: the native toolkit (`client.native`: C, no interpreter inside the program).

- A program's load: `aclInit` + `aclFinalize` against the daemon (bench/c/native.cpp, `load`) against a C
  program that links nothing (bench/c/nothing.c): wall time and peak RSS (each child's own rusage), A B A B.
- Eager launches from C (bench/c/calls.cpp built against the native libraries) vs the same loop through the Python
  client on the same daemon, and vs the daemon's pipelined echo of the launch's envelope, A B C A B C.
- A waiting call and the seed loop step from C against a raw TCP round trip (the plain-Python echo of figure 12),
  daemon and echo server on one core and the program on the other (bench.placement), A B C ...
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from bench.daemon import free_port
from bench.echo_server import round_trips
from bench.placement import TWO_CORES
from bench.report import Goal, Row, interleave
from bench.transports import per_call, raw_echo
from bench.wire import AddOperands, Bench
from client import acl
from client.native import build as native

HERE = Path(__file__).parent / "c"


def programs() -> tuple[Path, dict[str, Path]]:
    """The native toolkit and the programs built against it (in a temporary directory)."""
    root = native.ensure()
    out = Path(tempfile.mkdtemp(prefix="vnpu-bench-native-"))
    link = [f"-I{root}/include", f"-L{root}/lib64", "-lascendcl", "-lnnopbase", "-lopapi"]
    built = {}
    for name, source in (("native", "native.cpp"), ("calls", "calls.cpp")):
        built[name] = out / name
        subprocess.run(["g++", "-O2", "-std=c++17", str(HERE / source), *link, "-o", str(out / name)], check=True)
    built["nothing"] = out / "nothing"
    subprocess.run(["gcc", "-O2", str(HERE / "nothing.c"), "-o", str(out / "nothing")], check=True)
    return root, built


def run(binary: Path, env: dict[str, str], *args: str) -> tuple[float, str]:
    """Wall seconds and stdout of one run."""
    begin = time.perf_counter()
    done = subprocess.run([str(binary), *args], env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - begin
    if done.returncode != 0:
        raise RuntimeError(f"{binary.name} {' '.join(args)} exited with {done.returncode}: {done.stderr[-500:]}")
    return wall, done.stdout


def value(out: str, key: str) -> float:
    return float(dict(line.split()[:2] for line in out.splitlines())[key])


def figure16(bench: Bench) -> list[Row]:
    loads, launches, calls, steps = (
        bench.pick(20, 3),
        bench.pick(20_000, 500),
        bench.pick(3000, 200),
        bench.pick(300, 20),
    )
    root, built = programs()
    env = {**os.environ, "VNPU_ENDPOINT": bench.daemon.endpoint, "LD_LIBRARY_PATH": f"{root}/lib64"}
    rows = _load(bench, built, env, loads)
    rows += _launches(bench, built, env, launches)
    rows += _round_trips(bench, built, env, calls, steps)
    return rows


def _load(bench: Bench, built: dict[str, Path], env: dict[str, str], loads: int) -> list[Row]:
    walls: dict[str, list[float]] = {"native": [], "nothing": []}
    rss: dict[str, list[float]] = {"native": [], "nothing": []}

    def measure(name: str, *args: str) -> float:
        samples = [run(built[name], env, *args) for _ in range(loads)]
        wall = sorted(s[0] for s in samples)[loads // 2]
        walls[name].append(wall)
        rss[name].append(max(value(s[1], "hwm_kib") for s in samples) * 1024)  # each program's own VmHWM
        return wall

    interleave(bench.reps, lambda: measure("native", "load"), lambda: measure("nothing"))
    more_wall = [a - b for a, b in zip(walls["native"][1:], walls["nothing"][1:], strict=True)]
    more_rss = [a - b for a, b in zip(rss["native"][1:], rss["nothing"][1:], strict=True)]
    return [
        Row(
            "16",
            "a C program's load on the native libraries: aclInit + aclFinalize against the daemon, wall time more "
            "than a C program that links nothing",
            "s",
            more_wall,
            "a C program that links nothing",
            walls["nothing"][1:],
            ratio=[m / b for m, b in zip(more_wall, walls["nothing"][1:], strict=True)],
            ratio_meaning="of the bare program's load",
            goal=Goal("<=", 0.020, on="value"),
        ),
        Row(
            "16",
            "a C program's load on the native libraries: peak RSS more than a C program that links nothing",
            "B",
            more_rss,
            "a C program that links nothing",
            rss["nothing"][1:],
            ratio=[m / b for m, b in zip(more_rss, rss["nothing"][1:], strict=True)],
            ratio_meaning="of the bare program's RSS",
            goal=Goal("<=", 10 * 2**20, on="value"),
        ),
    ]


def _launches(bench: Bench, built: dict[str, Path], env: dict[str, str], launches: int) -> list[Row]:
    bench.use()
    ops = AddOperands(8)
    stream = acl.aclrtCreateStream()

    def c_launches() -> float:
        return value(run(built["calls"], env, str(launches), "10")[1], "launches_per_s")

    def python_launches() -> float:
        start = time.perf_counter()
        for _ in range(launches):
            ops.launch(stream)
        acl.aclrtSynchronizeStream(stream)
        return launches / (time.perf_counter() - start)

    frame = ops.envelope(stream)

    def echo() -> float:
        return launches / bench.echo.pipelined(frame, launches)

    c_rate, py_rate, echo_rate = interleave(bench.reps, c_launches, python_launches, echo)
    acl.aclrtDestroyStream(stream)
    ops.free()
    return [
        Row(
            "16",
            f"eager aclnnAdd launches from C on the native libraries, {launches} × 8 elements + synchronize",
            "/s",
            c_rate,
            "the same launches from the Python client",
            py_rate,
            ratio=[a / b for a, b in zip(c_rate, py_rate, strict=True)],
            ratio_meaning="of the Python client's rate",
            goal=Goal(">=", 1.0),
        ),
        Row(
            "16",
            f"eager aclnnAdd launches from C on the native libraries, {launches} × 8 elements + synchronize",
            "/s",
            c_rate,
            "the daemon's own ceiling: a pipelined WebSocket echo of the launch's envelope (figure 1's floor)",
            echo_rate,
            ratio=[a / b for a, b in zip(c_rate, echo_rate, strict=True)],
            ratio_meaning="of the echo's rate",
        ),
    ]


def _round_trips(bench: Bench, built: dict[str, Path], env: dict[str, str], calls: int, steps: int) -> list[Row]:
    with raw_echo("tcp", str(free_port())) as (echo, echo_pid):
        servers = (echo_pid, bench.daemon.pid)
        measures = [
            TWO_CORES.around(servers, per_call(calls, lambda: round_trips(echo, 1))),
            TWO_CORES.around(servers, lambda: value(run(built["native"], env, "wait", str(calls))[1], "wait_s")),
            TWO_CORES.around(servers, lambda: value(run(built["native"], env, "seed", str(steps))[1], "step_s")),
        ]
        floor, wait, step = interleave(bench.reps, *measures)
    label = f"a raw round trip over loopback TCP {TWO_CORES.name} (Python echo, 64 B)"
    where = f"daemon and program {TWO_CORES.name}"
    return [
        Row(
            "16",
            f"a waiting call from C on the native libraries (aclrtSynchronizeStreamWithTimeout, idle stream), {where}",
            "s",
            wait,
            label,
            floor,
            ratio=[w / f for w, f in zip(wait, floor, strict=True)],
            ratio_meaning="raw round trips",
            goal=Goal("<=", 2, 1.5),
        ),
        Row(
            "16",
            f"the seed loop step from C on the native libraries, {where}",
            "s",
            step,
            label,
            floor,
            ratio=[s / f for s, f in zip(step, floor, strict=True)],
            ratio_meaning="raw round trips",
            goal=Goal("<=", 5),
        ),
    ]
