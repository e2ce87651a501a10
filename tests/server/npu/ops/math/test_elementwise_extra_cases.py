"""More of ops-math's elementwise operators end to end, one row each (Lerps, Sinc, IsNegInf/IsPosInf, LeftShift,
LogAddExp, Rsub, RemainderScalarTensor, Square, Xlog1py and twins), against float64 numpy references
(`tests/server/npu/ops/opcases.py`); then the phase-1 refusals their documentation lists."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from aclnn_testkit import FakeMemory

import proto.aclnn as nn
from proto.constants import aclDataType
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
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
    List,
    Out,
    Ref,
    Scalar,
    run,
)

C64, C128 = aclDataType.ACL_COMPLEX64, aclDataType.ACL_COMPLEX128

S = (3, 5)


def _sinc(x: Any) -> Any:
    with np.errstate(all="ignore"):
        return np.where(x == 0, 1.0, np.sin(np.pi * x) / (np.pi * x))


def _left_shift(x: Any, s: Any, bits: int) -> Any:
    """x · 2**s reduced to `bits` signed bits (s outside [0, 63] gives 0), in Python integers."""
    x, s = np.broadcast_arrays(np.asarray(x), np.asarray(s))
    wrapped = []
    for v, k in zip(x.ravel().tolist(), s.ravel().tolist(), strict=True):
        r = (int(v) << int(k)) % (1 << bits) if 0 <= k <= 63 else 0
        wrapped.append(r - (1 << bits) if r >= 1 << (bits - 1) else r)
    return np.array(wrapped, np.int64).reshape(x.shape)


def _digamma(x: Any) -> Any:
    """By a central difference of math.lgamma (independent of the kernel's series)."""
    h = 1e-5
    lg = np.vectorize(math.lgamma, otypes=[np.float64])
    return (lg(x + h) - lg(x - h)) / (2 * h)


def _remainder(a: Any, b: Any) -> Any:
    return a - np.floor(a / b) * b


INF = [np.inf, -np.inf, np.nan, 0.0, -1.5]
CASES = [
    Case("Lerps", {"self": In(S, F16), "end": In((5,), F16), "weight": Scalar(0.25), "out": Out(S, F16)},
         lambda **v: {"out": v["self"] + 0.25 * (v["end"] - v["self"])}),
    Case("InplaceLerps", {"selfRef": Ref(S, BF16), "end": In(S, BF16), "weight": Scalar(-0.5)},
         lambda **v: {"selfRef": v["selfRef"] - 0.5 * (v["end"] - v["selfRef"])}),
    Case("Sinc", {"self": In(S, values=np.arange(15).reshape(S) / 4 - 2), "out": Out(S)},
         lambda **v: {"out": _sinc(v["self"])}, atol=1e-7),
    Case("Sinc", {"self": In(S, I32), "out": Out(S)}, lambda **v: {"out": _sinc(v["self"])}, atol=1e-7,
         name="Sinc-int"),
    Case("InplaceSinc", {"selfRef": Ref(S, F16)}, lambda **v: {"selfRef": _sinc(v["selfRef"])}, atol=1e-3),
    Case("IsNegInf", {"self": In((5,), values=INF), "out": Out((5,), BOOL)},
         lambda **v: {"out": np.isneginf(v["self"])}),
    Case("IsPosInf", {"self": In((5,), BF16, values=INF), "out": Out((5,), BOOL)},
         lambda **v: {"out": np.isposinf(v["self"])}),
    Case("LeftShift", {"self": In(S, I32, values=np.arange(15).reshape(S) * 12345 - 90000),
                       "shiftBits": In((5,), I32, values=[0, 1, 7, 31, 70]), "out": Out(S, I32)},
         lambda **v: {"out": _left_shift(v["self"], v["shiftBits"], 32)}),
    Case("LeftShifts", {"self": In(S, I8), "shiftBits": Scalar(3, I64), "out": Out(S, I8)},
         lambda **v: {"out": _left_shift(v["self"], 3, 8)}),
    Case("LogAddExp", {"self": In(S), "other": In((5,)), "out": Out(S)},
         lambda **v: {"out": np.logaddexp(v["self"], v["other"])}, ulps=4),
    Case("LogAddExp2", {"self": In(S, I32), "other": In(S, F16), "out": Out(S, F16)},
         lambda **v: {"out": np.logaddexp2(v["self"], v["other"])}),
    Case("Rsub", {"self": In(S), "other": In((5,)), "alpha": Scalar(2.0), "out": Out(S)},
         lambda **v: {"out": v["other"] - 2.0 * v["self"]}),
    Case("Rsubs", {"self": In(S, I64), "other": Scalar(7, I64), "alpha": Scalar(3, I64), "out": Out(S, I64)},
         lambda **v: {"out": 7 - 3 * v["self"]}),
    Case("RemainderScalarTensor", {"self": Scalar(2.5), "other": In(S, positive=True), "out": Out(S)},
         lambda **v: {"out": _remainder(2.5, v["other"])}, ulps=4, atol=1e-6),
    Case("RemainderScalarTensor", {"self": Scalar(-7, I32), "other": In((5,), I32, values=[3, -3, 0, 5, 1]),
                                   "out": Out((5,), I32)},
         lambda **v: {"out": np.where(v["other"] == 0, -7, np.remainder(-7, np.where(v["other"] == 0, 1, v["other"])))},
         name="RemainderScalarTensor-int"),
    Case("Square", {"self": In(S, BF16), "out": Out(S, BF16)}, lambda **v: {"out": v["self"] ** 2}),
    Case("Square", {"self": In(S, I32, values=np.arange(15).reshape(S) * 10000), "out": Out(S, I32)},
         lambda **v: {"out": ((v["self"] ** 2 + 2**31) % 2**32) - 2**31}, name="Square-int"),
    Case("RoundDecimals", {"self": In(S, F64, low=-50.0, high=50.0), "decimals": 2, "out": Out(S, F64)},
         lambda **v: {"out": np.round(v["self"] * 100) / 100}),
    Case("RoundDecimals", {"self": In(S, I64, values=np.arange(15).reshape(S) * 37 - 300), "decimals": -1,
                           "out": Out(S, I64)},
         lambda **v: {"out": np.round(v["self"] / 10) * 10}, name="RoundDecimals-int"),
    Case("InplaceRoundDecimals", {"selfRef": Ref(S, low=-4.0, high=4.0), "decimals": 1},
         lambda **v: {"selfRef": np.round(v["selfRef"] * 10) / 10}, atol=1e-6),
    Case("DivMod", {"self": In(S, I32, values=np.arange(15).reshape(S) - 7), "other": In((5,), I32,
                    values=[3, -3, 2, -2, 7]), "mode": 1, "out": Out(S, I32)},
         lambda **v: {"out": np.trunc(v["self"] / v["other"])}),
    Case("DivMod", {"self": In(S), "other": In(S, positive=True), "mode": 2, "out": Out(S)},
         lambda **v: {"out": np.floor(v["self"] / v["other"])}, name="DivMod-floor"),
    Case("DivMods", {"self": In(S, I64), "other": Scalar(4, I64), "mode": 0, "out": Out(S)},
         lambda **v: {"out": v["self"] / 4}),
    Case("InplaceDivMod", {"selfRef": Ref(S, I8, values=np.arange(15).reshape(S) - 7), "other": In((5,), I8,
                           values=[2, -2, 3, -3, 1]), "mode": 2},
         lambda **v: {"selfRef": np.floor(v["selfRef"] / v["other"])}),
    Case("InplaceDivMods", {"selfRef": Ref(S, F16), "other": Scalar(0.75), "mode": 1},
         lambda **v: {"selfRef": np.trunc(v["selfRef"] / 0.75)}),
    Case("IsInScalarTensor", {"element": Scalar(2, I32),
                              "testElements": In(S, I32, values=np.arange(15).reshape(S) % 4),
                              "assumeUnique": False, "invert": False, "out": Out((), BOOL)},
         lambda **v: {"out": np.isin(2, v["testElements"])}),
    Case("IsInScalarTensor", {"element": Scalar(2.5, F64), "testElements": In((3,), F64, values=[1.0, 2.0, 3.0]),
                              "assumeUnique": False, "invert": True, "out": Out((), BOOL)},
         lambda **v: {"out": True}, name="IsInScalarTensor-absent-inverted"),
    Case("IsInTensorScalar", {"element": In(S, F16, values=np.arange(15).reshape(S) / 2), "testElement": Scalar(1.5),
                              "assumeUnique": True, "invert": True, "out": Out(S, BOOL)},
         lambda **v: {"out": v["element"] != 1.5}),
    Case("Equal", {"self": In(S, values=np.arange(15).reshape(S)), "other": In(S, I32, values=np.arange(15).reshape(S)),
                   "out": Out((1,), BOOL)}, lambda **v: {"out": [True]}),
    Case("Equal", {"self": In(S), "other": In(S), "out": Out((1,), BOOL)}, lambda **v: {"out": [False]},
         name="Equal-differ"),
    Case("Equal", {"self": In((5,)), "other": In((1,)), "out": Out((1,), BOOL)}, lambda **v: {"out": [False]},
         name="Equal-shapes"),
    Case("Complex", {"real": In(S), "imag": In((5,)), "out": Out(S, C64)},
         lambda **v: {"out": v["real"] + 1j * v["imag"]}, ulps=0.5),
    Case("Complex", {"real": In(S, F64), "imag": In(S, F64), "out": Out(S, C128)},
         lambda **v: {"out": v["real"] + 1j * v["imag"]}, ulps=0.5, name="Complex-double"),
    Case("Lgamma", {"self": In(S, low=-4.5, high=6.0), "out": Out(S)},
         lambda **v: {"out": np.vectorize(math.lgamma, otypes=[np.float64])(v["self"])}, ulps=4, atol=1e-6),
    Case("Lgamma", {"self": In((4,), values=[0.0, -2.0, 1.0, np.inf]), "out": Out((4,))},
         lambda **v: {"out": [np.inf, np.inf, 0.0, np.inf]}, name="Lgamma-poles"),
    Case("Digamma", {"self": In(S, low=-3.7, high=9.0), "out": Out(S)},
         lambda **v: {"out": _digamma(v["self"])}, ulps=4, atol=1e-6),
    Case("Digamma", {"self": In(S, F16, low=0.2, high=30.0), "out": Out(S, F16)},
         lambda **v: {"out": _digamma(v["self"])}, atol=1e-3, name="Digamma-f16"),
    Case("AddV3", {"self": Scalar(1.5), "other": In(S, F16), "alpha": Scalar(-2.0), "out": Out(S, F16)},
         lambda **v: {"out": 1.5 - 2.0 * v["other"]}),
    Case("InplaceAddV3", {"selfRef": Scalar(3, I32), "other": Ref(S, I32), "alpha": Scalar(2, I32)},
         lambda **v: {"other": 3 + 2 * v["other"]}),
    Case("MaxN", {"tensors": List((In(S), In((5,)), In((3, 1)))), "out": Out(S)},
         lambda **v: {"out": np.maximum(np.maximum(v["tensors"][0], v["tensors"][1]), v["tensors"][2])}),
    Case("MinN", {"tensors": List((In(S, I64), In(S, I64))), "out": Out(S, I64)},
         lambda **v: {"out": np.minimum(v["tensors"][0], v["tensors"][1])}),
    Case("Xlog1py", {"x": In(S, values=np.where(np.arange(15) % 3 == 0, 0, np.arange(15) / 3).reshape(S)),
                     "y": In((5,), positive=True), "z": Out(S)},
         lambda **v: {"z": np.where(v["x"] == 0, 0.0, v["x"] * np.log1p(v["y"]))}, ulps=4),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_elementwise_extra(case: Case, mem: FakeMemory, rng: np.random.Generator) -> None:
    run(case, mem, rng)


def _t(*shape: int, dtype: Any = F32) -> nn.aclTensor:
    return tensor(list(shape), dtype)


def test_the_extra_operators_refuse_what_their_documentation_refuses() -> None:
    refused(
        lambda: nn.aclnnLerpsGetWorkspaceSize(_t(2), _t(2, dtype=F16), scalar(0.5), _t(2)),
        "end has dtype ACL_FLOAT16; it must have self's dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnInplaceLerpsGetWorkspaceSize(_t(2), _t(3, 2), scalar(0.5)),
        "selfRef has shape [2], but the result has shape [3, 2]",
    )
    refused(
        lambda: nn.aclnnIsPosInfGetWorkspaceSize(_t(2, dtype=I32), _t(2, dtype=BOOL)),
        "self has dtype ACL_INT32; supported: ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16",
    )
    refused(
        lambda: nn.aclnnLeftShiftGetWorkspaceSize(_t(2), _t(2, dtype=I32), _t(2)),
        "self has dtype ACL_FLOAT; supported: ACL_INT16, ACL_INT32, ACL_INT64, ACL_INT8, ACL_UINT16, ACL_UINT32, "
        "ACL_UINT64, ACL_UINT8",
    )
    refused(
        lambda: nn.aclnnLogAddExpGetWorkspaceSize(_t(2, dtype=I32), _t(2, dtype=I32), _t(2, dtype=I32)),
        "out has dtype ACL_INT32, which the result dtype ACL_FLOAT cannot be cast to",
    )
    refused(
        lambda: nn.aclnnRsubGetWorkspaceSize(_t(2, dtype=BOOL), _t(2), scalar(1.0), _t(2)),
        "self is ACL_BOOL: subtraction with a bool operand is not supported",
    )
    refused(
        lambda: nn.aclnnRemainderScalarTensorGetWorkspaceSize(scalar(1.0), _t(2, dtype=U8), _t(2)),
        "other has dtype ACL_UINT8; supported: ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT64",
    )
    refused(
        lambda: nn.aclnnSquareGetWorkspaceSize(_t(2, dtype=I32), _t(2, dtype=I64)),
        "out has dtype ACL_INT64, but the result has dtype ACL_INT32",
    )
    refused(
        lambda: nn.aclnnXlog1pyGetWorkspaceSize(_t(2, dtype=F64), _t(2, dtype=F64), _t(2, dtype=F64)),
        "x has dtype ACL_DOUBLE; supported: ACL_BF16, ACL_FLOAT, ACL_FLOAT16",
    )
    refused(
        lambda: nn.aclnnDivModGetWorkspaceSize(_t(2), _t(2), 3, _t(2)),
        "mode is 3; it must be 0 (true division), 1 (trunc) or 2 (floor)",
    )
    refused(
        lambda: nn.aclnnInplaceDivModsGetWorkspaceSize(_t(2, dtype=I32), scalar(2, I32), 0),
        "selfRef has dtype ACL_INT32, which the result dtype ACL_FLOAT cannot be cast to",
    )
    refused(
        lambda: nn.aclnnRoundDecimalsGetWorkspaceSize(_t(2, dtype=I8), 1, _t(2, dtype=I8)),
        "self has dtype ACL_INT8; supported: ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT64",
    )
    refused(
        lambda: nn.aclnnMaxNGetWorkspaceSize(nn.aclCreateTensorList([_t(2), _t(2, dtype=F16)]), _t(2)),
        "tensors[1] has dtype ACL_FLOAT16; it must have tensors[0]'s dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnAddV3GetWorkspaceSize(scalar(1.0), _t(2, dtype=I64), scalar(1.0), _t(2, dtype=I64)),
        "other has dtype ACL_INT64; supported: ACL_BF16, ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT8",
    )
    refused(
        lambda: nn.aclnnComplexGetWorkspaceSize(_t(2), _t(2, dtype=F16), _t(2, dtype=C64)),
        "imag has dtype ACL_FLOAT16; it must have real's dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnEqualGetWorkspaceSize(_t(2), _t(2), _t(2, dtype=BOOL)),
        "out has shape [2], but the result has shape [1]",
    )
    refused(
        lambda: nn.aclnnDigammaGetWorkspaceSize(_t(2, dtype=BF16), _t(2, dtype=BF16)),
        "self has dtype ACL_BF16; supported: ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16",
    )
    refused(
        lambda: nn.aclnnIsInTensorScalarGetWorkspaceSize(_t(2), scalar(1.0), False, False, _t(2)),
        "out has dtype ACL_FLOAT; supported: ACL_BOOL",
    )


def test_integer_div_mod_by_zero_is_refused_when_it_runs(mem: FakeMemory, rng: np.random.Generator) -> None:
    case = Case("DivMod", {"self": In((2,), I32), "other": In((2,), I32, values=[1, 0]), "mode": 2,
                           "out": Out((2,), I32)}, lambda **v: {})  # fmt: skip
    with pytest.raises(AclError) as caught:
        run(case, mem, rng)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID and "other: holds a zero" in caught.value.message
