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
        for transport in ("ws", "http"):
            with pytest.raises(TransportError) as wrong:
                Session(Config(endpoint=url, token="wrong", transport=transport))
            assert str(wrong.value) == (
                f"the vnpu daemon at {url} requires a token: check VNPU_TOKEN (it was not accepted) (HTTP 401)"
            )
            with pytest.raises(TransportError) as missing:
                Session(Config(endpoint=url, token="", transport=transport))
            assert "requires a token: set VNPU_TOKEN to one of the daemon's tokens (HTTP 401)" in str(missing.value)
        session = Session(Config(endpoint=url, token="s3cret"))
        try:
            session.call("aclInit", None)
            session.call("aclrtSetDevice", 1)
            assert session.call("aclrtGetDevice") == 1
        finally:
            session.close()


def test_the_asyncio_client_says_the_same_of_a_refused_token() -> None:
    import asyncio

    from client.aio import AsyncSession

    with daemon_thread(token="s3cret") as url:
        for transport in ("ws", "http"):
            with pytest.raises(TransportError, match=r"requires a token: check VNPU_TOKEN \(it was not accepted\)"):
                asyncio.run(AsyncSession.connect(Config(endpoint=url, token="wrong", transport=transport)))
