"""KernelDesc: the frozen, self-contained description of one aclnn kernel launch, and its JSON wire form.

Wire form (what a curl user writes; every argument by its C name, dtypes and formats by their C names)::

    {"op": "Add", "workspace_size": 0,
     "args": {"self":  {"view_dims": [2, 3], "data_type": "ACL_FLOAT", "strides": [3, 1], "offset": 0,
                        "format": "ACL_FORMAT_ND", "storage_dims": [2, 3], "data": 4096},
              "other": {...same fields...},
              "alpha": {"value": 1.0, "data_type": "ACL_FLOAT"},
              "out":   {...same fields...}}}

By kind (`proto.aclnn.decl.ArgKind`):

- tensor: the object above (`aclCreateTensor`'s arguments); tensor list: a JSON list of those objects;
- scalar: `{"value", "data_type"}`; scalar list: a JSON list of those;
- int array: a list of ints; bool array: a list of bools; float array: a list of numbers;
- int64/int32/int8/uint64/uint32 attributes: an int; bool: a bool; double/float: a number; string (`char *`): a
  JSON string; dtype: its C name ("ACL_FLOAT"; the int value is accepted too);
- an absent optional argument (C's NULL): null.

Non-finite floats (scalar values, float arrays, double and float attributes) travel as the strings "inf", "-inf"
and "nan". Every argument is present, in any order; the decoder checks each against its kind.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, Final

from proto.aclnn.decl import LIST_KINDS, TENSOR_KINDS, ArgKind, ArgValue, KernelKind, OpArgError, OpDecl
from proto.aclnn.host import aclIntArray, aclScalar, aclTensor, is_int64
from proto.aclnn.hostlist import aclBoolArray, aclFloatArray, aclScalarList, aclTensorList
from proto.aclnn.registry import OPS
from proto.aclnn.rules.base import tensor
from proto.constants import aclDataType
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError

TENSOR_FIELDS: Final = ("view_dims", "data_type", "strides", "offset", "format", "storage_dims", "data")
SCALAR_FIELDS: Final = ("value", "data_type")
KERNEL_FIELDS: Final = ("op", "args", "workspace_size")
NONFINITE: Final = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
JSON = None | bool | int | float | str | list["JSON"] | dict[str, "JSON"]


@dataclass(frozen=True)
class KernelDesc:
    """One kernel launch: the operator ("Add"), its arguments by C name in C order, its workspace size.

    Construction checks the structure (a known operator, exactly its arguments, each of the right kind); the
    operator's dtype and shape rules run in phase 1 and again in `revalidate`.
    """

    op: str
    args: Mapping[str, ArgValue]
    workspace_size: int = 0

    def __post_init__(self) -> None:
        decl = OPS.get(self.op) if isinstance(self.op, str) else None
        if decl is None:
            raise AclError(ACLNN_ERR_PARAM_INVALID, f"unknown operator {repr(self.op)[:80]}: {OPS.unknown_hint()}")
        if not isinstance(self.args, Mapping):
            raise AclError(ACLNN_ERR_PARAM_INVALID, f"{decl.c_name}: args must be a mapping", api=decl.c_name)
        try:
            args = decl.normalize(self.args)
        except OpArgError as error:
            raise error.to_acl(decl, decl.c_name) from None
        size = self.workspace_size
        if not is_int64(size) or size < 0:
            raise AclError(
                ACLNN_ERR_PARAM_INVALID,
                f"{decl.c_name}: workspace_size must be an int >= 0, got {size!r}",
                decl.c_name,
            )
        object.__setattr__(self, "args", MappingProxyType(args))

    @classmethod
    def checked(cls, op: str, args: Mapping[str, ArgValue], workspace_size: int) -> KernelDesc:
        """The description of arguments phase 1 has just normalized and checked (`OpDecl.normalize`, `.check`,
        which sized `workspace_size`): neither runs again."""
        desc = object.__new__(cls)
        object.__setattr__(desc, "op", op)
        object.__setattr__(desc, "args", MappingProxyType(dict(args)))
        object.__setattr__(desc, "workspace_size", workspace_size)
        desc.__dict__["needed_workspace"] = workspace_size
        return desc

    def __hash__(self) -> int:
        return hash((self.op, tuple(self.args.items()), self.workspace_size))

    @cached_property
    def needed_workspace(self) -> int:
        """The workspace size the operator's checks compute for these arguments; AclError (161001/161002, naming
        the argument and the phase-2 call) where they fail. A description is immutable, so they run once."""
        decl = self.decl
        try:
            return decl.check(decl.normalize(self.args))
        except OpArgError as error:
            raise error.to_acl(decl, decl.c_name) from None

    @property
    def decl(self) -> OpDecl:
        return OPS[self.op]

    @property
    def kernel_kind(self) -> KernelKind:
        """The unit the kernel runs on: "vector" (AIV) or "cube" (AIC)."""
        return self.decl.kernel_kind

    @cached_property
    def tensors(self) -> dict[str, aclTensor | None]:
        """Every tensor argument by name (None for an absent optional one), a tensor list's members as `name[i]`."""
        found: dict[str, aclTensor | None] = {}
        for arg in self.decl.args:
            value = self.args[arg.name]
            if arg.kind in TENSOR_KINDS:
                found[arg.name] = value if isinstance(value, aclTensor) else None
            elif isinstance(value, aclTensorList):
                found.update((f"{arg.name}[{i}]", t) for i, t in enumerate(value.tensors))
        return found

    @property
    def outputs(self) -> tuple[str, ...]:
        """The names of the tensors the kernel writes."""
        return self.decl.outputs

    def tensor(self, name: str) -> aclTensor:
        return tensor(self.args, name)

    def nbytes(self) -> int:
        """The bytes the launch touches: every tensor's byte extent plus the workspace."""
        return self.workspace_size + sum(t.byte_range()[1] for t in self.tensors.values() if t is not None)

    def to_wire(self) -> dict[str, JSON]:
        """The JSON form (only str/int/float/bool/list/dict/None)."""
        return {
            "op": self.op,
            "args": {name: wire_of(value) for name, value in self.args.items()},
            "workspace_size": self.workspace_size,
        }

    @classmethod
    def from_wire(cls, data: object) -> KernelDesc:
        """Parse and check a wire form; AclError(161002) naming the field on anything malformed."""
        try:
            return _decode(data)
        except _WireError as error:
            raise AclError(
                ACLNN_ERR_PARAM_INVALID, f"malformed kernel description: {error.path}: {error}", api=error.api
            ) from None


def _encode_number(value: bool | int | float) -> JSON:
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _tensor_wire(value: aclTensor) -> JSON:
    fields: dict[str, JSON] = {
        "view_dims": list(value.view_dims),
        "data_type": value.data_type.name,
        "strides": list(value.strides),
        "offset": value.offset,
        "format": value.format.name,
        "storage_dims": list(value.storage_dims),
        "data": value.data,
    }
    return fields


def _scalar_wire(value: aclScalar) -> JSON:
    return {"value": _encode_number(value.value), "data_type": value.data_type.name}


def wire_of(value: ArgValue) -> JSON:
    """One argument's wire form (host objects as JSON; attributes as they are, non-finite floats named)."""
    if isinstance(value, aclTensor):
        return _tensor_wire(value)
    if isinstance(value, aclScalar):
        return _scalar_wire(value)
    if isinstance(value, aclIntArray | aclBoolArray):
        return list(value.values)
    if isinstance(value, aclFloatArray):
        return [_encode_number(v) for v in value.values]
    if isinstance(value, aclTensorList):
        return [None if t is None else _tensor_wire(t) for t in value.tensors]
    if isinstance(value, aclScalarList):
        return [_scalar_wire(s) for s in value.scalars]
    if isinstance(value, aclDataType):
        return value.name
    if isinstance(value, float):
        return _encode_number(value)
    return value


class _WireError(Exception):
    def __init__(self, path: str, message: str, api: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.api = api


def _fields(value: object, path: str, names: tuple[str, ...], api: str = "") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _WireError(path, f"must be an object with fields {', '.join(names)}; got {type(value).__name__}", api)
    unknown = [k for k in value if k not in names]
    missing = [k for k in names if k not in value]
    if unknown or missing:
        what = f"unknown field {unknown[0]!r}" if unknown else f"missing field {missing[0]!r}"
        raise _WireError(path, f"{what}; expected exactly {', '.join(names)}", api)
    return value


def _decode(data: object) -> KernelDesc:
    fields = _fields(data, "kernel", KERNEL_FIELDS)
    op = fields["op"]
    decl = OPS.get(op) if isinstance(op, str) else None
    if decl is None:
        raise _WireError("op", f"unknown operator {repr(op)[:80]}: {OPS.unknown_hint()}")
    args = _fields(fields["args"], "args", decl.arg_names, decl.c_name)
    values = {arg.name: _decode_arg(arg.kind, args[arg.name], f"args.{arg.name}", decl.c_name) for arg in decl.args}
    return KernelDesc(op, values, fields["workspace_size"])


def _decode_number(value: object) -> Any:
    """A non-finite float's string form ("inf", "-inf", "nan") back to the float; anything else unchanged."""
    if isinstance(value, str) and value in NONFINITE:
        return NONFINITE[value]
    return value


def _items(value: object, path: str, api: str) -> list[Any]:
    if not isinstance(value, list):
        raise _WireError(path, f"must be a list; got {type(value).__name__}", api)
    return value


def _decode_tensor(value: object, path: str, api: str) -> aclTensor:
    return aclTensor(**_fields(value, path, TENSOR_FIELDS, api))


def _decode_scalar(value: object, path: str, api: str) -> aclScalar:
    scalar = _fields(value, path, SCALAR_FIELDS, api)
    return aclScalar(_decode_number(scalar["value"]), scalar["data_type"])


_ATTRIBUTES: Final = frozenset(
    {ArgKind.INT, ArgKind.INT32, ArgKind.INT8, ArgKind.UINT64, ArgKind.UINT32, ArgKind.BOOL, ArgKind.STRING}
)


def _decode_arg(kind: ArgKind, value: object, path: str, api: str) -> Any:
    """The host object of a tensor, list, scalar or array; attributes pass through (KernelDesc checks them)."""
    if value is None or kind in _ATTRIBUTES or kind is ArgKind.DTYPE:
        return value
    try:
        if kind in (ArgKind.DOUBLE, ArgKind.FLOAT):
            return _decode_number(value)
        if kind is ArgKind.SCALAR:
            return _decode_scalar(value, path, api)
        if kind is ArgKind.INT_ARRAY:
            return aclIntArray(value)  # type: ignore[arg-type]
        if kind is ArgKind.BOOL_ARRAY:
            return aclBoolArray(_items(value, path, api))  # type: ignore[arg-type]
        if kind is ArgKind.FLOAT_ARRAY:
            return aclFloatArray([_decode_number(v) for v in _items(value, path, api)])  # type: ignore[arg-type]
        if kind is ArgKind.SCALAR_LIST:
            items = _items(value, path, api)
            return aclScalarList(tuple(_decode_scalar(v, f"{path}[{i}]", api) for i, v in enumerate(items)))
        if kind in LIST_KINDS:
            items = _items(value, path, api)
            members = (None if v is None else _decode_tensor(v, f"{path}[{i}]", api) for i, v in enumerate(items))
            return aclTensorList(tuple(members))
        return _decode_tensor(value, path, api)
    except AclError as error:
        raise _WireError(path, error.message, api) from None
