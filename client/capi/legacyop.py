"""The legacy single-operator API from C (`proto.legacyop`): tensor descriptions and operator attributes behind
opaque pointers (`client.capi.hostobj.HANDLES`), the compile options, and the refused execution of a legacy
operator; the profiling reports torch_npu links (accepted and dropped: vnpu collects no msprof data) and
aclsysGetCANNVersion.

A getter given a pointer that is no description answers what the runtime answers for NULL (its result type has no
room for an error); a setter answers 100000."""

from __future__ import annotations

import hashlib
import struct
import time
from collections.abc import Callable
from typing import Any

import proto.host as host
import proto.legacyop as op
from client.capi.convert import C
from client.capi.hostobj import HANDLES
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError

PARTS_MAX = 32  # ACL_PKG_VERSION_PARTS_MAX_SIZE


def _desc(c: C, handle: Any, api: str, strict: bool = False) -> op.aclTensorDesc | None:
    try:
        found: op.aclTensorDesc | None = HANDLES.get(c.address(handle), op.aclTensorDesc, "desc", api)
    except AclError as error:
        if strict:
            raise AclError(ACL_ERROR_INVALID_PARAM, error.message, api) from None
        return None
    return found


def _dims(c: C, count: int, dims: Any) -> list[int] | None:
    if count < 0:
        return None
    if count == 0:
        return []
    return None if dims == c.ffi.NULL else list(c.ffi.unpack(c.ffi.cast("int64_t *", dims), count))


def _text(c: C, pointer: Any) -> str | None:
    return None if pointer == c.ffi.NULL else c.ffi.string(pointer).decode(errors="replace")


def aclCreateTensorDesc(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(data_type: int, num_dims: int, dims: Any, fmt: int) -> Any:
        desc = op.aclCreateTensorDesc(data_type, _dims(c, num_dims, dims), fmt)
        return c.ffi.NULL if desc is None else c.ffi.cast("aclTensorDesc *", HANDLES.put(desc))

    return body


def aclDestroyTensorDesc(c: C) -> Callable[[Any], None]:  # noqa: N802
    def body(handle: Any) -> None:
        if _desc(c, handle, "aclDestroyTensorDesc") is not None:
            HANDLES.drop(c.address(handle), "was destroyed by aclDestroyTensorDesc")

    return body


def _getter(read: Callable[[op.aclTensorDesc | None], int], api: str) -> Callable[[C], Callable[[Any], int]]:
    return lambda c: lambda handle: read(_desc(c, handle, api))


def aclGetTensorDescDim(c: C) -> Callable[[Any, int], int]:  # noqa: N802
    return lambda handle, index: op.aclGetTensorDescDim(_desc(c, handle, "aclGetTensorDescDim"), index)


def aclGetTensorDescDimV2(c: C) -> Callable[[Any, int, Any], int]:  # noqa: N802
    def body(handle: Any, index: int, dim_size: Any) -> int:
        if dim_size == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "dimSize is NULL: it must point to where the result goes")
        dim_size[0] = op.aclGetTensorDescDimV2(_desc(c, handle, "aclGetTensorDescDimV2", strict=True), index)
        return 0

    return body


def aclSetTensorDescName(c: C) -> Callable[[Any, Any], None]:  # noqa: N802
    return lambda handle, name: op.aclSetTensorDescName(_desc(c, handle, "aclSetTensorDescName"), _text(c, name))


def aclGetTensorDescName(c: C) -> Callable[[Any], Any]:  # noqa: N802
    def body(handle: Any) -> Any:
        desc = _desc(c, handle, "aclGetTensorDescName")
        if desc is None:
            return _EMPTY
        desc.name_c = c.ffi.new("char[]", desc.name.encode())
        return desc.name_c

    _EMPTY = c.ffi.new("char[]", b"")
    return body


def _format_setter(apply: Callable[[op.aclTensorDesc | None, int], None], api: str) -> Callable[[C], Any]:
    def make(c: C) -> Callable[[Any, int], int]:
        def body(handle: Any, value: int) -> int:
            apply(_desc(c, handle, api, strict=True), value)
            return 0

        return body

    return make


def _shape_setter(apply: Callable[[op.aclTensorDesc | None, list[int] | None], None], api: str) -> Any:
    def make(c: C) -> Callable[[Any, int, Any], int]:
        def body(handle: Any, num_dims: int, dims: Any) -> int:
            if num_dims < 0:
                raise AclError(ACL_ERROR_INVALID_PARAM, f"numDims must be >= 0, got {num_dims}", api)
            apply(_desc(c, handle, api, strict=True), _dims(c, num_dims, dims))
            return 0

        return body

    return make


# -- operator attributes --------------------------------------------------------------------------------------


def _attr(c: C, handle: Any, api: str) -> op.aclopAttr | None:
    try:
        found: op.aclopAttr | None = HANDLES.get(c.address(handle), op.aclopAttr, "attr", api)
    except AclError as error:
        raise AclError(ACL_ERROR_INVALID_PARAM, error.message, api) from None
    return found


def aclopCreateAttr(c: C) -> Callable[[], Any]:  # noqa: N802
    return lambda: c.ffi.cast("aclopAttr *", HANDLES.put(op.aclopCreateAttr()))


def aclopDestroyAttr(c: C) -> Callable[[Any], None]:  # noqa: N802
    def body(handle: Any) -> None:
        if c.address(handle) and HANDLES.get(c.address(handle), op.aclopAttr, "attr", "aclopDestroyAttr"):
            HANDLES.drop(c.address(handle), "was destroyed by aclopDestroyAttr")

    return body


def _attr_setter(api: str, read: Callable[[C, Any, Any], Any]) -> Callable[[C], Callable[..., int]]:
    """aclopSetAttr<Kind>(attr, name, value) or (attr, name, count, values): `read` turns the rest into a value."""

    def make(c: C) -> Callable[..., int]:
        def body(handle: Any, name: Any, *rest: Any) -> int:
            value = read(c, rest[0], rest[1]) if len(rest) == 2 else rest[0]
            op.aclopSetAttr(_attr(c, handle, api), _text(c, name), value, api)
            return 0

        return body

    return make


def _list(ctype: str) -> Callable[[C, int, Any], list[Any]]:
    def read(c: C, count: int, values: Any) -> list[Any]:
        if count < 0 or (count and values == c.ffi.NULL):
            raise AclError(ACL_ERROR_INVALID_PARAM, f"numValues is {count} with values {'NULL' if count else ''}")
        return list(c.ffi.unpack(c.ffi.cast(ctype, values), count)) if count else []

    return read


def _strings(c: C, count: int, values: Any) -> list[str]:
    return [_text(c, p) or "" for p in _list("char **")(c, count, values)]


def aclopSetAttrString(c: C) -> Callable[..., int]:  # noqa: N802
    def body(handle: Any, name: Any, value: Any) -> int:
        op.aclopSetAttr(_attr(c, handle, "aclopSetAttrString"), _text(c, name), _text(c, value), "aclopSetAttrString")
        return 0

    return body


def aclopSetAttrListListInt(c: C) -> Callable[..., int]:  # noqa: N802
    def body(handle: Any, name: Any, num_lists: int, num_values: Any, values: Any) -> int:
        counts = _list("int *")(c, num_lists, num_values)
        rows = _list("int64_t **")(c, num_lists, values)
        lists = [_list("int64_t *")(c, n, row) for n, row in zip(counts, rows, strict=True)]
        op.aclopSetAttr(_attr(c, handle, "aclopSetAttrListListInt"), _text(c, name), lists, "aclopSetAttrListListInt")
        return 0

    return body


# -- execution: refused -----------------------------------------------------------------------------------------


def _refuse(api: str, flag_at: int | None) -> Callable[[C], Callable[..., int]]:
    """aclopCompileAndExecute(V2) (flag at 9), aclopExecute(V2), aclopCompile (its own shape)."""

    def make(c: C) -> Callable[..., int]:
        def body(*args: Any) -> int:
            op_type, num_inputs = _text(c, args[0]), args[1]
            num_outputs, output_descs = (args[3], args[4]) if api == "aclopCompile" else (args[4], args[5])
            outputs = None
            if num_outputs > 0 and output_descs != c.ffi.NULL:
                pointers = c.ffi.unpack(c.ffi.cast("void **", output_descs), num_outputs)
                outputs = [_desc(c, p, api) for p in pointers]
            flag = args[flag_at] if flag_at is not None else None
            op.refuse_execution(api, op_type, num_inputs, num_outputs, outputs, flag)
            return 0

        return body

    return make


def aclGetCompileopt(c: C) -> Callable[[int, Any, int], int]:  # noqa: N802
    def body(opt: int, value: Any, length: int) -> int:
        if value == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "value is NULL: it must point to length bytes")
        text = op.aclGetCompileopt(opt, length).encode() + b"\0"
        c.ffi.memmove(value, text, len(text))
        return 0

    return body


def aclSetCompileopt(c: C) -> Callable[[int, Any], int]:  # noqa: N802
    return lambda opt, value: _returning_0(op.aclSetCompileopt)(opt, _text(c, value))


def _returning_0(function: Callable[..., None]) -> Callable[..., int]:
    def body(*args: Any) -> int:
        function(*args)
        return 0

    return body


def aclCreateGraphDumpOpt(c: C) -> Callable[[], Any]:  # noqa: N802
    return lambda: c.ffi.cast("aclGraphDumpOption *", HANDLES.put(object()))


def aclDestroyGraphDumpOpt(c: C) -> Callable[[Any], int]:  # noqa: N802
    def body(handle: Any) -> int:
        if not c.address(handle):
            raise AclError(ACL_ERROR_INVALID_PARAM, "graphDumpOpt is NULL")
        HANDLES.drop(c.address(handle), "was destroyed by aclDestroyGraphDumpOpt")
        return 0

    return body


# -- versions and profiling reports -----------------------------------------------------------------------------


def aclsysGetCANNVersion(c: C) -> Callable[[int, Any], int]:  # noqa: N802
    def body(name: int, version: Any) -> int:
        if version == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "version is NULL: it must point to an aclCANNPackageVersion")
        text, *parts = host.aclsysGetCANNVersion(name)
        size = c.ffi.sizeof("aclCANNPackageVersion")
        c.ffi.memmove(version, bytes(size), size)
        version.version = text.encode()[: host.ACL_PKG_VERSION_MAX_SIZE - 1]
        for field, part in zip(("majorVersion", "minorVersion", "releaseVersion", "patchVersion"), parts, strict=True):
            setattr(version, field, part.encode()[: PARTS_MAX - 1])
        return 0

    return body


def MsprofGetHashId(c: C) -> Callable[[Any, int], int]:  # noqa: N802
    """A stable 64-bit id of the text (the maximum for NULL or empty text, as libprofapi answers)."""

    def body(info: Any, length: int) -> int:
        if info == c.ffi.NULL or length == 0:
            return 2**64 - 1
        digest = hashlib.blake2b(c.ffi.buffer(info, length)[:], digest_size=8).digest()
        value: int = struct.unpack("<Q", digest)[0]
        return value

    return body


def _accept(*_: Any) -> int:
    return 0


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclCreateTensorDesc": aclCreateTensorDesc,
    "aclDestroyTensorDesc": aclDestroyTensorDesc,
    "aclGetTensorDescType": _getter(op.aclGetTensorDescType, "aclGetTensorDescType"),
    "aclGetTensorDescFormat": _getter(op.aclGetTensorDescFormat, "aclGetTensorDescFormat"),
    "aclGetTensorDescSize": _getter(op.aclGetTensorDescSize, "aclGetTensorDescSize"),
    "aclGetTensorDescElementCount": _getter(op.aclGetTensorDescElementCount, "aclGetTensorDescElementCount"),
    "aclGetTensorDescNumDims": _getter(op.aclGetTensorDescNumDims, "aclGetTensorDescNumDims"),
    "aclGetTensorDescDim": aclGetTensorDescDim,
    "aclGetTensorDescDimV2": aclGetTensorDescDimV2,
    "aclSetTensorDescName": aclSetTensorDescName,
    "aclGetTensorDescName": aclGetTensorDescName,
    "aclSetTensorFormat": _format_setter(op.aclSetTensorFormat, "aclSetTensorFormat"),
    "aclSetTensorStorageFormat": _format_setter(op.aclSetTensorStorageFormat, "aclSetTensorStorageFormat"),
    "aclSetTensorOriginFormat": _format_setter(op.aclSetTensorOriginFormat, "aclSetTensorOriginFormat"),
    "aclSetTensorPlaceMent": _format_setter(op.aclSetTensorPlaceMent, "aclSetTensorPlaceMent"),
    "aclSetTensorShape": _shape_setter(op.aclSetTensorShape, "aclSetTensorShape"),
    "aclSetTensorStorageShape": _shape_setter(op.aclSetTensorStorageShape, "aclSetTensorStorageShape"),
    "aclSetTensorOriginShape": _shape_setter(op.aclSetTensorOriginShape, "aclSetTensorOriginShape"),
    "aclopCreateAttr": aclopCreateAttr,
    "aclopDestroyAttr": aclopDestroyAttr,
    "aclopSetAttrBool": _attr_setter("aclopSetAttrBool", lambda c, n, v: None),
    "aclopSetAttrInt": _attr_setter("aclopSetAttrInt", lambda c, n, v: None),
    "aclopSetAttrFloat": _attr_setter("aclopSetAttrFloat", lambda c, n, v: None),
    "aclopSetAttrDataType": _attr_setter("aclopSetAttrDataType", lambda c, n, v: None),
    "aclopSetAttrString": aclopSetAttrString,
    "aclopSetAttrListBool": _attr_setter("aclopSetAttrListBool", _list("uint8_t *")),
    "aclopSetAttrListInt": _attr_setter("aclopSetAttrListInt", _list("int64_t *")),
    "aclopSetAttrListFloat": _attr_setter("aclopSetAttrListFloat", _list("float *")),
    "aclopSetAttrListDataType": _attr_setter("aclopSetAttrListDataType", _list("int *")),
    "aclopSetAttrListString": _attr_setter("aclopSetAttrListString", _strings),
    "aclopSetAttrListListInt": aclopSetAttrListListInt,
    "aclopCompileAndExecute": _refuse("aclopCompileAndExecute", 9),
    "aclopCompileAndExecuteV2": _refuse("aclopCompileAndExecuteV2", 9),
    "aclopExecute": _refuse("aclopExecute", None),
    "aclopExecuteV2": _refuse("aclopExecuteV2", None),
    "aclopCompile": _refuse("aclopCompile", 7),
    "aclGenGraphAndDumpForOp": _refuse("aclGenGraphAndDumpForOp", None),
    "aclSetCompileopt": aclSetCompileopt,
    "aclGetCompileoptSize": lambda c: op.aclGetCompileoptSize,
    "aclGetCompileopt": aclGetCompileopt,
    "aclopSetCompileFlag": lambda c: _returning_0(op.aclopSetCompileFlag),
    "aclCreateGraphDumpOpt": aclCreateGraphDumpOpt,
    "aclDestroyGraphDumpOpt": aclDestroyGraphDumpOpt,
    "aclsysGetCANNVersion": aclsysGetCANNVersion,
    "MsprofGetHashId": MsprofGetHashId,
    "MsprofSysCycleTime": lambda c: time.monotonic_ns,
    **{
        name: lambda c: _accept
        for name in (
            "MsprofRegisterCallback",
            "MsprofReportApi",
            "MsprofReportCompactInfo",
            "MsprofReportAdditionalInfo",
            "MsprofSetDeviceIdByGeModelIdx",
        )
    },
}
