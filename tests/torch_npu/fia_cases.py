"""vllm-ascend's FULL_DECODE_ONLY attention on vnpu: torch_npu.npu_fused_infer_attention_score over a paged KV
cache (BSH, block table, GQA), eager, then captured in a task group of an NPUGraph (ExternalEvent wait and reset
before it) and updated per step with that step's sequence lengths (the .out form, the output's address fixed, as
vllm-ascend does), each step against attention computed on the CPU (run as a script by test_fia.py)."""

from __future__ import annotations

import json
import math

import torch
import torch_npu

B, N, KV, D, BLOCK, BLOCKS = 2, 4, 2, 16, 16, 4
SCALE = 1 / math.sqrt(D)
KW = {"num_heads": N, "num_key_value_heads": KV, "input_layout": "BSH", "block_size": BLOCK, "scale": SCALE}
torch.manual_seed(0)
KCACHE, VCACHE = torch.randn(BLOCKS, BLOCK, KV * D), torch.randn(BLOCKS, BLOCK, KV * D)
QUERY = torch.randn(B, 1, N * D)
TABLE = torch.tensor([[0, 1], [2, 3]], dtype=torch.int32)


def reference(lengths: list[int]) -> torch.Tensor:
    """Each sequence's first `length` cached tokens, attended by its query, in float32 on the CPU."""
    outs = []
    for b, length in enumerate(lengths):
        k = torch.cat([KCACHE[i] for i in TABLE[b]])[:length].view(length, KV, D).repeat_interleave(N // KV, 1)
        v = torch.cat([VCACHE[i] for i in TABLE[b]])[:length].view(length, KV, D).repeat_interleave(N // KV, 1)
        scores = torch.einsum("nd,lnd->nl", QUERY[b, 0].view(N, D), k) * SCALE
        outs.append(torch.einsum("nl,lnd->nd", scores.softmax(-1), v).reshape(1, N * D))
    return torch.stack(outs)


def main() -> None:
    q, k, v, table = QUERY.half().npu(), KCACHE.half().npu(), VCACHE.half().npu(), TABLE.npu()
    eager = torch_npu.npu_fused_infer_attention_score(q, k, v, block_table=table, actual_seq_lengths_kv=[5, 9], **KW)
    error = float((eager[0].cpu().float() - reference([5, 9])).abs().max())
    print(json.dumps({"case": "eager", "result": "ok" if error < 2e-3 else "mismatch", "error": error}), flush=True)

    infer_output = torch_npu._npu_fused_infer_attention_score_infer_output
    out = list(infer_output(q, v, input_layout="BSH", block_table=table, num_heads=N, num_key_value_heads=KV))

    def attend(lengths: list[int]) -> None:
        torch_npu.npu_fused_infer_attention_score.out(
            q, k, v, block_table=table, actual_seq_lengths_kv=lengths, workspace=None, out=out, **KW
        )

    graph, stream = torch.npu.NPUGraph(), torch.npu.Stream()
    stream.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(stream):
        graph.capture_begin()
        event = torch.npu.ExternalEvent()
        event.wait(stream)
        event.reset(stream)
        torch_npu.npu.graph_task_group_begin(stream)
        attend([5, 9])
        handle = torch_npu.npu.graph_task_group_end(stream)
        graph.capture_end()
    torch.npu.current_stream().wait_stream(stream)
    update = torch.npu.Stream()
    errors = []
    for lengths in ([6, 10], [12, 3], [16, 32]):
        with torch.npu.stream(update):
            torch_npu.npu.graph_task_update_begin(update, handle)
            attend(lengths)
            torch_npu.npu.graph_task_update_end(update)
            event.record(update)
        graph.replay()
        torch.npu.synchronize()
        errors.append(float((out[0].cpu().float() - reference(lengths)).abs().max()))
    result = "ok" if max(errors) < 2e-3 else "mismatch"
    print(json.dumps({"case": "captured_updated", "result": result, "errors": errors}), flush=True)


if __name__ == "__main__":
    main()
