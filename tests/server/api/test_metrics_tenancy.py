"""/metrics and the logs under tenants (reliability defects 8 and 9): a tenant's scrape shows its own calls and
streams and the machine's totals, never another tenant's; the operator token shows every tenant's, labelled;
counters never go down and no series is emitted twice; tokens never reach the access log, and a browser's
WebSocket can carry its token in a subprotocol instead of the URL."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import numpy as np
import pytest
import websockets
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families

import proto.aclnn as nn
from proto.constants import aclDataType
from server.api.auth import RedactTokens
from server.app import create_app
from tests.daemons import serving
from tests.server.api.callers import RestCaller
from tests.server.api.conftest import start_live
from tests.server.api.conftest import test_settings as make_settings
from tests.server.api.test_calls import Remote
from tests.server.api.test_tenants import A, B, tenant
from tests.server.npu.devicekit import tensor_at

OPERATOR = {"Authorization": "Bearer the-operator"}
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[FastAPI]:
    path = tmp_path / "tokens"
    path.write_text("alice token-of-alice\nbob token-of-bob\n")
    application = create_app(make_settings(tokens_file=str(path), operator_token="the-operator"))
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://vnpu") as c:
        yield c


async def scrape(client: httpx.AsyncClient, headers: dict[str, str]) -> Samples:
    """Every sample by (name, labels), parsed by prometheus-client's own parser; a series emitted twice fails."""
    response = await client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            assert key not in samples, f"series emitted twice: {key}"
            samples[key] = sample.value
    return samples


def streams_in(samples: Samples) -> set[str]:
    return {dict(labels)["stream"] for name, labels in samples if name == "vnpu_stream_queue_depth"}


def calls_in(samples: Samples) -> set[tuple[str, ...]]:
    return {tuple(v for _, v in labels) for name, labels in samples if name == "vnpu_calls_total"}


async def workload(caller: RestCaller) -> dict[str, int]:
    """A model with a one-kernel task group, replayed, updated once from another stream, then destroyed."""
    r = Remote(caller)
    x = await r.put(np.ones(8, np.float32))
    xt = tensor_at(x, (8,), aclDataType.ACL_FLOAT)
    s1, s2 = (await caller("aclrtCreateStream"))["stream"], (await caller("aclrtCreateStream"))["stream"]
    one = nn.aclCreateScalar(1.0, aclDataType.ACL_FLOAT)
    await caller("aclmdlRICaptureBegin", stream=s1, mode=0)
    await caller("aclmdlRICaptureTaskGrpBegin", stream=s1)
    await r.launch("Adds", s1, xt, one, one, xt)
    group = (await caller("aclmdlRICaptureTaskGrpEnd", stream=s1))["handle"]
    model = (await caller("aclmdlRICaptureEnd", stream=s1))["modelRI"]
    await caller("aclmdlRIExecuteAsync", modelRI=model, stream=s1)
    await caller("aclmdlRICaptureTaskUpdateBegin", stream=s2, handle=group)
    await r.launch("Adds", s2, xt, nn.aclCreateScalar(2.0, aclDataType.ACL_FLOAT), one, xt)
    await caller("aclmdlRICaptureTaskUpdateEnd", stream=s2)
    await caller("aclrtSynchronizeStream", stream=s2)
    await caller("aclrtSynchronizeStream", stream=s1)
    return {"s1": s1, "s2": s2, "model": model}


async def test_a_tenant_sees_its_own_calls_and_streams_and_the_totals(client: httpx.AsyncClient) -> None:
    alice, bob = await tenant(client, A), await tenant(client, B)
    ids = await workload(alice)
    await bob("aclrtCreateStream")
    seen_by_bob, seen_by_alice = await scrape(client, B), await scrape(client, A)
    assert f"{ids['s1']:#x}" in streams_in(seen_by_alice) and f"{ids['s2']:#x}" in streams_in(seen_by_alice)
    assert not streams_in(seen_by_bob) & {f"{ids['s1']:#x}", f"{ids['s2']:#x}"}
    assert ("aclmdlRICaptureBegin", "0") in calls_in(seen_by_alice)
    assert not any(call[0].startswith("aclmdlRI") for call in calls_in(seen_by_bob))  # bob made none
    assert ("aclrtCreateStream", "0") in calls_in(seen_by_bob)
    for view in (seen_by_alice, seen_by_bob):  # the totals are everyone's
        assert view[("vnpu_task_updates_total", ())] == 1
        assert view[("vnpu_contexts", ())] == 2 and view[("vnpu_models", ())] == 1
        assert view[("vnpu_device_memory_used_bytes", (("device", "0"),))] > 0


async def test_the_operator_token_sees_every_tenant_labelled_and_nothing_else(client: httpx.AsyncClient) -> None:
    alice, bob = await tenant(client, A), await tenant(client, B)
    ids = await workload(alice)
    await bob("aclrtCreateStream")
    seen = await scrape(client, OPERATOR)
    tenants = {dict(labels).get("tenant") for name, labels in seen if name == "vnpu_calls_total"}
    assert tenants == {"alice", "bob"}
    assert ("vnpu_calls_total", (("api", "aclmdlRICaptureBegin"), ("code", "0"), ("tenant", "alice"))) in seen
    depth = {dict(labels)["stream"]: dict(labels)["tenant"] for name, labels in seen if "queue_depth" in name}
    assert depth[f"{ids['s1']:#x}"] == "alice"
    for path in ("/v1/devices", "/v1/call/aclrtGetDeviceCount"):  # the operator is not a tenant
        assert (await client.post(path, headers=OPERATOR)).status_code in (401, 405)
    assert (await client.get("/v1/devices", headers=OPERATOR)).status_code == 401
    assert (await client.get("/metrics")).status_code == 401


async def test_counters_never_decrease_across_a_workload(client: httpx.AsyncClient) -> None:
    alice = await tenant(client, A)
    before = await scrape(client, OPERATOR)
    ids = await workload(alice)
    during = await scrape(client, OPERATOR)
    await alice("aclmdlRIDestroy", modelRI=ids["model"])
    await alice("aclrtDestroyStream", stream=ids["s2"])
    after = await scrape(client, OPERATOR)
    counters = [k for k in after if k[0].endswith(("_total", "_count", "_sum", "_bucket"))]
    assert counters
    for key in counters:
        assert before.get(key, 0) <= during.get(key, 0) <= after[key], key
    assert during[("vnpu_task_updates_total", ())] == after[("vnpu_task_updates_total", ())] == 1


def test_the_log_filter_redacts_tokens_in_urls() -> None:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:1", "GET", "/v1/devices?window=5&token=s3cr3t&x=1", "1.1", 200), None,
    )  # fmt: skip
    assert RedactTokens().filter(record)
    assert record.getMessage() == '127.0.0.1:1 - "GET /v1/devices?window=5&token=***&x=1 HTTP/1.1" 200'


async def test_no_token_reaches_the_daemons_log(tmp_path: Path) -> None:
    secret = "tok-alice-SECRET"
    with serving(tmp_path, "--log-level", "info", "--token", secret) as daemon:
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{daemon.url}/v1/devices?token={secret}")).status_code == 200
            assert (await http.get(f"{daemon.url}/v1/devices?token=wrong-guess-123")).status_code == 401
        ws_url = daemon.url.replace("http", "ws") + f"/v1/trace/live?token={secret}"
        async with websockets.connect(ws_url) as socket:
            await socket.recv()
    log = daemon.err.read_text() + (tmp_path / "out.txt").read_text()  # uvicorn's access log is on stdout
    assert "GET /v1/devices?token=*** HTTP/1.1" in log  # the request is logged, its token is not
    assert secret not in log and "wrong-guess-123" not in log


async def test_a_websocket_carries_its_token_in_a_subprotocol() -> None:
    server, task = await start_live(make_settings(token="dash-token"))
    try:
        url = f"ws://127.0.0.1:{server.port}/v1/trace/live"
        offered = ["vnpu", "vnpu.token." + b"dash-token".hex()]
        async with websockets.connect(url, subprotocols=offered) as socket:  # type: ignore[arg-type]
            assert socket.subprotocol == "vnpu"
            assert "traceEvents" in await socket.recv()
        wrong = ["vnpu", "vnpu.token." + b"not-it".hex()]
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with websockets.connect(url, subprotocols=wrong):  # type: ignore[arg-type]
                pass
        assert refused.value.response.status_code == 401
    finally:
        server.server.should_exit = True
        await task


async def test_live_trace_viewers_are_capped_per_tenant() -> None:
    """Reliability 20: every viewer rescanned the whole trace four times a second; now each costs only what is new,
    and a tenant opens at most MAX_VIEWERS."""
    from server.api.dashboard import MAX_VIEWERS

    server, task = await start_live(make_settings())
    url = f"ws://127.0.0.1:{server.port}/v1/trace/live"
    try:
        async with contextlib.AsyncExitStack() as stack:
            for _ in range(MAX_VIEWERS):
                socket = await stack.enter_async_context(websockets.connect(url))
                await socket.recv()
            one_more = await stack.enter_async_context(websockets.connect(url))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await one_more.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4429
        async with websockets.connect(url) as again:  # the others left: room again
            assert "traceEvents" in await again.recv()
    finally:
        server.server.should_exit = True
        await task
