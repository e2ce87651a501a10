"""Phase 1 over REST (`POST /v1/aclnn/aclnnXxxGetWorkspaceSize`): the same workspace size, executor, codes and
messages as the client's local phase 1, and its executor launches through `POST /v1/call/aclnnXxx`."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import pytest

import proto.aclnn as nn
from proto.aclnn.kernel import wire_of
from proto.constants import aclDataType
from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclError
from tests.server.api.callers import RestCaller
from tests.server.api.test_calls import Remote
from tests.server.npu.devicekit import tensor_at

F32 = aclDataType.ACL_FLOAT


def wire(*args: Any) -> list[Any]:
    """The wire form of phase-1 arguments, as a curl user writes them."""
    return [wire_of(a) for a in args]


async def phase1(http: httpx.AsyncClient, op: str, **args: Any) -> dict[str, Any]:
    response = await http.post(f"/v1/aclnn/aclnn{op}GetWorkspaceSize", json=args)
    payload: dict[str, Any] = response.json()
    if "error" in payload:
        assert response.status_code == 400
        raise AclError.from_dict(payload["error"])
    assert response.status_code == 200
    return payload


async def test_add_and_matmul_over_rest_match_local_phase1_and_launch(http: httpx.AsyncClient) -> None:
    c = RestCaller(http)
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    r, rng = Remote(c), np.random.default_rng(11)
    stream = (await c("aclrtCreateStream"))["stream"]
    a, b = rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((4, 6)).astype(np.float32)
    w = rng.standard_normal((6, 3)).astype(np.float32)
    pa, pb, pw = await r.put(a), await r.put(b), await r.put(w)
    p_sum, p_mm = await r.put(np.zeros((4, 6))), await r.put(np.zeros((4, 3)))
    ta, tb, tw = tensor_at(pa, (4, 6), F32), tensor_at(pb, (4, 6), F32), tensor_at(pw, (6, 3), F32)
    t_sum, t_mm, alpha = tensor_at(p_sum, (4, 6), F32), tensor_at(p_mm, (4, 3), F32), nn.aclCreateScalar(0.5, F32)
    cases = (
        ("Add", dict(zip(("self", "other", "alpha", "out"), (ta, tb, alpha, t_sum), strict=True))),
        ("Matmul", dict(zip(("self", "mat2", "out", "cubeMathType"), (ta, tw, t_mm, 0), strict=True))),
    )
    for op, host in cases:
        size, executor = getattr(nn, f"aclnn{op}GetWorkspaceSize")(**host)
        body = dict(zip(host, wire(*host.values()), strict=True))
        answer = await phase1(http, op, **body)
        assert answer == {"workspaceSize": size, "executor": executor.kernel.to_wire()}
        space = (await c("aclrtMalloc", size=size, policy=0))["devPtr"] if size else 0
        await c(f"aclnn{op}", workspace=space, workspaceSize=size, executor=answer["executor"], stream=stream)
    await c("aclrtSynchronizeStream", stream=stream)
    np.testing.assert_allclose(await r.get(p_sum, (4, 6)), a.astype(np.float64) + 0.5 * b, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(await r.get(p_mm, (4, 3)), a.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)


async def test_phase1_errors_are_the_local_ones(http: httpx.AsyncClient) -> None:
    x, y = tensor_at(0x12C000000000, (4, 6), F32), tensor_at(0x12C000001000, (4, 5), F32)
    alpha = nn.aclCreateScalar(1.0, F32)
    with pytest.raises(AclError) as local:
        nn.aclnnAddGetWorkspaceSize(x, x, alpha, y)  # out has the wrong shape
    with pytest.raises(AclError) as remote:
        await phase1(http, "Add", **dict(zip(("self", "other", "alpha", "out"), wire(x, x, alpha, y), strict=True)))
    assert (remote.value.code, remote.value.message) == (local.value.code, local.value.message)
    assert remote.value.code == ACLNN_ERR_PARAM_INVALID
    with pytest.raises(AclError) as null:
        await phase1(http, "Add", **dict(zip(("self", "other", "alpha", "out"), wire(None, x, alpha, x), strict=True)))
    assert null.value.code == ACLNN_ERR_PARAM_NULLPTR and "self" in null.value.message
    for body in ({"self": 1}, {"self": wire(x)[0], "other": wire(x)[0], "alpha": "two", "out": wire(x)[0]}):
        with pytest.raises(AclError) as malformed:
            await phase1(http, "Add", **body)
        assert (malformed.value.code, malformed.value.api) == (ACLNN_ERR_PARAM_INVALID, "aclnnAddGetWorkspaceSize")
    not_json = await http.post("/v1/aclnn/aclnnAddGetWorkspaceSize", content=b"{nope")
    error = not_json.json()["error"]
    assert not_json.status_code == 400 and "not JSON" in error["message"]
    assert error["api"] == "aclnnAddGetWorkspaceSize"  # the call it is
    assert (await http.post("/v1/aclnn/aclnnNopeGetWorkspaceSize", json={})).status_code == 404
