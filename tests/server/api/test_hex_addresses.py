"""Handles and pointers are accepted as vnpu prints them, 0x..., in call arguments, REST paths and queries; the
decimal integers go on working, and a malformed one is refused with the JSON error that names the field."""

from __future__ import annotations

import httpx
import numpy as np

from proto.errors import ACL_ERROR_INVALID_PARAM
from tests.server.api.callers import RestCaller
from tests.server.api.test_observe import seed_model


async def test_hex_handles_and_pointers_in_calls_paths_and_queries(http: httpx.AsyncClient) -> None:
    c = RestCaller(http)
    ids = await seed_model(c)
    data = np.random.default_rng(7).integers(0, 256, 64, dtype=np.uint8).tobytes()
    ptr = (await c("aclrtMalloc", size=64, policy=0))["devPtr"]
    stream = hex(ids["s2"])
    await c("aclrtMemcpyAsync", dst=hex(ptr), destMax=64, src=data, count=64, kind=1, stream=stream)
    await c("aclrtSynchronizeStream", stream=stream.upper().replace("X", "x"))
    # (a copy's `src` is the one exception: a JSON string there is base64 bytes of pageable memory)
    assert (await c("aclrtMemcpy", dst=None, destMax=64, src=ptr, count=64, kind=2))["data"] == data
    assert (await http.get(f"/v1/memory/{ptr:#x}", params={"count": 64})).content == data
    replaced = bytes(reversed(data))
    assert (await http.put(f"/v1/memory/{ptr:#x}", content=replaced)).status_code == 204
    assert (await http.get(f"/v1/memory/{ptr}", params={"count": 64})).content == replaced
    view = (await http.get(f"/v1/models/{ids['model']:#x}")).json()
    assert view["handle"] == ids["model"]
    assert (await http.get(f"/v1/models/{ids['model']:#x}/graph", params={"format": "dot"})).text.startswith("digraph")
    for bad in ("0x", "0xg1", "1x10", "0x10000000000000000"):
        response = await http.post("/v1/call/aclrtSynchronizeStream", json={"stream": bad})
        assert response.status_code == 422, bad
        error = response.json()["error"]
        assert error["code"] == ACL_ERROR_INVALID_PARAM and "stream" in error["message"]
        assert (await http.get(f"/v1/models/{bad}")).status_code == 422
    await c("aclrtSynchronizeStream", stream=ids["s2"])  # the session goes on
