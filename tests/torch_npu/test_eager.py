"""Eager torch ops on vnpu's NPU against the same code on the CPU: each one computes the CPU's values. An operator
vnpu lacked would be refused with vnpu's message (an aclnn operator declared without a kernel yet, or, missing
altogether, the legacy path torch_npu falls back to, which vnpu refuses) — never a wrong result."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.daemons import Daemon
from tests.torch_npu.conftest import HERE, run_torch

pytestmark = pytest.mark.timeout(300)  # a torch process: ~10 s to start, more on a loaded machine

# every case runs since the operator library's kernels (branch ops): creation and fills, arithmetic, matmul,
# softmax, reductions, max/argmax, indexing, cat/stack, layer norm, rsqrt, pow, casts, contiguous views
REFUSALS = ("vnpu runs aclnn operators only", "vnpu does not implement aclnn")


def test_common_ops_match_the_cpu_or_are_refused(toolkit: Path, daemon: Daemon, queue: str) -> None:
    run = run_torch(toolkit, daemon, HERE / "eager_cases.py", queue=queue)
    cases = run.cases()
    assert len(cases) >= 30, run.stderr[-3000:]
    wrong = {name: case for name, case in cases.items() if case["result"] == "mismatch"}
    assert wrong == {}, "a silent wrong result"
    refused = {name: case["error"] for name, case in cases.items() if case["result"] == "refused"}
    for name, error in refused.items():
        assert any(words in error for words in REFUSALS), (name, error)  # refused as vnpu refuses, naming it
    assert refused == {}
