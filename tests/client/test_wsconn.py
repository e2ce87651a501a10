"""The client's WebSocket connection: fragmented messages, a refused handshake, a connection that ends."""

from __future__ import annotations

import pytest
from websockets.frames import Frame, Opcode

from client.config import Config
from client.errors import TransportError
from client.session import Session
from client.wsconn import WsConnection
from tests.client.conftest import daemon_thread


def test_fragments_become_one_message_and_control_frames_are_skipped() -> None:
    conn = object.__new__(WsConnection)
    conn._parts, conn._messages = [], []
    for frame in (
        Frame(Opcode.BINARY, b"ab", fin=False),
        Frame(Opcode.PING, b""),
        Frame(Opcode.CONT, b"cd", fin=False),
        Frame(Opcode.CONT, b"e"),
        Frame(Opcode.BINARY, b"xyz"),
    ):
        conn._take(frame)
    assert conn._messages == [b"abcde", b"xyz"] and conn._parts == []


def test_a_refused_handshake_names_the_status_and_a_good_one_works() -> None:
    with daemon_thread(token="s3cret") as url:
        with pytest.raises(TransportError, match="HTTP 401"):
            Session(Config(endpoint=url, token="wrong"))
        session = Session(Config(endpoint=url, token="s3cret"))
        try:
            session.call("aclInit", None)
            session.call("aclrtSetDevice", 1)
            assert session.call("aclrtGetDevice") == 1
        finally:
            session.close()
