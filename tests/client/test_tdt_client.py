"""TDT through client.acl and client.aio against a live daemon: datasets of random data come back byte for byte
over both transports, the capacity and misuse codes are the runtime's, and queues and routes read back."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import client.acl as acl
from client import aio
from client.aio import AsyncSession
from client.config import Config
from client.session import Session
from proto.errors import (
    ACL_ERROR_FEATURE_UNSUPPORTED,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_QUEUE_EMPTY,
    ACL_ERROR_RT_QUEUE_FULL,
    AclError,
)

RNG = np.random.default_rng(7)


def code_of(function: object, *args: object) -> int:
    with pytest.raises(AclError) as caught:
        function(*args)  # type: ignore[operator]
    return caught.value.code


def dataset_of(*arrays: np.ndarray) -> acl.acltdtDataset:  # type: ignore[name-defined]
    dataset = acl.acltdtCreateDataset()
    for array in arrays:
        item = acl.acltdtCreateDataItem(
            acl.ACL_TENSOR_DATA_TENSOR, list(array.shape), acl.ACL_FLOAT, array, array.nbytes
        )
        acl.acltdtAddDataItem(dataset, item)
    return dataset


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_a_capacity_channel_round_trip(daemon: str, transport: str) -> None:
    acl.use(Session(Config(endpoint=daemon, transport=transport)))
    try:
        acl.aclInit(None)
        acl.aclrtSetDevice(0)
        ch = acl.acltdtCreateChannelWithCapacity(0, f"client-{transport}", 2)
        a, b = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal(5).astype(np.float32)
        sent = dataset_of(a, b)
        acl.acltdtSendTensor(ch, sent, 1000)
        acl.acltdtSendTensor(ch, dataset_of(b), 0)
        assert code_of(acl.acltdtSendTensor, ch, sent, 0) == ACL_ERROR_RT_QUEUE_FULL
        assert acl.acltdtQueryChannelSize(ch) == 2
        got = acl.acltdtCreateDataset()
        acl.acltdtReceiveTensor(ch, got, 1000)
        assert acl.acltdtGetDatasetSize(got) == 2
        for index, array in enumerate((a, b)):
            item = acl.acltdtGetDataItem(got, index)
            assert acl.acltdtGetDimsFromItem(item) == list(array.shape)
            assert acl.acltdtGetDataTypeFromItem(item) == acl.ACL_FLOAT
            assert acl.acltdtGetDataSizeFromItem(item) == array.nbytes
            np.testing.assert_array_equal(np.frombuffer(acl.acltdtGetDataAddrFromItem(item), np.float32), array.ravel())
        # a received dataset owns its items: none can be added; a dataset of the program's cannot receive
        assert code_of(acl.acltdtAddDataItem, got, acl.acltdtGetDataItem(sent, 0)) == ACL_ERROR_FEATURE_UNSUPPORTED
        assert code_of(acl.acltdtReceiveTensor, ch, sent, 0) == ACL_ERROR_INVALID_PARAM
        assert acl.acltdtQueryChannelSize(ch) == 1  # the refused receive took nothing
        acl.acltdtCleanChannel(ch)
        assert code_of(acl.acltdtReceiveTensor, ch, got, 0) == ACL_ERROR_RT_QUEUE_EMPTY
        acl.acltdtStopChannel(ch)
        acl.acltdtDestroyChannel(ch)
        acl.aclFinalize()
    finally:
        acl.use(None)


def test_host_objects_check_as_the_runtime_does() -> None:
    """No daemon: data items, datasets, queue attributes and routes are the program's."""
    assert code_of(acl.acltdtCreateDataItem, acl.ACL_TENSOR_DATA_TENSOR, [], acl.ACL_FLOAT, b"", 0) == 100000
    assert code_of(acl.acltdtCreateDataItem, acl.ACL_TENSOR_DATA_TENSOR, [1] * 129, acl.ACL_FLOAT, b"", 0) == 100000
    assert code_of(acl.acltdtCreateDataItem, acl.ACL_TENSOR_DATA_END_OF_SEQUENCE, [1], acl.ACL_FLOAT, b"", 0) == 100000
    end = acl.acltdtCreateDataItem(acl.ACL_TENSOR_DATA_END_OF_SEQUENCE, None, acl.ACL_FLOAT, None, 0)
    assert acl.acltdtGetDataTypeFromItem(end) == acl.ACL_DT_UNDEFINED and acl.acltdtGetDimNumFromItem(end) == 0
    assert acl.acltdtGetSliceInfoFromItem(end) == (0, 0)
    dataset = acl.acltdtCreateDataset()
    assert code_of(acl.acltdtGetDataItem, dataset, 0) == ACL_ERROR_INVALID_PARAM
    assert code_of(acl.acltdtGetDatasetSize, None) == ACL_ERROR_INVALID_PARAM
    attr = acl.acltdtCreateQueueAttr()
    acl.acltdtSetQueueAttr(attr, acl.ACL_TDT_QUEUE_NAME_PTR, "q")
    acl.acltdtSetQueueAttr(attr, acl.ACL_TDT_QUEUE_DEPTH_UINT32, 6)
    assert acl.acltdtGetQueueAttr(attr, acl.ACL_TDT_QUEUE_NAME_PTR) == "q"
    assert acl.acltdtGetQueueAttr(attr, acl.ACL_TDT_QUEUE_DEPTH_UINT32) == 6
    assert code_of(acl.acltdtSetQueueAttr, attr, 2, 1) == ACL_ERROR_INVALID_PARAM
    assert code_of(acl.acltdtSetQueueAttr, attr, acl.ACL_TDT_QUEUE_NAME_PTR, "n" * 128) == ACL_ERROR_INVALID_PARAM
    assert acl.acltdtGetQueueAttr(attr, acl.ACL_TDT_QUEUE_NAME_PTR) == "q"  # the refused set changed nothing
    routes = acl.acltdtCreateQueueRouteList()
    acl.acltdtAddQueueRoute(routes, acl.acltdtCreateQueueRoute(3, 4))
    assert acl.acltdtGetQueueRouteNum(routes) == 1
    assert code_of(acl.acltdtGetQueueRoute, routes, 1) == ACL_ERROR_INVALID_PARAM
    route = acl.acltdtGetQueueRoute(routes, 0)
    assert [acl.acltdtGetQueueRouteParam(route, kind) for kind in range(3)] == [3, 4, acl.ACL_TDT_QUEUE_ROUTE_UNBIND]
    assert code_of(acl.acltdtGetQueueRouteParam, route, 3) == ACL_ERROR_INVALID_PARAM


def test_queues_and_routes_from_aio(daemon: str) -> None:
    async def main() -> list[int]:
        session = await AsyncSession.connect(Config(endpoint=daemon))
        aio.use(session)
        try:
            await aio.aclInit(None)
            await aio.aclrtSetDevice(1)
            attr = aio.acltdtCreateQueueAttr()
            ids = []
            for name in ("aio-src", "aio-dst"):
                aio.acltdtSetQueueAttr(attr, aio.ACL_TDT_QUEUE_NAME_PTR, name)
                ids.append(await aio.acltdtCreateQueue(attr))
            bind = aio.acltdtCreateQueueRouteList()
            aio.acltdtAddQueueRoute(bind, aio.acltdtCreateQueueRoute(*ids))
            await aio.acltdtBindQueueRoutes(bind)
            assert aio.acltdtGetQueueRouteParam(aio.acltdtGetQueueRoute(bind, 0), 2) == aio.ACL_TDT_QUEUE_ROUTE_BIND
            info = aio.acltdtCreateQueueRouteQueryInfo()
            found = aio.acltdtCreateQueueRouteList()
            with pytest.raises(AclError) as caught:
                await aio.acltdtQueryQueueRoutes(info, found)  # no mode set yet
            assert caught.value.code == ACL_ERROR_INVALID_PARAM and "mode" in caught.value.message
            aio.acltdtSetQueueRouteQueryInfo(info, aio.ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, 1)  # by destination
            aio.acltdtSetQueueRouteQueryInfo(info, aio.ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32, ids[1])
            await aio.acltdtQueryQueueRoutes(info, found)
            route = aio.acltdtGetQueueRoute(found, 0)
            got = [aio.acltdtGetQueueRouteParam(route, kind) for kind in range(3)]
            await aio.acltdtUnbindQueueRoutes(bind)
            await aio.acltdtQueryQueueRoutes(info, found)
            assert aio.acltdtGetQueueRouteNum(found) == 0
            for qid in ids:
                await aio.acltdtDestroyQueue(qid)
            await aio.aclFinalize()
            return [*ids, *got]
        finally:
            aio.use(None)
            await session.close()

    src, dst, *route = asyncio.run(main())
    assert route == [src, dst, acl.ACL_TDT_QUEUE_ROUTE_BIND]
