"""The dashboard in a real headless browser (Debian's chromium driven by playwright, never a downloaded browser),
and its WebSocket `/v1/trace/live`.

A live daemon runs a model that waits on an EXTERNAL event recorded every cycle, with its task group updated each
time, next to a stream blocked on an event nobody records yet; the page must show the model's tasks, its graph, the
blocked stream and a timeline with events, and load nothing but its own daemon's URLs. The screenshot is written
to the test's tmp dir; with VNPU_SCREENSHOTS=1 (or when missing) also to docs/dashboard.png and docs/trace.png.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import websockets

import proto.aclnn as nn
from proto.constants import aclDataType
from tests.server.api.callers import RestCaller
from tests.server.api.conftest import LiveServer, start_live
from tests.server.api.conftest import test_settings as make_settings
from tests.server.api.test_calls import Remote
from tests.server.api.test_observe import seed_model
from tests.server.npu.devicekit import tensor_at
from tests.system import CHROMIUM

playwright_api = pytest.importorskip("playwright.async_api")

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DOCS = Path(__file__).resolve().parents[3] / "docs"
F32 = aclDataType.ACL_FLOAT
EXTERNAL = 0x20

pytestmark = pytest.mark.usefixtures("chromium")  # tests/server/api/conftest.py: a skip, or a failure under CI


async def serve(**overrides: object) -> tuple[LiveServer, asyncio.Task[None]]:
    return await start_live(make_settings(**overrides))


async def stop(server: LiveServer, task: asyncio.Task[None]) -> None:
    server.server.should_exit = True
    await asyncio.wait_for(task, 15)


@contextlib.asynccontextmanager
async def live_daemon(**overrides: object) -> AsyncIterator[LiveServer]:
    server, task = await serve(**overrides)
    try:
        yield server
    finally:
        await stop(server, task)


async def replaying(c: RestCaller, stop_now: asyncio.Event, cycles: int = 600) -> None:
    """Capture the seed-like model, block a third stream behind an EXTERNAL event, then until `stop_now` (at most
    `cycles` times): replay the model, let it wait a moment on its EXTERNAL event, update its task group from the
    second stream, record the event and reset it."""
    ids = await seed_model(c)
    r = Remote(c)
    await c("aclrtMalloc", size=20 << 20, policy=0)  # the memory bar shows something
    y = tensor_at(await r.put(np.zeros(8)), (8,), F32)
    blocked = (await c("aclrtCreateStream"))["stream"]
    gate = (await c("aclrtCreateEventWithFlag", flag=EXTERNAL))["event"]
    await c("aclrtStreamWaitEvent", stream=blocked, event=gate)
    for _ in range(3):
        await r.launch("Muls", blocked, y, nn.aclCreateScalar(1.0, F32), y)
    try:
        for cycle in range(cycles):
            if stop_now.is_set():
                break
            await c("aclmdlRIExecuteAsync", modelRI=ids["model"], stream=ids["s1"])
            await asyncio.sleep(0.12)
            await c("aclmdlRICaptureTaskUpdateBegin", stream=ids["s2"], handle=ids["group"])
            for value in (1.0, float(cycle)):
                await r.launch("Adds", ids["s2"], y, nn.aclCreateScalar(value, F32), nn.aclCreateScalar(1.0, F32), y)
            await c("aclmdlRICaptureTaskUpdateEnd", stream=ids["s2"])
            await c("aclrtRecordEvent", event=ids["ext"], stream=ids["s2"])
            await c("aclrtSynchronizeStream", stream=ids["s1"])
            await c("aclrtResetEvent", event=ids["ext"], stream=ids["s2"])  # the next replay waits again
            await c("aclrtSynchronizeStream", stream=ids["s2"])
    finally:
        await c("aclrtRecordEvent", event=gate, stream=ids["s2"])
        await c("aclrtSynchronizeDevice")


@contextlib.asynccontextmanager
async def workload(server: LiveServer, headers: dict[str, str] | None = None) -> AsyncIterator[asyncio.Task[None]]:
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as http:
        stop_now = asyncio.Event()
        task = asyncio.get_running_loop().create_task(replaying(RestCaller(http), stop_now))
        try:
            yield task
        finally:
            stop_now.set()
            await asyncio.wait_for(task, 20)


@contextlib.asynccontextmanager
async def browser_page(server: LiveServer) -> AsyncIterator[tuple[Any, list[str]]]:
    """A page of a fresh headless chromium; the list collects what went wrong in it and every URL it asked for
    that is not the daemon's own."""
    problems: list[str] = []
    async with playwright_api.async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True, timeout=30_000)
        try:
            page = await browser.new_page(viewport={"width": 1440, "height": 1000})
            origins = (server.url + "/", f"ws://127.0.0.1:{server.port}/", "blob:" + server.url + "/")

            def foreign(url: str) -> None:
                if not url.startswith(origins):
                    problems.append(f"asked for {url}")

            page.on("request", lambda request: foreign(request.url))
            page.on("websocket", lambda ws: foreign(ws.url))
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            yield page, problems
        finally:
            await browser.close()


async def wait_until(page: Any, script: str, timeout: float = 20.0) -> None:
    """Evaluate `script` every 0.1 s until it is true (polled from here: the page's CSP forbids the eval that
    page.wait_for_function polls with)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await page.evaluate(script):
        assert asyncio.get_running_loop().time() < deadline, f"still false after {timeout} s: {script}"
        await asyncio.sleep(0.1)


def keep_screenshot(image: Path, name: str) -> None:
    target = DOCS / name
    if os.environ.get("VNPU_SCREENSHOTS") == "1" or not target.exists():
        DOCS.mkdir(exist_ok=True)
        shutil.copyfile(image, target)


async def test_dashboard_shows_a_running_model_and_its_timeline(tmp_path: Path) -> None:
    async with live_daemon() as server, workload(server) as running, browser_page(server) as (page, problems):
        response = await page.goto(server.url + "/")
        assert response is not None and response.status == 200
        assert "script-src 'self'" in response.headers["content-security-policy"]
        expect = playwright_api.expect
        # the model's task list (its aclnn ops), its task group with updates, and its graph
        models = page.locator("#models")
        await expect(models).to_contain_text("aclnnAdds", timeout=20_000)
        await expect(models).to_contain_text("aclnnMuls")
        await expect(models).to_contain_text("ACL_MODEL_RI_TASK_EVENT_WAIT")
        await wait_until(
            page, "[...document.querySelectorAll('#models table.groups td.num')].some(td => +td.textContent > 0)"
        )
        await wait_until(page, "document.querySelector('#models .graph img')?.naturalWidth > 0")
        # devices, memory, contexts, and the stream blocked on its EXTERNAL event with its queue behind it
        await expect(page.locator("#devices")).to_contain_text("device 1")
        await expect(page.locator("#devices")).to_contain_text("memory 20")
        await expect(page.locator("#contexts tbody tr")).to_have_count(1)
        blocked = page.locator("#streams tr.blocked", has_text="aclrtStreamWaitEvent on event")
        await expect(blocked).to_have_count(1)
        await expect(blocked.locator("td.num")).to_have_text("4")  # the wait and the 3 kernels behind it
        # the timeline: events of the model's two lanes and of the streams, fed over the WebSocket
        await wait_until(page, "+document.querySelector('#timeline').dataset.events > 20")
        await wait_until(page, "+document.querySelector('#timeline').dataset.lanes >= 3")
        await expect(page.locator("#status")).to_have_text("live")
        await expect(page.locator("#models .state.running")).to_have_count(1)  # it shows where the model runs
        await wait_until(page, "+document.querySelector('#timeline').dataset.span >= 4")  # a fuller picture
        assert not running.done(), running
        shot = tmp_path / "dashboard.png"
        await page.screenshot(path=str(shot), full_page=True)
        trace_shot = tmp_path / "trace.png"
        await page.locator("#timeline-panel").screenshot(path=str(trace_shot))
        assert shot.stat().st_size > 20_000 and trace_shot.stat().st_size > 5_000
        assert problems == []
    keep_screenshot(shot, "dashboard.png")
    keep_screenshot(trace_shot, "trace.png")


async def test_with_a_token_the_page_asks_for_it_then_shows_data() -> None:
    token = "dash-token"
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        live_daemon(token=token) as server,
        workload(server, headers),
        browser_page(server) as (page, problems),
    ):
        await page.goto(server.url + "/")
        expect = playwright_api.expect
        await expect(page.locator("#login")).to_be_visible()
        await expect(page.locator("#content")).to_be_hidden()
        await page.fill("#token-input", "wrong")
        await page.click("#login button[type=submit]")
        await expect(page.locator("#login-error")).to_have_text("That token was refused.")
        await page.fill("#token-input", token)
        await page.click("#login button[type=submit]")
        await expect(page.locator("#models")).to_contain_text("aclnnAdds", timeout=20_000)
        await expect(page.locator("#login")).to_be_hidden()
        assert await page.evaluate("sessionStorage.getItem('vnpu-token')") == token
        await wait_until(page, "+document.querySelector('#timeline').dataset.events > 0")
        # a reload keeps the token (this tab's session storage); "Forget token" asks again
        await page.reload()
        await expect(page.locator("#devices")).to_contain_text("device 0")
        await page.click("#forget-token")
        await expect(page.locator("#login")).to_be_visible()
        # a link may carry it: /?token= is kept and taken out of the address bar
        await page.goto(f"{server.url}/?token={token}")
        await expect(page.locator("#devices")).to_contain_text("device 0")
        assert page.url == server.url + "/"
        # the refused tries are the only errors the browser saw (401 answers)
        assert all("401" in p for p in problems), problems


async def receive_json(ws: websockets.ClientConnection) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 5))
    return message


async def test_trace_live_pushes_a_tenants_own_events(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice token-of-alice\nbob token-of-bob\n")
    async with live_daemon(tokens_file=str(tokens)) as server:
        url = f"ws://127.0.0.1:{server.port}/v1/trace/live"
        with pytest.raises(websockets.InvalidStatus) as refused:
            await websockets.connect(url)
        assert refused.value.response.status_code == 401
        async with (
            websockets.connect(url + "?token=token-of-alice&window=0") as alice,
            websockets.connect(url, additional_headers={"Authorization": "Bearer token-of-bob"}) as bob,
            workload(server, {"Authorization": "Bearer token-of-alice"}),
        ):
            seen: list[dict[str, Any]] = []
            for _ in range(40):
                message = await receive_json(alice)
                assert message["enabled"] is True and message["nowUs"] > 0 and message["dropped"] == 0
                seen += [e for e in message["traceEvents"] if e["ph"] == "X"]
                if any(e["args"].get("Task Group") for e in seen):
                    break
            assert {e["cat"] for e in seen} >= {"kernel", "wait", "record"}
            assert all(e["ts"] <= message["nowUs"] for e in seen)
            for _ in range(3):  # bob's context is not alice's: nothing of hers reaches him
                assert (await receive_json(bob))["traceEvents"] == []


SPILL = """(panel => {
  const box = document.querySelector(panel), table = box.querySelector('table');
  return {table: table.getBoundingClientRect().right, panel: box.getBoundingClientRect().right,
          overflow: getComputedStyle(box).overflowX, page: document.documentElement.scrollWidth};
})"""


async def test_a_narrow_window_and_a_daemon_that_went_away(tmp_path: Path) -> None:
    """At 900 px a table wider than its panel scrolls inside it, not over the page's edge; the contexts table
    names its column device(s) (ids, not a count) and shows each context's memory and age; when the daemon stops
    answering, the page says so and greys the tables it can no longer refresh."""
    server, task = await serve()
    running = True
    try:
        async with (
            httpx.AsyncClient(base_url=server.url, timeout=30) as http,
            browser_page(server) as (page, problems),
        ):
            c = RestCaller(http)
            await c("aclInit", configPath=None)
            await c("aclrtSetDevice", deviceId=0)
            await c("aclrtCreateStream")
            await c("aclrtMalloc", size=3 << 20, policy=0)
            await page.set_viewport_size({"width": 900, "height": 900})
            await page.goto(server.url + "/")
            expect = playwright_api.expect
            await expect(page.locator("#contexts tbody tr")).to_have_count(1, timeout=20_000)
            await expect(page.locator("#contexts thead th").nth(2)).to_have_text("device(s)")
            cells = page.locator("#contexts tbody td")
            await expect(cells.nth(2)).to_have_text("0")
            await expect(cells.nth(3)).to_have_text("3 MiB")  # what the context holds, and since when
            await expect(cells.nth(4)).to_have_text(re.compile(r"^\d+\.\d s$"))
            for panel in ("#contexts-panel", "#streams-panel"):
                box = await page.evaluate(f"{SPILL}('{panel}')")
                assert box["table"] <= box["panel"] + 1 or box["overflow"] in ("auto", "scroll"), (panel, box)
                assert box["page"] <= 900, (panel, box)
            await expect(page.locator("#content")).not_to_have_class("stale")
            await stop(server, task)
            running = False
            await expect(page.locator("#status")).to_contain_text("daemon unreachable", timeout=20_000)
            await expect(page.locator("#content")).to_have_class("stale")
            await page.screenshot(path=str(tmp_path / "stale.png"), full_page=True)
            assert [p for p in problems if "ERR_CONNECTION_REFUSED" not in p and "WebSocket" not in p] == []
    finally:
        if running:
            await stop(server, task)
