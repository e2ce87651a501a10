"""What the generated C of each prototype does (`Plan`): written by hand, an operator's phase, marshalled, a stub.

- a function written by hand in `src/` (a `VN_EXPORT` definition there, or one `hostgen` writes) is left to it;
- an operator's two phases (`proto.aclnn.OPS`) are `opgen`'s, as are the operator library's other functions;
- a function of the call table whose arguments and out-parameters are plain (integers, enums, handles and
  pointers, strings, bool, float; `annotations` where the types do not say) is a "call", marshalled by `callgen`;
- every other declared function is a "stub", with the reason it is one.
Also here: the wire kind of a call-table field (`kind_of`), which `callgen` emits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BeforeValidator

from client.capi.prototypes import Prototype, Table
from client.native import annotations as notes
from client.native import opgen
from client.native.hostgen import HOST_EVALUATED
from proto.aclnn import OPS
from proto.aclnn.phase1 import max_workspace_name
from proto.calltable import CALLS, Call, WireModel

SOURCES = Path(__file__).parent / "src"
_DEFINED = re.compile(r"^VN_EXPORT\s+[^;{(]*?\b(\w+)\(", re.MULTILINE)
# SETTER(aclrtAllocatorSet..., ...), OUT_U32(HcclGetRankSize, ...)
_DEFINED_BY_MACRO = re.compile(r"^[A-Z][A-Z0-9_]+\(((?:acl|Hccl)\w+),", re.MULTILINE)


def hand_written() -> frozenset[str]:
    """The exported functions the hand-written sources define (and those `emit_host` writes)."""
    names: set[str] = set(HOST_EVALUATED)
    for path in sorted(SOURCES.rglob("*.c")):
        names.update(_DEFINED.findall(path.read_text()), _DEFINED_BY_MACRO.findall(path.read_text()))
    return frozenset(names)


@dataclass(frozen=True)
class Plan:
    """What the generated C of one function does: `kind` is "call", "phase1", "phase2" or "stub"."""

    kind: str
    why: str = ""  # a stub's reason (for the docs and the count)


def model_of(field: Any) -> type[WireModel] | None:
    """The call-table struct (a WireModel) an argument is, Optional or not; None for anything else."""
    import typing

    annotation = field.annotation
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, WireModel):
            return candidate
    return None


def element_model(field: Any) -> type[WireModel] | None:
    """The struct an array argument holds (`list[Model] | None`), or None."""
    import typing

    for candidate in typing.get_args(field.annotation):
        for inner in typing.get_args(candidate):
            if isinstance(inner, type) and issubclass(inner, WireModel):
                return inner
    return None


def plain_struct(model: type[WireModel]) -> bool:
    """Whether every field of `model` is plain or a nested struct of plain fields (what `callgen.emit_struct` puts)."""
    for field in model.model_fields.values():
        nested = model_of(field)
        if not (plain_struct(nested) if nested is not None else kind_of(field) is not None):
            return False
    return True


def kind_of(field: Any) -> str | None:
    """A call-table field's wire kind, or None when it is not plain: addr, int, uint, str, bool, float."""
    annotation = field.annotation
    if any(isinstance(m, BeforeValidator) for m in field.metadata):
        return "addr"
    if annotation is int:
        low = next((m.ge for m in field.metadata if hasattr(m, "ge")), 0)
        return "int" if low < 0 else "uint"
    if annotation in (str, str | None):
        return "str"
    if annotation is bool:
        return "bool"
    if annotation is float:
        return "float"
    return None


def aggregates(table: Table) -> frozenset[str]:
    """The typedef names of structs and unions (an out-parameter of one is not a plain value)."""
    from pycparser import c_ast, c_parser

    from client.capi.prototypes import STD_TYPES

    tree = c_parser.CParser().parse(STD_TYPES + table.cdef_types)
    found = set()
    for node in tree.ext:
        is_type = isinstance(node, c_ast.Typedef) and isinstance(node.type, c_ast.TypeDecl)
        if is_type and isinstance(node.type.type, c_ast.Struct | c_ast.Union):
            found.add(node.name)
    return frozenset(found)


def kind_of_list(field: Any) -> str:
    """A list argument's element kind: "addr" for handles, "int" for numbers."""
    return "addr" if "BeforeValidator" in str(field.annotation) else "int"


def plan(proto: Prototype, written: frozenset[str], structs: frozenset[str] = frozenset()) -> Plan:
    if proto.name in written:
        return Plan("hand")
    for decl in OPS.implemented():
        if proto.name in (decl.ws_name, max_workspace_name(decl.name)):
            return Plan("phase1")
        if proto.name == decl.c_name:
            return Plan("phase2")
    if proto.name in opgen.SPECIAL:
        return Plan("special")
    if proto.library == "opapi":
        return Plan("kernel", "an operator vnpu has no kernel for")
    call = CALLS.get(proto.name)
    if call is None:
        return Plan("stub", notes.UNSUPPORTED.get(proto.name, "not in the call table"))
    problem = _unplain(call, proto, structs)
    return Plan("stub", problem) if problem else Plan("call")


def c_param(proto: Prototype, call: Call, name: str) -> str:
    return notes.C_NAMES.get((call.name, name), name)


def _unplain(call: Call, proto: Prototype, structs: frozenset[str]) -> str:
    params = {p.name: p.ctype for p in proto.params}
    for name, field in call.request.model_fields.items():
        if (
            (call.name, name) in notes.BYTES
            or (call.name, name) in notes.BYTES_VALUE
            or (call.name, name) in notes.LISTS
        ):
            continue
        if c_param(proto, call, name) not in params:
            return f"the C prototype has no parameter {name}"
        model = model_of(field)
        if model is not None:
            if not plain_struct(model):
                return f"struct argument {name} has a field that is not plain"
            continue
        if kind_of(field) is None:
            return f"argument {name} is not plain ({field.annotation})"
    if call.name in notes.STRUCT_OUTS:
        bad = [n for n, f in call.result.model_fields.items() if kind_of(f) not in ("int", "uint", "addr")]
        return f"struct fields {bad} are not plain" if bad else ""
    for name, field in call.result.model_fields.items():
        if (call.name, name) in notes.BYTES_OUT:
            continue
        c = c_param(proto, call, name)
        if c not in params or not params[c].rstrip().endswith("*"):
            return f"out-parameter {name} is no C pointer"
        if params[c].replace("const ", "").rstrip(" *") in structs:
            return f"out-parameter {name} is a C struct or union"
        kind = kind_of(field)
        if kind is None or (kind == "str" and (call.name, name) not in notes.STRING_LENGTH):
            return f"out-parameter {name} is not plain ({field.annotation})"
    return ""
