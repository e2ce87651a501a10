"""TDT for C (acl/acl_tdt.h, acl/acl_tdt_queue.h): `proto.tdt`'s host objects behind opaque pointers, and the
channel, queue and route calls over `client.tdt` and the call table.

A data item keeps the program's data pointer (no copy, as the runtime): a send reads `size` bytes through it; an
item a receive created holds its bytes in memory of this library, valid until its dataset is destroyed or
receives again. Attributes are read and written through `param` with the runtime's length rules: a value wider
than `len` (a set) or a `len` smaller than the value (a get) is ACL_ERROR_INVALID_PARAM. Each dataset's name and
each queue attribute's name are C strings owned here, as long as their object lives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import proto.tdt as t
from client import acl
from client import tdt as client_tdt
from client.capi.convert import C
from client.capi.hostobj import HANDLES
from proto.constants import acltdtQueueAttrType, acltdtQueueRouteParamType, acltdtTensorType
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_SUCCESS, AclError

POINTER_SIZE = 8
U32_SIZE = 4
_owned: dict[int, list[Any]] = {}  # handle -> C memory it keeps alive (a received item's bytes)
_item_handles: dict[int, int] = {}  # id(item) -> its handle (an item has one address for its life)
_strings: dict[int, tuple[str, Any]] = {}  # handle -> the C string of its name (a dataset's, a queue attribute's)


def _call(api: str) -> Callable[..., Any]:
    """The current session's call (the C guard turns its errors into codes)."""
    return acl.current(api).call


def _obj(address: int, cls: type, arg: str, api: str) -> Any:
    if not address:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{arg} is NULL", api)
    return HANDLES.get(address, cls, arg, api, ACL_ERROR_INVALID_PARAM)


def _put(c: C, obj: object, ctype: str) -> Any:
    address = HANDLES.put(obj)
    if isinstance(obj, t.acltdtDataItem):
        _item_handles[id(obj)] = address
    return c.ffi.cast(ctype, address)


def _drop(address: int, what: str) -> None:
    obj = HANDLES._live.get(address)
    if isinstance(obj, t.acltdtDataItem):
        _item_handles.pop(id(obj), None)
    _owned.pop(address, None)
    _strings.pop(address, None)
    HANDLES.drop(address, f"was destroyed ({what})")


def _keep(address: int, memory: Any) -> Any:
    _owned.setdefault(address, []).append(memory)
    return memory


def _c_string(c: C, address: int, text: str) -> Any:
    """`text` as a C string owned by the object at `address`: the same one while the text stays the same."""
    kept = _strings.get(address)
    if kept is None or kept[0] != text:
        kept = _strings[address] = (text, c.ffi.new("char[]", text.encode()))
    return kept[1]


def _not_null(c: C, pointer: Any, arg: str, api: str) -> None:
    if pointer == c.ffi.NULL:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{arg} is NULL: it must point to where the result goes", api)


def _read_uint(c: C, pointer: Any, length: int, width: int, arg: str, api: str) -> int:
    """The runtime's CopyParam into a `width`-byte field: at most `width` bytes, read from `pointer`."""
    _not_null(c, pointer, arg, api)
    if length > width:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"len {length} is larger than the {width} bytes of the value", api)
    return int.from_bytes(c.ffi.buffer(c.ffi.cast("char *", pointer), length)[:], "little")


def _write(c: C, value: bytes, param: Any, length: int, ret_size: Any, api: str) -> None:
    _not_null(c, ret_size, "paramRetSize", api)
    _not_null(c, param, "param", api)
    if length < len(value):
        raise AclError(
            ACL_ERROR_INVALID_PARAM, f"len {length} is smaller than the {len(value)} bytes of the value", api
        )
    c.ffi.memmove(param, value, len(value))
    ret_size[0] = len(value)


# --- data items and datasets


def _item(c: C, pointer: Any, api: str) -> t.acltdtDataItem:
    return _obj(c.address(pointer), t.acltdtDataItem, "dataItem", api)  # type: ignore[no-any-return]


def _dataset(c: C, pointer: Any, api: str) -> t.acltdtDataset:
    return _obj(c.address(pointer), t.acltdtDataset, "dataset", api)  # type: ignore[no-any-return]


def acltdtCreateDataItem(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(tdt_type: int, dims: Any, dim_num: int, data_type: int, data: Any, size: int) -> Any:
        given = None if dims == c.ffi.NULL else list(c.ffi.unpack(dims, min(dim_num, t.MAX_DIM_COUNT + 1)))
        item = t.acltdtCreateDataItem(tdt_type, given, dim_num, data_type, c.address(data), size)
        return _put(c, item, "acltdtDataItem *")

    return body


def acltdtDestroyDataItem(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(item: Any) -> int:
        _item(c, item, "acltdtDestroyDataItem")
        _drop(c.address(item), "acltdtDestroyDataItem")
        return ACL_SUCCESS

    return body


def acltdtCreateDataset(c: C) -> Callable[..., Any]:  # noqa: N802
    return lambda: _put(c, t.acltdtDataset(), "acltdtDataset *")


def _drop_received(dataset: t.acltdtDataset) -> None:
    """The items a receive created belong to their dataset: they go with it (or with its next receive)."""
    if dataset.owns_items:
        for item in dataset.items:
            handle = _item_handles.get(id(item))
            if handle:
                _drop(handle, "with its dataset")


def acltdtDestroyDataset(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(dataset: Any) -> int:
        _drop_received(_dataset(c, dataset, "acltdtDestroyDataset"))
        _drop(c.address(dataset), "acltdtDestroyDataset")
        return ACL_SUCCESS

    return body


def acltdtGetDataItem(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(dataset: Any, index: int) -> Any:
        item = t.acltdtGetDataItem(_dataset(c, dataset, "acltdtGetDataItem"), index)
        return c.ffi.cast("acltdtDataItem *", _item_handles[id(item)])

    return body


def acltdtAddDataItem(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(dataset: Any, item: Any) -> int:
        api = "acltdtAddDataItem"
        found = _dataset(c, dataset, api)
        t.acltdtAddDataItem(found, _item(c, item, api))
        return ACL_SUCCESS

    return body


def _or(c: C, pointer: Any, default: Any, read: Callable[[Any], Any]) -> Any:
    """What a getter returns: `default` for a NULL object (the runtime's), else the value read."""
    if pointer == c.ffi.NULL:
        return default
    return read(pointer)


def acltdtGetDatasetSize(c: C) -> Callable[..., Any]:  # noqa: N802
    return lambda ds: _or(c, ds, 0, lambda p: len(_dataset(c, p, "acltdtGetDatasetSize").items))


def acltdtGetDatasetName(c: C) -> Callable[..., Any]:  # noqa: N802
    def read(pointer: Any) -> Any:
        name = _dataset(c, pointer, "acltdtGetDatasetName").name
        return _c_string(c, c.address(pointer), name)

    return lambda ds: _or(c, ds, c.ffi.NULL, read)


def _item_getter(c: C, api: str, default: Any, value: Callable[[t.acltdtDataItem], Any]) -> Callable[..., Any]:
    return lambda p: _or(c, p, default, lambda q: value(_item(c, q, api)))


def acltdtGetSliceInfoFromItem(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(item: Any, slice_num: Any, slice_id: Any) -> int:
        api = "acltdtGetSliceInfoFromItem"
        found = _item(c, item, api)
        _not_null(c, slice_num, "sliceNum", api)
        _not_null(c, slice_id, "sliceId", api)
        slice_num[0], slice_id[0] = found.slice_num, found.slice_id
        return ACL_SUCCESS

    return body


def acltdtGetDimsFromItem(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(item: Any, dims: Any, dim_num: int) -> int:
        found = _item(c, item, "acltdtGetDimsFromItem")
        for index, value in enumerate(t.dims_into(found, dims != c.ffi.NULL, dim_num)):
            dims[index] = value
        return ACL_SUCCESS

    return body


# --- channels


def _handle(c: C, pointer: Any) -> int:
    return c.address(pointer)


def _channel_creator(name: str, capacity: bool) -> Callable[[C], Callable[..., Any]]:
    def make(c: C) -> Callable[..., Any]:
        def body(device_id: int, channel: Any, *rest: int) -> Any:
            text = None if channel == c.ffi.NULL else c.ffi.string(channel).decode()
            handle = _call(name)(name, device_id, text, *rest)
            return c.ffi.cast("acltdtChannelHandle *", handle)

        return body

    return make


def _channel_call(name: str) -> Callable[[C], Callable[..., Any]]:
    def make(c: C) -> Callable[..., Any]:
        def body(handle: Any) -> int:
            _call(name)(name, _handle(c, handle))
            return ACL_SUCCESS

        return body

    return make


def acltdtSendTensor(c: C) -> Callable[..., Any]:  # noqa: N802
    def data_of(item: t.acltdtDataItem) -> bytes:
        if not item.data:
            raise AclError(ACL_ERROR_INVALID_PARAM, f"an item of {item.size} bytes has NULL data", "acltdtSendTensor")
        return bytes(c.ffi.buffer(c.ffi.cast("char *", item.data), item.size))

    def body(handle: Any, dataset: Any, timeout: int) -> int:
        api = "acltdtSendTensor"
        _call(api)(api, *client_tdt.send_args(_handle(c, handle), _dataset(c, dataset, api), timeout, data_of))
        return ACL_SUCCESS

    return body


def acltdtReceiveTensor(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(handle: Any, dataset: Any, timeout: int) -> int:
        api = "acltdtReceiveTensor"
        found = _dataset(c, dataset, api)
        name, items = _call(api)(api, *client_tdt.receive_args(_handle(c, handle), found, timeout))
        _drop_received(found)
        t.received(found, name, items)
        for item in found.items:
            memory = c.ffi.new("char[]", bytes(item.data) or b"\0")
            item.data = c.address(memory)
            _keep(c.address(_put(c, item, "acltdtDataItem *")), memory)
        return ACL_SUCCESS

    return body


def acltdtQueryChannelSize(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(handle: Any, size: Any) -> int:
        _not_null(c, size, "size", "acltdtQueryChannelSize")
        size[0] = _call("acltdtQueryChannelSize")("acltdtQueryChannelSize", _handle(c, handle))
        return ACL_SUCCESS

    return body


# --- queues and routes


def _attr(c: C, pointer: Any, api: str) -> t.acltdtQueueAttr:
    return _obj(c.address(pointer), t.acltdtQueueAttr, "attr", api)  # type: ignore[no-any-return]


def _list(c: C, pointer: Any, arg: str, api: str) -> t.acltdtQueueRouteList:
    return _obj(c.address(pointer), t.acltdtQueueRouteList, arg, api)  # type: ignore[no-any-return]


def _route(c: C, pointer: Any, api: str) -> t.acltdtQueueRoute:
    return _obj(c.address(pointer), t.acltdtQueueRoute, "route", api)  # type: ignore[no-any-return]


def _info(c: C, pointer: Any, arg: str, api: str) -> t.acltdtQueueRouteQueryInfo:
    return _obj(c.address(pointer), t.acltdtQueueRouteQueryInfo, arg, api)  # type: ignore[no-any-return]


def acltdtCreateQueue(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(attr: Any, qid: Any) -> int:
        api = "acltdtCreateQueue"
        found = _attr(c, attr, api)
        _not_null(c, qid, "qid", api)
        qid[0] = client_tdt.SESSION[api](_call(api), found)
        return ACL_SUCCESS

    return body


def acltdtDestroyQueue(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(qid: int) -> int:
        _call("acltdtDestroyQueue")("acltdtDestroyQueue", qid)
        return ACL_SUCCESS

    return body


def acltdtEnqueueData(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(qid: int, data: Any, size: int, user: Any, user_size: int, timeout: int, rsv: int) -> int:
        api = "acltdtEnqueueData"
        if data == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "data is NULL", api)
        payload = bytes(c.ffi.buffer(c.ffi.cast("char *", data), size)) if size else b""
        extra = (
            b"" if user == c.ffi.NULL or not user_size else bytes(c.ffi.buffer(c.ffi.cast("char *", user), user_size))
        )
        _call(api)(api, qid, payload, extra, timeout, rsv)
        return ACL_SUCCESS

    return body


def acltdtDequeueData(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(qid: int, data: Any, size: int, ret_size: Any, user: Any, user_size: int, timeout: int) -> int:
        api = "acltdtDequeueData"
        if data == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "data is NULL: it must hold dataSize bytes", api)
        _not_null(c, ret_size, "retDataSize", api)
        got, length, extra = _call(api)(api, qid, size, user_size if user != c.ffi.NULL else 0, timeout)
        c.ffi.memmove(data, got, len(got))
        if extra:
            c.ffi.memmove(user, extra, len(extra))
        ret_size[0] = length
        return ACL_SUCCESS

    return body


def _route_call(name: str) -> Callable[[C], Callable[..., Any]]:
    def make(c: C) -> Callable[..., Any]:
        def body(route_list: Any) -> int:
            client_tdt.SESSION[name](_call(name), _list(c, route_list, "qRouteList", name))
            return ACL_SUCCESS

        return body

    return make


def acltdtQueryQueueRoutes(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(info: Any, route_list: Any) -> int:
        api = "acltdtQueryQueueRoutes"
        found = _info(c, info, "queryInfo", api)
        client_tdt.SESSION[api](_call(api), found, _list(c, route_list, "qRouteList", api))
        return ACL_SUCCESS

    return body


def _creator(cls: type, ctype: str) -> Callable[[C], Callable[..., Any]]:
    return lambda c: lambda *args: _put(c, cls(*args), ctype)


def _destroyer(cls: type, arg: str, api: str) -> Callable[[C], Callable[..., Any]]:
    def make(c: C) -> Callable[..., Any]:
        def body(pointer: Any) -> int:
            _obj(c.address(pointer), cls, arg, api)
            _drop(c.address(pointer), api)
            return ACL_SUCCESS

        return body

    return make


def acltdtSetQueueAttr(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(attr: Any, kind: int, length: int, param: Any) -> int:
        api = "acltdtSetQueueAttr"
        found = _attr(c, attr, api)
        if kind == acltdtQueueAttrType.ACL_TDT_QUEUE_NAME_PTR:
            _not_null(c, param, "param", api)
            if length != POINTER_SIZE:
                raise AclError(
                    ACL_ERROR_INVALID_PARAM, f"len {length}: the name is given as a char* ({POINTER_SIZE})", api
                )
            pointer = c.ffi.cast("char **", param)[0]
            if pointer == c.ffi.NULL:
                raise AclError(ACL_ERROR_INVALID_PARAM, "the queue name the param points to is NULL", api)
            t.set_queue_attr(found, kind, c.ffi.string(pointer, t.MAX_NAME_LEN).decode())
        else:
            t.set_queue_attr(found, kind, _read_uint(c, param, length, U32_SIZE, "param", api))
        return ACL_SUCCESS

    return body


def acltdtGetQueueAttr(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(attr: Any, kind: int, length: int, ret_size: Any, param: Any) -> int:
        api = "acltdtGetQueueAttr"
        found = _attr(c, attr, api)
        which = t.kind_checked(acltdtQueueAttrType, kind, api)
        if which == acltdtQueueAttrType.ACL_TDT_QUEUE_NAME_PTR:
            name = _c_string(c, c.address(attr), found.name)
            value = c.address(name).to_bytes(POINTER_SIZE, "little")
        else:
            value = found.depth.to_bytes(U32_SIZE, "little")
        _write(c, value, param, length, ret_size, api)
        return ACL_SUCCESS

    return body


def acltdtGetQueueRouteParam(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(route: Any, kind: int, length: int, ret_size: Any, param: Any) -> int:
        api = "acltdtGetQueueRouteParam"
        value = t.route_param(_route(c, route, api), kind)
        signed = kind == acltdtQueueRouteParamType.ACL_TDT_QUEUE_ROUTE_STATUS_INT32
        _write(c, value.to_bytes(U32_SIZE, "little", signed=signed), param, length, ret_size, api)
        return ACL_SUCCESS

    return body


def acltdtAddQueueRoute(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(route_list: Any, route: Any) -> int:
        api = "acltdtAddQueueRoute"
        client_tdt.acltdtAddQueueRoute(_list(c, route_list, "routeList", api), _route(c, route, api))
        return ACL_SUCCESS

    return body


def acltdtGetQueueRoute(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(route_list: Any, index: int, route: Any) -> int:
        api = "acltdtGetQueueRoute"
        found = _list(c, route_list, "routeList", api)
        into = _route(c, route, api)
        got = t.acltdtGetQueueRoute(found, index)
        into.src, into.dst, into.status = got.src, got.dst, got.status
        return ACL_SUCCESS

    return body


def acltdtGetQueueRouteNum(c: C) -> Callable[..., Any]:  # noqa: N802
    return lambda p: _or(c, p, 0, lambda q: len(_list(c, q, "routeList", "acltdtGetQueueRouteNum").routes))


def acltdtSetQueueRouteQueryInfo(c: C) -> Callable[..., Any]:  # noqa: N802
    def body(info: Any, kind: int, length: int, value: Any) -> int:
        api = "acltdtSetQueueRouteQueryInfo"
        found = _info(c, info, "param", api)
        t.set_query_info(found, kind, _read_uint(c, value, length, U32_SIZE, "value", api))
        return ACL_SUCCESS

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "acltdtCreateDataItem": acltdtCreateDataItem,
    "acltdtDestroyDataItem": acltdtDestroyDataItem,
    "acltdtCreateDataset": acltdtCreateDataset,
    "acltdtDestroyDataset": acltdtDestroyDataset,
    "acltdtGetDataItem": acltdtGetDataItem,
    "acltdtAddDataItem": acltdtAddDataItem,
    "acltdtGetDatasetSize": acltdtGetDatasetSize,
    "acltdtGetDatasetName": acltdtGetDatasetName,
    "acltdtGetTensorTypeFromItem": lambda c: _item_getter(
        c, "acltdtGetTensorTypeFromItem", acltdtTensorType.ACL_TENSOR_DATA_UNDEFINED, lambda i: i.tensor_type
    ),
    "acltdtGetDataTypeFromItem": lambda c: _item_getter(c, "acltdtGetDataTypeFromItem", -1, lambda i: i.data_type),
    "acltdtGetDataAddrFromItem": lambda c: _item_getter(
        c, "acltdtGetDataAddrFromItem", c.ffi.NULL, lambda i: c.ffi.cast("void *", i.data or 0)
    ),
    "acltdtGetDataSizeFromItem": lambda c: _item_getter(c, "acltdtGetDataSizeFromItem", 0, lambda i: i.size),
    "acltdtGetDimNumFromItem": lambda c: _item_getter(c, "acltdtGetDimNumFromItem", 0, lambda i: len(i.dims)),
    "acltdtGetSliceInfoFromItem": acltdtGetSliceInfoFromItem,
    "acltdtGetDimsFromItem": acltdtGetDimsFromItem,
    "acltdtCreateChannelWithCapacity": _channel_creator("acltdtCreateChannelWithCapacity", True),
    "acltdtCreateChannel": _channel_creator("acltdtCreateChannel", False),
    "acltdtStopChannel": _channel_call("acltdtStopChannel"),
    "acltdtCleanChannel": _channel_call("acltdtCleanChannel"),
    "acltdtDestroyChannel": _channel_call("acltdtDestroyChannel"),
    "acltdtSendTensor": acltdtSendTensor,
    "acltdtReceiveTensor": acltdtReceiveTensor,
    "acltdtQueryChannelSize": acltdtQueryChannelSize,
    "acltdtCreateQueue": acltdtCreateQueue,
    "acltdtDestroyQueue": acltdtDestroyQueue,
    "acltdtEnqueueData": acltdtEnqueueData,
    "acltdtDequeueData": acltdtDequeueData,
    "acltdtBindQueueRoutes": _route_call("acltdtBindQueueRoutes"),
    "acltdtUnbindQueueRoutes": _route_call("acltdtUnbindQueueRoutes"),
    "acltdtQueryQueueRoutes": acltdtQueryQueueRoutes,
    "acltdtCreateQueueAttr": _creator(t.acltdtQueueAttr, "acltdtQueueAttr *"),
    "acltdtDestroyQueueAttr": _destroyer(t.acltdtQueueAttr, "attr", "acltdtDestroyQueueAttr"),
    "acltdtSetQueueAttr": acltdtSetQueueAttr,
    "acltdtGetQueueAttr": acltdtGetQueueAttr,
    "acltdtCreateQueueRoute": _creator(t.acltdtQueueRoute, "acltdtQueueRoute *"),
    "acltdtDestroyQueueRoute": _destroyer(t.acltdtQueueRoute, "route", "acltdtDestroyQueueRoute"),
    "acltdtGetQueueRouteParam": acltdtGetQueueRouteParam,
    "acltdtCreateQueueRouteList": _creator(t.acltdtQueueRouteList, "acltdtQueueRouteList *"),
    "acltdtDestroyQueueRouteList": _destroyer(t.acltdtQueueRouteList, "routeList", "acltdtDestroyQueueRouteList"),
    "acltdtAddQueueRoute": acltdtAddQueueRoute,
    "acltdtGetQueueRoute": acltdtGetQueueRoute,
    "acltdtGetQueueRouteNum": acltdtGetQueueRouteNum,
    "acltdtCreateQueueRouteQueryInfo": _creator(t.acltdtQueueRouteQueryInfo, "acltdtQueueRouteQueryInfo *"),
    "acltdtDestroyQueueRouteQueryInfo": _destroyer(
        t.acltdtQueueRouteQueryInfo, "info", "acltdtDestroyQueueRouteQueryInfo"
    ),
    "acltdtSetQueueRouteQueryInfo": acltdtSetQueueRouteQueryInfo,
}
