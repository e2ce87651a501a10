"""A user-declared operator's kernel on the device (`server.npu.ops.user`): called by C argument name over views
of device memory (strided inputs, its workspace), values against float64; an exception it raises fails the launch
as its core would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from aclnn_testkit import FakeMemory, close, sample

import proto.aclnn as nn
from proto import operators
from proto.aclnn import Arg, ArgKind, OpDecl
from proto.aclnn.rules import Unary
from proto.constants import aclDataType
from proto.errors import ACL_ERROR_RT_AICORE_EXCEPTION, ACL_ERROR_RT_VECTOR_CORE_EXCEPTION, AclError

DT = aclDataType


@pytest.fixture
def outer() -> Iterator[Any]:
    operators.load(["tests.user_operators"], entry_points_too=False)
    yield operators.USER["OuterScaledAdd"].ws_function
    operators.undeclare("OuterScaledAdd")


@pytest.mark.parametrize(
    ("dtype", "out_dtype"),
    [(DT.ACL_FLOAT, DT.ACL_FLOAT), (DT.ACL_FLOAT16, DT.ACL_FLOAT16), (DT.ACL_BF16, DT.ACL_FLOAT)],
    ids=str,
)
def test_the_kernel_runs_over_strided_views_and_its_workspace(
    mem: FakeMemory, rng: np.random.Generator, outer: Any, dtype: DT, out_dtype: DT
) -> None:
    a, b = sample(rng, (6,), dtype), sample(rng, (9,), dtype)
    self_, other = mem.tensor(a, dtype, step=3), mem.tensor(b, dtype, step=2, offset=1)
    out = mem.empty((6, 9), out_dtype, order=(1, 0))  # column-major
    scale = float(rng.standard_normal())
    assert mem.launch(outer, self_, other, nn.aclCreateScalar(scale, DT.ACL_FLOAT), out) == 512
    want = a.astype(np.float64)[:, None] + np.float64(np.float32(scale)) * b.astype(np.float64)[None, :]
    close(mem.read(out), want, out_dtype)


def test_an_empty_launch_touches_nothing(mem: FakeMemory, outer: Any) -> None:
    out = mem.empty((0, 4), DT.ACL_FLOAT)
    empty, four = mem.empty((0,), DT.ACL_FLOAT), mem.empty((4,), DT.ACL_FLOAT)
    assert mem.launch(outer, empty, four, nn.aclCreateScalar(1.0, DT.ACL_FLOAT), out) == 0


@pytest.mark.parametrize(
    ("kind", "code"), [("vector", ACL_ERROR_RT_VECTOR_CORE_EXCEPTION), ("cube", ACL_ERROR_RT_AICORE_EXCEPTION)]
)
def test_a_kernel_that_raises_fails_as_its_core_would(mem: FakeMemory, kind: Any, code: int) -> None:
    def broken(self: np.ndarray, out: np.ndarray, workspace: None) -> None:
        raise ValueError("index 9 is out of bounds")

    decl = OpDecl("Broken", (Arg("self", ArgKind.TENSOR), Arg("out", ArgKind.OUT)), Unary(), kind)
    found = operators.declare(decl, broken, module="my.ops")
    try:
        x = mem.tensor(np.ones(3, np.float32), DT.ACL_FLOAT)
        with pytest.raises(AclError) as info:
            mem.launch(found.ws_function, x, mem.empty((3,), DT.ACL_FLOAT))
        assert info.value.code == code and info.value.api == "aclnnBroken"
        assert (
            info.value.message
            == "the numpy kernel of aclnnBroken (my.ops) failed: ValueError('index 9 is out of bounds')"
        )
    finally:
        operators.undeclare("Broken")
