"""An operator's declaration from CANN's catalog: its C arguments (names, kinds, order, C types) as the catalog records
them, with the rule of vnpu's table when there is one.

Three tiers (`OpDecl.tier`): an operator of the rule table is *implemented* (a rule and a kernel); an operator whose
header CANN generates from an OpDef is *ruled* by the OpDef's dtype columns (`OpDefDtypes`); every other one is
*declared* (its arguments' kinds are checked). Phase 1 of the last two fails with ACLNN_ERR_INNER_FIND_KERNEL
after its checks: "vnpu does not implement aclnnXxx yet".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from proto.aclnn.catalog import CatalogOp, CatalogParam
from proto.aclnn.decl import Arg, ArgKind, Args, OpArgError, OpDecl
from proto.aclnn.entry import Row, entry_of
from proto.aclnn.host import aclTensor
from proto.aclnn.hostlist import aclTensorList
from proto.aclnn.rules.base import NoWorkspace, first_written_dtype
from proto.constants import aclDataType

A = ArgKind
KINDS: Final[dict[tuple[str, str], ArgKind]] = {
    ("tensor", "in"): A.TENSOR,
    ("tensor", "out"): A.OUT,
    ("tensor", "inplace"): A.INPLACE,
    ("tensor_list", "in"): A.TENSOR_LIST,
    ("tensor_list", "out"): A.OUT_LIST,
    ("tensor_list", "inplace"): A.INPLACE_LIST,
    ("scalar", "in"): A.SCALAR,
    ("scalar_list", "in"): A.SCALAR_LIST,
    ("int_array", "in"): A.INT_ARRAY,
    ("bool_array", "in"): A.BOOL_ARRAY,
    ("float_array", "in"): A.FLOAT_ARRAY,
    ("int64", "in"): A.INT,
    ("int32", "in"): A.INT32,
    ("int8", "in"): A.INT8,
    ("uint64", "in"): A.UINT64,
    ("other", "in"): A.UINT32,  # the catalog's one "other" C type is MoeFusedTopk's uint32_t
    ("double", "in"): A.DOUBLE,
    ("float", "in"): A.FLOAT,
    ("bool", "in"): A.BOOL,
    ("string", "in"): A.STRING,
    ("dtype", "in"): A.DTYPE,
}
"""The catalog's (kind, direction) -> the argument kind phase 1 checks."""


def arg_of(param: CatalogParam, optional: bool = False) -> Arg:
    kind = KINDS[(param.kind, param.direction)]
    return Arg(param.name, kind, param.optional or optional, c_type=param.ctype)


class Declared(NoWorkspace):
    """The rule of an operator vnpu only declares: its arguments' kinds are all phase 1 checks."""

    def result_dtype(self, args: Args) -> aclDataType:
        return first_written_dtype(args)

    def check(self, args: Args) -> None:
        pass


@dataclass(frozen=True, eq=False)
class OpDefDtypes(Declared):
    """The dtype columns of an OpDef (`op_host/<op>_def.cpp`): the tensors given must all fit one column (a
    `DataTypeList` parameter any of its dtypes)."""

    columns: Mapping[str, tuple[aclDataType, ...]]
    free: frozenset[str]

    def check(self, args: Args) -> None:
        given = [(name, _dtype_of(args[name])) for name in self.columns]
        present = [(name, dt) for name, dt in given if dt is not None]
        for name, dt in present:
            if dt not in self.columns[name]:
                allowed = ", ".join(sorted({d.name for d in self.columns[name]}))
                raise OpArgError(f"{name} has dtype {dt.name}; the operator takes {allowed}")
        tied = [(name, dt) for name, dt in present if name not in self.free]
        width = min((len(self.columns[name]) for name, _ in tied), default=0)
        if tied and not any(all(self.columns[name][j] == dt for name, dt in tied) for j in range(width)):
            shown = ", ".join(f"{name} {dt.name}" for name, dt in tied)
            raise OpArgError(f"{tied[0][0]}: the dtypes ({shown}) are not a combination the operator takes")


def _dtype_of(value: object) -> aclDataType | None:
    if isinstance(value, aclTensor):
        return value.data_type
    if isinstance(value, aclTensorList):
        first = next((t for t in value.tensors if t is not None), None)
        return None if first is None else first.data_type
    return None


def opdef_rule(op: CatalogOp) -> OpDefDtypes | None:
    """The OpDef dtype rule of a generated operator, when its tensors list dtypes vnpu knows."""
    columns: dict[str, tuple[aclDataType, ...]] = {}
    free = set()
    for param in op.params:
        if param.kind not in ("tensor", "tensor_list") or not param.dtypes:
            continue
        known = tuple(aclDataType.__members__.get(f"ACL_{d}") for d in param.dtypes)
        if any(d is None for d in known):
            return None  # a dtype the catalog spells in a way vnpu does not know: check nothing
        columns[param.name] = known  # type: ignore[assignment]
        if param.any_dtype:
            free.add(param.name)
    return OpDefDtypes(columns, frozenset(free)) if columns else None


def declaration(op: CatalogOp, row: Row | None) -> OpDecl:
    """The declaration of the catalog's operator `op`, implemented when it has a row of the rule table."""
    if row is not None:
        found = entry_of(row)
        args = tuple(arg_of(p, p.name in found.nullable) for p in op.params)
        unknown = set(found.nullable) - {p.name for p in op.params}
        if unknown:
            raise ValueError(f"{op.c_name}: nullable names {sorted(unknown)} are not its arguments")
        return OpDecl(op.name, args, found.rule, found.kernel_kind, "implemented")
    args = tuple(arg_of(p) for p in op.params)
    ruled = opdef_rule(op) if op.source == "opdef" else None
    if ruled is not None:
        return OpDecl(op.name, args, ruled, tier="ruled")
    return OpDecl(op.name, args, Declared(), tier="declared")
