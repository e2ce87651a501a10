"""torch.npu.NPUGraph capture and replay on a side stream, torch.npu.graph(...), graph_task_group_begin/end with
graph_task_update_begin/end, and vllm-ascend's decode pattern (ExternalEvent), with TASK_QUEUE_ENABLE=0; with
torch_npu's default queue the first device use fails with vnpu's message instead of hanging."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.daemons import Daemon
from tests.torch_npu.conftest import HERE, run_torch

pytestmark = pytest.mark.timeout(300)  # a torch process: ~10 s to start, more on a loaded machine


def test_capture_replay_and_task_update_match_the_cpu(toolkit: Path, daemon: Daemon) -> None:
    run = run_torch(toolkit, daemon, HERE / "graph_cases.py")
    cases = run.cases()
    assert set(cases) == {"npugraph_side_stream", "graph_context_manager", "task_group_update", "vllm_decode_pattern"}
    assert {name: case for name, case in cases.items() if case["result"] != "ok"} == {}, run.stderr[-3000:]


def test_the_default_task_queue_fails_clearly_instead_of_hanging(toolkit: Path, daemon: Daemon) -> None:
    start = time.monotonic()
    run = run_torch(toolkit, daemon, HERE / "graph_cases.py", queue=None, timeout=120)
    assert time.monotonic() - start < 120
    cases = run.cases()
    assert cases, run.stderr[-3000:]
    for case in cases.values():
        assert case["result"] == "refused"
        assert "TASK_QUEUE_ENABLE=0" in case["error"] and "aclInit" in case["error"], case["error"]
