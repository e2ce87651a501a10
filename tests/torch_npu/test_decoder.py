"""A tiny LLaMA-style decoder (RMSNorm, RoPE, GQA attention, SwiGLU), greedy decode, eager and with each step captured
in an NPUGraph and replayed: the CPU's tokens and logits (within 1e-3). A probe run first lists every operator the
model lacks (none since the operator library's kernels; before them GatherV2, Square, Rsqrt, ConcatD,
RepeatInterleave, BatchMatMul and RealDiv), so a gap is named rather than found by a mismatch."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.daemons import Daemon
from tests.torch_npu.conftest import HERE, run_torch

pytestmark = pytest.mark.timeout(300)  # a torch process: ~10 s to start, more on a loaded machine


def test_decode_gives_the_cpus_tokens_eager_and_captured(toolkit: Path, daemon: Daemon, queue: str) -> None:
    run = run_torch(toolkit, daemon, HERE / "decoder_cases.py", queue=queue)
    cases = run.cases()
    assert set(cases) == {"missing", "eager", "captured"}, run.stderr[-3000:]
    assert cases.pop("missing")["operators"] == {}
    for case in cases.values():
        assert case["result"] == "ok", case


def test_the_example_runs(toolkit: Path, daemon: Daemon, queue: str) -> None:
    run = run_torch(toolkit, daemon, HERE.parent.parent / "examples" / "torch_npu" / "graph_update.py", queue=queue)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "all matches the CPU" in run.stdout
