"""Float64 references of more of ops-math's elementwise operators (see references.py for the convention): the
in-place twins of the comparisons, logical operators, Lerp, Addcmul, Addcdiv and clamps, the bitwise operators,
RightShift, Gcd, XLogY, IsClose, NanToNum, Signbit, Real, Polar, LinalgCross, and ops-nn's Erfinv and IndexFill.

Written from the operators' documentation (torch's semantics), apart from vnpu's kernels: an in-place twin's
reference is its out-of-place operator's value under the name selfRef.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

Args = dict[str, Any]
Reference = Callable[[Args], dict[str, np.ndarray]]
REFERENCES: dict[str, Reference] = {}
_ERF = np.vectorize(math.erf, otypes=[np.float64])


def f64(value: Any) -> np.ndarray:
    return np.asarray(value, np.float64)


def _first(args: Args) -> np.ndarray:
    return np.asarray(next(args[n] for n in ("selfRef", "self", "input") if n in args))


def _target(args: Args) -> str:
    return "out" if "out" in args else ("selfRef" if "selfRef" in args else "self")


def two(function: Callable[[Any, Any], Any], *names: str, other: str = "other") -> None:
    """out (or the written first tensor) = function(first, other), other a tensor or a scalar's value."""

    def compute(args: Args) -> dict[str, np.ndarray]:
        with np.errstate(all="ignore"):
            return {_target(args): np.asarray(function(_first(args), args[other]))}

    for name in names:
        REFERENCES[name] = compute


_COMPARE = {"Eq": np.equal, "Ne": np.not_equal, "Gt": np.greater, "Ge": np.greater_equal, "Lt": np.less,
            "Le": np.less_equal}  # fmt: skip
for _op, _f in _COMPARE.items():
    two(lambda a, b, f=_f: f(f64(a), f64(b)), f"Inplace{_op}Tensor", f"Inplace{_op}Scalar")
two(lambda a, b: (f64(a) != 0) & (f64(b) != 0), "InplaceLogicalAnd")
two(lambda a, b: (f64(a) != 0) | (f64(b) != 0), "InplaceLogicalOr")
REFERENCES["InplaceLogicalNot"] = lambda a: {"selfRef": f64(a["selfRef"]) == 0}
REFERENCES["InplaceLerp"] = lambda a: {
    "selfRef": f64(a["selfRef"]) + f64(a["weight"]) * (f64(a["end"]) - f64(a["selfRef"]))
}
REFERENCES["InplaceAddcmul"] = lambda a: {
    "selfRef": f64(a["selfRef"]) + float(a["value"]) * f64(a["tensor1"]) * f64(a["tensor2"])
}
REFERENCES["InplaceAddcdiv"] = lambda a: {
    "selfRef": f64(a["selfRef"]) + float(a["value"]) * f64(a["tensor1"]) / f64(a["tensor2"])
}
two(lambda a, b: np.maximum(f64(a), f64(b)), "ClampMinTensor", "InplaceClampMinTensor", other="clipValueMin")
two(lambda a, b: np.minimum(f64(a), f64(b)), "ClampMaxTensor", "InplaceClampMaxTensor", other="max")
two(lambda a, b: np.minimum(f64(a), f64(b)), "InplaceClampMax", other="clipValueMax")


def _integers(a: Any, b: Any) -> tuple[np.ndarray, Any]:
    """Both operands as Python-exact integers (int64; bools as 0/1)."""
    return np.asarray(a).astype(np.int64), (np.asarray(b).astype(np.int64) if not isinstance(b, int) else b)


for _op, _g in (("And", np.bitwise_and), ("Or", np.bitwise_or), ("Xor", np.bitwise_xor)):
    two(lambda a, b, g=_g: g(*_integers(a, b)), f"Bitwise{_op}Tensor", f"Bitwise{_op}Scalar",
        f"InplaceBitwise{_op}Tensor", f"InplaceBitwise{_op}Scalar")  # fmt: skip
two(lambda a, b: np.bitwise_and(*_integers(a, b)), "BitwiseAndTensorOut", "InplaceBitwiseAndTensorOut")


def _right_shift(args: Args) -> dict[str, np.ndarray]:
    """Per element: floor(input / 2**shift) with a negative shift as 0 (floor division is the arithmetic shift)."""
    x, s = np.broadcast_arrays(np.asarray(args["input"]), np.asarray(args["shiftBits"]))
    shifted = [int(v) // 2 ** max(int(k), 0) for v, k in zip(x.ravel(), s.ravel(), strict=True)]
    exact = np.array(shifted, dtype=object).reshape(x.shape)
    return {"out": exact.astype(np.uint64 if x.dtype == np.uint64 else np.int64)}


REFERENCES["RightShift"] = _right_shift
two(lambda a, b: np.gcd(*_integers(a, b)), "Gcd")


def _xlogy(x: Any, y: Any) -> np.ndarray:
    x, y = f64(x), f64(y)
    return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))


two(_xlogy, "XLogYTensor", "XLogYScalarOther", "InplaceXLogYTensor", "InplaceXLogYScalarOther")
REFERENCES["XLogYScalarSelf"] = lambda a: {"out": _xlogy(float(a["self"]), a["other"])}


def _is_close(args: Args) -> dict[str, np.ndarray]:
    a, b = f64(args["self"]), f64(args["other"])
    close = np.isclose(a, b, rtol=float(args["rtol"]), atol=float(args["atol"]), equal_nan=bool(args["equalNan"]))
    return {"out": close}


REFERENCES["IsClose"] = _is_close


def _nan_to_num(args: Args) -> dict[str, np.ndarray]:
    x = f64(_first(args))
    replaced = np.where(np.isnan(x), float(args["nan"]), x)
    replaced = np.where(x == np.inf, float(args["posinf"]), replaced)
    return {_target(args): np.where(x == -np.inf, float(args["neginf"]), replaced)}


REFERENCES["NanToNum"] = REFERENCES["InplaceNanToNum"] = _nan_to_num
REFERENCES["Signbit"] = lambda a: {"out": np.signbit(f64(a["self"]))}
REFERENCES["Real"] = lambda a: {"out": np.real(np.asarray(a["self"])).astype(np.float64)}
REFERENCES["Polar"] = lambda a: {
    "out": f64(a["input"]) * np.cos(f64(a["angle"])) + 1j * f64(a["input"]) * np.sin(f64(a["angle"]))
}


def _cross(args: Args) -> dict[str, np.ndarray]:
    a, b = np.broadcast_arrays(np.asarray(args["self"]), np.asarray(args["other"]))
    d = int(args["dim"]) % a.ndim
    u, v = np.moveaxis(a, d, 0).astype(np.float64), np.moveaxis(b, d, 0).astype(np.float64)
    c = np.stack([u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]])
    return {"out": np.moveaxis(c, 0, d)}


REFERENCES["LinalgCross"] = _cross


def _erfinv(y: np.ndarray) -> np.ndarray:
    """Bisection on math.erf in float64 (±1 gives ±inf, |y| > 1 NaN)."""
    low, high = np.full(y.shape, -7.0), np.full(y.shape, 7.0)
    for _ in range(90):
        middle = (low + high) / 2
        below = _ERF(middle) < y
        low, high = np.where(below, middle, low), np.where(below, high, middle)
    found = (low + high) / 2
    found = np.where(np.abs(y) == 1, np.copysign(np.inf, y), found)
    return np.where(np.abs(y) > 1, np.nan, found)


REFERENCES["Erfinv"] = lambda a: {"out": _erfinv(f64(a["self"]))}
REFERENCES["InplaceErfinv"] = lambda a: {"selfRef": _erfinv(f64(a["selfRef"]))}


def _index_fill(args: Args) -> dict[str, np.ndarray]:
    x = f64(_first(args)).copy()
    if x.ndim == 0:
        hit = any(int(i) in (0, -1) for i in np.ravel(args["index"]))
        return {_target(args): np.asarray(float(args["value"])) if hit else x}
    d = int(args["dim"]) % x.ndim
    size = x.shape[d]
    for i in np.ravel(np.asarray(args["index"])):
        if -size <= int(i) < size:
            where: list[Any] = [slice(None)] * x.ndim
            where[d] = int(i) % size
            x[tuple(where)] = float(args["value"])
    return {_target(args): x}


for _name in ("IndexFill", "InplaceIndexFill", "IndexFillTensor", "InplaceIndexFillTensor"):
    REFERENCES[_name] = _index_fill
REFERENCES["Frac"] = lambda a: {"out": f64(a["input"]) - np.trunc(f64(a["input"]))}

_SAME_NAMED = {
    "input": ("Acos", "Asinh", "Atan", "Atanh", "Frac"),
    "self": ("Hardsigmoid", "Hardswish", "PowTensorScalar", "PowTensorTensor"),
    "selfRef": ("Acosh", "Asin", "Ceil", "Cosh", "Erfc", "Exp2", "Expm1", "Log10", "Log1p", "Log2", "Round", "Sinh",
                "Tan", "Trunc", "Mish", "Selu", "Atan2", "Divs", "FloorDivide", "FloorDivides", "FmodScalar",
                "FmodTensor", "RemainderTensorScalar", "RemainderTensorTensor", "Celu", "Elu", "LeakyRelu",
                "Hardtanh"),
}  # fmt: skip
"""The in-place twins whose reference is their operator's, by the name of the tensor they write (inputRef for the
operators whose first tensor is `input`): the twin's written tensor is the operator's first and its result."""


def _twin(base: str, first: str, source: str) -> Reference:
    def compute(args: Args) -> dict[str, np.ndarray]:
        from references import REFERENCES as EVERY  # the whole table, loaded by the time a launch is judged

        renamed = {source if name == first else name: value for name, value in args.items()}
        result = EVERY[base]({**renamed, "out": args[first]})
        return {first: next(iter(result.values()))}

    return compute


for _written, _operators in _SAME_NAMED.items():
    for _operator in _operators:
        _first_name = "inputRef" if _written == "input" else _written
        _source = "input" if _written == "input" else "self"
        REFERENCES[f"Inplace{_operator}"] = _twin(_operator, _first_name, _source)


def _lerps(args: Args) -> dict[str, np.ndarray]:
    start = f64(_first(args))
    return {_target(args): start + float(args["weight"]) * (f64(args["end"]) - start)}


REFERENCES["Lerps"] = REFERENCES["InplaceLerps"] = _lerps


def _sinc(args: Args) -> dict[str, np.ndarray]:
    x = f64(_first(args))
    with np.errstate(all="ignore"):
        return {_target(args): np.where(x == 0, 1.0, np.sin(np.pi * x) / (np.pi * x))}


REFERENCES["Sinc"] = REFERENCES["InplaceSinc"] = _sinc
REFERENCES["IsNegInf"] = lambda a: {"out": f64(a["self"]) == -np.inf}
REFERENCES["IsPosInf"] = lambda a: {"out": f64(a["self"]) == np.inf}


def _left_shift(args: Args, bits: int) -> np.ndarray:
    """self · 2**shift in Python integers, kept to the output's low bits (two's complement); shifts outside
    [0, 63] give 0."""
    x, s = np.broadcast_arrays(np.asarray(args["self"]), np.asarray(args["shiftBits"]))
    kept = []
    for v, k in zip(x.ravel().tolist(), s.ravel().tolist(), strict=True):
        r = (int(v) * 2 ** int(k)) % 2**bits if 0 <= int(k) <= 63 else 0
        kept.append(r - 2**bits if r >= 2 ** (bits - 1) else r)
    return np.array(kept, np.int64).reshape(x.shape)


def _shift_left(args: Args) -> dict[str, np.ndarray]:
    bits = 8 * np.asarray(args["self"]).dtype.itemsize
    return {"out": _left_shift(args, 64 if bits > 32 else 32 if bits > 16 else bits)}


REFERENCES["LeftShift"] = REFERENCES["LeftShifts"] = _shift_left
two(lambda a, b: np.logaddexp(f64(a), f64(b)), "LogAddExp")
two(lambda a, b: np.logaddexp2(f64(a), f64(b)), "LogAddExp2")
REFERENCES["Rsub"] = REFERENCES["Rsubs"] = lambda a: {"out": f64(a["other"]) - float(a["alpha"]) * f64(a["self"])}


def _remainder_scalar_tensor(args: Args) -> dict[str, np.ndarray]:
    """self - floor(self / other) · other; an integer remainder by zero is self (the documentation)."""
    a, b = float(args["self"]), f64(args["other"])
    integers = np.asarray(args["other"]).dtype.kind in "iu" and isinstance(args["self"], int)
    with np.errstate(all="ignore"):
        mod = a - np.floor(a / b) * b
    return {"out": np.where((b == 0) & integers, a, mod)}


REFERENCES["RemainderScalarTensor"] = _remainder_scalar_tensor
REFERENCES["Square"] = lambda a: {"out": f64(a["self"]) ** 2}
REFERENCES["Xlog1py"] = lambda a: {
    "z": np.where((f64(a["x"]) == 0) & ~np.isnan(f64(a["y"])), 0.0, f64(a["x"]) * np.log1p(f64(a["y"])))
}


def _round_decimals(args: Args) -> dict[str, np.ndarray]:
    """Half to even at `decimals` places (torch.round with decimals)."""
    x, places = f64(_first(args)), int(args["decimals"])
    scale = 10.0 ** abs(places)
    return {_target(args): np.round(x * scale) / scale if places >= 0 else np.round(x / scale) * scale}


REFERENCES["RoundDecimals"] = REFERENCES["InplaceRoundDecimals"] = _round_decimals


def _div_mod(args: Args) -> dict[str, np.ndarray]:
    """self / other, then nothing (mode 0), toward zero (1) or down (2)."""
    with np.errstate(all="ignore"):
        quotient = f64(_first(args)) / f64(args["other"])
    mode = int(args["mode"])
    return {_target(args): quotient if mode == 0 else np.trunc(quotient) if mode == 1 else np.floor(quotient)}


for _name in ("DivMod", "DivMods", "InplaceDivMod", "InplaceDivMods"):
    REFERENCES[_name] = _div_mod


def _is_in(args: Args) -> dict[str, np.ndarray]:
    """IsInTensorScalar: each element equal to the test element; IsInScalarTensor: the element among the test
    elements (one bool). invert negates."""
    if "testElements" in args:
        found = np.asarray(bool(np.any(f64(args["testElements"]) == float(args["element"]))))
    else:
        found = f64(args["element"]) == float(args["testElement"])
    return {"out": ~found if args["invert"] else found}


REFERENCES["IsInScalarTensor"] = REFERENCES["IsInTensorScalar"] = _is_in
REFERENCES["Equal"] = lambda a: {
    "out": np.array([np.shape(a["self"]) == np.shape(a["other"]) and bool(np.all(f64(a["self"]) == f64(a["other"])))])
}
REFERENCES["Complex"] = lambda a: {"out": f64(a["real"]) + 1j * f64(a["imag"])}


def _log_gamma(x: float) -> float:
    """log|Γ(x)| through math.gamma (Euler's reflection below 0.5, the recurrence above 150)."""
    if not math.isfinite(x):
        return math.inf if not math.isnan(x) else math.nan
    if x <= 0 and x == math.floor(x):
        return math.inf
    if x < 0.5:
        return math.log(math.pi / abs(math.sin(math.pi * x))) - _log_gamma(1 - x)
    shift = 0.0
    while x > 150:
        x -= 1
        shift += math.log(x)
    return math.log(math.gamma(x)) + shift


REFERENCES["Lgamma"] = lambda a: {"out": np.vectorize(_log_gamma, otypes=[np.float64])(f64(a["self"]))}


def _digamma(x: float) -> float:
    """ψ(x) as the derivative of log Γ, by Richardson-extrapolated central differences."""
    if x <= 0 and x == math.floor(x):
        return -math.inf if x == 0 else math.nan
    h = 1e-3 * max(1.0, abs(x))
    d1 = (_log_gamma(x + h) - _log_gamma(x - h)) / (2 * h)
    d2 = (_log_gamma(x + h / 2) - _log_gamma(x - h / 2)) / h
    return (4 * d2 - d1) / 3


REFERENCES["Digamma"] = lambda a: {"out": np.vectorize(_digamma, otypes=[np.float64])(f64(a["self"]))}

REFERENCES["FastGelu"] = lambda a: {"out": f64(a["self"]) / (1 + np.exp(-1.702 * f64(a["self"])))}
REFERENCES["LogSigmoid"] = REFERENCES["LogSigmoidForward"] = lambda a: {"out": -np.logaddexp(0.0, -f64(a["self"]))}
REFERENCES["Heaviside"] = lambda a: {"out": np.heaviside(f64(a["input"]), f64(a["values"]))}


def _threshold(args: Args) -> dict[str, np.ndarray]:
    x = f64(_first(args))
    return {_target(args): np.where(x > float(args["threshold"]), x, float(args["value"]))}


REFERENCES["Threshold"] = REFERENCES["InplaceThreshold"] = _threshold


def _shrink(args: Args) -> dict[str, np.ndarray]:
    x, lambd, bias = f64(args["self"]), float(args["lambd"]), float(args["bias"])
    return {"out": np.where(x > lambd, x - bias, np.where(x < -lambd, x + bias, 0.0))}


REFERENCES["Shrink"] = _shrink


def _hardsigmoid_v2(args: Args) -> dict[str, np.ndarray]:
    source = np.asarray(args["self"])
    if source.dtype.kind in "iu":  # the integer path: 1 from 3 up, else 0
        return {_target(args): (source >= 3).astype(np.float64)}
    return {_target(args): np.clip(f64(source) / 6 + 0.5, 0.0, 1.0)}


REFERENCES["HardsigmoidV2"] = REFERENCES["InplaceHardsigmoidV2"] = _hardsigmoid_v2


def _fast_gelu_v2(args: Args) -> dict[str, np.ndarray]:
    x = f64(args["x"])
    sign = np.where(x + 1e-12 >= 0, 1.0, -1.0)
    return {"out": x * (sign * (-0.1444 * (np.minimum(np.abs(0.7071 * x), 1.769) - 1.769) ** 2 + 0.5) + 0.5)}


REFERENCES["FastGeluV2"] = _fast_gelu_v2


def _fused_bias_leaky_relu(args: Args) -> dict[str, np.ndarray]:
    s = f64(args["x"]) + f64(args["bias"])
    slope, scale = float(args["negativeSlope"]), float(args["scale"])
    return {"out": np.where(s >= 0, s, slope * s) * scale}


REFERENCES["FusedBiasLeakyRelu"] = _fused_bias_leaky_relu


def _add_v3(args: Args) -> dict[str, np.ndarray]:
    """A scalar plus alpha times the tensor other (into out, or into other in place)."""
    first = float(args["self"] if "self" in args else args["selfRef"])
    return {"out" if "out" in args else "other": first + float(args["alpha"]) * f64(args["other"])}


REFERENCES["AddV3"] = REFERENCES["InplaceAddV3"] = _add_v3


def _extreme_n(pick: Callable[[Any, Any], Any]) -> Reference:
    def compute(args: Args) -> dict[str, np.ndarray]:
        values = [f64(t) for t in args["tensors"]]
        result = values[0]
        for value in values[1:]:
            result = pick(result, value)
        return {"out": result}

    return compute


REFERENCES["MaxN"] = _extreme_n(np.maximum)
REFERENCES["MinN"] = _extreme_n(np.minimum)
