"""Activation gradients (hicann/ops-nn activation/*_grad, ops-math math/tanh_grad), the GLU family's (Glu, SwiGlu,
GeGlu) and Prelu's gradients, and the activations beside them (Softsign, AddRelu, InplaceAddRelu).

A gradient is gradOutput times the activation's derivative at the forward input x (or, where the operator takes
the forward result y, written in terms of y), elementwise with broadcasting. Computed in float32 (float64 when an
input is DOUBLE), rounded once into the written tensor. Scalar parameters arrive as their values.

Constraints are the rules' (`proto/aclnn/rules/grad.py`, from each operator's docs/aclnn<Op>.md): FLOAT, FLOAT16,
BFLOAT16 for most (DOUBLE for TanhBackward, SigmoidBackward; integers for SoftplusBackward's self, SeluBackward,
ThresholdBackward); shapes equal or broadcasting as documented; lambda >= 0; approximate "none" or "tanh".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.indices import axis
from server.npu.ops.common.numeric import FLOAT64, store, wide
from server.npu.ops.erf import erf

Array = np.ndarray
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
SQRT_2_OVER_PI = float(np.sqrt(2 / np.pi))
GELU_CUBIC = 0.044715


def _pair(grad: Array, x: Array) -> tuple[Array, Array]:
    """gradOutput and x in the dtype they are computed in: float64 if either is DOUBLE, else float32."""
    target = FLOAT64 if FLOAT64 in (grad.dtype, x.dtype) else np.dtype(np.float32)
    return grad.astype(target, copy=False), x.astype(target, copy=False)


def _sigmoid(v: Array) -> Array:
    with np.errstate(over="ignore"):
        s: Array = 1 / (1 + np.exp(-v))
    return s


def _apply(grad: Array, x: Array, out: Array, derivative: Callable[[Array], Array]) -> None:
    g, v = _pair(grad, x)
    with np.errstate(over="ignore", invalid="ignore"):
        store(out, g * derivative(v))


def tanh_backward(gradOutput: Array, output: Array, gradInput: Array, workspace: Array | None) -> None:  # noqa: N803
    """gradInput = gradOutput · (1 - y²), y = tanh(x) the forward result."""
    _apply(gradOutput, output, gradInput, lambda y: 1 - y * y)


def sigmoid_backward(gradOutput: Array, output: Array, gradInput: Array, workspace: Array | None) -> None:  # noqa: N803
    """gradInput = gradOutput · y · (1 - y), y = sigmoid(x) the forward result."""
    _apply(gradOutput, output, gradInput, lambda y: y * (1 - y))


def silu_backward(gradOutput: Array, self: Array, gradInput: Array, workspace: Array | None) -> None:  # noqa: N803
    """d/dx x·σ(x) = σ(x) · (1 + x · (1 - σ(x)))."""
    _apply(gradOutput, self, gradInput, lambda v: _sigmoid(v) * (1 + v * (1 - _sigmoid(v))))


def _gelu_erf(v: Array) -> Array:
    """d/dx x·Φ(x) = Φ(x) + x·φ(x) (the exact form, erf)."""
    x = v.astype(np.float64)
    d: Array = 0.5 + 0.5 * erf(x / np.sqrt(2.0)) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
    return d.astype(v.dtype)


def _gelu_tanh(v: Array) -> Array:
    """The derivative of 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³)."""
    t = np.tanh(SQRT_2_OVER_PI * (v + GELU_CUBIC * v**3))
    d: Array = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * SQRT_2_OVER_PI * (1 + 3 * GELU_CUBIC * v * v)
    return d


def gelu_backward(gradOutput: Array, self: Array, gradInput: Array, workspace: Array | None) -> None:  # noqa: N803
    """The gradient of Gelu (the erf form its documentation gives)."""
    _apply(gradOutput, self, gradInput, _gelu_erf)


def gelu_backward_v2(gradOutput: Array, self: Array, approximate: str, gradInput: Array,  # noqa: N803
                     workspace: Array | None) -> None:  # fmt: skip
    """The gradient of GeluV2: approximate "none" the erf form, "tanh" the tanh form."""
    if approximate not in ("none", "tanh"):
        raise invalid("GeluBackwardV2", "approximate", f"is {approximate!r}; it must be 'none' or 'tanh'")
    _apply(gradOutput, self, gradInput, _gelu_erf if approximate == "none" else _gelu_tanh)


def softplus_backward(gradOutput: Array, self: Array, beta: Any, threshold: Any, gradInput: Array,  # noqa: N803
                      workspace: Array | None) -> None:  # fmt: skip
    """d/dx log(1 + exp(β·x))/β = σ(β·x), or 1 where β·x > threshold (the forward is linear there)."""
    _apply(gradOutput, self, gradInput, lambda v: np.where(v * beta > threshold, 1, _sigmoid(v * v.dtype.type(beta))))


def hardswish_backward(gradOutput: Array, self: Array, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """0 below -3, x/3 + 0.5 on [-3, 3], 1 above 3."""
    _apply(gradOutput, self, out, lambda v: np.where(v < -3, 0, np.where(v > 3, 1, v / 3 + 0.5)))


def hardsigmoid_backward(gradOutput: Array, self: Array, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """1/6 strictly inside (-3, 3), else 0."""
    _apply(gradOutput, self, out, lambda v: np.where((v > -3) & (v < 3), v.dtype.type(1 / 6), 0))


def hardtanh_backward(gradOutput: Array, self: Array, min: Any, max: Any, out: Array,  # noqa: N803
                      workspace: Array | None) -> None:  # fmt: skip
    """gradOutput where min <= x <= max, else 0."""
    _apply(gradOutput, self, out, lambda v: ((v >= min) & (v <= max)).astype(v.dtype))


def elu_backward(gradOutput: Array, alpha: Any, scale: Any, inputScale: Any, isResult: bool,  # noqa: N803
                 selfOrResult: Array, gradInput: Array, workspace: Array | None) -> None:  # noqa: N803  # fmt: skip
    """scale where x > 0; else inputScale·alpha·scale·exp(inputScale·x), which is inputScale·(y + alpha·scale)
    in terms of the forward result y (isResult)."""
    if isResult and alpha < 0:
        raise invalid("EluBackward", "alpha", f"is {alpha}; it must be >= 0 when isResult is true")

    def derivative(v: Array) -> Array:
        t = v.dtype.type
        negative = t(inputScale) * (v + t(alpha) * t(scale)) if isResult else (
            t(inputScale) * t(alpha) * t(scale) * np.exp(v * t(inputScale)))  # fmt: skip
        d: Array = np.where(v > 0, t(scale), negative)
        return d

    _apply(gradOutput, selfOrResult, gradInput, derivative)


def selu_backward(gradOutput: Array, result: Array, gradInput: Array, workspace: Array | None) -> None:  # noqa: N803
    """From the forward result y: scale where y > 0, else y + alpha·scale (= scale·alpha·exp(x))."""
    _apply(gradOutput, result, gradInput, lambda y: np.where(y > 0, SELU_SCALE, y + SELU_ALPHA * SELU_SCALE))


def mish_backward(gradOutput: Array, self: Array, gradInput: Array, workspace: Array | None) -> None:  # noqa: N803
    """d/dx x·tanh(softplus(x)) = tanh(sp) + x·σ(x)·(1 - tanh²(sp))."""

    def derivative(v: Array) -> Array:
        t = np.tanh(np.logaddexp(0, v))
        d: Array = t + v * _sigmoid(v) * (1 - t * t)
        return d

    _apply(gradOutput, self, gradInput, derivative)


def softshrink_backward(gradOutput: Array, self: Array, lambda_: Any, gradInput: Array,  # noqa: N803
                        workspace: Array | None) -> None:  # fmt: skip
    """gradOutput where |x| > lambda, else 0."""
    _apply(gradOutput, self, gradInput, lambda v: (np.abs(v) > lambda_).astype(v.dtype))


def threshold_backward(gradOutput: Array, self: Array, threshold: Any, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """gradOutput where x > threshold, else 0 (integers kept exact)."""
    store(out, np.where(self > threshold, gradOutput, np.zeros((), gradOutput.dtype)))


def swish_backward(gradOutput: Array, self: Array, betaOptional: Any, gradInput: Array,  # noqa: N803
                   workspace: Array | None) -> None:  # fmt: skip
    """d/dx x·σ(βx) = σ(βx)·(1 + βx·(1 - σ(βx))), β 1.0 when null."""
    beta = 1.0 if betaOptional is None else betaOptional

    def derivative(v: Array) -> Array:
        bx = v * v.dtype.type(beta)
        s = _sigmoid(bx)
        d: Array = s * (1 + bx * (1 - s))
        return d

    _apply(gradOutput, self, gradInput, derivative)


def log_softmax_backward(gradOutput: Array, output: Array, dim: int, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """out = gradOutput - exp(output) · Σ gradOutput along dim."""
    d = axis("LogSoftmaxBackward", "dim", dim, gradOutput.ndim)
    g, y = _pair(gradOutput, output)
    with np.errstate(over="ignore", invalid="ignore"):
        store(out, g - np.exp(y) * g.sum(axis=d, keepdims=True))


def softmax_backward(gradOutput: Array, output: Array, dim: int, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """out = y · (gradOutput - Σ gradOutput·y along dim), y the forward softmax."""
    d = axis("SoftmaxBackward", "dim", dim, gradOutput.ndim)
    g, y = _pair(gradOutput, output)
    g, y = (g.reshape(1), y.reshape(1)) if g.ndim == 0 else (g, y)
    store(out, (y * (g - (g * y).sum(axis=d, keepdims=True))).reshape(out.shape))


def leaky_relu_backward(gradOutput: Array, self: Array, negativeSlope: Any, selfIsResult: bool, out: Array,  # noqa: N803
                        workspace: Array | None) -> None:  # fmt: skip
    """gradOutput where x > 0, else negativeSlope · gradOutput (x the input, or the result when selfIsResult)."""
    if selfIsResult and negativeSlope < 0:
        raise invalid("LeakyReluBackward", "negativeSlope", f"is {negativeSlope}; it must be >= 0 when selfIsResult")
    _apply(gradOutput, self, out, lambda v: np.where(v > 0, 1, v.dtype.type(negativeSlope)))


def hardshrink_backward(gradOutput: Array, self: Array, lambd: Any, gradInput: Array,  # noqa: N803
                        workspace: Array | None) -> None:  # fmt: skip
    """gradOutput where |x| > lambd (a negative lambd counts as 0), else 0."""
    _apply(gradOutput, self, gradInput, lambda v: (np.abs(v) > max(lambd, 0)).astype(v.dtype))


def hardswish_backward_v2(gradOutput: Array, self: Array, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """0 up to -3, x/3 + 0.5 strictly between -3 and 3, 1 from 3 (HardswishBackward's boundaries moved)."""
    _apply(gradOutput, self, out, lambda v: np.where(v <= -3, 0, np.where(v >= 3, 1, v / 3 + 0.5)))


def fast_gelu_backward(gradOutput: Array, self: Array, gradInput: Array, workspace: Array | None) -> None:  # noqa: N803
    """d/dx x·σ(1.702x) = σ(1.702x) · (1 + 1.702x · (1 - σ(1.702x)))."""

    def derivative(v: Array) -> Array:
        k = v * v.dtype.type(1.702)
        s = _sigmoid(k)
        d: Array = s * (1 + k * (1 - s))
        return d

    _apply(gradOutput, self, gradInput, derivative)


def log_sigmoid_backward(gradOutput: Array, self: Array, buffer: Array, gradInput: Array,  # noqa: N803
                         workspace: Array | None) -> None:  # fmt: skip
    """d/dx log σ(x) = 1 / (1 + exp(x)) = σ(-x) (buffer unused)."""
    _apply(gradOutput, self, gradInput, lambda v: _sigmoid(-v))


def _halves(op: str, x: Array, dim: int) -> tuple[int, Array, Array]:
    d = axis(op, "dim", dim, x.ndim)
    if x.shape[d] % 2:
        raise invalid(op, "self", f"has {x.shape[d]} elements along dim {dim}; it must be even")
    a, b = np.split(wide(x), 2, axis=d)
    return d, a, b


def glu_backward(gradOut: Array, self: Array, dim: int, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """Glu = a·σ(b): the gradient is [g·σ(b), g·a·σ(b)·(1 - σ(b))] along dim."""
    d, a, b = _halves("GluBackward", self, dim)
    g, s = wide(gradOut).astype(a.dtype, copy=False), _sigmoid(b)
    store(out, np.concatenate([g * s, g * a * s * (1 - s)], axis=d))


def swi_glu_grad(yGrad: Array, x: Array, dim: int, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """SwiGlu = a·σ(a)·b: the gradient is [g·b·σ(a)·(1 + a·(1 - σ(a))), g·a·σ(a)] along dim."""
    d, a, b = _halves("SwiGluGrad", x, dim)
    g, s = wide(yGrad).astype(a.dtype, copy=False), _sigmoid(a)
    store(out, np.concatenate([g * b * s * (1 + a * (1 - s)), g * a * s], axis=d))


def prelu_backward(gradOutput: Array, self: Array, weight: Array, gradInput: Array, gradWeight: Array,  # noqa: N803
                   workspace: Array | None) -> None:  # fmt: skip
    """gradInput = g where x > 0, else weight·g; gradWeight = Σ x·g where x <= 0, per channel (axis 1) or in all."""
    g, x = _pair(gradOutput, self)
    g = np.broadcast_to(g, x.shape)
    w = wide(weight).reshape(-1)
    per_channel = w.size != 1
    if per_channel:
        w = w.reshape((1, w.size) + (1,) * (x.ndim - 2))
    store(gradInput, np.where(x > 0, g, w * g))
    share = np.where(x > 0, 0, x * g).astype(np.float64)
    axes = tuple(i for i in range(x.ndim) if i != 1) if per_channel else None
    store(gradWeight, share.sum(axis=axes).reshape(gradWeight.shape))


def _ge_glu(op: str, gradOutput: Array, self: Array, gelu: Array, dim: int, approximate: int, left: bool,  # noqa: N803
            gradInput: Array) -> None:  # noqa: N803  # fmt: skip
    d, a, b = _halves(op, self, dim)
    gate, linear = (a, b) if left else (b, a)
    g, y = wide(gradOutput).astype(a.dtype, copy=False), wide(gelu).astype(a.dtype, copy=False)
    d_gate = g * linear * (_gelu_tanh(gate) if approximate == 1 else _gelu_erf(gate))
    parts = [d_gate, g * y] if left else [g * y, d_gate]
    store(gradInput, np.concatenate(parts, axis=d))


def ge_glu_backward(gradOutput: Array, self: Array, gelu: Array, dim: int, approximate: int, gradInput: Array,  # noqa: N803
                    workspace: Array | None) -> None:  # fmt: skip
    """GeGlu = a·gelu(b) (self's halves along dim, gelu the forward gelu(b)): [g·gelu(b), g·a·gelu'(b)];
    approximate 0 the erf form, 1 tanh."""
    _ge_glu("GeGluBackward", gradOutput, self, gelu, dim, approximate, False, gradInput)


def ge_glu_v3_backward(gradOutput: Array, self: Array, gelu: Array, dim: int, approximate: int,  # noqa: N803
                       activateLeft: bool, gradInput: Array, workspace: Array | None) -> None:  # noqa: N803  # fmt: skip
    """GeGluBackward with the gelu on the left half when activateLeft (on the right otherwise)."""
    _ge_glu("GeGluV3Backward", gradOutput, self, gelu, dim, approximate, activateLeft, gradInput)


def softsign(self: Array, out: Array, workspace: Array | None) -> None:
    """out = x / (1 + |x|)."""
    x = wide(self)
    store(out, x / (1 + np.abs(x)))


def _add_relu(self: Array, other: Array, alpha: Any, out: Array) -> None:
    if np.issubdtype(out.dtype, np.integer) and np.issubdtype(self.dtype, np.integer) and \
            np.issubdtype(other.dtype, np.integer) and float(alpha) == int(alpha):  # fmt: skip
        total = self.astype(np.int64) + int(alpha) * other.astype(np.int64)
        store(out, np.maximum(total, 0))
        return
    a, b = _pair(wide(self), wide(other))
    total = a + b * a.dtype.type(alpha)
    store(out, np.where(np.isnan(total), total, np.maximum(total, 0)))


def add_relu(self: Array, other: Array, alpha: Any, out: Array, workspace: Array | None) -> None:
    """out = relu(self + alpha · other), broadcasting."""
    _add_relu(self, other, alpha, out)


def inplace_add_relu(selfRef: Array, other: Array, alpha: Any, workspace: Array | None) -> None:  # noqa: N803
    """selfRef = relu(selfRef + alpha · other)."""
    _add_relu(selfRef, other, alpha, selfRef)


FUNCTIONS: dict[str, Callable[..., None]] = {
    "TanhBackward": tanh_backward,
    "SigmoidBackward": sigmoid_backward,
    "SiluBackward": silu_backward,
    "GeluBackward": gelu_backward,
    "GeluBackwardV2": gelu_backward_v2,
    "SoftplusBackward": softplus_backward,
    "HardswishBackward": hardswish_backward,
    "HardsigmoidBackward": hardsigmoid_backward,
    "HardtanhBackward": hardtanh_backward,
    "EluBackward": elu_backward,
    "SeluBackward": selu_backward,
    "MishBackward": mish_backward,
    "SoftshrinkBackward": softshrink_backward,
    "ThresholdBackward": threshold_backward,
    "SwishBackward": swish_backward,
    "LogSoftmaxBackward": log_softmax_backward,
    "SoftmaxBackward": softmax_backward,
    "LeakyReluBackward": leaky_relu_backward,
    "HardshrinkBackward": hardshrink_backward,
    "HardswishBackwardV2": hardswish_backward_v2,
    "FastGeluBackward": fast_gelu_backward,
    "LogSigmoidBackward": log_sigmoid_backward,
    "GluBackward": glu_backward,
    "SwiGluGrad": swi_glu_grad,
    "PreluBackward": prelu_backward,
    "GeGluBackward": ge_glu_backward,
    "GeGluV3Backward": ge_glu_v3_backward,
    "Softsign": softsign,
    "AddRelu": add_relu,
    "InplaceAddRelu": inplace_add_relu,
}
