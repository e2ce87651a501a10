"""Eager torch ops on vnpu's NPU against the same code on the CPU: each one computes the CPU's values, or is
refused with vnpu's message (its aclnn operator is not in the operator library yet, so torch_npu fell back to the
legacy path, which vnpu refuses) — never a wrong result."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.daemons import Daemon
from tests.torch_npu.conftest import HERE, run_torch

pytestmark = pytest.mark.timeout(300)  # a torch process: ~10 s to start, more on a loaded machine

# what ordinary tensor code needs first and vnpu's operator library lacks today (each refused, never wrong):
# creation and fills (aclnnInplaceZero/One/FillScalar, Arange), Div, Max/ArgMax, IndexSelect, Cat/Stack, LayerNorm,
# Rsqrt, Pow (the operator library issue brings them; a case that starts passing moves to WORKING)
WORKING = {
    "add", "add_broadcast", "add_scalar", "sub", "mul", "mul_scalar", "neg", "exp", "relu", "silu", "gelu",
    "matmul", "linear", "softmax", "sum", "mean", "slice", "to_float16", "to_bfloat16", "transpose_contiguous",
    "permute_contiguous",
}  # fmt: skip
ACLNN_ONLY = "vnpu runs aclnn operators only"


def test_common_ops_match_the_cpu_or_are_refused(toolkit: Path, daemon: Daemon) -> None:
    run = run_torch(toolkit, daemon, HERE / "eager_cases.py")
    cases = run.cases()
    assert len(cases) >= 30, run.stderr[-3000:]
    wrong = {name: case for name, case in cases.items() if case["result"] == "mismatch"}
    assert wrong == {}, "a silent wrong result"
    for name, case in cases.items():
        if case["result"] == "refused":
            assert ACLNN_ONLY in case["error"] and "aclopCompileAndExecute" in case["error"], (name, case["error"])
    assert {name for name, case in cases.items() if case["result"] == "ok"} >= WORKING
