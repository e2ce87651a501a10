"""libnnopbase.so's calls beyond creating and destroying host objects (`client.capi.hostobj`): aclnnInit and
aclnnFinalize, reading a tensor back (aclGetViewShape, ...), the size of an int array."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import proto.aclnn as aclnn
from client.capi.convert import C
from client.capi.hostobj import HANDLES
from proto.errors import ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS, AclError

_libc = ctypes.CDLL(None)
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]


def aclnnInit(c: C) -> Callable[[Any], int]:  # noqa: N802
    """Nothing to set up: host objects and phase 1 live in the program, the device behind aclInit's session."""
    return lambda config_path: ACLNN_SUCCESS


def aclnnFinalize(c: C) -> Callable[[], int]:  # noqa: N802
    return lambda: ACLNN_SUCCESS


def _tensor(c: C, handle: Any, api: str) -> aclnn.aclTensor:
    tensor: aclnn.aclTensor | None = HANDLES.get(c.address(handle), aclnn.aclTensor, "tensor", api)
    if tensor is None:
        raise AclError(ACLNN_ERR_PARAM_NULLPTR, "tensor is NULL", api)
    return tensor


def _out(c: C, pointer: Any, name: str, api: str) -> Any:
    if pointer == c.ffi.NULL:
        raise AclError(ACLNN_ERR_PARAM_NULLPTR, f"{name} is NULL: it must point to where the result goes", api)
    return pointer


def _array_getter(api: str, field: str, values: str, count: str) -> Callable[[C], Callable[..., int]]:
    """aclGetViewShape & co.: a new int64_t array (the caller's, to `delete[]`) and its length."""

    def factory(c: C) -> Callable[..., int]:
        def body(handle: Any, array: Any, size: Any) -> int:
            tensor = _tensor(c, handle, api)
            _out(c, array, values, api)
            _out(c, size, count, api)
            items = getattr(tensor, field)
            memory = _libc.malloc(max(1, 8 * len(items)))
            if not memory:
                raise AclError(ACLNN_ERR_PARAM_NULLPTR, f"no memory for {len(items)} values", api)
            target = c.ffi.cast("int64_t *", memory)
            for i, value in enumerate(items):
                target[i] = value
            array[0] = target
            size[0] = len(items)
            return ACLNN_SUCCESS

        return body

    return factory


def _value_getter(api: str, read: Callable[[aclnn.aclTensor], int], name: str) -> Callable[[C], Callable[..., int]]:
    def factory(c: C) -> Callable[..., int]:
        def body(handle: Any, out: Any) -> int:
            tensor = _tensor(c, handle, api)
            _out(c, out, name, api)[0] = read(tensor)
            return ACLNN_SUCCESS

        return body

    return factory


def aclGetIntArraySize(c: C) -> Callable[[Any, Any], int]:  # noqa: N802
    api = "aclGetIntArraySize"

    def body(handle: Any, size: Any) -> int:
        array = HANDLES.get(c.address(handle), aclnn.aclIntArray, "array", api)
        if array is None:
            raise AclError(ACLNN_ERR_PARAM_NULLPTR, "array is NULL", api)
        _out(c, size, "size", api)[0] = len(array.values)
        return ACLNN_SUCCESS

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclnnInit": aclnnInit,
    "aclnnFinalize": aclnnFinalize,
    "aclGetViewShape": _array_getter("aclGetViewShape", "view_dims", "viewDims", "viewDimsNum"),
    "aclGetStorageShape": _array_getter("aclGetStorageShape", "storage_dims", "storageDims", "storageDimsNum"),
    "aclGetViewStrides": _array_getter("aclGetViewStrides", "strides", "stridesValue", "stridesNum"),
    "aclGetViewOffset": _value_getter("aclGetViewOffset", lambda t: t.offset, "offset"),
    "aclGetFormat": _value_getter("aclGetFormat", lambda t: int(t.format), "format"),
    "aclGetDataType": _value_getter("aclGetDataType", lambda t: int(t.data_type), "dataType"),
    "aclGetIntArraySize": aclGetIntArraySize,
}
