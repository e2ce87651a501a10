"""TDT from Python: the host objects of `proto.tdt` under the C names, and the calls that carry them to the device.

C argument order with the array lengths dropped: `acltdtCreateDataItem(tdtType, dims, dataType, data, size)`
(`dims` a list or None, `data` any buffer, kept as given, not copied); getters return what C writes through its
out-parameters (`acltdtGetSliceInfoFromItem(item)` -> (sliceNum, sliceId), `acltdtGetDimsFromItem(item)` -> the
dims); `acltdtSetQueueAttr(attr, type, value)` and `acltdtSetQueueRouteQueryInfo(info, type, value)` take the
value itself, `acltdtGetQueueAttr(attr, type)` and `acltdtGetQueueRouteParam(route, type)` return it;
`acltdtGetQueueRoute(list, index)` returns a copy of the route. A received item's data is `bytes`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import proto.tdt as t
from proto.constants import acltdtQueueAttrType
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError

Call = Callable[..., Any]


def _need(obj: Any, cls: type, arg: str, api: str) -> Any:
    if obj is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{arg} is NULL", api)
    if not isinstance(obj, cls):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{arg} is a {type(obj).__name__}, not an {cls.__name__}", api)
    return obj


def python_bytes(item: t.acltdtDataItem) -> bytes:
    return bytes(memoryview(item.data).cast("B")[: item.size])


# --- the calls that reach the device: each is `prepare` (the host objects to the call's wire arguments) and
# `finish` (its result back onto them), so client.acl and client.aio run the same steps around their own call


def send_args(handle: int | None, dataset: t.acltdtDataset, timeout: int, data_of: Any = None) -> tuple[Any, ...]:
    ds = _need(dataset, t.acltdtDataset, "dataset", "acltdtSendTensor")
    return handle, ds.name, t.wire(ds, data_of or python_bytes), timeout


def receive_args(handle: int | None, dataset: t.acltdtDataset, timeout: int) -> tuple[Any, ...]:
    t.receivable(_need(dataset, t.acltdtDataset, "dataset", "acltdtReceiveTensor"))
    return handle, timeout


def _received(result: tuple[str, list[Any]], handle: int | None, dataset: t.acltdtDataset, timeout: int) -> None:
    t.received(dataset, *result)


def _queue_args(attr: t.acltdtQueueAttr) -> tuple[Any, ...]:
    queue = _need(attr, t.acltdtQueueAttr, "attr", "acltdtCreateQueue")
    return queue.name, queue.depth


def _route_args(api: str) -> Callable[..., tuple[Any, ...]]:
    def prepare(routes: t.acltdtQueueRouteList) -> tuple[Any, ...]:
        found = _need(routes, t.acltdtQueueRouteList, "qRouteList", api).routes
        return ([[r.src, r.dst] for r in found],)

    return prepare


def _statuses(status: list[int], routes: t.acltdtQueueRouteList) -> None:
    for route, value in zip(routes.routes, status, strict=True):
        route.status = value


def _query_args(queryInfo: t.acltdtQueueRouteQueryInfo, qRouteList: t.acltdtQueueRouteList) -> tuple[Any, ...]:  # noqa: N803
    api = "acltdtQueryQueueRoutes"
    info = _need(queryInfo, t.acltdtQueueRouteQueryInfo, "queryInfo", api)
    _need(qRouteList, t.acltdtQueueRouteList, "qRouteList", api)
    return t.query_checked(info)


def _found(routes: list[list[int]], queryInfo: Any, qRouteList: t.acltdtQueueRouteList) -> None:  # noqa: N803
    qRouteList.routes = [t.acltdtQueueRoute(s, d, status) for s, d, status in routes]


Steps = tuple[Callable[..., tuple[Any, ...]], Callable[..., Any]]
STEPS: dict[str, Steps] = {
    "acltdtSendTensor": (send_args, lambda result, *args: None),
    "acltdtReceiveTensor": (receive_args, _received),
    "acltdtCreateQueue": (_queue_args, lambda qid, attr: int(qid)),
    "acltdtBindQueueRoutes": (_route_args("acltdtBindQueueRoutes"), _statuses),
    "acltdtUnbindQueueRoutes": (_route_args("acltdtUnbindQueueRoutes"), _statuses),
    "acltdtQueryQueueRoutes": (_query_args, _found),
}


def session_function(name: str) -> Callable[..., Any]:
    """`name` over a synchronous `call` (client.acl's, the C toolkit's)."""
    prepare, finish = STEPS[name]

    def body(call: Call, *args: Any) -> Any:
        return finish(call(name, *prepare(*args)), *args)

    body.__doc__ = f"{name}: the host objects go as their wire form, the result comes back onto them."
    return body


SESSION = {name: session_function(name) for name in STEPS}


# --- host objects


def acltdtCreateDataItem(tdtType: int, dims: list[int] | None, dataType: int, data: Any, size: int) -> Any:  # noqa: N802, N803
    return t.acltdtCreateDataItem(tdtType, dims, len(dims or ()), dataType, data, size)


def acltdtDestroyDataItem(dataItem: t.acltdtDataItem) -> None:  # noqa: N802, N803
    _need(dataItem, t.acltdtDataItem, "dataItem", "acltdtDestroyDataItem")


def acltdtCreateDataset() -> t.acltdtDataset:  # noqa: N802
    return t.acltdtDataset()


def acltdtDestroyDataset(dataset: t.acltdtDataset) -> None:  # noqa: N802
    _need(dataset, t.acltdtDataset, "dataset", "acltdtDestroyDataset")


def acltdtAddDataItem(dataset: t.acltdtDataset, dataItem: t.acltdtDataItem) -> None:  # noqa: N802, N803
    api = "acltdtAddDataItem"
    t.acltdtAddDataItem(
        _need(dataset, t.acltdtDataset, "dataset", api), _need(dataItem, t.acltdtDataItem, "dataItem", api)
    )


def acltdtGetDataItem(dataset: t.acltdtDataset, index: int) -> t.acltdtDataItem:  # noqa: N802
    return t.acltdtGetDataItem(_need(dataset, t.acltdtDataset, "dataset", "acltdtGetDataItem"), index)


def acltdtGetDatasetSize(dataset: t.acltdtDataset) -> int:  # noqa: N802
    return len(_need(dataset, t.acltdtDataset, "dataset", "acltdtGetDatasetSize").items)


def acltdtGetDatasetName(dataset: t.acltdtDataset) -> str:  # noqa: N802
    return str(_need(dataset, t.acltdtDataset, "dataset", "acltdtGetDatasetName").name)


def _item(item: Any, api: str) -> t.acltdtDataItem:
    return _need(item, t.acltdtDataItem, "dataItem", api)  # type: ignore[no-any-return]


def acltdtGetTensorTypeFromItem(dataItem: t.acltdtDataItem) -> int:  # noqa: N802, N803
    return _item(dataItem, "acltdtGetTensorTypeFromItem").tensor_type


def acltdtGetDataTypeFromItem(dataItem: t.acltdtDataItem) -> int:  # noqa: N802, N803
    return _item(dataItem, "acltdtGetDataTypeFromItem").data_type


def acltdtGetDataAddrFromItem(dataItem: t.acltdtDataItem) -> Any:  # noqa: N802, N803
    return _item(dataItem, "acltdtGetDataAddrFromItem").data


def acltdtGetDataSizeFromItem(dataItem: t.acltdtDataItem) -> int:  # noqa: N802, N803
    return _item(dataItem, "acltdtGetDataSizeFromItem").size


def acltdtGetDimNumFromItem(dataItem: t.acltdtDataItem) -> int:  # noqa: N802, N803
    return len(_item(dataItem, "acltdtGetDimNumFromItem").dims)


def acltdtGetSliceInfoFromItem(dataItem: t.acltdtDataItem) -> tuple[int, int]:  # noqa: N802, N803
    item = _item(dataItem, "acltdtGetSliceInfoFromItem")
    return item.slice_num, item.slice_id


def acltdtGetDimsFromItem(dataItem: t.acltdtDataItem) -> list[int]:  # noqa: N802, N803
    return list(_item(dataItem, "acltdtGetDimsFromItem").dims)


def acltdtCreateQueueAttr() -> t.acltdtQueueAttr:  # noqa: N802
    return t.acltdtQueueAttr()


def acltdtDestroyQueueAttr(attr: t.acltdtQueueAttr) -> None:  # noqa: N802
    _need(attr, t.acltdtQueueAttr, "attr", "acltdtDestroyQueueAttr")


def acltdtSetQueueAttr(attr: t.acltdtQueueAttr, type: int, value: Any) -> None:  # noqa: N802
    t.set_queue_attr(_need(attr, t.acltdtQueueAttr, "attr", "acltdtSetQueueAttr"), type, value)


def acltdtGetQueueAttr(attr: t.acltdtQueueAttr, type: int) -> Any:  # noqa: N802
    queue = _need(attr, t.acltdtQueueAttr, "attr", "acltdtGetQueueAttr")
    kind = t.kind_checked(acltdtQueueAttrType, type, "acltdtGetQueueAttr")
    return queue.name if kind == acltdtQueueAttrType.ACL_TDT_QUEUE_NAME_PTR else queue.depth


def acltdtCreateQueueRoute(srcId: int, dstId: int) -> t.acltdtQueueRoute:  # noqa: N802, N803
    return t.acltdtQueueRoute(srcId, dstId)


def acltdtDestroyQueueRoute(route: t.acltdtQueueRoute) -> None:  # noqa: N802
    _need(route, t.acltdtQueueRoute, "route", "acltdtDestroyQueueRoute")


def acltdtGetQueueRouteParam(route: t.acltdtQueueRoute, type: int) -> int:  # noqa: N802
    return t.route_param(_need(route, t.acltdtQueueRoute, "route", "acltdtGetQueueRouteParam"), type)


def acltdtCreateQueueRouteList() -> t.acltdtQueueRouteList:  # noqa: N802
    return t.acltdtQueueRouteList()


def acltdtDestroyQueueRouteList(routeList: t.acltdtQueueRouteList) -> None:  # noqa: N802, N803
    _need(routeList, t.acltdtQueueRouteList, "routeList", "acltdtDestroyQueueRouteList")


def acltdtAddQueueRoute(routeList: t.acltdtQueueRouteList, route: t.acltdtQueueRoute) -> None:  # noqa: N802, N803
    api = "acltdtAddQueueRoute"
    found = _need(route, t.acltdtQueueRoute, "route", api)
    _need(routeList, t.acltdtQueueRouteList, "routeList", api).routes.append(
        t.acltdtQueueRoute(found.src, found.dst, found.status)  # the runtime keeps a copy
    )


def acltdtGetQueueRoute(routeList: t.acltdtQueueRouteList, index: int) -> t.acltdtQueueRoute:  # noqa: N802, N803
    found = t.acltdtGetQueueRoute(_need(routeList, t.acltdtQueueRouteList, "routeList", "acltdtGetQueueRoute"), index)
    return t.acltdtQueueRoute(found.src, found.dst, found.status)


def acltdtGetQueueRouteNum(routeList: t.acltdtQueueRouteList) -> int:  # noqa: N802, N803
    return len(_need(routeList, t.acltdtQueueRouteList, "routeList", "acltdtGetQueueRouteNum").routes)


def acltdtCreateQueueRouteQueryInfo() -> t.acltdtQueueRouteQueryInfo:  # noqa: N802
    return t.acltdtQueueRouteQueryInfo()


def acltdtDestroyQueueRouteQueryInfo(info: t.acltdtQueueRouteQueryInfo) -> None:  # noqa: N802
    _need(info, t.acltdtQueueRouteQueryInfo, "info", "acltdtDestroyQueueRouteQueryInfo")


def acltdtSetQueueRouteQueryInfo(param: t.acltdtQueueRouteQueryInfo, type: int, value: int) -> None:  # noqa: N802
    t.set_query_info(_need(param, t.acltdtQueueRouteQueryInfo, "param", "acltdtSetQueueRouteQueryInfo"), type, value)


HOST = {
    name: f
    for name, f in dict(globals()).items()
    if name.startswith("acltdt") and getattr(f, "__module__", "") == __name__ and name not in STEPS
}
