"""The catalog's view of a C parameter: its kind (from the C type), direction and optionality.

Kinds come from the type alone, const ignored: `aclTensor *` tensor, `aclTensorList *` tensor_list,
`aclScalar *` scalar, `aclScalarList *` scalar_list, `aclIntArray *` int_array, `aclBoolArray *`
bool_array, `aclFloatArray *` float_array, `int64_t` int64, `int32_t`/`int` int32, `int8_t` int8, `uint64_t`
uint64, `double`, `float`, `bool`, `char *` string, `aclDataType` dtype; anything else is `other`.

Only tensors and tensor lists have a direction other than `in`. For a hand-written header it is read, in
this order, from: a name ending in `Ref` (in place, CANN's naming); the `L2_DFX_PHASE_1` lists of the
operator's C++ definition (both lists: in place; DFX_OUT only: out; a non-const `out`-named parameter
listed in DFX_IN is still an output); the operator's doc page (`docpages`); and last the C type, name
and place: non-const, named `out`, `...Out`, `...Output` (not `gradOut...`/`dOut...`), or after the last
attribute (CANN puts outputs last), is an output. An `Inplace...` operator in which none of this finds a
written tensor writes its first one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from proto.aclnn.catalog import CatalogParam, CParam, Direction, Kind
from proto.aclnn.catalog.dfx import Phase1Io

KIND_BY_TYPE: Final[dict[str, Kind]] = {
    "aclTensor *": "tensor",
    "aclTensorList *": "tensor_list",
    "aclScalar *": "scalar",
    "aclScalarList *": "scalar_list",
    "aclIntArray *": "int_array",
    "aclBoolArray *": "bool_array",
    "aclFloatArray *": "float_array",
    "int64_t": "int64",
    "int32_t": "int32",
    "int": "int32",
    "int8_t": "int8",
    "uint64_t": "uint64",
    "double": "double",
    "float": "float",
    "bool": "bool",
    "char *": "string",
    "aclDataType": "dtype",
}
TENSOR_KINDS: Final = frozenset({"tensor", "tensor_list"})
INPLACE_NAME = re.compile(r"Ref(Optional)?$")
OUTPUT_NAME = re.compile(r"^out(put)?\d*$|[a-z0-9](Out|Output)\d*(Optional)?$")
GRADIENT_INPUT_NAME = re.compile(r"^(grad|d)(Out|Output)")


def kind_of(ctype: str) -> Kind:
    return KIND_BY_TYPE.get(re.sub(r"\bconst\s+", "", ctype).strip(), "other")


def is_optional(name: str) -> bool:
    return name.endswith("Optional")


def header_direction(
    index: int, param: CParam, io: Phase1Io | None, documented: Mapping[str, Direction], trailing: bool = False
) -> Direction:
    """The direction of a hand-written header's parameter at `index` (see the module docstring)."""
    if kind_of(param.ctype) not in TENSOR_KINDS:
        return "in"
    if INPLACE_NAME.search(param.name):
        return "inplace"
    written = not param.ctype.startswith("const")
    named_output = OUTPUT_NAME.search(param.name) is not None and not GRADIENT_INPUT_NAME.match(param.name)
    if io is not None and index in io.inputs | io.outputs:
        if index in io.outputs:
            return "inplace" if index in io.inputs else "out"
        return "out" if written and named_output else "in"  # a DFX_IN that lists the output too (aclnnLog)
    if param.name in documented:
        return documented[param.name]
    return "out" if written or named_output or trailing else "in"


def header_params(
    params: tuple[CParam, ...], io: Phase1Io | None, documented: Mapping[str, Direction], inplace_op: bool
) -> tuple[CatalogParam, ...]:
    """The GetWorkspaceSize parameters of a hand-written header, without the workspaceSize/executor tail.

    An `Inplace...` operator in which nothing above finds the written tensor writes its first one.
    """
    attributes = [index for index, param in enumerate(params) if kind_of(param.ctype) not in TENSOR_KINDS]
    last_attribute = attributes[-1] if attributes else len(params)
    directions = [
        header_direction(index, param, io, documented, trailing=index > last_attribute)
        for index, param in enumerate(params)
    ]
    if inplace_op and "inplace" not in directions:
        tensors = [index for index, param in enumerate(params) if kind_of(param.ctype) in TENSOR_KINDS]
        if tensors:
            directions[tensors[0]] = "inplace"
    return tuple(
        CatalogParam(
            name=param.name,
            ctype=param.ctype,
            direction=direction,
            kind=kind_of(param.ctype),
            optional=is_optional(param.name),
        )
        for param, direction in zip(params, directions, strict=True)
    )
