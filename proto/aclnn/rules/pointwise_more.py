"""More of ops-math's pointwise operators: the in-place twins of the comparisons, logical operators, Lerp, Addcmul,
Addcdiv and the clamps; ClampMin/MaxTensor; the bitwise operators and RightShift; XLogY, Gcd, IsClose, NanToNum,
Signbit, Real, Polar, LinalgCross and Erfinv (ops-nn activation/erfinv).

An in-place twin writes its first tensor (`selfRef`): the result is computed as the out-of-place operator's and
cast into selfRef's dtype, so the broadcast shape must be selfRef's and the result dtype must cast to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError, Rule
from proto.aclnn.dtypes import ALL, DT, FLOATS, INTS, NUMERIC, WIDE_UNSIGNED
from proto.aclnn.entry import Row, entry_of
from proto.aclnn.host import aclScalar
from proto.aclnn.rules import activation, creation, pointwise
from proto.aclnn.rules.base import (
    Checked,
    broadcast_all,
    check_out,
    int_attr,
    promote_all,
    require_dtype,
    require_dtypes,
    require_same_dtype,
    scalar,
    shape_str,
    tensor,
    tensors,
    wrap_dim,
)
from proto.aclnn.rules.elementwise import Binary
from proto.aclnn.rules.pointwise import Pointwise
from proto.aclnn.twins import TWINS

HALVES: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16})
BITS: Final = INTS | WIDE_UNSIGNED | {DT.ACL_BOOL}
SHIFTS: Final = INTS | WIDE_UNSIGNED
COMPLEX: Final = frozenset({DT.ACL_COMPLEX64, DT.ACL_COMPLEX128})
NAN_TO_NUM: Final = INTS | HALVES | {DT.ACL_BOOL}
REMAINDER: Final = frozenset({DT.ACL_INT32, DT.ACL_INT64}) | FLOATS
ROUNDED: Final = FLOATS | {DT.ACL_INT32, DT.ACL_INT64}
GAMMA: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_DOUBLE})
ADD_V3: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_INT32, DT.ACL_INT8, DT.ACL_BF16})
EXTREME_N: Final = HALVES | {DT.ACL_INT8, DT.ACL_INT32, DT.ACL_INT64}
SQUARE: Final = HALVES | {DT.ACL_INT32, DT.ACL_INT64}
REAL: Final = {DT.ACL_FLOAT: DT.ACL_FLOAT, DT.ACL_FLOAT16: DT.ACL_FLOAT16, DT.ACL_COMPLEX64: DT.ACL_FLOAT,
               DT.ACL_COMPLEX128: DT.ACL_DOUBLE}  # fmt: skip


def inplace(rule: Binary) -> Binary:
    """The in-place twin of a Binary rule: selfRef is read and written."""
    return Binary(first="selfRef", out="selfRef", no_bool=rule.no_bool, true_div=rule.true_div, other=rule.other,
                  compare=rule.compare, allowed=rule.allowed, refusal=rule.refusal)  # fmt: skip


@dataclass(frozen=True, eq=False)
class Twin:
    """The in-place twin of an implemented operator, checked by that operator's own rule: the twin's written
    tensor `first` is passed as the operator's first tensor `source` and as its output `out`, the other arguments
    as they are (the twins keep their operator's names). A refusal that names source or out names `first`."""

    base: Rule
    first: str = "selfRef"
    source: str = "self"
    out: str = "out"

    def _args(self, args: Args) -> dict[str, object]:
        mapped: dict[str, object] = {self.source if k == self.first else k: v for k, v in args.items()}
        mapped[self.out] = args[self.first]
        return mapped

    def result_dtype(self, args: Args) -> DT:
        return self.base.result_dtype(self._args(args))  # type: ignore[arg-type]

    def check(self, args: Args) -> None:
        try:
            self.base.check(self._args(args))  # type: ignore[arg-type]
        except OpArgError as error:
            renamed = re.sub(rf"^({re.escape(self.source)}|{re.escape(self.out)})\b", self.first, error.message)
            raise OpArgError(renamed, error.code, bare=error.bare) from None

    def workspace(self, args: Args) -> int:
        return self.base.workspace(self._args(args))  # type: ignore[arg-type]


def _lerp_inplace(args: Args) -> None:
    require_dtypes(args, {"selfRef": HALVES, "end": HALVES, "weight": HALVES})
    a = tensor(args, "selfRef")
    for name in ("end", "weight"):
        require_same_dtype(name, tensor(args, name), "selfRef", a)
    shape = broadcast_all(("selfRef", a), ("end", tensor(args, "end")), ("weight", tensor(args, "weight")))
    check_out(args, "selfRef", a.data_type, shape)


def _addc_inplace(allowed: frozenset[DT]) -> Checked:
    def checks(args: Args) -> None:
        require_dtypes(args, {"selfRef": allowed, "tensor1": allowed, "tensor2": allowed})
        named = [(n, tensor(args, n)) for n in ("selfRef", "tensor1", "tensor2")]
        dtype = promote_all(*named)
        require_dtype("the promoted dtype of selfRef, tensor1 and tensor2", dtype, allowed)
        value = scalar(args, "value")
        if not dtypes.can_cast(value.data_type, dtype) and not dtypes.is_float(dtype):
            raise OpArgError(
                f"value has dtype {dtypes.name(value.data_type)}, which cannot be cast to {dtypes.name(dtype)}"
            )
        check_out(args, "selfRef", dtype, broadcast_all(*named))

    return Checked(checks, doc="ops-math math/addcmul|addcdiv, aclnnInplaceAddcmul, aclnnInplaceAddcdiv")


def _clamp(bound: str, *, in_place: bool) -> Checked:
    """A clamp by a tensor or scalar bound: self any numeric dtype, the bound any (BOOL too); they promote."""
    first = "selfRef" if in_place else "self"
    rule = Binary(first=first, out=first if in_place else "out", other=bound)

    def checks(args: Args) -> None:
        require_dtype(first, tensor(args, first).data_type, NUMERIC)
        rule.check(args)

    return Checked(checks, doc="ops-math conversion/clip_by_value_v2, aclnn_clamp.h")


def _bitwise(first: str = "self", out: str = "out") -> Checked:
    """Bitwise and/or/xor: integer or BOOL operands whose promoted dtype is one too (a float scalar is refused);
    out == first in place."""
    rule = Binary(first=first, out=out, allowed=BITS)

    def checks(args: Args) -> None:
        other = args["other"]
        if isinstance(other, aclScalar):
            require_dtype("other", other.data_type, BITS)
        rule.check(args)
        promoted = rule.promoted(args)
        if promoted not in BITS:
            raise OpArgError(f"other: self and other promote to {dtypes.name(promoted)}, not an integer or bool dtype")

    return Checked(checks, doc="ops-math math/bitwise_and|bitwise_or|bitwise_xor")


def _xlogy_scalar_self(args: Args) -> None:
    x, y = scalar(args, "self"), tensor(args, "other")
    require_dtype("other", y.data_type, ALL)
    dtype = dtypes.promote_with_scalar(y.data_type, x.data_type)
    if dtype is None:
        raise OpArgError(f"self has dtype {dtypes.name(x.data_type)}, which cannot be promoted with other's")
    check_out(args, "out", dtype if dtypes.is_float(dtype) else DT.ACL_FLOAT, y.view_dims, FLOATS)


def _is_close(args: Args) -> None:
    a, b = tensor(args, "self"), tensor(args, "other")
    require_dtype("self", a.data_type, ALL)
    require_same_dtype("other", b, "self", a)
    check_out(args, "out", DT.ACL_BOOL, broadcast_all(("self", a), ("other", b)), frozenset({DT.ACL_BOOL}))


def _nan_to_num(args: Args) -> None:
    first = "self" if "self" in args else "selfRef"
    x = tensor(args, first)
    require_dtype(first, x.data_type, NAN_TO_NUM)
    if first == "self":
        check_out(args, "out", x.data_type, x.view_dims, exact=True)


def _real(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, frozenset(REAL))
    check_out(args, "out", REAL[x.data_type], x.view_dims, exact=True)


def _polar(args: Args) -> None:
    require_dtypes(args, {"input": frozenset({DT.ACL_FLOAT}), "angle": frozenset({DT.ACL_FLOAT})})
    shape = broadcast_all(("input", tensor(args, "input")), ("angle", tensor(args, "angle")))
    check_out(args, "out", DT.ACL_COMPLEX64, shape, frozenset({DT.ACL_COMPLEX64}), exact=True)


def _cross(args: Args) -> None:
    a, b = tensor(args, "self"), tensor(args, "other")
    require_dtype("self", a.data_type, NUMERIC | COMPLEX)
    require_same_dtype("other", b, "self", a)
    shape = broadcast_all(("self", a), ("other", b))
    d = wrap_dim("dim", int_attr(args, "dim"), len(a.view_dims))
    if not shape or shape[d] != 3:
        raise OpArgError(f"dim {int_attr(args, 'dim')}: self and other broadcast to {shape_str(shape)}, whose size "
                         "there must be 3")  # fmt: skip
    check_out(args, "out", a.data_type, shape, exact=True)


def _lerps(args: Args) -> None:
    first = "self" if "self" in args else "selfRef"
    a, end = tensor(args, first), tensor(args, "end")
    require_dtypes(args, {first: HALVES, "end": HALVES})
    require_same_dtype("end", end, first, a)
    weight = scalar(args, "weight")
    if weight.data_type == DT.ACL_BOOL:
        raise OpArgError("weight is ACL_BOOL; it must be a number")
    shape = broadcast_all((first, a), ("end", end))
    check_out(args, "out" if first == "self" else first, a.data_type, shape, FLOATS)


def _remainder_scalar_tensor(args: Args) -> None:
    x, y = scalar(args, "self"), tensor(args, "other")
    require_dtype("other", y.data_type, REMAINDER)
    dtype = dtypes.promote_with_scalar(y.data_type, x.data_type)
    if dtype is None or dtype not in REMAINDER:
        raise OpArgError(f"self has dtype {dtypes.name(x.data_type)}, which does not promote with other's "
                         f"{dtypes.name(y.data_type)} to a supported dtype")  # fmt: skip
    check_out(args, "out", dtype, y.view_dims, REMAINDER)


def _square(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, SQUARE)
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


def _xlog1py(args: Args) -> None:
    x, y = tensor(args, "x"), tensor(args, "y")
    require_dtype("x", x.data_type, HALVES)
    require_same_dtype("y", y, "x", x)
    check_out(args, "z", x.data_type, broadcast_all(("x", x), ("y", y)), exact=True)


def _round_decimals(args: Args) -> None:
    first = "self" if "self" in args else "selfRef"
    x = tensor(args, first)
    require_dtype(first, x.data_type, ROUNDED)
    if first == "self":
        check_out(args, "out", x.data_type, x.view_dims, ROUNDED, exact=True)


def _div_mod(args: Args) -> None:
    """DivMod(s) and their twins: Div's checks, and mode 0 (true division), 1 (trunc) or 2 (floor)."""
    first = "self" if "self" in args else "selfRef"
    mode = args["mode"]
    if mode not in (0, 1, 2):
        raise OpArgError(f"mode is {mode}; it must be 0 (true division), 1 (trunc) or 2 (floor)")
    Binary(first=first, out="out" if first == "self" else first, true_div=mode == 0).check(args)


def _is_in(args: Args) -> None:
    """IsInScalarTensor (element a scalar: out a 0-D BOOL, whether it is among testElements) and IsInTensorScalar
    (element a tensor: out its shape)."""
    scalar_first = isinstance(args["element"], aclScalar)
    tensor_name, scalar_name = ("testElements", "element") if scalar_first else ("element", "testElement")
    t, value = tensor(args, tensor_name), scalar(args, scalar_name)
    require_dtype(tensor_name, t.data_type, ALL | {DT.ACL_UINT16})
    if dtypes.promote_with_scalar(t.data_type, value.data_type) is None:
        raise OpArgError(f"{scalar_name} has dtype {dtypes.name(value.data_type)}, which cannot be promoted with "
                         f"{tensor_name}'s {dtypes.name(t.data_type)}")  # fmt: skip
    check_out(args, "out", DT.ACL_BOOL, () if scalar_first else t.view_dims, frozenset({DT.ACL_BOOL}))


def _equal(args: Args) -> None:
    a, b = tensor(args, "self"), tensor(args, "other")
    require_dtype("self", a.data_type, ALL | WIDE_UNSIGNED)
    require_dtype("other", b.data_type, ALL | WIDE_UNSIGNED)
    if dtypes.promote_types(a.data_type, b.data_type) is None:
        raise OpArgError(f"other has dtype {dtypes.name(b.data_type)}, which cannot be promoted with self's "
                         f"{dtypes.name(a.data_type)}")  # fmt: skip
    check_out(args, "out", DT.ACL_BOOL, (1,), frozenset({DT.ACL_BOOL}))


def _complex(args: Args) -> None:
    re_, im = tensor(args, "real"), tensor(args, "imag")
    require_dtype("real", re_.data_type, frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_DOUBLE}))
    require_same_dtype("imag", im, "real", re_)
    dtype = DT.ACL_COMPLEX128 if re_.data_type == DT.ACL_DOUBLE else DT.ACL_COMPLEX64
    check_out(args, "out", dtype, broadcast_all(("real", re_), ("imag", im)), COMPLEX, exact=True)


def _gamma(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, GAMMA)
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


def _add_v3(args: Args) -> None:
    """AddV3 (out = self + alpha · other, self a scalar) and InplaceAddV3 (other written)."""
    x, other = scalar(args, "self" if "self" in args else "selfRef"), tensor(args, "other")
    require_dtype("other", other.data_type, ADD_V3)
    dtype = dtypes.promote_with_scalar(other.data_type, x.data_type)
    if dtype is None or dtype not in ADD_V3:
        raise OpArgError(f"other has dtype {dtypes.name(other.data_type)}, which does not promote with the scalar "
                         f"{dtypes.name(x.data_type)} to a supported dtype")  # fmt: skip
    alpha = scalar(args, "alpha")
    if not dtypes.can_cast(alpha.data_type, dtype):
        raise OpArgError(
            f"alpha has dtype {dtypes.name(alpha.data_type)}, which cannot be cast to {dtypes.name(dtype)}"
        )
    check_out(args, "out" if "out" in args else "other", dtype, other.view_dims, ADD_V3)


def _extreme_n(args: Args) -> None:
    """MaxN, MinN: one dtype across the list and out, shapes that broadcast to out's."""
    found = tensors(args, "tensors")
    if not found:
        raise OpArgError("tensors is empty; it must hold at least one tensor")
    named = [(f"tensors[{i}]", t) for i, t in enumerate(found)]
    for name, t in named:
        require_dtype(name, t.data_type, EXTREME_N)
        require_same_dtype(name, t, "tensors[0]", found[0])
    check_out(args, "out", found[0].data_type, broadcast_all(*named), exact=True)


def _twin(name: str) -> Twin:
    base, first, source = TWINS[name]
    table = {**pointwise.TABLE, **activation.TABLE, **creation.TABLE}
    return Twin(entry_of(table[base]).rule, first, source)


COMPARE_INPLACE: Final = Binary(first="selfRef", out="selfRef", compare=True)
BITWISE: Final = ("And", "Or", "Xor")

TABLE: Final[dict[str, Row]] = {
    **{
        f"Inplace{op}{kind}": COMPARE_INPLACE
        for op in ("Eq", "Ne", "Gt", "Ge", "Lt", "Le")
        for kind in ("Scalar", "Tensor")
    },
    "InplaceLogicalAnd": COMPARE_INPLACE,
    "InplaceLogicalOr": COMPARE_INPLACE,
    "InplaceLogicalNot": Pointwise(ALL, "bool"),
    "InplaceLerp": Checked(_lerp_inplace, doc="ops-math math/lerp, aclnnInplaceLerp"),
    "InplaceAddcmul": _addc_inplace(NUMERIC),
    "InplaceAddcdiv": _addc_inplace(FLOATS | {DT.ACL_INT64}),
    "ClampMinTensor": _clamp("clipValueMin", in_place=False),
    "ClampMaxTensor": _clamp("max", in_place=False),
    "InplaceClampMinTensor": _clamp("clipValueMin", in_place=True),
    "InplaceClampMaxTensor": _clamp("max", in_place=True),
    "InplaceClampMax": _clamp("clipValueMax", in_place=True),
    **{f"Bitwise{op}{kind}": _bitwise() for op in BITWISE for kind in ("Scalar", "Tensor")},
    **{f"InplaceBitwise{op}{kind}": _bitwise("selfRef", "selfRef") for op in BITWISE for kind in ("Scalar", "Tensor")},
    "BitwiseAndTensorOut": _bitwise(),
    "InplaceBitwiseAndTensorOut": _bitwise("self", "self"),
    "RightShift": Binary(first="input", other="shiftBits", allowed=SHIFTS),
    "XLogYTensor": Binary(true_div=True),
    "XLogYScalarOther": Binary(true_div=True),
    "InplaceXLogYTensor": inplace(Binary(true_div=True)),
    "InplaceXLogYScalarOther": inplace(Binary(true_div=True)),
    "XLogYScalarSelf": Checked(_xlogy_scalar_self, doc="ops-math math/xlogy, aclnnXLogYScalarSelf"),
    "Gcd": Binary(allowed=INTS),
    "IsClose": Checked(_is_close, doc="ops-math math/is_close, aclnnIsClose"),
    "NanToNum": Checked(_nan_to_num, doc="ops-math math/nan_to_num, aclnnNanToNum"),
    "InplaceNanToNum": Checked(_nan_to_num, doc="ops-math math/nan_to_num, aclnnInplaceNanToNum"),
    "Signbit": Pointwise(ALL | WIDE_UNSIGNED, "bool"),
    "Real": Checked(_real, doc="ops-math math/real, aclnnReal"),
    "Polar": Checked(_polar, doc="ops-math math/polar, aclnnPolar"),
    "LinalgCross": Checked(_cross, doc="ops-math math/cross, aclnnLinalgCross"),
    "Erfinv": Pointwise(ALL - {DT.ACL_DOUBLE}, "float"),
    "InplaceErfinv": Pointwise(HALVES, "float"),
    **{name: _twin(name) for name in TWINS},
    "Lerps": Checked(_lerps, doc="ops-math math/lerp, aclnnLerps"),
    "InplaceLerps": Checked(_lerps, doc="ops-math math/lerp, aclnnInplaceLerps"),
    "Sinc": Pointwise(ALL, "float"),
    "InplaceSinc": Pointwise(FLOATS, "float"),
    "IsNegInf": Pointwise(FLOATS, "bool"),
    "IsPosInf": Pointwise(FLOATS, "bool"),
    "LeftShift": Binary(other="shiftBits", allowed=SHIFTS),
    "LeftShifts": Binary(other="shiftBits", allowed=SHIFTS),
    "LogAddExp": Binary(true_div=True),
    "LogAddExp2": Binary(true_div=True),
    "Rsub": Binary(no_bool=True),
    "Rsubs": Binary(no_bool=True),
    "RemainderScalarTensor": Checked(_remainder_scalar_tensor, doc="ops-math math/floor_mod"),
    "Square": Checked(_square, doc="ops-math math/square, aclnnSquare"),
    "Xlog1py": Checked(_xlog1py, doc="ops-math math/xlog1py, aclnnXlog1py"),
    "RoundDecimals": Checked(_round_decimals, doc="ops-math math/round, aclnnRoundDecimals"),
    "InplaceRoundDecimals": Checked(_round_decimals, doc="ops-math math/round, aclnnInplaceRoundDecimals"),
    **{
        name: Checked(_div_mod, doc="ops-math math/div, aclnnDivMod(s)")
        for name in ("DivMod", "DivMods", "InplaceDivMod", "InplaceDivMods")
    },
    "IsInScalarTensor": Checked(_is_in, doc="ops-math math/equal, aclnnIsInScalarTensor"),
    "IsInTensorScalar": Checked(_is_in, doc="ops-math math/equal, aclnnIsInTensorScalar"),
    "Equal": Checked(_equal, doc="ops-math math/tensor_equal, aclnnEqual"),
    "Complex": Checked(_complex, doc="ops-math math/complex, aclnnComplex"),
    "Lgamma": Checked(_gamma, doc="ops-math math/lgamma, aclnnLgamma"),
    "Digamma": Checked(_gamma, doc="ops-math math/digamma, aclnnDigamma"),
    "AddV3": Checked(_add_v3, doc="ops-math math/add, aclnnAddV3"),
    "InplaceAddV3": Checked(_add_v3, doc="ops-math math/add, aclnnInplaceAddV3"),
    "MaxN": Checked(_extreme_n, doc="ops-math math/maximum, aclnnMaxN"),
    "MinN": Checked(_extreme_n, doc="ops-math math/minimum, aclnnMinN"),
}
