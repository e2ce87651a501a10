"""vllm-ascend's decode pattern from Python: a FusedInferAttentionScoreV4 launch captured in a task group with its
host-side arguments (actualSeqLengthsKv, the block table's pointer), updated each step on an update stream with
new sequence lengths, the replay gated by an EXTERNAL event the update stream records. Ten steps with growing
sequences, each checked against a float64 reference; lengths past the cache the block table addresses are refused
by phase 1."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import client.acl as acl
from client.config import EMBEDDED, Config
from client.embedded import EmbeddedDevice
from client.session import Session
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from tests.server.npu.ops.common.refkit import assert_rounded

BF16 = np.dtype(ml_dtypes.bfloat16)
B, N, KVN, D, BLOCK, PER_SEQ = 3, 8, 2, 32, 16, 3
SCALE = 0.125
INT_MAX = 2147483647


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> Iterator[Session]:
    monkeypatch.setenv("VNPU_MEMORY", "64MiB")
    made = Session(Config(endpoint=EMBEDDED))
    acl.use(made)
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    try:
        yield made
    finally:
        acl.use(None)
        made.close()
        device = EmbeddedDevice._instance
        if device is not None:
            device.close()


def upload(values: np.ndarray, dtype: int) -> tuple[int, Any]:
    ptr = acl.aclrtMalloc(values.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemcpy(ptr, values.nbytes, values.tobytes(), values.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    shape = list(values.shape)
    strides = [int(np.prod(shape[i + 1 :])) for i in range(len(shape))]
    return ptr, acl.aclCreateTensor(shape, dtype, strides, 0, acl.ACL_FORMAT_ND, shape, ptr)


def phase1(q: Any, k: Any, v: Any, table: Any, lengths: list[int], out: Any) -> tuple[int, Any]:
    optional: list[Any] = [None] * 26
    optional[3], optional[11] = acl.aclCreateIntArray(lengths), table  # actualSeqLengthsKv, blockTable
    return acl.aclnnFusedInferAttentionScoreV4GetWorkspaceSize(
        q, acl.aclCreateTensorList([k]), acl.aclCreateTensorList([v]), *optional,
        N, SCALE, INT_MAX, INT_MAX, "BNSD", KVN, 0, 0, BLOCK, 0, False, 0, 0, 0, out, None,
    )  # fmt: skip


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, table: np.ndarray, lengths: list[int]) -> np.ndarray:
    """[B, N, 1, D] float64 attention over each batch's first lengths[b] tokens of a BnNBsD paged cache."""
    out = np.zeros((B, N, 1, D))
    for b, length in enumerate(lengths):
        keys = np.concatenate([k[block] for block in table[b]], axis=1)[:, :length].astype(np.float64)
        values = np.concatenate([v[block] for block in table[b]], axis=1)[:, :length].astype(np.float64)
        for h in range(N):
            g = h // (N // KVN)
            scores = SCALE * keys[g] @ q[b, h, 0].astype(np.float64)
            weights = np.exp(scores - scores.max())
            out[b, h, 0] = weights / weights.sum() @ values[g]
    return out


def read(ptr: int, shape: tuple[int, ...]) -> np.ndarray:
    raw = np.empty(shape, np.uint16)
    acl.aclrtMemcpy(raw, raw.nbytes, ptr, raw.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return raw.view(BF16)


def test_the_decode_step_updated_in_place_for_ten_steps(session: Session) -> None:
    rng = np.random.default_rng(36)
    blocks = B * PER_SEQ
    q_host = rng.standard_normal((B, N, 1, D)).astype(BF16)
    k_host = rng.standard_normal((blocks, KVN, BLOCK, D)).astype(BF16)  # BnNBsD
    v_host = rng.standard_normal((blocks, KVN, BLOCK, D)).astype(BF16)
    table_host = rng.permutation(blocks).reshape(B, PER_SEQ).astype(np.int32)
    q_ptr, q = upload(q_host, acl.ACL_BF16)
    _, k = upload(k_host, acl.ACL_BF16)
    _, v = upload(v_host, acl.ACL_BF16)
    _, table = upload(table_host, acl.ACL_INT32)
    out_ptr, out = upload(np.zeros(q_host.shape, BF16), acl.ACL_BF16)
    stream, update_stream = acl.aclrtCreateStream(), acl.aclrtCreateStream()
    event = acl.aclrtCreateEventWithFlag(acl.ACL_EVENT_EXTERNAL)
    lengths = [3, 20, 1]
    size, executor = phase1(q, k, v, table, lengths, out)
    assert size == 0
    acl.aclmdlRICaptureBegin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    acl.aclrtStreamWaitEvent(stream, event)  # the EXTERNAL wait and its reset, captured before the group
    acl.aclrtResetEvent(event, stream)
    acl.aclmdlRICaptureTaskGrpBegin(stream)
    acl.aclnnFusedInferAttentionScoreV4(None, 0, executor, stream)
    group = acl.aclmdlRICaptureTaskGrpEnd(stream)
    model = acl.aclmdlRICaptureEnd(stream)
    for step in range(10):
        lengths = [n + 2 for n in lengths]  # growing sequences, up to 3 blocks of 16 = 48 tokens
        q_host = rng.standard_normal(q_host.shape).astype(BF16)  # this step's query, written before the replay
        acl.aclrtMemcpy(q_ptr, q_host.nbytes, q_host.view(np.uint16).tobytes(), q_host.nbytes, 1)
        size, executor = phase1(q, k, v, table, lengths, out)
        acl.aclmdlRICaptureTaskUpdateBegin(update_stream, group)
        acl.aclnnFusedInferAttentionScoreV4(None, size, executor, update_stream)
        acl.aclmdlRICaptureTaskUpdateEnd(update_stream)
        acl.aclrtRecordEvent(event, update_stream)
        acl.aclmdlRIExecuteAsync(model, stream)
        acl.aclrtSynchronizeStream(stream)
        want = reference(q_host, k_host, v_host, table_host, lengths)
        assert_rounded(read(out_ptr, q_host.shape), want, ulps=2, atol=1e-3), step
    # a sequence longer than the 3 blocks its block-table row addresses is refused before any launch
    with pytest.raises(AclError) as caught:
        phase1(q, k, v, table, [1, 49, 1], out)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID
    assert "actualSeqLengthsKvOptional[1] is 49; it must lie in [0, 48]" in caught.value.message
    acl.aclmdlRIDestroy(model)
    acl.aclrtDestroyStream(stream)
    acl.aclrtDestroyStream(update_stream)
