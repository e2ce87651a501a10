"""Normalization kernels (hicann/ops-nn norm/): RmsNorm, AddRmsNorm, LayerNorm, LayerNormWithImplMode, GroupNorm,
SyncBatchNormGatherStats.

All statistics are computed in float32 (float64 for float64 input) over the trailing normalized axes and every
output is rounded once: y = x · rstd · gamma is not rounded between its factors, and AddRmsNorm normalizes the
float32 sum x1 + x2 (xOut is that sum rounded). rstd outputs are FLOAT32; LayerNorm's mean/rstd take the input's
dtype, as the docs say.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.numeric import accumulator, store, wide

Array = np.ndarray


def _trailing(op: str, name: str, x: Array, count: int) -> tuple[int, ...]:
    if not 0 < count <= x.ndim:
        raise invalid(op, name, f"normalizes {count} axes; the input has {x.ndim}")
    return tuple(range(x.ndim - count, x.ndim))


def _rms(op: str, x: Array, gamma: Array, epsilon: float) -> tuple[Array, Array]:
    """(y, rstd) for x already widened; gamma covers x's last gamma.ndim axes (rstd keeps them as 1s)."""
    axes = _trailing(op, "gamma", x, gamma.ndim)
    if x.shape[x.ndim - gamma.ndim :] != gamma.shape:
        raise invalid(op, "gamma", f"shape {gamma.shape} is not the last axes of {x.shape}")
    dtype = accumulator(x.dtype)
    rstd = 1.0 / np.sqrt(np.mean(np.square(x), axis=axes, keepdims=True, dtype=dtype) + dtype.type(epsilon))
    return x * rstd * wide(gamma), rstd


def rms_norm(
    x: Array, gamma: Array, epsilon: float, yOut: Array, rstdOut: Array | None, workspace: Array | None
) -> None:
    """yOut = x / sqrt(mean(x², normalized axes) + epsilon) · gamma; rstdOut = 1 / sqrt(mean(x²) + epsilon).

    Constraints (norm/rms_norm/docs/aclnnRmsNorm.md, op_host/rms_norm_def.cpp): x FLOAT32/FLOAT16/BFLOAT16, 1-8-D;
    gamma the last n axes of x (n < rank), dtype pairs (x, gamma) (fp16, fp32), (bf16, fp32), (fp16, fp16),
    (fp32, fp32), (bf16, bf16); yOut x's shape and dtype; rstdOut FLOAT32 with x's shape but 1 on the normalized
    axes; epsilon default 1e-6.
    """
    y, rstd = _rms("RmsNorm", wide(x), gamma, epsilon)
    store(yOut, y)
    if rstdOut is not None:
        store(rstdOut, rstd.reshape(rstdOut.shape))


def add_rms_norm(
    x1: Array, x2: Array, gamma: Array, epsilon: float, yOut: Array, rstdOut: Array | None, xOut: Array | None,
    workspace: Array | None,
) -> None:  # fmt: skip
    """xOut = x1 + x2; yOut = RmsNorm(x1 + x2) with gamma; rstdOut as RmsNorm's.

    Constraints (norm/add_rms_norm/docs/aclnnAddRmsNorm.md): x1, x2, gamma, yOut, xOut one dtype of FLOAT32/
    FLOAT16/BFLOAT16 (x1 and x2 of one shape, gamma the last axes of x1 or [1, x1's last axis]); rstdOut FLOAT32
    with 1 on the normalized axes; rstdOut and xOut may be null (fp16/bf16) as the doc's table allows.
    """
    total = wide(x1) + wide(x2)
    if gamma.ndim == 2 and gamma.shape[0] == 1 and total.shape[-1:] == gamma.shape[1:]:
        gamma = gamma[0]  # the [1, last axis] gamma of the doc's table
    y, rstd = _rms("AddRmsNorm", total, gamma, epsilon)
    store(yOut, y)
    if rstdOut is not None:
        store(rstdOut, rstd.reshape(rstdOut.shape))
    if xOut is not None:
        store(xOut, total)


def _layer_norm(
    op: str, x: Array, shape: Sequence[int], weight: Array | None, bias: Array | None, eps: float, out: Array,
    mean_out: Array | None, rstd_out: Array | None,
) -> None:  # fmt: skip
    axes = _trailing(op, "normalizedShape", x, len(shape))
    if tuple(x.shape[x.ndim - len(shape) :]) != tuple(shape):
        raise invalid(op, "normalizedShape", f"{tuple(shape)} is not the last axes of {x.shape}")
    v = wide(x)
    dtype = accumulator(v.dtype)
    mean = np.mean(v, axis=axes, keepdims=True, dtype=dtype)
    rstd = 1.0 / np.sqrt(np.mean(np.square(v - mean), axis=axes, keepdims=True, dtype=dtype) + dtype.type(eps))
    y = (v - mean) * rstd
    if weight is not None:
        y = y * wide(weight)
    if bias is not None:
        y = y + wide(bias)
    store(out, y)
    for target, values in ((mean_out, mean), (rstd_out, rstd)):
        if target is not None:
            store(target, values.reshape(target.shape))


def layer_norm(
    input: Array, normalizedShape: Sequence[int], weightOptional: Array | None, biasOptional: Array | None,
    eps: float, out: Array, meanOutOptional: Array | None, rstdOutOptional: Array | None, workspace: Array | None,
) -> None:  # fmt: skip
    """out = (x - E[x]) / sqrt(Var[x] + eps) · weight + bias over the trailing normalizedShape axes (biased
    variance); meanOutOptional = E[x], rstdOutOptional = 1 / sqrt(Var[x] + eps).

    Constraints (norm/layer_norm_v4/docs/aclnnLayerNorm&aclnnLayerNormWithImplMode.md): input FLOAT32/FLOAT16/
    BFLOAT16, ≤ 8-D; normalizedShape non-empty, the last axes of input; weight/bias of shape normalizedShape,
    input's dtype or FLOAT (one dtype when both given); out input's shape and dtype; mean/rstd input's dtype,
    shape input's leading axes then as many 1s as normalizedShape has.
    """
    _layer_norm(
        "LayerNorm", input, normalizedShape, weightOptional, biasOptional, eps, out, meanOutOptional, rstdOutOptional
    )


def layer_norm_with_impl_mode(
    input: Array, normalizedShape: Sequence[int], weightOptional: Array | None, biasOptional: Array | None,
    eps: float, out: Array, meanOutOptional: Array | None, rstdOutOptional: Array | None, implMode: int,
    workspace: Array | None,
) -> None:  # fmt: skip
    """LayerNorm with implMode (0 high precision, 1 high performance, 2 keep fp16): vnpu computes every mode
    in float32, so implMode only has to be one of 0, 1, 2."""
    if implMode not in (0, 1, 2):
        raise invalid("LayerNormWithImplMode", "implMode", f"is {implMode}; it must be 0, 1 or 2")
    _layer_norm(
        "LayerNormWithImplMode", input, normalizedShape, weightOptional, biasOptional, eps, out, meanOutOptional,
        rstdOutOptional,
    )  # fmt: skip


def group_norm(
    self: Array, gamma: Array | None, beta: Array | None, N: int, C: int, HxW: int, group: int, eps: float,  # noqa: N803
    out: Array, meanOut: Array | None, rstdOut: Array | None, workspace: Array | None,  # noqa: N803
) -> None:  # fmt: skip
    """out = (x - E[x]) / sqrt(Var[x] + eps) · gamma[c] + beta[c], the statistics over each of `group` channel
    groups of each sample; meanOut, rstdOut [N, group].

    Constraints (norm/group_norm/docs/aclnnGroupNorm.md): self FLOAT32/FLOAT16/BFLOAT16 [N, C, ...] with
    HxW the product of the rest; group > 0 dividing C; gamma and beta (C) or null; out self's shape and dtype;
    meanOut/rstdOut self's dtype [N, group].
    """
    op = "GroupNorm"
    if group <= 0 or C % group or self.shape[:2] != (N, C) or self.size != N * C * HxW:
        raise invalid(op, "group", f"is {group}; it must divide C = {C} of self {self.shape} (N {N}, HxW {HxW})")
    x = wide(self).reshape(N, group, -1)
    dtype = accumulator(x.dtype)
    mean = np.mean(x, axis=2, keepdims=True, dtype=dtype)
    rstd = 1.0 / np.sqrt(np.mean(np.square(x - mean), axis=2, keepdims=True, dtype=dtype) + dtype.type(eps))
    y = ((x - mean) * rstd).reshape(N, C, -1)
    if gamma is not None:
        y = y * wide(gamma).reshape(1, C, 1)
    if beta is not None:
        y = y + wide(beta).reshape(1, C, 1)
    store(out, y.reshape(out.shape))
    for target, values in ((meanOut, mean), (rstdOut, rstd)):
        if target is not None:
            store(target, values.reshape(target.shape))


def sync_batch_norm_gather_stats(
    totalSum: Array, totalSquareSum: Array, sampleCount: Array, mean: Array, variance: Array, momentum: float,  # noqa: N803
    eps: float, batchMean: Array, batchInvstd: Array, workspace: Array | None,  # noqa: N803
) -> None:  # fmt: skip
    """The global statistics of per-device sums: with count = Σ sampleCount, batchMean = Σ totalSum / count,
    batchVar = Σ totalSquareSum / count - batchMean², batchInvstd = 1 / sqrt(batchVar + eps); the running
    statistics in place: mean = mean · (1 - momentum) + momentum · batchMean, variance = variance · (1 - momentum)
    + momentum · batchVar · count / (count - 1).

    As the NPU computes it (ops-nn norm/sync_batch_norm_gather_stats: op_api, and the Atlas A2 kernel of its
    experimental tree): sampleCount cast to INT32 first (float counts truncated), every sum and formula in float32;
    a count of 0 gives reciprocal 0 (batchMean 0, batchInvstd 1 / sqrt(eps)), a count of 1 or less takes the biased
    variance (momentum alone) instead of dividing by count - 1. The four results are rounded into mean's dtype (the
    kernel's outputs are made like mean and variance), then batchMean and batchInvstd cast into their own.
    """
    f32 = np.float32
    m = f32(momentum)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        counts = sampleCount.astype(np.int32)  # as C casts: float counts truncated toward zero
        count = counts.astype(f32).sum(dtype=f32)
        reciprocal = f32(0) if count == 0 else f32(1) / count
        batch_mean = totalSum.astype(f32).sum(axis=0, dtype=f32) * reciprocal
        batch_var = totalSquareSum.astype(f32).sum(axis=0, dtype=f32) * reciprocal - batch_mean * batch_mean
        invstd = f32(1) / np.sqrt(batch_var + f32(eps))
        unbiased = count / (count - f32(1)) * m if count > 1 else m
        running_mean = mean.astype(f32) * (f32(1) - m) + m * batch_mean
        running_var = variance.astype(f32) * (f32(1) - m) + unbiased * batch_var
    store(batchMean, batch_mean.astype(mean.dtype))
    store(batchInvstd, invstd.astype(mean.dtype))
    store(mean, running_mean)
    store(variance, running_var)


FUNCTIONS: dict[str, Callable[..., None]] = {
    "SyncBatchNormGatherStats": sync_batch_norm_gather_stats,
    "GroupNorm": group_norm,
    "RmsNorm": rms_norm,
    "AddRmsNorm": add_rms_norm,
    "LayerNorm": layer_norm,
    "LayerNormWithImplMode": layer_norm_with_impl_mode,
}
