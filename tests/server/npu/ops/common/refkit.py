"""Test helpers shared by the kernel tests: comparing a kernel's rounded output with a float64 reference.

A kernel computes in float32 (or float64) and rounds once into its output dtype, so its output should equal the
float64 reference rounded to that dtype, give or take a unit in the last place (float32 accumulation moves the
value before rounding by ~1e-6 relative, which can flip a rounding). `assert_rounded` allows `ulps` units of
the output dtype at the reference's magnitude plus `atol` (for results near 0 after cancellation).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

MANTISSA = {
    np.dtype(np.float16): (10, -14),
    np.dtype(ml_dtypes.bfloat16): (7, -126),
    np.dtype(np.float32): (23, -126),
    np.dtype(np.float64): (52, -1022),
}


def ulp(values: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """The spacing of `dtype` at each of `values` (float64), computed from the dtype's mantissa width."""
    bits, min_exp = MANTISSA[np.dtype(dtype)]
    magnitude = np.abs(np.asarray(values, np.float64))
    magnitude = np.where(np.isfinite(magnitude), magnitude, 1.0)
    exponent = np.floor(np.log2(np.where(magnitude > 0, magnitude, 1.0)))
    spacing: np.ndarray = np.ldexp(1.0, (np.maximum(exponent, min_exp) - bits).astype(int))
    return spacing


def assert_rounded(actual: np.ndarray, reference: np.ndarray, ulps: float = 2, atol: float = 0.0) -> None:
    """actual (a kernel's output, any float dtype) is reference (float64) within `ulps` of actual's dtype + atol."""
    ref = np.asarray(reference, np.float64)
    got = np.asarray(actual).astype(np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    both_inf = np.isinf(ref) & (got == ref)
    tolerance = ulps * ulp(ref, actual.dtype) + atol
    with np.errstate(invalid="ignore"):
        error = np.abs(got - ref)
    bad = ~both_inf & ~(error <= tolerance)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(
            f"{int(bad.sum())} of {bad.size} values differ; first at {where}: got {got[where]!r}, "
            f"reference {ref[where]!r}, tolerance {tolerance[where]!r}"
        )


def call_with(kernel: Callable[..., Any], **given: Any) -> None:
    """Call `kernel` with every parameter it has: `given` ones, None for the rest (absent optional arguments)."""
    names = list(inspect.signature(kernel).parameters)
    unknown = set(given) - set(names)
    assert not unknown, f"{kernel.__name__} has no parameters {sorted(unknown)}"
    kernel(**{name: given.get(name) for name in names})
