"""Figure 15: PyTorch on vnpu (torch_npu 2.13 through the toolkit's native libraries): one eager torch op (`x + 1`
on 8 elements: Python → torch_npu → the toolkit's libraries → the daemon, median over a bounded loop) with
torch_npu's task queue off (TASK_QUEUE_ENABLE=0) and on (1, its default: the CFFI libraries deadlocked there), and a
captured decode-like step (13 kernels) replayed vs the same step eager, in one torch process per queue setting
(`bench/torch_step.py`) against this run's daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.report import Goal, Row
from bench.wire import Bench
from client.native import build as toolkit

SCRIPT = Path(__file__).parent / "torch_step.py"


def figure15(bench: Bench) -> list[Row]:
    ops, steps, rounds = bench.pick(2000, 100), bench.pick(200, 20), bench.pick(5, 2)
    root = toolkit.ensure()
    found = {queue: _run(bench, root, queue, ops, steps, rounds) for queue in ("0", "1")}
    off, on = found["0"], found["1"]
    return [
        Row(
            "15",
            "one eager torch op on vnpu (x + 1, 8 elements), median of the loop's mean, task queue off",
            "s",
            [off["op_s"]],
            goal=Goal("<=", 1e-4, on="value"),
            note="the native libraries (issue 38); the CFFI ones measured ~0.4 ms here, their interpreter the cost",
        ),
        Row(
            "15",
            "the same with torch_npu's task queue on (TASK_QUEUE_ENABLE=1, its default)",
            "s",
            [on["op_s"]],
            goal=Goal("<=", 1e-4, on="value"),
            note="the queue thread makes the ACL calls; with the CFFI libraries this setting deadlocked",
        ),
        Row(
            "15",
            f"a captured decode-like step replayed ({off['kernels']} kernels)",
            "s",
            [off["replay_step_s"]],
            "the same step eager",
            [off["eager_step_s"]],
            ratio=[off["eager_step_s"] / off["replay_step_s"]],
            ratio_meaning="eager time / replay time",
        ),
    ]


def _run(bench: Bench, root: Path, queue: str, ops: int, steps: int, rounds: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VNPU_")}
    env |= {"VNPU_ENDPOINT": bench.daemon.endpoint, "TASK_QUEUE_ENABLE": queue}
    command = f"source {root}/bin/setenv.bash && exec {sys.executable} {SCRIPT} {ops} {steps} {rounds}"
    done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the torch process failed ({done.returncode}, queue {queue}): {done.stderr[-1500:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found
