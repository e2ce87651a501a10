"""Phase 1 of every implemented operator fed its test rows with one argument changed at random (another shape,
dtype, value, kind or NULL): an executor or an aclnn status, never a Python exception -- the random descriptors of
tests/proto/test_aclnn_fuzz.py, taken past the first check into the rules' depths."""

from __future__ import annotations

import importlib
import random
from typing import Any

import proto.aclnn as nn
from proto.aclnn import ArgKind
from proto.constants import aclDataType, aclFormat
from tests.proto.test_aclnn_fuzz import COMMON, INTS, attempt, value
from tests.server.npu.ops.test_first_ops_cases import CASE_MODULES


def test_implemented_operators_answer_their_rows_mutated() -> None:
    rows = _rows(CASE_MODULES)
    r = random.Random("mutate")
    for case in rows:
        decl = nn.OPS[case.op]
        base = {name: _host(spec, r) for name, spec in case.args.items()}
        for _ in range(8):
            values = dict(base)
            arg = r.choice(decl.args)
            values[arg.name] = _mutated(r, arg.kind, values[arg.name])
            attempt(decl, [values[name] for name in decl.arg_names])


def _rows(modules: tuple[str, ...]) -> list[Any]:
    return [case for module in modules for case in importlib.import_module(module).CASES]


def _host(spec: Any, r: random.Random) -> Any:
    """A row's argument as a host object over fake addresses (phase 1 reads no memory)."""
    from tests.server.npu.ops import opcases as oc

    if isinstance(spec, oc.In | oc.Out | oc.Ref):
        return _dense(list(spec.shape), spec.dtype, r)
    if isinstance(spec, oc.List):
        return nn.aclCreateTensorList([_dense(list(item.shape), item.dtype, r) for item in spec.items])
    if isinstance(spec, oc.Scalar):
        return nn.aclCreateScalar(spec.value, spec.dtype)
    if isinstance(spec, oc.Ints):
        return nn.aclCreateIntArray(spec.values)
    return spec


def _dense(dims: list[int], dtype: aclDataType, r: random.Random) -> nn.aclTensor:
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(dims[i + 1], 1)
    extent = max(1, sum((d - 1) * s for d, s in zip(dims, strides, strict=True)) + 1)
    return nn.aclCreateTensor(
        dims, dtype, strides, 0, aclFormat.ACL_FORMAT_ND, [extent], 0x12C0_0000_0000 + r.randrange(1 << 16) * 4096
    )


def _mutated(r: random.Random, kind: ArgKind, current: Any) -> Any:
    if isinstance(current, nn.aclTensor) and r.random() < 0.6:
        dims = list(current.view_dims)
        if dims and r.random() < 0.5:
            i = r.randrange(len(dims))
            dims[i] = r.choice([0, 1, dims[i] + 1, max(dims[i] - 1, 0), dims[i] * 2])
        elif r.random() < 0.5:
            dims = dims[:-1] if dims and r.random() < 0.5 else [*dims, r.choice([1, 2])]
        dtype = current.data_type if r.random() < 0.6 else r.choice(COMMON)
        return _dense(dims, dtype, r)
    if isinstance(current, int) and not isinstance(current, bool) and r.random() < 0.7:
        return r.choice([current + 1, current - 1, -current, 0, current * 2, *INTS])
    return value(r, kind)
