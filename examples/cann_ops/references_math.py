"""Float64 references of ops-math's pointwise, comparison, reduction and shape operators (see references.py for the
convention: a launch's arguments by C name in, the written tensors by name out)."""

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


def _input(args: Args) -> np.ndarray:
    for name in ("self", "input", "x", "selfRef"):
        if name in args:
            return f64(args[name])
    raise KeyError("no input tensor")


def _out(args: Args) -> str:
    for name in ("out", "y", "result", "selfRef"):
        if name in args:
            return name
    raise KeyError("no output tensor")


def unary(function: Callable[[np.ndarray], np.ndarray], *names: str) -> None:
    def compute(args: Args) -> dict[str, np.ndarray]:
        with np.errstate(all="ignore"):
            return {_out(args): function(_input(args))}

    for name in names:
        REFERENCES[name] = compute


unary(np.arccos, "Acos")
unary(np.arccosh, "Acosh")
unary(np.arcsin, "Asin")
unary(np.arcsinh, "Asinh")
unary(np.arctan, "Atan")
unary(np.arctanh, "Atanh")
unary(np.cosh, "Cosh")
unary(np.sinh, "Sinh")
unary(np.tan, "Tan")
unary(np.ceil, "Ceil")
unary(np.floor, "Floor", "InplaceFloor")
unary(np.trunc, "Trunc")
unary(np.round, "Round")  # half to even, as torch.round
unary(np.sign, "Sign")
unary(_ERF, "Erf", "InplaceErf")
unary(lambda x: 1.0 - _ERF(x), "Erfc")
unary(np.exp2, "Exp2")
unary(np.expm1, "Expm1")
unary(np.log10, "Log10")
unary(np.log1p, "Log1p")
unary(np.log2, "Log2")
unary(np.isfinite, "IsFinite")
unary(np.isinf, "IsInf")
unary(lambda x: x == 0, "LogicalNot")
unary(lambda x: np.ones_like(x), "InplaceOne")


def _bitwise_not(args: Args) -> dict[str, np.ndarray]:
    x = np.asarray(args["self"])
    return {"out": ~x if x.dtype != np.float64 else ~x.astype(np.int64)}


REFERENCES["BitwiseNot"] = _bitwise_not


def binary(function: Callable[[Any, Any], Any], *names: str, scalar: bool = False) -> None:
    def compute(args: Args) -> dict[str, np.ndarray]:
        other = float(args["other"]) if scalar else f64(args["other"])
        with np.errstate(all="ignore"):
            return {"out": function(f64(args["self"]), other)}

    for name in names:
        REFERENCES[name] = compute


for _suffix, _scalar in (("Scalar", True), ("Tensor", False)):
    binary(np.equal, f"Eq{_suffix}", scalar=_scalar)
    binary(np.not_equal, f"Ne{_suffix}", scalar=_scalar)
    binary(np.greater, f"Gt{_suffix}", scalar=_scalar)
    binary(np.greater_equal, f"Ge{_suffix}", scalar=_scalar)
    binary(np.less, f"Lt{_suffix}", scalar=_scalar)
    binary(np.less_equal, f"Le{_suffix}", scalar=_scalar)
    binary(np.fmod, f"Fmod{_suffix}", scalar=_scalar)


def remainder(args: Args) -> dict[str, np.ndarray]:
    """self - floor(self / other) · other; an integer remainder by zero is self (the operator's documentation)."""
    a, b = f64(args["self"]), f64(args["other"])
    integers = all(np.asarray(args[k]).dtype.kind in "iub" for k in ("self", "other"))
    with np.errstate(all="ignore"):
        mod = a - np.floor(a / b) * b
    return {"out": np.where((b == 0) & integers, a, mod)}


REFERENCES["RemainderTensorTensor"] = REFERENCES["RemainderTensorScalar"] = remainder
binary(np.arctan2, "Atan2")
binary(np.maximum, "Maximum")
binary(np.minimum, "Minimum")
binary(lambda a, b: np.floor(a / b), "FloorDivide")
binary(lambda a, b: np.floor(a / b), "FloorDivides", scalar=True)
binary(lambda a, b: (a != 0) & (b != 0), "LogicalAnd")
binary(lambda a, b: (a != 0) | (b != 0), "LogicalOr")
binary(lambda a, b: (a != 0) ^ (b != 0), "LogicalXor")
REFERENCES["PowTensorScalar"] = lambda a: {"out": np.power(f64(a["self"]), float(a["exponent"]))}
REFERENCES["PowTensorTensor"] = lambda a: {"out": np.power(f64(a["self"]), f64(a["exponent"]))}
REFERENCES["Addcdiv"] = lambda a: {"out": f64(a["self"]) + float(a["value"]) * f64(a["tensor1"]) / f64(a["tensor2"])}
REFERENCES["Addcmul"] = lambda a: {"out": f64(a["self"]) + float(a["value"]) * f64(a["tensor1"]) * f64(a["tensor2"])}
REFERENCES["Lerp"] = lambda a: {"out": f64(a["self"]) + f64(a["weight"]) * (f64(a["end"]) - f64(a["self"]))}
REFERENCES["Clamp"] = lambda a: {"out": np.clip(f64(a["self"]), float(a["clipValueMin"]), float(a["clipValueMax"]))}
REFERENCES["ClampMin"] = lambda a: {"out": np.maximum(f64(a["self"]), float(a["clipValueMin"]))}
REFERENCES["ClampMax"] = lambda a: {"out": np.minimum(f64(a["self"]), float(a["clipValueMax"]))}
REFERENCES["ClampTensor"] = lambda a: {
    "out": np.minimum(np.maximum(f64(a["self"]), f64(a["clipValueMin"])), f64(a["clipValueMax"]))
}
REFERENCES["SWhere"] = lambda a: {"out": np.where(np.asarray(a["condition"]) != 0, f64(a["self"]), f64(a["other"]))}
REFERENCES["InplaceFillTensor"] = lambda a: {"selfRef": np.broadcast_to(f64(a["value"]), np.shape(a["selfRef"]))}
REFERENCES["InplaceMaskedFillScalar"] = lambda a: {
    "selfRef": np.where(np.asarray(a["mask"]) != 0, float(a["value"]), f64(a["selfRef"]))
}
REFERENCES["InplaceMaskedFillTensor"] = lambda a: {
    "selfRef": np.where(np.asarray(a["mask"]) != 0, f64(a["value"]), f64(a["selfRef"]))
}


def _axes(x: np.ndarray, dims: Any) -> tuple[int, ...]:
    if dims is None or (isinstance(dims, list | tuple) and len(dims) == 0):
        return tuple(range(x.ndim))
    if isinstance(dims, int):
        dims = [dims]
    return tuple(int(d) % max(x.ndim, 1) for d in dims)


def _keep(args: Args) -> bool:
    return bool(next((args[k] for k in ("keepdim", "keepDim", "keepDims") if k in args), False))


def reduction(function: Callable[..., np.ndarray], *names: str) -> None:
    def compute(args: Args) -> dict[str, np.ndarray]:
        x = _input(args)
        return {"out": np.asarray(function(x, axis=_axes(x, args.get("dim")), keepdims=_keep(args)))}

    for name in names:
        REFERENCES[name] = compute


reduction(np.max, "Amax")
reduction(np.min, "Amin")
reduction(lambda x, axis, keepdims: np.all(x != 0, axis=axis, keepdims=keepdims), "All")
reduction(lambda x, axis, keepdims: np.any(x != 0, axis=axis, keepdims=keepdims), "Any")
reduction(lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims)), "LogSumExp")
REFERENCES["Max"] = lambda a: {"out": np.asarray(f64(a["self"]).max())}
REFERENCES["Min"] = lambda a: {"out": np.asarray(f64(a["self"]).min())}
REFERENCES["Prod"] = lambda a: {"out": np.asarray(f64(a["self"]).prod())}
REFERENCES["ProdDim"] = lambda a: {"out": f64(a["self"]).prod(axis=int(a["dim"]), keepdims=_keep(a))}


def _arg(function: Callable[..., np.ndarray]) -> Reference:
    def compute(args: Args) -> dict[str, np.ndarray]:
        x = f64(args["self"])
        dim = int(args["dim"]) % max(x.ndim, 1)
        return {"out": np.asarray(function(x, axis=dim, keepdims=_keep(args)))}

    return compute


REFERENCES["ArgMax"] = _arg(np.argmax)
REFERENCES["ArgMin"] = _arg(np.argmin)


def _extreme_dim(function: Callable[..., np.ndarray], arg: Callable[..., np.ndarray]) -> Reference:
    def compute(args: Args) -> dict[str, np.ndarray]:
        x, keep = f64(args["self"]), _keep(args)
        dim = int(args["dim"]) % max(x.ndim, 1)
        return {"out": function(x, axis=dim, keepdims=keep), "indices": arg(x, axis=dim, keepdims=keep)}

    return compute


REFERENCES["MaxDim"] = _extreme_dim(np.max, np.argmax)
REFERENCES["MinDim"] = _extreme_dim(np.min, np.argmin)


def _variance(args: Args) -> np.ndarray:
    x = f64(args["self"])
    correction = int(args["correction"]) if "correction" in args else (1 if args.get("unbiased", True) else 0)
    return np.asarray(np.var(x, axis=_axes(x, args.get("dim")), ddof=correction, keepdims=_keep(args)))


REFERENCES["Var"] = lambda a: {"out": _variance(a)}
REFERENCES["Std"] = lambda a: {"out": np.sqrt(_variance(a))}
REFERENCES["VarMean"] = lambda a: {
    "varOut": _variance(a),
    "meanOut": np.asarray(f64(a["self"]).mean(axis=_axes(f64(a["self"]), a.get("dim")), keepdims=_keep(a))),
}


def _cumsum(args: Args) -> dict[str, np.ndarray]:
    return {"out": np.cumsum(f64(args["self"]), axis=int(args["dim"]))}


REFERENCES["Cumsum"] = _cumsum


def _sort(args: Args) -> dict[str, np.ndarray]:
    x, dim = f64(args["self"]), int(args["dim"])
    order = np.argsort(-x if args["descending"] else x, axis=dim, kind="stable")
    return {"valuesOut": np.take_along_axis(x, order, axis=dim), "indicesOut": order}


REFERENCES["Sort"] = _sort
REFERENCES["Cat"] = lambda a: {"out": np.concatenate([f64(t) for t in a["tensors"]], axis=int(a["dim"]))}
REFERENCES["Stack"] = lambda a: {"out": np.stack([f64(t) for t in a["tensors"]], axis=int(a["dim"]))}
REFERENCES["Sum"] = lambda a: {"out": np.sum([f64(t) for t in a["tensors"]], axis=0)}
REFERENCES["Permute"] = lambda a: {"out": np.transpose(f64(a["self"]), [int(d) for d in a["dims"]])}
REFERENCES["Flip"] = lambda a: {"out": np.flip(f64(a["self"]), [int(d) for d in a["dims"]])}
REFERENCES["Repeat"] = lambda a: {"out": np.tile(f64(a["self"]), [int(r) for r in a["repeats"]])}
REFERENCES["Expand"] = lambda a: {"out": np.broadcast_to(f64(a["self"]), [int(s) for s in a["size"]])}
REFERENCES["Roll"] = lambda a: {
    "out": np.roll(f64(a["x"]), [int(s) for s in a["shifts"]], [int(d) for d in a["dims"]] or None)
}
REFERENCES["Tril"] = lambda a: {"out": np.tril(f64(a["self"]), int(a["diagonal"]))}
REFERENCES["Triu"] = lambda a: {"out": np.triu(f64(a["self"]), int(a["diagonal"]))}
REFERENCES["InplaceTril"] = lambda a: {"selfRef": np.tril(f64(a["selfRef"]), int(a["diagonal"]))}
REFERENCES["InplaceTriu"] = lambda a: {"selfRef": np.triu(f64(a["selfRef"]), int(a["diagonal"]))}
REFERENCES["Eye"] = lambda a: {"out": np.eye(int(a["n"]), int(a["m"]))}
REFERENCES["Linspace"] = lambda a: {"out": np.linspace(float(a["start"]), float(a["end"]), int(a["steps"]))}


def _slice(args: Args) -> dict[str, np.ndarray]:
    x, dim = f64(args["self"]), int(args["dim"])
    index = [slice(None)] * x.ndim
    index[dim] = slice(int(args["start"]), int(args["end"]), int(args["step"]))
    return {"out": x[tuple(index)]}


REFERENCES["Slice"] = _slice


def _split(args: Args) -> dict[str, np.ndarray]:
    x, dim = f64(args["self"]), int(args["dim"])
    bounds = np.cumsum([int(s) for s in args["splitSize"]])[:-1]
    return {f"out.{i}": part for i, part in enumerate(np.split(x, bounds, axis=dim))}


REFERENCES["SplitWithSize"] = _split
