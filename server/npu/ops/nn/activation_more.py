"""More of ops-nn's elementwise activations: FastGelu, Heaviside, LogSigmoid, Threshold (and in place), Shrink, and
the experimental HardsigmoidV2 (and in place), FastGeluV2, FusedBiasLeakyRelu. Floats compute in float32 and round
once into the output; Threshold keeps integers exact (AddRelu is in `grad`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from server.npu.ops.common.numeric import is_float, store, wide

Array = np.ndarray


def fast_gelu(self: Array, out: Array, workspace: Array | None) -> None:
    """out = x / (1 + exp(-1.702 x)), the sigmoid approximation of GELU.

    Constraints (activation/fast_gelu, aclnnFastGelu): self FLOAT/FLOAT16/BFLOAT16; out its dtype and shape."""
    x = wide(self)
    with np.errstate(over="ignore"):
        store(out, x / (1 + np.exp(x.dtype.type(-1.702) * x)))


def log_sigmoid(self: Array, out: Array, workspace: Array | None) -> None:
    """out = log(1 / (1 + exp(-x))) = -log(1 + exp(-x)), without overflow for large |x|.

    Constraints (activation/log_sigmoid, aclnnLogSigmoid): self FLOAT/FLOAT16/BFLOAT16; out its dtype and shape."""
    x = wide(self)
    store(out, -np.logaddexp(x.dtype.type(0), -x))


def log_sigmoid_forward(self: Array, out: Array, buffer: Array, workspace: Array | None) -> None:
    """out = LogSigmoid(self); buffer, which the documentation reserves ("unused for now"), is left as it is."""
    log_sigmoid(self, out, workspace)


def heaviside(input: Array, values: Array, out: Array, workspace: Array | None) -> None:
    """out = 0 where input < 0, values where input == 0, 1 where input > 0, broadcasting (torch.heaviside; NaN
    input stays NaN).

    Constraints (activation/heaviside, aclnnHeaviside): input and values FLOAT/FLOAT16/BFLOAT16 of one dtype that
    broadcast; out their dtype and the broadcast shape."""
    x, v = wide(input), wide(values)
    store(out, np.where(x == 0, v, np.where(x > 0, x.dtype.type(1), np.where(x < 0, x.dtype.type(0), x))))


def _threshold(self: Array, threshold: Any, value: Any, out: Array) -> None:
    floating = is_float(self.dtype) or isinstance(threshold, float) or isinstance(value, float)
    x = (wide(self) if is_float(self.dtype) else self.astype(np.float32)) if floating else self.astype(np.int64)
    kind = x.dtype.type
    store(out, np.where(x > kind(threshold), x, kind(value)))


def threshold_(self: Array, threshold: Any, value: Any, out: Array, workspace: Array | None) -> None:
    """out = self where self > threshold, else value (torch.nn.functional.threshold).

    Constraints (activation/threshold, aclnnThreshold): self FLOAT/FLOAT16/BFLOAT16/INT8-64/UINT8; threshold and value
    scalars that promote with it; out self's shape, a dtype the promoted one casts to."""
    _threshold(self, threshold, value, out)


def inplace_threshold(selfRef: Array, threshold: Any, value: Any, workspace: Array | None) -> None:
    """selfRef = Threshold(selfRef, threshold, value)."""
    _threshold(selfRef, threshold, value, selfRef)


def shrink(self: Array, lambd: float, bias: float, out: Array, workspace: Array | None) -> None:
    """out = self - bias where self > lambd, self + bias where self < -lambd, else 0.

    Constraints (activation/shrink, aclnnShrink): self FLOAT/FLOAT16; lambd >= 0, bias any number; out self's shape,
    FLOAT or FLOAT16."""
    x = wide(self)
    low, b = x.dtype.type(lambd), x.dtype.type(bias)
    store(out, np.where(x > low, x - b, np.where(x < -low, x + b, x.dtype.type(0))))


def hardsigmoid_v2(self: Array, out: Array, workspace: Array | None) -> None:
    """out = clamp(x / 6 + 1/2, 0, 1); for INT32, clamp(x + 3, 0, 6) // 6 (1 from 3 up, else 0), as its
    documentation says the integer kernel computes.

    Constraints (experimental/activation/hard_sigmoid_v2, aclnnHardsigmoidV2): self FLOAT/FLOAT16/BFLOAT16/INT32; out
    its dtype and shape."""
    if not is_float(self.dtype):
        store(out, np.clip(self.astype(np.int64) + 3, 0, 6) // 6)
        return
    x = wide(self)
    store(out, np.clip(x / x.dtype.type(6) + x.dtype.type(0.5), 0, 1))


def inplace_hardsigmoid_v2(self: Array, workspace: Array | None) -> None:
    """self = HardsigmoidV2(self)."""
    hardsigmoid_v2(self, self, workspace)


def fast_gelu_v2(x: Array, out: Array, workspace: Array | None) -> None:
    """out = x · (sgn(x) · (-0.1444 · (min(|0.7071 x|, 1.769) - 1.769)² + 0.5) + 0.5), a polynomial GELU, with
    sgn(x) = (x + 1e-12) / |x + 1e-12| as the documentation defines it.

    Constraints (experimental/activation/fast_gelu_v2, aclnnFastGeluV2): x FLOAT/FLOAT16/BFLOAT16; out its dtype and
    shape."""
    v = wide(x)
    kind = v.dtype.type
    shifted = v + kind(1e-12)
    with np.errstate(invalid="ignore", divide="ignore"):
        sign = shifted / np.abs(shifted)
    curve = kind(-0.1444) * (np.minimum(np.abs(kind(0.7071) * v), kind(1.769)) - kind(1.769)) ** 2 + kind(0.5)
    store(out, v * (sign * curve + kind(0.5)))


def fused_bias_leaky_relu(x: Array, bias: Array, negativeSlope: float, scale: float, out: Array,
                          workspace: Array | None) -> None:  # fmt: skip
    """out = (x + bias) · scale where x + bias >= 0, else (x + bias) · negativeSlope · scale.

    Constraints (experimental/activation/fused_bias_leaky_relu, aclnnFusedBiasLeakyRelu): x and bias FLOAT/FLOAT16
    of one dtype and one shape (no broadcast); out their dtype and shape."""
    s = wide(x) + wide(bias)
    kind = s.dtype.type
    store(out, np.where(s >= 0, s * kind(scale), s * kind(negativeSlope) * kind(scale)))


FUNCTIONS: dict[str, Callable[..., None]] = {
    "FastGelu": fast_gelu,
    "LogSigmoid": log_sigmoid,
    "LogSigmoidForward": log_sigmoid_forward,
    "Heaviside": heaviside,
    "Threshold": threshold_,
    "InplaceThreshold": inplace_threshold,
    "Shrink": shrink,
    "HardsigmoidV2": hardsigmoid_v2,
    "InplaceHardsigmoidV2": inplace_hardsigmoid_v2,
    "FastGeluV2": fast_gelu_v2,
    "FusedBiasLeakyRelu": fused_bias_leaky_relu,
}
