"""torch.distributed with the hccl backend and one rank (vnpu's HCCL): all_reduce, all_gather, broadcast and
reduce_scatter give the CPU's tensors (run as a script by test_distributed.py; one JSON line per case)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401


def all_reduce() -> None:
    x = torch.randn(5)
    t = x.npu()
    dist.all_reduce(t)
    assert torch.allclose(t.cpu(), x), (t.cpu(), x)


def all_gather() -> None:
    x = torch.randn(3)
    out = [torch.empty(3).npu()]
    dist.all_gather(out, x.npu())
    assert torch.allclose(out[0].cpu(), x), (out[0].cpu(), x)


def all_gather_into_tensor() -> None:
    x = torch.randn(4)
    out = torch.empty(4).npu()
    dist.all_gather_into_tensor(out, x.npu())
    assert torch.allclose(out.cpu(), x)


def broadcast() -> None:
    x = torch.randn(6)
    t = x.npu()
    dist.broadcast(t, src=0)
    assert torch.allclose(t.cpu(), x)


def reduce_scatter() -> None:
    x = torch.randn(4)
    out = torch.empty(4).npu()
    dist.reduce_scatter_tensor(out, x.npu())
    assert torch.allclose(out.cpu(), x)


def captured_all_gather() -> None:
    """A collective captured in an NPUGraph is a device task like any other: replay moves the new input."""
    x = torch.randn(4).npu()
    out = torch.empty(4).npu()
    graph = torch.npu.NPUGraph()
    with torch.npu.graph(graph):
        dist.all_gather_into_tensor(out, x)
    for _ in range(2):
        new = torch.randn(4)
        x.copy_(new.npu())
        graph.replay()
        torch.npu.synchronize()
        assert torch.allclose(out.cpu(), new), (out.cpu(), new)


CASES: dict[str, Callable[[], None]] = {
    "all_reduce": all_reduce,
    "all_gather": all_gather,
    "all_gather_into_tensor": all_gather_into_tensor,
    "broadcast": broadcast,
    "reduce_scatter": reduce_scatter,
    "captured_all_gather": captured_all_gather,
}


def main() -> None:
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    torch.npu.set_device(0)
    dist.init_process_group("hccl", rank=0, world_size=1)
    try:
        for name, case in CASES.items():
            try:
                case()
                print(json.dumps({"case": name, "result": "ok"}), flush=True)
            except AssertionError as error:
                print(json.dumps({"case": name, "result": "mismatch", "error": str(error)[:2000]}), flush=True)
            except Exception as error:
                print(json.dumps({"case": name, "result": "refused", "error": str(error)[:2000]}), flush=True)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
