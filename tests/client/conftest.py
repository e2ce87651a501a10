"""Live daemons for the client tests: uvicorn in a thread of its own (the blocking client would stall a daemon
sharing its thread), on a free 127.0.0.1 port, stopped at the end of the module."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from server.api.settings import Settings
from server.app import create_app
from tests.server.api.conftest import free_port


@contextlib.contextmanager
def daemon_thread(devices: int = 2, token: str | None = None) -> Iterator[str]:
    """A daemon with `devices` devices of 64 MiB (and `token` required, if given); yields its URL."""
    settings = Settings(devices=devices, memory=64 << 20, context_grace=0.05, token=token)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name=f"vnpu-daemon-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.started, "the daemon did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)
        assert not thread.is_alive()


@pytest.fixture(scope="module")
def daemon() -> Iterator[str]:
    with daemon_thread() as url:
        yield url
