"""Figure 15: PyTorch on vnpu (torch_npu 2.13 through the toolkit, TASK_QUEUE_ENABLE=0): one eager torch op
(`x + 1` on 8 elements: Python → torch_npu → the toolkit's libraries → the daemon, median over a bounded loop), and
a captured decode-like step (13 kernels) replayed vs the same step eager, in one torch process
(`bench/torch_step.py`) against this run's daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.report import Goal, Row
from bench.wire import Bench
from client.capi import toolkit

SCRIPT = Path(__file__).parent / "torch_step.py"


def figure15(bench: Bench) -> list[Row]:
    ops, steps, rounds = bench.pick(2000, 100), bench.pick(200, 20), bench.pick(5, 2)
    root = toolkit.ensure()
    env = {k: v for k, v in os.environ.items() if not k.startswith("VNPU_")}
    env |= {"VNPU_ENDPOINT": bench.daemon.endpoint, "TASK_QUEUE_ENABLE": "0"}
    command = f"source {root}/bin/setenv.bash && exec {sys.executable} {SCRIPT} {ops} {steps} {rounds}"
    done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the torch process failed ({done.returncode}): {done.stderr[-1500:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return [
        Row(
            "15",
            "one eager torch op on vnpu (x + 1, 8 elements), median of the loop's mean",
            "s",
            [found["op_s"]],
            goal=Goal("<=", 1e-4, on="value"),
            note="through the CFFI libraries: the interpreter inside them is the cost (the native toolkit, issue 38)",
        ),
        Row(
            "15",
            f"a captured decode-like step replayed ({found['kernels']} kernels)",
            "s",
            [found["replay_step_s"]],
            "the same step eager",
            [found["eager_step_s"]],
            ratio=[found["eager_step_s"] / found["replay_step_s"]],
            ratio_meaning="eager time / replay time",
        ),
    ]
