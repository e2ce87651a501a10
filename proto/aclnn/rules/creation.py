"""Creation, fills, selection and clamps (ops-math math/, conversion/, random/): Arange, Linspace, Eye, the fills
(scalar, tensor, masked, zero, one), SWhere, the clamps, Dot and Sum (of a list), the random fills.

A fill value must cast to the filled tensor's dtype (conversion_relationship.md); a range's element count is
computed from its bounds and must be out's.
"""

from __future__ import annotations

import math
from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import ALL, DT, FLOATS, NUMERIC
from proto.aclnn.entry import Row, nullable
from proto.aclnn.host import aclScalar, aclTensor
from proto.aclnn.rules.base import (
    Checked,
    broadcast_all,
    broadcast_shapes,
    check_out,
    int_attr,
    number,
    promote_all,
    require_dtype,
    require_range,
    require_rank,
    require_same_dtype,
    shape_str,
    tensor,
    tensors,
)
from proto.constants import aclDataType

RANGE_DTYPES: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE, DT.ACL_INT32, DT.ACL_INT64})


def _value(args: Args, name: str) -> float:
    value = args[name]
    assert isinstance(value, aclScalar)
    return float(value.value)


def _arange(args: Args) -> None:
    start, end, step = _value(args, "start"), _value(args, "end"), _value(args, "step")
    if step == 0 or not all(math.isfinite(v) for v in (start, end, step)):
        raise OpArgError(f"step is {step}; start, end and step must be finite and step nonzero")
    if (end - start) * step < 0:
        raise OpArgError(f"step {step} goes away from end {end} (start {start})")
    out = tensor(args, "out")
    require_rank("out", out, 1)
    require_dtype("out", out.data_type, RANGE_DTYPES)
    count = max(0, math.ceil((end - start) / step))
    if out.view_dims != (count,):
        raise OpArgError(f"out has shape {shape_str(out.view_dims)}; the range has {count} elements")


def _linspace(args: Args) -> None:
    steps = int_attr(args, "steps")
    require_range("steps", steps, 0)
    out = tensor(args, "out")
    require_dtype("out", out.data_type, NUMERIC)
    if out.view_dims != (steps,):
        raise OpArgError(f"out has shape {shape_str(out.view_dims)}; it must be [{steps}]")


def _eye(args: Args) -> None:
    n, m = int_attr(args, "n"), int_attr(args, "m")
    require_range("n", n, 0)
    m = n if m < 0 else m
    out = tensor(args, "out")
    require_dtype("out", out.data_type, ALL)
    if out.view_dims != (n, m):
        raise OpArgError(f"out has shape {shape_str(out.view_dims)}; it must be [{n}, {m}]")


def _castable(name: str, source: aclDataType, target: aclTensor, target_name: str) -> None:
    if not dtypes.can_cast(source, target.data_type) and not dtypes.is_float(target.data_type):
        raise OpArgError(
            f"{name} has dtype {dtypes.name(source)}, which cannot be cast to {target_name}'s "
            f"{dtypes.name(target.data_type)}"
        )


def _fill(value_kind: str, masked: bool) -> Checked:
    def checks(args: Args) -> None:
        ref = tensor(args, "selfRef")
        require_dtype("selfRef", ref.data_type, ALL)
        if value_kind == "scalar":
            value = args["value"]
            assert isinstance(value, aclScalar)
            _castable("value", value.data_type, ref, "selfRef")
        elif value_kind == "tensor":
            value_t = tensor(args, "value")
            if value_t.numel != 1:
                raise OpArgError(f"value has shape {shape_str(value_t.view_dims)}; it must hold one element")
            _castable("value", value_t.data_type, ref, "selfRef")
        if masked:
            mask = tensor(args, "mask")
            require_dtype("mask", mask.data_type, frozenset({DT.ACL_BOOL, DT.ACL_UINT8}))
            if broadcast_shapes(ref.view_dims, mask.view_dims) != ref.view_dims:
                raise OpArgError(
                    f"mask has shape {shape_str(mask.view_dims)}, which does not broadcast to selfRef's "
                    f"{shape_str(ref.view_dims)}"
                )

    return Checked(checks, doc="conversion/fill, masked_fill; math/zero_op, ones_like")


def _s_where(args: Args) -> None:
    condition, a, b = tensor(args, "condition"), tensor(args, "self"), tensor(args, "other")
    require_dtype("condition", condition.data_type, frozenset({DT.ACL_BOOL, DT.ACL_UINT8}))
    require_dtype("self", a.data_type, ALL)
    require_dtype("other", b.data_type, ALL)
    dtype = promote_all(("self", a), ("other", b))
    check_out(args, "out", dtype, broadcast_all(("condition", condition), ("self", a), ("other", b)))


def _clamp(low: str | None, high: str | None, x: str = "self", need_one: bool = False) -> Checked:
    def checks(args: Args) -> None:
        t = tensor(args, x)
        require_dtype(x, t.data_type, NUMERIC)
        bounds = [(n, args[n]) for n in (low, high) if n is not None]
        if need_one and all(v is None for _, v in bounds):
            raise OpArgError(f"{low} and {high} are both null; at least one bound is required")
        dtype, shape = t.data_type, t.view_dims
        for name, value in bounds:
            if isinstance(value, aclScalar):
                joined = dtypes.promote_with_scalar(dtype, value.data_type)
                if joined is None:
                    raise OpArgError(
                        f"{name} has dtype {dtypes.name(value.data_type)}, which does not promote with {x}'s"
                    )
                dtype = joined
            elif isinstance(value, aclTensor):
                dtype = promote_all((x, t), (name, value))
                shape = broadcast_all((x, t), (name, value))
        if low and high and isinstance(args[low], aclScalar) and isinstance(args[high], aclScalar) and not need_one:
            require_range(low, _value(args, low), high=_value(args, high))
        check_out(args, "out", dtype, shape)

    return Checked(checks, doc="conversion/clip_by_value_v2, aclnn_clamp.h, aclnn_hardtanh.h")


def _dot(args: Args) -> None:
    a, b = tensor(args, "self"), tensor(args, "tensor")
    for name, t in (("self", a), ("tensor", b)):
        require_dtype(name, t.data_type, FLOATS)
        require_rank(name, t, 1)
    require_same_dtype("tensor", b, "self", a)
    if a.view_dims != b.view_dims:
        raise OpArgError(f"tensor has shape {shape_str(b.view_dims)}; it must be self's {shape_str(a.view_dims)}")
    check_out(args, "out", a.data_type, (), exact=True)


def _sum(args: Args) -> None:
    found = tensors(args, "tensors")
    if not found:
        raise OpArgError("tensors is empty; it must hold at least one tensor")
    named = [(f"tensors[{i}]", t) for i, t in enumerate(found)]
    for name, t in named:
        require_dtype(name, t.data_type, NUMERIC)
    check_out(args, "out", promote_all(*named), broadcast_all(*named))


def _random(low: str, high: str | None, positive: str | None = None) -> Checked:
    def checks(args: Args) -> None:
        ref = tensor(args, "selfRef")
        require_dtype("selfRef", ref.data_type, FLOATS if positive else NUMERIC)
        if high is not None:
            require_range(low, number(args, low), high=number(args, high))
        if positive is not None and not number(args, positive) > 0:
            raise OpArgError(f"{positive} is {number(args, positive)}; it must be positive")

    return Checked(checks, doc="random/dsa_random_uniform, sim_thread_exponential")


def _optional_scalar_pair(args: Args) -> None:
    _clamp("clipValueMin", "clipValueMax", need_one=True).check(args)
    del args


TABLE: Final[dict[str, Row]] = {
    "Arange": Checked(_arange, doc="math/range/op_api/aclnn_arange.h"),
    "Linspace": Checked(_linspace, doc="math/linspace, aclnn_linspace.h"),
    "Eye": Checked(_eye, doc="math/eye, aclnn_eye.h"),
    "InplaceFillScalar": _fill("scalar", masked=False),
    "InplaceFillTensor": _fill("tensor", masked=False),
    "InplaceZero": _fill("", masked=False),
    "InplaceOne": _fill("", masked=False),
    "InplaceMaskedFillScalar": _fill("scalar", masked=True),
    "InplaceMaskedFillTensor": _fill("tensor", masked=True),
    "SWhere": Checked(_s_where, doc="experimental/math/select_v2, aclnn_s_where.h"),
    "Clamp": nullable(Checked(_optional_scalar_pair), "clipValueMin", "clipValueMax"),
    "ClampMin": _clamp("clipValueMin", None),
    "ClampMax": _clamp(None, "clipValueMax"),
    "ClampTensor": nullable(_clamp("clipValueMin", "clipValueMax", need_one=True), "clipValueMin", "clipValueMax"),
    "Hardtanh": _clamp("clipValueMin", "clipValueMax"),
    "Dot": Checked(_dot, doc="math/dot, aclnn_dot.h"),
    "Sum": Checked(_sum, doc="math/add_n, aclnn_sum.h"),
    "InplaceUniform": _random("from", "to"),
    "SimThreadExponential": _random("count", None, positive="lambd"),
}
