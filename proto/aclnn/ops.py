"""Every aclnn operator vnpu implements, declared once: C arguments in order, family rule, kernel unit.

The signatures are those of the CANN aclnn headers (`aclnn_add.h`, `aclnn_matmul.h`, ...). Matmul runs on the
cube unit (AIC), everything else on the vector unit (AIV); task update refuses swapping one for the other.
"""

from __future__ import annotations

from typing import Final

from proto.aclnn.decl import Arg, ArgKind, KernelKind, OpDecl, Rule
from proto.aclnn.dtypes import ALL, FLOATS, NUMERIC
from proto.aclnn.registry import OPS
from proto.aclnn.rules import Binary, Cast, Copy, Matmul, Reduce, Softmax, Unary
from proto.constants import aclDataType

A = ArgKind
SELF, OUT, SELF_REF = Arg("self", A.TENSOR), Arg("out", A.OUT), Arg("selfRef", A.INPLACE)


def binary(
    name: str, *, scalar: bool = False, alpha: bool = False, no_bool: bool = False, true_div: bool = False
) -> OpDecl:
    """aclnn<name>(self, other[, alpha], out), or (selfRef, other[, alpha]) for an Inplace<...> name."""
    inplace = name.startswith("Inplace")
    first = SELF_REF if inplace else SELF
    args: tuple[Arg, ...] = (first, Arg("other", A.SCALAR if scalar else A.TENSOR))
    args += (Arg("alpha", A.SCALAR),) if alpha else ()
    args += () if inplace else (OUT,)
    out = first.name if inplace else OUT.name
    return OpDecl(name, args, Binary(first=first.name, out=out, no_bool=no_bool, true_div=true_div))


def op(name: str, rule: Rule, *middle: Arg, kernel_kind: KernelKind = "vector") -> OpDecl:
    """aclnn<name>(self, <middle>..., out)."""
    return OpDecl(name, (SELF, *middle, OUT), rule, kernel_kind)


def reduce(name: str, allowed: frozenset[aclDataType]) -> OpDecl:
    """aclnn<name>(self, dim, keepDim, dtype, out)."""
    return op(name, Reduce(allowed=allowed), Arg("dim", A.INT_ARRAY), Arg("keepDim", A.BOOL), Arg("dtype", A.DTYPE))


DECLS: Final[tuple[OpDecl, ...]] = (
    binary("Add", alpha=True),
    binary("Adds", scalar=True, alpha=True),
    binary("Sub", alpha=True, no_bool=True),
    binary("Subs", scalar=True, alpha=True, no_bool=True),
    binary("Mul"),
    binary("Muls", scalar=True),
    binary("Div", true_div=True),
    binary("InplaceAdd", alpha=True),
    binary("InplaceMul"),
    op("Relu", Unary(allowed=NUMERIC)),
    op("Gelu", Unary(allowed=FLOATS)),
    op("Silu", Unary(allowed=FLOATS)),
    op("Abs", Unary(allowed=ALL)),
    op("Neg", Unary(allowed=NUMERIC)),
    op("Exp", Unary(allowed=ALL, to_float=True)),
    op("Softmax", Softmax(), Arg("dim", A.INT)),
    op("Cast", Cast(), Arg("dtype", A.DTYPE)),
    OpDecl("InplaceCopy", (SELF_REF, Arg("src", A.TENSOR)), Copy()),
    reduce("ReduceSum", ALL),
    reduce("Mean", FLOATS),
    OpDecl("Matmul", (SELF, Arg("mat2", A.TENSOR), OUT, Arg("cubeMathType", A.INT, c_type="int8_t")), Matmul(), "cube"),
)

OPS.update((decl.name, decl) for decl in DECLS)
