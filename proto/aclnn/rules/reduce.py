"""Reductions over dims (ReduceSum, Mean, ...) and Softmax over one dim."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import ALL, DT, FLOATS, NUMERIC
from proto.aclnn.entry import Row
from proto.aclnn.host import aclIntArray, aclTensor
from proto.aclnn.rules.base import (
    Checked,
    NoWorkspace,
    _get,
    check_out,
    dtype_attr,
    flag,
    int_attr,
    ints,
    reduce_axes,
    reduced_shape,
    require_attr_dtype,
    require_dtype,
    require_range,
    round_up,
    tensor,
    with_axis,
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


def _axis_reduced(x: aclTensor, d: int, keep: bool) -> tuple[int, ...]:
    if not x.view_dims:
        return ()
    return with_axis(x.view_dims, d, 1 if keep else None)


def _along(x_name: str, dtypes_in: frozenset[aclDataType], outs: tuple[tuple[str, str], ...], *, keep: str = "",
           nonempty: bool = False) -> Checked:  # fmt: skip
    """One dim reduced (ArgMax, MaxDim, ...): `outs` pairs each written tensor with "values" (x's dtype) or
    "indices" (INT32/INT64); `keep` names the keepdim flag (none: the dim stays, as Cumsum and Sort)."""

    def checks(args: Args) -> None:
        x = tensor(args, x_name)
        require_dtype(x_name, x.data_type, dtypes_in)
        d = wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
        if nonempty and x.view_dims and x.view_dims[d] == 0:
            raise OpArgError(f"{x_name} is empty along dim {d}; the reduction of nothing is undefined")
        shape = _axis_reduced(x, d, flag(args, keep)) if keep else x.view_dims
        for name, role in outs:
            if role == "indices":
                check_out(args, name, DT.ACL_INT64, shape, INDEX_DTYPES)
            else:
                check_out(args, name, x.data_type, shape, exact=True)

    return Checked(checks)


def _over_dims(dtypes_in: frozenset[aclDataType], outs: tuple[str, ...], result: str = "same", dim: str = "dim",
               keep: str = "keepdim", correction: str = "") -> Checked:  # fmt: skip
    """A reduction over an int array of dims (empty: all): result "same" (self's dtype), "float", "bool"."""

    def checks(args: Args) -> None:
        x = tensor(args, "self")
        require_dtype("self", x.data_type, dtypes_in)
        axes = reduce_axes(dim, ints(args, dim) or (), len(x.view_dims))
        if correction:
            require_range(correction, int_attr(args, correction), 0)
        shape = reduced_shape(x.view_dims, axes, flag(args, keep))
        for name in outs:
            if result == "bool":
                check_out(args, name, DT.ACL_BOOL, shape)
            elif result == "float":
                dtype = x.data_type if dtypes.is_float(x.data_type) else DT.ACL_FLOAT
                check_out(args, name, dtype, shape, FLOATS)
            else:
                check_out(args, name, x.data_type, shape, exact=True)

    return Checked(checks)


def _whole(dtypes_in: frozenset[aclDataType], dtype_attr_name: str = "") -> Checked:
    """A reduction of all of self into a 0-D out (Max, Min, Prod)."""

    def checks(args: Args) -> None:
        x = tensor(args, "self")
        require_dtype("self", x.data_type, dtypes_in)
        if x.numel == 0 and not dtype_attr_name:
            raise OpArgError("self is empty; the reduction of nothing is undefined")
        dtype = dtype_attr(args, dtype_attr_name) if dtype_attr_name else x.data_type
        check_out(args, "out", dtype, (), exact=True)

    return Checked(checks)


def _prod_dim(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, ALL)
    d = wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
    check_out(args, "out", dtype_attr(args, "dtype"), _axis_reduced(x, d, flag(args, "keepDim")), exact=True)


def _cumsum(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, ALL)
    wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
    check_out(args, "out", dtype_attr(args, "dtype"), x.view_dims, exact=True)


def _topk(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, NUMERIC)
    d = wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
    size = x.view_dims[d] if x.view_dims else 1
    k = int_attr(args, "k")
    require_range("k", k, 0, size)
    shape = with_axis(x.view_dims, d, k) if x.view_dims else ()
    check_out(args, "valuesOut", x.data_type, shape, exact=True)
    check_out(args, "indicesOut", DT.ACL_INT64, shape, INDEX_DTYPES)


def _log_softmax(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, FLOATS)
    wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
    check_out(args, "out", x.data_type, x.view_dims, FLOATS)


INDEX_DTYPES: Final = frozenset({DT.ACL_INT32, DT.ACL_INT64})
VALUES = (("out", "values"),)
VALUES_INDICES = (("out", "values"), ("indices", "indices"))
REDUCTIONS: Final[dict[str, Row]] = {
    "ArgMax": _along("self", NUMERIC, (("out", "indices"),), keep="keepdim", nonempty=True),
    "ArgMin": _along("self", NUMERIC, (("out", "indices"),), keep="keepdim", nonempty=True),
    "MaxDim": _along("self", NUMERIC | {DT.ACL_BOOL}, VALUES_INDICES, keep="keepdim", nonempty=True),
    "MinDim": _along("self", NUMERIC | {DT.ACL_BOOL}, VALUES_INDICES, keep="keepdim", nonempty=True),
    "Sort": _along("self", ALL, (("valuesOut", "values"), ("indicesOut", "indices"))),
    "Cumsum": Checked(_cumsum, doc="math/cumsum/op_api/aclnn_cumsum.h"),
    "Topk": Checked(_topk, doc="index/gather_elements/op_api/aclnn_topk.h"),
    "LogSoftmax": Checked(_log_softmax, doc="activation/log_softmax_v2/op_api/aclnn_logsoftmax.h"),
    "Max": _whole(ALL),
    "Min": _whole(ALL),
    "Prod": _whole(ALL, "dtype"),
    "ProdDim": Checked(_prod_dim, doc="math/reduce_prod, aclnn_prod.h"),
    "Amax": _over_dims(ALL, ("out",), keep="keepDim"),
    "Amin": _over_dims(ALL, ("out",), keep="keepDim"),
    "Var": _over_dims(FLOATS, ("out",), "float"),
    "Std": _over_dims(FLOATS, ("out",), "float", correction="correction"),
    "VarMean": _over_dims(FLOATS, ("varOut", "meanOut"), "float", correction="correction"),
    "LogSumExp": _over_dims(ALL, ("out",), "float", keep="keepDim"),
    "Any": _over_dims(ALL, ("out",), "bool"),
    "All": _over_dims(ALL, ("out",), "bool"),
}
TABLE.update(REDUCTIONS)
