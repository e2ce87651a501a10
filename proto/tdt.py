"""TDT host objects: data items, datasets, queue attributes, queue routes, route lists and route queries.

As in the runtime, these live in the program (no device, no round trip); the channels and queues they are sent to
or describe are device objects (`server.npu.tdt`). Checks and codes read from the runtime's
src/acl/acl_tdt_channel/tensor_data_transfer.cpp and src/acl/acl_tdt_queue/queue.cpp, written in vnpu's terms.

A data item keeps its data as the program gave it (`data`: a buffer, or for C the address; `size` bytes), never a
copy, as acltdtCreateDataItem does; an item a receive created owns its bytes. `wire()` is what a send carries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Final

from proto.constants import (
    ACL_TDT_QUEUE_ROUTE_UNBIND,
    aclDataType,
    acltdtQueueAttrType,
    acltdtQueueRouteParamType,
    acltdtQueueRouteQueryInfoParamType,
    acltdtQueueRouteQueryMode,
    acltdtTensorType,
)
from proto.errors import ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_INVALID_PARAM, AclError

MAX_DIM_COUNT: Final = 128  # acltdtCreateDataItem's MAX_DIM_CNT
MAX_NAME_LEN: Final = 128  # RT_MQ_MAX_NAME_LEN: a channel or queue name with its NUL
# the item kinds a channel carries (the others have no TDT data type: a send refuses them)
SENDABLE: Final = frozenset(t for t in acltdtTensorType if t != acltdtTensorType.ACL_TENSOR_DATA_UNDEFINED)


def invalid(message: str, api: str = "") -> AclError:
    return AclError(ACL_ERROR_INVALID_PARAM, message, api)


@dataclass(eq=False)
class acltdtDataItem:  # noqa: N801 - the C type's name
    tensor_type: int
    dims: tuple[int, ...]
    data_type: int
    data: Any  # a buffer (Python), an address (C), or the received bytes
    size: int
    slice_num: int = 0
    slice_id: int = 0


@dataclass(eq=False)
class acltdtDataset:  # noqa: N801
    name: str = ""
    items: list[acltdtDataItem] = field(default_factory=list)
    owns_items: bool = False  # filled by a receive (the runtime's freeSelf): no item may be added


def name_checked(name: str | None, what: str, api: str) -> str:
    if name is None:
        raise invalid(f"{what} is NULL", api)
    if len(name.encode()) + 1 > MAX_NAME_LEN:
        raise invalid(f"{what} '{name}' is {len(name.encode()) + 1} bytes with its NUL, more than {MAX_NAME_LEN}", api)
    return name


def acltdtCreateDataItem(  # noqa: N802
    tdtType: int,  # noqa: N803
    dims: list[int] | None,
    dimNum: int,  # noqa: N803
    dataType: int,  # noqa: N803
    data: Any,
    size: int,
) -> acltdtDataItem:
    """`dims` None is C's NULL; `dimNum` the count C passes (a Python caller passes len(dims))."""
    api = "acltdtCreateDataItem"
    if dims is None and dimNum != 0:
        raise invalid(f"dims is NULL but dimNum is {dimNum}: with no dims, dimNum must be 0", api)
    if dims is not None and dimNum == 0:
        raise invalid("dims is not NULL but dimNum is 0: give dimNum > 0 or dims NULL", api)
    if dimNum > MAX_DIM_COUNT:
        raise invalid(f"dimNum {dimNum} is larger than {MAX_DIM_COUNT}, the most dims an item has", api)
    if tdtType != acltdtTensorType.ACL_TENSOR_DATA_TENSOR:
        if dims is not None:
            raise invalid(f"dims must be NULL for an item of tensor type {tdtType} (only a tensor has dims)", api)
        return acltdtDataItem(tdtType, (), aclDataType.ACL_DT_UNDEFINED, None, 0)
    return acltdtDataItem(tdtType, tuple(int(d) for d in (dims or ())[:dimNum]), dataType, data, size)


def dims_into(item: acltdtDataItem, has_dims: bool, dimNum: int) -> tuple[int, ...]:  # noqa: N803
    """acltdtGetDimsFromItem's checks; the dims to write."""
    api = "acltdtGetDimsFromItem"
    if not has_dims and dimNum != 0:
        raise invalid(f"dims is NULL but dimNum is {dimNum}: with no dims, dimNum must be 0", api)
    if has_dims and dimNum == 0:
        raise invalid("dims is not NULL but dimNum is 0", api)
    if dimNum < len(item.dims):
        raise invalid(f"dimNum {dimNum} is less than the item's {len(item.dims)} dims", api)
    return item.dims


def acltdtAddDataItem(dataset: acltdtDataset, dataItem: acltdtDataItem) -> None:  # noqa: N802, N803
    if dataset.owns_items:
        raise AclError(
            ACL_ERROR_FEATURE_UNSUPPORTED,
            "the dataset holds the items a receive created: no item can be added to it",
            "acltdtAddDataItem",
        )
    dataset.items.append(dataItem)


def acltdtGetDataItem(dataset: acltdtDataset, index: int) -> acltdtDataItem:  # noqa: N802
    if index >= len(dataset.items):
        raise invalid(f"index {index} is not less than the dataset's size {len(dataset.items)}", "acltdtGetDataItem")
    return dataset.items[index]


def wire(dataset: acltdtDataset, data_of: Any) -> list[dict[str, Any]]:
    """The items a send carries; `data_of(item)` reads an item's bytes (the C layer reads through its address)."""
    out = []
    for index, item in enumerate(dataset.items):
        if item.tensor_type not in SENDABLE:
            raise invalid(f"item {index} has tensor type {item.tensor_type}, which a channel cannot carry")
        data = bytes(data_of(item)) if item.size else b""
        out.append(
            {
                "tensorType": int(item.tensor_type),
                "dims": list(item.dims),
                "dataType": int(item.data_type),
                "data": data,
                "sliceNum": item.slice_num,
                "sliceId": item.slice_id,
            }
        )
    return out


def received(dataset: acltdtDataset, name: str, items: list[dict[str, Any]]) -> None:
    """Fill `dataset` with what a receive brought (acltdtReceiveTensor's checks ran before the call)."""
    dataset.items = [
        acltdtDataItem(
            i["tensorType"], tuple(i["dims"]), i["dataType"], i["data"], len(i["data"]), i["sliceNum"], i["sliceId"]
        )
        for i in items
    ]
    dataset.name = name
    dataset.owns_items = True


def receivable(dataset: acltdtDataset) -> None:
    if dataset.items and not dataset.owns_items:
        raise invalid(
            f"the dataset holds {len(dataset.items)} items of the program's: a receive needs an empty dataset "
            "(or one a receive filled)",
            "acltdtReceiveTensor",
        )


# --- queues: attributes, routes, route lists, route queries


@dataclass(eq=False)
class acltdtQueueAttr:  # noqa: N801
    name: str = ""
    depth: int = 2  # the runtime's default depth (tagMemQueueAttr)
    name_address: int = 0  # C: the char* the program set, handed back by a get


@dataclass(eq=False)
class acltdtQueueRoute:  # noqa: N801
    src: int
    dst: int
    status: int = ACL_TDT_QUEUE_ROUTE_UNBIND


@dataclass(eq=False)
class acltdtQueueRouteList:  # noqa: N801
    routes: list[acltdtQueueRoute] = field(default_factory=list)


@dataclass(eq=False)
class acltdtQueueRouteQueryInfo:  # noqa: N801
    mode: int | None = None
    src: int | None = None
    dst: int | None = None


def acltdtGetQueueRoute(routeList: acltdtQueueRouteList, index: int) -> acltdtQueueRoute:  # noqa: N802, N803
    if index >= len(routeList.routes):
        raise invalid(
            f"index {index} must be less than the list's {len(routeList.routes)} routes", "acltdtGetQueueRoute"
        )
    return routeList.routes[index]


def query_checked(info: acltdtQueueRouteQueryInfo) -> tuple[int, int | None, int | None]:
    """acltdtQueryQueueRoutes' checks of the query: (mode, src, dst)."""
    api = "acltdtQueryQueueRoutes"
    mode = acltdtQueueRouteQueryMode
    if info.mode is None:
        raise invalid(
            "the query has no mode: set ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM with acltdtSetQueueRouteQueryInfo", api
        )
    if info.mode not in set(mode):
        raise invalid(f"query mode {info.mode} is not an acltdtQueueRouteQueryMode", api)
    needs_src = info.mode in (mode.ACL_TDT_QUEUE_ROUTE_QUERY_SRC, mode.ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST)
    needs_dst = info.mode in (mode.ACL_TDT_QUEUE_ROUTE_QUERY_DST, mode.ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST)
    if needs_src and info.src is None:
        raise invalid(f"query mode {mode(info.mode).name} needs the source queue id: set it first", api)
    if needs_dst and info.dst is None:
        raise invalid(f"query mode {mode(info.mode).name} needs the destination queue id: set it first", api)
    return info.mode, info.src, info.dst


def set_queue_attr(attr: acltdtQueueAttr, kind: int, value: Any) -> None:
    """acltdtSetQueueAttr of a value already read (C: through `param`, its length checked)."""
    if kind == acltdtQueueAttrType.ACL_TDT_QUEUE_NAME_PTR:
        attr.name = name_checked(value, "the queue name", "acltdtSetQueueAttr")
    elif kind == acltdtQueueAttrType.ACL_TDT_QUEUE_DEPTH_UINT32:
        attr.depth = int(value)
    else:
        kind_checked(acltdtQueueAttrType, kind, "acltdtSetQueueAttr")


def kind_checked(enum: type[IntEnum], kind: int, api: str) -> IntEnum:
    try:
        return enum(kind)
    except ValueError:
        names = " or ".join(enum.__members__)
        raise invalid(f"type {kind} is not an {enum.__name__} ({names})", api) from None


def route_param(route: acltdtQueueRoute, kind: int) -> int:
    which = kind_checked(acltdtQueueRouteParamType, kind, "acltdtGetQueueRouteParam")
    if which == acltdtQueueRouteParamType.ACL_TDT_QUEUE_ROUTE_SRC_UINT32:
        return route.src
    if which == acltdtQueueRouteParamType.ACL_TDT_QUEUE_ROUTE_DST_UINT32:
        return route.dst
    return route.status


def set_query_info(info: acltdtQueueRouteQueryInfo, kind: int, value: int) -> None:
    which = kind_checked(acltdtQueueRouteQueryInfoParamType, kind, "acltdtSetQueueRouteQueryInfo")
    if which == acltdtQueueRouteQueryInfoParamType.ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM:
        info.mode = int(value)
    elif which == acltdtQueueRouteQueryInfoParamType.ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32:
        info.src = int(value)
    else:
        info.dst = int(value)
