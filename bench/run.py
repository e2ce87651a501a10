"""`vnpu bench`: every figure of issue 7, each against a floor or an alternative measured in the same run.

    python -m bench.run [--quick] [--out PATH] [--only 1,5,9] [--reps N]

Starts its own daemon (`vnpu serve` in a process of its own, on a free loopback port), runs the figures with
this process as the client, A B A B ... with the median of several repetitions and the min-max shown, writes
the raw numbers as JSON (default bench/results.json; a --quick run writes to a temporary file unless --out is
given) and prints the Markdown table. `--quick` is a smoke run with small counts and sizes and one repetition:
it proves that every figure still runs, and its numbers mean little.

The machines this runs on are shared and noisy: read the ratios, not the absolute times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.alternatives import figure7
from bench.capi import figure10
from bench.copies import figure5, figure6
from bench.daemon import ROOT, Daemon
from bench.embedded import figure11
from bench.launches import figure1, figure2, figure3, figure4
from bench.memcall import figure13
from bench.memory import figure9, idle_row
from bench.native import figure16
from bench.operators import figure14
from bench.pytorch import figure15
from bench.report import Row, table
from bench.scaling import figure8
from bench.transports import figure12
from bench.wire import Bench, Echo, close_session, open_session

TITLES = {
    "1": "eager launches vs a pipelined WebSocket echo",
    "2": "replay: device time per task vs np.add",
    "3": "replay vs eager, 100 kernels",
    "4": "the seed loop vs a round trip; task update vs capture",
    "5": "bulk copies vs numpy and vs the WebSocket",
    "6": "large kernels vs numpy",
    "7": "vnpu vs RPyC and vs its own REST",
    "8": "scaling over client processes",
    "9": "memory",
    "10": "calls from C (the toolkit) vs the Python client",
    "11": "the embedded device vs the device driven directly, and vs the daemon",
    "12": "a waiting call and the seed step vs a raw round trip, over TCP and a Unix socket",
    "13": "the daemon's memory per call (tracemalloc)",
    "14": "operators: kernels vs numpy, paged decode attention, updating its sequence lengths, a LLaMA step replayed",
    "15": "PyTorch (torch_npu) on vnpu: one eager op; a captured step's replay vs eager",
    "16": "the native toolkit: a C program's load, launches and round trips",
}


def machine() -> dict[str, Any]:
    """What the numbers were measured on (`nproc`, `lscpu`)."""
    info: dict[str, Any] = {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10, check=False).stdout
        for line in lscpu.splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("Model name", "CPU(s)", "Thread(s) per core", "Hypervisor vendor", "L3 cache"):
                info[f"lscpu {key.strip()}"] = value.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            info["memory_bytes"] = int(line.split()[1]) * 1024
    return info


def describe(info: dict[str, Any]) -> str:
    text = (
        f"{info.get('lscpu Model name', platform.processor() or 'unknown CPU')}, nproc {info['nproc']} "
        f"({info.get('lscpu Thread(s) per core', '?')} thread per core"
        + (f", {info['lscpu Hypervisor vendor']} guest" if "lscpu Hypervisor vendor" in info else "")
        + f"), {info.get('memory_bytes', 0) / (1 << 30):.0f} GiB; Python {info['python']}, numpy {info['numpy']}"
    )
    if "load_average_at_end" in info:
        start, end = info["load_average_at_start"][0], info["load_average_at_end"][0]
        text += f"; 1-min load average {start:.2f} at the start, {end:.2f} at the end"
    return text


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="vnpu bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: small counts, one repetition")
    parser.add_argument("--out", type=Path, help="where to write the JSON (default bench/results.json)")
    parser.add_argument("--only", help="comma-separated figure numbers (default: all)")
    parser.add_argument("--reps", type=int, help="repetitions per measurement (default 5; --quick: 1)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    wanted = set(args.only.split(",")) if args.only else set(TITLES)
    reps = args.reps or (1 if args.quick else 5)
    out = args.out or (
        Path(tempfile.gettempdir()) / "vnpu-bench-quick.json" if args.quick else ROOT / "bench" / "results.json"
    )
    began = time.monotonic()
    rows: list[Row] = []
    failures: list[str] = []
    info = machine()
    info["load_average_at_start"] = os.getloadavg()
    with Daemon() as daemon:
        idle = idle_row(daemon)
        session = open_session(daemon.endpoint)
        echo = Echo(daemon.endpoint)
        bench = Bench(daemon, args.quick, reps, session, echo)
        mode = "quick" if args.quick else "full"
        bench.log(f"daemon pid {daemon.pid} on {daemon.endpoint}; {mode} run, {reps} rep(s)")
        figures: list[tuple[str, Callable[[], list[Row]]]] = [
            ("1", lambda: figure1(bench)),
            ("2", lambda: figure2(bench)),
            ("3", lambda: figure3(bench)),
            ("4", lambda: figure4(bench)),
            ("5", lambda: figure5(bench)),
            ("6", lambda: figure6(bench)),
            ("7", lambda: figure7(bench)),
            ("8", lambda: figure8(bench)),
            ("9", lambda: figure9(bench, idle)),
            ("10", lambda: figure10(bench)),
            ("11", lambda: figure11(bench)),
            ("12", lambda: figure12(bench)),
            ("13", lambda: figure13(bench)),
            ("14", lambda: figure14(bench)),
            ("15", lambda: figure15(bench)),
            ("16", lambda: figure16(bench)),
        ]
        try:
            for number, run in figures:
                if number not in wanted:
                    continue
                bench.log(f"figure {number}: {TITLES[number]}")
                try:
                    rows += run()
                except Exception as error:
                    traceback.print_exc()
                    failures.append(f"figure {number}: {error!r}")
                    rows.append(Row(number, f"{TITLES[number]}: FAILED ({error!r:.120})", "s", []))
        finally:
            echo.close()
            close_session(session)
    elapsed = time.monotonic() - began
    info["load_average_at_end"] = os.getloadavg()
    markdown = table(rows)
    result = {
        "issue": 7,
        "mode": "quick" if args.quick else "full",
        "reps": reps,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(elapsed, 1),
        "machine": info,
        "machine_description": describe(info),
        "figures": TITLES,
        "rows": [row.to_json() for row in rows],
        "failures": failures,
        "table": markdown,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    met = [r for r in rows if r.met() is True]
    missed = [r for r in rows if r.met() is False]
    print(f"vnpu bench ({result['mode']}, {reps} rep(s), {elapsed:.0f} s) on {describe(info)}\n")
    print(markdown)
    print(f"\ngoals met: {len(met)}, missed: {len(missed)}; raw numbers in {out}")
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
