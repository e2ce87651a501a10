"""How an aclnn operator is declared: its C arguments (names, kinds, order) and the rule phase 1 checks.

An `OpDecl` is data: the arguments in C order and a `Rule` (dtype promotion, shape inference, the output
checks, the workspace size). Phase 1 on the client and revalidation on the device run the same declaration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Final, Literal, Protocol, TypeVar

from proto.aclnn import dtypes
from proto.aclnn.host import aclIntArray, aclScalar, aclTensor, is_int64
from proto.constants import aclDataType, aclFormat
from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclError

ArgValue = aclTensor | aclScalar | aclIntArray | aclDataType | bool | int | None
Args = Mapping[str, ArgValue]
KernelKind = Literal["vector", "cube"]
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
    TENSOR = "tensor"
    OUT = "out tensor"
    INPLACE = "inplace tensor"
    SCALAR = "scalar"
    INT_ARRAY = "int array"
    INT = "int attr"
    BOOL = "bool attr"
    DTYPE = "dtype attr"


TENSOR_KINDS: Final = frozenset({ArgKind.TENSOR, ArgKind.OUT, ArgKind.INPLACE})
WRITTEN_KINDS: Final = frozenset({ArgKind.OUT, ArgKind.INPLACE})


class OpArgError(Exception):
    """A phase-1 check failed: an aclnn status and a message that starts with the argument's name."""

    def __init__(self, message: str, code: int = ACLNN_ERR_PARAM_INVALID) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def to_acl(self, decl: OpDecl, api: str) -> AclError:
        return AclError(self.code, f"{decl.c_name}: {self.message}", api=api)


@dataclass(frozen=True)
class Arg:
    """One C argument of an operator."""

    name: str
    kind: ArgKind
    optional: bool = False
    c_type: str = ""  # the C parameter type where the kind's usual one is not it (Matmul's int8_t cubeMathType)

    def normalize(self, value: object) -> ArgValue:
        """The value checked against this argument's kind (a None required argument is 161001)."""
        if value is None:
            if self.optional:
                return None
            raise OpArgError(f"{self.name} is a null pointer", ACLNN_ERR_PARAM_NULLPTR)
        if self.kind in TENSOR_KINDS:
            return self._tensor(value)
        if self.kind is ArgKind.SCALAR:
            return self._instance(value, aclScalar)
        if self.kind is ArgKind.INT_ARRAY:
            return self._instance(value, aclIntArray)
        if self.kind is ArgKind.BOOL:
            return self._instance(value, bool)
        if self.kind is ArgKind.DTYPE:
            try:
                return dtypes.parse_dtype(value)
            except ValueError as error:
                raise OpArgError(f"{self.name}: {error}") from None
        if not is_int64(value):
            raise OpArgError(f"{self.name} must be an int64, got {value!r}")
        return value

    def _instance(self, value: object, cls: type[T]) -> T:
        if not isinstance(value, cls):
            article = "an" if self.kind[0] in "aeiou" else "a"
            raise OpArgError(f"{self.name} must be {article} {self.kind} ({cls.__name__}), got {type(value).__name__}")
        if getattr(value, "destroyed", False):
            raise OpArgError(f"{self.name} is an {cls.__name__} that was destroyed by aclDestroy{cls.__name__[3:]}")
        return value

    def _tensor(self, value: object) -> aclTensor:
        tensor = self._instance(value, aclTensor)
        if tensor.format not in PLAIN_FORMATS:
            raise OpArgError(
                f"{self.name} has format {tensor.format.name}; vnpu kernels read only plain formats "
                f"({', '.join(sorted(f.name for f in PLAIN_FORMATS))})"
            )
        if self.kind in WRITTEN_KINDS:
            for axis, (dim, stride) in enumerate(zip(tensor.view_dims, tensor.strides, strict=True)):
                if stride == 0 and dim > 1:
                    raise OpArgError(
                        f"{self.name} has stride 0 on dim {axis} of size {dim}: more than one element of the "
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
    """One aclnn operator: `aclnn<name>GetWorkspaceSize(<args>)` and `aclnn<name>`, and its kernel's unit."""

    name: str
    args: tuple[Arg, ...]
    rule: Rule
    kernel_kind: KernelKind = "vector"

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
        """The tensors the kernel writes."""
        return tuple(arg.name for arg in self.args if arg.kind in WRITTEN_KINDS)

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
        """Run the rule, then the overlap check, over normalized arguments; the workspace size."""
        self.rule.check(args)
        for written in self.outputs:
            for arg in self.args:
                _check_overlap(args, written, arg.name)
        return self.rule.workspace(args)


def _check_overlap(args: Args, written: str, name: str) -> None:
    out, value = args[written], args[name]
    if name != written and isinstance(out, aclTensor) and isinstance(value, aclTensor) and partial_overlap(out, value):
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
