"""vllm-ascend's decode attention through torch_npu on vnpu: npu_fused_infer_attention_score over a paged KV cache,
eager and captured in a task group whose sequence lengths are updated every step (ExternalEvent wait/reset captured
before the group, the update recorded on the update stream), each step's output within fp16 tolerance of attention
computed on the CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.daemons import Daemon
from tests.torch_npu.conftest import HERE, run_torch

pytestmark = pytest.mark.timeout(300)  # a torch process: ~10 s to start, more on a loaded machine


def test_paged_decode_attention_updated_per_step(toolkit: Path, daemon: Daemon, queue: str) -> None:
    run = run_torch(toolkit, daemon, HERE / "fia_cases.py", queue=queue)
    cases = run.cases()
    assert set(cases) == {"eager", "captured_updated"}, run.stderr[-3000:]
    assert {name: case for name, case in cases.items() if case["result"] != "ok"} == {}
