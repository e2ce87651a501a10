"""Verdicts for the random operators, whose values no reference can recompute (CANN's generator is not vnpu's): an
output is accepted as the launch's result when it is a plausible sample of the distribution its documentation
gives, with the launch's dumped parameters -- every value inside the support, and a Kolmogorov-Smirnov test of the
sample against the distribution's CDF that rejects at p < 1e-4 (a wrong distribution, a wrong parameter, a constant
or a shifted output fails; a correct sampler fails one launch in 10,000). The output's rounding to fp16/bf16 moves
the CDF by far less than the test's critical distance.

A check returns "" for a plausible sample, else why not.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

Args = dict[str, Any]
Check = Callable[[Args, np.ndarray], str]
SAMPLES: dict[str, Check] = {}
REJECT = 1e-4


def ks_p_value(sample: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray]) -> float:
    """The asymptotic p-value of the one-sample KS statistic (Stephens' small-sample correction of λ)."""
    x = np.sort(np.asarray(sample, np.float64).ravel())
    n = x.size
    f = cdf(x)
    d = max(float(np.max(np.arange(1, n + 1) / n - f)), float(np.max(f - np.arange(n) / n)))
    lam = (math.sqrt(n) + 0.12 + 0.11 / math.sqrt(n)) * d
    if lam < 0.2:
        return 1.0
    p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return min(1.0, max(0.0, p))


def _sample(low: float, high: float, cdf: Callable[[np.ndarray], np.ndarray], out: np.ndarray) -> str:
    """The support [low, high] widened to its bounds rounded into out's dtype (the device's one rounding)."""
    values = np.asarray(out, np.float64)
    if values.size == 0:
        return ""
    low, high = (f(b, float(np.asarray(b).astype(out.dtype))) for f, b in ((min, low), (max, high)))
    if not np.all(np.isfinite(values)) or values.min() < low or values.max() > high:
        return f"values outside [{low}, {high}]: {values.min()!r} .. {values.max()!r}"
    p = ks_p_value(values, cdf)
    return "" if p >= REJECT else f"not a sample of the distribution (Kolmogorov-Smirnov p = {p:.2g})"


def uniform(args: Args, out: np.ndarray) -> str:
    """InplaceUniform: U[from, to) (docs/aclnnInplaceUniform.md); to itself allowed, as rounding can reach it."""
    low, high = float(args["from"]), float(args["to"])
    return _sample(low, high, lambda x: np.clip((x - low) / (high - low), 0, 1), out)


def exponential(args: Args, out: np.ndarray) -> str:
    """SimThreadExponential: -ln(1 - u) / lambda, u ~ U(0, 1] (docs/aclnnSimThreadExponential.md): Exp(lambda), in
    the first `count` elements; the others keep their values."""
    rate, count = float(args["lambd"]), int(args["count"])
    flat, before = np.ravel(np.asarray(out, np.float64)), np.ravel(np.asarray(args["selfRef"], np.float64))
    if not np.array_equal(flat[count:], before[count:], equal_nan=True):
        return f"changed elements past count {count}"
    return _sample(0.0, math.inf, lambda x: 1 - np.exp(-rate * np.maximum(x, 0)), flat[:count])


SAMPLES["InplaceUniform"] = uniform
SAMPLES["SimThreadExponential"] = exponential
