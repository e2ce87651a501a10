"""An operator module for the C toolkit's argument kinds (VNPU_OPERATORS=tests.kind_operators): aclnnKindsProbe takes
one argument of every kind a CANN prototype uses and folds each into its result, so that a C program checks every
kind's way through the toolkit (tests/capi/test_argument_kinds.py).

    aclnnKindsProbe(self, others, biasOptional, weights, use, gains, epsilon, ratio, layout, shift, repeat, seed, out)

    out = (self + sum_k use[k] * weights[k] * gains[k] * others[k] + bias) * ratio * repeat + epsilon + shift
          + seed % 7, reversed when layout is "REV"

self, the tensors of others, bias and out are 1-D float32 of one length; weights (an aclScalarList), use (an
aclBoolArray) and gains (an aclFloatArray) have one entry per tensor of others.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from proto.aclnn import dtypes
from proto.aclnn.decl import Arg, ArgKind, Args, OpArgError, OpDecl
from proto.aclnn.rules import check_out, tensor
from proto.aclnn.rules.base import (
    bools,
    floats,
    number,
    opt_tensor,
    require_in,
    require_range,
    require_shape,
    scalars,
    tensors,
    text,
)
from proto.constants import aclDataType
from proto.operators import operator

F32 = aclDataType.ACL_FLOAT
LAYOUTS = ("ND", "REV")


@dataclass(frozen=True)
class KindsRule:
    def result_dtype(self, args: Args) -> aclDataType:
        return F32

    def check(self, args: Args) -> None:
        first = tensor(args, "self")
        if first.data_type != F32 or len(first.view_dims) != 1:
            raise OpArgError(f"self must be a 1-D {dtypes.name(F32)} tensor")
        listed = tensors(args, "others")
        if not listed:
            raise OpArgError("others must hold at least one tensor")
        for i, t in enumerate(listed):
            require_shape(f"others[{i}]", t, first.view_dims, "self's")
        bias = opt_tensor(args, "biasOptional")
        if bias is not None:
            require_shape("biasOptional", bias, first.view_dims, "self's")
        for name, count in (
            ("weights", len(scalars(args, "weights"))),
            ("use", len(bools(args, "use") or ())),
            ("gains", len(floats(args, "gains") or ())),
        ):
            if count != len(listed):
                raise OpArgError(f"{name} has {count} entries; it must have one per tensor of others ({len(listed)})")
        require_range("epsilon", number(args, "epsilon"), low=0.0)
        require_in("layout", text(args, "layout"), LAYOUTS)
        require_range("repeat", args["repeat"], low=1)
        check_out(args, "out", F32, first.view_dims, frozenset({F32}))

    def workspace(self, args: Args) -> int:
        return 0


DECL = OpDecl(
    "KindsProbe",
    (
        Arg("self", ArgKind.TENSOR),
        Arg("others", ArgKind.TENSOR_LIST),
        Arg("biasOptional", ArgKind.TENSOR, optional=True),
        Arg("weights", ArgKind.SCALAR_LIST),
        Arg("use", ArgKind.BOOL_ARRAY),
        Arg("gains", ArgKind.FLOAT_ARRAY),
        Arg("epsilon", ArgKind.DOUBLE),
        Arg("ratio", ArgKind.FLOAT),
        Arg("layout", ArgKind.STRING),
        Arg("shift", ArgKind.INT8),
        Arg("repeat", ArgKind.INT32),
        Arg("seed", ArgKind.UINT64),
        Arg("out", ArgKind.OUT),
    ),
    KindsRule(),
)


@operator(DECL, doc="every argument kind folded into one result (a test's user-declared operator)")
def kinds_probe(
    self: np.ndarray,
    others: list[np.ndarray],
    biasOptional: np.ndarray | None,  # noqa: N803 - the C name
    weights: list[float],
    use: tuple[bool, ...],
    gains: tuple[float, ...],
    epsilon: float,
    ratio: float,
    layout: str,
    shift: int,
    repeat: int,
    seed: int,
    out: np.ndarray,
    workspace: np.ndarray | None,
) -> None:
    total = self.astype(np.float64)
    for tensor_, weight, used, gain in zip(others, weights, use, gains, strict=True):
        if used:
            total = total + float(weight) * float(gain) * tensor_.astype(np.float64)
    if biasOptional is not None:
        total = total + biasOptional
    total = total * ratio * repeat + epsilon + shift + seed % 7
    out[...] = total[::-1] if layout == "REV" else total
