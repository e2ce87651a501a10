"""Reductions over dims (ReduceSum, Mean, ...) and Softmax over one dim."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args
from proto.aclnn.dtypes import ALL, FLOATS
from proto.aclnn.entry import Row
from proto.aclnn.host import aclIntArray
from proto.aclnn.rules.base import (
    NoWorkspace,
    _get,
    check_out,
    dtype_attr,
    int_attr,
    reduce_axes,
    reduced_shape,
    require_attr_dtype,
    require_dtype,
    round_up,
    tensor,
    wrap_dim,
)
from proto.aclnn.rules.elementwise import Unary
from proto.constants import aclDataType


@dataclass(frozen=True)
class Softmax(Unary):
    """softmax(self, dim) → out; its kernel normalizes in a compute-dtype scratch workspace."""

    allowed: frozenset[aclDataType] = FLOATS

    def check(self, args: Args) -> None:
        super().check(args)
        wrap_dim("dim", int_attr(args, "dim"), len(tensor(args, "self").view_dims))

    def workspace(self, args: Args) -> int:
        x = tensor(args, "self")
        return round_up(x.numel * dtypes.info(dtypes.compute_dtype(x.data_type)).itemsize)


@dataclass(frozen=True)
class Reduce(NoWorkspace):
    """A reduction of self over `dim` (empty = all dims) into `dtype`; `keepDim` keeps size-1 dims (the arguments'
    C names are `dim` and `keep`: ReduceSum's header says dims and keepDims)."""

    allowed: frozenset[aclDataType] = ALL
    dim: str = "dim"
    keep: str = "keepDim"

    def result_dtype(self, args: Args) -> aclDataType:
        return dtype_attr(args, "dtype")

    def axes(self, args: Args) -> tuple[int, ...]:
        dims = _get(args, self.dim, aclIntArray).values
        return reduce_axes(self.dim, dims, len(tensor(args, "self").view_dims))

    def keepdims(self, args: Args) -> bool:
        return _get(args, self.keep, bool)

    def check(self, args: Args) -> None:
        x = tensor(args, "self")
        require_dtype("self", x.data_type, ALL)
        require_attr_dtype("dtype", self.result_dtype(args), self.allowed)
        shape = reduced_shape(x.view_dims, self.axes(args), self.keepdims(args))
        check_out(args, "out", self.result_dtype(args), shape, exact=True)


TABLE: Final[dict[str, Row]] = {
    "Softmax": Softmax(),
    "ReduceSum": Reduce(ALL, dim="dims", keep="keepDims"),
    "Mean": Reduce(FLOATS),
}
