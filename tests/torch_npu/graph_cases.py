"""NPUGraph capture and replay, torch.npu.graph, task groups with task update, and vllm-ascend's decode pattern,
each checked against the same arithmetic on the CPU (run as a script by test_graph.py; one JSON line per case)."""

from __future__ import annotations

import json
from collections.abc import Callable

import torch
import torch_npu


def npugraph_side_stream() -> None:
    """Capture x*2+w on a side stream; replay after the static input changes."""
    x = torch.arange(4.0).npu()
    w = torch.full((4,), 3.0).cpu().npu()
    g = torch.npu.NPUGraph()
    s = torch.npu.Stream()
    s.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(s):
        g.capture_begin()
        out = x * 2 + w
        g.capture_end()
    torch.npu.current_stream().wait_stream(s)
    for step in range(3):
        new = torch.randn(4)
        x.copy_(new.npu())
        g.replay()
        torch.npu.synchronize()
        assert torch.allclose(out.cpu(), new * 2 + 3.0), (step, out.cpu(), new * 2 + 3.0)


def graph_context_manager() -> None:
    """torch.npu.graph(g): the same, with the context manager."""
    a = torch.randn(3, 4).npu()
    b = torch.randn(4, 2).npu()
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        y = torch.relu(a @ b) + 1
    for _ in range(2):
        na, nb = torch.randn(3, 4), torch.randn(4, 2)
        a.copy_(na.npu())
        b.copy_(nb.npu())
        g.replay()
        torch.npu.synchronize()
        assert torch.allclose(y.cpu(), torch.relu(na @ nb) + 1, atol=1e-5)


def task_group_update() -> None:
    """graph_task_group_begin/end around torch.add(x, w, out=out); update it with another w; replay."""
    x = torch.arange(4.0).npu() * 10
    w = torch.ones(4).npu()
    w2 = torch.full((4,), 100.0).cpu().npu()
    out = torch.empty(4).npu()
    g = torch.npu.NPUGraph()
    s = torch.npu.Stream()
    s.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(s):
        g.capture_begin()
        torch_npu.npu.graph_task_group_begin(s)
        torch.add(x, w, out=out)
        handle = torch_npu.npu.graph_task_group_end(s)
        g.capture_end()
    torch.npu.current_stream().wait_stream(s)
    g.replay()
    torch.npu.synchronize()
    assert torch.allclose(out.cpu(), torch.arange(4.0) * 10 + 1), out.cpu()
    update = torch.npu.Stream()
    with torch.npu.stream(update):
        torch_npu.npu.graph_task_update_begin(update, handle)
        torch.add(x, w2, out=out)
        torch_npu.npu.graph_task_update_end(update)
    update.synchronize()
    g.replay()
    torch.npu.synchronize()
    assert torch.allclose(out.cpu(), torch.arange(4.0) * 10 + 100), out.cpu()


def vllm_decode_pattern() -> None:
    """vllm-ascend's FULL_DECODE_ONLY attention update: ExternalEvent wait + reset captured before the group; per
    step an update on an update stream, event.record there, then replay — several steps with different values."""
    x = torch.arange(4.0).npu()
    k = torch.zeros(4).npu()
    out = torch.empty(4).npu()
    g = torch.npu.NPUGraph()
    s = torch.npu.Stream()
    s.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(s):
        g.capture_begin()
        event = torch.npu.ExternalEvent()
        event.wait(s)
        event.reset(s)
        torch_npu.npu.graph_task_group_begin(s)
        torch.add(x, k, out=out)
        handle = torch_npu.npu.graph_task_group_end(s)
        g.capture_end()
    torch.npu.current_stream().wait_stream(s)
    update = torch.npu.Stream()
    steps = {}
    for step, value in enumerate((100.0, 1000.0, -7.5)):
        kv = torch.full((4,), value).cpu().npu()
        with torch.npu.stream(update):
            torch_npu.npu.graph_task_update_begin(update, handle)
            torch.add(x, kv, out=out)
            torch_npu.npu.graph_task_update_end(update)
            event.record(update)
        g.replay()
        torch.npu.synchronize()
        steps[step] = out.cpu()
        assert torch.allclose(steps[step], torch.arange(4.0) + value), (step, steps[step])


CASES: dict[str, Callable[[], None]] = {
    "npugraph_side_stream": npugraph_side_stream,
    "graph_context_manager": graph_context_manager,
    "task_group_update": task_group_update,
    "vllm_decode_pattern": vllm_decode_pattern,
}


def main() -> None:
    for name, case in CASES.items():
        try:
            case()
            print(json.dumps({"case": name, "result": "ok"}), flush=True)
        except AssertionError as error:
            print(json.dumps({"case": name, "result": "mismatch", "error": str(error)[:2000]}), flush=True)
        except Exception as error:
            print(json.dumps({"case": name, "result": "refused", "error": str(error)[:2000]}), flush=True)


if __name__ == "__main__":
    main()
