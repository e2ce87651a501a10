"""Host-side helpers for the aclnn tests: contiguous tensors at distinct fake addresses, scalars."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import pytest

from proto.aclnn import ArgKind, OpDecl, aclCreateIntArray, aclCreateScalar, aclCreateTensor, aclScalar, aclTensor
from proto.aclnn.decl import ArgValue
from proto.constants import aclDataType, aclFormat
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError

DT = aclDataType
_addresses = itertools.count(1)


def tensor(
    shape: Sequence[int],
    dtype: aclDataType = DT.ACL_FLOAT,
    *,
    strides: Sequence[int] | None = None,
    offset: int = 0,
    fmt: aclFormat = aclFormat.ACL_FORMAT_ND,
    data: int | None = None,
) -> aclTensor:
    """A tensor over its own storage (C-order strides unless given), at a fresh 1 MiB-apart address."""
    if strides is None:
        strides = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
    extent = offset + sum((d - 1) * s for d, s in zip(shape, strides, strict=True)) + 1
    address = data if data is not None else next(_addresses) << 20
    return aclCreateTensor(shape, dtype, strides, offset, fmt, [extent], address)


def scalar(value: bool | float, dtype: aclDataType = DT.ACL_FLOAT) -> aclScalar:
    return aclCreateScalar(value, dtype)


def valid_args(decl: OpDecl) -> dict[str, ArgValue]:
    """A valid argument set for any operator: 2x3 float tensors, alpha 1, dim/dtype attributes that fit."""
    if decl.name == "Matmul":
        return {"self": tensor([2, 3]), "mat2": tensor([3, 4]), "out": tensor([2, 4]), "cubeMathType": 0}
    if decl.name in ("ReduceSum", "Mean"):
        dim, keep = ("dims", "keepDims") if decl.name == "ReduceSum" else ("dim", "keepDim")
        return {
            "self": tensor([2, 3]),
            dim: aclCreateIntArray([1]),
            keep: False,
            "dtype": DT.ACL_FLOAT,
            "out": tensor([2]),
        }
    values = {
        ArgKind.TENSOR: lambda: tensor([2, 3]),
        ArgKind.OUT: lambda: tensor([2, 3]),
        ArgKind.INPLACE: lambda: tensor([2, 3]),
        ArgKind.SCALAR: lambda: scalar(1.0),
        ArgKind.INT: lambda: -1,
        ArgKind.INT8: lambda: 0,
        ArgKind.DTYPE: lambda: DT.ACL_FLOAT,
    }
    return {arg.name: values[arg.kind]() for arg in decl.args}


def refused(call: Callable[[], object], message: str, code: int = ACLNN_ERR_PARAM_INVALID) -> None:
    """`call`, a phase 1, fails with `code` (161002 unless given) and exactly `message` after the operator's name."""
    with pytest.raises(AclError) as caught:
        call()
    assert (caught.value.code, caught.value.message.split(": ", 1)[1]) == (code, message)
    assert caught.value.api.endswith("WorkspaceSize")
