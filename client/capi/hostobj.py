"""The aclnn host objects and the operators' two phases, for C: `proto.aclnn` behind opaque pointers.

As in CANN, tensors, scalars, int arrays and executors live in the program and phase 1 runs here with no round
trip. A C handle is an address of vnpu's choosing that names a Python object in `HANDLES`; a destroyed handle, or
an address that never was one, is refused with a message that says which. A single-use executor leaves the
table once its phase 2 ran (its address is remembered, so a second launch is told it was released).
`OPERATORS` holds `aclnn<Op>GetWorkspaceSize` and `aclnn<Op>` for every operator vnpu implements
(`proto.aclnn.OPS.implemented()`: vnpu's own and those declared by the toolkit's operator modules, loaded before
this module), which libopapi.so's generated C reaches through one entry (`client.capi.opentry`).
"""

from __future__ import annotations

import itertools
import struct
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import proto.aclnn as aclnn
import proto.host as host
import proto.operators as operators
from client import acl
from client.capi.convert import C, from_host
from proto.aclnn import OPS, ArgKind, OpDecl
from proto.aclnn.decl import HOST_CLASSES
from proto.constants import aclDataType
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_SUCCESS,
    AclError,
)
from proto.host import aclDataBuffer

FORGOTTEN_LIMIT = 4096  # destroyed or released handles remembered for a precise message


class Handles:
    """Opaque C pointers to host objects: address -> object."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = itertools.count(0x5E00_0000_0000, 0x40)
        self._live: dict[int, object] = {}
        self._gone: OrderedDict[int, str] = OrderedDict()

    def put(self, obj: object) -> int:
        with self._lock:
            address = next(self._next)
            self._live[address] = obj
        return address

    def get(self, address: int, cls: type, arg: str, api: str, code: int = ACLNN_ERR_PARAM_INVALID) -> Any:
        """The live object behind `address` (None for NULL); refuses a handle of another kind or a stale one
        with `code` (the aclnn objects' code unless the caller names its API's)."""
        if not address:
            return None
        obj = self._live.get(address)
        if obj is None:
            why = self._gone.get(address, f"is not an {cls.__name__} this program created")
            raise AclError(code, f"{arg} ({address:#x}) {why}", api)
        if not isinstance(obj, cls):
            raise AclError(code, f"{arg} ({address:#x}) is an {type(obj).__name__}, not an {cls.__name__}", api)
        return obj

    def drop(self, address: int, why: str) -> None:
        with self._lock:
            self._live.pop(address, None)
            self._gone[address] = why
            while len(self._gone) > FORGOTTEN_LIMIT:
                self._gone.popitem(last=False)


HANDLES = Handles()
# how aclCreateScalar reads `*value`: struct format by dtype (bf16 is read as its 16 bits)
SCALAR_FORMATS = {
    aclDataType.ACL_FLOAT: "f",
    aclDataType.ACL_FLOAT16: "e",
    aclDataType.ACL_DOUBLE: "d",
    aclDataType.ACL_INT8: "b",
    aclDataType.ACL_INT16: "h",
    aclDataType.ACL_INT32: "i",
    aclDataType.ACL_INT64: "q",
    aclDataType.ACL_UINT8: "B",
    aclDataType.ACL_UINT16: "H",
    aclDataType.ACL_UINT32: "I",
    aclDataType.ACL_UINT64: "Q",
    aclDataType.ACL_BOOL: "?",
    aclDataType.ACL_BF16: "H",
}


def _ints(c: C, pointer: Any, count: int, arg: str, api: str) -> list[int]:
    if count and pointer == c.ffi.NULL:
        raise AclError(ACLNN_ERR_PARAM_NULLPTR, f"{arg} is NULL but its length is {count}", api)
    if not count:
        return []
    return from_host(lambda: list(c.ffi.unpack(c.ffi.cast("int64_t *", pointer), count)), count, f"{api}: {arg}")


def _handle(c: C, obj: object, ctype: str) -> Any:
    return c.ffi.cast(ctype, HANDLES.put(obj))


def aclCreateTensor(c: C) -> Callable[..., Any]:  # noqa: N802
    api = "aclCreateTensor"

    def body(dims: Any, ndims: int, dtype: Any, strides: Any, offset: int, fmt: Any, storage: Any, nstorage: int,
             data: Any) -> Any:  # fmt: skip
        tensor = aclnn.aclCreateTensor(
            _ints(c, dims, ndims, "viewDims", api),
            dtype,
            _ints(c, strides, ndims, "stride", api),
            offset,
            fmt,
            _ints(c, storage, nstorage, "storageDims", api),
            c.address(data),
        )
        return _handle(c, tensor, "aclTensor *")

    return body


def aclCreateScalar(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(value: Any, dtype: int) -> Any:
        fmt = SCALAR_FORMATS.get(dtype)  # type: ignore[call-overload]
        if fmt is None:
            raise AclError(
                ACLNN_ERR_PARAM_INVALID, f"dataType {dtype} is not a scalar type vnpu reads", "aclCreateScalar"
            )
        if value == c.ffi.NULL:
            raise AclError(ACLNN_ERR_PARAM_NULLPTR, "value is NULL", "aclCreateScalar")
        raw = c.ffi.buffer(c.ffi.cast("char *", value), struct.calcsize(fmt))[:]
        (number,) = struct.unpack(fmt, raw)
        if dtype == aclDataType.ACL_BF16:
            (number,) = struct.unpack("f", struct.pack("I", number << 16))
        return _handle(c, aclnn.aclCreateScalar(number, aclDataType(dtype)), "aclScalar *")

    return body


def aclCreateIntArray(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(value: Any, size: int) -> Any:
        values = _ints(c, value, size, "value", "aclCreateIntArray")
        return _handle(c, aclnn.aclCreateIntArray(values), "aclIntArray *")

    return body


def _destroy(api: str, cls: type, proto_destroy: Callable[[Any], int]) -> Callable[[C], Callable[[Any], int]]:
    def factory(c: C) -> Callable[[Any], int]:
        def body(handle: Any) -> int:
            address = c.address(handle)
            obj = HANDLES.get(address, cls, api.removeprefix("aclDestroy").lower() or "handle", api)
            code = proto_destroy(obj)
            HANDLES.drop(address, f"was destroyed by {api}")
            return code

        return body

    return factory


def aclSetAclOpExecutorRepeatable(c: C) -> Callable[[Any], int]:  # noqa: N802
    def body(executor: Any) -> int:
        api = "aclSetAclOpExecutorRepeatable"
        return aclnn.aclSetAclOpExecutorRepeatable(
            HANDLES.get(c.address(executor), aclnn.aclOpExecutor, "executor", api)
        )

    return body


def _reader(c: C, kind: ArgKind, name: str, api: str) -> Callable[[Any], Any]:
    """How phase 1 takes a C argument of `kind`: a host object behind its handle (NULL: None), a `char *` as its
    text (NULL: None), numbers and bools as CFFI gives them (double and float as floats, the integer types as ints,
    an aclDataType as its value)."""
    cls = HOST_CLASSES.get(kind)
    if cls is not None:
        address = c.address
        return lambda value: HANDLES.get(address(value), cls, name, api)
    if kind is ArgKind.STRING:
        ffi = c.ffi
        return lambda value: None if value == ffi.NULL else ffi.string(value).decode(errors="replace")
    return lambda value: value


def phase1(decl: OpDecl) -> Callable[[C], Callable[..., int]]:
    """aclnn<Op>GetWorkspaceSize(<args>..., uint64_t *workspaceSize, aclOpExecutor **executor)."""
    api = decl.ws_name
    declared = operators.USER.get(decl.name)
    run = declared.ws_function if declared is not None else getattr(aclnn, api)

    def factory(c: C) -> Callable[..., int]:
        null = c.ffi.NULL
        readers = [_reader(c, arg.kind, arg.name, api) for arg in decl.args]

        def body(*args: Any) -> int:
            *values, workspace_size, executor = args
            if workspace_size == null or executor == null:
                which = "workspaceSize" if workspace_size == null else "executor"
                raise AclError(ACLNN_ERR_PARAM_NULLPTR, f"{which} is NULL: it must point to where the result goes", api)
            python = [read(v) for read, v in zip(readers, values, strict=True)]
            size, made = run(*python)
            workspace_size[0] = size
            executor[0] = _handle(c, made, "aclOpExecutor *")
            return ACLNN_SUCCESS

        return body

    return factory


def phase2(decl: OpDecl) -> Callable[[C], Callable[..., int]]:
    """aclnn<Op>(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)."""
    api = decl.c_name
    launch = getattr(acl, api)

    def factory(c: C) -> Callable[..., int]:
        def body(workspace: Any, workspace_size: int, executor: Any, stream: Any) -> int:
            address = c.address(executor)
            made = HANDLES.get(address, aclnn.aclOpExecutor, "executor", api)
            if made is None:
                raise AclError(ACLNN_ERR_PARAM_NULLPTR, "executor is NULL", api)
            launch(c.address(workspace), workspace_size, made, c.address(stream))
            if not made.repeatable:
                HANDLES.drop(address, f"was released by its {api} call (executors are single-use unless repeatable)")
            return ACLNN_SUCCESS

        return body

    return factory


def _data_buffer(c: C, handle: Any, api: str) -> aclDataBuffer | None:
    """The data buffer behind `handle` (None for NULL); any other address is refused with 100000."""
    address = c.address(handle)
    try:
        found: aclDataBuffer | None = HANDLES.get(address, aclDataBuffer, "dataBuffer", api)
    except AclError as error:
        raise AclError(ACL_ERROR_INVALID_PARAM, error.message, api) from None
    return found


def aclCreateDataBuffer(c: C) -> Callable[[Any, int], Any]:  # noqa: N802
    def body(data: Any, size: int) -> Any:
        return _handle(c, host.aclCreateDataBuffer(c.address(data), size), "aclDataBuffer *")

    return body


def aclDestroyDataBuffer(c: C) -> Callable[[Any], int]:  # noqa: N802
    def body(handle: Any) -> int:
        host.aclDestroyDataBuffer(_data_buffer(c, handle, "aclDestroyDataBuffer"))
        HANDLES.drop(c.address(handle), "was destroyed by aclDestroyDataBuffer")
        return 0

    return body


def aclUpdateDataBuffer(c: C) -> Callable[[Any, Any, int], int]:  # noqa: N802
    def body(handle: Any, data: Any, size: int) -> int:
        host.aclUpdateDataBuffer(_data_buffer(c, handle, "aclUpdateDataBuffer"), c.address(data), size)
        return 0

    return body


def _data_buffer_field(api: str, read: Callable[[aclDataBuffer | None], int], pointer: bool) -> Any:
    def factory(c: C) -> Callable[[Any], Any]:
        def body(handle: Any) -> Any:
            value = read(_data_buffer(c, handle, api))
            return c.ffi.cast("void *", value) if pointer else value

        return body

    return factory


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclCreateDataBuffer": aclCreateDataBuffer,
    "aclDestroyDataBuffer": aclDestroyDataBuffer,
    "aclUpdateDataBuffer": aclUpdateDataBuffer,
    "aclGetDataBufferAddr": _data_buffer_field("aclGetDataBufferAddr", host.aclGetDataBufferAddr, pointer=True),
    "aclGetDataBufferSizeV2": _data_buffer_field("aclGetDataBufferSizeV2", host.aclGetDataBufferSizeV2, False),
    "aclGetDataBufferSize": _data_buffer_field("aclGetDataBufferSize", host.aclGetDataBufferSize, pointer=False),
    "aclCreateTensor": aclCreateTensor,
    "aclCreateScalar": aclCreateScalar,
    "aclCreateIntArray": aclCreateIntArray,
    "aclDestroyTensor": _destroy("aclDestroyTensor", aclnn.aclTensor, aclnn.aclDestroyTensor),
    "aclDestroyScalar": _destroy("aclDestroyScalar", aclnn.aclScalar, aclnn.aclDestroyScalar),
    "aclDestroyIntArray": _destroy("aclDestroyIntArray", aclnn.aclIntArray, aclnn.aclDestroyIntArray),
    "aclDestroyAclOpExecutor": _destroy("aclDestroyAclOpExecutor", aclnn.aclOpExecutor, aclnn.aclDestroyAclOpExecutor),
    "aclSetAclOpExecutorRepeatable": aclSetAclOpExecutorRepeatable,
}
OPERATORS: dict[str, Callable[[C], Callable[..., int]]] = {
    **{decl.ws_name: phase1(decl) for decl in OPS.implemented()},
    **{decl.c_name: phase2(decl) for decl in OPS.implemented()},
}
