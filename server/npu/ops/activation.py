"""Activation kernels: Gelu (erf form, torch's default), Silu and Softmax.

Gelu and Silu run chunk by chunk through a buffered `np.nditer`, so any strides and dtypes work and the
temporaries stay a few chunks in size whatever the tensor. Gelu evaluates in float64 for every dtype (the erf
fit is a float64 one; fp32 results are then correctly rounded, not merely within an NPU's ulp); Silu in the
compute dtype. Results round to the result dtype, then cast to out's. Softmax normalizes in its workspace,
a compute-dtype scratch as large as the input.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

import numpy as np

from proto.aclnn.rules import int_attr, wrap_dim
from server.npu.ops.erf import erf
from server.npu.ops.launch import Kernel, Launch, Plan

CHUNK: Final = 1 << 16
SQRT1_2: Final = math.sqrt(0.5)


def chunked(fn: Callable[[np.ndarray, np.ndarray], None], *, float64: bool = False) -> Kernel:
    """out = fn(self) over chunks: read in the compute dtype (or float64), written in the result dtype.

    nditer casts each result chunk into out, and copies an input that overlaps out before starting.
    """

    def plan(launch: Launch) -> Plan:
        x, out = launch.read("self"), launch.write("out")
        dtypes = [np.dtype(np.float64) if float64 else launch.compute, launch.result]

        def run() -> None:
            it = np.nditer(
                [x, out],
                flags=["external_loop", "buffered", "zerosize_ok", "copy_if_overlap"],
                op_flags=[["readonly"], ["writeonly"]],
                op_dtypes=dtypes,
                casting="unsafe",
                buffersize=CHUNK,
            )
            with it:
                for xs, outs in it:
                    fn(xs, outs)

        return run

    return plan


def _gelu(x: np.ndarray, out: np.ndarray) -> None:
    """x · Φ(x) = x/2 · (1 + erf(x/√2))."""
    np.multiply(x, 0.5 * (1.0 + erf(x * SQRT1_2)), out=out, casting="unsafe")


def _silu(x: np.ndarray, out: np.ndarray) -> None:
    """x · sigmoid(x) = x / (1 + exp(-x)); exp overflows to inf for very negative x, giving -0."""
    denominator = np.exp(-x)
    denominator += 1
    np.divide(x, denominator, out=out, casting="unsafe")


def softmax(launch: Launch) -> Plan:
    """out = exp(self - max) / sum(exp(self - max)) along dim, normalized in the workspace."""
    x = launch.read("self")
    if x.size == 0:
        return _nothing
    axis = wrap_dim("dim", int_attr(launch.kernel.args, "dim"), x.ndim)
    x = np.atleast_1d(x)
    scratch = launch.scratch(launch.compute, x.shape)

    def normalize(target: np.ndarray) -> None:
        np.copyto(scratch, x, casting="unsafe")
        scratch[...] -= scratch.max(axis=axis, keepdims=True)
        np.exp(scratch, out=scratch)
        scratch[...] /= scratch.sum(axis=axis, keepdims=True)
        np.copyto(np.atleast_1d(target), scratch, casting="unsafe")

    return launch.into("out", normalize)


def _nothing() -> None:
    pass


KERNELS: Final[dict[str, Kernel]] = {
    "Gelu": chunked(_gelu, float64=True),
    "Silu": chunked(_silu),
    "Softmax": softmax,
}
