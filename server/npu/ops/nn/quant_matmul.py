"""Quantized matrix products (hicann/ops-nn matmul/): QuantMatmulV4, QuantMatmulV5 (W8A8), WeightQuantBatchMatmulV2
(W8A16/W4A16).

Integer products accumulate exactly (int64 here; the cube's int32 accumulator cannot overflow at the docs' sizes);
dequantization and everything after it is float32, rounded once into out (an INT8 out: half to even, saturated).
UINT64/INT64 scales are aclnnTransQuantParamV2's packed form (`server.npu.ops.common.quant`). int4 operands follow
vnpu's int4 convention (`server.npu.ops.common.int4`): an ml_dtypes.int4 array, or INT32 words packing eight
values along the tensor's last axis.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from server.npu.ops.common import int4
from server.npu.ops.common.errors import invalid, unsupported
from server.npu.ops.common.numeric import store, wide
from server.npu.ops.common.quant import dequant_scale, saturate

Array = np.ndarray


def _integers(x: Array) -> Array:
    """An int8 / int4 / INT32-packed-int4 operand as int64 values of its logical shape."""
    if x.dtype == np.int32 or x.dtype == int4.INT4:
        return int4.unpack(x).astype(np.int64)
    return x.astype(np.int64)


def _channels(op: str, name: str, values: Array, n: int) -> Array:
    if values.size not in (1, n):
        raise invalid(op, name, f"has {values.size} values; it needs 1 or n = {n}")
    return values.reshape(-1)


def _quant_matmul(
    op: str, names: tuple[str, str], x1: Array, x2: Array, scale: Array, offset: Array | None,
    pertoken: Array | None, bias: Array | None, transpose_x1: bool, transpose_x2: bool, out: Array,
) -> None:  # fmt: skip
    a, b = _integers(x1), _integers(x2)
    a = a.swapaxes(-1, -2) if transpose_x1 else a
    b = b.swapaxes(-1, -2) if transpose_x2 else b
    if a.shape[-1] != b.shape[-2]:
        raise invalid(op, "x2", f"shape {x2.shape} does not multiply x1 {x1.shape} (k differs)")
    acc = np.matmul(a, b)
    n = acc.shape[-1]
    integer_bias = bias is not None and bias.dtype == np.int32
    if integer_bias:
        assert bias is not None
        acc = acc + bias.astype(np.int64).reshape(*bias.shape[:-1], -1)
    if out.dtype == np.int32:
        out[...] = acc.astype(np.int32)
        return
    factor, packed_offset = dequant_scale(scale)
    result = acc.astype(np.float32) * _channels(op, names[0], factor, n)
    if pertoken is not None:
        result = result * wide(pertoken).reshape(-1, 1)
    if bias is not None and not integer_bias:
        result = result + wide(bias)
    shift = offset if offset is not None else packed_offset
    if shift is not None and out.dtype == np.int8:
        result = result + _channels(op, names[1], wide(shift), n)
    if out.dtype == np.int8:
        out[...] = saturate(result, np.int8)
    else:
        store(out, result)


def quant_matmul_v4(
    x1: Array, x2: Array, scale: Array, offset: Array | None, pertokenScaleOptional: Array | None,
    bias: Array | None, transposeX1: bool, transposeX2: bool, out: Array, workspace: Array | None,
) -> None:  # fmt: skip
    """out = (x1 @ x2 [+ int bias]) · scale [· pertokenScale] [+ float bias] [+ offset] (W8A8).

    Constraints (matmul/quant_batch_matmul_v3/docs/aclnnQuantMatmulV4.md): x1 INT8/INT32/INT4 (batch, m, k) or
    (batch, k, m) with transposeX1; x2 INT8/INT32/INT4 (batch, k, n) or (batch, n, k) with transposeX2 (ND; NZ is
    not handled here), 2-6-D, batch broadcasting; scale UINT64/INT64/FLOAT32/BFLOAT16 (1 or n); offset FLOAT32
    (1 or n), only with an INT8 out; pertokenScale FLOAT32 (m); bias INT32/BFLOAT16/FLOAT16/FLOAT32 (n) or
    (batch, 1, n) (a float bias excludes offset); out FLOAT16/INT8/BFLOAT16/INT32 (batch, m, n); an INT32 out is
    x1 @ x2 + bias unscaled.
    """
    _quant_matmul(
        "QuantMatmulV4", ("scale", "offset"), x1, x2, scale, offset, pertokenScaleOptional, bias, transposeX1,
        transposeX2, out,
    )  # fmt: skip


def quant_matmul_v5(
    x1: Array, x2: Array, x1Scale: Array | None, x2Scale: Array, yScale: Array | None, x1Offset: Array | None,
    x2Offset: Array | None, yOffset: Array | None, bias: Array | None, transposeX1: bool, transposeX2: bool,
    groupSize: int, out: Array, workspace: Array | None,
) -> None:  # fmt: skip
    """QuantMatmulV4's K-C/K-T and T-C/T-T modes: out = (x1 @ x2 [+ int bias]) · x2Scale [· x1Scale] [+ float bias]
    [+ x2Offset].

    Constraints (matmul/quant_batch_matmul_v4/docs/aclnnQuantMatmulV5.md, A2/A3): x1/x2 INT8 (INT4/INT32 for the
    K-G mode), 1-2-D on A2/A3; x2Scale UINT64/INT64/FLOAT32/BFLOAT16 (1 or n); x1Scale FLOAT32 (m) per token;
    x2Offset FLOAT32 with an INT8 out; bias INT32/BFLOAT16/FLOAT16/FLOAT32. vnpu refuses the G-B and K-G modes
    (groupSize ≠ 0, yScale, x1Offset, yOffset): 161002 naming the argument.
    """
    op = "QuantMatmulV5"
    for name, given in (("yScale", yScale), ("x1Offset", x1Offset)):
        if given is not None:
            raise unsupported(op, name, "the T-CG quantization mode")
    if yOffset is not None and x1Scale is not None:
        _k_group(x1, x2, x1Scale, x2Scale, yOffset, out)
        return
    if groupSize != 0 or (x1Scale is not None and min(x1Scale.ndim, x2Scale.ndim) >= 2):
        if x1Scale is None or min(x1Scale.ndim, x2Scale.ndim) < 2:
            raise unsupported(op, "groupSize", "groups other than the G-B mode's (2-D x1Scale, x2Scale)")
        _per_block(x1, x2, x1Scale, x2Scale, bias, transposeX1, transposeX2, groupSize, out)
        return
    _quant_matmul(op, ("x2Scale", "x2Offset"), x1, x2, x2Scale, x2Offset, x1Scale, bias, transposeX1, transposeX2, out)


def _k_group(x1: Array, x2: Array, x1Scale: Array, x2Scale: Array, yOffset: Array, out: Array) -> None:
    """The K-G mode with yOffset: out = (x1 @ (x2 · x2Scale) + yOffset) · x1Scale, x2's int4 values scaled per
    256-row group along k (x2Scale (k / 256, n), its packed UINT64 form's float)."""
    a, b = _integers(x1).astype(np.float64), _integers(x2).astype(np.float64)
    factor, _ = dequant_scale(x2Scale)
    weights = b * np.repeat(factor.astype(np.float64), 256, axis=0)[: b.shape[0]]
    store(out, (a @ weights + wide(yOffset).reshape(-1)) * wide(x1Scale).reshape(-1, 1))


def _per_block(
    x1: Array, x2: Array, x1Scale: Array, x2Scale: Array, bias: Array | None, transpose_x1: bool,
    transpose_x2: bool, group_size: int, out: Array,
) -> None:  # fmt: skip
    """The G-B mode: out[m, n] = sum over k-blocks j of (x1[m, block j] . x2[block j, n]) * x1Scale[m / gsM, j] *
    x2Scale[j, n / gsN] (+ bias[n]); a scale is laid out as its operand (x2Scale (n-blocks, k-blocks) with
    transposeX2); a group size of 0 is inferred from the shapes."""
    a, b = _integers(x1), _integers(x2)
    a, sa = (a.T, wide(x1Scale).T) if transpose_x1 else (a, wide(x1Scale))
    b, sb = (b.T, wide(x2Scale).T) if transpose_x2 else (b, wide(x2Scale))
    (m, k), n = a.shape, b.shape[1]
    given = [(group_size >> 32) & 0xFFFF, (group_size >> 16) & 0xFFFF, group_size & 0xFFFF]
    inferred = [-(-m // sa.shape[0]), -(-n // sb.shape[1]), -(-k // sa.shape[1])]
    gm, gn, gk = (g or i for g, i in zip(given, inferred, strict=True))
    rows, cols = sa[np.arange(m) // gm], sb[:, np.arange(n) // gn]  # (m, k-blocks), (k-blocks, n)
    result = np.zeros((m, n), np.float64)
    for j, start in enumerate(range(0, k, gk)):
        block = (a[:, start : start + gk] @ b[start : start + gk]).astype(np.float64)
        result += block * rows[:, j : j + 1] * cols[j : j + 1]
    if bias is not None:
        result += wide(bias).reshape(-1)
    store(out, result)


def _antiquant_param(op: str, name: str, values: Array, k: int, n: int, group: int) -> Array:
    """antiquantScale/Offset as an array broadcasting against the weight [k, n]."""
    v = wide(values) if values.dtype not in (np.uint64, np.int64) else dequant_scale(values)[0]
    if v.size == 1:
        return v.reshape(1, 1)
    if group == 0:
        if v.size != n:
            raise invalid(op, name, f"shape {values.shape}: per-channel needs n = {n} values")
        return v.reshape(1, n)
    groups = -(-k // group)
    if v.shape == (groups, n):
        table = v
    elif v.shape == (n, groups):
        table = v.T
    else:
        raise invalid(op, name, f"shape {values.shape}: per-group needs ({groups}, {n}) for groups of {group}")
    return np.repeat(table, group, axis=0)[:k]


def weight_quant_batch_matmul_v2(
    x: Array, weight: Array, antiquantScale: Array, antiquantOffsetOptional: Array | None,
    quantScaleOptional: Array | None, quantOffsetOptional: Array | None, biasOptional: Array | None,
    antiquantGroupSize: int, y: Array, workspace: Array | None,
) -> None:  # fmt: skip
    """y = x @ ((weight + antiquantOffset) · antiquantScale) + bias, then optionally quantized to INT8 with
    quantScale/quantOffset. The dequantized weight is rounded to x's dtype before the product (the cube unit's
    operand), the product accumulates in float32.

    Constraints (matmul/weight_quant_batch_matmul_v2/docs/aclnnWeightQuantBatchMatmulV2.md): x FLOAT16/BFLOAT16
    (m, k); weight INT8/INT4/INT32 (k, n) (INT32: eight int4 per word along the last axis); antiquantScale
    FLOAT16/BFLOAT16 (or UINT64/INT64 for INT8 weight) per-tensor (1), per-channel (n)/(1, n), per-group
    (ceil(k/g), n); antiquantOffset like the scale; antiquantGroupSize 0, or a multiple of 32 in [32, k - 1];
    quantScale UINT64 (TransQuantParam) and quantOffset FLOAT for an INT8 y; bias FLOAT16/FLOAT/BFLOAT16 (n);
    y FLOAT16/BFLOAT16/INT8 (m, n).
    """
    op = "WeightQuantBatchMatmulV2"
    w = _integers(weight).astype(np.float32)
    k, n = w.shape[-2], w.shape[-1]
    if x.shape[-1] != k:
        raise invalid(op, "weight", f"shape {weight.shape} does not multiply x {x.shape}")
    if antiquantGroupSize < 0 or (antiquantGroupSize and antiquantGroupSize >= k + 1):
        raise invalid(op, "antiquantGroupSize", f"is {antiquantGroupSize}; it must be 0 or in [32, k - 1]")
    group = antiquantGroupSize
    dequantized = w
    if antiquantOffsetOptional is not None:
        dequantized = dequantized + _antiquant_param(
            op, "antiquantOffsetOptional", antiquantOffsetOptional, k, n, group
        )
    dequantized = dequantized * _antiquant_param(op, "antiquantScale", antiquantScale, k, n, group)
    operand = dequantized.astype(x.dtype).astype(np.float32)
    result = np.matmul(wide(x), operand)
    if biasOptional is not None:
        result = result + wide(biasOptional)
    if quantScaleOptional is None:
        store(y, result)
        return
    factor, packed_offset = dequant_scale(quantScaleOptional)
    result = result * _channels(op, "quantScaleOptional", factor, n)
    shift = quantOffsetOptional if quantOffsetOptional is not None else packed_offset
    if shift is not None:
        result = result + _channels(op, "quantOffsetOptional", wide(shift), n)
    y[...] = saturate(result, np.int8)


FUNCTIONS: dict[str, Callable[..., None]] = {
    "QuantMatmulV4": quant_matmul_v4,
    "QuantMatmulV5": quant_matmul_v5,
    "WeightQuantBatchMatmulV2": weight_quant_batch_matmul_v2,
}
