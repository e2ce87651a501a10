"""A blocking WebSocket connection on the sans-I/O protocol of `websockets`: callers' threads send, one reader
thread receives straight from the socket.

(websockets' own blocking client reads in a thread of its own and hands each message over to the thread that
asked; under the session's reader thread that made two thread hops per reply, about 200 µs on a busy 2-core
machine. Here a reply costs one hop, as in a bare echo.)
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading

from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed, ConnectionClosedError
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import State
from websockets.uri import parse_uri

CHUNK = 1 << 20


class WsConnection:
    def __init__(self, url: str, headers: dict[str, str], timeout: float, uds: str | None = None) -> None:
        """Open the connection (over the Unix socket at `uds` if given) and shake hands; the socket keeps `timeout`
        until `set_timeout`."""
        uri = parse_uri(url)
        if uds:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            try:
                sock.connect(uds)
            except OSError:
                sock.close()
                raise
        else:
            sock = socket.create_connection((uri.host, uri.port), timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # small frames leave at once
        if uri.secure:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=uri.host)
        self._sock = sock
        self._protocol = ClientProtocol(uri, max_size=None)  # no extensions: no compression
        self._lock = threading.Lock()  # the protocol and the socket's sending side
        self._parts: list[bytes] = []  # the frames of a fragmented message so far
        self._messages: list[bytes] = []  # messages received and not yet returned
        request = self._protocol.connect()
        for name, value in headers.items():
            request.headers[name] = value
        with self._lock:
            self._protocol.send_request(request)
            self._flush()
        try:
            while not self._handshake_done():
                self._receive()
        except BaseException:
            sock.close()
            raise

    def _handshake_done(self) -> bool:
        done = False
        for event in self._protocol.events_received():
            if isinstance(event, Response):
                if self._protocol.handshake_exc is not None:
                    raise self._protocol.handshake_exc
                done = True
            else:
                self._take(event)  # a message that came with the response
        return done

    def set_timeout(self, timeout: float | None) -> None:
        self._sock.settimeout(timeout)

    def send(self, data: bytes) -> None:
        """Send one binary message (any thread)."""
        with self._lock:
            if self._protocol.state is not State.OPEN:
                raise self._closed()
            self._protocol.send_binary(data)
            self._flush()

    def recv(self) -> bytes:
        """The next message (one thread at a time); ConnectionClosed when the connection ends."""
        while not self._messages:
            self._receive()
            for event in self._protocol.events_received():
                self._take(event)
        return self._messages.pop(0)

    def close(self) -> None:
        with self._lock, contextlib.suppress(OSError):
            if self._protocol.state is State.OPEN:
                self._protocol.send_close()
                self._flush()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()

    def _receive(self) -> None:
        try:
            data = self._sock.recv(CHUNK)
        except TimeoutError:
            raise
        except OSError:  # reset by the peer: the connection ended without a closing handshake
            data = b""
        with self._lock:
            if data:
                self._protocol.receive_data(data)
            else:
                self._protocol.receive_eof()
            self._flush()  # pongs and the closing handshake
        if not data:
            raise self._closed()

    def _closed(self) -> ConnectionClosed:
        protocol = self._protocol
        if protocol.state is State.CLOSED:
            return protocol.close_exc
        return ConnectionClosedError(protocol.close_rcvd, protocol.close_sent)

    def _take(self, event: object) -> None:
        if not isinstance(event, Frame) or event.opcode not in (Opcode.BINARY, Opcode.TEXT, Opcode.CONT):
            return  # pings are answered by the protocol; a close shows as the end of the data
        self._parts.append(bytes(event.data))
        if event.fin:
            self._messages.append(b"".join(self._parts))
            self._parts = []

    def _flush(self) -> None:
        for chunk in self._protocol.data_to_send():
            if chunk:
                self._sock.sendall(chunk)
            else:  # the protocol half-closes after the closing handshake
                with contextlib.suppress(OSError):
                    self._sock.shutdown(socket.SHUT_WR)


__all__ = ["ConnectionClosed", "WsConnection"]
