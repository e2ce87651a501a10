"""The aclnn host objects (`aclnn/acl_meta.h`): aclTensor, aclScalar, aclIntArray, aclOpExecutor.

In CANN these live on the host and phase 1 only reads them. The Python mirror keeps the C names and argument
order, drops array-length arguments, and raises `AclError` where the C call returns NULL or a status. Tensors,
scalars and int arrays are frozen values that validate themselves on construction, so an invalid one cannot
exist, whether it came from `aclCreateTensor`, from the wire, or from `dataclasses.replace`. Destroying one
only checks the argument: a Python value holds no resource, and the real runtime does not detect reuse.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar, Final, SupportsIndex, TypeGuard

from proto.aclnn import dtypes
from proto.constants import aclDataType, aclFormat
from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS, AclError

MAX_DIMS: Final = 8
INT64_MIN: Final = -(1 << 63)
INT64_MAX: Final = (1 << 63) - 1
ScalarValue = bool | int | float


def is_int64(value: object) -> TypeGuard[int]:
    """An int in int64 range, bools excepted; int subclasses (IntEnum) too -- compared: `in range(...)` would
    search a subclass value element by element."""
    return isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX


def invalid(api: str, message: str) -> AclError:
    return AclError(ACLNN_ERR_PARAM_INVALID, message, api=api)


def _int64s(api: str, arg: str, values: object, *, minimum: int = 0) -> tuple[int, ...]:
    """`values` as a tuple of int64 >= minimum; any integer type but bool is taken (numpy ints too)."""
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise invalid(api, f"{arg} must be a sequence of ints, got {type(values).__name__}")
    ints = tuple(_index(api, f"{arg}[{i}]", v) for i, v in enumerate(values))
    for i, v in enumerate(ints):
        if not minimum <= v <= INT64_MAX:
            raise invalid(api, f"{arg}[{i}] is {v}; it must be an int64 >= {minimum}")
    return ints


def _index(api: str, arg: str, value: object) -> int:
    if type(value) is int:
        return value
    if isinstance(value, SupportsIndex) and not isinstance(value, bool):
        return operator.index(value)
    raise invalid(api, f"{arg} must be an int, got {value!r}")


def _enum_arg(api: str, arg: str, value: object, enum: type[aclDataType] | type[aclFormat]) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise invalid(api, f"{arg} must be an {enum.__name__}, got {value!r}")
    try:
        return enum[value] if isinstance(value, str) else enum(value)
    except (KeyError, ValueError):
        raise invalid(api, f"{arg} {value!r} is not an {enum.__name__}") from None


@dataclass(frozen=True)
class aclTensor:  # noqa: N801 - the C type name
    """aclTensor: a strided view (dims, strides and offset in elements) of device memory at `data`.

    `storage_dims` is the shape of the underlying storage; the view must lie inside it. Strides are
    non-negative (CANN kernels read no negative strides); a zero stride broadcasts an input.
    """

    view_dims: tuple[int, ...]
    data_type: aclDataType
    strides: tuple[int, ...]
    offset: int
    format: aclFormat
    storage_dims: tuple[int, ...]
    data: int
    destroyed: ClassVar[bool] = False  # set on the object by aclDestroyTensor: a later use is refused

    def __post_init__(self) -> None:
        api = "aclCreateTensor"
        dims = _int64s(api, "view_dims", self.view_dims)
        strides = _int64s(api, "strides", self.strides)
        storage = _int64s(api, "storage_dims", self.storage_dims)
        dtype = aclDataType(_enum_arg(api, "data_type", self.data_type, aclDataType))
        fmt = aclFormat(_enum_arg(api, "format", self.format, aclFormat))
        for arg, shape in (("view_dims", dims), ("storage_dims", storage)):
            if len(shape) > MAX_DIMS:
                raise invalid(api, f"{arg} has {len(shape)} dims; at most {MAX_DIMS} are supported")
        if len(strides) != len(dims):
            raise invalid(api, f"strides has {len(strides)} entries but view_dims has {len(dims)}")
        if dtype not in dtypes.INFO:
            raise invalid(api, f"data_type {dtype.name} is not supported by vnpu tensors")
        for arg, value in (("offset", self.offset), ("data", self.data)):
            if not is_int64(value) or value < 0:
                raise invalid(api, f"{arg} must be an int64 >= 0, got {value!r}")
        for field, shape in (("view_dims", dims), ("strides", strides), ("storage_dims", storage)):
            object.__setattr__(self, field, shape)
        object.__setattr__(self, "data_type", dtype)
        object.__setattr__(self, "format", fmt)
        self._check_storage()

    def _check_storage(self) -> None:
        capacity = math.prod(self.storage_dims)
        if self.numel and self.offset + self.last_element >= capacity:
            raise invalid(
                "aclCreateTensor",
                f"the view (view_dims {list(self.view_dims)}, strides {list(self.strides)}, "
                f"offset {self.offset}) reaches element {self.offset + self.last_element} but "
                f"storage_dims {list(self.storage_dims)} hold {capacity} elements",
            )

    @cached_property
    def itemsize(self) -> int:
        return dtypes.INFO[self.data_type].itemsize

    @cached_property
    def numel(self) -> int:
        return math.prod(self.view_dims)

    @cached_property
    def last_element(self) -> int:
        """The element index (relative to `offset`) of the last element the view reaches."""
        return sum((d - 1) * s for d, s in zip(self.view_dims, self.strides, strict=True))

    def is_dense(self) -> bool:
        """Whether the view covers its elements' span exactly once (torch's is_non_overlapping_and_dense)."""
        expected = 1
        for stride, dim in sorted((s, d) for d, s in zip(self.view_dims, self.strides, strict=True) if d != 1):
            if stride != expected:
                return False
            expected *= dim
        return True

    def byte_range(self) -> tuple[int, int]:
        """(first byte pointer, byte count) of the view: `data + offset*itemsize` to its last element.

        An empty tensor touches nothing: its count is 0. An ACL_INT4 view (two elements to a byte) starts at the
        byte of its first element and covers the bytes its elements' nibbles lie in.
        """
        bits = dtypes.INFO[self.data_type].width
        if bits >= 8:
            first = self.data + self.offset * self.itemsize
            return first, (self.last_element + 1) * self.itemsize if self.numel else 0
        start = self.offset * bits
        end = (self.offset + self.last_element + 1) * bits
        return self.data + start // 8, -(-end // 8) - start // 8 if self.numel else 0

    def is_contiguous(self) -> bool:
        """Whether the view is row-major contiguous (torch's is_contiguous: size-1 dims' strides ignored)."""
        expected = 1
        for dim, stride in zip(reversed(self.view_dims), reversed(self.strides), strict=True):
            if dim != 1 and stride != expected:
                return False
            expected *= dim
        return True


@dataclass(frozen=True)
class aclScalar:  # noqa: N801
    """aclScalar: one host value of `data_type`, stored as C stores it (floats rounded to the dtype)."""

    value: ScalarValue
    data_type: aclDataType
    destroyed: ClassVar[bool] = False  # set on the object by aclDestroyScalar

    def __post_init__(self) -> None:
        api = "aclCreateScalar"
        dtype = aclDataType(_enum_arg(api, "data_type", self.data_type, aclDataType))
        if dtype not in dtypes.SCALAR_DTYPES:
            raise invalid(api, f"data_type {dtype.name} is not supported for scalars")
        object.__setattr__(self, "data_type", dtype)
        object.__setattr__(self, "value", _scalar_value(dtype, self.value))


def _scalar_value(dtype: aclDataType, value: object) -> ScalarValue:
    api = "aclCreateScalar"
    if dtype == aclDataType.ACL_BOOL:
        if not isinstance(value, bool):
            raise invalid(api, f"value {value!r} must be a bool for ACL_BOOL")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(api, f"value {value!r} must be a number for {dtype.name}")
    if dtypes.is_float(dtype):
        return dtypes.round_float(float(value), dtype)
    if not isinstance(value, int):
        raise invalid(api, f"value {value!r} must be an int for {dtype.name}")
    fits = dtypes.int_range(dtype)
    if not fits.start <= value < fits.stop:  # compared, not searched (see is_int64)
        raise invalid(api, f"value {value} does not fit {dtype.name}")
    return value


@dataclass(frozen=True)
class aclIntArray:  # noqa: N801
    """aclIntArray: a host array of int64 values."""

    values: tuple[int, ...]
    destroyed: ClassVar[bool] = False  # set on the object by aclDestroyIntArray

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", _int64s("aclCreateIntArray", "values", self.values, minimum=-(1 << 63)))


def _named(*values: object) -> zip[tuple[str, object]]:
    return zip(("view_dims", "strides", "storage_dims"), values, strict=True)


def aclCreateTensor(  # noqa: N802
    view_dims: Sequence[int],
    data_type: aclDataType,
    strides: Sequence[int],
    offset: int,
    format: aclFormat,
    storage_dims: Sequence[int],
    data: int,
) -> aclTensor:
    """aclCreateTensor: a tensor view of device memory; AclError(161002) where C returns NULL."""
    dims, steps, storage = (_int64s("aclCreateTensor", n, v) for n, v in _named(view_dims, strides, storage_dims))
    return aclTensor(dims, data_type, steps, offset, format, storage, data)


def aclCreateScalar(value: ScalarValue, data_type: aclDataType) -> aclScalar:  # noqa: N802
    """aclCreateScalar: `value` held as `data_type`; AclError(161002) for a value the dtype cannot hold."""
    return aclScalar(value, data_type)


def aclCreateIntArray(values: Sequence[int]) -> aclIntArray:  # noqa: N802
    """aclCreateIntArray: a host copy of int64 `values`."""
    return aclIntArray(_int64s("aclCreateIntArray", "values", values, minimum=-(1 << 63)))


def check_handle(api: str, arg: str, value: object, cls: type) -> None:
    if value is None:
        raise AclError(ACLNN_ERR_PARAM_NULLPTR, f"{arg} is a null pointer", api=api)
    if not isinstance(value, cls):
        raise invalid(api, f"{arg} must be an {cls.__name__}, got {type(value).__name__}")


def _destroy(api: str, arg: str, value: aclTensor | aclScalar | aclIntArray | None, cls: type) -> int:
    check_handle(api, arg, value, cls)
    assert value is not None
    if value.destroyed:
        raise invalid(api, f"{arg} was already destroyed by {api}")
    object.__setattr__(value, "destroyed", True)
    return ACLNN_SUCCESS


def aclDestroyTensor(tensor: aclTensor | None) -> int:  # noqa: N802
    """aclDestroyTensor: returns ACLNN_SUCCESS; a later use of the tensor is refused, naming the call."""
    return _destroy("aclDestroyTensor", "tensor", tensor, aclTensor)


def aclDestroyScalar(scalar: aclScalar | None) -> int:  # noqa: N802
    """aclDestroyScalar: returns ACLNN_SUCCESS; a later use of the scalar is refused."""
    return _destroy("aclDestroyScalar", "scalar", scalar, aclScalar)


def aclDestroyIntArray(array: aclIntArray | None) -> int:  # noqa: N802
    """aclDestroyIntArray: returns ACLNN_SUCCESS; a later use of the array is refused."""
    return _destroy("aclDestroyIntArray", "array", array, aclIntArray)


def _live_tensor(api: str, tensor: aclTensor | None) -> aclTensor:
    check_handle(api, "tensor", tensor, aclTensor)
    assert tensor is not None
    if tensor.destroyed:
        raise invalid(api, "tensor was destroyed by aclDestroyTensor")
    return tensor


def aclGetViewShape(tensor: aclTensor | None) -> list[int]:  # noqa: N802
    """aclGetViewShape: the view's dims (C's `viewDims`, `viewDimsNum` out-parameters as one list)."""
    return list(_live_tensor("aclGetViewShape", tensor).view_dims)


def aclGetStorageShape(tensor: aclTensor | None) -> list[int]:  # noqa: N802
    """aclGetStorageShape: the storage's dims."""
    return list(_live_tensor("aclGetStorageShape", tensor).storage_dims)


def aclGetViewStrides(tensor: aclTensor | None) -> list[int]:  # noqa: N802
    """aclGetViewStrides: the view's strides, in elements."""
    return list(_live_tensor("aclGetViewStrides", tensor).strides)


def aclGetViewOffset(tensor: aclTensor | None) -> int:  # noqa: N802
    """aclGetViewOffset: the view's first element, in elements from the storage's start."""
    return _live_tensor("aclGetViewOffset", tensor).offset


def aclGetFormat(tensor: aclTensor | None) -> aclFormat:  # noqa: N802
    """aclGetFormat: the tensor's format."""
    return _live_tensor("aclGetFormat", tensor).format


def aclGetDataType(tensor: aclTensor | None) -> aclDataType:  # noqa: N802
    """aclGetDataType: the tensor's element type."""
    return _live_tensor("aclGetDataType", tensor).data_type


def aclGetIntArraySize(array: aclIntArray | None) -> int:  # noqa: N802
    """aclGetIntArraySize: the number of values (C's `size` out-parameter)."""
    check_handle("aclGetIntArraySize", "array", array, aclIntArray)
    assert array is not None
    return len(array.values)
