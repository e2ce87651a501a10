"""ops-math's pointwise operators end to end, one row each: phase 1, revalidation, the kernel over fake device
memory, against float64 numpy references (`tests/server/npu/ops/opcases.py`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from aclnn_testkit import FakeMemory

from tests.server.npu.ops.opcases import (
    BF16,
    BOOL,
    F16,
    F32,
    I32,
    I64,
    Case,
    In,
    Out,
    Ref,
    Scalar,
    as_f32,
    rounded,
    run,
)

SHAPE = (3, 5)
ERF = np.vectorize(math.erf)
ERFC = np.vectorize(math.erfc)


def unary(op: str, f: Any, *, x: str = "self", out: str = "out", dtype: Any = F32, out_dtype: Any = None,
          ulps: float = 4, **bounds: Any) -> Case:  # fmt: skip
    return Case(
        op,
        {x: In(SHAPE, dtype, **bounds), out: Out(SHAPE, dtype if out_dtype is None else out_dtype)},
        lambda **v: {out: f(v[x])},
        ulps=ulps,
        name=f"{op}-{dtype.name}",
    )


def inplace(op: str, f: Any, *, ref: str = "selfRef", dtype: Any = F32, **bounds: Any) -> Case:
    return Case(op, {ref: Ref(SHAPE, dtype, **bounds)}, lambda **v: {ref: f(v[ref])}, ulps=4)


def _hardswish(x: Any) -> Any:
    return x * np.clip(x + 3, 0, 6) / 6


def _selu(x: Any) -> Any:
    return 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(np.minimum(x, 0)))


UNIT = {"low": -0.9, "high": 0.9}
UNARY = [
    unary("Sin", np.sin),
    unary("Sin", np.sin, dtype=F16, ulps=2),
    unary("Cos", np.cos, x="input"),
    unary("Cos", np.cos, x="input", dtype=BF16, ulps=2),
    unary("Tan", np.tan, low=-1.2, high=1.2),
    unary("Tanh", np.tanh),
    unary("Asin", np.arcsin, **UNIT),
    unary("Acos", np.arccos, x="input", **UNIT),
    unary("Atan", np.arctan, x="input"),
    unary("Sinh", np.sinh),
    unary("Cosh", np.cosh),
    unary("Asinh", np.arcsinh, x="input"),
    unary("Acosh", np.arccosh, low=1.0, high=4.0),
    unary("Atanh", np.arctanh, x="input", **UNIT),
    unary("Erf", ERF, ulps=2),
    unary("Erf", ERF, dtype=F16, ulps=1),
    unary("Erfc", ERFC, ulps=2),
    unary("Log", np.log, positive=True),
    unary("Log", np.log, dtype=I32, out_dtype=F32, positive=True),
    unary("Log2", np.log2, positive=True),
    unary("Log10", np.log10, positive=True),
    unary("Log1p", np.log1p, low=-0.5, high=3.0),
    unary("Exp2", np.exp2),
    unary("Expm1", np.expm1),
    unary("Sqrt", np.sqrt, positive=True),
    unary("Sqrt", np.sqrt, dtype=BF16, ulps=1, positive=True),
    unary("Reciprocal", np.reciprocal, positive=True),
    unary("Rsqrt", lambda x: 1 / np.sqrt(x), positive=True),
    unary("Sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    unary("Frac", lambda x: x - np.trunc(x), x="input"),
    unary("Hardswish", _hardswish),
    unary("HardSwish", _hardswish, x="x"),
    unary("Hardsigmoid", lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    unary("Mish", lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    unary("Selu", _selu),
    unary("Sign", np.sign, out="result"),
    unary("Sign", np.sign, out="result", dtype=I32),
    unary("Floor", np.floor),
    unary("Floor", np.floor, dtype=I64),
    unary("Ceil", np.ceil, dtype=F16),
    unary("Round", np.round),
    unary("Trunc", np.trunc),
    unary("LogicalNot", np.logical_not, out_dtype=BOOL),
    unary("LogicalNot", np.logical_not, dtype=I32, out_dtype=BOOL),
    unary("BitwiseNot", np.invert, dtype=I32),
    unary("BitwiseNot", np.invert, dtype=BOOL),
    unary("IsFinite", np.isfinite, out_dtype=BOOL),
    unary("IsInf", np.isinf, x="x", out_dtype=BOOL),
]
INPLACE = [
    inplace("InplaceExp", np.exp),
    inplace("InplaceSqrt", np.sqrt, ref="self", positive=True),
    inplace("InplaceRsqrt", lambda x: 1 / np.sqrt(x), positive=True),
    inplace("InplaceNeg", np.negative),
    inplace("InplaceNeg", np.negative, dtype=I32),
    inplace("InplaceTanh", np.tanh),
    inplace("InplaceSigmoid", lambda x: 1 / (1 + np.exp(-x)), dtype=F16),
    inplace("InplaceLog", np.log, positive=True),
    inplace("InplaceReciprocal", np.reciprocal, positive=True),
    inplace("InplaceFloor", np.floor),
    inplace("InplaceRelu", lambda x: np.maximum(x, 0)),
    inplace("InplaceSin", np.sin),
    inplace("InplaceCos", np.cos, ref="inputRef"),
    inplace("InplaceErf", ERF),
]


def binary(op: str, f: Any, *, other: Any = None, dtype: Any = F32, out_dtype: Any = None, y: str = "other",
           shape: tuple[int, ...] = (5,), ulps: float = 2, **bounds: Any) -> Case:  # fmt: skip
    second = other if other is not None else In(shape, dtype, **bounds)
    return Case(
        op,
        {"self": In(SHAPE, dtype), y: second, "out": Out(SHAPE, dtype if out_dtype is None else out_dtype)},
        lambda **v: {"out": f(v["self"], v[y])},
        ulps=ulps,
        name=f"{op}-{dtype.name}",
    )


def _remainder(a: Any, b: Any) -> Any:
    if np.issubdtype(np.asarray(a).dtype, np.integer) and np.issubdtype(np.asarray(b).dtype, np.integer):
        with np.errstate(all="ignore"):
            return np.where(np.asarray(b) == 0, a, np.remainder(a, np.where(np.asarray(b) == 0, 1, b)))
    return np.remainder(a, b)


def _compare(op: str, f: Any, scalar: bool) -> Case:
    kind = "Scalar" if scalar else "Tensor"
    second = Scalar(0.25) if scalar else In((5,), F16)
    return Case(
        f"{op}{kind}",
        {"self": In(SHAPE, F16), "other": second, "out": Out(SHAPE, BOOL)},
        lambda **v: {"out": f(v["self"], rounded(v["other"], F16))},
    )


COMPARE = [
    _compare(op, f, scalar)
    for op, f in (
        ("Eq", np.equal), ("Ne", np.not_equal), ("Gt", np.greater), ("Ge", np.greater_equal), ("Lt", np.less),
        ("Le", np.less_equal),
    )
    for scalar in (True, False)
]  # fmt: skip
BINARY = [
    binary("Maximum", np.maximum),
    binary("Minimum", np.minimum, dtype=I32),
    binary("Atan2", np.arctan2, ulps=4),
    Case(
        "PowTensorTensor",
        {"self": In(SHAPE, positive=True), "exponent": In((5,)), "out": Out(SHAPE)},
        lambda **v: {"out": np.power(v["self"], v["exponent"])},
        ulps=4,
    ),
    binary("RemainderTensorTensor", _remainder, positive=True),
    binary("RemainderTensorScalar", _remainder, other=Scalar(0.75)),
    # an integer remainder by zero is self (its documentation's constraints: "当other为0，且self的数据类型为整型时，
    # out的结果为self"), not an error
    binary("RemainderTensorTensor", _remainder, dtype=I64, shape=SHAPE, values=[[0, 1, -2, 3, 0]] * 3),
    binary("RemainderTensorScalar", _remainder, dtype=I32, other=Scalar(0, I32)),
    binary("FmodTensor", np.fmod, dtype=I32, positive=True),
    binary("FmodScalar", np.fmod, other=Scalar(1.5)),
    binary("FloorDivide", np.floor_divide, positive=True),
    binary("FloorDivides", np.floor_divide, dtype=I64, other=Scalar(3, I64)),
    binary("Divs", lambda a, b: a / as_f32(b), other=Scalar(0.3)),
    binary("LogicalAnd", np.logical_and, out_dtype=BOOL),
    binary("LogicalOr", np.logical_or, dtype=I32, out_dtype=BOOL),
    binary("LogicalXor", np.logical_xor, dtype=BOOL),
    Case(
        "InplaceSub",
        {"selfRef": Ref(SHAPE), "other": In((5,)), "alpha": Scalar(0.5)},
        lambda **v: {"selfRef": v["selfRef"] - 0.5 * v["other"]},
    ),
    Case(
        "InplaceSubs",
        {"selfRef": Ref(SHAPE, I32), "other": Scalar(7, I32), "alpha": Scalar(2, I32)},
        lambda **v: {"selfRef": v["selfRef"] - 14},
    ),
    Case(
        "InplaceAdds",
        {"selfRef": Ref(SHAPE, F16), "other": Scalar(0.5), "alpha": Scalar(1.0)},
        lambda **v: {"selfRef": v["selfRef"] + 0.5},
    ),
    Case("InplaceMuls", {"selfRef": Ref(SHAPE), "other": Scalar(3.0)}, lambda **v: {"selfRef": v["selfRef"] * 3}),
    Case(
        "InplaceDiv",
        {"selfRef": Ref(SHAPE), "other": In((5,), positive=True)},
        lambda **v: {"selfRef": v["selfRef"] / v["other"]},
    ),
    Case(
        "Lerp",
        {"self": In(SHAPE), "end": In(SHAPE), "weight": In((5,)), "out": Out(SHAPE)},
        lambda **v: {"out": v["self"] + v["weight"] * (v["end"] - v["self"])},
        ulps=8,
        atol=1e-6,
    ),
    Case(
        "Addcmul",
        {"self": In(SHAPE), "tensor1": In(SHAPE), "tensor2": In((5,)), "value": Scalar(0.5), "out": Out(SHAPE)},
        lambda **v: {"out": v["self"] + 0.5 * v["tensor1"] * v["tensor2"]},
        ulps=4,
        atol=1e-6,
    ),
    Case(
        "Addcdiv",
        {
            "self": In(SHAPE),
            "tensor1": In(SHAPE),
            "tensor2": In((5,), positive=True),
            "value": Scalar(2.0),
            "out": Out(SHAPE),
        },
        lambda **v: {"out": v["self"] + 2.0 * v["tensor1"] / v["tensor2"]},
        ulps=4,
        atol=1e-6,
    ),
    Case(
        "PowScalarTensor",
        {"self": Scalar(2.0), "exponent": In(SHAPE), "out": Out(SHAPE)},
        lambda **v: {"out": np.power(2.0, v["exponent"])},
    ),
    Case(
        "PowTensorScalar",
        {"self": In(SHAPE, positive=True), "exponent": Scalar(1.5), "out": Out(SHAPE)},
        lambda **v: {"out": np.power(v["self"], 1.5)},
        ulps=4,
    ),
]
CASES = UNARY + INPLACE + BINARY + COMPARE


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_pointwise(case: Case, mem: FakeMemory, rng: np.random.Generator) -> None:
    run(case, mem, rng)
