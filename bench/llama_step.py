"""Figure 14's last row: one decode step of a 2-layer LLaMA-style model made of the library's operators, captured once
and replayed vs the same step launched eagerly.

The model (fp16, batch 4, hidden 512, 8 query heads and 2 KV heads of 64, SwiGLU 1,024, vocabulary 1,024, a paged KV
cache of 256 tokens per sequence in blocks of 64, 200 of them filled) runs per layer RmsNorm, three Mm (q, k, v),
ApplyRotaryPosEmb on q and k, two InplaceIndexCopy into the caches (the new token's slot), FusedInferAttentionScoreV4
over the paged cache, Mm and InplaceAdd (the residual), RmsNorm, Mm, SwiGlu, Mm and InplaceAdd; then a final RmsNorm,
the head's Mm and ArgMax: 33 launches. Eager: every launch's phase 1 and phase 2 from the client, then a synchronize;
replay: aclmdlRIExecuteAsync of the step captured once, then a synchronize. The replay must give the eager step's
logits bit for bit.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from bench.report import Row, interleave
from bench.wire import Bench
from client import acl

B, H, N, KVN, D, F, VOCAB, LAYERS = 4, 512, 8, 2, 64, 1024, 1024, 2
BLOCK, PER, FILLED = 64, 4, 200  # cache blocks of 64 tokens, 4 per sequence, 200 tokens cached
INT_MAX = 2147483647


class Model:
    """The weights, the cache and the activations in the daemon's memory, and the step as launches."""

    def __init__(self) -> None:
        self.ptrs: list[int] = []
        rng = np.random.default_rng(2)

        def weight(rows: int, cols: int) -> Any:
            return self.tensor((rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float16))

        self.layers = []
        for _ in range(LAYERS):
            layer = {name: weight(rows, cols) for name, rows, cols in (
                ("q", H, N * D), ("k", H, KVN * D), ("v", H, KVN * D), ("o", N * D, H), ("gate_up", H, 2 * F),
                ("down", F, H))}  # fmt: skip
            layer["norm1"] = self.tensor((1 + 0.1 * rng.standard_normal(H)).astype(np.float16))
            layer["norm2"] = self.tensor((1 + 0.1 * rng.standard_normal(H)).astype(np.float16))
            cache = rng.standard_normal((2, B * PER * BLOCK, KVN * D)).astype(np.float16)
            ptr = self.upload(cache)
            size = cache[0].nbytes
            for i, name in enumerate(("key", "value")):
                layer[f"{name}_rows"] = self.view(ptr + i * size, [B * PER * BLOCK, KVN * D], acl.ACL_FLOAT16)
                layer[f"{name}_cache"] = self.view(ptr + i * size, [B * PER, BLOCK, KVN * D], acl.ACL_FLOAT16)
            self.layers.append(layer)
        self.norm = self.tensor(np.ones(H, np.float16))
        self.head = weight(H, VOCAB)
        table = rng.permutation(B * PER).reshape(B, PER).astype(np.int32)
        self.table = self.tensor(table, acl.ACL_INT32)
        slots = table[:, FILLED // BLOCK] * BLOCK + FILLED % BLOCK  # where each sequence's new token goes
        self.slots = self.tensor(slots.astype(np.int64), acl.ACL_INT64)
        self.lengths = acl.aclCreateIntArray([FILLED + 1] * B)
        angles = (FILLED * 10000.0 ** (-np.arange(0, D, 2) / D)).repeat(2)[None, None, None].repeat(B, 0)
        self.cos = self.tensor(np.cos(angles).astype(np.float16))
        self.sin = self.tensor(np.sin(angles).astype(np.float16))
        self.x_ptr = self.upload(np.zeros((B, H), np.float16))  # the residual stream (the embedded token first)
        self.x = self.view(self.x_ptr, [B, H])
        self.hidden = self.tensor(np.zeros((B, H), np.float16))
        self.rstd = self.tensor(np.zeros((B, 1), np.float32), acl.ACL_FLOAT)
        q = self.upload(np.zeros((B, N * D), np.float16))
        self.q2, self.q4 = self.view(q, [B, N * D]), self.view(q, [B, 1, N, D])
        self.q3 = self.view(q, [B, 1, N * D])
        k, v = (self.upload(np.zeros((B, KVN * D), np.float16)) for _ in range(2))
        self.k2, self.k4, self.v2 = self.view(k, [B, KVN * D]), self.view(k, [B, 1, KVN, D]), self.view(v, [B, KVN * D])
        attention = self.upload(np.zeros((B, N * D), np.float16))
        self.attention2, self.attention3 = self.view(attention, [B, N * D]), self.view(attention, [B, 1, N * D])
        self.proj = self.tensor(np.zeros((B, H), np.float16))
        self.gate_up = self.tensor(np.zeros((B, 2 * F), np.float16))
        self.act = self.tensor(np.zeros((B, F), np.float16))
        self.logits = self.tensor(np.zeros((B, VOCAB), np.float16))
        self.logits_ptr = self.ptrs[-1]
        self.token = self.tensor(np.zeros(B, np.int64), acl.ACL_INT64)
        self.one = acl.aclCreateScalar(1.0, acl.ACL_FLOAT)

    def upload(self, x: np.ndarray) -> int:
        ptr = acl.aclrtMalloc(x.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        acl.aclrtMemcpy(ptr, x.nbytes, np.ascontiguousarray(x).tobytes(), x.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        self.ptrs.append(ptr)
        return ptr

    @staticmethod
    def view(ptr: int, dims: list[int], dtype: int = acl.ACL_FLOAT16) -> Any:
        strides = [int(np.prod(dims[i + 1 :])) for i in range(len(dims))]
        return acl.aclCreateTensor(dims, dtype, strides, 0, acl.ACL_FORMAT_ND, dims, ptr)

    def tensor(self, x: np.ndarray, dtype: int = acl.ACL_FLOAT16) -> Any:
        return self.view(self.upload(x), list(x.shape), dtype)

    def launches(self) -> list[tuple[str, tuple[Any, ...]]]:
        """The step: (operator, phase-1 arguments) in launch order."""
        steps: list[tuple[str, tuple[Any, ...]]] = []
        for layer in self.layers:
            optional: list[Any] = [None] * 26
            optional[3], optional[11] = self.lengths, self.table
            steps += [
                ("RmsNorm", (self.x, layer["norm1"], 1e-6, self.hidden, self.rstd)),
                ("Mm", (self.hidden, layer["q"], self.q2, 0)),
                ("Mm", (self.hidden, layer["k"], self.k2, 0)),
                ("Mm", (self.hidden, layer["v"], self.v2, 0)),
                ("ApplyRotaryPosEmb", (self.q4, self.k4, self.cos, self.sin, 1)),
                ("InplaceIndexCopy", (layer["key_rows"], 0, self.slots, self.k2)),
                ("InplaceIndexCopy", (layer["value_rows"], 0, self.slots, self.v2)),
                ("FusedInferAttentionScoreV4", (
                    self.q3, acl.aclCreateTensorList([layer["key_cache"]]),
                    acl.aclCreateTensorList([layer["value_cache"]]), *optional, N, 1 / np.sqrt(D), INT_MAX, INT_MAX,
                    "BSH", KVN, 0, 0, BLOCK, 0, False, 0, 0, 0, self.attention3, None)),
                ("Mm", (self.attention2, layer["o"], self.proj, 0)),
                ("InplaceAdd", (self.x, self.proj, self.one)),
                ("RmsNorm", (self.x, layer["norm2"], 1e-6, self.hidden, self.rstd)),
                ("Mm", (self.hidden, layer["gate_up"], self.gate_up, 0)),
                ("SwiGlu", (self.gate_up, -1, self.act)),
                ("Mm", (self.act, layer["down"], self.proj, 0)),
                ("InplaceAdd", (self.x, self.proj, self.one)),
            ]  # fmt: skip
        steps += [
            ("RmsNorm", (self.x, self.norm, 1e-6, self.hidden, self.rstd)),
            ("Mm", (self.hidden, self.head, self.logits, 0)),
            ("ArgMax", (self.logits, -1, False, self.token)),
        ]
        return steps

    def step(self, stream: int, steps: list[tuple[str, tuple[Any, ...]]]) -> None:
        for op, args in steps:
            size, executor = getattr(acl, f"aclnn{op}GetWorkspaceSize")(*args)
            getattr(acl, f"aclnn{op}")(None, size, executor, stream)

    def read_logits(self) -> np.ndarray:
        got = np.empty((B, VOCAB), np.float16)
        acl.aclrtMemcpy(got, got.nbytes, self.logits_ptr, got.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        return got

    def free(self) -> None:
        for ptr in self.ptrs:
            acl.aclrtFree(ptr)


def llama_row(bench: Bench) -> Row:
    """The step eager vs captured and replayed (reported, no goal). Each step starts from the same state: the
    residual stream `x` is reset by a copy first (in both), so every step computes the same logits."""
    model = Model()
    stream = acl.aclrtCreateStream()
    steps = model.launches()
    start = np.random.default_rng(3).standard_normal((B, H)).astype(np.float16)

    def reset() -> None:
        acl.aclrtMemcpyAsync(
            model.x_ptr, start.nbytes, start.tobytes(), start.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE, stream
        )

    acl.aclmdlRICaptureBegin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    model.step(stream, steps)
    model_ri = acl.aclmdlRICaptureEnd(stream)

    def eager() -> float:
        reset()
        acl.aclrtSynchronizeStream(stream)
        begin = time.perf_counter()
        model.step(stream, steps)
        acl.aclrtSynchronizeStream(stream)
        return time.perf_counter() - begin

    def replay() -> float:
        reset()
        acl.aclrtSynchronizeStream(stream)
        begin = time.perf_counter()
        acl.aclmdlRIExecuteAsync(model_ri, stream)
        acl.aclrtSynchronizeStream(stream)
        return time.perf_counter() - begin

    ours, theirs = interleave(bench.reps, replay, eager)
    replayed = model.read_logits()
    eager()
    if not np.array_equal(replayed, model.read_logits()) or not np.isfinite(replayed).all():
        raise RuntimeError("figure 14: the replayed LLaMA step's logits differ from the eager step's")
    acl.aclmdlRIDestroy(model_ri)
    acl.aclrtDestroyStream(stream)
    model.free()
    row = Row(
        "14",
        f"a 2-layer LLaMA-style decode step ({len(steps)} operator launches, fp16, paged FIA), captured and replayed",
        "s",
        ours,
        "the same step launched eagerly (phase 1 + launch each)",
        theirs,
        ratio=[b / a for a, b in zip(ours, theirs, strict=True)],
        ratio_meaning="faster than eager",
    )
    row.extra["launches"] = len(steps)
    return row
