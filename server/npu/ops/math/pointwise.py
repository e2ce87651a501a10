"""Pointwise math (hicann/ops-math): Rsqrt, PowTensorScalar, Clamp, InplaceDiv.

Floats compute in float32 (float64 for float64) and round once into out; integer inputs of Rsqrt compute in
float32 (the result is float); integer powers wrap in the output's integer dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.numeric import is_float, store, wide

Array = np.ndarray


def rsqrt(self: Array, out: Array, workspace: Array | None) -> None:
    """out = 1 / sqrt(self) (negative → NaN, 0 → inf).

    Constraints (ops-math experimental/math/rsqrt, aclnn_rsqrt.h): self FLOAT/FLOAT16/BFLOAT16/DOUBLE or an integer/
    BOOL dtype (computed as float); out self's shape, a float dtype.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        store(out, 1 / np.sqrt(wide(self)))


def pow_tensor_scalar(self: Array, exponent: Any, out: Array, workspace: Array | None) -> None:
    """out = self ** exponent (torch.pow with a scalar exponent).

    Constraints (math/pow/op_api/aclnn_pow.h, torch.pow): self FLOAT/FLOAT16/BFLOAT16/DOUBLE/INT8-64/UINT8; exponent a
    scalar; an integer self with an integer exponent stays integer (negative exponents are refused, as torch
    does); a float exponent makes the result float; out self's shape and the promoted dtype.
    """
    if not is_float(self.dtype) and not is_float(out.dtype) and not isinstance(exponent, float):
        if exponent < 0:
            raise invalid("PowTensorScalar", "exponent", f"is {exponent}: integers to negative powers are refused")
        out[...] = np.power(self.astype(np.int64), int(exponent)).astype(out.dtype)
        return
    with np.errstate(all="ignore"):
        base = wide(self) if is_float(self.dtype) else self.astype(np.float32)
        store(out, np.power(base, base.dtype.type(exponent)))


def clamp(self: Array, clipValueMin: Any, clipValueMax: Any, out: Array, workspace: Array | None) -> None:
    """out = min(max(self, clipValueMin), clipValueMax); a null bound is absent; min > max gives max everywhere
    (torch.clamp); NaN stays NaN.

    Constraints (conversion/clip_by_value_v2/op_api/aclnn_clamp.h, torch.clamp): self FLOAT/FLOAT16/BFLOAT16/
    DOUBLE/INT8-64/UINT8; at least one bound; out self's shape and the promoted dtype.
    """
    if clipValueMin is None and clipValueMax is None:
        raise invalid("Clamp", "clipValueMin", "and clipValueMax are both null; at least one bound is required")
    floating = is_float(self.dtype) or isinstance(clipValueMin, float) or isinstance(clipValueMax, float)
    v = wide(self) if floating else self.astype(np.int64)
    result = v
    if clipValueMin is not None:
        result = np.where(np.isnan(v) if floating else False, v, np.maximum(result, clipValueMin))
    if clipValueMax is not None:
        result = np.where(np.isnan(v) if floating else False, v, np.minimum(result, clipValueMax))
    np.copyto(out, result, casting="unsafe")


def inplace_div(selfRef: Array, other: Array, workspace: Array | None) -> None:
    """selfRef = selfRef / other (true division, other broadcast to selfRef's shape).

    Constraints (math/div/op_api/aclnn_div.h): selfRef and other FLOAT/FLOAT16/BFLOAT16/DOUBLE (integers divide as
    float; the result must cast back to selfRef's dtype); other broadcastable to selfRef.
    """
    try:
        fits = np.broadcast_shapes(selfRef.shape, other.shape) == selfRef.shape
    except ValueError:
        fits = False
    if not fits:
        raise invalid("InplaceDiv", "other", f"shape {other.shape} does not broadcast to selfRef {selfRef.shape}")
    with np.errstate(divide="ignore", invalid="ignore"):
        store(selfRef, wide(selfRef) / wide(other))


FUNCTIONS: dict[str, Callable[..., None]] = {
    "Rsqrt": rsqrt,
    "PowTensorScalar": pow_tensor_scalar,
    "Clamp": clamp,
    "InplaceDiv": inplace_div,
}
