"""Activation kernels of ops-nn (hicann/ops-nn activation/): SwiGlu, Sigmoid, LogSoftmax (float32, rounded once)."""

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


def sigmoid(self: Array, out: Array, workspace: Array | None) -> None:
    """out = 1 / (1 + exp(-self)).

    Constraints (activation/sigmoid/op_api/aclnn_sigmoid.h): self FLOAT/FLOAT16/BFLOAT16/DOUBLE (COMPLEX not
    handled); out self's shape and a float dtype.
    """
    with np.errstate(over="ignore"):
        store(out, 1 / (1 + np.exp(-wide(self))))


def log_softmax(self: Array, dim: int, out: Array, workspace: Array | None) -> None:
    """out = self - max - log(sum(exp(self - max))) along dim.

    Constraints (activation/log_softmax_v2/op_api/aclnn_logsoftmax.h): self FLOAT/FLOAT16/BFLOAT16/DOUBLE; dim in
    [-rank, rank); out self's shape, a float dtype.
    """
    source = wide(self.reshape(1) if self.ndim == 0 else self)
    d = axis("LogSoftmax", "dim", dim, source.ndim)
    with np.errstate(invalid="ignore", over="ignore"):
        shifted = source - np.max(source, axis=d, keepdims=True)
        store(out, (shifted - np.log(np.sum(np.exp(shifted), axis=d, keepdims=True))).reshape(out.shape))


FUNCTIONS: dict[str, Callable[..., None]] = {"SwiGlu": swi_glu, "Sigmoid": sigmoid, "LogSoftmax": log_softmax}
