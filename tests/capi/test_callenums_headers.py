"""`proto.callenums` against the toolkit's headers: every enum-typed parameter of a call in the table, and every
enum field of a C struct the OpenAPI document shows, is listed there with its C enum (no compiler run beyond the
preprocessor)."""

from __future__ import annotations

from enum import IntEnum

import pytest
from pycparser import c_ast, c_parser
from pydantic import BaseModel

from client.capi import headers
from client.capi import toolkit as tk
from client.capi.prototypes import STD_TYPES, Table, read_table
from proto import constants
from proto.callenums import ENUM_ARGS
from proto.calltable import CALLS

ENUMS = {name for name, value in vars(constants).items() if isinstance(value, type) and issubclass(value, IntEnum)}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Table:
    include = tmp_path_factory.mktemp("headers") / "include"
    headers.write_tree(include)
    return read_table(include, [*tk.ENTRY_HEADERS, *tk.operator_headers(include)])


def base_type(ctype: str) -> str:
    return ctype.replace("const ", "").replace("*", "").strip()


def struct_enums(table: Table) -> dict[str, dict[str, str]]:
    """The enum-typed fields of each typedef'd struct of the headers: struct -> field -> enum name."""
    found: dict[str, dict[str, str]] = {}
    for node in c_parser.CParser().parse(STD_TYPES + table.cdef_types).ext:
        struct = node.type.type if isinstance(node, c_ast.Typedef) else None
        for field in struct.decls or () if isinstance(struct, c_ast.Struct) else ():
            kind = field.type.type if isinstance(field.type, c_ast.TypeDecl) else None
            name = " ".join(kind.names) if isinstance(kind, c_ast.IdentifierType) else ""
            if name in ENUMS:
                found.setdefault(node.name, {})[field.name] = name
    return found


def listed(owner: str) -> dict[str, str]:
    return {field: enum.__name__ for field, enum in ENUM_ARGS.get(owner, {}).items()}


def test_every_enum_parameter_of_a_call_is_listed(table: Table) -> None:
    structs = struct_enums(table)
    for prototype in table.prototypes:
        if prototype.name not in CALLS:
            continue
        direct = {p.name: base_type(p.ctype) for p in prototype.params if base_type(p.ctype) in ENUMS}
        # a result model may flatten an out-struct (aclrtGetErrorVerbose's aclrtErrorInfo): its fields may be listed
        flattened = {k: v for p in prototype.params for k, v in structs.get(base_type(p.ctype), {}).items()}
        table_says = listed(prototype.name)
        assert direct.items() <= table_says.items(), prototype.name
        assert table_says.items() - direct.items() <= flattened.items(), prototype.name


def test_every_enum_field_of_a_struct_the_calls_take_is_listed(table: Table) -> None:
    structs = struct_enums(table)
    models = {title for call in CALLS.values() for model in (call.request, call.result) for title in titles(model)}
    for owner in models:  # a struct, by its model's title (the C name, maybe without aclrt)
        c_name = owner if owner in structs else f"aclrt{owner}"
        assert listed(owner) == structs.get(c_name, {}), owner
    assert set(ENUM_ARGS) - set(CALLS) <= models  # no entry for a struct no call takes


def titles(model: type[BaseModel]) -> set[str]:
    """The titles of the nested models (C structs) of a request or result model."""
    return {str(sub.get("title")) for sub in model.model_json_schema().get("$defs", {}).values()}
