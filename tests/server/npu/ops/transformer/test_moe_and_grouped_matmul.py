"""MoeGatingTopKSoftmax and GroupedMatmulV4/V5 against float64 references."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops.common import int4
from server.npu.ops.transformer import grouped_matmul as gmm
from server.npu.ops.transformer import moe
from tests.server.npu.ops.common.refkit import assert_rounded, call_with

BF16 = np.dtype(ml_dtypes.bfloat16)


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float16) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


def test_moe_gating_top_k_softmax() -> None:
    rng = np.random.default_rng(1)
    x = rand(rng, (5, 8), BF16)
    finished = np.array([False, True, False, False, False])
    y, experts, rows = np.zeros((5, 3), BF16), np.zeros((5, 3), np.int32), np.zeros((5, 3), np.int32)
    moe.moe_gating_top_k_softmax(x, finished, 3, y, experts, rows, None)
    for i in range(5):
        probs = np.exp(f64(x[i]) - f64(x[i]).max())
        probs /= probs.sum()
        ranked = [int(e) for e in np.lexsort((np.arange(8), -probs))[:3]]
        assert_rounded(y[i], probs[ranked])
        assert experts[i].tolist() == ([8, 8, 8] if finished[i] else ranked)
        assert rows[i].tolist() == [j * 5 + i for j in range(3)]
    with pytest.raises(AclError) as caught:
        moe.moe_gating_top_k_softmax(x, None, 9, y, experts, rows, None)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID and caught.value.message.startswith("k:")


def v4(**given: Any) -> None:
    call_with(gmm.grouped_matmul_v4, **{"splitItem": 3, "groupType": 0, "groupListType": 0, "actType": 0, **given})


@pytest.mark.parametrize(("list_type", "group_list"), [(0, [2, 2, 7]), (1, [2, 0, 5]), (2, [[0, 2], [1, 0], [2, 5]])])
def test_grouped_matmul_m_axis_single_tensors(list_type: int, group_list: list[Any]) -> None:
    rng = np.random.default_rng(2)
    x, w, bias = rand(rng, (8, 16)), rand(rng, (3, 16, 4)), rand(rng, (3, 4))
    out = np.full((8, 4), 9, np.float16)
    v4(
        x=[x],
        weight=[w],
        biasOptional=[bias],
        groupListOptional=np.array(group_list),
        groupListType=list_type,
        out=[out],
    )
    bounds = [0, 2, 2, 7]
    for e in range(3):
        rows = slice(bounds[e], bounds[e + 1])
        assert_rounded(out[rows], f64(x[rows]) @ f64(w[e]) + f64(bias[e]), atol=1e-5)
    assert (out[7] == 9).all()  # a row past the groups is left as it was


def test_grouped_matmul_multi_tensors_and_k_axis() -> None:
    rng = np.random.default_rng(3)
    xs, ws = [rand(rng, (3, 8)), rand(rng, (5, 6))], [rand(rng, (8, 4)), rand(rng, (6, 2))]
    outs = [np.zeros((3, 4), np.float16), np.zeros((5, 2), np.float16)]
    v4(x=xs, weight=ws, groupType=-1, splitItem=0, out=outs)
    for xi, wi, oi in zip(xs, ws, outs, strict=True):
        assert_rounded(oi, f64(xi) @ f64(wi), atol=1e-5)
    x, w = rand(rng, (4, 10)), rand(rng, (10, 3))
    out = np.zeros((2, 4, 3), np.float16)
    v4(x=[x], weight=[w], groupType=2, groupListOptional=np.array([6, 4]), groupListType=1, out=[out])
    assert_rounded(out[0], f64(x[:, :6]) @ f64(w[:6]), atol=1e-5)
    assert_rounded(out[1], f64(x[:, 6:]) @ f64(w[6:]), atol=1e-5)


def test_grouped_matmul_quant_and_antiquant() -> None:
    rng = np.random.default_rng(4)
    x8, w8 = rng.integers(-128, 128, (6, 32)).astype(np.int8), rng.integers(-128, 128, (2, 32, 4)).astype(np.int8)
    scale, per_token = (rng.random((2, 4)) * 1e-3).astype(np.float32), (rng.random(6) + 0.5).astype(np.float32)
    bias = rng.integers(-50, 50, (2, 4)).astype(np.int32)
    out = np.zeros((6, 4), BF16)
    v4(x=[x8], weight=[w8], biasOptional=[bias], scaleOptional=[scale], perTokenScaleOptional=[per_token],
       groupListOptional=np.array([4, 6]), out=[out])  # fmt: skip
    for e, rows in enumerate((slice(0, 4), slice(4, 6))):
        expected = (f64(x8[rows]) @ f64(w8[e]) + bias[e]) * f64(scale[e]) * f64(per_token[rows])[:, None]
        assert_rounded(out[rows], expected, atol=1e-6)
    x = rand(rng, (5, 32))
    w4 = rng.integers(-8, 8, (2, 32, 8)).astype(np.int8)
    aq_scale, aq_offset = (rng.random((2, 2, 8)) * 0.1).astype(np.float16), rand(rng, (2, 2, 8))  # 2 groups of 16
    out16 = np.zeros((5, 8), np.float16)
    v4(x=[x], weight=[w4.astype(int4.INT4)], antiquantScaleOptional=[aq_scale], antiquantOffsetOptional=[aq_offset],
       groupListOptional=np.array([1, 4]), groupListType=1, out=[out16])  # fmt: skip
    for e, rows in enumerate((slice(0, 1), slice(1, 5))):
        offset16, scale16 = (np.repeat(f64(p[e]), 16, axis=0) for p in (aq_offset, aq_scale))
        dequantized = ((f64(w4[e]) + offset16) * scale16).astype(np.float16)
        assert_rounded(out16[rows], f64(x[rows]) @ f64(dequantized), atol=1e-4)
    for argument, change in (("actType", {"actType": 1}), ("groupListOptional", {"groupListOptional": None}),
                             ("groupListOptional", {"groupListOptional": np.array([4, 7])})):  # fmt: skip
        with pytest.raises(AclError) as caught:
            v4(**{"x": [x8], "weight": [w8], "groupListOptional": np.array([4, 6]), "out": [out], **change})
        assert caught.value.message.startswith(f"{argument}:")
    out_v5 = np.zeros((6, 4), np.int32)
    call_with(gmm.grouped_matmul_v5, x=[x8], weight=[w8], groupListOptional=np.array([4, 6]), splitItem=2,
              groupType=0, groupListType=0, actType=0, out=[out_v5])  # fmt: skip
    assert (out_v5[:4] == x8[:4].astype(np.int64) @ w8[0].astype(np.int64)).all()
