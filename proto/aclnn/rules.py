"""The rules of the operator families: dtype promotion, shape inference, output checks, workspace size.

Every rule reads normalized arguments (see `OpDecl.normalize`) and raises `OpArgError` with a message that
starts with the argument at fault. The output must have exactly the inferred shape (CANN does not resize) and
a dtype the result can be cast to (conversion_relationship.md) unless the operator names the dtype itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import ALL, DT, FLOATS, can_cast
from proto.aclnn.host import aclIntArray, aclScalar, aclTensor
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


class NoWorkspace:
    def workspace(self, args: Args) -> int:
        return 0


@dataclass(frozen=True)
class Binary(NoWorkspace):
    """self ∘ other (tensor or scalar), optionally with alpha scaling other; `out` may be `selfRef`."""

    first: str = "self"
    out: str = "out"
    no_bool: bool = False
    true_div: bool = False

    def promoted(self, args: Args) -> aclDataType:
        a, other = tensor(args, self.first), args["other"]
        assert isinstance(other, aclTensor | aclScalar)
        if isinstance(other, aclScalar):
            dtype = dtypes.promote_with_scalar(a.data_type, other.data_type)
        else:
            dtype = dtypes.promote_types(a.data_type, other.data_type)
        if dtype is None:
            raise OpArgError(
                f"other has dtype {dtypes.name(other.data_type)}, which cannot be promoted with "
                f"{self.first}'s {dtypes.name(a.data_type)}"
            )
        return dtype

    def result_dtype(self, args: Args) -> aclDataType:
        dtype = self.promoted(args)
        return DT.ACL_FLOAT if self.true_div and dtypes.is_integral(dtype) else dtype

    def check(self, args: Args) -> None:
        a, other = tensor(args, self.first), args["other"]
        assert isinstance(other, aclTensor | aclScalar)
        promoted = self.promoted(args)
        require_dtype(self.first, a.data_type, ALL)
        if self.no_bool:
            for name, dtype in ((self.first, a.data_type), ("other", other.data_type)):
                if dtype == DT.ACL_BOOL:
                    raise OpArgError(f"{name} is ACL_BOOL: subtraction with a bool operand is not supported")
        alpha = args.get("alpha")
        if isinstance(alpha, aclScalar) and not can_cast(alpha.data_type, promoted):
            raise OpArgError(
                f"alpha has dtype {dtypes.name(alpha.data_type)}, which cannot be cast to the promoted "
                f"dtype {dtypes.name(promoted)}"
            )
        check_out(args, self.out, self.result_dtype(args), self._shape(a, other))

    def _shape(self, a: aclTensor, other: aclTensor | aclScalar) -> tuple[int, ...]:
        if isinstance(other, aclScalar):
            return a.view_dims
        require_dtype("other", other.data_type, ALL)
        shape = broadcast_shapes(a.view_dims, other.view_dims)
        if shape is None:
            raise OpArgError(
                f"other has shape {shape_str(other.view_dims)}, which does not broadcast with "
                f"{self.first}'s {shape_str(a.view_dims)}"
            )
        return shape


@dataclass(frozen=True)
class Unary(NoWorkspace):
    """f(self) → out, elementwise; `to_float` computes integral inputs in ACL_FLOAT."""

    allowed: frozenset[aclDataType] = ALL
    to_float: bool = False

    def result_dtype(self, args: Args) -> aclDataType:
        dtype = tensor(args, "self").data_type
        return DT.ACL_FLOAT if self.to_float and dtypes.is_integral(dtype) else dtype

    def check(self, args: Args) -> None:
        x = tensor(args, "self")
        require_dtype("self", x.data_type, self.allowed)
        check_out(args, "out", self.result_dtype(args), x.view_dims)


@dataclass(frozen=True)
class Softmax(Unary):
    """softmax(self, dim) → out; its kernel normalizes in a compute-dtype scratch workspace."""

    allowed: frozenset[aclDataType] = FLOATS

    def check(self, args: Args) -> None:
        super().check(args)
        wrap_dim("dim", int_attr(args, "dim"), len(tensor(args, "self").view_dims))

    def workspace(self, args: Args) -> int:
        x = tensor(args, "self")
        return round_up(x.numel * dtypes.info(dtypes.compute_dtype(x.data_type)).itemsize)


@dataclass(frozen=True)
class Cast(NoWorkspace):
    """self → out of the named `dtype` (any supported pair; float → int truncates)."""

    def result_dtype(self, args: Args) -> aclDataType:
        return dtype_attr(args, "dtype")

    def check(self, args: Args) -> None:
        x = tensor(args, "self")
        require_dtype("self", x.data_type, ALL)
        require_attr_dtype("dtype", self.result_dtype(args), ALL)
        check_out(args, "out", self.result_dtype(args), x.view_dims, exact=True)


@dataclass(frozen=True)
class Copy(NoWorkspace):
    """selfRef ← src, broadcasting src to selfRef's shape and casting to its dtype."""

    def result_dtype(self, args: Args) -> aclDataType:
        return tensor(args, "selfRef").data_type

    def check(self, args: Args) -> None:
        dst, src = tensor(args, "selfRef"), tensor(args, "src")
        require_dtype("selfRef", dst.data_type, ALL)
        require_dtype("src", src.data_type, ALL)
        if broadcast_shapes(dst.view_dims, src.view_dims) != dst.view_dims:
            raise OpArgError(
                f"src has shape {shape_str(src.view_dims)}, which does not broadcast to selfRef's "
                f"{shape_str(dst.view_dims)}"
            )


@dataclass(frozen=True)
class Reduce(NoWorkspace):
    """A reduction of self over `dim` (empty = all dims) into `dtype`; `keepDim` keeps size-1 dims."""

    allowed: frozenset[aclDataType] = ALL

    def result_dtype(self, args: Args) -> aclDataType:
        return dtype_attr(args, "dtype")

    def axes(self, args: Args) -> tuple[int, ...]:
        dims = _get(args, "dim", aclIntArray).values
        return reduce_axes("dim", dims, len(tensor(args, "self").view_dims))

    def check(self, args: Args) -> None:
        x = tensor(args, "self")
        require_dtype("self", x.data_type, ALL)
        require_attr_dtype("dtype", self.result_dtype(args), self.allowed)
        shape = reduced_shape(x.view_dims, self.axes(args), _get(args, "keepDim", bool))
        check_out(args, "out", self.result_dtype(args), shape, exact=True)


def matmul_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """torch.matmul's result shape for 1-6 D operands with batch broadcasting, or None on a batch mismatch."""
    a2 = (1, *a) if len(a) == 1 else tuple(a)
    b2 = (*b, 1) if len(b) == 1 else tuple(b)
    batch = broadcast_shapes(a2[:-2], b2[:-2])
    if batch is None:
        return None
    rows = () if len(a) == 1 else (a2[-2],)
    cols = () if len(b) == 1 else (b2[-1],)
    return batch + rows + cols


@dataclass(frozen=True)
class Matmul:
    """self @ mat2 on the cube unit; its kernel accumulates in a float32 scratch workspace of out's size."""

    def result_dtype(self, args: Args) -> aclDataType:
        a, b = tensor(args, "self"), tensor(args, "mat2")
        dtype = dtypes.promote_types(a.data_type, b.data_type)
        if dtype is None or (DT.ACL_BF16 in (a.data_type, b.data_type) and a.data_type != b.data_type):
            raise OpArgError(
                f"mat2 has dtype {dtypes.name(b.data_type)}, which cannot be promoted with self's "
                f"{dtypes.name(a.data_type)} (matmul mixes ACL_BF16 with no other dtype)"
            )
        return dtype

    def check(self, args: Args) -> None:
        a, b = tensor(args, "self"), tensor(args, "mat2")
        for name, t in (("self", a), ("mat2", b)):
            require_dtype(name, t.data_type, MATMUL_DTYPES)
            if not 1 <= len(t.view_dims) <= MATMUL_MAX_DIMS:
                raise OpArgError(f"{name} has {len(t.view_dims)} dims; aclnnMatmul takes 1 to {MATMUL_MAX_DIMS}")
        dtype = self.result_dtype(args)
        self._check_mode(int_attr(args, "cubeMathType"), dtype, both_1d=len(a.view_dims) == len(b.view_dims) == 1)
        k_self, k_mat2 = a.view_dims[-1], b.view_dims[0 if len(b.view_dims) == 1 else -2]
        if k_self != k_mat2:
            raise OpArgError(
                f"mat2 has shape {shape_str(b.view_dims)}, whose reduce dim {k_mat2} differs from self's "
                f"{k_self} (self is {shape_str(a.view_dims)})"
            )
        shape = matmul_shape(a.view_dims, b.view_dims)
        if shape is None:
            raise OpArgError(
                f"mat2's batch dims {shape_str(b.view_dims[:-2])} do not broadcast with self's "
                f"{shape_str(a.view_dims[:-2])}"
            )
        out = tensor(args, "out")
        halves = (DT.ACL_FLOAT16, DT.ACL_BF16)
        target = DT.ACL_FLOAT if dtype in halves and out.data_type == DT.ACL_FLOAT else dtype
        check_out(args, "out", target, shape, MATMUL_DTYPES, exact=True)

    @staticmethod
    def _check_mode(mode: int, dtype: aclDataType, *, both_1d: bool) -> None:
        if mode not in CUBE_MATH_TYPES:
            known = ", ".join(f"{value} ({name})" for value, name in CUBE_MATH_TYPES.items())
            raise OpArgError(f"cubeMathType {mode} is not one of {known}")
        if both_1d:
            return  # a dot product ignores cubeMathType
        if mode == USE_FP16 and dtype == DT.ACL_BF16:
            raise OpArgError("cubeMathType 2 (USE_FP16) does not support ACL_BF16 inputs")
        if mode == USE_HF32 and dtype != DT.ACL_FLOAT:
            raise OpArgError(f"cubeMathType 3 (USE_HF32) needs ACL_FLOAT inputs, not {dtypes.name(dtype)}")

    def workspace(self, args: Args) -> int:
        shape = matmul_shape(tensor(args, "self").view_dims, tensor(args, "mat2").view_dims)
        assert shape is not None
        return round_up(math.prod(shape) * dtypes.info(DT.ACL_FLOAT).itemsize)
