"""vnpu's first 21 operators (the planners of server/npu/ops) as rows of the one harness, and the check that every
implemented operator has at least one row somewhere (`CASE_MODULES`)."""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
import pytest
from aclnn_testkit import FakeMemory

from proto.aclnn import RULES
from tests.server.npu.ops.opcases import BF16, F16, F32, I32, Case, In, Ints, Out, Ref, Scalar, as_f32, run

S = (3, 4)
GELU = np.vectorize(lambda x: 0.5 * x * (1 + math.erf(x / math.sqrt(2))))


def _softmax(x: Any) -> Any:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


CASES = [
    Case("Add", {"self": In(S), "other": In((4,)), "alpha": Scalar(0.5), "out": Out(S)},
         lambda **v: {"out": v["self"] + as_f32(0.5) * v["other"]}),
    Case("Adds", {"self": In(S, F16), "other": Scalar(1.25), "alpha": Scalar(2.0), "out": Out(S, F16)},
         lambda **v: {"out": v["self"] + 2.5}),
    Case("Sub", {"self": In(S, I32), "other": In(S, I32), "alpha": Scalar(1, I32), "out": Out(S, I32)},
         lambda **v: {"out": v["self"] - v["other"]}),
    Case("Subs", {"self": In(S), "other": Scalar(0.5), "alpha": Scalar(1.0), "out": Out(S)},
         lambda **v: {"out": v["self"] - 0.5}),
    Case("Mul", {"self": In(S, BF16), "other": In(S, BF16), "out": Out(S, BF16)},
         lambda **v: {"out": v["self"] * v["other"]}),
    Case("Muls", {"self": In(S), "other": Scalar(3.0), "out": Out(S)}, lambda **v: {"out": v["self"] * 3}),
    Case("Div", {"self": In(S), "other": In(S, positive=True), "out": Out(S)},
         lambda **v: {"out": v["self"] / v["other"]}),
    Case("InplaceAdd", {"selfRef": Ref(S), "other": In(S), "alpha": Scalar(1.0)},
         lambda **v: {"selfRef": v["selfRef"] + v["other"]}),
    Case("InplaceMul", {"selfRef": Ref(S), "other": In((4,))}, lambda **v: {"selfRef": v["selfRef"] * v["other"]}),
    Case("Relu", {"self": In(S), "out": Out(S)}, lambda **v: {"out": np.maximum(v["self"], 0)}),
    Case("Gelu", {"self": In(S), "out": Out(S)}, lambda **v: {"out": GELU(v["self"])}, atol=1e-7),
    Case("Silu", {"self": In(S), "out": Out(S)}, lambda **v: {"out": v["self"] / (1 + np.exp(-v["self"]))},
         ulps=4, atol=1e-7),
    Case("Abs", {"self": In(S, I32), "out": Out(S, I32)}, lambda **v: {"out": np.abs(v["self"])}),
    Case("Neg", {"self": In(S), "out": Out(S)}, lambda **v: {"out": -v["self"]}),
    Case("Exp", {"self": In(S), "out": Out(S)}, lambda **v: {"out": np.exp(v["self"])}),
    Case("Softmax", {"self": In(S), "dim": -1, "out": Out(S)}, lambda **v: {"out": _softmax(v["self"])}, ulps=4),
    Case("Cast", {"self": In(S), "dtype": F16, "out": Out(S, F16)}, lambda **v: {"out": v["self"]}, ulps=0.5),
    Case("InplaceCopy", {"selfRef": Ref(S, BF16), "src": In((4,))},
         lambda **v: {"selfRef": np.broadcast_to(v["src"], S)}, ulps=0.5),
    Case("ReduceSum", {"self": In(S), "dims": Ints((1,)), "keepDims": False, "dtype": F32, "out": Out((3,))},
         lambda **v: {"out": v["self"].sum(1)}, ulps=4, atol=1e-6),
    Case("Mean", {"self": In(S), "dim": Ints(()), "keepDim": False, "dtype": F32, "out": Out(())},
         lambda **v: {"out": v["self"].mean()}, ulps=4, atol=1e-7),
    Case("Matmul", {"self": In((2, 3, 5)), "mat2": In((5, 4)), "out": Out((2, 3, 4)), "cubeMathType": 0},
         lambda **v: {"out": v["self"] @ v["mat2"]}, atol=1e-5),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_first_operators(case: Case, mem: FakeMemory, rng: np.random.Generator) -> None:
    run(case, mem, rng)


CASE_MODULES = (
    "tests.server.npu.ops.test_first_ops_cases",
    "tests.server.npu.ops.math.test_pointwise_cases",
    "tests.server.npu.ops.math.test_math_cases",
    "tests.server.npu.ops.nn.test_nn_cases",
    "tests.server.npu.ops.nn.test_grad_loss_cases",
    "tests.server.npu.ops.transformer.test_transformer_cases",
    "tests.server.npu.ops.math.test_elementwise_more_cases",
    "tests.server.npu.ops.math.test_elementwise_extra_cases",
    "tests.server.npu.ops.nn.test_activation_more_cases",
)


def test_every_implemented_operator_has_a_case_row() -> None:
    """Adding an operator is a rule row, a kernel and a test row: no operator is implemented without a row."""
    rows = {case.op for module in CASE_MODULES for case in importlib.import_module(module).CASES}
    assert set(RULES) - rows == set()
    assert rows - set(RULES) == set()
