"""Mm, Addmm, BatchMatMul, DynamicQuant(V2), QuantMatmulV4/V5, WeightQuantBatchMatmulV2 against float64 references."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from aclnn_testkit import FakeMemory

import proto.aclnn as nn
from proto.constants import aclDataType as DT
from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclError
from server.npu.ops.common import int4
from server.npu.ops.common.quant import pack_dequant_scale
from server.npu.ops.nn import matmul, quant, quant_matmul
from tests.server.npu.ops.common.refkit import assert_rounded

BF16 = np.dtype(ml_dtypes.bfloat16)


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float16) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.einsum("...ik,...kj->...ij", f64(a), f64(b))
    return result


@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32])
def test_mm_addmm_bmm(dtype: Any) -> None:
    rng = np.random.default_rng(1)
    a, b, c = rand(rng, (5, 33), dtype), rand(rng, (33, 7), dtype), rand(rng, (7,), dtype)
    out = np.zeros((5, 7), dtype)
    matmul.mm(a, b, out, 0, None)
    assert_rounded(out, product(a, b), atol=1e-5)
    matmul.addmm(c, a, b, 0.5, 2.0, out, 1, None)
    assert_rounded(out, 0.5 * f64(c) + 2 * product(a, b), atol=1e-5)
    nan_self = np.full((5, 7), np.nan, dtype)
    matmul.addmm(nan_self, a, b, 0, 1, out, 0, None)  # beta 0: self is ignored
    assert_rounded(out, product(a, b), atol=1e-5)
    x, y = rand(rng, (3, 4, 9), dtype), rand(rng, (3, 9, 2), dtype)
    bout = np.zeros((3, 4, 2), dtype)
    matmul.batch_mat_mul(x, y, bout, 0, None)
    assert_rounded(bout, product(x, y), atol=1e-5)
    if dtype == np.float32:
        matmul.mm(a, b, out, 2, None)  # USE_FP16: operands through float16
        assert_rounded(out, product(a.astype(np.float16), b.astype(np.float16)), atol=1e-5)
    with pytest.raises(AclError) as caught:
        matmul.mm(a, a, out, 0, None)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID and caught.value.message.startswith("mat2:")


def reference_quant(rows: np.ndarray, qmax: int, qmin: int, asymmetric: bool) -> tuple[np.ndarray, ...]:
    values, scales, offsets = np.zeros(rows.shape), np.zeros(rows.shape[0]), np.zeros(rows.shape[0])
    for i, row in enumerate(rows):
        if asymmetric:
            scales[i] = (row.max() - row.min()) / (qmax - qmin)
            offsets[i] = qmax - row.max() / scales[i]
            values[i] = np.clip(np.rint(row / scales[i] + offsets[i]), qmin, qmax)
        else:
            scales[i] = np.abs(row).max() / qmax
            values[i] = np.clip(np.rint(row / scales[i]), qmin, qmax)
    return values, scales, offsets


def assert_quantized(got: np.ndarray, expected: np.ndarray) -> None:
    """Equal but for rare ties at .5 that float32 arithmetic rounds the other way."""
    diff = np.abs(got.astype(np.int64) - expected.astype(np.int64))
    assert diff.max() <= 1 and (diff > 0).mean() < 0.01


@pytest.mark.parametrize("out_dtype", [np.int8, int4.INT4, np.int32])
def test_dynamic_quant(out_dtype: Any) -> None:
    rng = np.random.default_rng(2)
    x, smooth = rand(rng, (6, 32), BF16), (rng.random(32) + 0.5).astype(BF16)
    x[2] = 0  # a zero row: scale 0, values 0
    qmax, qmin = (127, -128) if out_dtype == np.int8 else (7, -8)
    y = np.zeros((6, 4) if out_dtype == np.int32 else (6, 32), out_dtype)
    scale = np.zeros(6, np.float32)
    quant.dynamic_quant(x, smooth, y, scale, None)
    with np.errstate(invalid="ignore", divide="ignore"):
        values, scales, _ = reference_quant(f64(x) * f64(smooth), qmax, qmin, False)
    values[2] = 0
    got = int4.unpack(y) if out_dtype != np.int8 else y
    assert_quantized(got, values)
    assert_rounded(scale, scales)


def test_dynamic_quant_v2_asymmetric_grouped() -> None:
    rng = np.random.default_rng(3)
    x = rand(rng, (7, 16))
    smooth = (rng.random((2, 16)) + 0.5).astype(np.float16)
    groups = np.array([3, 7], np.int64)  # rows 0-2 expert 0, rows 3-6 expert 1
    y, scale, offset = np.zeros((7, 16), np.int8), np.zeros(7, np.float32), np.zeros(7, np.float32)
    quant.dynamic_quant_v2(x, smooth, groups, 2, y, scale, offset, None)
    smoothed = f64(x) * np.where(np.arange(7)[:, None] < 3, f64(smooth[0]), f64(smooth[1]))
    values, scales, offsets = reference_quant(smoothed, 127, -128, True)
    assert_quantized(y, values)
    assert_rounded(scale, scales)
    assert_rounded(offset, offsets, atol=1e-4)
    with pytest.raises(AclError) as caught:
        quant.dynamic_quant_v2(x, smooth, groups, 29, y, scale, offset, None)
    assert caught.value.message.startswith("dstType:")


@pytest.mark.parametrize(
    ("ends", "experts"),
    [
        ([2, 4, 358554848, 32529], [0, 0, 1, 1]),  # CANN's example: values past the rows are never read
        ([2, 1, 4, -7], [0, 0, 2, 2]),  # a smaller count is skipped, as the device's forward scan skips it
        ([-1, 0, 3, 4], [2, 2, 2, 3]),  # groups that cover no row
    ],
)
def test_dynamic_quant_v2_group_index_as_the_device_scans_it(ends: list[int], experts: list[int]) -> None:
    """Row r (1-based) takes the first expert, from the previous row's on, whose count reaches r (the kernel's
    forward scan, ops-nn quant/dynamic_quant/op_kernel/dynamic_quant_moe.h): a group index that is not sorted
    cumulative counts is not refused -- the device reads it the same way."""
    rng = np.random.default_rng(5)
    x = rand(rng, (4, 16))
    smooth = (rng.random((4, 16)) + 0.5).astype(np.float16)
    y, scale = np.zeros((4, 16), np.int8), np.zeros(4, np.float32)
    quant.dynamic_quant_v2(x, smooth, np.array(ends, np.int32), 2, y, scale, None, None)
    values, scales, _ = reference_quant(f64(x) * f64(smooth[experts]), 127, -128, False)
    assert_quantized(y, values)
    assert_rounded(scale, scales)


def int8(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-128, 128, shape).astype(np.int8)


@pytest.mark.parametrize("packed", [False, True])
def test_quant_matmul_v4(packed: bool) -> None:
    rng = np.random.default_rng(4)
    x1, x2 = int8(rng, (5, 64)), int8(rng, (48, 64))  # x2 given transposed (n, k)
    scale = (rng.random(48) * 1e-3).astype(np.float32)
    pertoken = (rng.random(5) + 0.5).astype(np.float32)
    bias = rng.integers(-1000, 1000, 48).astype(np.int32)
    acc = f64(x1) @ f64(x2).T
    out = np.zeros((5, 48), BF16)
    given = pack_dequant_scale(scale) if packed else scale
    quant_matmul.quant_matmul_v4(x1, x2, given, None, pertoken, bias, False, True, out, None)
    truncated = (scale.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32) if packed else scale
    assert_rounded(out, (acc + bias) * f64(truncated) * f64(pertoken)[:, None], atol=1e-6)
    out8 = np.zeros((5, 48), np.int8)
    offset = rand(rng, (48,), np.float32) * 5
    quant_matmul.quant_matmul_v4(x1, x2, scale * 10, offset, None, bias, False, True, out8, None)
    assert_quantized(out8, np.clip(np.rint((acc + bias) * f64(scale * 10) + f64(offset)), -128, 127))
    out32 = np.zeros((5, 48), np.int32)
    quant_matmul.quant_matmul_v4(x1, x2, scale, None, None, None, False, True, out32, None)
    assert (out32 == acc).all()


def test_quant_matmul_v5_and_int4_operands() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.integers(-8, 8, (4, 16)).astype(np.int8), rng.integers(-8, 8, (16, 8)).astype(np.int8)
    x2_scale, x1_scale = (rng.random(8) * 0.1).astype(np.float32), (rng.random(4) + 0.5).astype(np.float32)
    fbias = rand(rng, (8,), np.float32)
    out = np.zeros((4, 8), np.float16)
    quant_matmul.quant_matmul_v5(
        int4.pack(a, np.int32), int4.pack(b, np.int32), x1_scale, x2_scale, None, None, None, None, fbias, False,
        False, 0, out, None,
    )  # fmt: skip
    assert_rounded(out, (f64(a) @ f64(b)) * f64(x2_scale) * f64(x1_scale)[:, None] + f64(fbias), atol=1e-5)
    with pytest.raises(AclError) as caught:
        quant_matmul.quant_matmul_v5(a, b, None, x2_scale, None, None, None, None, None, False, False, 32, out, None)
    assert caught.value.message.startswith("groupSize:")


@pytest.mark.parametrize("group", [0, 32])
@pytest.mark.parametrize("weight_kind", ["int8", "int4", "int32"])
def test_weight_quant_batch_matmul_v2(group: int, weight_kind: str) -> None:
    rng = np.random.default_rng(6)
    k, n = 96, 16
    x = rand(rng, (3, k))
    low, high = (-128, 128) if weight_kind == "int8" else (-8, 8)
    w = rng.integers(low, high, (k, n)).astype(np.int8)
    weight = {"int8": w, "int4": w.astype(int4.INT4), "int32": int4.pack(w, np.int32)}[weight_kind]
    rows = 1 if group == 0 else k // group
    scale = (rng.random((rows, n)) * 0.05).astype(np.float16).reshape((n,) if group == 0 else (rows, n))
    offset = rand(rng, scale.shape)
    bias = rand(rng, (n,))
    y = np.zeros((3, n), np.float16)
    quant_matmul.weight_quant_batch_matmul_v2(x, weight, scale, offset, None, None, bias, group, y, None)

    def expanded(p: np.ndarray) -> np.ndarray:
        return np.repeat(f64(p).reshape(rows, n), k // rows, axis=0)

    dequantized = ((f64(w) + expanded(offset)) * expanded(scale)).astype(np.float16)  # the cube's fp16 operand
    assert_rounded(y, f64(x) @ f64(dequantized) + f64(bias), atol=1e-4)
    qscale, qoffset = (rng.random(n) * 5).astype(np.float32), rand(rng, (n,), np.float32)
    y8 = np.zeros((3, n), np.int8)
    quant_matmul.weight_quant_batch_matmul_v2(
        x, weight, scale, offset, pack_dequant_scale(qscale), qoffset, bias, group, y8, None
    )
    truncated = f64((qscale.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32))
    expected = np.clip(np.rint((f64(x) @ f64(dequantized) + f64(bias)) * truncated + f64(qoffset)), -128, 127)
    assert_quantized(y8, expected)


GB = 1 << 32 | 128 << 16 | 128  # QuantMatmulV5's G-B groupSize, [gsM, gsN, gsK] = [1, 128, 128]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({}, ""),
        ({"groupSize": 0}, ""),  # inferred from the scales' shapes
        ({"groupSize": 1 << 32 | 64 << 16 | 128}, "groupSize [gsM, gsN, gsK] is [1, 64, 128]"),
        ({"x2": (512, 256), "transposeX2": False}, "the G-B mode takes transposeX1 false and transposeX2 true"),
        ({"x2Scale": (4, 2)}, "x2Scale"),
        ({"out": DT.ACL_FLOAT16}, "out"),
        ({"yOffset": True}, "x2 has dtype ACL_INT8"),  # the K-G mode: INT32 weights
    ],
)
def test_quant_matmul_v5_per_group_modes_phase1(change: dict[str, Any], words: str) -> None:
    """Phase 1 of the G-B mode (x1 (m, k), x2 (n, k), x1Scale (m, k / 128), x2Scale (n / 128, k / 128)): accepted
    as its documentation gives it, 161002 naming what differs."""
    memory = FakeMemory(np.random.default_rng(3))
    rng = np.random.default_rng(4)
    ints = {"x1": (2, 512), "x2": change.pop("x2", (256, 512))}
    given = {
        name: memory.tensor(rng.integers(-5, 5, shape).astype(np.int8), DT.ACL_INT8) for name, shape in ints.items()
    }
    scales = {"x1Scale": (2, 4), "x2Scale": change.pop("x2Scale", (2, 4))}
    given |= {name: memory.tensor(np.full(shape, 0.01, np.float32), DT.ACL_FLOAT) for name, shape in scales.items()}
    y_offset = memory.tensor(np.zeros(256, np.float32), DT.ACL_FLOAT) if change.pop("yOffset", False) else None
    out = memory.empty((2, 256), change.pop("out", DT.ACL_BF16))
    flags = {"transposeX2": True, "groupSize": GB, **change}
    args = (given["x1"], given["x2"], given["x1Scale"], given["x2Scale"], None, None, None, y_offset, None, False)
    if not words:
        assert (
            memory.launch(nn.aclnnQuantMatmulV5GetWorkspaceSize, *args, flags["transposeX2"], flags["groupSize"], out)
            >= 0
        )
        return
    with pytest.raises(AclError) as caught:
        memory.launch(nn.aclnnQuantMatmulV5GetWorkspaceSize, *args, flags["transposeX2"], flags["groupSize"], out)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID and words in caught.value.message


@pytest.mark.parametrize(("mode", "missing"), [("G-B", "x1Scale"), ("G-B", "x2Scale"), ("K-G", "x1Scale")])
def test_quant_matmul_v5_per_group_modes_name_a_null_scale(mode: str, missing: str) -> None:
    """A NULL scale in the G-B mode (groupSize given) or the K-G mode (yOffset given) is 161001 naming it -- the
    rule raised a Python TypeError there, which phase 1 returned as no aclnn status at all."""
    memory = FakeMemory(np.random.default_rng(3))
    k_g = mode == "K-G"
    x1 = memory.tensor(np.ones((2, 512), np.int8), DT.ACL_INT8)
    x2 = memory.tensor(
        np.ones((512, 2) if k_g else (256, 512), np.int32 if k_g else np.int8), DT.ACL_INT32 if k_g else DT.ACL_INT8
    )
    scales = {"x1Scale": memory.tensor(np.full((2, 1) if k_g else (2, 4), 0.01, np.float32), DT.ACL_FLOAT),
              "x2Scale": memory.tensor(np.ones((2, 16) if k_g else (2, 4), np.float32), DT.ACL_FLOAT)}  # fmt: skip
    scales[missing] = None
    y_offset = memory.tensor(np.zeros(16, np.float32), DT.ACL_FLOAT) if k_g else None
    out = memory.empty((2, 16) if k_g else (2, 256), DT.ACL_FLOAT16 if k_g else DT.ACL_BF16)
    args = (x1, x2, scales["x1Scale"], scales["x2Scale"], None, None, None, y_offset, None, False, not k_g)
    with pytest.raises(AclError) as caught:
        memory.launch(nn.aclnnQuantMatmulV5GetWorkspaceSize, *args, 256 if k_g else GB, out)
    said = caught.value.message.removeprefix("aclnnQuantMatmulV5: ")
    assert caught.value.code == ACLNN_ERR_PARAM_NULLPTR and said.startswith(f"{missing} is "), said
    assert "NULL" in said or "null pointer" in said
