"""A user's operator module (VNPU_OPERATORS=tests.user_operators): aclnnOuterScaledAdd, declared once.

    aclnnOuterScaledAdd(self, other, scale, out):  out[i, j] = self[i] + scale * other[j]

self and other are 1-D float tensors, out is [len(self), len(other)]; the kernel sums in a float32 workspace of
out's size and rounds once into out (as vnpu's Matmul does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from proto.aclnn import dtypes
from proto.aclnn.decl import Arg, ArgKind, Args, OpArgError, OpDecl
from proto.aclnn.rules import check_out, require_dtype, round_up, scalar, shape_str, tensor
from proto.constants import aclDataType
from proto.operators import operator

FLOAT32_BYTES = 4


@dataclass(frozen=True)
class OuterRule:
    """The operator's checks: 1-D float inputs, a scale that casts to their dtype, out [m, n]."""

    def result_dtype(self, args: Args) -> aclDataType:
        a, b = tensor(args, "self"), tensor(args, "other")
        dtype = dtypes.promote_types(a.data_type, b.data_type)
        if dtype is None:
            raise OpArgError(f"other has dtype {dtypes.name(b.data_type)}, which cannot be promoted with self's")
        return dtype

    def check(self, args: Args) -> None:
        for name in ("self", "other"):
            t = tensor(args, name)
            require_dtype(name, t.data_type, dtypes.FLOATS)
            if len(t.view_dims) != 1:
                raise OpArgError(f"{name} has shape {shape_str(t.view_dims)}; it must be 1-D")
        dtype = self.result_dtype(args)
        if not dtypes.can_cast(scalar(args, "scale").data_type, dtype):
            raise OpArgError(f"scale has dtype {dtypes.name(scalar(args, 'scale').data_type)}, which cannot be cast")
        check_out(args, "out", dtype, self.shape(args), dtypes.FLOATS)

    def shape(self, args: Args) -> tuple[int, int]:
        return tensor(args, "self").view_dims[0], tensor(args, "other").view_dims[0]

    def workspace(self, args: Args) -> int:
        m, n = self.shape(args)
        return round_up(m * n * FLOAT32_BYTES)


DECL = OpDecl(
    "OuterScaledAdd",
    (
        Arg("self", ArgKind.TENSOR),
        Arg("other", ArgKind.TENSOR),
        Arg("scale", ArgKind.SCALAR),
        Arg("out", ArgKind.OUT),
    ),
    OuterRule(),
)


@operator(DECL, doc="out[i, j] = self[i] + scale * other[j] (a test's user-declared operator).")
def outer_scaled_add(
    self: np.ndarray, other: np.ndarray, scale: float, out: np.ndarray, workspace: np.ndarray | None
) -> None:
    if out.size == 0:
        return
    assert workspace is not None
    total = workspace[: out.size * FLOAT32_BYTES].view(np.float32).reshape(out.shape)
    np.multiply(other.astype(np.float32)[None, :], np.float32(scale), out=total)
    total += self.astype(np.float32)[:, None]
    np.copyto(out, total, casting="unsafe")
