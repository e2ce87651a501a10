"""Widening for computation: fp16/bf16 (and fp32) are computed in float32, float64 in float64, as the NPU does.

`wide(x)` gives the float array a kernel computes with; `accumulator(dtype)` the float dtype it accumulates in.
Integers are returned as they are (integer kernels wrap in their own dtype).
"""

from __future__ import annotations

from typing import Any, Final

import ml_dtypes
import numpy as np

FLOAT32: Final = np.dtype(np.float32)
FLOAT64: Final = np.dtype(np.float64)
BFLOAT16: Final = np.dtype(ml_dtypes.bfloat16)
HALF_FLOATS: Final = frozenset({np.dtype(np.float16), BFLOAT16})


def is_float(dtype: np.dtype[Any]) -> bool:
    """float16, bfloat16, float32 or float64 (ml_dtypes' bfloat16 is not a numpy floating kind)."""
    return dtype == BFLOAT16 or np.issubdtype(dtype, np.floating)


def accumulator(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype a `dtype` operand is computed in: float64 stays float64, every other float is float32."""
    return FLOAT64 if dtype == FLOAT64 else FLOAT32


def wide(x: np.ndarray) -> np.ndarray:
    """`x` as the float array it is computed with (float32, or float64 for float64); integers become float32."""
    target = FLOAT64 if x.dtype == FLOAT64 else FLOAT32
    return x if x.dtype == target else x.astype(target)


def store(out: np.ndarray, result: np.ndarray) -> None:
    """Round `result` once into `out` (a writeable view), as the NPU's final cast does."""
    np.copyto(out, result, casting="unsafe")
