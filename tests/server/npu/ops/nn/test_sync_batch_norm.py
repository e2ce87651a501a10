"""SyncBatchNormGatherStats: phase 1's codes and messages (ops-nn norm/sync_batch_norm_gather_stats's op_api
checks, in their order), and the kernel's edges the case rows do not reach (no samples, no channels)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from aclnn_testkit import FakeMemory

import proto.aclnn as nn
from proto.constants import aclDataType as DT
from proto.constants import aclFormat
from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclError
from server.npu.ops.nn import norm

NAMES = ("totalSum", "totalSquareSum", "sampleCount", "mean", "variance", "batchMean", "batchInvstd")
SHAPES = {"totalSum": (2, 3), "totalSquareSum": (2, 3), "sampleCount": (2,)}


def _launch(memory: FakeMemory, change: dict[str, Any]) -> int:
    """Phase 1 and the launch over [2, 3] statistics (FLOAT, INT32 counts), with `change` applied: a name -> a
    dtype, a shape, None (NULL) or "nz" (the FRACTAL_NZ format)."""
    given: dict[str, Any] = {}
    for name in NAMES:
        dtype = DT.ACL_INT32 if name == "sampleCount" else DT.ACL_FLOAT
        shape = SHAPES.get(name, (3,))
        wanted = change.get(name, dtype)
        if isinstance(wanted, tuple):
            shape = wanted
        elif isinstance(wanted, DT):
            dtype = wanted
        t = memory.tensor(np.ones(shape), dtype)
        if wanted == "nz":
            t = nn.aclCreateTensor(t.view_dims, dtype, t.strides, 0, aclFormat.ACL_FORMAT_FRACTAL_NZ, t.storage_dims,
                                   t.data)  # fmt: skip
        given[name] = None if name in change and change[name] is None else t
    args = [given[name] for name in NAMES[:5]] + [0.1, 1e-5] + [given[name] for name in NAMES[5:]]
    return memory.launch(nn.aclnnSyncBatchNormGatherStatsGetWorkspaceSize, *args)


@pytest.mark.parametrize(
    ("change", "code", "words"),
    [
        ({"mean": None}, ACLNN_ERR_PARAM_NULLPTR, "mean"),
        ({"batchInvstd": None}, ACLNN_ERR_PARAM_NULLPTR, "batchInvstd"),
        ({"totalSum": DT.ACL_BF16}, ACLNN_ERR_PARAM_INVALID, "totalSum has dtype ACL_BF16"),  # 950 only
        ({"sampleCount": DT.ACL_INT64}, ACLNN_ERR_PARAM_INVALID, "sampleCount has dtype ACL_INT64"),
        ({"variance": DT.ACL_FLOAT16}, ACLNN_ERR_PARAM_INVALID, "variance has dtype ACL_FLOAT16; it must have t"),
        ({"batchInvstd": DT.ACL_FLOAT16}, ACLNN_ERR_PARAM_INVALID, "batchInvstd has dtype ACL_FLOAT16; it must have b"),
        ({"mean": "nz"}, ACLNN_ERR_PARAM_INVALID, "mean has format ACL_FORMAT_FRACTAL_NZ"),
        ({"totalSum": (6,)}, ACLNN_ERR_PARAM_INVALID, "totalSum has 1 dims"),
        ({"sampleCount": (3,)}, ACLNN_ERR_PARAM_INVALID, "sampleCount has shape [3]; it must be [2]"),
        ({"totalSquareSum": (2, 4)}, ACLNN_ERR_PARAM_INVALID, "totalSquareSum has shape [2, 4]"),
        ({"batchMean": (4,)}, ACLNN_ERR_PARAM_INVALID, "batchMean has shape [4]; it must be [3]"),
        ({"totalSum": (0, 3), "totalSquareSum": (0, 3), "sampleCount": (0,)}, ACLNN_ERR_PARAM_INVALID,
         "totalSum has shape [0, 3]; its first axis must be > 0"),
    ],
)  # fmt: skip
def test_phase1_refuses_what_the_op_api_refuses(change: dict[str, Any], code: int, words: str) -> None:
    with pytest.raises(AclError) as caught:
        _launch(FakeMemory(np.random.default_rng(1)), change)
    assert caught.value.code == code and words in caught.value.message
    assert caught.value.message.startswith("aclnnSyncBatchNormGatherStats")


def test_phase1_takes_the_documented_combinations() -> None:
    memory = FakeMemory(np.random.default_rng(2))
    half = dict.fromkeys(("totalSum", "totalSquareSum", "mean", "variance"), DT.ACL_FLOAT16)
    for change in ({}, {"sampleCount": DT.ACL_FLOAT}, {"sampleCount": DT.ACL_FLOAT16}, half,
                   half | {"batchMean": DT.ACL_FLOAT16, "batchInvstd": DT.ACL_FLOAT16}):  # fmt: skip
        assert _launch(memory, change) == 0
    shapes = {"mean": (0,), "variance": (0,), "batchMean": (0,), "batchInvstd": (0,)}
    assert _launch(memory, {"totalSum": (2, 0), "totalSquareSum": (2, 0)} | shapes) == 0  # no channel: nothing


def test_no_samples_and_one_sample() -> None:
    """A count of 0: reciprocal 0 (batchMean 0, batchInvstd 1 / sqrt(eps), the running variance decays); a count of
    1: the biased variance, not a division by 0 (the Atlas A2 kernel's guards)."""
    total, square = np.array([[2.0, -1.0]], np.float32), np.array([[5.0, 3.0]], np.float32)
    for count in (0, 1):
        mean, var = np.array([0.5, -0.5], np.float32), np.array([2.0, 4.0], np.float32)
        out_mean, out_invstd = np.zeros(2, np.float32), np.zeros(2, np.float32)
        norm.sync_batch_norm_gather_stats(
            total, square, np.array([count], np.int32), mean, var, 0.25, 1e-4, out_mean, out_invstd, None
        )
        batch_mean = total[0].astype(np.float64) * count
        batch_var = square[0].astype(np.float64) * count - batch_mean**2
        np.testing.assert_allclose(out_mean, batch_mean, rtol=1e-6)
        np.testing.assert_allclose(out_invstd, 1 / np.sqrt(batch_var + 1e-4), rtol=1e-6)
        np.testing.assert_allclose(mean, [0.5 * 0.75, -0.5 * 0.75] + 0.25 * batch_mean, rtol=1e-6)
        np.testing.assert_allclose(var, np.array([2.0, 4.0]) * 0.75 + 0.25 * batch_var, rtol=1e-6)
