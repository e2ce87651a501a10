"""Activation kernels of ops-nn (hicann/ops-nn activation/): SwiGlu."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.indices import axis
from server.npu.ops.common.numeric import store, wide

Array = np.ndarray


def swi_glu(x: Array, dim: int, out: Array, workspace: Array | None) -> None:
    """out = Swish(A) · B = A · sigmoid(A) · B, with A and B the first and second halves of x along dim.

    Constraints (activation/swi_glu/docs/aclnnSwiGlu.md): x BFLOAT16/FLOAT16/FLOAT32, rank > 0, even along dim;
    dim in [-rank, rank - 1]; out x's dtype and shape with dim halved.
    """
    op = "SwiGlu"
    d = axis(op, "dim", dim, x.ndim)
    if x.ndim == 0 or x.shape[d] % 2:
        raise invalid(op, "x", f"shape {x.shape} is not even along dim {dim}")
    a, b = np.split(wide(x), 2, axis=d)
    with np.errstate(over="ignore"):
        store(out, a / (1 + np.exp(-a)) * b)


FUNCTIONS: dict[str, Callable[..., None]] = {"SwiGlu": swi_glu}
