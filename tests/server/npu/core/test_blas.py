"""The daemon runs numpy's BLAS on one thread per kernel unless the environment chose (`server.npu.core.blas`),
checked in fresh processes through OpenBLAS's own getter (the test process is left alone)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
PROBE = """
import ctypes, re, sys
import numpy
sys.path.insert(0, {root!r})
from server.npu.core.blas import one_thread_per_kernel
path = re.findall(r"\\S*openblas\\S*\\.so\\S*", open("/proc/self/maps").read())[0]
library = ctypes.CDLL(path)
getter = next(getattr(library, n) for n in ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_")
              if hasattr(library, n))
before = getter()
print(one_thread_per_kernel(), before, getter())
"""


def probe(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(root=str(ROOT))],
        capture_output=True, text=True, timeout=60, check=True, env={**clean, **env},
    )  # fmt: skip
    return done.stdout.split()


def test_one_blas_thread_unless_the_environment_chose() -> None:
    done, before, after = probe()
    assert done == "True" and after == "1", (before, after)
    assert probe(OPENBLAS_NUM_THREADS="2") == ["False", "2", "2"]
