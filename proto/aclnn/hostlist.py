"""The aclnn host objects that hold several values (`aclnn/acl_meta.h`): aclTensorList, aclScalarList, aclBoolArray,
aclFloatArray, with their create, destroy and size functions under CANN's names.

As `proto.aclnn.host`: the Python mirror drops the length arguments (`aclCreateTensorList(value, size)` takes one
sequence), raises `AclError` where C returns NULL, and the objects are frozen values. As in CANN, a list owns what
it holds: `aclDestroyTensorList` destroys its tensors too (they must not be destroyed again) and
`aclDestroyScalarList` its scalars. A tensor list may hold NULL entries (C copies the pointers as given); an
operator's phase 1 decides whether it takes them. A float array holds C floats: each value is rounded to float32.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from proto.aclnn.dtypes import round_float
from proto.aclnn.host import aclScalar, aclTensor, check_handle, invalid
from proto.constants import aclDataType
from proto.errors import ACLNN_SUCCESS

T = TypeVar("T")


def _sequence(api: str, arg: str, values: object) -> list[object]:
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise invalid(api, f"{arg} must be a sequence, got {type(values).__name__}")
    return list(values)


def _members(api: str, values: object, cls: type[T], *, nulls: bool) -> tuple[T | None, ...]:
    items = _sequence(api, "value", values)
    for i, item in enumerate(items):
        if item is None and nulls:
            continue
        if not isinstance(item, cls):
            raise invalid(api, f"value[{i}] must be an {cls.__name__}, got {type(item).__name__}")
        if getattr(item, "destroyed", False):
            raise invalid(api, f"value[{i}] is an {cls.__name__} that was already destroyed")
    return tuple(items)  # type: ignore[arg-type]


@dataclass(frozen=True)
class aclTensorList:  # noqa: N801 - the C type name
    """aclTensorList: tensors (NULL entries kept as None), owned by the list."""

    tensors: tuple[aclTensor | None, ...]
    destroyed: ClassVar[bool] = False  # set on the object by aclDestroyTensorList

    def __post_init__(self) -> None:
        object.__setattr__(self, "tensors", _members("aclCreateTensorList", self.tensors, aclTensor, nulls=True))

    def __len__(self) -> int:
        return len(self.tensors)


@dataclass(frozen=True)
class aclScalarList:  # noqa: N801
    """aclScalarList: scalars, owned by the list."""

    scalars: tuple[aclScalar, ...]
    destroyed: ClassVar[bool] = False  # set on the object by aclDestroyScalarList

    def __post_init__(self) -> None:
        scalars = _members("aclCreateScalarList", self.scalars, aclScalar, nulls=False)
        object.__setattr__(self, "scalars", scalars)

    def __len__(self) -> int:
        return len(self.scalars)


@dataclass(frozen=True)
class aclBoolArray:  # noqa: N801
    """aclBoolArray: a host array of C bools."""

    values: tuple[bool, ...]
    destroyed: ClassVar[bool] = False  # set on the object by aclDestroyBoolArray

    def __post_init__(self) -> None:
        values = _sequence("aclCreateBoolArray", "value", self.values)
        for i, value in enumerate(values):
            if not isinstance(value, bool):
                raise invalid("aclCreateBoolArray", f"value[{i}] must be a bool, got {value!r}")
        object.__setattr__(self, "values", tuple(values))

    def __len__(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class aclFloatArray:  # noqa: N801
    """aclFloatArray: a host array of C floats (each value rounded to float32; ±inf and NaN kept)."""

    values: tuple[float, ...]
    destroyed: ClassVar[bool] = False  # set on the object by aclDestroyFloatArray

    def __post_init__(self) -> None:
        values = _sequence("aclCreateFloatArray", "value", self.values)
        for i, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise invalid("aclCreateFloatArray", f"value[{i}] must be a number, got {value!r}")
        rounded = tuple(round_float(float(v), aclDataType.ACL_FLOAT) for v in values)  # type: ignore[arg-type]
        object.__setattr__(self, "values", rounded)

    def __len__(self) -> int:
        return len(self.values)


def aclCreateTensorList(value: Sequence[aclTensor | None]) -> aclTensorList:  # noqa: N802
    """aclCreateTensorList: a list of `value`'s tensors (C's `size` is its length); the list owns them."""
    return aclTensorList(tuple(_sequence("aclCreateTensorList", "value", value)))  # type: ignore[arg-type]


def aclCreateScalarList(value: Sequence[aclScalar]) -> aclScalarList:  # noqa: N802
    """aclCreateScalarList: a list of `value`'s scalars; the list owns them."""
    return aclScalarList(tuple(_sequence("aclCreateScalarList", "value", value)))  # type: ignore[arg-type]


def aclCreateBoolArray(value: Sequence[bool]) -> aclBoolArray:  # noqa: N802
    """aclCreateBoolArray: a host copy of `value`."""
    return aclBoolArray(tuple(_sequence("aclCreateBoolArray", "value", value)))  # type: ignore[arg-type]


def aclCreateFloatArray(value: Sequence[float]) -> aclFloatArray:  # noqa: N802
    """aclCreateFloatArray: a host copy of `value` as C floats."""
    return aclFloatArray(tuple(_sequence("aclCreateFloatArray", "value", value)))  # type: ignore[arg-type]


Destroyable = aclTensorList | aclScalarList | aclBoolArray | aclFloatArray


def _destroy(api: str, value: Destroyable | None, cls: type, members: Iterable[object] = ()) -> int:
    check_handle(api, "array", value, cls)
    assert value is not None
    if value.destroyed:
        raise invalid(api, f"array was already destroyed by {api}")
    object.__setattr__(value, "destroyed", True)
    for member in members:
        if member is not None:
            object.__setattr__(member, "destroyed", True)
    return ACLNN_SUCCESS


def aclDestroyTensorList(array: aclTensorList | None) -> int:  # noqa: N802
    """aclDestroyTensorList: ACLNN_SUCCESS; the list and the tensors it holds are destroyed (a later use of any is
    refused, and so is destroying one of its tensors again)."""
    return _destroy("aclDestroyTensorList", array, aclTensorList, array.tensors if array is not None else ())


def aclDestroyScalarList(array: aclScalarList | None) -> int:  # noqa: N802
    """aclDestroyScalarList: ACLNN_SUCCESS; the list and its scalars are destroyed."""
    return _destroy("aclDestroyScalarList", array, aclScalarList, array.scalars if array is not None else ())


def aclDestroyBoolArray(array: aclBoolArray | None) -> int:  # noqa: N802
    """aclDestroyBoolArray: ACLNN_SUCCESS; a later use of the array is refused."""
    return _destroy("aclDestroyBoolArray", array, aclBoolArray)


def aclDestroyFloatArray(array: aclFloatArray | None) -> int:  # noqa: N802
    """aclDestroyFloatArray: ACLNN_SUCCESS; a later use of the array is refused."""
    return _destroy("aclDestroyFloatArray", array, aclFloatArray)


def _size(api: str, arg: str, value: Destroyable | None, cls: type) -> int:
    check_handle(api, arg, value, cls)
    assert value is not None
    return len(value)


def aclGetTensorListSize(tensorList: aclTensorList | None) -> int:  # noqa: N802, N803
    """aclGetTensorListSize: the number of entries (C's `size` out-parameter)."""
    return _size("aclGetTensorListSize", "tensorList", tensorList, aclTensorList)


def aclGetScalarListSize(scalarList: aclScalarList | None) -> int:  # noqa: N802, N803
    """aclGetScalarListSize: the number of scalars."""
    return _size("aclGetScalarListSize", "scalarList", scalarList, aclScalarList)


def aclGetBoolArraySize(array: aclBoolArray | None) -> int:  # noqa: N802
    """aclGetBoolArraySize: the number of values."""
    return _size("aclGetBoolArraySize", "array", array, aclBoolArray)


def aclGetFloatArraySize(array: aclFloatArray | None) -> int:  # noqa: N802
    """aclGetFloatArraySize: the number of values."""
    return _size("aclGetFloatArraySize", "array", array, aclFloatArray)
