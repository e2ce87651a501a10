"""The dashboard with ten programs running, in headless chromium: the timeline grouped and filtered by context,
model and tenant (the view kept in the URL's hash), idle lanes folded, paused and scrolled; failed tasks in their
own colour and named in the error list with the code and message the program got; a 200-kernel model folded in
its card and in its graph.

Ten REST clients, each its own context: seven launch kernels on a stream and check the values; one replays a
model of 200 Adds then a task group; one makes a kernel read memory freed under it, again and again, and keeps
each AclError its synchronize raised; one runs a burst and then idles, so its lane goes idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

import proto.aclnn as nn
from proto.constants import aclDataType
from proto.errors import AclError
from tests.server.api.callers import RestCaller
from tests.server.api.conftest import LiveServer
from tests.server.api.test_calls import Remote
from tests.server.api.test_dashboard import browser_page, keep_screenshot, live_daemon, wait_until
from tests.server.npu.devicekit import tensor_at
from tests.server.npu.model.test_modelgraph import svg_boxes

playwright_api = pytest.importorskip("playwright.async_api")
pytestmark = pytest.mark.usefixtures("chromium")  # tests/server/api/conftest.py: a skip, or a failure under CI

F32 = aclDataType.ACL_FLOAT
N = 16
RUN = 200  # the big model's run of equal kernels
ADDS = "aclnnAdds kernel Adds"
FAILED_RGB = [0xE3, 0x34, 0x2F]  # COLORS.failed in timeline.js
PAGE_Y = """[document.querySelector('#timeline-panel').getBoundingClientRect().top + scrollY,
    document.querySelector('#models-panel').getBoundingClientRect().bottom + scrollY]"""  # the picture's, in the page
Program = Callable[[RestCaller, asyncio.Event, dict[str, Any]], Awaitable[None]]


async def start(c: RestCaller, note: dict[str, Any]) -> tuple[Remote, int]:
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    return Remote(c), (await c("aclrtCreateStream"))["stream"]


def scalar(value: float) -> nn.aclScalar:
    return nn.aclCreateScalar(value, F32)


async def eager(c: RestCaller, stop: asyncio.Event, note: dict[str, Any]) -> None:
    """x += v on a stream, synchronized each time, until stopped; then x is checked."""
    r, s = await start(c, note)
    rng = np.random.default_rng(len(note))
    x0 = rng.standard_normal(N).astype(np.float32)
    ptr = await r.put(x0)
    x = tensor_at(ptr, (N,), F32)
    total = 0.0
    while not stop.is_set():
        value = float(rng.integers(1, 4))
        await r.launch("Adds", s, x, scalar(value), scalar(1.0), x)
        total += value
        await c("aclrtSynchronizeStream", stream=s)
        await asyncio.sleep(0.05)
    np.testing.assert_allclose(await r.get(ptr, (N,)), x0.astype(np.float64) + total, rtol=1e-5)


async def big_model(c: RestCaller, stop: asyncio.Event, note: dict[str, Any]) -> None:
    """A model of RUN equal Adds then a task group of two, replayed until stopped; x is checked each time."""
    r, s = await start(c, note)
    x0 = np.random.default_rng(7).standard_normal(N).astype(np.float32)
    ptr = await r.put(x0)
    x = tensor_at(ptr, (N,), F32)
    await c("aclmdlRICaptureBegin", stream=s, mode=0)
    for _ in range(RUN):
        await r.launch("Adds", s, x, scalar(1.0), scalar(1.0), x)
    await c("aclmdlRICaptureTaskGrpBegin", stream=s)
    for _ in range(2):
        await r.launch("Adds", s, x, scalar(1.0), scalar(1.0), x)
    await c("aclmdlRICaptureTaskGrpEnd", stream=s)
    note["model"] = model = (await c("aclmdlRICaptureEnd", stream=s))["modelRI"]
    runs = 0
    while not stop.is_set():
        await c("aclmdlRIExecuteAsync", modelRI=model, stream=s)
        await c("aclrtSynchronizeStream", stream=s)
        runs += 1
        await asyncio.sleep(0.1)
    np.testing.assert_allclose(await r.get(ptr, (N,)), x0.astype(np.float64) + runs * (RUN + 2), rtol=1e-5)


async def failing(c: RestCaller, stop: asyncio.Event, note: dict[str, Any]) -> None:
    """A kernel held behind an event reads memory that is freed before the event is recorded: it fails."""
    r, s = await start(c, note)
    other = (await c("aclrtCreateStream"))["stream"]
    out = tensor_at(await r.put(np.zeros(N)), (N,), F32)
    note["errors"] = errors = []
    while not stop.is_set():
        freed = (await c("aclrtMalloc", size=N * 4, policy=0))["devPtr"]
        gate = (await c("aclrtCreateEvent"))["event"]
        await c("aclrtStreamWaitEvent", stream=s, event=gate)
        await r.launch("Adds", s, tensor_at(freed, (N,), F32), scalar(1.0), scalar(1.0), out)
        await c("aclrtFree", devPtr=freed)
        await c("aclrtRecordEvent", event=gate, stream=other)
        with pytest.raises(AclError) as caught:
            await c("aclrtSynchronizeStream", stream=s)
        errors.append(caught.value)
        await c("aclrtDestroyEvent", event=gate)
        await asyncio.sleep(0.2)


async def burst(c: RestCaller, stop: asyncio.Event, note: dict[str, Any]) -> None:
    """Ten kernels at the start, then nothing: its lane goes idle (the session stays open)."""
    r, s = await start(c, note)
    x = tensor_at(await r.put(np.ones(N)), (N,), F32)
    for _ in range(10):
        await r.launch("Muls", s, x, scalar(1.5), x)
    await c("aclrtSynchronizeStream", stream=s)
    note["idle_since"] = asyncio.get_running_loop().time()
    await stop.wait()


PROGRAMS: list[Program] = [eager] * 7 + [big_model, failing, burst]


@contextlib.asynccontextmanager
async def ten_programs(server: LiveServer) -> AsyncIterator[list[dict[str, Any]]]:
    """The ten programs, each with its own client (so its own context), stopped and checked at the end."""
    stop = asyncio.Event()
    notes: list[dict[str, Any]] = [{"index": i} for i in range(len(PROGRAMS))]
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(httpx.AsyncClient(base_url=server.url, timeout=30)) for _ in notes]
        callers = []
        for http, note in zip(clients, notes, strict=True):
            opened = (await http.post("/v1/sessions")).json()
            note["context"] = opened["context"]
            callers.append(RestCaller(http, opened["session"]))
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(p(c, stop, n)) for p, c, n in zip(PROGRAMS, callers, notes, strict=True)]
        try:
            for _ in range(200):  # every program under way
                failed = [t for t in tasks if t.done()]
                assert not failed, [t.exception() for t in failed]
                if "model" in notes[7] and notes[8].get("errors") and "idle_since" in notes[9]:
                    break
                await asyncio.sleep(0.05)
            yield notes
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks), 20)
    assert len({n["context"] for n in notes}) == 10


@contextlib.asynccontextmanager
async def opened(page: Any, server: LiveServer) -> AsyncIterator[list[dict[str, Any]]]:
    """The page opened first, then the programs started: it sees every task live (one opened later would get
    only the newest MAX_EVENTS tasks of the past, which the big model soon fills, and miss the burst's)."""
    await page.goto(server.url + "/")
    await wait_until(page, "document.querySelector('#status').textContent === 'live'")
    async with ten_programs(server) as notes:
        yield notes


async def until_groups(page: Any, test: str) -> None:
    """Wait until `test`, a JavaScript function of the timeline's groups (as drawn), is true."""
    await wait_until(page, f"({test})(JSON.parse(document.querySelector('#timeline').dataset.groups || '[]'))")


async def groups(page: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(await page.evaluate("document.querySelector('#timeline').dataset.groups"))
    return found


async def test_ten_programs_grouped_filtered_and_idle_lanes_folded(tmp_path: Path) -> None:
    async with live_daemon() as server, browser_page(server) as (page, problems), opened(page, server) as notes:
        contexts = {n["context"] for n in notes}
        # by context (the default): one group per program, each labelled with its context
        await until_groups(page, "gs => gs.length >= 10")
        by_context = await groups(page)
        assert {g["key"] for g in by_context} == contexts
        assert all(g["label"].startswith(f"context {g['key'][:8]}") for g in by_context)
        # by model: the big model's lanes in a group of their own, the rest "not in a model"
        model = f"{notes[7]['model']:#x}"
        await page.select_option("#tl-group", "model")
        await until_groups(page, f"gs => gs.some(g => g.label === 'model {model}')")
        labels = [g["label"] for g in await groups(page)]
        assert f"model {model}" in labels and "not in a model" in labels
        # by tenant: there is one (no tokens: "default"), which holds every lane
        await page.select_option("#tl-group", "tenant")
        await until_groups(page, "gs => gs.length === 1 && gs[0].key === 'default'")
        assert [g["label"] for g in await groups(page)] == ["tenant default"]
        # filter by model: only its replay's lanes; by context: only that program's
        await page.select_option("#tl-model", model)
        await until_groups(page, f"gs => gs.every(g => g.lanes.every(l => l.tid.startsWith('model {model} ')))")
        lanes = [lane["tid"] for g in await groups(page) for lane in g["lanes"]]
        assert lanes and all(tid.startswith(f"model {model} stream #") for tid in lanes), lanes
        await page.select_option("#tl-model", "")
        await page.select_option("#tl-group", "context")
        # zoomed in to 1 s, the burst program's lane has been idle for longer: it folds, and shows on demand
        for _ in range(3):
            await page.click("#tl-zoom-in")
        assert "span=1" in page.url
        await wait_until(page, "document.querySelector('#timeline-window').textContent === '(last 1 s, live)'")
        await wait_until(page, "+document.querySelector('#timeline').dataset.idle >= 1")
        idle_context = notes[9]["context"]
        burst_group = next(g for g in await groups(page) if g["key"] == idle_context)
        assert all(lane["events"] == 0 for lane in burst_group["lanes"])
        shot = tmp_path / "dashboard_programs.png"
        await page.locator("#timeline-panel").screenshot(path=str(shot))
        shown, idle = await page.evaluate("(d => [+d.lanes, +d.idle])(document.querySelector('#timeline').dataset)")
        await page.check("#tl-idle")
        await wait_until(page, f"+document.querySelector('#timeline').dataset.lanes >= {shown + idle}")
        assert "idle=show" in page.url
        # paused, the picture stops; scrolled back it shows the past; Live follows now again
        await page.click("#tl-pause")
        await expect_text(page, "#tl-pause", "Live")
        await page.click("#tl-back")
        paused = "/ending [0-9.]+ s ago, paused/.test(document.querySelector('#timeline-window').textContent)"
        await wait_until(page, paused)
        await page.click("#tl-pause")
        await wait_until(page, "document.querySelector('#timeline-window').textContent === '(last 1 s, live)'")
        failing_context = notes[8]["context"]
        await page.select_option("#tl-context", failing_context)
        await until_groups(page, "gs => gs.length === 1")
        assert [g["key"] for g in await groups(page)] == [failing_context]
        rows = page.locator("#errors tbody tr")
        assert await rows.count() > 0
        assert set(await page.locator("#errors tbody td:nth-child(2)").all_text_contents()) == {failing_context[:8]}
        # the view is in the hash: a reload comes back to it
        assert f"context={failing_context}" in page.url
        await page.reload()
        await until_groups(page, "gs => gs.length === 1")
        assert await page.input_value("#tl-context") == failing_context
        assert problems == []
    keep_screenshot(shot, "dashboard_programs.png")


async def expect_text(page: Any, selector: str, text: str) -> None:
    await playwright_api.expect(page.locator(selector)).to_have_text(text)


async def test_failures_look_failed_and_big_models_fold(tmp_path: Path) -> None:
    async with live_daemon() as server, browser_page(server) as (page, problems), opened(page, server) as notes:
        # a failed task: the legend's "failed" colour, drawn where the canvas says it is
        legend = page.locator("#legend [data-kind=failed] .swatch")
        assert await legend.evaluate("s => getComputedStyle(s).backgroundColor") == "rgb(227, 52, 47)"
        await wait_until(page, "document.querySelector('#timeline').dataset.failedAt !== ''")
        pixel = await page.evaluate(
            """(() => { const c = document.querySelector('#timeline'), r = window.devicePixelRatio || 1;
            const [x, y] = c.dataset.failedAt.split(',').map(Number);
            return [...c.getContext('2d').getImageData(Math.round(x * r), Math.round(y * r), 1, 1).data]; })()"""
        )
        assert pixel[:3] == FAILED_RGB, pixel
        # the error list names each failure: its call, code and message, those the program's synchronize raised
        error: AclError = notes[8]["errors"][0]
        row = page.locator("#errors tbody tr").first
        await playwright_api.expect(row.locator("td.code")).to_have_text(f"{error.code} {error.name}")
        await playwright_api.expect(row.locator("td.call")).to_have_text("aclnnAdds kernel Adds")
        message = await row.locator("td.message").text_content()
        assert message and message in error.message, (message, error.message)
        await playwright_api.expect(page.locator("#errors-panel h2")).to_have_text(re.compile(r"Errors \(\d+\)"))
        await playwright_api.expect(row.locator("td.lane")).to_have_text(re.compile(r"dev 0 · stream 0x[0-9a-f]+"))
        # the big model: its card folds the run of 200 equal kernels, the task group's two are shown one by one
        model = notes[7]["model"]
        card = page.locator(f"#models .model[data-model='{model}']")
        await playwright_api.expect(card.locator("pre.tasks")).to_contain_text(f"×{RUN}", timeout=15_000)
        text = await card.locator("pre.tasks").text_content() or ""
        assert f"0–{RUN - 1}  ACL_MODEL_RI_TASK_KERNEL" in text and text.count("aclnnAdds kernel Adds") == 1 + 2
        await playwright_api.expect(card.locator(".fold-note")).to_contain_text("folded")
        # and its graph: one node for the run, an image of a reasonable height
        await wait_until(page, f"document.querySelector(\"[data-model='{model}'] .graph img\")?.naturalHeight > 0")
        assert await card.locator(".graph img").evaluate("i => i.naturalHeight") < 600
        async with httpx.AsyncClient(base_url=server.url) as http:
            picture = (await http.get(f"/v1/models/{model}/graph")).text
        shown = [" ".join(lines) for _, lines, _ in svg_boxes(picture)]
        assert shown.count(f"#0–#{RUN - 1} {ADDS} ×{RUN}") == 1 and shown.count(ADDS) == 2
        shot = tmp_path / "dashboard_errors.png"
        top, bottom = await page.evaluate(PAGE_Y)
        clip = {"x": 0, "y": top - 8, "width": 1440, "height": bottom - top + 16}
        await page.screenshot(path=str(shot), full_page=True, clip=clip)
        # clicked (after the picture), the oldest failure comes to the middle of a paused zoomed-in view, in red
        for _ in range(7):
            await page.click("#tl-zoom-in")
        await page.locator("#errors tbody tr").last.click()
        await playwright_api.expect(page.locator("#timeline-window")).to_contain_text("0.05 s ending")
        assert await page.evaluate("document.querySelector('#timeline').dataset.failedAt") != ""
        await page.click("#tl-pause")
        assert problems == []
    keep_screenshot(shot, "dashboard_errors.png")
