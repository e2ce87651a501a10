"""ops-math's creation, layout, selection and reduction operators end to end, one row each (see opcases.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from aclnn_testkit import FakeMemory

from tests.server.npu.ops.opcases import (
    BOOL,
    DT,
    F16,
    F32,
    I32,
    I64,
    Case,
    In,
    Ints,
    List,
    Out,
    Ref,
    Scalar,
    run,
)

S = (3, 4)


def _var(x: Any, axes: tuple[int, ...], correction: int, keep: bool) -> Any:
    return np.var(x, axis=axes, ddof=correction, keepdims=keep)


def _sort(x: Any) -> dict[str, Any]:
    order = np.argsort(x, axis=-1, kind="stable")
    return {"valuesOut": np.take_along_axis(x, order, -1), "indicesOut": order}


def _topk(x: Any) -> dict[str, Any]:
    order = np.argsort(-x, axis=1, kind="stable")[:, :2]
    return {"valuesOut": np.take_along_axis(x, order, 1), "indicesOut": order}


def _min_dim(x: Any) -> dict[str, Any]:
    return {"out": x.min(1), "indices": x.argmin(1)}


def _max_dim(x: Any) -> dict[str, Any]:
    return {"out": x.max(1), "indices": x.argmax(1)}


CASES = [
    # creation and fills
    Case(
        "Arange",
        {"start": Scalar(1.0), "end": Scalar(4.0), "step": Scalar(0.5), "out": Out((6,))},
        lambda **v: {"out": 1.0 + 0.5 * np.arange(6)},
    ),
    Case(
        "Linspace",
        {"start": Scalar(-1.0), "end": Scalar(2.0), "steps": 7, "out": Out((7,))},
        lambda **v: {"out": np.linspace(-1, 2, 7)},
    ),
    Case("Eye", {"n": 3, "m": 5, "out": Out((3, 5), F16)}, lambda **v: {"out": np.eye(3, 5)}),
    Case("InplaceFillScalar", {"selfRef": Ref(S), "value": Scalar(2.5)}, lambda **v: {"selfRef": 2.5}),
    Case("InplaceFillTensor", {"selfRef": Ref(S, I32), "value": In((), I64)}, lambda **v: {"selfRef": v["value"]}),
    Case("InplaceZero", {"selfRef": Ref(S, F16)}, lambda **v: {"selfRef": 0.0}),
    Case("InplaceOne", {"selfRef": Ref(S, I64)}, lambda **v: {"selfRef": 1}),
    Case(
        "InplaceMaskedFillScalar",
        {"selfRef": Ref(S), "mask": In((4,), BOOL), "value": Scalar(-1.0)},
        lambda **v: {"selfRef": np.where(v["mask"], -1.0, v["selfRef"])},
    ),
    Case(
        "InplaceMaskedFillTensor",
        {"selfRef": Ref(S), "mask": In(S, BOOL), "value": In(())},
        lambda **v: {"selfRef": np.where(v["mask"], v["value"], v["selfRef"])},
    ),
    Case(
        "SWhere",
        {"condition": In(S, BOOL), "self": In(S), "other": In((4,), F16), "out": Out(S)},
        lambda **v: {"out": np.where(v["condition"], v["self"], v["other"])},
    ),
    Case(
        "Clamp",
        {"self": In(S), "clipValueMin": Scalar(-0.5), "clipValueMax": Scalar(0.75), "out": Out(S)},
        lambda **v: {"out": np.clip(v["self"], -0.5, 0.75)},
    ),
    Case(
        "ClampMin",
        {"self": In(S), "clipValueMin": Scalar(0.25), "out": Out(S)},
        lambda **v: {"out": np.maximum(v["self"], 0.25)},
    ),
    Case(
        "ClampMax",
        {"self": In(S, I32), "clipValueMax": Scalar(3, I32), "out": Out(S, I32)},
        lambda **v: {"out": np.minimum(v["self"], 3)},
    ),
    Case(
        "ClampTensor",
        {"self": In(S), "clipValueMin": In((4,)), "clipValueMax": None, "out": Out(S)},
        lambda **v: {"out": np.maximum(v["self"], v["clipValueMin"])},
    ),
    Case(
        "Hardtanh",
        {"self": In(S, F16), "clipValueMin": Scalar(-1.0), "clipValueMax": Scalar(1.0), "out": Out(S, F16)},
        lambda **v: {"out": np.clip(v["self"], -1, 1)},
    ),
    Case(
        "Dot",
        {"self": In((7,)), "tensor": In((7,)), "out": Out(())},
        lambda **v: {"out": v["self"] @ v["tensor"]},
        atol=1e-5,
    ),
    Case(
        "Sum",
        {"tensors": List((In(S), In((4,)), In(S, F16))), "out": Out(S)},
        lambda **v: {"out": v["tensors"][0] + v["tensors"][1] + v["tensors"][2]},
        atol=1e-6,
    ),
    # shapes
    Case(
        "Cat",
        {"tensors": List((In((2, 4)), In((3, 4), F16))), "dim": 0, "out": Out((5, 4))},
        lambda **v: {"out": np.concatenate(v["tensors"], 0)},
    ),
    Case(
        "Stack",
        {"tensors": List((In(S), In(S))), "dim": 1, "out": Out((3, 2, 4))},
        lambda **v: {"out": np.stack(v["tensors"], 1)},
    ),
    Case(
        "SplitWithSize",
        {"self": In((5, 4)), "splitSize": Ints((2, 3)), "dim": 0, "out": List((Out((2, 4)), Out((3, 4))))},
        lambda **v: {"out": [v["self"][:2], v["self"][2:]]},
    ),
    Case(
        "Slice",
        {"self": In((6, 4)), "dim": 0, "start": 1, "end": 6, "step": 2, "out": Out((3, 4))},
        lambda **v: {"out": v["self"][1:6:2]},
    ),
    Case(
        "Permute",
        {"self": In((2, 3, 4)), "dims": Ints((2, 0, 1)), "out": Out((4, 2, 3))},
        lambda **v: {"out": v["self"].transpose(2, 0, 1)},
    ),
    Case(
        "Repeat",
        {"self": In(S), "repeats": Ints((2, 1, 2)), "out": Out((2, 3, 8))},
        lambda **v: {"out": np.tile(v["self"], (2, 1, 2))},
    ),
    Case(
        "Expand",
        {"self": In((3, 1)), "size": Ints((2, 3, 4)), "out": Out((2, 3, 4))},
        lambda **v: {"out": np.broadcast_to(v["self"], (2, 3, 4))},
    ),
    Case(
        "Roll",
        {"x": In(S), "shifts": Ints((1, -2)), "dims": Ints((0, 1)), "out": Out(S)},
        lambda **v: {"out": np.roll(v["x"], (1, -2), (0, 1))},
    ),
    Case(
        "Roll",
        {"x": In((2, 5), DT.ACL_UINT32), "shifts": Ints((3,)), "dims": Ints(()), "out": Out((2, 5), DT.ACL_UINT32)},
        lambda **v: {"out": np.roll(v["x"].reshape(-1), 3).reshape(2, 5)},
        name="Roll-uint32-flattened",
    ),
    Case("Triu", {"self": In((4, 4)), "diagonal": 1, "out": Out((4, 4))}, lambda **v: {"out": np.triu(v["self"], 1)}),
    Case(
        "Tril",
        {"self": In((2, 4, 4), I32), "diagonal": 0, "out": Out((2, 4, 4), I32)},
        lambda **v: {"out": np.tril(v["self"])},
    ),
    Case("InplaceTriu", {"selfRef": Ref((4, 5)), "diagonal": -1}, lambda **v: {"selfRef": np.triu(v["selfRef"], -1)}),
    Case("InplaceTril", {"selfRef": Ref((4, 5)), "diagonal": 2}, lambda **v: {"selfRef": np.tril(v["selfRef"], 2)}),
    # reductions and scans
    Case(
        "ArgMax",
        {"self": In(S), "dim": 1, "keepdim": False, "out": Out((3,), I64)},
        lambda **v: {"out": v["self"].argmax(1)},
    ),
    Case(
        "ArgMin",
        {"self": In(S), "dim": -1, "keepdim": True, "out": Out((3, 1), I32)},
        lambda **v: {"out": v["self"].argmin(1)[:, None]},
    ),
    Case("Max", {"self": In(S), "out": Out(())}, lambda **v: {"out": v["self"].max()}),
    Case("Min", {"self": In(S, I32), "out": Out((), I32)}, lambda **v: {"out": v["self"].min()}),
    # a whole reduction's out may be (1), as CANN's documentation and examples have it
    Case("Max", {"self": In(S), "out": Out((1,))}, lambda **v: {"out": v["self"].max().reshape(1)}),
    Case("Min", {"self": In(S), "out": Out((1,))}, lambda **v: {"out": v["self"].min().reshape(1)}),
    Case(
        "MaxDim",
        {"self": In(S), "dim": 1, "keepdim": False, "out": Out((3,)), "indices": Out((3,), I64)},
        lambda **v: _max_dim(v["self"]),
    ),
    Case(
        "MinDim",
        {"self": In(S), "dim": 1, "keepdim": False, "out": Out((3,)), "indices": Out((3,), I64)},
        lambda **v: _min_dim(v["self"]),
    ),
    Case(
        "Amax",
        {"self": In(S), "dim": Ints((0,)), "keepDim": False, "out": Out((4,))},
        lambda **v: {"out": v["self"].max(0)},
    ),
    Case(
        "Amin",
        {"self": In((2, 3, 4)), "dim": Ints((0, 2)), "keepDim": True, "out": Out((1, 3, 1))},
        lambda **v: {"out": v["self"].min((0, 2), keepdims=True)},
    ),
    Case(
        "Prod",
        {"self": In(S, F32, low=0.5, high=1.5), "dtype": F32, "out": Out(())},
        lambda **v: {"out": v["self"].prod()},
        ulps=8,
    ),
    Case(
        "Prod",
        {"self": In(S, F32, low=0.5, high=1.5), "dtype": F32, "out": Out((1,))},
        lambda **v: {"out": v["self"].prod().reshape(1)},
        ulps=8,
    ),
    Case(
        "ProdDim",
        {"self": In(S, I32), "dim": 1, "keepDim": False, "dtype": I64, "out": Out((3,), I64)},
        lambda **v: {"out": v["self"].prod(1)},
    ),
    Case(
        "Cumsum",
        {"self": In(S, F16), "dim": 1, "dtype": F32, "out": Out(S)},
        lambda **v: {"out": v["self"].cumsum(1)},
        ulps=4,
    ),
    Case(
        "Var",
        {"self": In(S), "dim": Ints((1,)), "unbiased": True, "keepdim": False, "out": Out((3,))},
        lambda **v: {"out": _var(v["self"], (1,), 1, False)},
        ulps=8,
    ),
    Case(
        "Std",
        {"self": In(S), "dim": Ints(()), "correction": 0, "keepdim": False, "out": Out(())},
        lambda **v: {"out": np.sqrt(_var(v["self"], (0, 1), 0, False))},
        ulps=8,
    ),
    Case(
        "VarMean",
        {
            "self": In(S),
            "dim": Ints((0,)),
            "correction": 1,
            "keepdim": True,
            "varOut": Out((1, 4)),
            "meanOut": Out((1, 4)),
        },
        lambda **v: {"varOut": _var(v["self"], (0,), 1, True), "meanOut": v["self"].mean(0, keepdims=True)},
        ulps=8,
        atol=1e-6,
    ),
    Case(
        "LogSumExp",
        {"self": In(S), "dim": Ints((1,)), "keepDim": False, "out": Out((3,))},
        lambda **v: {"out": np.log(np.exp(v["self"]).sum(1))},
        ulps=4,
    ),
    Case(
        "Any",
        {"self": In(S, BOOL), "dim": Ints((1,)), "keepdim": False, "out": Out((3,), BOOL)},
        lambda **v: {"out": v["self"].any(1)},
    ),
    Case(
        "All",
        {"self": In(S, I32), "dim": Ints(()), "keepdim": False, "out": Out((), BOOL)},
        lambda **v: {"out": v["self"].all()},
    ),
    Case(
        "Sort",
        {"self": In(S), "stable": True, "dim": -1, "descending": False, "valuesOut": Out(S), "indicesOut": Out(S, I64)},
        lambda **v: _sort(v["self"]),
    ),
    Case(
        "Topk",
        {
            "self": In(S),
            "k": 2,
            "dim": 1,
            "largest": True,
            "sorted": True,
            "valuesOut": Out((3, 2)),
            "indicesOut": Out((3, 2), I64),
        },
        lambda **v: _topk(v["self"]),
    ),
    # random fills: their values are the generator's; the rows check that phase 1 and the launch go through
    Case(
        "InplaceUniform",
        {"selfRef": Ref(S), "from": 0.0, "to": 1.0, "seed": 7, "offset": 0},
        lambda **v: {},
        skip=("selfRef",),
    ),
    Case(
        "SimThreadExponential",
        {"selfRef": Ref(S), "count": 12, "lambd": 2.0, "seed": 7, "offset": 0},
        lambda **v: {},
        skip=("selfRef",),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_math(case: Case, mem: FakeMemory, rng: np.random.Generator) -> None:
    run(case, mem, rng)
