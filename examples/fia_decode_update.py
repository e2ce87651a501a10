"""vllm-ascend's decode step on a virtual NPU: paged attention (aclnnFusedInferAttentionScoreV4) captured once in a
task group, its sequence lengths updated in place every step.

    capture:  wait(event), reset(event), [task group: FIA V4(q, paged K/V cache, block table, lengths)]
    per step: UpdateBegin(update stream); FIA V4 with this step's lengths; UpdateEnd; record(event)
              execute the model on the main stream

The model's first task waits on an EXTERNAL event that only the update stream records, so a replay never runs
attention with the previous step's lengths (the update is applied atomically, before the record). Ten steps, the
sequences growing by one token each; every step's output is checked against a float64 reference. Runs on an
in-process device unless VNPU_ENDPOINT names a daemon:

    python examples/fia_decode_update.py
    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/fia_decode_update.py
"""

# ruff: noqa: F403, F405
# (the C names come from the star import, as from acl/acl.h and aclnnop/aclnn_fused_infer_attention_score_v4.h)

from __future__ import annotations

import os
import sys

import ml_dtypes
import numpy as np

os.environ.setdefault("VNPU_ENDPOINT", "embedded")

from client.acl import *

BATCH, HEADS, KV_HEADS, HEAD_DIM = 4, 8, 2, 64
BLOCK, BLOCKS_PER_SEQ = 16, 4
STEPS = 10
SCALE = 1 / np.sqrt(HEAD_DIM)
OPTIONAL = 26  # FIA V4's optional tensors and arrays between value and numHeads


def device_array(values: np.ndarray, dtype: int) -> tuple[int, object]:
    """Device memory holding `values` (C order) and a tensor over it: (pointer, aclTensor)."""
    ptr = aclrtMalloc(values.nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    aclrtMemcpy(ptr, values.nbytes, values.tobytes(), values.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
    shape = list(values.shape)
    strides = [int(np.prod(shape[i + 1 :])) for i in range(len(shape))]
    return ptr, aclCreateTensor(shape, dtype, strides, 0, ACL_FORMAT_ND, shape, ptr)


def attention_v4(query, cache_k, cache_v, table, lengths, out):  # type: ignore[no-untyped-def]
    """Phase 1 of FIA V4 for a paged BSH decode: (workspaceSize, executor)."""
    optional: list[object] = [None] * OPTIONAL
    optional[3] = aclCreateIntArray(lengths)  # actualSeqLengthsKvOptional: host memory, captured with the launch
    optional[11] = table  # blockTableOptional: a device tensor
    return aclnnFusedInferAttentionScoreV4GetWorkspaceSize(
        query, aclCreateTensorList([cache_k]), aclCreateTensorList([cache_v]), *optional,
        HEADS, SCALE, 2147483647, 2147483647, "BSH", KV_HEADS, 0, 0, BLOCK, 0, False, 0, 0, 0,  # ...queryQuantMode
        out, None,  # attentionOut, softmaxLse
    )  # fmt: skip


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, table: np.ndarray, lengths: list[int]) -> np.ndarray:
    """float64 attention of each sequence's query over its first lengths[b] cached tokens (GQA)."""
    out = np.zeros((BATCH, 1, HEADS * HEAD_DIM))
    for b, length in enumerate(lengths):
        keys = np.concatenate([k[block] for block in table[b]])[:length].reshape(length, KV_HEADS, HEAD_DIM)
        values = np.concatenate([v[block] for block in table[b]])[:length].reshape(length, KV_HEADS, HEAD_DIM)
        for h in range(HEADS):
            g = h // (HEADS // KV_HEADS)
            scores = SCALE * keys[:, g].astype(np.float64) @ q[b, 0, h * HEAD_DIM : (h + 1) * HEAD_DIM]
            weights = np.exp(scores - scores.max())
            out[b, 0, h * HEAD_DIM : (h + 1) * HEAD_DIM] = weights / weights.sum() @ values[:, g]
    return out


def main() -> int:
    rng = np.random.default_rng(2026)
    bf16 = np.dtype(ml_dtypes.bfloat16)
    aclInit(None)
    aclrtSetDevice(0)
    blocks = BATCH * BLOCKS_PER_SEQ
    q_host = rng.standard_normal((BATCH, 1, HEADS * HEAD_DIM)).astype(bf16)
    k_host = rng.standard_normal((blocks, BLOCK, KV_HEADS * HEAD_DIM)).astype(bf16)
    v_host = rng.standard_normal((blocks, BLOCK, KV_HEADS * HEAD_DIM)).astype(bf16)
    table_host = rng.permutation(blocks).reshape(BATCH, BLOCKS_PER_SEQ).astype(np.int32)  # a shuffled paged cache
    _, query = device_array(q_host, ACL_BF16)
    _, cache_k = device_array(k_host, ACL_BF16)
    _, cache_v = device_array(v_host, ACL_BF16)
    _, table = device_array(table_host, ACL_INT32)
    out_d, out = device_array(np.zeros(q_host.shape, bf16), ACL_BF16)
    lengths = [5, 17, 1, 30]

    stream, update_stream = aclrtCreateStream(), aclrtCreateStream()
    event = aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    size, executor = attention_v4(query, cache_k, cache_v, table, lengths, out)
    workspace = aclrtMalloc(size, ACL_MEM_MALLOC_HUGE_FIRST) if size else None
    aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    aclrtStreamWaitEvent(stream, event)
    aclrtResetEvent(event, stream)
    aclmdlRICaptureTaskGrpBegin(stream)
    aclnnFusedInferAttentionScoreV4(workspace, size, executor, stream)
    group = aclmdlRICaptureTaskGrpEnd(stream)
    model = aclmdlRICaptureEnd(stream)

    failures = 0
    for step in range(STEPS):
        lengths = [n + 1 for n in lengths]  # one more token per sequence (its K/V already in the cache)
        size, executor = attention_v4(query, cache_k, cache_v, table, lengths, out)
        aclmdlRICaptureTaskUpdateBegin(update_stream, group)
        aclnnFusedInferAttentionScoreV4(workspace, size, executor, update_stream)
        aclmdlRICaptureTaskUpdateEnd(update_stream)
        aclrtRecordEvent(event, update_stream)
        aclmdlRIExecuteAsync(model, stream)
        aclrtSynchronizeStream(stream)
        raw = np.empty(q_host.shape, np.uint16)  # bfloat16's bits (a buffer of ml_dtypes' type is not exported)
        aclrtMemcpy(raw, raw.nbytes, out_d, raw.nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
        got = raw.view(bf16)
        want = reference(q_host.astype(np.float64), k_host, v_host, table_host, lengths)
        error = float(np.abs(got.astype(np.float64) - want).max())
        if error <= 1e-2:
            print(f"[INFO] step {step} matches float64 (lengths {lengths}, max |error| {error:.1e})")
        else:
            print(f"[ERROR] step {step}: lengths {lengths}, max |error| {error}", file=sys.stderr)
            failures += 1
    aclmdlRIDestroy(model)
    aclrtDestroyStream(stream)
    aclrtDestroyStream(update_stream)
    aclrtResetDevice(0)
    aclFinalize()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
