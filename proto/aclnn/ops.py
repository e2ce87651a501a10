"""The rule table: every operator vnpu implements, one row each, gathered from the families' tables, and the source
of every declaration the registry (`proto.aclnn.OPS`) hands out.

An operator's C arguments come from CANN's catalog (`proto.aclnn.catalog`), never from here: a row names the
operator and its rule (`proto.aclnn.rules.<family>.TABLE`), and `proto.aclnn.declare` joins the two when the
operator is first asked for. Adding an operator is one row in its family's table, one kernel function
(`server.npu.ops.<area>`) and one test row.
"""

from __future__ import annotations

from typing import Final

from proto.aclnn.catalog import catalog
from proto.aclnn.decl import OpDecl
from proto.aclnn.declare import declaration
from proto.aclnn.entry import Row
from proto.aclnn.registry import OPS
from proto.aclnn.rules import (
    activation,
    activation_more,
    attention,
    creation,
    elementwise,
    grad,
    index,
    index_fill,
    loss,
    matmul,
    norm,
    pointwise,
    pointwise_more,
    reduce,
    shape,
    transformer,
)

FAMILIES: Final = (
    elementwise,
    pointwise,
    pointwise_more,
    index_fill,
    reduce,
    shape,
    creation,
    activation,
    activation_more,
    index,
    matmul,
    norm,
    attention,
    transformer,
    grad,
    loss,
)


def _gather() -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for family in FAMILIES:
        for name, row in family.TABLE.items():
            if name in rows:
                raise ValueError(f"aclnn{name} has a row in two families' tables ({family.__name__})")
            rows[name] = row
    return rows


RULES: Final[dict[str, Row]] = _gather()
"""The implemented operators by name: their rows."""

ORIGINAL: Final = (
    "Add", "Adds", "Sub", "Subs", "Mul", "Muls", "Div", "InplaceAdd", "InplaceMul", "Relu", "Gelu", "Silu", "Abs",
    "Neg", "Exp", "Softmax", "Cast", "InplaceCopy", "ReduceSum", "Mean", "Matmul",
)  # fmt: skip
"""The 21 operators vnpu had before the catalog, in their old order (`DECLS`)."""


def build(name: str) -> OpDecl | None:
    """The declaration of CANN's operator `name` (None for a name the catalog does not hold)."""
    op = catalog().ops.get(name)
    return None if op is None else declaration(op, RULES.get(name))


def _names() -> list[str]:
    return list(catalog().ops)


OPS.attach(_names, build, RULES.keys)


def decls() -> tuple[OpDecl, ...]:
    """The declarations of the `ORIGINAL` operators."""
    return tuple(OPS[name] for name in ORIGINAL)
