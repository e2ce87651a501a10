"""The dashboard: `GET /` serves one static page (server/api/static/: plain HTML, JS and CSS, nothing fetched from
elsewhere) that reads the REST views, and the WebSocket `/v1/trace/live` feeds its timeline.

`/v1/trace/live` pushes, every `PERIOD` seconds, the tenant's trace events that ended since the previous message
(the first message: those of the last `?window=` seconds, default 10) as JSON text:
`{"now", "nowUs", "enabled", "traceEvents", "displayTimeUnit", "contexts", "dropped", "tenant"}` -- the answer of
`GET /v1/trace` plus the trace clock in the events' microseconds and the viewer's tenant. With tokens it needs a
token as `/v1/ws` does (the page sends it as the subprotocol `vnpu.token.<hex>`). A tenant has at most
`MAX_VIEWERS` of these at a time; one more is closed with code 4429. Each message costs what is new since the
previous one, not a scan of the trace. The page keeps what it received (timeline.js: a bounded history) to scroll
back in.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import Counter
from pathlib import Path
from typing import Any

from fastapi import FastAPI, WebSocket
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from server.api.auth import Unauthorized, offered_subprotocol, tenant_of
from server.api.observe import trace_payload
from server.api.ws import refuse

STATIC = Path(__file__).resolve().parent / "static"
PERIOD = 0.25  # seconds between two messages of /v1/trace/live
WINDOW = 10.0  # seconds of history in the first message (the page shows as much)
MAX_WINDOW = 60.0
MAX_EVENTS = 5000  # task events per message; the oldest beyond are dropped (counted in "dropped")
MAX_VIEWERS = 16  # live viewers per tenant
# The page loads only its own files: scripts, styles, the graph images (blob: URLs) and the WebSocket are same-origin.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def live_payload(websocket: WebSocket, since: float) -> dict[str, Any]:
    """What `GET /v1/trace?since=` answers -- the same function, so the same tenant filtering -- with the clock in
    trace microseconds and at most MAX_EVENTS task events (the latest)."""
    # trace_payload reads only what every HTTP connection has (the app, the token's header or query parameter)
    payload = trace_payload(websocket, since)
    events: list[dict[str, Any]] = payload["traceEvents"]
    tasks = [e for e in events if e["ph"] == "X"]
    dropped = max(0, len(tasks) - MAX_EVENTS)
    if dropped:
        payload["traceEvents"] = [e for e in events if e["ph"] != "X"] + tasks[dropped:]
    tracer = websocket.app.state.machine.tracer
    payload["tenant"] = tenant_of(websocket, websocket.app.state.settings.tokens)
    payload["nowUs"] = round((payload["now"] - tracer.epoch) * 1e6, 3)
    payload["dropped"] = dropped
    return payload


def _window(text: str | None) -> float:
    try:
        value = float(text) if text is not None else WINDOW
    except ValueError:
        return WINDOW
    return min(max(value, 0.0), MAX_WINDOW) if math.isfinite(value) else WINDOW


async def trace_live(websocket: WebSocket) -> None:
    try:
        tenant = tenant_of(websocket, websocket.app.state.settings.tokens)
    except Unauthorized as error:
        await refuse(websocket, error)
        return
    viewers: Counter[str] = websocket.app.state.live_viewers
    await websocket.accept(subprotocol=offered_subprotocol(websocket))
    if viewers[tenant] >= MAX_VIEWERS:
        await websocket.close(code=4429, reason=f"this tenant already has {MAX_VIEWERS} live trace viewers open")
        return
    viewers[tenant] += 1
    try:
        await _feed(websocket)
    finally:
        viewers[tenant] -= 1


async def _feed(websocket: WebSocket) -> None:
    since = websocket.app.state.machine.tracer.clock() - _window(websocket.query_params.get("window"))
    receiving = asyncio.ensure_future(websocket.receive())  # the client sends nothing; this sees it leave
    try:
        while True:
            payload = live_payload(websocket, since)
            since = payload["now"]
            await websocket.send_json(payload)
            done, _ = await asyncio.wait({receiving}, timeout=PERIOD)
            if done:
                if receiving.result()["type"] == "websocket.disconnect":
                    return
                receiving = asyncio.ensure_future(websocket.receive())
    except Exception:  # the connection went away while sending (WebSocketDisconnect, RuntimeError, OSError)
        return
    finally:
        receiving.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await receiving


def install(app: FastAPI) -> None:
    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        headers = {"Content-Security-Policy": CSP, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
        return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8", headers=headers)

    app.mount("/dashboard", StaticFiles(directory=STATIC), name="dashboard")
    app.add_api_websocket_route("/v1/trace/live", trace_live)
