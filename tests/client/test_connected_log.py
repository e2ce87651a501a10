"""Which daemon a program reached (issue 40, 4; newcomer-3's shared-machine hazard): opening a session logs the
endpoint, transport and context at info level on the `vnpu.client` logger."""

from __future__ import annotations

import logging

import pytest

from client.config import Config
from client.session import Session


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_a_session_logs_the_daemon_it_reached(daemon: str, transport: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="vnpu.client"):
        session = Session(Config(endpoint=daemon, transport=transport))
    try:
        over = "the WebSocket" if transport == "ws" else "HTTP"
        said = [r.getMessage() for r in caplog.records if r.name == "vnpu.client"]
        assert said == [
            f"connected to the vnpu daemon at {daemon} over {over}: context {session.context_id}, "
            f"session {session.session_id}"
        ]
    finally:
        session.close()
