"""Elementwise families: Binary (broadcast and dtype promotion, optional alpha, scalar operands, in-place forms),
Unary, Cast, Copy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import ALL, DT, FLOATS, NUMERIC, can_cast
from proto.aclnn.entry import Row
from proto.aclnn.host import aclScalar, aclTensor
from proto.aclnn.rules.base import (
    NoWorkspace,
    broadcast_shapes,
    check_out,
    dtype_attr,
    require_attr_dtype,
    require_dtype,
    shape_str,
    tensor,
)
from proto.constants import aclDataType


@dataclass(frozen=True)
class Binary(NoWorkspace):
    """self ∘ other (tensor or scalar), optionally with alpha scaling other; `out` may be `selfRef`.

    `no_bool`: a BOOL operand is refused (`refusal` says why); `true_div`: integral operands compute in ACL_FLOAT;
    `compare`: the result is ACL_BOOL (comparisons, logical operators: out may be any dtype); `allowed`: the
    operands' dtypes; `other`: the second operand's C name (PowTensorTensor's exponent).
    """

    first: str = "self"
    out: str = "out"
    no_bool: bool = False
    true_div: bool = False
    other: str = "other"
    compare: bool = False
    allowed: frozenset[aclDataType] = ALL
    refusal: str = "subtraction with a bool operand is not supported"

    def _other(self, args: Args) -> aclTensor | aclScalar:
        other = args[self.other]
        assert isinstance(other, aclTensor | aclScalar)
        return other

    def promoted(self, args: Args) -> aclDataType:
        a, other = tensor(args, self.first), self._other(args)
        if isinstance(other, aclScalar):
            dtype = dtypes.promote_with_scalar(a.data_type, other.data_type)
        else:
            dtype = dtypes.promote_types(a.data_type, other.data_type)
        if dtype is None:
            raise OpArgError(
                f"{self.other} has dtype {dtypes.name(other.data_type)}, which cannot be promoted with "
                f"{self.first}'s {dtypes.name(a.data_type)}"
            )
        return dtype

    def result_dtype(self, args: Args) -> aclDataType:
        if self.compare:
            return DT.ACL_BOOL
        dtype = self.promoted(args)
        return DT.ACL_FLOAT if self.true_div and dtypes.is_integral(dtype) else dtype

    def check(self, args: Args) -> None:
        a, other = tensor(args, self.first), self._other(args)
        promoted = self.promoted(args)
        require_dtype(self.first, a.data_type, self.allowed)
        if isinstance(other, aclTensor):
            require_dtype(self.other, other.data_type, self.allowed)
        if self.no_bool:
            for name, dtype in ((self.first, a.data_type), (self.other, other.data_type)):
                if dtype == DT.ACL_BOOL:
                    raise OpArgError(f"{name} is ACL_BOOL: {self.refusal}")
        alpha = args.get("alpha")
        if isinstance(alpha, aclScalar) and not can_cast(alpha.data_type, promoted):
            raise OpArgError(
                f"alpha has dtype {dtypes.name(alpha.data_type)}, which cannot be cast to the promoted "
                f"dtype {dtypes.name(promoted)}"
            )
        check_out(args, self.out, self.result_dtype(args), self._shape(a, other))

    def _shape(self, a: aclTensor, other: aclTensor | aclScalar) -> tuple[int, ...]:
        if isinstance(other, aclScalar):
            return a.view_dims
        shape = broadcast_shapes(a.view_dims, other.view_dims)
        if shape is None:
            raise OpArgError(
                f"{self.other} has shape {shape_str(other.view_dims)}, which does not broadcast with "
                f"{self.first}'s {shape_str(a.view_dims)}"
            )
        return shape


@dataclass(frozen=True)
class Unary(NoWorkspace):
    """f(self) → out, elementwise; `to_float` computes integral inputs in ACL_FLOAT."""

    allowed: frozenset[aclDataType] = ALL
    to_float: bool = False

    def result_dtype(self, args: Args) -> aclDataType:
        dtype = tensor(args, "self").data_type
        return DT.ACL_FLOAT if self.to_float and dtypes.is_integral(dtype) else dtype

    def check(self, args: Args) -> None:
        x = tensor(args, "self")
        require_dtype("self", x.data_type, self.allowed)
        check_out(args, "out", self.result_dtype(args), x.view_dims)


@dataclass(frozen=True)
class Cast(NoWorkspace):
    """self → out of the named `dtype` (any supported pair; float → int truncates)."""

    def result_dtype(self, args: Args) -> aclDataType:
        return dtype_attr(args, "dtype")

    def check(self, args: Args) -> None:
        x = tensor(args, "self")
        require_dtype("self", x.data_type, ALL)
        require_attr_dtype("dtype", self.result_dtype(args), ALL)
        check_out(args, "out", self.result_dtype(args), x.view_dims, exact=True)


@dataclass(frozen=True)
class Copy(NoWorkspace):
    """selfRef ← src, broadcasting src to selfRef's shape and casting to its dtype."""

    def result_dtype(self, args: Args) -> aclDataType:
        return tensor(args, "selfRef").data_type

    def check(self, args: Args) -> None:
        dst, src = tensor(args, "selfRef"), tensor(args, "src")
        require_dtype("selfRef", dst.data_type, ALL)
        require_dtype("src", src.data_type, ALL)
        if broadcast_shapes(dst.view_dims, src.view_dims) != dst.view_dims:
            raise OpArgError(
                f"src has shape {shape_str(src.view_dims)}, which does not broadcast to selfRef's "
                f"{shape_str(dst.view_dims)}"
            )


def binary(*, inplace: bool = False, no_bool: bool = False, true_div: bool = False) -> Binary:
    """self ∘ other → out, or (inplace) selfRef ∘ other → selfRef; `other` a tensor or a scalar, alpha if declared."""
    first = "selfRef" if inplace else "self"
    return Binary(first=first, out=first if inplace else "out", no_bool=no_bool, true_div=true_div)


TABLE: Final[dict[str, Row]] = {
    "Add": binary(),
    "Adds": binary(),
    "Sub": binary(no_bool=True),
    "Subs": binary(no_bool=True),
    "Mul": binary(),
    "Muls": binary(),
    "Div": binary(true_div=True),
    "InplaceAdd": binary(inplace=True),
    "InplaceMul": binary(inplace=True),
    "Relu": Unary(NUMERIC),
    "Gelu": Unary(FLOATS),
    "Silu": Unary(FLOATS),
    "Abs": Unary(ALL),
    "Neg": Unary(NUMERIC),
    "Exp": Unary(ALL, to_float=True),
    "Cast": Cast(),
    "InplaceCopy": Copy(),
}
