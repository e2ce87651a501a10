"""The pointwise families of ops-math beyond vnpu's first operators: functions of one tensor (`Pointwise`, in place
when the operator has one tensor), of two operands (`Binary` of `elementwise`: promotion, broadcast, scalars),
comparisons and logical operators (`Binary(compare=True)`), and a few of three operands.

`Pointwise` finds its tensors by position: the first is read, the last written (the same one for an in-place
twin), so one rule serves Cos(input, out), Sign(self, result) and InplaceCos(inputRef) alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import ALL, DT, FLOATS, INTS, NUMERIC
from proto.aclnn.entry import Row
from proto.aclnn.host import aclScalar, aclTensor
from proto.aclnn.rules.base import (
    Checked,
    NoWorkspace,
    broadcast_all,
    check_out,
    promote_all,
    require_dtype,
    require_dtypes,
    scalar,
    tensor,
)
from proto.aclnn.rules.elementwise import Binary, binary
from proto.constants import aclDataType

Result = Literal["float", "same", "bool"]


def _tensors(args: Args) -> list[tuple[str, aclTensor]]:
    return [(name, value) for name, value in args.items() if isinstance(value, aclTensor)]


@dataclass(frozen=True)
class Pointwise(NoWorkspace):
    """out = f(x), elementwise, x the first tensor and out the last (x itself in place).

    `result`: "float" (an integral x computes in ACL_FLOAT; out a float dtype), "same" (x's dtype), "bool" (a
    predicate: out BOOL or any dtype it casts to). `allowed`: x's dtypes.
    """

    allowed: frozenset[aclDataType] = ALL
    result: Result = "float"

    def result_dtype(self, args: Args) -> aclDataType:
        x = _tensors(args)[0][1].data_type
        if self.result == "bool":
            return DT.ACL_BOOL
        if self.result == "float" and not dtypes.is_float(x):
            return DT.ACL_FLOAT
        return x

    def check(self, args: Args) -> None:
        found = _tensors(args)
        (x_name, x), (out_name, _) = found[0], found[-1]
        require_dtype(x_name, x.data_type, self.allowed)
        allowed = FLOATS if self.result == "float" else ALL
        check_out(args, out_name, self.result_dtype(args), x.view_dims, allowed)


def _lerp(args: Args) -> None:
    require_dtypes(args, {"self": FLOATS, "end": FLOATS, "weight": FLOATS})
    a, end, weight = tensor(args, "self"), tensor(args, "end"), tensor(args, "weight")
    for name, t in (("end", end), ("weight", weight)):
        if t.data_type != a.data_type:
            raise OpArgError(
                f"{name} has dtype {dtypes.name(t.data_type)}; it must be self's {dtypes.name(a.data_type)}"
            )
    shape = broadcast_all(("self", a), ("end", end), ("weight", weight))
    check_out(args, "out", a.data_type, shape, FLOATS)


def _addc(divides: bool) -> Checked:
    allowed = FLOATS if divides else NUMERIC

    def checks(args: Args) -> None:
        require_dtypes(args, {"self": allowed, "tensor1": allowed, "tensor2": allowed})
        named = [(n, tensor(args, n)) for n in ("self", "tensor1", "tensor2")]
        dtype = promote_all(*named)
        value = scalar(args, "value")
        if not dtypes.can_cast(value.data_type, dtype) and not dtypes.is_float(dtype):
            raise OpArgError(
                f"value has dtype {dtypes.name(value.data_type)}, which cannot be cast to {dtypes.name(dtype)}"
            )
        check_out(args, "out", dtype, broadcast_all(*named), allowed)

    return Checked(checks, doc="ops-math math/addcmul|addcdiv, aclnn_addcmul.h, aclnn_addcdiv.h")


def _pow_scalar_tensor(args: Args) -> None:
    base, exponent = scalar(args, "self"), tensor(args, "exponent")
    require_dtype("exponent", exponent.data_type, NUMERIC)
    dtype = dtypes.promote_with_scalar(exponent.data_type, base.data_type)
    if dtype is None:
        raise OpArgError(f"self has dtype {dtypes.name(base.data_type)}, which cannot be promoted with exponent's")
    check_out(args, "out", dtype, exponent.view_dims)


def _pow_tensor_scalar(args: Args) -> None:
    x, exponent = tensor(args, "self"), args["exponent"]
    assert isinstance(exponent, aclScalar)
    require_dtype("self", x.data_type, NUMERIC)
    dtype = dtypes.promote_with_scalar(x.data_type, exponent.data_type)
    if dtype is None:
        raise OpArgError(f"exponent has dtype {dtypes.name(exponent.data_type)}, which cannot be promoted with self's")
    if dtypes.is_integral(dtype) and isinstance(exponent.value, int) and exponent.value < 0:
        raise OpArgError(f"exponent is {exponent.value}: integers to negative powers are not supported (torch)")
    check_out(args, "out", dtype, x.view_dims)


FLOAT_FUNCTIONS: Final = (
    "Sin", "Cos", "Tan", "Tanh", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf", "Erfc",
    "Log", "Log2", "Log10", "Log1p", "Exp2", "Expm1", "Sqrt", "Reciprocal", "Frac", "Hardswish", "HardSwish",
    "Hardsigmoid", "Mish", "Selu", "Rsqrt", "Sigmoid",
)  # fmt: skip
FLOAT_INPLACE: Final = (
    "InplaceExp", "InplaceSqrt", "InplaceRsqrt", "InplaceTanh", "InplaceSigmoid", "InplaceLog", "InplaceReciprocal",
    "InplaceSin", "InplaceCos", "InplaceErf",
)  # fmt: skip
NOT_BOOL: Final = NUMERIC
COMPARE: Final = Binary(compare=True)
NO_BOOL = "the operator does not take a bool operand"

TABLE: Final[dict[str, Row]] = {
    **{name: Pointwise(ALL, "float") for name in FLOAT_FUNCTIONS},
    **{name: Pointwise(FLOATS, "float") for name in FLOAT_INPLACE},
    "Sign": Pointwise(NUMERIC | {DT.ACL_BOOL}, "same"),
    "Floor": Pointwise(NUMERIC, "same"),
    "Ceil": Pointwise(NUMERIC, "same"),
    "Round": Pointwise(NUMERIC, "same"),
    "Trunc": Pointwise(NUMERIC, "same"),
    "InplaceFloor": Pointwise(NUMERIC, "same"),
    "InplaceNeg": Pointwise(NUMERIC, "same"),
    "InplaceRelu": Pointwise(NUMERIC, "same"),
    "LogicalNot": Pointwise(ALL, "bool"),
    "BitwiseNot": Pointwise(INTS | {DT.ACL_BOOL}, "same"),
    "IsFinite": Pointwise(ALL, "bool"),
    "IsInf": Pointwise(ALL, "bool"),
    "Maximum": Binary(),
    "Minimum": Binary(),
    "Atan2": Binary(true_div=True, allowed=NUMERIC),
    "PowTensorTensor": Binary(other="exponent", allowed=NUMERIC),
    "PowTensorScalar": Checked(_pow_tensor_scalar, doc="math/pow/op_api/aclnn_pow.h"),
    "PowScalarTensor": Checked(_pow_scalar_tensor, doc="math/pow/op_api/aclnn_pow.h"),
    "RemainderTensorTensor": Binary(no_bool=True, refusal=NO_BOOL),
    "RemainderTensorScalar": Binary(no_bool=True, refusal=NO_BOOL),
    "FmodTensor": Binary(no_bool=True, refusal=NO_BOOL),
    "FmodScalar": Binary(no_bool=True, refusal=NO_BOOL),
    "FloorDivide": Binary(no_bool=True, refusal=NO_BOOL),
    "FloorDivides": Binary(no_bool=True, refusal=NO_BOOL),
    "Divs": Binary(true_div=True),
    "LogicalAnd": COMPARE,
    "LogicalOr": COMPARE,
    "LogicalXor": COMPARE,
    **{f"{op}{kind}": COMPARE for op in ("Eq", "Ne", "Gt", "Ge", "Lt", "Le") for kind in ("Scalar", "Tensor")},
    "InplaceSub": binary(inplace=True, no_bool=True),
    "InplaceSubs": binary(inplace=True, no_bool=True),
    "InplaceAdds": binary(inplace=True),
    "InplaceMuls": binary(inplace=True),
    "InplaceDiv": binary(inplace=True, true_div=True),
    "Lerp": Checked(_lerp, doc="ops-math math/lerp, aclnn_lerp.h"),
    "Addcmul": _addc(divides=False),
    "Addcdiv": _addc(divides=True),
}
