"""The in-place twins, bitwise and special elementwise operators of ops-math (and ops-nn's Erfinv and IndexFill) end
to end, one row each, against float64 numpy references (`tests/server/npu/ops/opcases.py`); then the phase-1
refusals their documentation lists."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from aclnn_testkit import FakeMemory

import proto.aclnn as nn
from proto.aclnn.twins import TWINS
from proto.constants import aclDataType
from proto.errors import ACLNN_ERR_PARAM_NULLPTR, AclError
from server.npu.ops.math import gamma, special
from server.npu.ops.nn import index_fill
from tests.proto.aclnn_kit import refused, scalar, tensor
from tests.server.npu.ops.opcases import (
    BF16,
    BOOL,
    F16,
    F32,
    F64,
    I8,
    I32,
    I64,
    U8,
    Case,
    In,
    Ints,
    Out,
    Ref,
    Scalar,
    run,
)

S = (3, 5)
C64 = aclDataType.ACL_COMPLEX64
COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "Eq": np.equal, "Ne": np.not_equal, "Gt": np.greater, "Ge": np.greater_equal, "Lt": np.less, "Le": np.less_equal,
}  # fmt: skip
ERF = np.vectorize(math.erf, otypes=[np.float64])


def _erfinv(y: Any) -> Any:
    """By bisection on math.erf: independent of the kernel's polynomial and Newton steps."""
    low, high = np.full(np.shape(y), -6.0), np.full(np.shape(y), 6.0)
    for _ in range(80):
        mid = (low + high) / 2
        below = ERF(mid) < y
        low, high = np.where(below, mid, low), np.where(below, high, mid)
    return (low + high) / 2


def _xlogy(x: Any, y: Any) -> Any:
    return np.where(x == 0, 0.0, x * np.log(y))


def _fill(x: Any, dim: int, index: Any, value: float) -> Any:
    out = np.array(x, np.float64)
    size = out.shape[dim]
    picked = [i % size for i in np.ravel(index) if -size <= i < size]
    where: list[Any] = [slice(None)] * out.ndim
    where[dim] = picked
    out[tuple(where)] = value
    return out


def _cross(a: Any, b: Any, dim: int) -> Any:
    a, b = (np.moveaxis(t, dim, -1) for t in np.broadcast_arrays(a, b))
    c = np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1], a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                  a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)  # fmt: skip
    return np.moveaxis(c, -1, dim)


SMALL = {"low": -4.0, "high": 4.0}
TWIN_CASES = [
    *(Case(f"Inplace{op}Tensor", {"selfRef": Ref(S, I32, values=np.arange(15).reshape(S) % 4), "other":
           In((5,), I32, values=[0, 1, 2, 3, 1])}, lambda f=f, **v: {"selfRef": f(v["selfRef"], v["other"])},
           name=f"Inplace{op}Tensor-int") for op, f in COMPARE.items()),
    *(Case(f"Inplace{op}Scalar", {"selfRef": Ref(S, F16, values=np.arange(15).reshape(S) / 4 - 1),
           "other": Scalar(0.25)}, lambda f=f, **v: {"selfRef": f(v["selfRef"], 0.25)}) for op, f in COMPARE.items()),
    Case("InplaceLtTensor", {"selfRef": Ref(S), "other": In((3, 1))},
         lambda **v: {"selfRef": v["selfRef"] < v["other"]}, name="InplaceLtTensor-float"),
    Case("InplaceLogicalAnd", {"selfRef": Ref(S, values=np.arange(15).reshape(S) % 3), "other": In((5,), BOOL)},
         lambda **v: {"selfRef": (v["selfRef"] != 0) & v["other"]}),
    Case("InplaceLogicalOr", {"selfRef": Ref(S, I8, values=np.arange(15).reshape(S) % 3 - 1),
                              "other": In(S, values=np.arange(15).reshape(S) % 2)},
         lambda **v: {"selfRef": (v["selfRef"] != 0) | (v["other"] != 0)}),
    Case("InplaceLogicalNot", {"selfRef": Ref(S, I32, values=np.arange(15).reshape(S) % 3)},
         lambda **v: {"selfRef": v["selfRef"] == 0}),
    Case("InplaceLerp", {"selfRef": Ref(S, BF16), "end": In((5,), BF16), "weight": In((3, 1), BF16)},
         lambda **v: {"selfRef": v["selfRef"] + v["weight"] * (v["end"] - v["selfRef"])}, ulps=2),
    Case("InplaceAddcmul", {"selfRef": Ref(S), "tensor1": In((5,)), "tensor2": In(S), "value": Scalar(0.5)},
         lambda **v: {"selfRef": v["selfRef"] + 0.5 * v["tensor1"] * v["tensor2"]}, ulps=4, atol=1e-7),
    Case("InplaceAddcmul", {"selfRef": Ref(S, I64), "tensor1": In(S, I32), "tensor2": In(S, I8),
                            "value": Scalar(3, I64)},
         lambda **v: {"selfRef": v["selfRef"] + 3 * v["tensor1"] * v["tensor2"]}, name="InplaceAddcmul-int"),
    Case("InplaceAddcdiv", {"selfRef": Ref(S, F16), "tensor1": In(S, F16), "tensor2": In(S, F16, positive=True),
                            "value": Scalar(-1.5)},
         lambda **v: {"selfRef": v["selfRef"] - 1.5 * v["tensor1"] / v["tensor2"]}, ulps=2),
    Case("ClampMinTensor", {"self": In(S), "clipValueMin": In((5,)), "out": Out(S)},
         lambda **v: {"out": np.maximum(v["self"], v["clipValueMin"])}),
    Case("ClampMaxTensor", {"self": In(S, I32), "max": In((3, 1), I32), "out": Out(S, I64)},
         lambda **v: {"out": np.minimum(v["self"], v["max"])}),
    Case("InplaceClampMinTensor", {"selfRef": Ref(S, F16), "clipValueMin": In((5,), F16)},
         lambda **v: {"selfRef": np.maximum(v["selfRef"], v["clipValueMin"])}),
    Case("InplaceClampMaxTensor", {"selfRef": Ref(S), "max": In(S)},
         lambda **v: {"selfRef": np.minimum(v["selfRef"], v["max"])}),
    Case("InplaceClampMax", {"selfRef": Ref(S, I32), "clipValueMax": Scalar(3, I32)},
         lambda **v: {"selfRef": np.minimum(v["selfRef"], 3)}),
    Case("InplaceClampMax", {"selfRef": Ref(S, BF16), "clipValueMax": Scalar(0.5)},
         lambda **v: {"selfRef": np.minimum(v["selfRef"], 0.5)}, name="InplaceClampMax-bf16"),
]  # fmt: skip

BITS: dict[str, Callable[[Any, Any], Any]] = {"And": np.bitwise_and, "Or": np.bitwise_or, "Xor": np.bitwise_xor}
BITWISE = [
    *(Case(f"Bitwise{op}Tensor", {"self": In(S, I32), "other": In((5,), I8), "out": Out(S, I32)},
           lambda f=f, **v: {"out": f(v["self"], v["other"])}) for op, f in BITS.items()),
    *(Case(f"Bitwise{op}Scalar", {"self": In(S, I64), "other": Scalar(0x5A, I64), "out": Out(S, I64)},
           lambda f=f, **v: {"out": f(v["self"], 0x5A)}) for op, f in BITS.items()),
    *(Case(f"InplaceBitwise{op}Tensor", {"selfRef": Ref(S, BOOL), "other": In(S, BOOL)},
           lambda f=f, **v: {"selfRef": f(v["selfRef"], v["other"])}) for op, f in BITS.items()),
    *(Case(f"InplaceBitwise{op}Scalar", {"selfRef": Ref(S, U8), "other": Scalar(0x33, I32)},
           lambda f=f, **v: {"selfRef": f(v["selfRef"], 0x33)}) for op, f in BITS.items()),
    Case("BitwiseAndTensorOut", {"self": In(S, I64), "other": In(S, I64), "out": Out(S, I64)},
         lambda **v: {"out": v["self"] & v["other"]}),
    Case("InplaceBitwiseAndTensorOut", {"self": Ref(S, I8), "other": In((5,), I8)},
         lambda **v: {"self": v["self"] & v["other"]}),
    Case("RightShift", {"input": In(S, I32, values=np.arange(15).reshape(S) * 997 - 7000),
                        "shiftBits": In((5,), I32, values=[-1, 0, 3, 31, 40]), "out": Out(S, I32)},
         lambda **v: {"out": v["input"] >> np.clip(v["shiftBits"], 0, 31)}),
    Case("Gcd", {"self": In(S, I32, values=np.arange(15).reshape(S) * 6 - 40), "other": In((5,), I64,
                 values=[4, 9, 0, -12, 35]), "out": Out(S, I64)},
         lambda **v: {"out": np.gcd(v["self"], v["other"])}),
]  # fmt: skip

SPECIAL = [
    Case("XLogYTensor", {"self": In(S, values=np.where(np.arange(15) % 4 == 0, 0, np.arange(15) - 7).reshape(S)),
                         "other": In((5,), positive=True), "out": Out(S)},
         lambda **v: {"out": _xlogy(v["self"], v["other"])}, ulps=4, atol=1e-6),
    Case("XLogYScalarOther", {"self": In(S, I32), "other": Scalar(2.5), "out": Out(S)},
         lambda **v: {"out": v["self"] * math.log(2.5)}, ulps=4),
    Case("XLogYScalarSelf", {"self": Scalar(1.5), "other": In(S, F16, positive=True), "out": Out(S, F16)},
         lambda **v: {"out": 1.5 * np.log(v["other"])}, ulps=2, atol=1e-3),
    Case("InplaceXLogYTensor", {"selfRef": Ref(S), "other": In(S, positive=True)},
         lambda **v: {"selfRef": v["selfRef"] * np.log(v["other"])}, ulps=4, atol=1e-6),
    Case("InplaceXLogYScalarOther", {"selfRef": Ref(S, BF16), "other": Scalar(0.75)},
         lambda **v: {"selfRef": v["selfRef"] * math.log(0.75)}, ulps=2),
    Case("IsClose", {"self": In(S, values=np.arange(15).reshape(S) * 0.1),
                     "other": In((5,), values=[0.0, 0.1005, 0.3, 0.29, np.nan]), "rtol": 1e-2, "atol": 1e-8,
                     "equalNan": False, "out": Out(S, BOOL)},
         lambda **v: {"out": np.isclose(v["self"], v["other"], 1e-2, 1e-8)}),
    Case("IsClose", {"self": In((5,), F64, values=[np.nan, 1.0, np.inf, -np.inf, 2.0]),
                     "other": In((5,), F64, values=[np.nan, 1.0 + 1e-9, np.inf, np.inf, 2.5]), "rtol": 1e-5,
                     "atol": 0.0, "equalNan": True, "out": Out((5,), BOOL)},
         lambda **v: {"out": np.isclose(v["self"], v["other"], 1e-5, 0.0, equal_nan=True)}, name="IsClose-nan"),
    Case("NanToNum", {"self": In((6,), values=[np.nan, np.inf, -np.inf, 1.5, -2.0, 0.0]), "nan": 1.0,
                      "posinf": 100.0, "neginf": -100.0, "out": Out((6,))},
         lambda **v: {"out": np.nan_to_num(v["self"], nan=1.0, posinf=100.0, neginf=-100.0)}),
    Case("NanToNum", {"self": In(S, I32), "nan": 0.0, "posinf": 1.0, "neginf": -1.0, "out": Out(S, I32)},
         lambda **v: {"out": v["self"]}, name="NanToNum-int"),
    Case("InplaceNanToNum", {"selfRef": Ref((4,), F16, values=[np.nan, np.inf, -np.inf, 3.0]), "nan": 0.5,
                             "posinf": 70000.0, "neginf": -2.0},
         lambda **v: {"selfRef": [0.5, np.inf, -2.0, 3.0]}),  # 70000 rounds to fp16's inf
    Case("Signbit", {"self": In((6,), values=[-0.0, 0.0, -1.5, 2.0, -np.inf, np.nan]), "out": Out((6,), BOOL)},
         lambda **v: {"out": np.signbit(v["self"])}),
    Case("Signbit", {"self": In(S, I8), "out": Out(S, F32)}, lambda **v: {"out": v["self"] < 0}, name="Signbit-int"),
    Case("Real", {"self": In(S), "out": Out(S)}, lambda **v: {"out": v["self"]}),
    Case("Real", {"self": In(S, F16), "out": Out(S, F16)}, lambda **v: {"out": v["self"]}, name="Real-f16"),
    Case("Polar", {"input": In(S, positive=True), "angle": In((5,), **SMALL), "out": Out(S, C64)},
         lambda **v: {"out": v["input"] * np.cos(v["angle"]) + 1j * v["input"] * np.sin(v["angle"])}, ulps=4,
         atol=1e-6),
    Case("LinalgCross", {"self": In((2, 3, 4)), "other": In((3, 1)), "dim": 1, "out": Out((2, 3, 4))},
         lambda **v: {"out": _cross(v["self"], v["other"], 1)}, ulps=8, atol=1e-6),
    Case("LinalgCross", {"self": In((3, 2), I32), "other": In((3, 2), I32), "dim": -2, "out": Out((3, 2), I32)},
         lambda **v: {"out": _cross(v["self"], v["other"], 0)}, name="LinalgCross-int"),
    Case("Erfinv", {"self": In(S, low=-0.999, high=0.999), "out": Out(S)},
         lambda **v: {"out": _erfinv(v["self"])}, ulps=2),
    Case("Erfinv", {"self": In((4,), BOOL, values=[True, False, True, False]), "out": Out((4,), F16)},
         lambda **v: {"out": np.where(v["self"], np.inf, 0.0)}, name="Erfinv-bool"),
    Case("InplaceErfinv", {"selfRef": Ref(S, BF16, values=np.linspace(-0.98, 0.98, 15).reshape(S))},
         lambda **v: {"selfRef": _erfinv(v["selfRef"])}, ulps=1),
    Case("IndexFill", {"self": In((3, 4, 2)), "dim": 1, "index": In((3,), I64, values=[0, -1, 7]),
                       "value": Scalar(2.5), "out": Out((3, 4, 2))},
         lambda **v: {"out": _fill(v["self"], 1, v["index"], 2.5)}),
    Case("InplaceIndexFill", {"selfRef": Ref((3, 4), I32), "dim": -2, "index": In((2,), I32, values=[2, -3]),
                              "value": Scalar(-7, I32)},
         lambda **v: {"selfRef": _fill(v["selfRef"], 0, v["index"], -7)}),
    Case("IndexFillTensor", {"self": In((3, 4), BF16), "dim": 1, "index": Ints((3, -1)), "value": Scalar(1.0),
                             "out": Out((3, 4), BF16)},
         lambda **v: {"out": _fill(v["self"], 1, v["index"], 1.0)}),
    Case("InplaceIndexFillTensor", {"selfRef": Ref((4,), BOOL), "dim": 0, "index": Ints((1, 2)),
                                    "value": Scalar(True, BOOL)},
         lambda **v: {"selfRef": _fill(v["selfRef"], 0, v["index"], 1.0) != 0}),
]  # fmt: skip

UNIT = {"low": -0.9, "high": 0.9}
ERFC = np.vectorize(math.erfc, otypes=[np.float64])
UNARY_TWINS: dict[str, tuple[Callable[[Any], Any], dict[str, Any]]] = {
    "Acos": (np.arccos, UNIT), "Acosh": (np.arccosh, {"low": 1.0, "high": 4.0}), "Asin": (np.arcsin, UNIT),
    "Asinh": (np.arcsinh, {}), "Atan": (np.arctan, {}), "Atanh": (np.arctanh, UNIT), "Ceil": (np.ceil, SMALL),
    "Cosh": (np.cosh, {}), "Erfc": (ERFC, {}), "Exp2": (np.exp2, {}), "Expm1": (np.expm1, {}),
    "Frac": (lambda x: x - np.trunc(x), SMALL), "Log10": (np.log10, {"positive": True}),
    "Log1p": (np.log1p, {"positive": True}), "Log2": (np.log2, {"positive": True}), "Round": (np.round, SMALL),
    "Sinh": (np.sinh, {}), "Tan": (np.tan, {"low": -1.2, "high": 1.2}), "Trunc": (np.trunc, SMALL),
    "Mish": (lambda x: x * np.tanh(np.log1p(np.exp(x))), {}),
    "Selu": (lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)), {}),
    "Hardsigmoid": (lambda x: np.clip(x / 6 + 0.5, 0, 1), SMALL),
    "Hardswish": (lambda x: x * np.clip(x + 3, 0, 6) / 6, SMALL),
}  # fmt: skip
BINARY_TWINS: dict[str, tuple[Any, Callable[[Any, Any], Any], dict[str, Any]]] = {
    "Atan2": (In(S), np.arctan2, {}),
    "Divs": (Scalar(2.5), np.divide, {}),
    "FloorDivide": (In((5,), positive=True), lambda a, b: np.floor(a / b), SMALL),
    "FloorDivides": (Scalar(0.75), lambda a, b: np.floor(a / b), SMALL),
    "FmodScalar": (Scalar(0.7), np.fmod, SMALL),
    "FmodTensor": (In(S, positive=True), np.fmod, SMALL),
    "RemainderTensorScalar": (Scalar(0.7), lambda a, b: a - np.floor(a / b) * b, SMALL),
    "RemainderTensorTensor": (In((5,), positive=True), lambda a, b: a - np.floor(a / b) * b, SMALL),
    "PowTensorScalar": (Scalar(1.5), np.power, {"positive": True}),
    "PowTensorTensor": (In(S, low=-2.0, high=2.0), np.power, {"positive": True}),
    "Celu": (Scalar(1.5), lambda x, a: np.maximum(x, 0) + np.minimum(0, a * np.expm1(x / a)), {}),
    "LeakyRelu": (Scalar(0.1), lambda x, a: np.where(x > 0, x, a * x), {}),
}  # fmt: skip


def _unary_twin(op: str) -> Case:
    _, first, _ = TWINS[f"Inplace{op}"]
    f, bounds = UNARY_TWINS[op]
    return Case(f"Inplace{op}", {first: Ref(S, **bounds)}, lambda **v: {first: f(v[first])}, ulps=4, atol=1e-7)


def _binary_twin(op: str) -> Case:
    name = f"Inplace{op}"
    _, first, _ = TWINS[name]
    spec, f, bounds = BINARY_TWINS[op]
    other = next(n for n in nn.OPS[name].arg_names if n != first)
    return Case(name, {first: Ref(S, **bounds), other: spec}, lambda **v: {first: f(v[first], v[other])}, ulps=4,
                atol=1e-6)  # fmt: skip


SAME_NAMED = [
    *(_unary_twin(op) for op in UNARY_TWINS),
    *(_binary_twin(op) for op in BINARY_TWINS),
    Case("InplaceElu", {"selfRef": Ref(S), "alpha": Scalar(0.5), "scale": Scalar(2.0), "inputScale": Scalar(1.5)},
         lambda **v: {"selfRef": 2.0 * np.where(v["selfRef"] > 0, v["selfRef"], 0.5 * np.expm1(1.5 * v["selfRef"]))},
         ulps=4, atol=1e-7),
    Case("InplaceHardtanh", {"selfRef": Ref(S, F16), "clipValueMin": Scalar(-0.5), "clipValueMax": Scalar(0.75)},
         lambda **v: {"selfRef": np.clip(v["selfRef"], -0.5, 0.75)}),
]  # fmt: skip

CASES = [*TWIN_CASES, *BITWISE, *SPECIAL, *SAME_NAMED]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_elementwise_more(case: Case, mem: FakeMemory, rng: np.random.Generator) -> None:
    run(case, mem, rng)


BIT_NAMES = "ACL_BOOL, ACL_INT16, ACL_INT32, ACL_INT64, ACL_INT8, ACL_UINT16, ACL_UINT32, ACL_UINT64, ACL_UINT8"
NUMERIC_NAMES = "ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, ACL_INT16, ACL_INT32, ACL_INT64, ACL_INT8, ACL_UINT8"
SHIFT_NAMES = "ACL_INT16, ACL_INT32, ACL_INT64, ACL_INT8, ACL_UINT16, ACL_UINT32, ACL_UINT64, ACL_UINT8"


def _t(*shape: int, dtype: aclDataType = F32) -> nn.aclTensor:
    return tensor(list(shape), dtype)


def test_in_place_twins_refuse_what_their_documentation_refuses() -> None:
    refused(
        lambda: nn.aclnnInplaceEqTensorGetWorkspaceSize(_t(3), _t(2, 3)),
        "selfRef has shape [3], but the result has shape [2, 3]",
    )
    refused(
        lambda: nn.aclnnInplaceLerpGetWorkspaceSize(_t(2, dtype=F16), _t(2), _t(2, dtype=F16)),
        "end has dtype ACL_FLOAT; it must have selfRef's dtype ACL_FLOAT16",
    )
    refused(
        lambda: nn.aclnnInplaceAddcdivGetWorkspaceSize(_t(2, dtype=I32), _t(2), _t(2), scalar(1.0)),
        "selfRef has dtype ACL_INT32; supported: ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, ACL_INT64",
    )
    refused(
        lambda: nn.aclnnInplaceAddcmulGetWorkspaceSize(_t(2, dtype=I32), _t(2), _t(2), scalar(1.0)),
        "selfRef has dtype ACL_INT32, which the result dtype ACL_FLOAT cannot be cast to",
    )
    refused(
        lambda: nn.aclnnInplaceXLogYTensorGetWorkspaceSize(_t(2, dtype=I32), _t(2, dtype=I32)),
        "selfRef has dtype ACL_INT32, which the result dtype ACL_FLOAT cannot be cast to",
    )
    refused(
        lambda: nn.aclnnClampMinTensorGetWorkspaceSize(_t(2, dtype=BOOL), _t(2), _t(2)),
        "self has dtype ACL_BOOL; supported: " + NUMERIC_NAMES,
    )
    refused(
        lambda: nn.aclnnInplaceErfinvGetWorkspaceSize(_t(2, dtype=I32)),
        "selfRef has dtype ACL_INT32; supported: ACL_BF16, ACL_FLOAT, ACL_FLOAT16",
    )
    with pytest.raises(AclError) as caught:
        nn.aclnnInplaceLogicalNotGetWorkspaceSize(None)
    assert caught.value.code == ACLNN_ERR_PARAM_NULLPTR and "selfRef" in caught.value.message


def test_bitwise_and_special_operators_refuse_bad_arguments() -> None:
    refused(
        lambda: nn.aclnnBitwiseAndTensorGetWorkspaceSize(_t(2), _t(2), _t(2)),
        "self has dtype ACL_FLOAT; supported: " + BIT_NAMES,
    )
    refused(
        lambda: nn.aclnnBitwiseOrScalarGetWorkspaceSize(_t(2, dtype=I32), scalar(1.5), _t(2, dtype=I32)),
        "other has dtype ACL_FLOAT; supported: " + BIT_NAMES,
    )
    refused(
        lambda: nn.aclnnGcdGetWorkspaceSize(_t(2, dtype=I32), _t(3, dtype=I32), _t(2, dtype=I32)),
        "other has shape [3], which does not broadcast with self's [2]",
    )
    refused(
        lambda: nn.aclnnIsCloseGetWorkspaceSize(_t(2), _t(2, dtype=F16), 1e-5, 1e-8, False, _t(2, dtype=BOOL)),
        "other has dtype ACL_FLOAT16; it must have self's dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnIsCloseGetWorkspaceSize(_t(2), _t(2), 1e-5, 1e-8, False, _t(2)),
        "out has dtype ACL_FLOAT; supported: ACL_BOOL",
    )
    refused(
        lambda: nn.aclnnNanToNumGetWorkspaceSize(_t(2), 0.0, 1.0, -1.0, _t(2, dtype=F16)),
        "out has dtype ACL_FLOAT16, but the result has dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnRealGetWorkspaceSize(_t(2, dtype=C64), _t(2, dtype=F64)),
        "out has dtype ACL_DOUBLE, but the result has dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnPolarGetWorkspaceSize(_t(2), _t(2), _t(2)), "out has dtype ACL_FLOAT; supported: ACL_COMPLEX64"
    )
    refused(
        lambda: nn.aclnnLinalgCrossGetWorkspaceSize(_t(2, 4), _t(2, 4), -1, _t(2, 4)),
        "dim -1: self and other broadcast to [2, 4], whose size there must be 3",
    )
    refused(
        lambda: nn.aclnnLinalgCrossGetWorkspaceSize(_t(3), _t(3), 1, _t(3)),
        "dim 1 is out of range for a 1-D self (expected -1 to 0)",
    )
    refused(
        lambda: nn.aclnnRightShiftGetWorkspaceSize(_t(2, dtype=BOOL), _t(2, dtype=I32), _t(2, dtype=I32)),
        "input has dtype ACL_BOOL; supported: " + SHIFT_NAMES,
    )


def test_index_fill_refuses_bad_dims_indices_and_outputs() -> None:
    value = scalar(1.0)
    refused(
        lambda: nn.aclnnIndexFillGetWorkspaceSize(_t(2, 3), 2, _t(1, dtype=I64), value, _t(2, 3)),
        "dim 2 is out of range for a 2-D self (expected -2 to 1)",
    )
    refused(
        lambda: nn.aclnnIndexFillGetWorkspaceSize(_t(2, 3), 0, _t(1, dtype=F32), value, _t(2, 3)),
        "index has dtype ACL_FLOAT; supported: ACL_INT32, ACL_INT64",
    )
    refused(
        lambda: nn.aclnnIndexFillGetWorkspaceSize(_t(2, 3), 0, _t(1, dtype=I64), value, _t(2, 3, dtype=F16)),
        "out has dtype ACL_FLOAT16, but the result has dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnIndexFillTensorGetWorkspaceSize(_t(2, 3), 1, nn.aclCreateIntArray([0, 3]), value, _t(2, 3)),
        "index holds 3, out of range for dim 1 of size 3",
    )
    refused(
        lambda: nn.aclnnInplaceIndexFillTensorGetWorkspaceSize(_t(2, dtype=I8), 0, nn.aclCreateIntArray([0]), value),
        "selfRef has dtype ACL_INT8; supported: ACL_BF16, ACL_BOOL, ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT64",
    )


def test_kernels_keep_their_edge_values(mem: FakeMemory) -> None:
    """Erfinv at ±1 and past it; RightShift of UINT64 by 0, 63 and 64; IndexFill of a 0-D tensor."""
    y = np.array([1.0, -1.0, 1.5, 0.0], np.float32)
    out = np.zeros(4, np.float32)
    gamma.erfinv(y, out, None)
    np.testing.assert_array_equal(out[:2], [np.inf, -np.inf])
    assert np.isnan(out[2]) and out[3] == 0
    x = np.full(3, 2**64 - 1, np.uint64)
    shifted = np.zeros(3, np.uint64)
    special.right_shift(x, np.array([0, 63, 64], np.uint64), shifted, None)
    np.testing.assert_array_equal(shifted, [2**64 - 1, 1, 0])
    zero_d = np.array(5.0, np.float32)
    index_fill.inplace_index_fill(zero_d, -1, np.array([-1]), 2.0, None)
    assert zero_d == 2.0


def test_same_named_twins_refuse_with_their_written_tensors_name() -> None:
    """A twin is checked by its operator's rule; what that rule says of self or out is said of the written tensor."""
    refused(
        lambda: nn.aclnnInplaceAcosGetWorkspaceSize(_t(2, dtype=I32)),
        "inputRef has dtype ACL_INT32; supported: ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16",
    )
    refused(
        lambda: nn.aclnnInplaceAtan2GetWorkspaceSize(_t(3), _t(2, 3)),
        "selfRef has shape [3], but the result has shape [2, 3]",
    )
    refused(
        lambda: nn.aclnnInplaceFmodTensorGetWorkspaceSize(_t(2, dtype=BOOL), _t(2)),
        "selfRef is ACL_BOOL: the operator does not take a bool operand",
    )
    refused(lambda: nn.aclnnInplaceCeluGetWorkspaceSize(_t(2), scalar(0.0)), "alpha is 0; it must not be")
    refused(
        lambda: nn.aclnnInplacePowTensorScalarGetWorkspaceSize(_t(2, dtype=I32), scalar(-1, I32)),
        "exponent is -1: integers to negative powers are not supported (torch)",
    )
