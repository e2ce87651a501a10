"""Every declared operator over REST: `GET /v1/aclnn/aclnnXxx` describes it, `POST .../aclnnXxxGetWorkspaceSize` with
random bodies answers a JSON error (4xx) or the executor, never a 5xx; an operator vnpu does not implement answers
561003; a launch whose description breaks the operator's rules is refused by the device (it re-validates)."""

from __future__ import annotations

import random
from typing import Any

import httpx
import msgpack
import pytest

import proto.aclnn as nn
from proto.aclnn.kernel import wire_of
from proto.errors import ACL_ERROR_INTERNAL_ERROR, ACLNN_ERR_INNER_FIND_KERNEL, ACLNN_ERR_PARAM_INVALID, AclError
from tests.proto.test_aclnn_fuzz import value
from tests.server.api.callers import RestCaller, WsCaller
from tests.server.api.conftest import LiveServer

NOT_JSONABLE = object()


def body_of(decl: nn.OpDecl, r: random.Random) -> dict[str, Any]:
    body = {arg.name: wire_of(value(r, arg.kind)) for arg in decl.args}
    if r.random() < 0.1:
        body.pop(r.choice(list(body)), None)  # a missing argument
    if r.random() < 0.1:
        body["nope"] = 1  # an unknown one
    return body


async def test_every_operator_is_described_and_answers_random_bodies(http: httpx.AsyncClient) -> None:
    r = random.Random("rest")
    statuses: dict[int, int] = {}
    for name in nn.OPS:
        if r.random() > 0.25:  # a quarter of the 1,212 operators (the seed's walk: the same ones every run)
            continue
        decl = nn.OPS[name]
        described = await http.get(f"/v1/aclnn/{decl.c_name}")
        assert described.status_code == 200, name
        assert [a["name"] for a in described.json()["args"]] == list(decl.arg_names)
        response = await http.post(f"/v1/aclnn/{decl.ws_name}", json=body_of(decl, r))
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        assert response.status_code in (200, 400), (name, response.status_code, response.text[:300])
        if response.status_code == 400:
            error = response.json()["error"]
            assert error["code"] > 0 and error["message"], (name, error)
    assert statuses.get(400, 0) > 200 and sum(statuses.values()) > 250


@pytest.mark.slow
async def test_every_operator_answers_random_bodies_in_both_phases_on_the_daemon(http: httpx.AsyncClient) -> None:
    """Issue 39's fuzz, every declared operator: the daemon's phase 1 (REST) with a random body, then the same
    arguments launched as a forged executor (phase 2's decoding and revalidation): a JSON 4xx or a success, never a
    5xx, and the session works on after all of them (about 20 s)."""
    c = RestCaller(http)
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    r = random.Random("every operator")
    answered: dict[tuple[str, int], int] = {}
    for name in nn.OPS:
        decl = nn.OPS[name]
        body = body_of(decl, r)
        phase1 = await http.post(f"/v1/aclnn/{decl.ws_name}", json=body)
        forged = {"op": decl.name, "args": body, "workspace_size": r.choice([0, 0, 64, -1])}
        launch = {"workspace": 0, "workspaceSize": 0, "executor": forged, "stream": 0}
        phase2 = await http.post(f"/v1/call/{decl.c_name}", json=launch)
        for phase, response in (("phase 1", phase1), ("phase 2", phase2)):
            answered[phase, response.status_code] = answered.get((phase, response.status_code), 0) + 1
            assert response.status_code in (200, 400, 422), (name, phase, response.status_code, response.text[:300])
            if response.status_code != 200:
                assert response.json()["error"]["code"] > 0, (name, phase, response.text[:300])
    assert sum(n for (phase, _), n in answered.items() if phase == "phase 1") == len(nn.OPS)
    x = await c("aclrtMalloc", size=64, policy=0)  # the session works on
    await c("aclrtMemset", devPtr=x["devPtr"], maxCount=64, value=7, count=64)
    await c("aclrtFree", devPtr=x["devPtr"])


@pytest.mark.slow
async def test_every_operator_launched_over_the_websocket_with_random_descriptions(live: LiveServer) -> None:
    """The same for phase 2 over the WebSocket: every declared operator's launch, its executor a random description
    packed as the client packs one, is answered with a result or an error envelope, never a vnpu fault, and the
    connection goes on."""
    c = await WsCaller.connect(live.ws_url)
    try:
        await c("aclInit", configPath=None)
        await c("aclrtSetDevice", deviceId=0)
        r = random.Random("every operator, WebSocket")
        codes: dict[int, int] = {}
        for name in nn.OPS:
            decl = nn.OPS[name]
            forged = {"op": decl.name, "args": body_of(decl, r), "workspace_size": r.choice([0, 0, 64, -1])}
            executor = msgpack.packb(forged, use_bin_type=True)
            try:
                await c(decl.c_name, workspace=0, workspaceSize=0, executor=executor, stream=0)
                code = 0
            except AclError as error:
                code = error.code
                assert "internal error" not in error.message, (name, error.message)
            codes[code] = codes.get(code, 0) + 1
        assert sum(codes.values()) == len(nn.OPS) and ACL_ERROR_INTERNAL_ERROR not in codes, codes
        x = await c("aclrtMalloc", size=64, policy=0)  # the connection works on
        await c("aclrtFree", devPtr=x["devPtr"])
    finally:
        await c.ws.close()


async def test_an_unimplemented_operator_is_561003_and_an_unknown_one_404(http: httpx.AsyncClient) -> None:
    decl = nn.OPS["Ndtri"]
    t = {"view_dims": [2], "data_type": "ACL_FLOAT", "strides": [1], "offset": 0, "format": "ACL_FORMAT_ND",
         "storage_dims": [2], "data": 0x12C000000000}  # fmt: skip
    response = await http.post(f"/v1/aclnn/{decl.ws_name}", json={"self": t, "out": t | {"data": 0x12C000001000}})
    error = response.json()["error"]
    assert (response.status_code, error["code"]) == (400, ACLNN_ERR_INNER_FIND_KERNEL)
    assert error["message"] == "vnpu does not implement aclnnNdtri yet"
    assert (await http.post("/v1/aclnn/aclnnNopeGetWorkspaceSize", json={})).status_code == 404
    assert (await http.get("/v1/aclnn/aclnnNope")).status_code == 404
    launch = {"workspace": 0, "workspaceSize": 0, "executor": {"op": "Ndtri", "args": {}, "workspace_size": 0},
              "stream": 0}  # fmt: skip
    c = RestCaller(http)
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    refused = await http.post("/v1/call/aclnnNdtri", json=launch)
    assert refused.status_code == 400


async def test_a_launch_breaking_the_rules_is_refused_by_the_device(http: httpx.AsyncClient) -> None:
    c = RestCaller(http)
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    x = await c("aclrtMalloc", size=4096, policy=0)
    tensor = {"view_dims": [2, 8], "data_type": "ACL_FLOAT16", "strides": [8, 1], "offset": 0,
              "format": "ACL_FORMAT_ND", "storage_dims": [16], "data": x["devPtr"]}  # fmt: skip
    gamma = tensor | {"view_dims": [4], "strides": [1], "data": x["devPtr"] + 1024}  # not x's last axis
    args = {"x": tensor, "gamma": gamma, "epsilon": 1e-6, "yOut": tensor | {"data": x["devPtr"] + 2048},
            "rstdOut": None}  # fmt: skip
    phase1 = await http.post("/v1/aclnn/aclnnRmsNormGetWorkspaceSize", json=args)
    assert phase1.status_code == 400 and "gamma's shape [4] must be the last axes" in phase1.json()["error"]["message"]
    forged = {"op": "RmsNorm", "args": args, "workspace_size": 0}  # an executor phase 1 never gave
    launch = await http.post(
        "/v1/call/aclnnRmsNorm", json={"workspace": 0, "workspaceSize": 0, "executor": forged, "stream": 0}
    )
    error = launch.json()["error"]
    assert launch.status_code == 400 and error["code"] == ACLNN_ERR_PARAM_INVALID and "gamma" in error["message"]
