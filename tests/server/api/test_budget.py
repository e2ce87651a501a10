"""Reliability 15, 16: a WebSocket frame or a REST body of tiny elements is refused within a fixed element budget,
before it becomes millions of Python objects, and the connection goes on."""

from __future__ import annotations

import tracemalloc

import httpx
import msgpack
import numpy as np
import pytest

from proto.errors import ACL_ERROR_INVALID_PARAM
from server.api import budget
from server.api.budget import MAX_ELEMENTS, TooManyElements, unpack
from tests.server.api.callers import WsCaller
from tests.server.api.conftest import LiveServer

EMPTY_MAPS = msgpack.packb([{}] * (8 << 20))  # an 8 MiB frame: ~600 MiB as Python objects


def test_a_frame_of_tiny_elements_is_refused_within_the_budget() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(TooManyElements) as info:
            unpack(EMPTY_MAPS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.code == ACL_ERROR_INVALID_PARAM and str(MAX_ELEMENTS) in info.value.message
    assert peak < 128 << 20, f"decoding the refused frame peaked at {peak >> 20} MiB"
    nested = msgpack.packb([[0] * 4096] * 4096)  # small arrays, many of them: the budget is across the frame
    with pytest.raises(TooManyElements):
        unpack(nested)


def test_a_full_batch_of_calls_fits_the_budget() -> None:
    envelope = {"id": 1, "api": "aclnnAdd", "thread": [1, 2], "reply": False,
                "args": {"executor": {"op": "Add", "tensors": [{"shape": [8, 8], "strides": [8, 1]}] * 3},
                         "workspace": 0, "workspaceSize": 0, "stream": 4096}}  # fmt: skip
    batch = [envelope] * 128
    assert unpack(msgpack.packb(batch, use_bin_type=True)) == batch


async def test_the_websocket_answers_and_goes_on(live: LiveServer) -> None:
    c = await WsCaller.connect(live.ws_url)
    try:
        await c("aclInit", configPath=None)
        await c.ws.send(EMPTY_MAPS)
        assert (await c("aclrtGetDeviceCount"))["count"] == 2  # the same connection works on
        refused = [m["error"] for m in c.orphans]
        assert refused and refused[0]["code"] == ACL_ERROR_INVALID_PARAM
        assert "map and array entries" in refused[0]["message"]
    finally:
        await c.ws.close()


async def test_a_rest_body_of_tiny_elements_is_refused(http: httpx.AsyncClient) -> None:
    body = b'{"size": [' + b",".join([b"{}"] * (MAX_ELEMENTS + 1)) + b'], "policy": 0}'
    response = await http.post("/v1/call/aclrtMalloc", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == ACL_ERROR_INVALID_PARAM and "map and array entries" in error["message"]
    await http.post("/v1/call/aclInit", json={"configPath": None})
    assert (await http.post("/v1/call/aclrtGetDeviceCount", json={})).json()["count"] == 2


def test_pack_is_msgpack_at_any_size_and_leaves_no_big_buffer() -> None:
    """`budget.pack` (every reply and notice of the WebSocket) encodes as msgpack.packb does, a reply over its small
    starting buffer included, and one waiting call's reply no longer passes through a 256 KiB buffer."""
    rng = np.random.default_rng(11)
    small = {"id": 7, "result": {"stream": int(rng.integers(1 << 40)), "ok": None}, "idle": [1, 2]}
    large = {"id": 8, "result": {"data": rng.integers(0, 256, 3 << 20, dtype=np.uint8).tobytes()}}
    for message in (small, large):
        assert budget.pack(message) == msgpack.packb(message, use_bin_type=True)
        assert msgpack.unpackb(budget.pack(message)) == message
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        budget.pack(small)
        assert tracemalloc.get_traced_memory()[1] - base < 4096
    finally:
        tracemalloc.stop()
