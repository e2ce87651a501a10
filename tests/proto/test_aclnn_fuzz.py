"""Phase 1 of every declared operator fed random descriptors: it answers a workspace size and an executor, or an
aclnn status (161001, 161002, 561003), never a Python exception and never a hang. Implemented operators are also
fed their test rows with one argument changed at random (another shape, dtype, value or NULL), which takes the
fuzz past the first check into the rules' depths."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

import proto.aclnn as nn
from proto.aclnn import ArgKind, OpDecl
from proto.aclnn.decl import LIST_KINDS, TENSOR_KINDS
from proto.aclnn.dtypes import INFO, SCALAR_DTYPES
from proto.constants import aclDataType, aclFormat
from proto.errors import (
    ACLNN_ERR_INNER_FIND_KERNEL,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    AclError,
)

ANSWERS = {ACLNN_ERR_PARAM_NULLPTR, ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_INNER_FIND_KERNEL}
COMMON = [aclDataType.ACL_FLOAT, aclDataType.ACL_FLOAT16, aclDataType.ACL_BF16, aclDataType.ACL_INT32,
          aclDataType.ACL_INT64, aclDataType.ACL_INT8, aclDataType.ACL_BOOL]  # fmt: skip
DTYPES = sorted(INFO)
LAYOUTS = ["BSH", "BSND", "BNSD", "TND", "NTD", "BNSD_BSND", "SBH", "", "Norm", "PA_NZ", "none", "mean", "x" * 9]
SIZES = [0, 1, 1, 2, 3, 4, 8, 16]
INTS = [0, 1, -1, 2, 3, 7, 16, 64, 128, -(2**31), 2**31 - 1, 2**63 - 1, -(2**63)]
CASES_PER_OPERATOR = 6
BUDGET_S = 2.0  # one operator's random cases, however unlucky


def shape(r: random.Random) -> list[int]:
    return [r.choice(SIZES) for _ in range(r.choice([0, 1, 1, 2, 2, 3, 3, 4, 5]))]


def tensor(r: random.Random, dims: list[int] | None = None) -> nn.aclTensor:
    dims = shape(r) if dims is None else dims
    dtype = r.choice(COMMON) if r.random() < 0.85 else r.choice(DTYPES)
    fmt = aclFormat.ACL_FORMAT_ND if r.random() < 0.9 else r.choice(list(aclFormat))
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(dims[i + 1], 1)
    extent = sum((d - 1) * s for d, s in zip(dims, strides, strict=True)) + 1 if all(dims) else 1
    return nn.aclCreateTensor(
        dims, dtype, strides, 0, fmt, [max(extent, 1)], 0x12C0_0000_0000 + r.randrange(1 << 20) * 64
    )


def scalar(r: random.Random) -> nn.aclScalar:
    dtype = r.choice(sorted(SCALAR_DTYPES))
    if dtype == aclDataType.ACL_BOOL:
        return nn.aclCreateScalar(r.random() < 0.5, dtype)
    if INFO[dtype].kind.value == "float":
        return nn.aclCreateScalar(r.choice([0.0, 1.0, -2.5, 1e-6, 3.0e38, float("inf"), float("nan")]), dtype)
    return nn.aclCreateScalar(r.choice([0, 1, 2, 5]), dtype)


def value(r: random.Random, kind: ArgKind) -> Any:
    """A random argument of `kind`: mostly well-typed, sometimes of another kind or NULL."""
    if r.random() < 0.08:
        return None
    if r.random() < 0.04:
        return r.choice([1, 2.5, "x", True, tensor(r), nn.aclCreateIntArray([1])])  # the wrong kind
    if kind in TENSOR_KINDS:
        return tensor(r)
    if kind in LIST_KINDS:
        dims = shape(r)
        return nn.aclCreateTensorList(
            [tensor(r, dims if r.random() < 0.7 else None) for _ in range(r.choice([0, 1, 2, 3]))]
        )
    makers = {
        ArgKind.SCALAR: lambda: scalar(r),
        ArgKind.SCALAR_LIST: lambda: nn.aclCreateScalarList([scalar(r) for _ in range(r.choice([0, 1, 2]))]),
        ArgKind.INT_ARRAY: lambda: nn.aclCreateIntArray([r.choice(INTS[:9]) for _ in range(r.choice([0, 1, 2, 4]))]),
        ArgKind.BOOL_ARRAY: lambda: nn.aclCreateBoolArray([r.random() < 0.5 for _ in range(r.choice([0, 1, 3]))]),
        ArgKind.FLOAT_ARRAY: lambda: nn.aclCreateFloatArray([r.random() for _ in range(r.choice([0, 1, 3]))]),
        ArgKind.DOUBLE: lambda: r.choice([0.0, 1e-5, 0.5, 1.0, -1.0, 1e300, float("inf"), float("nan")]),
        ArgKind.FLOAT: lambda: r.choice([0.0, 1e-5, 0.5, 1.0, -1.0, float("nan")]),
        ArgKind.BOOL: lambda: r.random() < 0.5,
        ArgKind.STRING: lambda: r.choice(LAYOUTS),
        ArgKind.DTYPE: lambda: r.choice(DTYPES),
    }
    maker = makers.get(kind)
    return maker() if maker is not None else r.choice(INTS)


def attempt(decl: OpDecl, values: list[Any]) -> None:
    phase1 = nn.function(decl.ws_name)
    assert phase1 is not None
    try:
        size, executor = phase1(*values)
    except AclError as error:
        assert error.code in ANSWERS, (decl.name, error)
        assert error.api == decl.ws_name and error.message, (decl.name, error)
        return
    assert isinstance(size, int) and size >= 0 and executor.kernel.op == decl.name and decl.implemented


@pytest.mark.parametrize("repo", ["math", "nn", "transformer", "cv"])
def test_every_declared_operator_answers_random_descriptors(repo: str) -> None:
    from proto.aclnn.catalog import catalog

    r = random.Random(f"fuzz-{repo}")
    for op in catalog().by_repo[repo]:
        decl = nn.OPS[op.name]
        started = time.perf_counter()
        for _ in range(CASES_PER_OPERATOR):
            attempt(decl, [value(r, arg.kind) for arg in decl.args])
        assert time.perf_counter() - started < BUDGET_S, decl.name
