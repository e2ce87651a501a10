"""torch.npu.NPUGraph capture and replay on a side stream, torch.npu.graph(...), graph_task_group_begin/end with
graph_task_update_begin/end, and vllm-ascend's decode pattern (ExternalEvent), with torch_npu's task queue on
(TASK_QUEUE_ENABLE=1, and unset: its default) and off."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.daemons import Daemon
from tests.torch_npu.conftest import HERE, run_torch

pytestmark = pytest.mark.timeout(300)  # a torch process: ~10 s to start, more on a loaded machine


def test_capture_replay_and_task_update_match_the_cpu(toolkit: Path, daemon: Daemon, queue: str) -> None:
    run = run_torch(toolkit, daemon, HERE / "graph_cases.py", queue=queue)
    cases = run.cases()
    assert set(cases) == {"npugraph_side_stream", "graph_context_manager", "task_group_update", "vllm_decode_pattern"}
    assert {name: case for name, case in cases.items() if case["result"] != "ok"} == {}, run.stderr[-3000:]


def test_the_default_task_queue_runs_too(toolkit: Path, daemon: Daemon) -> None:
    """TASK_QUEUE_ENABLE unset (torch_npu's default, 1): the cases that deadlocked on the CFFI libraries' GIL (the
    main thread waiting in graph_task_group_end and in wait_stream for the queue thread) finish and match."""
    start = time.monotonic()
    run = run_torch(toolkit, daemon, HERE / "graph_cases.py", queue=None, timeout=200)
    assert time.monotonic() - start < 200
    cases = run.cases()
    assert set(cases) == {"npugraph_side_stream", "graph_context_manager", "task_group_update", "vllm_decode_pattern"}
    assert {name: case for name, case in cases.items() if case["result"] != "ok"} == {}, run.stderr[-3000:]
