"""VNPU_ENDPOINT=embedded: the daemon's own application, run inside this process and reached over an in-memory
ASGI WebSocket -- no daemon, no socket, and the very code a daemon runs: the same call table, checks, codes and
pipelining. For one-process programs, unit tests and the C toolkit.

The device (`server`) is loaded on the first session, never at import: `client` does not import `server` otherwise
(tests/test_import_rules.py names this module as the one exception). The application runs its lifespan on an event
loop in a thread of its own; at exit its contexts are released and its shared memory unlinked, as a daemon's are
at SIGTERM. Contexts live in this process: joining one from another process, and IPC with another process, need a
daemon (`vnpu serve`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import queue
import threading
from collections.abc import AsyncIterator, Callable, MutableMapping
from concurrent.futures import Future
from typing import Any

from websockets.exceptions import ConnectionClosed, ConnectionClosedError, ConnectionClosedOK
from websockets.frames import Close

ENDPOINT = "embedded"
START_TIMEOUT = 60.0  # seconds for the device to start (numpy, the operator table, the arena)
CLOSED = object()  # the end of a connection's messages


class EmbeddedDevice:
    """The daemon's application on an event loop in a thread of this process (one per process: `get()`)."""

    _instance: EmbeddedDevice | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        from server.app import create_app  # on demand, never at import: the one import of `server` in `client`

        self.app = create_app(embedded=True)  # the WebSocket alone: no REST routes to build
        self.loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        started: Future[None] = Future()
        self._thread = threading.Thread(target=self._run, args=(started,), name="vnpu-embedded", daemon=True)
        self._thread.start()
        started.result(START_TIMEOUT)
        atexit.register(self.close)

    @classmethod
    def get(cls) -> EmbeddedDevice:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def _run(self, started: Future[None]) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._serve(started))
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    async def _serve(self, started: Future[None]) -> None:
        self._stop = asyncio.Event()
        try:
            async with self._lifespan():
                started.set_result(None)
                await self._stop.wait()
        except BaseException as error:
            if not started.done():
                started.set_exception(error)
            raise

    @contextlib.asynccontextmanager
    async def _lifespan(self) -> AsyncIterator[None]:
        async with self.app.router.lifespan_context(self.app):
            yield

    def close(self) -> None:
        """Release every context and the shared memory (at exit, or in a test); a later session starts anew."""
        with EmbeddedDevice._lock:
            if EmbeddedDevice._instance is self:
                EmbeddedDevice._instance = None
        if self._stop is not None and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self._stop.set)
            self._thread.join()
        atexit.unregister(self.close)


class EmbeddedConnection:
    """A WebSocket connection to the embedded device, with `WsConnection`'s methods: callers' threads send, one
    reader thread receives."""

    def __init__(
        self, query: str, headers: dict[str, str], timeout: float, deliver: Callable[[object], None] | None = None
    ) -> None:
        """`deliver` takes each message (bytes) and finally `CLOSED`, on the device's loop; by default they wait
        for `recv`."""
        self._device = EmbeddedDevice.get()
        self._loop = self._device.loop
        self._inbound: asyncio.Queue[dict[str, Any]] = asyncio.Queue()  # filled from callers' threads
        self._outbound: queue.SimpleQueue[object] = queue.SimpleQueue()  # messages for `recv`
        self._deliver = deliver or self._outbound.put
        self._accepted = threading.Event()
        self._close: Close | None = None  # the application's close frame, once it closed
        self._open = True
        scope = {
            "type": "websocket",
            "asgi": {"version": "3.0"},
            "scheme": "ws",
            "http_version": "1.1",
            "path": "/v1/ws",
            "raw_path": b"/v1/ws",
            "root_path": "",
            "query_string": query.encode(),
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
            "client": ("127.0.0.1", 0),
            "server": (ENDPOINT, 0),
            "subprotocols": [],
            "extensions": {},
        }
        self._put({"type": "websocket.connect"})
        self._task = asyncio.run_coroutine_threadsafe(self._device.app(scope, self._receive, self._send), self._loop)
        self._task.add_done_callback(lambda _: self._ended(1011, "the application ended"))
        self._accepted.wait(timeout)
        if not self._accepted.is_set() and self._close is None:
            raise TimeoutError("the embedded device did not accept the connection")

    # -- the application's side (on the device's loop) -------------------------------------------------------

    async def _receive(self) -> dict[str, Any]:
        return await self._inbound.get()

    async def _send(self, message: MutableMapping[str, Any]) -> None:
        kind = message["type"]
        if kind == "websocket.accept":
            self._accepted.set()
        elif kind == "websocket.send":
            data = message.get("bytes")
            self._deliver(data if data is not None else message.get("text", "").encode())
        elif kind == "websocket.close":
            self._ended(message.get("code", 1000), message.get("reason") or "")

    def _ended(self, code: int, reason: str) -> None:
        if self._close is None:
            self._close = Close(code, reason)
            self._accepted.set()
            self._deliver(CLOSED)

    # -- the client's side (any thread) ----------------------------------------------------------------------

    def _put(self, message: dict[str, Any]) -> None:
        self._loop.call_soon_threadsafe(self._inbound.put_nowait, message)

    def hand_over(self, take: Callable[[bytes], None], end: Callable[[ConnectionClosed], None]) -> None:
        """From now on each message goes to `take` and the end to `end`, called on the device's loop where the
        reply is made (a caller waiting for it wakes at once: no reader thread in between)."""

        def switch() -> None:
            def deliver(message: object) -> None:
                if message is CLOSED:
                    end(self.closed())
                else:
                    assert isinstance(message, bytes)
                    take(message)

            while not self._outbound.empty():  # what came before the switch, in order
                deliver(self._outbound.get())
            self._deliver = deliver

        self._loop.call_soon_threadsafe(switch)

    def set_timeout(self, timeout: float | None) -> None:
        """Nothing to do: the connection cannot stall on a network."""

    def send(self, data: bytes) -> None:
        if self._close is not None or not self._open:
            raise self.closed()
        self._put({"type": "websocket.receive", "bytes": data})

    def recv(self) -> bytes:
        message = self._outbound.get()
        if message is CLOSED:
            self._outbound.put(CLOSED)  # every later recv ends too
            raise self.closed()
        assert isinstance(message, bytes)
        return message

    def close(self) -> None:
        if self._open:
            self._open = False
            self._put({"type": "websocket.disconnect", "code": 1000})
            with contextlib.suppress(Exception):
                self._task.result(timeout=30)

    def closed(self) -> ConnectionClosedError | ConnectionClosedOK:
        close = self._close or Close(1000, "")
        if close.code == 1000:
            return ConnectionClosedOK(close, close)
        return ConnectionClosedError(close, None)


class AsyncEmbeddedConnection:
    """The same for `client.aio`: awaitable send and recv, messages iterated as websockets' connection does."""

    def __init__(self, connection: EmbeddedConnection, messages: asyncio.Queue[object]) -> None:
        self._connection, self._messages = connection, messages

    @classmethod
    async def open(cls, query: str, headers: dict[str, str], timeout: float) -> AsyncEmbeddedConnection:
        loop, messages = asyncio.get_running_loop(), asyncio.Queue[object]()

        def deliver(message: object) -> None:
            loop.call_soon_threadsafe(messages.put_nowait, message)

        connection = await asyncio.to_thread(EmbeddedConnection, query, headers, timeout, deliver)
        return cls(connection, messages)

    async def send(self, data: bytes) -> None:
        self._connection.send(data)

    async def recv(self) -> bytes:
        message = await self._messages.get()
        if message is CLOSED:
            self._messages.put_nowait(CLOSED)
            raise self._connection.closed()
        assert isinstance(message, bytes)
        return message

    def __aiter__(self) -> AsyncEmbeddedConnection:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self.recv()
        except ConnectionClosedOK:
            raise StopAsyncIteration from None

    async def close(self) -> None:
        await asyncio.to_thread(self._connection.close)
