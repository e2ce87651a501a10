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
from proto.aclnn.decl import TENSOR_KINDS, Arg, ArgKind, OpDecl
from proto.aclnn.host import MAX_DIMS
from proto.aclnn.kernel import NONFINITE, TENSOR_FIELDS
from proto.aclnn.registry import OPS
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

_KINDS: Final[dict[ArgKind, dict[str, Any]]] = {
    ArgKind.SCALAR: {"$ref": f"{REF}aclScalar"},
    ArgKind.INT_ARRAY: {"type": "array", "items": INT64, "description": "an aclIntArray"},
    ArgKind.INT: INT64,
    ArgKind.BOOL: {"type": "boolean"},
    ArgKind.DTYPE: enum_of(aclDataType, dtypes.INFO),
}


def _arg_schema(arg: Arg) -> dict[str, Any]:
    schema = {"$ref": f"{REF}aclTensor"} if arg.kind in TENSOR_KINDS else _KINDS[arg.kind]
    if arg.optional:
        return {"anyOf": [schema, {"type": "null"}], "description": f"{arg.name}: {arg.kind}, or null (optional)"}
    return schema | {"description": f"{arg.name}: {arg.kind}"}


def args_schema(decl: OpDecl) -> dict[str, Any]:
    """The arguments of aclnn<op>GetWorkspaceSize by C name (the body of the REST phase 1)."""
    fields = {arg.name: _arg_schema(arg) for arg in decl.args}
    return _object(f"{decl.name}Args", fields, f"the arguments of {decl.ws_name}, by their C names")


def kernel_schema(decl: OpDecl) -> dict[str, Any]:
    """One operator's kernel description: what its phase 1 returns as `executor` and its phase 2 takes."""
    fields = {"op": {"const": decl.name}, "args": args_schema(decl), "workspace_size": SIZE}
    return _object(f"{decl.c_name} kernel", fields, f"an executor of {decl.c_name} (KernelDesc wire form)")


def kernel_desc_schema() -> dict[str, Any]:
    """Any operator's kernel description: vnpu's own and those declared by the time it is asked."""
    return {
        "title": "KernelDesc",
        "description": "an aclnn executor: the kernel description of one operator's launch (its phase 1 gives it)",
        "oneOf": [kernel_schema(decl) for decl in OPS.values()],
    }


# -- examples: valid arguments for each operator (its phase 1 passes on them) ----------------------------------
_SHAPES: Final[dict[tuple[str, str], list[int]]] = {
    ("Matmul", "mat2"): [3, 2],
    ("Matmul", "out"): [2, 2],
    ("ReduceSum", "out"): [2],
    ("Mean", "out"): [2],
}
_ATTRS: Final[dict[ArgKind, Any]] = {
    ArgKind.SCALAR: {"value": 1.0, "data_type": "ACL_FLOAT"},
    ArgKind.INT_ARRAY: [1],
    ArgKind.INT: 0,
    ArgKind.BOOL: False,
    ArgKind.DTYPE: "ACL_FLOAT",
}


def _tensor_example(shape: list[int], data: int) -> dict[str, Any]:
    strides = [1] * len(shape)
    for axis in range(len(shape) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * shape[axis + 1]
    fields = (shape, "ACL_FLOAT", strides, 0, "ACL_FORMAT_ND", shape, data)
    return dict(zip(TENSOR_FIELDS, fields, strict=True))


def example_args(decl: OpDecl) -> dict[str, Any]:
    """Float32 tensors (2x3 unless the operator needs other shapes) 4 KiB apart from device 0's first address."""
    return {
        arg.name: _tensor_example(_SHAPES.get((decl.name, arg.name), [2, 3]), DEVICE_BASE + n * 0x1000)
        if arg.kind in TENSOR_KINDS
        else _ATTRS[arg.kind]
        for n, arg in enumerate(decl.args)
    }
