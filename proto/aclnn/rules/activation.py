"""Activations of ops-nn with parameters or a split: SwiGlu, Glu, Softplus, LeakyRelu, Elu, Celu, GeluV2,
Softshrink, Hardshrink, Swish, Prelu (the parameterless ones are `pointwise` rows)."""

from __future__ import annotations

from typing import Final

from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import DT, FLOATS
from proto.aclnn.entry import Row, nullable
from proto.aclnn.host import aclScalar
from proto.aclnn.rules.base import (
    Checked,
    check_out,
    int_attr,
    require_dtype,
    require_in,
    require_range,
    scalar,
    shape_str,
    tensor,
    with_axis,
    wrap_dim,
)

HALF_FLOATS: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16})


def _halved(x_name: str, out_name: str) -> Checked:
    """SwiGlu and Glu: out is x with dim halved (x even there)."""

    def checks(args: Args) -> None:
        x = tensor(args, x_name)
        require_dtype(x_name, x.data_type, HALF_FLOATS if x_name == "x" else FLOATS)
        if not x.view_dims:
            raise OpArgError(f"{x_name} is 0-D; it must have at least one dim to split")
        d = wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
        if x.view_dims[d] % 2:
            raise OpArgError(f"{x_name} has {x.view_dims[d]} elements along dim {d}; it must be even")
        check_out(args, out_name, x.data_type, with_axis(x.view_dims, d, x.view_dims[d] // 2), exact=True)

    return Checked(checks, doc="activation/swi_glu/docs/aclnnSwiGlu.md, activation/glu")


def _scalars(x_name: str, out_name: str, *names: str, positive: tuple[str, ...] = (), nonzero: str = "") -> Checked:
    """An activation of x with scalar parameters (each castable to a float): out x's shape and dtype."""

    def checks(args: Args) -> None:
        x = tensor(args, x_name)
        require_dtype(x_name, x.data_type, FLOATS)
        for name in names:
            value = args[name]
            if isinstance(value, aclScalar) and value.data_type == DT.ACL_BOOL:
                raise OpArgError(f"{name} is ACL_BOOL; it must be a number")
        for name in positive:
            if not scalar(args, name).value > 0:
                raise OpArgError(f"{name} is {scalar(args, name).value}; it must be positive")
        if nonzero and scalar(args, nonzero).value == 0:
            raise OpArgError(f"{nonzero} is 0; it must not be")
        check_out(args, out_name, x.data_type, x.view_dims, FLOATS)

    return Checked(checks, doc="activation/<op>/op_api/aclnn_<op>.h")


def _shrink(args: Args) -> None:
    require_range("lambd", float(scalar(args, "lambd").value), 0)
    _scalars("self", "out", "lambd").check(args)


def _gelu_v2(args: Args) -> None:
    require_in("approximate", int_attr(args, "approximate"), (0, 1))
    x = tensor(args, "x")
    require_dtype("x", x.data_type, HALF_FLOATS)
    check_out(args, "y", x.data_type, x.view_dims, exact=True)


def _prelu(args: Args) -> None:
    x, w = tensor(args, "self"), tensor(args, "weight")
    require_dtype("self", x.data_type, FLOATS)
    require_dtype("weight", w.data_type, FLOATS)
    channels = x.view_dims[1] if len(x.view_dims) >= 2 else 1
    if w.numel not in (1, channels):
        raise OpArgError(f"weight has shape {shape_str(w.view_dims)}; it must hold 1 or {channels} (self's channels)")
    check_out(args, "out", x.data_type, x.view_dims, FLOATS)


TABLE: Final[dict[str, Row]] = {
    "SwiGlu": _halved("x", "out"),
    "Glu": _halved("self", "out"),
    "Softplus": _scalars("self", "out", "beta", "threshold", positive=("beta",)),
    "LeakyRelu": _scalars("self", "out", "negativeSlope"),
    "Elu": _scalars("self", "out", "alpha", "scale", "inputScale"),
    "Celu": _scalars("self", "out", "alpha", nonzero="alpha"),
    "GeluV2": Checked(_gelu_v2, doc="activation/gelu_v2, aclnn_gelu_v2.h"),
    "Softshrink": Checked(_shrink, doc="activation/softshrink"),
    "Hardshrink": Checked(_shrink, doc="activation/hardshrink"),
    "Swish": nullable(_scalars("self", "out", "betaOptional"), "betaOptional"),
    "Prelu": Checked(_prelu, doc="activation/prelu, aclnn_prelu.h"),
}
