"""The JSON schema of the kernel description's wire form (`KernelDesc.to_wire`), generated from the operator
declarations, and a valid example of each operator's arguments: what the OpenAPI page shows a curl user.

`COMPONENTS` are the shared pieces (a tensor, a scalar), which the per-operator schemas reference under
`REF` (`#/components/schemas/` in an OpenAPI document).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Any, Final

from proto.aclnn import dtypes
from proto.aclnn.decl import LIST_KINDS, TENSOR_KINDS, Arg, ArgKind, OpDecl
from proto.aclnn.host import MAX_DIMS
from proto.aclnn.kernel import NONFINITE, TENSOR_FIELDS
from proto.addresses import DEVICE_BASE
from proto.constants import aclDataType, aclFormat

REF: Final = "#/components/schemas/"
INT64: Final = {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1}
SIZE: Final = {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}


def enum_of(enum: type[IntEnum], members: Iterable[IntEnum] | None = None, what: str = "") -> dict[str, Any]:
    """An enum argument of the wire form: its C name ("ACL_FLOAT") or its value (`members`: the allowed ones)."""
    names = [m.name for m in sorted(members if members is not None else enum)]
    return {
        "description": f"{what or enum.__name__}: a C name of {enum.__name__} or its value",
        "anyOf": [{"type": "string", "enum": names}, {"type": "integer", "enum": [int(enum[n]) for n in names]}],
    }


def _dims(what: str) -> dict[str, Any]:
    return {"type": "array", "items": SIZE, "maxItems": MAX_DIMS, "description": what}


_TENSOR_FIELDS: Final[dict[str, dict[str, Any]]] = {
    "view_dims": _dims("the view's shape"),
    "data_type": enum_of(aclDataType, dtypes.INFO, "the element type"),
    "strides": _dims("the view's strides, in elements"),
    "offset": SIZE | {"description": "the view's first element, in elements from data"},
    "format": enum_of(aclFormat, what="the layout (vnpu kernels read the plain ones: ND, NCHW, ...)"),
    "storage_dims": _dims("the shape of the storage the view lies in"),
    "data": {"type": "integer", "minimum": 0, "maximum": 2**64 - 1, "description": "the storage's device address"},
}
_NUMBER: Final = {"anyOf": [{"type": "number"}, {"type": "boolean"}, {"type": "string", "enum": list(NONFINITE)}]}
_SCALAR_FIELDS: Final = {
    "value": _NUMBER | {"description": 'the value (a bool for ACL_BOOL; "inf", "-inf", "nan" for non-finite)'},
    "data_type": enum_of(aclDataType, dtypes.SCALAR_DTYPES),
}


def _object(title: str, fields: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "title": title,
        "description": description,
        "type": "object",
        "properties": fields,
        "required": list(fields),
        "additionalProperties": False,
    }


COMPONENTS: Final[dict[str, dict[str, Any]]] = {
    "aclTensor": _object("aclTensor", _TENSOR_FIELDS, "aclCreateTensor's arguments: a strided view of device memory"),
    "aclScalar": _object("aclScalar", _SCALAR_FIELDS, "aclCreateScalar's arguments: one host value"),
}

_TENSOR: Final = {"$ref": f"{REF}aclTensor"}
_SCALAR: Final = {"$ref": f"{REF}aclScalar"}
_FLOAT: Final = {"anyOf": [{"type": "number"}, {"type": "string", "enum": list(NONFINITE)}]}


def _ints(low: int, high: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high}


_KINDS: Final[dict[ArgKind, dict[str, Any]]] = {
    ArgKind.TENSOR_LIST: {"type": "array", "items": _TENSOR, "description": "an aclTensorList"},
    ArgKind.OUT_LIST: {"type": "array", "items": _TENSOR, "description": "an aclTensorList (written)"},
    ArgKind.INPLACE_LIST: {"type": "array", "items": _TENSOR, "description": "an aclTensorList (written)"},
    ArgKind.SCALAR: _SCALAR,
    ArgKind.SCALAR_LIST: {"type": "array", "items": _SCALAR, "description": "an aclScalarList"},
    ArgKind.INT_ARRAY: {"type": "array", "items": INT64, "description": "an aclIntArray"},
    ArgKind.BOOL_ARRAY: {"type": "array", "items": {"type": "boolean"}, "description": "an aclBoolArray"},
    ArgKind.FLOAT_ARRAY: {"type": "array", "items": _FLOAT, "description": "an aclFloatArray"},
    ArgKind.INT: INT64,
    ArgKind.INT32: _ints(-(2**31), 2**31 - 1),
    ArgKind.INT8: _ints(-128, 127),
    ArgKind.UINT64: _ints(0, 2**64 - 1),
    ArgKind.UINT32: _ints(0, 2**32 - 1),
    ArgKind.DOUBLE: _FLOAT,
    ArgKind.FLOAT: _FLOAT,
    ArgKind.BOOL: {"type": "boolean"},
    ArgKind.STRING: {"type": "string"},
    ArgKind.DTYPE: enum_of(aclDataType, dtypes.INFO),
}


def _arg_schema(arg: Arg) -> dict[str, Any]:
    schema = _TENSOR if arg.kind in TENSOR_KINDS else _KINDS[arg.kind]
    said = f"{arg.name}: {arg.kind} ({arg.ctype})"
    if arg.optional:
        return {"anyOf": [schema, {"type": "null"}], "description": f"{said}, or null (optional)"}
    return schema | {"description": said}


def args_schema(decl: OpDecl) -> dict[str, Any]:
    """The arguments of aclnn<op>GetWorkspaceSize by C name (the body of the REST phase 1)."""
    fields = {arg.name: _arg_schema(arg) for arg in decl.args}
    return _object(f"{decl.name}Args", fields, f"the arguments of {decl.ws_name}, by their C names")


def kernel_schema(decl: OpDecl) -> dict[str, Any]:
    """One operator's kernel description: what its phase 1 returns as `executor` and its phase 2 takes."""
    fields = {"op": {"const": decl.name}, "args": args_schema(decl), "workspace_size": SIZE}
    return _object(f"{decl.c_name} kernel", fields, f"an executor of {decl.c_name} (KernelDesc wire form)")


ANY_ARG: Final = {
    "description": "one argument in the wire form of its kind: a tensor, a scalar, a list (of tensors, scalars, "
    "ints, bools or numbers), an int, a number, a bool, a string, a dtype's C name, or null",
    "anyOf": [
        _TENSOR,
        _SCALAR,
        {"type": "array", "items": {"anyOf": [_TENSOR, _SCALAR, INT64, _FLOAT, {"type": "boolean"}, {"type": "null"}]}},
        INT64 | {"maximum": 2**64 - 1},
        _FLOAT,
        {"type": "boolean"},
        {"type": "string"},
        {"type": "null"},
    ],
}
ARGS_SCHEMA: Final = {
    "title": "AclnnArgs",
    "description": "an operator's arguments by C name (`GET /v1/aclnn/aclnnXxx` gives its exact schema)",
    "type": "object",
    "additionalProperties": ANY_ARG,
}


def kernel_desc_schema() -> dict[str, Any]:
    """Any operator's kernel description (the operator named by `op`; `GET /v1/aclnn/aclnn<op>` gives the exact
    schema of its `args`)."""
    fields = {"op": {"type": "string", "pattern": "^[A-Za-z0-9_]+$"}, "args": ARGS_SCHEMA, "workspace_size": SIZE}
    return _object("KernelDesc", fields, "an aclnn executor: the kernel description of one operator's launch")


# -- examples: valid arguments for each operator (its phase 1 passes on them) ----------------------------------
_SHAPES: Final[dict[tuple[str, str], list[int]]] = {
    ("Matmul", "mat2"): [3, 2],
    ("Matmul", "out"): [2, 2],
    ("ReduceSum", "out"): [2],
    ("Mean", "out"): [2],
}
_ATTRS: Final[dict[ArgKind, Any]] = {
    ArgKind.SCALAR: {"value": 1.0, "data_type": "ACL_FLOAT"},
    ArgKind.SCALAR_LIST: [{"value": 1.0, "data_type": "ACL_FLOAT"}],
    ArgKind.INT_ARRAY: [1],
    ArgKind.BOOL_ARRAY: [False],
    ArgKind.FLOAT_ARRAY: [1.0],
    ArgKind.INT: 0,
    ArgKind.INT32: 0,
    ArgKind.INT8: 0,
    ArgKind.UINT64: 0,
    ArgKind.UINT32: 0,
    ArgKind.DOUBLE: 1e-5,
    ArgKind.FLOAT: 1.0,
    ArgKind.BOOL: False,
    ArgKind.STRING: "",
    ArgKind.DTYPE: "ACL_FLOAT",
}


def _tensor_example(shape: list[int], data: int) -> dict[str, Any]:
    strides = [1] * len(shape)
    for axis in range(len(shape) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * shape[axis + 1]
    fields = (shape, "ACL_FLOAT", strides, 0, "ACL_FORMAT_ND", shape, data)
    return dict(zip(TENSOR_FIELDS, fields, strict=True))


def example_args(decl: OpDecl) -> dict[str, Any]:
    """Float32 tensors (2x3 unless the operator needs other shapes) 4 KiB apart from device 0's first address; a
    list holds one such tensor; optional arguments are null. (Valid for vnpu's first operators; a generic guess for
    the others.)"""
    found: dict[str, Any] = {}
    for n, arg in enumerate(decl.args):
        tensor = _tensor_example(_SHAPES.get((decl.name, arg.name), [2, 3]), DEVICE_BASE + n * 0x1000)
        if arg.optional:
            found[arg.name] = None
        elif arg.kind in TENSOR_KINDS:
            found[arg.name] = tensor
        elif arg.kind in LIST_KINDS:
            found[arg.name] = [tensor]
        else:
            found[arg.name] = _ATTRS[arg.kind]
    return found
