"""Run in a torch process by bench/torch_npu.py: times one eager torch op on vnpu (`x + 1` on a small tensor) and
one decode-like step (a block of matmuls, adds, SiLU and softmax) eager and as a captured NPUGraph replay; prints
one JSON line. Arguments: the loop counts (ops, steps) and rounds."""

from __future__ import annotations

import json
import statistics
import sys
import time

import torch
import torch_npu  # noqa: F401


def timed(fn, count: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(count):
        fn()
    torch.npu.synchronize()
    return (time.perf_counter() - start) / count


def main() -> None:
    ops, steps, rounds = (int(a) for a in sys.argv[1:4])
    x = torch.ones(8).npu()
    torch.npu.synchronize()
    timed(lambda: x + 1, 20)
    op = statistics.median(timed(lambda: x + 1, ops) for _ in range(rounds))
    h = torch.randn(1, 64).npu()
    ws = [(torch.randn(64, 64) / 8).npu() for _ in range(4)]

    def step() -> torch.Tensor:
        y = h
        for w in ws:
            y = torch.nn.functional.silu(y @ w) + y
        return torch.softmax(y, dim=-1)

    graph = torch.npu.NPUGraph()
    with torch.npu.graph(graph):
        out = step()
    torch.npu.synchronize()
    kernels = 3 * len(ws) + 1
    eager = statistics.median(timed(step, steps) for _ in range(rounds))
    replay = statistics.median(timed(graph.replay, steps) for _ in range(rounds))
    assert torch.allclose(out.cpu(), step().cpu())
    print(json.dumps({"op_s": op, "eager_step_s": eager, "replay_step_s": replay, "kernels": kernels}))


if __name__ == "__main__":
    main()
