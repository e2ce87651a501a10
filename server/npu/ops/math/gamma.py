"""Special functions elementwise: Erfinv (ops-nn activation/erfinv), Lgamma and Digamma (ops-math math/lgamma,
math/digamma), computed in float64 and rounded once into the output (they are steep near their poles and ±1).

Why these methods (scipy is not a dependency): erfinv starts from M. Giles' single-precision polynomials and
takes two Newton steps on vnpu's float64 erf (`server.npu.ops.erf`); lgamma is the C library's (`math.lgamma`
per element); digamma shifts x up past 6 by its recurrence (reflecting x < 0.5 first) and sums its asymptotic
series there, accurate to a few ulps of float64.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from server.npu.ops.common.numeric import store
from server.npu.ops.erf import erf

Array = np.ndarray

_SQRT_PI_2 = 2 / math.sqrt(math.pi)
_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
            -0.00417768164, 0.246640727, 1.50140941)  # fmt: skip
_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
         0.00943887047, 1.00167406, 2.83297682)  # fmt: skip


def _erfinv(y: Array) -> Array:
    """erfinv of a float64 array: M. Giles' single-precision polynomials ("Approximating the erfinv function",
    2010), then two Newton steps on erf (server.npu.ops.erf) to float64 accuracy; ±1 gives ±inf, |y| > 1 NaN."""
    with np.errstate(all="ignore"):
        w = -np.log((1 - y) * (1 + y))
        central, tail = np.zeros_like(y), np.zeros_like(y)
        t_central, t_tail = w - 2.5, np.sqrt(w) - 3
        for c, t in zip(_CENTRAL, _TAIL, strict=True):
            central, tail = central * t_central + c, tail * t_tail + t
        x = np.where(w < 5, central, tail) * y
        for _ in range(2):
            x = x - (erf(x) - y) / (_SQRT_PI_2 * np.exp(-x * x))
        x = np.where(np.abs(y) == 1, np.copysign(np.inf, y), x)
        return np.where(np.abs(y) > 1, np.nan, x)


def erfinv(self: Array, out: Array, workspace: Array | None) -> None:
    """out = erfinv(self), the inverse of erf (computed in float64: it is steep near ±1).

    Constraints (ops-nn activation/erfinv, aclnnErfinv): self FLOAT/FLOAT16/BFLOAT16 or an integer/BOOL dtype
    (computed as float); out FLOAT/FLOAT16/BFLOAT16 of self's shape."""
    store(out, _erfinv(self.astype(np.float64)))


_LGAMMA = np.vectorize(math.lgamma, otypes=[np.float64])
_BERNOULLI = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)  # B2k / 2k


def _lgamma(x: Array) -> Array:
    """log|Γ(x)|: +inf at the poles (0, -1, -2, ...), NaN for NaN."""
    finite = np.isfinite(x)
    poles = finite & (x <= 0) & (x == np.floor(x))
    safe = np.where(finite & ~poles, x, 1.0)
    result = np.where(poles, np.inf, _LGAMMA(safe))
    return np.where(finite, result, np.where(np.isnan(x), np.nan, np.inf))


def _digamma(x: Array) -> Array:
    """ψ(x) = Γ'(x)/Γ(x): -inf at 0, NaN at the negative integers and -inf, +inf at +inf."""
    reflect = x < 0.5
    y = np.where(reflect, 1 - x, x)
    shift = np.zeros_like(y)
    for _ in range(6):
        low = y < 6
        shift = shift - np.where(low, 1 / np.where(low, y, 1), 0)
        y = np.where(low, y + 1, y)
    inverse2 = 1 / (y * y)
    series = np.zeros_like(y)
    for coefficient in reversed(_BERNOULLI[:6]):
        series = (series + coefficient) * inverse2
    psi = np.log(y) - 0.5 / y - series + shift
    with np.errstate(all="ignore"):
        psi = np.where(reflect, psi - np.pi / np.tan(np.pi * x), psi)
    psi = np.where((x <= 0) & (x == np.floor(x)), np.nan, psi)
    return np.where(x == 0, -np.inf, psi)


def lgamma(self: Array, out: Array, workspace: Array | None) -> None:
    """out = log|Γ(self)| (torch.lgamma). Constraints (math/lgamma, aclnnLgamma): self FLOAT/FLOAT16/DOUBLE; out self's
    dtype and shape."""
    with np.errstate(all="ignore"):
        store(out, _lgamma(self.astype(np.float64)))


def digamma(self: Array, out: Array, workspace: Array | None) -> None:
    """out = ψ(self), the logarithmic derivative of Γ (torch.digamma: -inf at 0, NaN at negative integers).
    Constraints (math/digamma, aclnnDigamma): self FLOAT/FLOAT16/DOUBLE; out self's dtype and shape."""
    with np.errstate(all="ignore"):
        store(out, _digamma(self.astype(np.float64)))


FUNCTIONS: dict[str, Callable[..., None]] = {
    "Erfinv": erfinv,
    "Lgamma": lgamma,
    "Digamma": digamma,
}
