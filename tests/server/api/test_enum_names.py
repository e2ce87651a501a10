"""REST takes an enum argument by its C name as well as by its value (`server.api.enumargs`): at the top level,
in a C struct argument, combined with | where the enum's members combine; a name that is no member is 100000
naming the argument and listing the names. The WebSocket's wire stays integers."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import pytest

from proto.constants import aclrtMemcpyKind, aclrtMemMallocPolicy
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError
from tests.server.api.callers import RestCaller, WsCaller
from tests.server.api.conftest import LiveServer


@pytest.fixture
async def c(http: httpx.AsyncClient) -> RestCaller:
    caller = RestCaller(http, (await http.post("/v1/sessions")).json()["session"])
    await caller("aclInit", configPath=None)
    await caller("aclrtSetDevice", deviceId=0)
    return caller


async def post(c: RestCaller, api: str, body: dict[str, Any]) -> httpx.Response:
    assert c.session is not None
    return await c.client.post(f"/v1/call/{api}", json=body, headers={"x-vnpu-session": c.session})


async def test_enum_arguments_by_name(c: RestCaller) -> None:
    ptr = (await c("aclrtMalloc", size=64, policy="ACL_MEM_MALLOC_HUGE_ONLY"))["devPtr"]
    data = bytes(range(64))
    await c("aclrtMemcpy", dst=ptr, destMax=64, src=data, count=64, kind="ACL_MEMCPY_HOST_TO_DEVICE")
    back = await c("aclrtMemcpy", dst=None, destMax=64, src=ptr, count=64, kind="ACL_MEMCPY_DEVICE_TO_HOST")
    assert back["data"] == data
    # a combinable enum: names joined by |, as C ORs them
    both = "ACL_MEM_MALLOC_NORMAL_ONLY | ACL_MEM_TYPE_HIGH_BAND_WIDTH"
    assert (await c("aclrtMalloc", size=64, policy=both))["devPtr"] > ptr
    # a C struct argument's enum fields, nested
    prop = {"handleType": "ACL_MEM_HANDLE_TYPE_NONE", "allocationType": "ACL_MEM_ALLOCATION_TYPE_PINNED",
            "memAttr": "ACL_HBM_MEM_HUGE", "location": {"id": 0, "type": "ACL_MEM_LOCATION_TYPE_DEVICE"}}  # fmt: skip
    granularity = await c("aclrtMemGetAllocationGranularity", prop=prop, option="ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM")
    assert granularity["granularity"] == 2 << 20
    handle = (await c("aclrtMallocPhysical", size=2 << 20, prop=prop, flags=0))["handle"]
    await c("aclrtFreePhysical", handle=handle)


async def test_a_name_that_is_no_member_is_refused_naming_the_argument(c: RestCaller) -> None:
    ptr = (await c("aclrtMalloc", size=64, policy=0))["devPtr"]
    data = bytes(range(64))
    await c("aclrtMemcpy", dst=ptr, destMax=64, src=data, count=64, kind=1)
    body = {"dst": ptr, "destMax": 64, "src": base64.b64encode(bytes(64)).decode(), "count": 64, "kind": "H2D"}
    response = await post(c, "aclrtMemcpy", body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == ACL_ERROR_INVALID_PARAM and error["api"] == "aclrtMemcpy"
    listed = ", ".join(f"{m.name}={int(m)}" for m in aclrtMemcpyKind)
    assert error["message"] == f"kind 'H2D' is not the name of an aclrtMemcpyKind: use {listed}"
    back = await c("aclrtMemcpy", dst=None, destMax=64, src=ptr, count=64, kind=2)
    assert back["data"] == data  # nothing was copied
    # in a struct: the field's path; in a combination: each part is checked
    prop = {"location": {"id": 0, "type": "DEVICE"}}
    response = await post(c, "aclrtMallocPhysical", {"size": 2 << 20, "prop": prop, "flags": 0})
    assert response.status_code == 422
    assert response.json()["error"]["message"].startswith(
        "prop.location.type 'DEVICE' is not the name of an aclrtMemLocationType: use ACL_MEM_LOCATION_TYPE_HOST=0, "
    )
    response = await post(c, "aclrtMalloc", {"size": 64, "policy": "ACL_MEM_MALLOC_HUGE_ONLY | HBM"})
    message = response.json()["error"]["message"]
    assert response.status_code == 422 and message.startswith("policy 'ACL_MEM_MALLOC_HUGE_ONLY | HBM' is not the")
    assert "ACL_MEM_TYPE_HIGH_BAND_WIDTH=0x1000" in message and message.endswith("(names may be joined by |)")
    metrics = (await c.client.get("/metrics")).text
    assert 'vnpu_calls_total{api="aclrtMalloc",code="100000"} 1.0' in metrics  # counted as the call's failure


async def test_a_value_that_is_no_member_lists_the_members(c: RestCaller) -> None:
    response = await post(c, "aclrtMalloc", {"size": 64, "policy": 99})
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    bases = ", ".join(f"{m.name}={int(m)}" for m in aclrtMemMallocPolicy if m < 0x100)
    assert message.startswith(f"policy 99 (0x63) is not an aclrtMemMallocPolicy: use {bases}, optionally | "), message
    response = await post(c, "aclrtMemcpy", {"dst": 1, "destMax": 1, "src": 1, "count": 1, "kind": 9})
    listed = ", ".join(f"{m.name}={int(m)}" for m in aclrtMemcpyKind)
    assert response.json()["error"]["message"] == f"kind 9 is not an aclrtMemcpyKind: use {listed}"


async def test_the_websocket_wire_stays_integers(live: LiveServer) -> None:
    ws = await WsCaller.connect(live.ws_url)
    try:
        await ws("aclInit", configPath=None)
        await ws("aclrtSetDevice", deviceId=0)
        with pytest.raises(AclError) as refused:
            await ws("aclrtMalloc", size=64, policy="ACL_MEM_MALLOC_HUGE_FIRST")
        assert refused.value.code == ACL_ERROR_INVALID_PARAM and "policy" in refused.value.message
        assert (await ws("aclrtMalloc", size=64, policy=0))["devPtr"]
    finally:
        await ws.ws.close()
