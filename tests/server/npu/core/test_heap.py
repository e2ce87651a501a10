"""The daemon keeps freed memory for the next kernel's temporaries (`server.npu.core.heap`): a kernel that widens
a 1 MiB int32 operand to int64 twice per launch takes no new pages once warm, where glibc's defaults map and
zero them at every launch. Measured in fresh processes (the test process's malloc is left alone), by their minor
page faults."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
LAUNCHES = """
import resource, sys
import numpy as np
sys.path.insert(0, {root!r})
if {tuned}:
    from server.npu.core.heap import keep_freed_memory
    assert keep_freed_memory()
a = np.arange(256 * 1024, dtype=np.int32)
np.minimum(a.astype(np.int64), a.astype(np.int64))  # warm
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    np.minimum(a.astype(np.int64), a.astype(np.int64))
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def faults(tuned: bool) -> int:
    code = LAUNCHES.format(root=str(ROOT), tuned=tuned)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return int(done.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_kernel_temporaries_reuse_freed_memory() -> None:
    untuned, tuned = faults(False), faults(True)
    assert untuned > 20 * 256  # a 2 MiB temporary is 512 pages, at least half of them new each launch
    assert tuned < untuned // 100
