"""What every family's rule is made of: reading normalized arguments, the common checks, and `Checked`, a rule made
of a check function.

Every rule reads normalized arguments (see `OpDecl.normalize`) and raises `OpArgError` with a message that
starts with the argument at fault and says what it must be. An output must have exactly the inferred shape (CANN
does not resize) and a dtype the result can be cast to (conversion_relationship.md) unless the operator names the
dtype itself.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import ALL, DT, can_cast
from proto.aclnn.host import aclIntArray, aclScalar, aclTensor
from proto.aclnn.hostlist import aclBoolArray, aclFloatArray, aclScalarList, aclTensorList
from proto.constants import aclDataType

T = TypeVar("T")
WORKSPACE_ALIGN: Final = 512
MATMUL_DTYPES: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16})
MATMUL_MAX_DIMS: Final = 6
CUBE_MATH_TYPES: Final = {
    0: "KEEP_DTYPE",
    1: "ALLOW_FP32_DOWN_PRECISION",
    2: "USE_FP16",
    3: "USE_HF32",
    4: "USE_FP32_ADD",
}
"""aclnnMatmul's cubeMathType values on Atlas A2/A3 (ops-nn `matmul/mat_mul_v3/docs/aclnnMatmul.md`)."""
USE_FP16: Final = 2
USE_HF32: Final = 3


def _get(args: Args, name: str, cls: type[T]) -> T:
    value = args[name]
    if not isinstance(value, cls):
        raise TypeError(f"argument {name} is {type(value).__name__}, not {cls.__name__}")
    return value


def tensor(args: Args, name: str) -> aclTensor:
    return _get(args, name, aclTensor)


def scalar(args: Args, name: str) -> aclScalar:
    return _get(args, name, aclScalar)


def int_attr(args: Args, name: str) -> int:
    return _get(args, name, int)


def opt_tensor(args: Args, name: str) -> aclTensor | None:
    """An optional tensor argument (None when absent)."""
    value = args[name]
    return value if isinstance(value, aclTensor) else None


def tensors(args: Args, name: str) -> tuple[aclTensor, ...]:
    """A tensor list argument's tensors (normalization refused NULL entries); () when the list is absent."""
    value = args[name]
    if value is None:
        return ()
    return tuple(t for t in _get(args, name, aclTensorList).tensors if t is not None)


def ints(args: Args, name: str) -> tuple[int, ...] | None:
    """An int array argument's values (None when absent)."""
    value = args[name]
    return None if value is None else _get(args, name, aclIntArray).values


def floats(args: Args, name: str) -> tuple[float, ...] | None:
    value = args[name]
    return None if value is None else _get(args, name, aclFloatArray).values


def bools(args: Args, name: str) -> tuple[bool, ...] | None:
    value = args[name]
    return None if value is None else _get(args, name, aclBoolArray).values


def scalars(args: Args, name: str) -> tuple[aclScalar, ...]:
    value = args[name]
    return () if value is None else _get(args, name, aclScalarList).scalars


def number(args: Args, name: str) -> float:
    """A double or float attribute."""
    value = args[name]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"argument {name} is {type(value).__name__}, not a number")
    return float(value)


def text(args: Args, name: str) -> str | None:
    """A string attribute (None for a NULL optional one)."""
    value = args[name]
    return value if isinstance(value, str) else None


def flag(args: Args, name: str) -> bool:
    return _get(args, name, bool)


def dtype_attr(args: Args, name: str) -> aclDataType:
    return _get(args, name, aclDataType)


def round_up(nbytes: int, align: int = WORKSPACE_ALIGN) -> int:
    return -(-nbytes // align) * align


def shape_str(shape: Sequence[int]) -> str:
    return f"[{', '.join(map(str, shape))}]"


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """The broadcast of two shapes (numpy/torch rules), or None when they do not broadcast."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(pa, pb, strict=True):
        if x != y and 1 not in (x, y):
            return None
        out.append(y if x == 1 else x)
    return tuple(out)


def wrap_dim(name: str, dim: int, ndim: int) -> int:
    """A dim in [-ndim, ndim) made non-negative (a 0-D tensor accepts -1 and 0, as torch)."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise OpArgError(f"{name} {dim} is out of range for a {ndim}-D self (expected {-n} to {n - 1})")
    return dim % n


def reduce_axes(name: str, dims: Sequence[int], ndim: int) -> tuple[int, ...]:
    """The sorted axes a reduction over `dims` covers; no dims means all of them."""
    wrapped = [wrap_dim(name, d, ndim) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise OpArgError(f"{name} {list(dims)} names a dim more than once")
    if ndim == 0:
        return ()
    return tuple(sorted(wrapped)) if dims else tuple(range(ndim))


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keep: bool) -> tuple[int, ...]:
    if keep:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def require_dtype(name: str, dtype: aclDataType, allowed: frozenset[aclDataType]) -> None:
    if dtype not in allowed:
        raise OpArgError(f"{name} has dtype {dtypes.name(dtype)}; supported: {dtypes.names(allowed)}")


def require_attr_dtype(name: str, dtype: aclDataType, allowed: frozenset[aclDataType]) -> None:
    if dtype not in allowed:
        raise OpArgError(f"{name} {dtypes.name(dtype)} is not supported; supported: {dtypes.names(allowed)}")


def check_out(
    args: Args,
    name: str,
    dtype: aclDataType,
    shape: tuple[int, ...],
    allowed: frozenset[aclDataType] = ALL,
    *,
    exact: bool = False,
) -> None:
    """The written tensor `name` must have `shape` and a dtype `dtype` casts to (or equals, if `exact`)."""
    out = tensor(args, name)
    require_dtype(name, out.data_type, allowed)
    have, want = dtypes.name(out.data_type), dtypes.name(dtype)
    if exact and out.data_type != dtype:
        raise OpArgError(f"{name} has dtype {have}, but the result has dtype {want}")
    if not can_cast(dtype, out.data_type):
        raise OpArgError(f"{name} has dtype {have}, which the result dtype {want} cannot be cast to")
    if out.view_dims != shape:
        raise OpArgError(f"{name} has shape {shape_str(out.view_dims)}, but the result has shape {shape_str(shape)}")


def require_rank(name: str, t: aclTensor, low: int, high: int | None = None) -> None:
    """`t` has `low` to `high` dims (exactly `low` when high is None)."""
    rank, top = len(t.view_dims), low if high is None else high
    if not low <= rank <= top:
        want = f"{low}" if low == top else f"{low} to {top}"
        raise OpArgError(f"{name} has {rank} dims ({shape_str(t.view_dims)}); it must have {want}")


def require_same_dtype(name: str, t: aclTensor, like: str, other: aclTensor) -> None:
    if t.data_type != other.data_type:
        raise OpArgError(
            f"{name} has dtype {dtypes.name(t.data_type)}; it must have {like}'s dtype {dtypes.name(other.data_type)}"
        )


def require_shape(name: str, t: aclTensor, shape: Sequence[int], what: str = "") -> None:
    if tuple(t.view_dims) != tuple(shape):
        said = f" ({what})" if what else ""
        raise OpArgError(f"{name} has shape {shape_str(t.view_dims)}; it must be {shape_str(shape)}{said}")


def require_in(name: str, value: object, allowed: Collection[object]) -> None:
    """An attribute among its documented values."""
    if value not in allowed:
        shown = ", ".join(repr(v) if isinstance(v, str) else str(v) for v in allowed)
        raise OpArgError(f"{name} is {value!r}; it must be one of {shown}")


def require_range(name: str, value: float, low: float | None = None, high: float | None = None) -> None:
    """`low <= value <= high` (either bound may be absent)."""
    if (low is not None and not value >= low) or (high is not None and not value <= high):
        bounds = " and ".join(
            part for part in (f">= {low}" if low is not None else "", f"<= {high}" if high is not None else "") if part
        )
        raise OpArgError(f"{name} is {value}; it must be {bounds}")


def require_dtypes(args: Args, allowed: dict[str, frozenset[aclDataType]]) -> None:
    """Each named tensor (or every tensor of a named list; absent optional ones skipped) has an allowed dtype."""
    for name, choices in allowed.items():
        value = args[name]
        if isinstance(value, aclTensor):
            require_dtype(name, value.data_type, choices)
        elif isinstance(value, aclTensorList):
            for i, t in enumerate(value.tensors):
                if t is not None:
                    require_dtype(f"{name}[{i}]", t.data_type, choices)


class NoWorkspace:
    def workspace(self, args: Args) -> int:
        return 0


def first_written_dtype(args: Args) -> aclDataType:
    """The dtype of the last tensor among `args` (outputs come last in most prototypes): a result dtype for rules
    whose kernel does not ask for one."""
    found = [v for v in args.values() if isinstance(v, aclTensor)]
    if not found:
        lists = [t for v in args.values() if isinstance(v, aclTensorList) for t in v.tensors if t is not None]
        return lists[-1].data_type if lists else DT.ACL_FLOAT
    return found[-1].data_type


@dataclass(frozen=True, eq=False)
class Checked(NoWorkspace):
    """A rule made of one check function over the normalized arguments (and optionally a workspace function): the
    shape of one-off operators' rules. `doc` names the documentation the checks come from."""

    checks: Callable[[Args], None]
    sizes: Callable[[Args], int] | None = None
    doc: str = ""

    def result_dtype(self, args: Args) -> aclDataType:
        return first_written_dtype(args)

    def check(self, args: Args) -> None:
        self.checks(args)

    def workspace(self, args: Args) -> int:
        return 0 if self.sizes is None else self.sizes(args)


def broadcast_all(*named: tuple[str, aclTensor]) -> tuple[int, ...]:
    """The broadcast shape of several tensors; OpArgError naming the first that does not broadcast."""
    shape: tuple[int, ...] = ()
    for name, t in named:
        joined = broadcast_shapes(shape, t.view_dims)
        if joined is None:
            have, want = shape_str(t.view_dims), shape_str(shape)
            raise OpArgError(f"{name} has shape {have}, which does not broadcast with {want}")
        shape = joined
    return shape


def promote_all(*named: tuple[str, aclTensor]) -> aclDataType:
    """The dtype several tensors promote to; OpArgError naming the first that does not promote."""
    dtype = named[0][1].data_type
    for name, t in named[1:]:
        joined = dtypes.promote_types(dtype, t.data_type)
        if joined is None:
            have, want = dtypes.name(t.data_type), dtypes.name(dtype)
            raise OpArgError(f"{name} has dtype {have}, which cannot be promoted with {want}")
        dtype = joined
    return dtype


def with_axis(shape: Sequence[int], d: int, size: int | None, *, insert: bool = False) -> tuple[int, ...]:
    """`shape` with axis d set to `size` (None: removed; `insert`: a new axis before d)."""
    head, tail = tuple(shape[:d]), tuple(shape[d:] if insert else shape[d + 1 :])
    return (*head, *(() if size is None else (size,)), *tail)
