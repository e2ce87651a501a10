"""Reliability 21 (slowloris): a connection that does not finish its request head in time is closed, before any
token is checked, and everyone else is served; a WebSocket and a kept-alive connection in use are not touched."""

from __future__ import annotations

import asyncio

import httpx
import uvicorn
import websockets

from server.api.slowclients import guarded
from server.app import create_app
from tests.server.api.conftest import free_port
from tests.server.api.conftest import test_settings as make_settings

DEADLINE = 0.5


async def test_half_sent_heads_are_closed_and_others_are_served() -> None:
    port = free_port()
    config = uvicorn.Config(
        create_app(make_settings(token="t0k")), host="127.0.0.1", port=port, log_level="warning",
        http=guarded(DEADLINE),
    )  # fmt: skip
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve())
    try:
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.01)
        slow = []
        for _ in range(20):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /v1/devices HTTP/1.1\r\nHost: x\r\n")  # and never the end of the head
            slow.append((reader, writer))
        async with websockets.connect(f"ws://127.0.0.1:{port}/v1/trace/live?token=t0k") as live:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                assert (await http.get("/healthz")).status_code == 200
                await asyncio.sleep(DEADLINE * 3)  # the kept-alive connection idles past the deadline...
                for reader, _ in slow:  # ...the half-sent heads were closed by the daemon
                    assert await asyncio.wait_for(reader.read(), 2) == b""
                assert (await http.get("/healthz")).status_code == 200
            assert "traceEvents" in await asyncio.wait_for(live.recv(), 2)  # a WebSocket is not a head
            await asyncio.sleep(DEADLINE * 2)
            assert "traceEvents" in await asyncio.wait_for(live.recv(), 2)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # a whole head in time: answered
        assert (await asyncio.wait_for(reader.readline(), 2)).startswith(b"HTTP/1.1 200")
        writer.close()
        for _, w in slow:
            w.close()
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
