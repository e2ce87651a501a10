"""Elementwise functions of two operands (hicann/ops-math math/): Maximum, Minimum, Atan2, the powers, Remainder,
Fmod, FloorDivide, Divs, the logical operators, Lerp, Addcmul, Addcdiv, and the
in-place twins of the arithmetic operators (InplaceSub, InplaceSubs, InplaceAdds, InplaceMuls).

Operands broadcast; the result is computed in the promoted dtype (fp16/bf16 in float32) and rounded once into the
output, integers exactly. A scalar operand is its value (phase 1 checked that it promotes).

Constraints (ops-math math/<op>/op_api/aclnn_<op>.h, torch's operators): self and other FLOAT/FLOAT16/BFLOAT16/
DOUBLE/INT8-64/UINT8 (BOOL for the logical and comparison ones, Maximum and Minimum) that promote, shapes that
broadcast; out the broadcast shape and a dtype the promoted one casts to (BOOL or any dtype for comparisons and
logical operators; a float dtype for Atan2 and Divs with integers); Remainder, Fmod and FloorDivide refuse BOOL;
an integer divisor of zero is refused when the kernel runs (161002 naming other) -- except by Remainder, whose
documentation makes an integer remainder by zero self (math/floor_mod/docs, its constraints).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.numeric import is_float, store, wide

Array = np.ndarray
Op = Callable[[Array, Array], Array]


def _operands(x: Any, y: Any) -> tuple[Any, Any]:
    """The two operands as they are computed: in float32 (float64 if a tensor is float64) when either is a float (an
    array or a Python float: a scalar never widens a tensor), else as exact integers (int64)."""
    arrays = [v for v in (x, y) if isinstance(v, np.ndarray)]
    floating = any(isinstance(v, float) for v in (x, y)) or any(is_float(v.dtype) for v in arrays)
    if floating:
        dtype = np.float64 if any(v.dtype == np.float64 for v in arrays) else np.float32
        return tuple(v.astype(dtype) if isinstance(v, np.ndarray) else dtype(v) for v in (x, y))  # type: ignore[return-value]
    return tuple(v.astype(np.int64) if isinstance(v, np.ndarray) else np.int64(v) for v in (x, y))  # type: ignore[return-value]


def _nonzero(op: str, name: str, y: Any) -> None:
    if not is_float(np.asarray(y).dtype) and np.any(np.asarray(y) == 0):
        raise invalid(op, name, "holds a zero: integer division by zero")


def _remainder(x: Any, y: Any) -> Any:
    """The sign of the divisor (torch.remainder); an integer divisor of zero leaves self."""
    if is_float(np.asarray(y).dtype) or is_float(np.asarray(x).dtype):
        return np.remainder(x, y)
    zero = np.asarray(y) == 0
    return np.where(zero, x, np.remainder(x, np.where(zero, 1, y)))


def _fmod(x: Any, y: Any) -> Any:
    return np.fmod(x, y)  # the sign of the dividend (torch.fmod)


def _floor_divide(x: Any, y: Any) -> Any:
    return np.floor_divide(x, y)


def _signature(*names: str) -> inspect.Signature:
    return inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])


def binary(name: str, op: Op, what: str, *, x: str = "self", y: str = "other", out: str = "out",
           divides: bool = False, floats: bool = False, scaled: bool = False) -> Callable[..., None]:  # fmt: skip
    """The kernel of `name`: out = op(x, y) (`floats`: integers compute as float; `scaled`: y · alpha first;
    out == x: in place)."""

    def kernel(**args: Any) -> None:
        a, b = _operands(args[x], args[y])
        if floats:
            a, b = (np.asarray(v, np.float32) if not is_float(np.asarray(v).dtype) else v for v in (a, b))
        if scaled and args["alpha"] != 1:
            b = b * np.asarray(args["alpha"]).astype(np.asarray(b).dtype)
        if divides:
            _nonzero(name, y, b)
        with np.errstate(all="ignore"):
            store(args[out], op(a, b))

    names = [x, y] + (["alpha"] if scaled else []) + ([] if out == x else [out]) + ["workspace"]
    kernel.__signature__ = _signature(*names)  # type: ignore[attr-defined]
    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"{out} = {what}, broadcasting (see the module's constraints)."
    return kernel


def lerp(self: Array, end: Array, weight: Array, out: Array, workspace: Array | None) -> None:
    """out = self + weight · (end - self), broadcasting all three (torch.lerp with a tensor weight).

    Constraints (ops-math math/lerp, aclnn_lerp.h): self, end, weight FLOAT/FLOAT16/BFLOAT16 of one dtype, shapes
    that broadcast; out the broadcast shape and dtype."""
    a, b, w = wide(self), wide(end), wide(weight)
    store(out, a + w * (b - a))


def addcmul(self: Array, tensor1: Array, tensor2: Array, value: Any, out: Array, workspace: Array | None) -> None:
    """out = self + value · tensor1 · tensor2, broadcasting (torch.addcmul).

    Constraints (ops-math math/addcmul, aclnn_addcmul.h): self, tensor1, tensor2 FLOAT/FLOAT16/BFLOAT16/INT32/INT64/
    INT8/UINT8 that promote and broadcast; value a scalar; out the broadcast shape, the promoted dtype."""
    if all(not is_float(t.dtype) for t in (self, tensor1, tensor2)) and not isinstance(value, float):
        store(out, self.astype(np.int64) + int(value) * tensor1.astype(np.int64) * tensor2.astype(np.int64))
        return
    store(out, wide(self) + np.float32(value) * (wide(tensor1) * wide(tensor2)))


def addcdiv(self: Array, tensor1: Array, tensor2: Array, value: Any, out: Array, workspace: Array | None) -> None:
    """out = self + value · tensor1 / tensor2, broadcasting (torch.addcdiv: true division).

    Constraints (ops-math math/addcdiv, aclnn_addcdiv.h): self, tensor1, tensor2 FLOAT/FLOAT16/BFLOAT16 that
    broadcast; value a scalar; out the broadcast shape, the promoted dtype."""
    with np.errstate(all="ignore"):
        store(out, wide(self) + np.float32(value) * (wide(tensor1) / wide(tensor2)))


def pow_scalar_tensor(self: Any, exponent: Array, out: Array, workspace: Array | None) -> None:
    """out = self ** exponent with a scalar base (torch.pow(scalar, tensor)).

    Constraints (math/pow/op_api/aclnn_pow.h): exponent FLOAT/FLOAT16/BFLOAT16/DOUBLE/INT8-64/UINT8; self a scalar;
    out exponent's shape, the promoted dtype (a float base makes it float)."""
    if isinstance(self, float) or is_float(exponent.dtype) or is_float(out.dtype):
        with np.errstate(all="ignore"):
            store(out, np.power(np.float64(self), wide(exponent).astype(np.float64)))
        return
    if np.any(exponent < 0):
        raise invalid("PowScalarTensor", "exponent", "holds a negative value: integers to negative powers")
    store(out, np.power(np.int64(self), exponent.astype(np.int64)))


_B = binary
FUNCTIONS: dict[str, Callable[..., None]] = {
    "Maximum": _B("Maximum", np.maximum, "max(self, other), NaN propagating"),
    "Minimum": _B("Minimum", np.minimum, "min(self, other), NaN propagating"),
    "Atan2": _B("Atan2", np.arctan2, "atan2(self, other)", floats=True),
    "PowTensorTensor": _B("PowTensorTensor", np.power, "self ** exponent", y="exponent"),
    "RemainderTensorTensor": _B("RemainderTensorTensor", _remainder, "self mod other (divisor's sign)"),
    "RemainderTensorScalar": _B("RemainderTensorScalar", _remainder, "self mod other (divisor's sign)"),
    "FmodTensor": _B("FmodTensor", _fmod, "fmod(self, other) (dividend's sign)", divides=True),
    "FmodScalar": _B("FmodScalar", _fmod, "fmod(self, other) (dividend's sign)", divides=True),
    "FloorDivide": _B("FloorDivide", _floor_divide, "floor(self / other)", divides=True),
    "FloorDivides": _B("FloorDivides", _floor_divide, "floor(self / other)", divides=True),
    "Divs": _B("Divs", np.true_divide, "self / other (true division)", floats=True),
    "LogicalAnd": _B("LogicalAnd", np.logical_and, "self and other (nonzero is true)"),
    "LogicalOr": _B("LogicalOr", np.logical_or, "self or other"),
    "LogicalXor": _B("LogicalXor", np.logical_xor, "self xor other"),
    "InplaceSub": _B("InplaceSub", np.subtract, "selfRef - alpha · other", x="selfRef", out="selfRef", scaled=True),
    "InplaceSubs": _B("InplaceSubs", np.subtract, "selfRef - alpha · other", x="selfRef", out="selfRef", scaled=True),
    "InplaceAdds": _B("InplaceAdds", np.add, "selfRef + alpha · other", x="selfRef", out="selfRef", scaled=True),
    "InplaceMuls": _B("InplaceMuls", np.multiply, "selfRef · other", x="selfRef", out="selfRef"),
    "Lerp": lerp,
    "Addcmul": addcmul,
    "Addcdiv": addcdiv,
    "PowScalarTensor": pow_scalar_tensor,
}
