"""PyTorch on vnpu: an eager op, an NPUGraph captured once and replayed, and a captured op updated in place
between replays (torch_npu's task groups, as vllm-ascend updates attention every decode step).

    vnpu serve &                                        # the daemon (another shell)
    source "$(vnpu toolkit)/bin/setenv.bash"            # the toolkit torch_npu loads
    TASK_QUEUE_ENABLE=0 python examples/torch_npu/graph_update.py

Needs torch==2.13.0 and torch-npu==2.13.0 in the environment vnpu is installed in (docs/pytorch.md)."""

from __future__ import annotations

import torch
import torch_npu

x = torch.arange(4.0).npu()
print("eager x + 1:", (x + 1).cpu().tolist())

# capture x * 2 + w on a side stream, replay after x changes
w = torch.tensor([3.0, 3.0, 3.0, 3.0]).npu()
graph = torch.npu.NPUGraph()
side = torch.npu.Stream()
side.wait_stream(torch.npu.current_stream())
with torch.npu.stream(side):
    graph.capture_begin()
    y = x * 2 + w
    graph.capture_end()
torch.npu.current_stream().wait_stream(side)
x.copy_(torch.tensor([10.0, 20.0, 30.0, 40.0]).npu())
graph.replay()
torch.npu.synchronize()
print("replayed x * 2 + w:", y.cpu().tolist())

# a task group: capture out = x + k, then update the captured add to use another k, and replay
k = torch.tensor([1.0, 1.0, 1.0, 1.0]).npu()
out = torch.empty(4).npu()
grouped = torch.npu.NPUGraph()
with torch.npu.stream(side):
    grouped.capture_begin()
    torch_npu.npu.graph_task_group_begin(side)
    torch.add(x, k, out=out)
    handle = torch_npu.npu.graph_task_group_end(side)
    grouped.capture_end()
torch.npu.current_stream().wait_stream(side)
update = torch.npu.Stream()
for value in (100.0, 1000.0):
    k2 = torch.tensor([value] * 4).npu()
    with torch.npu.stream(update):
        torch_npu.npu.graph_task_update_begin(update, handle)
        torch.add(x, k2, out=out)
        torch_npu.npu.graph_task_update_end(update)
    update.synchronize()
    grouped.replay()
    torch.npu.synchronize()
    print(f"updated to x + {value:g}:", out.cpu().tolist())
    assert out.cpu().tolist() == [v + value for v in (10.0, 20.0, 30.0, 40.0)]
print("all matches the CPU")
