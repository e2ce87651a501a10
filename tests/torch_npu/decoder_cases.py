"""A tiny LLaMA-style decoder (RMSNorm, RoPE, GQA attention, SwiGLU, greedy decode) in plain torch ops,
run on the CPU and on vnpu's NPU, eager and with each decode step captured in an NPUGraph and replayed (run as a
script by test_decoder.py; one JSON line per case: the tokens, or the refusal naming the operator vnpu lacks)."""

from __future__ import annotations

import json
import re

import torch
import torch_npu  # noqa: F401
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

# how vnpu refuses an operator it lacks: the legacy one torch_npu fell back to (no aclnn symbol), or the aclnn
# operator declared without a kernel yet
MISSING = re.compile(r"legacy \(aclop\) operator (\w+)|vnpu does not implement (aclnn\w+) yet")
VOCAB, DIM, HEADS, KV_HEADS, LAYERS, CTX = 32, 16, 4, 2, 2, 12
HEAD = DIM // HEADS


def weights() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    w = {"embed": torch.randn(VOCAB, DIM, generator=g) * 0.5}
    for layer in range(LAYERS):
        shapes = {"q": (DIM, DIM), "k": (KV_HEADS * HEAD, DIM), "v": (KV_HEADS * HEAD, DIM), "o": (DIM, DIM),
                  "gate": (2 * DIM, DIM), "up": (2 * DIM, DIM), "down": (DIM, 2 * DIM)}  # fmt: skip
        for name, shape in shapes.items():
            w[f"{layer}.{name}"] = torch.randn(*shape, generator=g) / shape[1] ** 0.5
        w[f"{layer}.norm1"] = 1 + 0.1 * torch.randn(DIM, generator=g)
        w[f"{layer}.norm2"] = 1 + 0.1 * torch.randn(DIM, generator=g)
    w["norm"] = torch.ones(DIM)
    w["head"] = torch.randn(VOCAB, DIM, generator=g)
    positions = torch.arange(CTX, dtype=torch.float32)[:, None]
    freqs = 1.0 / (10000 ** (torch.arange(0, HEAD, 2, dtype=torch.float32) / HEAD))
    angles = torch.cat([positions * freqs, positions * freqs], dim=-1)
    w["cos"], w["sin"] = angles.cos(), angles.sin()
    return w


def rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


def repeat_kv(cache: torch.Tensor) -> torch.Tensor:
    """GQA: each KV head serves HEADS // KV_HEADS query heads (LLaMA's repeat_kv: expand, then reshape)."""
    ctx, kv, head = cache.shape
    return cache[:, :, None, :].expand(ctx, kv, HEADS // KV_HEADS, head).reshape(ctx, HEADS, head)


def step(w: dict[str, torch.Tensor], token: torch.Tensor, pos: torch.Tensor, kcache: list[torch.Tensor],
         vcache: list[torch.Tensor], mask: torch.Tensor) -> torch.Tensor:  # fmt: skip
    """One decode step: the next token's logits; writes this position's K and V into the caches (in place)."""
    x = torch.nn.functional.embedding(token, w["embed"])  # [1, DIM]
    cos, sin = w["cos"].index_select(0, pos), w["sin"].index_select(0, pos)
    for layer in range(LAYERS):
        h = rms_norm(x, w[f"{layer}.norm1"])
        q = (h @ w[f"{layer}.q"].t()).view(1, HEADS, HEAD)
        k = (h @ w[f"{layer}.k"].t()).view(1, KV_HEADS, HEAD)
        v = (h @ w[f"{layer}.v"].t()).view(1, KV_HEADS, HEAD)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        kcache[layer].index_copy_(0, pos, k)
        vcache[layer].index_copy_(0, pos, v)
        keys, values = repeat_kv(kcache[layer]), repeat_kv(vcache[layer])  # [CTX, HEADS, HEAD]
        scores = torch.einsum("qhd,khd->hqk", q, keys) / HEAD**0.5 + mask
        attn = torch.einsum("hqk,khd->qhd", torch.softmax(scores, dim=-1), values).reshape(1, DIM)
        x = x + attn @ w[f"{layer}.o"].t()
        h = rms_norm(x, w[f"{layer}.norm2"])
        x = (
            x
            + (torch.nn.functional.silu(h @ w[f"{layer}.gate"].t()) * (h @ w[f"{layer}.up"].t()))
            @ w[f"{layer}.down"].t()
        )
    return rms_norm(x, w["norm"]) @ w["head"].t()


def decode(device: str, captured: bool, steps: int = 8) -> tuple[list[int], torch.Tensor]:
    w = {k: v.to(device) for k, v in weights().items()}
    kcache = [torch.zeros(CTX, KV_HEADS, HEAD).to(device) for _ in range(LAYERS)]
    vcache = [torch.zeros(CTX, KV_HEADS, HEAD).to(device) for _ in range(LAYERS)]
    token = torch.tensor([3]).to(device)
    pos = torch.tensor([0]).to(device)
    mask = torch.full((1, 1, CTX), -1e9).to(device)
    tokens, all_logits = [], []
    graph = None
    for i in range(steps):
        visible = torch.full((1, 1, CTX), -1e9)
        visible[..., : i + 1] = 0
        mask.copy_(visible.to(device))
        pos.copy_(torch.tensor([i]).to(device))
        if not captured:
            logits = step(w, token, pos, kcache, vcache, mask)
        else:
            if graph is None:
                graph = torch.npu.NPUGraph()
                with torch.npu.graph(graph):
                    logits_out = step(w, token, pos, kcache, vcache, mask)
            graph.replay()
            logits = logits_out
        nxt = int(logits.argmax(dim=-1).cpu()[0]) if device == "cpu" else int(logits.cpu().argmax(dim=-1)[0])
        tokens.append(nxt)
        all_logits.append(logits.cpu().clone())
        token.copy_(torch.tensor([nxt]).to(device))
    return tokens, torch.cat(all_logits)


class MissingOperators(TorchDispatchMode):
    """Runs each aten op on the NPU; one vnpu refuses is recorded (the legacy operator torch_npu fell back to) and
    computed on the CPU instead, so one eager decode lists every operator the model lacks."""

    def __init__(self) -> None:
        super().__init__()
        self.missing: dict[str, str] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        try:
            return func(*args, **kwargs)
        except RuntimeError as error:
            found = MISSING.search(str(error))
            if found is None:
                raise
            self.missing.setdefault(found.group(1) or found.group(2), str(func))
            on_cpu = tree_map(lambda t: t.cpu() if isinstance(t, torch.Tensor) else t, (args, kwargs))
            result = func(*on_cpu[0], **on_cpu[1])
            moved = tree_map(lambda t: t.npu() if isinstance(t, torch.Tensor) else t, result)
            for given, done in zip(args, on_cpu[0], strict=True):  # an in-place or out= op: write back
                if isinstance(given, torch.Tensor) and given.device.type == "npu":
                    given.copy_(done.npu())
            return moved


def main() -> None:
    probe = MissingOperators()
    with probe:
        decode("npu", captured=False)
    print(json.dumps({"case": "missing", "result": "ok", "operators": probe.missing}), flush=True)
    expected, expected_logits = decode("cpu", captured=False)
    for name, captured in (("eager", False), ("captured", True)):
        try:
            got, logits = decode("npu", captured)
            error = float((logits - expected_logits).abs().max())
            result = "ok" if got == expected and error < 1e-3 else "mismatch"
            print(json.dumps({"case": name, "result": result, "tokens": got, "expected": expected,
                              "max_logit_error": error}), flush=True)  # fmt: skip
        except Exception as error:
            found = MISSING.search(str(error))
            missing = (found.group(1) or found.group(2)) if found else None
            print(json.dumps({"case": name, "result": "refused", "operator": missing,
                              "error": str(error)[:2000]}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
