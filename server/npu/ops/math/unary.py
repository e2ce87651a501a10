"""Elementwise functions of one tensor (hicann/ops-math math/): trigonometric, exponential and logarithmic, rounding,
logical, and their in-place twins (InplaceExp, InplaceSqrt, ...).

Floats compute in float32 (float64 for float64) and round once into the output, as the vector unit does; an
integer or bool input of a float function computes in float32 (the output is a float dtype, phase 1 checked).
Rounding, sign and logical functions keep integers exact. Each kernel is made by `pointwise` under the operator's
C argument names (Cos takes `input`, Sign writes `result`, InplaceSqrt writes `self`).

Constraints (ops-math math/<op>/op_api/aclnn_<op>.h, torch's functions): float functions take FLOAT/FLOAT16/
BFLOAT16/DOUBLE and integer/bool inputs (computed as float), their out a float dtype of self's shape; rounding
functions and Sign keep the dtype; LogicalNot any dtype into BOOL (or a castable dtype); BitwiseNot integer/BOOL;
IsFinite/IsInf any real dtype into BOOL. An in-place twin writes its one tensor, which must be a float dtype for a
float function.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from server.npu.ops.common.numeric import is_float, store, wide
from server.npu.ops.erf import erf

Array = np.ndarray
Fn = Callable[[Array], Array]


def _float(f: Fn) -> Fn:
    """f over the float array the value is computed with (float32, or float64 for float64 input)."""
    return lambda x: f(wide(x))


def _exact(f: Fn) -> Fn:
    """f in the input's own dtype for integers (exact), in float32/64 for floats."""
    return lambda x: f(wide(x)) if is_float(x.dtype) else f(x)


_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _erf(x: Array) -> Array:
    return erf(x.astype(np.float64))  # the polynomial erf of server.npu.ops.erf, float64 (2e-15)


def _erfc(x: Array) -> Array:
    return np.asarray(_ERFC(x.astype(np.float64)), np.float64)  # exact far into the tail, where 1 - erf is not


def _frac(x: Array) -> Array:
    result: Array = x - np.trunc(x)
    return result


def _hardswish(x: Array) -> Array:
    result: Array = x * np.clip(x + 3, 0, 6) / 6
    return result


def _hardsigmoid(x: Array) -> Array:
    return np.clip(x / 6 + 0.5, 0, 1)


def _mish(x: Array) -> Array:
    result: Array = x * np.tanh(np.logaddexp(0, x))
    return result


def _selu(x: Array) -> Array:
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return scale * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _sigmoid(x: Array) -> Array:
    return 0.5 * (np.tanh(0.5 * x) + 1)


def _round(x: Array) -> Array:
    return np.round(x) if is_float(x.dtype) else x  # numpy rounds half to even, as torch.round


FUNCTIONS_OF: dict[str, tuple[Fn, str]] = {
    # name: (f, what it computes) -- the float functions
    "Sin": (_float(np.sin), "sin"),
    "Cos": (_float(np.cos), "cos"),
    "Tan": (_float(np.tan), "tan"),
    "Tanh": (_float(np.tanh), "tanh"),
    "Asin": (_float(np.arcsin), "arcsin"),
    "Acos": (_float(np.arccos), "arccos"),
    "Atan": (_float(np.arctan), "arctan"),
    "Sinh": (_float(np.sinh), "sinh"),
    "Cosh": (_float(np.cosh), "cosh"),
    "Asinh": (_float(np.arcsinh), "arcsinh"),
    "Acosh": (_float(np.arccosh), "arccosh"),
    "Atanh": (_float(np.arctanh), "arctanh"),
    "Erf": (_float(_erf), "erf"),
    "Erfc": (_float(_erfc), "erfc"),
    "Log": (_float(np.log), "ln"),
    "Log2": (_float(np.log2), "log2"),
    "Log10": (_float(np.log10), "log10"),
    "Log1p": (_float(np.log1p), "ln(1 + x)"),
    "Exp2": (_float(np.exp2), "2 ** x"),
    "Expm1": (_float(np.expm1), "e ** x - 1"),
    "Sqrt": (_float(np.sqrt), "sqrt"),
    "Reciprocal": (_float(np.reciprocal), "1 / x"),
    "Frac": (_float(_frac), "x - trunc(x)"),
    "Hardswish": (_float(_hardswish), "x · relu6(x + 3) / 6"),
    "HardSwish": (_float(_hardswish), "x · relu6(x + 3) / 6"),
    "Hardsigmoid": (_float(_hardsigmoid), "relu6(x + 3) / 6"),
    "Mish": (_float(_mish), "x · tanh(softplus(x))"),
    "Selu": (_float(_selu), "scale · (max(0, x) + min(0, alpha · (e ** x - 1)))"),
    # exact for integers
    "Sign": (_exact(np.sign), "the sign (-1, 0, 1)"),
    "Floor": (_exact(np.floor), "floor"),
    "Ceil": (_exact(np.ceil), "ceil"),
    "Round": (_exact(_round), "round half to even"),
    "Trunc": (_exact(np.trunc), "trunc"),
    "Neg": (_exact(np.negative), "-x"),
    "LogicalNot": (np.logical_not, "not x (nonzero is true)"),
    "BitwiseNot": (np.invert, "~x (logical not for BOOL)"),
    "IsFinite": (np.isfinite, "whether x is finite"),
    "IsInf": (np.isinf, "whether x is ±inf"),
    "Exp": (_float(np.exp), "e ** x"),
    "Rsqrt": (_float(lambda x: 1 / np.sqrt(x)), "1 / sqrt(x)"),
    "Sigmoid": (_float(_sigmoid), "1 / (1 + e ** -x)"),
    "Relu": (_exact(lambda x: np.where(np.isnan(x) if is_float(x.dtype) else False, x, np.maximum(x, 0))), "max(x, 0)"),
}


def _signature(*names: str) -> inspect.Signature:
    return inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])


def pointwise(name: str, x: str = "self", out: str = "out") -> Callable[..., None]:
    """The kernel of `name` (a function of FUNCTIONS_OF) reading `x`, writing `out` (the same name: in place)."""
    f, what = FUNCTIONS_OF[name]

    def kernel(**args: Any) -> None:
        with np.errstate(all="ignore"):
            store(args[out], f(args[x]))

    names = (x, "workspace") if x == out else (x, out, "workspace")
    kernel.__signature__ = _signature(*names)  # type: ignore[attr-defined]
    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"{out} = {what} of {x}, elementwise (see the module's constraints)."
    return kernel


UNARY: dict[str, tuple[str, str]] = {
    "Sin": ("self", "out"),
    "Cos": ("input", "out"),
    "Tan": ("self", "out"),
    "Tanh": ("self", "out"),
    "Asin": ("self", "out"),
    "Acos": ("input", "out"),
    "Atan": ("input", "out"),
    "Sinh": ("self", "out"),
    "Cosh": ("self", "out"),
    "Asinh": ("input", "out"),
    "Acosh": ("self", "out"),
    "Atanh": ("input", "out"),
    "Erf": ("self", "out"),
    "Erfc": ("self", "out"),
    "Log": ("self", "out"),
    "Log2": ("self", "out"),
    "Log10": ("self", "out"),
    "Log1p": ("self", "out"),
    "Exp2": ("self", "out"),
    "Expm1": ("self", "out"),
    "Sqrt": ("self", "out"),
    "Reciprocal": ("self", "out"),
    "Frac": ("input", "out"),
    "Hardswish": ("self", "out"),
    "HardSwish": ("x", "out"),
    "Hardsigmoid": ("self", "out"),
    "Mish": ("self", "out"),
    "Selu": ("self", "out"),
    "Sign": ("self", "result"),
    "Floor": ("self", "out"),
    "Ceil": ("self", "out"),
    "Round": ("self", "out"),
    "Trunc": ("self", "out"),
    "LogicalNot": ("self", "out"),
    "BitwiseNot": ("self", "out"),
    "IsFinite": ("self", "out"),
    "IsInf": ("x", "out"),
}
"""The out-of-place functions: name -> (input, output) C names."""

INPLACE: dict[str, tuple[str, str]] = {
    "InplaceExp": ("Exp", "selfRef"),
    "InplaceSqrt": ("Sqrt", "self"),
    "InplaceRsqrt": ("Rsqrt", "selfRef"),
    "InplaceNeg": ("Neg", "selfRef"),
    "InplaceTanh": ("Tanh", "selfRef"),
    "InplaceSigmoid": ("Sigmoid", "selfRef"),
    "InplaceLog": ("Log", "selfRef"),
    "InplaceReciprocal": ("Reciprocal", "selfRef"),
    "InplaceFloor": ("Floor", "selfRef"),
    "InplaceRelu": ("Relu", "selfRef"),
    "InplaceSin": ("Sin", "selfRef"),
    "InplaceCos": ("Cos", "inputRef"),
    "InplaceErf": ("Erf", "selfRef"),
}
"""The in-place twins: name -> (the function, the C name of the tensor read and written)."""


def _inplace(name: str, function: str, ref: str) -> Callable[..., None]:
    kernel = pointwise(function, ref, ref)
    kernel.__name__ = kernel.__qualname__ = name
    return kernel


FUNCTIONS: dict[str, Callable[..., None]] = {name: pointwise(name, x, out) for name, (x, out) in UNARY.items()} | {
    name: _inplace(name, function, ref) for name, (function, ref) in INPLACE.items()
}
