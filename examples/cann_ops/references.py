"""vnpu's own float64 references of aclnn operators, for checking what CANN's example programs print.

A reference takes one launch as the daemon dumped it (`server.npu.ops.dump`): `args` maps each C argument name to
its value -- a tensor as a float64 array (integer and bool tensors keep their dtype), a tensor list as a list of
them, a scalar as its Python number, an int array as a list, attributes as given -- and returns the written
tensors by name, computed in float64 from the launch's inputs (never from vnpu's kernels). The result is rounded
into the output's dtype by the caller. Written from each operator's documentation (`docs/aclnnXxx.md` of its
repository) and torch's semantics, which the operators follow.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

Args = dict[str, Any]
Reference = Callable[[Args], dict[str, np.ndarray]]
REFERENCES: dict[str, Reference] = {}


def reference(*names: str) -> Callable[[Reference], Reference]:
    def register(function: Reference) -> Reference:
        for name in names:
            REFERENCES[name] = function
        return function

    return register


def _alpha(args: Args) -> float:
    return float(args.get("alpha", 1.0) if args.get("alpha") is not None else 1.0)


def _first(args: Args, *names: str) -> Any:
    for name in names:
        if name in args:
            return args[name]
    raise KeyError(names)


def _binary(op: Callable[[Any, Any], Any], out: str = "out") -> Reference:
    def compute(args: Args) -> dict[str, np.ndarray]:
        first = _first(args, "self", "selfRef")
        return {out if out in args else "selfRef": op(first, _alpha(args) * np.asarray(args["other"], np.float64))}

    return compute


for _name, _op in (("Add", np.add), ("Sub", np.subtract)):
    REFERENCES[_name] = REFERENCES[_name + "s"] = _binary(_op)
    REFERENCES["Inplace" + _name] = REFERENCES["Inplace" + _name + "s"] = _binary(_op, "selfRef")
REFERENCES["Mul"] = REFERENCES["Muls"] = _binary(np.multiply)
REFERENCES["InplaceMul"] = REFERENCES["InplaceMuls"] = _binary(np.multiply, "selfRef")
REFERENCES["Div"] = REFERENCES["Divs"] = _binary(np.true_divide)
REFERENCES["InplaceDiv"] = REFERENCES["InplaceDivs"] = _binary(np.true_divide, "selfRef")


def _unary(function: Callable[[np.ndarray], np.ndarray]) -> Reference:
    """f(x) of the operator's one input (self, input, x or selfRef) into its output (out, y, result or selfRef)."""

    def compute(args: Args) -> dict[str, np.ndarray]:
        source = next(n for n in ("self", "input", "x", "selfRef") if n in args)
        target = next(n for n in ("out", "y", "result", "selfRef") if n in args)
        with np.errstate(all="ignore"):
            return {target: function(np.asarray(args[source], np.float64))}

    return compute


_ERF = np.vectorize(math.erf)
UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Abs": np.abs,
    "Neg": np.negative,
    "Exp": np.exp,
    "Relu": lambda x: np.maximum(x, 0.0),
    "Gelu": lambda x: 0.5 * x * (1.0 + _ERF(x / math.sqrt(2.0))),
    "Silu": lambda x: x / (1.0 + np.exp(-x)),
    "Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "Rsqrt": lambda x: 1.0 / np.sqrt(x),
    "Sqrt": np.sqrt,
    "Reciprocal": lambda x: 1.0 / x,
    "Sin": np.sin,
    "Cos": np.cos,
    "Tanh": np.tanh,
    "Log": np.log,
}
for _name, _function in UNARY.items():
    REFERENCES[_name] = REFERENCES["Inplace" + _name] = _unary(_function)


@reference("Softmax")
def _softmax(args: Args) -> dict[str, np.ndarray]:
    x, dim = np.asarray(args["self"], np.float64), int(args["dim"])
    shifted = np.exp(x - x.max(axis=dim, keepdims=True))
    return {"out": shifted / shifted.sum(axis=dim, keepdims=True)}


@reference("LogSoftmax")
def _log_softmax(args: Args) -> dict[str, np.ndarray]:
    x, dim = np.asarray(args["self"], np.float64), int(args["dim"])
    shifted = x - x.max(axis=dim, keepdims=True)
    return {"out": shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))}


@reference("Cast")
def _cast(args: Args) -> dict[str, np.ndarray]:
    return {"out": np.asarray(args["self"])}


@reference("InplaceCopy")
def _copy(args: Args) -> dict[str, np.ndarray]:
    return {"selfRef": np.broadcast_to(np.asarray(args["src"]), np.shape(args["selfRef"]))}


def _reduce(mean: bool) -> Reference:
    def compute(args: Args) -> dict[str, np.ndarray]:
        x = np.asarray(args["self"], np.float64)
        dims = _first(args, "dim", "dims")
        axes = tuple(int(d) % max(x.ndim, 1) for d in dims) if dims else tuple(range(x.ndim))
        keep = bool(_first(args, "keepDim", "keepdim", "keepDims"))
        result = (x.mean if mean else x.sum)(axis=axes, keepdims=keep)
        return {"out": np.asarray(result)}

    return compute


REFERENCES["ReduceSum"] = _reduce(mean=False)
REFERENCES["Mean"] = _reduce(mean=True)


@reference("Matmul", "Mm", "BatchMatMul")
def _matmul(args: Args) -> dict[str, np.ndarray]:
    first = np.asarray(args["self"], np.float64)
    second = np.asarray(_first(args, "mat2", "other"), np.float64)
    return {"out": np.matmul(first, second)}


@reference("RmsNorm")
def _rms_norm(args: Args) -> dict[str, np.ndarray]:
    x, gamma = np.asarray(args["x"], np.float64), np.asarray(args["gamma"], np.float64)
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    rstd = 1.0 / np.sqrt((x * x).mean(axis=axes, keepdims=True) + float(args["epsilon"]))
    return {"yOut": x * rstd * gamma, "rstdOut": rstd}


@reference("Arange")
def _arange(args: Args) -> dict[str, np.ndarray]:
    start, end, step = (float(args[n]) for n in ("start", "end", "step"))
    return {"out": np.arange(start, end, step, dtype=np.float64)}


@reference("InplaceFillScalar")
def _fill(args: Args) -> dict[str, np.ndarray]:
    return {"selfRef": np.full(np.shape(args["selfRef"]), float(args["value"]))}


@reference("InplaceZero")
def _zero(args: Args) -> dict[str, np.ndarray]:
    return {"selfRef": np.zeros(np.shape(args["selfRef"]))}


def _more() -> None:
    """The per-area tables (`references_math`, `references_nn`, ...), under the ones above."""
    import references_elem
    import references_grad
    import references_math
    import references_nn
    import references_transformer

    tables = (references_math, references_nn, references_transformer, references_elem, references_grad)
    for table in (module.REFERENCES for module in tables):
        for name, function in table.items():
            REFERENCES.setdefault(name, function)


_more()
