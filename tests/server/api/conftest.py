"""Fixtures for the daemon: the ASGI app in-process (httpx, no sockets) and a live uvicorn server on a free
127.0.0.1 port in the test's own event loop (for WebSocket clients)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from server.api.settings import Settings
from server.app import create_app
from tests.system import CHROMIUM, require

MEMORY = 64 << 20


def test_settings(**overrides: object) -> Settings:
    base: dict[str, object] = {"devices": 2, "memory": MEMORY, "context_grace": 0.05, "shutdown_deadline": 5.0}
    base.update(overrides)
    return Settings(**base)  # type: ignore[arg-type]


@pytest.fixture
def chromium() -> str:
    """Debian's chromium for the dashboard's browser tests: a skip without it, a failure under CI."""
    return require(CHROMIUM, "chromium")


@pytest.fixture
async def app() -> AsyncIterator[FastAPI]:
    application = create_app(test_settings())
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def http(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://vnpu") as client:
        yield client


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LiveServer:
    def __init__(self, app: FastAPI, port: int, server: uvicorn.Server) -> None:
        self.app, self.port, self.server = app, port, server

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/v1/ws"


async def start_live(settings: Settings) -> tuple[LiveServer, asyncio.Task[None]]:
    application = create_app(settings)
    port = free_port()
    config = uvicorn.Config(
        application, host="127.0.0.1", port=port, log_level="warning", ws_max_size=settings.max_message
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve())
    for _ in range(500):
        if server.started:
            break
        await asyncio.sleep(0.01)
    assert server.started, "uvicorn did not start"
    return LiveServer(application, port, server), task


@pytest.fixture
async def live() -> AsyncIterator[LiveServer]:
    server, task = await start_live(test_settings())
    yield server
    server.server.should_exit = True
    await asyncio.wait_for(task, 10)
