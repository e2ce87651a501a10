"""The aclnn host objects that hold several values, for C: aclTensorList, aclScalarList, aclBoolArray, aclFloatArray
(`proto.aclnn`'s, behind the opaque pointers of `client.capi.hostobj.HANDLES`).

A list is made of handles the program created (a NULL entry of a tensor list stays None, as CANN copies the
pointers as given) and owns them: `aclDestroyTensorList` destroys its tensors too, so their handles leave the table
with it and a later use names the list that took them. A bool or float array is a copy of the program's C array.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import proto.aclnn as aclnn
from client.capi.convert import C
from client.capi.hostobj import HANDLES, _handle
from proto.errors import ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS, AclError

_owned: dict[int, list[int]] = {}  # a list's address -> the addresses of the handles it owns


def _items(c: C, pointer: Any, size: int, ctype: str, api: str) -> list[Any]:
    if size and pointer == c.ffi.NULL:
        raise AclError(ACLNN_ERR_PARAM_NULLPTR, f"value is NULL but size is {size}", api)
    return list(c.ffi.unpack(c.ffi.cast(ctype, pointer), size)) if size else []


def _list(api: str, member: type, make: Callable[[list[Any]], Any], ctype: str) -> Callable[[C], Callable[..., Any]]:
    """aclCreateTensorList / aclCreateScalarList: a list of handles the program made."""

    def factory(c: C) -> Callable[..., Any]:
        def body(value: Any, size: int) -> Any:
            addresses = [c.address(p) for p in _items(c, value, size, "void **", api)]
            members = [HANDLES.get(a, member, f"value[{i}]", api) for i, a in enumerate(addresses)]
            address = HANDLES.put(make(members))
            _owned[address] = [a for a in addresses if a]
            return c.ffi.cast(ctype, address)

        return body

    return factory


def _array(api: str, item: str, make: Callable[[list[Any]], Any], ctype: str) -> Callable[[C], Callable[..., Any]]:
    """aclCreateBoolArray / aclCreateFloatArray: a copy of the program's array."""

    def factory(c: C) -> Callable[..., Any]:
        def body(value: Any, size: int) -> Any:
            return _handle(c, make(_items(c, value, size, f"{item} *", api)), ctype)

        return body

    return factory


def _destroy(api: str, cls: type, destroy: Callable[[Any], int], what: str) -> Callable[[C], Callable[[Any], int]]:
    def factory(c: C) -> Callable[[Any], int]:
        def body(handle: Any) -> int:
            address = c.address(handle)
            code = destroy(HANDLES.get(address, cls, "array", api))
            HANDLES.drop(address, f"was destroyed by {api}")
            for member in _owned.pop(address, ()):
                HANDLES.drop(member, f"was destroyed with its {what} by {api}")
            return code

        return body

    return factory


def _size(api: str, cls: type, size: Callable[[Any], int], arg: str) -> Callable[[C], Callable[[Any, Any], int]]:
    def factory(c: C) -> Callable[[Any, Any], int]:
        def body(handle: Any, out: Any) -> int:
            found = HANDLES.get(c.address(handle), cls, arg, api)
            if out == c.ffi.NULL:
                raise AclError(ACLNN_ERR_PARAM_NULLPTR, "size is NULL: it must point to where the result goes", api)
            out[0] = size(found)
            return ACLNN_SUCCESS

        return body

    return factory


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclCreateTensorList": _list("aclCreateTensorList", aclnn.aclTensor, aclnn.aclCreateTensorList, "aclTensorList *"),
    "aclCreateScalarList": _list("aclCreateScalarList", aclnn.aclScalar, aclnn.aclCreateScalarList, "aclScalarList *"),
    "aclCreateBoolArray": _array("aclCreateBoolArray", "bool", aclnn.aclCreateBoolArray, "aclBoolArray *"),
    "aclCreateFloatArray": _array("aclCreateFloatArray", "float", aclnn.aclCreateFloatArray, "aclFloatArray *"),
    "aclDestroyTensorList": _destroy(
        "aclDestroyTensorList", aclnn.aclTensorList, aclnn.aclDestroyTensorList, "aclTensorList"
    ),
    "aclDestroyScalarList": _destroy(
        "aclDestroyScalarList", aclnn.aclScalarList, aclnn.aclDestroyScalarList, "aclScalarList"
    ),
    "aclDestroyBoolArray": _destroy("aclDestroyBoolArray", aclnn.aclBoolArray, aclnn.aclDestroyBoolArray, ""),
    "aclDestroyFloatArray": _destroy("aclDestroyFloatArray", aclnn.aclFloatArray, aclnn.aclDestroyFloatArray, ""),
    "aclGetTensorListSize": _size(
        "aclGetTensorListSize", aclnn.aclTensorList, aclnn.aclGetTensorListSize, "tensorList"
    ),
    "aclGetScalarListSize": _size(
        "aclGetScalarListSize", aclnn.aclScalarList, aclnn.aclGetScalarListSize, "scalarList"
    ),
    "aclGetBoolArraySize": _size("aclGetBoolArraySize", aclnn.aclBoolArray, aclnn.aclGetBoolArraySize, "array"),
    "aclGetFloatArraySize": _size("aclGetFloatArraySize", aclnn.aclFloatArray, aclnn.aclGetFloatArraySize, "array"),
}
