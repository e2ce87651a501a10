"""The socket `vnpu serve` binds itself: accepted TCP connections send small replies at once (TCP_NODELAY)."""

from __future__ import annotations

import asyncio
import socket

from server.api.listening import bind


async def test_accepted_tcp_connections_have_nodelay() -> None:
    """asyncio turns Nagle off only on sockets whose protocol is TCP; a socket made with proto 0 kept it on, and
    every REST reply waited for the client's delayed ACK (44 ms a call, the REST fuzz ran past its timeout)."""
    accepted: asyncio.Queue[int] = asyncio.Queue()

    def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        accepted.put_nowait(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    sock = bind("127.0.0.1", 0)
    server = await asyncio.start_server(connected, sock=sock)
    try:
        _, writer = await asyncio.open_connection(*sock.getsockname())
        assert await asyncio.wait_for(accepted.get(), 10) != 0
        writer.close()
        await writer.wait_closed()
    finally:
        server.close()
        await server.wait_closed()
