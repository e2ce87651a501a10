"""Activations with parameters (hicann/ops-nn activation/): Softplus, LeakyRelu, Elu, Celu, GeluV2 (erf or tanh
form), Glu, Softshrink, Hardshrink, Swish, Prelu.

Computed in float32 (float64 for DOUBLE), rounded once into the output. Scalar parameters are their values.

Constraints (activation/<op>/op_api/aclnn_<op>.h, torch.nn.functional's functions): self FLOAT/FLOAT16/BFLOAT16
(DOUBLE where torch has it); out self's shape (Glu: dim halved) and dtype; Softplus threshold and beta > 0; Glu's
dim axis even; GeluV2 approximate 0 (none: the erf form) or 1 (tanh); Prelu weight 1 element or self's channel
count (axis 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.indices import axis
from server.npu.ops.common.numeric import store, wide
from server.npu.ops.erf import erf

Array = np.ndarray


def softplus(self: Array, beta: Any, threshold: Any, out: Array, workspace: Array | None) -> None:
    """out = log(1 + exp(beta · x)) / beta, or x where beta · x > threshold (torch.nn.functional.softplus)."""
    x = wide(self)
    scaled = x * x.dtype.type(beta)
    with np.errstate(over="ignore"):
        store(out, np.where(scaled > threshold, x, np.logaddexp(0, scaled) / x.dtype.type(beta)))


def leaky_relu(self: Array, negativeSlope: Any, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """out = x where x > 0, else negativeSlope · x."""
    x = wide(self)
    store(out, np.where(x > 0, x, x * x.dtype.type(negativeSlope)))


def elu(self: Array, alpha: Any, scale: Any, inputScale: Any, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """out = scale · x where x > 0, else scale · alpha · (exp(inputScale · x) - 1) (torch's elu)."""
    x = wide(self)
    t = x.dtype.type
    with np.errstate(over="ignore"):
        negative = t(alpha) * np.expm1(np.minimum(x, 0) * t(inputScale))
    store(out, t(scale) * np.where(x > 0, x, negative))


def celu(self: Array, alpha: Any, out: Array, workspace: Array | None) -> None:
    """out = max(0, x) + min(0, alpha · (exp(x / alpha) - 1)); alpha ≠ 0."""
    if alpha == 0:
        raise invalid("Celu", "alpha", "is 0; it must not be")
    x = wide(self)
    t = x.dtype.type
    store(out, np.maximum(x, 0) + np.minimum(0, t(alpha) * np.expm1(np.minimum(x, 0) / t(alpha))))


def gelu_v2(x: Array, approximate: int, y: Array, workspace: Array | None) -> None:
    """y = x · Φ(x): approximate 0 the erf form, 1 the tanh form."""
    if approximate not in (0, 1):
        raise invalid("GeluV2", "approximate", f"is {approximate}; it must be 0 (none) or 1 (tanh)")
    v = x.astype(np.float64)
    if approximate == 0:
        store(y, v * 0.5 * (1.0 + erf(v / np.sqrt(2.0))))
    else:
        store(y, 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v**3))))


def glu(self: Array, dim: int, out: Array, workspace: Array | None) -> None:
    """out = a · sigmoid(b), a and b the halves of self along dim."""
    d = axis("Glu", "dim", dim, self.ndim)
    if self.shape[d] % 2:
        raise invalid("Glu", "self", f"has {self.shape[d]} elements along dim {dim}; it must be even")
    a, b = np.split(wide(self), 2, axis=d)
    store(out, a * (0.5 * (np.tanh(0.5 * b) + 1)))


def _shrink(x: Array, lambd: Any) -> Array:
    kept: Array = np.abs(x) > lambd
    return kept


def softshrink(self: Array, lambd: Any, out: Array, workspace: Array | None) -> None:
    """out = x - lambd · sign(x) where |x| > lambd, else 0; lambd ≥ 0."""
    x = wide(self)
    store(out, np.where(_shrink(x, lambd), x - np.sign(x) * x.dtype.type(lambd), 0))


def hardshrink(self: Array, lambd: Any, out: Array, workspace: Array | None) -> None:
    """out = x where |x| > lambd, else 0."""
    x = wide(self)
    store(out, np.where(_shrink(x, lambd), x, 0))


def swish(self: Array, betaOptional: Any, out: Array, workspace: Array | None) -> None:  # noqa: N803
    """out = x · sigmoid(beta · x) (beta 1.0 when null)."""
    x = wide(self)
    beta = x.dtype.type(1.0 if betaOptional is None else betaOptional)
    store(out, x * (0.5 * (np.tanh(0.5 * beta * x) + 1)))


def prelu(self: Array, weight: Array, out: Array, workspace: Array | None) -> None:
    """out = x where x > 0, else weight · x, weight per channel (axis 1) or one value."""
    x, w = wide(self), wide(weight).reshape(-1)
    if w.size != 1:
        if self.ndim < 2 or self.shape[1] != w.size:
            raise invalid("Prelu", "weight", f"has {w.size} elements; self has {self.shape[1:2]} channels")
        w = w.reshape((1, w.size) + (1,) * (self.ndim - 2))
    store(out, np.where(x > 0, x, w * x))


FUNCTIONS: dict[str, Callable[..., None]] = {
    "Softplus": softplus,
    "LeakyRelu": leaky_relu,
    "Elu": elu,
    "Celu": celu,
    "GeluV2": gelu_v2,
    "Glu": glu,
    "Softshrink": softshrink,
    "Hardshrink": hardshrink,
    "Swish": swish,
    "Prelu": prelu,
}
