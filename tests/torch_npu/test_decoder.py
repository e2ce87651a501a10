"""A tiny LLaMA-style decoder, greedy decode, eager and with each step captured and replayed: the CPU's tokens,
or a refusal naming the operator vnpu's library lacks (inside a capture torch_npu itself refuses the legacy path)
— never other tokens. A probe run lists every operator the model lacks: today GatherV2 (embedding), Square (pow),
Rsqrt, ConcatD (cat), RepeatInterleave, BatchMatMul and RealDiv (division by a scalar)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.daemons import Daemon
from tests.torch_npu.conftest import HERE, run_torch

pytestmark = pytest.mark.timeout(300)  # a torch process: ~10 s to start, more on a loaded machine


def test_decode_gives_the_cpus_tokens_or_names_the_missing_operator(toolkit: Path, daemon: Daemon) -> None:
    run = run_torch(toolkit, daemon, HERE / "decoder_cases.py")
    cases = run.cases()
    assert set(cases) == {"missing", "eager", "captured"}, run.stderr[-3000:]
    missing = cases.pop("missing")["operators"]
    for case in cases.values():
        assert case["result"] in ("ok", "refused"), case
        if case["result"] == "refused":
            assert "aclop" in case["error"] and missing, case["error"]
        else:
            assert missing == {}, "the tokens matched, so nothing should have fallen back"


def test_the_example_runs(toolkit: Path, daemon: Daemon) -> None:
    run = run_torch(toolkit, daemon, HERE.parent.parent / "examples" / "torch_npu" / "graph_update.py")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "all matches the CPU" in run.stdout
