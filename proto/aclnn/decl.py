"""How an aclnn operator is declared: its C arguments (names, kinds, order) and the rule phase 1 checks.

An `OpDecl` is data: the arguments in C order and a `Rule` (dtype promotion, shape inference, the output
checks, the workspace size). Phase 1 on the client and revalidation on the device run the same declaration.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Final, Literal, Protocol, TypeVar

from proto.aclnn import dtypes
from proto.aclnn.host import INT64_MAX, INT64_MIN, aclIntArray, aclScalar, aclTensor
from proto.aclnn.hostlist import aclBoolArray, aclFloatArray, aclScalarList, aclTensorList
from proto.constants import aclDataType, aclFormat
from proto.errors import ACLNN_ERR_INNER_FIND_KERNEL, ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclError

HostObject = aclTensor | aclScalar | aclIntArray | aclTensorList | aclScalarList | aclBoolArray | aclFloatArray
ArgValue = HostObject | aclDataType | bool | int | float | str | None
Args = Mapping[str, ArgValue]
KernelKind = Literal["vector", "cube"]
Tier = Literal["declared", "ruled", "implemented"]
T = TypeVar("T")

PLAIN_FORMATS: Final = frozenset(
    {
        aclFormat.ACL_FORMAT_ND,
        aclFormat.ACL_FORMAT_NCHW,
        aclFormat.ACL_FORMAT_NHWC,
        aclFormat.ACL_FORMAT_NC,
        aclFormat.ACL_FORMAT_NCL,
        aclFormat.ACL_FORMAT_NCDHW,
        aclFormat.ACL_FORMAT_NDHWC,
        aclFormat.ACL_FORMAT_HWCN,
    }
)
"""Formats whose storage is the logical layout; vnpu kernels read no private (fractal) format."""


class ArgKind(StrEnum):
    """The kind of a C argument: what a phase-1 call takes for it (the catalog's `kind`, with the direction of tensors
    and tensor lists folded in)."""

    TENSOR = "tensor"
    OUT = "out tensor"
    INPLACE = "inplace tensor"
    TENSOR_LIST = "tensor list"
    OUT_LIST = "out tensor list"
    INPLACE_LIST = "inplace tensor list"
    SCALAR = "scalar"
    SCALAR_LIST = "scalar list"
    INT_ARRAY = "int array"
    BOOL_ARRAY = "bool array"
    FLOAT_ARRAY = "float array"
    INT = "int attr"  # int64_t
    INT32 = "int32 attr"  # int32_t, int
    INT8 = "int8 attr"
    UINT64 = "uint64 attr"
    UINT32 = "uint32 attr"
    DOUBLE = "double attr"
    FLOAT = "float attr"
    BOOL = "bool attr"
    STRING = "string attr"  # char *
    DTYPE = "dtype attr"


A = ArgKind
TENSOR_KINDS: Final = frozenset({A.TENSOR, A.OUT, A.INPLACE})
LIST_KINDS: Final = frozenset({A.TENSOR_LIST, A.OUT_LIST, A.INPLACE_LIST})
WRITTEN_KINDS: Final = frozenset({A.OUT, A.INPLACE, A.OUT_LIST, A.INPLACE_LIST})
HOST_CLASSES: Final[dict[ArgKind, type]] = {
    **dict.fromkeys(TENSOR_KINDS, aclTensor),
    **dict.fromkeys(LIST_KINDS, aclTensorList),
    A.SCALAR: aclScalar,
    A.SCALAR_LIST: aclScalarList,
    A.INT_ARRAY: aclIntArray,
    A.BOOL_ARRAY: aclBoolArray,
    A.FLOAT_ARRAY: aclFloatArray,
}
"""The host object each kind of argument takes (the other kinds take plain values)."""
INT_RANGES: Final[dict[ArgKind, tuple[int, int, str]]] = {
    A.INT: (INT64_MIN, INT64_MAX, "an int64"),
    A.INT32: (-(1 << 31), (1 << 31) - 1, "an int32"),
    A.INT8: (-128, 127, "an int8"),
    A.UINT64: (0, (1 << 64) - 1, "a uint64"),
    A.UINT32: (0, (1 << 32) - 1, "a uint32"),
}
C_TYPES: Final[dict[ArgKind, str]] = {
    A.TENSOR: "const aclTensor *",
    A.OUT: "aclTensor *",
    A.INPLACE: "aclTensor *",
    A.TENSOR_LIST: "const aclTensorList *",
    A.OUT_LIST: "aclTensorList *",
    A.INPLACE_LIST: "aclTensorList *",
    A.SCALAR: "const aclScalar *",
    A.SCALAR_LIST: "const aclScalarList *",
    A.INT_ARRAY: "const aclIntArray *",
    A.BOOL_ARRAY: "const aclBoolArray *",
    A.FLOAT_ARRAY: "const aclFloatArray *",
    A.INT: "int64_t",
    A.INT32: "int32_t",
    A.INT8: "int8_t",
    A.UINT64: "uint64_t",
    A.UINT32: "uint32_t",
    A.DOUBLE: "double",
    A.FLOAT: "float",
    A.BOOL: "bool",
    A.STRING: "const char *",
    A.DTYPE: "aclDataType",
}
"""The usual C parameter type of each kind (`Arg.c_type` overrides it where a header spells it otherwise)."""


class OpArgError(Exception):
    """A phase-1 check failed: an aclnn status and a message that starts with the argument's name (unless `bare`:
    a message about the operator as a whole, which names it itself)."""

    def __init__(self, message: str, code: int = ACLNN_ERR_PARAM_INVALID, *, bare: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.bare = bare

    def to_acl(self, decl: OpDecl, api: str) -> AclError:
        return AclError(self.code, self.message if self.bare else f"{decl.c_name}: {self.message}", api=api)


@dataclass(frozen=True)
class Arg:
    """One C argument of an operator."""

    name: str
    kind: ArgKind
    optional: bool = False
    c_type: str = ""  # the C parameter type as the header spells it ("" for the kind's usual one, `C_TYPES`)

    @property
    def ctype(self) -> str:
        return self.c_type or C_TYPES[self.kind]

    def normalize(self, value: object) -> ArgValue:
        """The value checked against this argument's kind (a None required argument is 161001)."""
        if value is None:
            if self.optional:
                return None
            raise OpArgError(f"{self.name} is a null pointer", ACLNN_ERR_PARAM_NULLPTR)
        kind = self.kind
        if kind in TENSOR_KINDS:
            return self._tensor(self.name, self._instance(value, aclTensor))
        if kind in LIST_KINDS:
            tensors = self._instance(value, aclTensorList)
            for i, member in enumerate(tensors.tensors):
                if member is None:
                    raise OpArgError(f"{self.name}[{i}] is a null pointer", ACLNN_ERR_PARAM_NULLPTR)
                if member.destroyed:
                    raise OpArgError(f"{self.name}[{i}] is an aclTensor that was destroyed")
                self._tensor(f"{self.name}[{i}]", member)
            return tensors
        cls = HOST_CLASSES.get(kind)
        if cls is not None:
            return self._instance(value, cls)
        return self._attribute(value)

    def _attribute(self, value: object) -> ArgValue:
        kind = self.kind
        if kind is A.BOOL:
            return self._instance(value, bool)
        if kind is A.STRING:
            text = self._instance(value, str)
            if "\0" in text:
                raise OpArgError(f"{self.name} holds a NUL character; a C string ends at the first one")
            return text
        if kind is A.DTYPE:
            try:
                return dtypes.parse_dtype(value)
            except ValueError as error:
                raise OpArgError(f"{self.name}: {error}") from None
        if kind in (A.DOUBLE, A.FLOAT):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise OpArgError(f"{self.name} must be a number (a C {self.ctype}), got {value!r}")
            try:
                number = float(value)
            except OverflowError:
                raise OpArgError(f"{self.name} {value} does not fit a C {self.ctype}") from None
            return dtypes.round_float(number, aclDataType.ACL_FLOAT) if kind is A.FLOAT else number
        low, high, what = INT_RANGES[kind]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise OpArgError(f"{self.name} must be {what}, got {value!r}")
        return value

    def _instance(self, value: object, cls: type[T]) -> T:
        if not isinstance(value, cls):
            article = "an" if self.kind[0] in "aeiou" else "a"
            raise OpArgError(f"{self.name} must be {article} {self.kind} ({cls.__name__}), got {type(value).__name__}")
        if getattr(value, "destroyed", False):
            raise OpArgError(f"{self.name} is an {cls.__name__} that was destroyed by aclDestroy{cls.__name__[3:]}")
        return value

    def _tensor(self, name: str, tensor: aclTensor) -> aclTensor:
        if tensor.format not in PLAIN_FORMATS:
            raise OpArgError(
                f"{name} has format {tensor.format.name}; vnpu kernels read only plain formats "
                f"({', '.join(sorted(f.name for f in PLAIN_FORMATS))})"
            )
        if tensor.data_type in dtypes.PACKED and (tensor.offset % 2 or not tensor.is_contiguous()):
            raise OpArgError(
                f"{name} is an {dtypes.name(tensor.data_type)} view with offset {tensor.offset} and strides "
                f"{list(tensor.strides)}; vnpu reads packed int4 tensors only contiguous from an even offset"
            )
        if self.kind in WRITTEN_KINDS:
            for axis, (dim, stride) in enumerate(zip(tensor.view_dims, tensor.strides, strict=True)):
                if stride == 0 and dim > 1:
                    raise OpArgError(
                        f"{name} has stride 0 on dim {axis} of size {dim}: more than one element of the "
                        "written tensor refers to the same memory"
                    )
        return tensor


class Rule(Protocol):
    """The checks of one operator family over normalized arguments."""

    def result_dtype(self, args: Args) -> aclDataType:
        """The dtype the kernel computes in before the cast into the output."""
        ...

    def check(self, args: Args) -> None:
        """Raise OpArgError naming the argument when the arguments are invalid."""
        ...

    def workspace(self, args: Args) -> int:
        """The workspace bytes the kernel needs (0 for most)."""
        ...


@dataclass(frozen=True)
class OpDecl:
    """One aclnn operator: `aclnn<name>GetWorkspaceSize(<args>)` and `aclnn<name>`, and its kernel's unit.

    `tier`: "implemented" (a rule and a kernel: phase 1 passes on valid arguments), "ruled" (a rule but no kernel yet:
    phase 1 checks the arguments, then fails with ACLNN_ERR_INNER_FIND_KERNEL) or "declared" (only the C arguments:
    their kinds are checked, then the same failure). A declaration from CANN's catalog keeps its C types (`c_type`).
    """

    name: str
    args: tuple[Arg, ...]
    rule: Rule
    kernel_kind: KernelKind = "vector"
    tier: Tier = "implemented"

    @cached_property
    def c_name(self) -> str:
        return f"aclnn{self.name}"

    @cached_property
    def ws_name(self) -> str:
        return f"aclnn{self.name}GetWorkspaceSize"

    @cached_property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(arg.name for arg in self.args)

    @cached_property
    def outputs(self) -> tuple[str, ...]:
        """The tensors and tensor lists the kernel writes."""
        return tuple(arg.name for arg in self.args if arg.kind in WRITTEN_KINDS)

    @property
    def implemented(self) -> bool:
        return self.tier == "implemented"

    def normalize(self, values: Mapping[str, object]) -> dict[str, ArgValue]:
        """The arguments by name in C order, each checked against its kind."""
        unknown = [name for name in values if name not in self.arg_names]
        if unknown:
            raise OpArgError(f"{unknown[0]} is not an argument; {self.c_name} takes {', '.join(self.arg_names)}")
        missing = [name for name in self.arg_names if name not in values]
        if missing:
            raise OpArgError(f"{missing[0]} is missing; {self.c_name} takes {', '.join(self.arg_names)}")
        return {arg.name: arg.normalize(values[arg.name]) for arg in self.args}

    def check(self, args: Args) -> int:
        """Run the rule, then the overlap check, over normalized arguments; the workspace size. An operator vnpu
        has no kernel for fails here, after its arguments were checked: ACLNN_ERR_INNER_FIND_KERNEL (561003)."""
        self.rule.check(args)
        written = [(name, t) for name, t, out in self.tensors(args) if out]
        if written:
            every = [(name, t) for name, t, _ in self.tensors(args)]
            for out_name, out in written:
                for name, value in every:
                    _check_overlap(out_name, out, name, value)
        size = self.rule.workspace(args)
        if self.tier != "implemented":
            raise OpArgError(f"vnpu does not implement {self.c_name} yet", ACLNN_ERR_INNER_FIND_KERNEL, bare=True)
        return size

    def tensors(self, args: Args) -> Iterator[tuple[str, aclTensor, bool]]:
        """(name, tensor, written) of every tensor among `args`, a list's members named `name[i]`."""
        for arg in self.args:
            value = args[arg.name]
            written = arg.kind in WRITTEN_KINDS
            if isinstance(value, aclTensor):
                yield arg.name, value, written
            elif isinstance(value, aclTensorList):
                for i, member in enumerate(value.tensors):
                    if member is not None:
                        yield f"{arg.name}[{i}]", member, written


def _check_overlap(written: str, out: aclTensor, name: str, value: aclTensor) -> None:
    if name != written and partial_overlap(out, value):
        raise OpArgError(
            f"{written} and {name} partially overlap in memory: some input elements are also written "
            "(torch refuses this too; copy the input first)"
        )


def partial_overlap(a: aclTensor, b: aclTensor) -> bool:
    """torch's get_overlap_status(a, b) == PARTIAL: two dense views whose byte ranges meet but differ.

    The same view twice (same range, same strides) is a full overlap, which elementwise kernels handle; a
    view that is not dense is too hard to decide and passes, as in torch.
    """
    if a.numel == 0 or b.numel == 0 or not a.is_dense() or not b.is_dense():
        return False
    (a_begin, a_size), (b_begin, b_size) = a.byte_range(), b.byte_range()
    if (a_begin, a_size) == (b_begin, b_size):
        return a.strides != b.strides
    return a_begin < b_begin + b_size and b_begin < a_begin + a_size
