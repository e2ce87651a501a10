"""WebSocket `/v1/ws`: binary msgpack envelopes (see `proto.envelope`), in order per connection and client thread.

On connect (optionally `?context=<id>` to join an existing context of the tenant) the server sends
`{"hello": {"session", "context", "tenant"}}`. A frame holds one envelope, or an array of envelopes (the client
batches pipelined calls), taken in order as if each had come alone. Each request is answered with its result,
or -- when it asked for no reply (`reply: false`, a pipelined call) -- only if it fails; an error names the
call's id and C name. The calls of one client thread run one after another; different threads of a connection
run independently (so a thread blocked in a synchronize does not stop another thread from recording the event it
waits for). Each thread's queue is bounded: when it is full the server stops reading, and TCP pushes back on the
client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Hashable
from typing import Any

import msgpack
from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from starlette.websockets import WebSocketState

from proto.envelope import Request, error_envelope, parse_request, result_envelope
from proto.errors import ACL_ERROR_INTERNAL_ERROR, ACL_ERROR_INVALID_PARAM, AclError
from server.api import budget, dispatch
from server.api.auth import Unauthorized, offered_subprotocol, tenant_of
from server.api.budget import TooManyElements
from server.api.errors import error_response
from server.api.sessions import Registry, Session

log = logging.getLogger("vnpu.ws")
MAX_THREADS = 1024  # client threads per connection, each with its own bounded queue


class Connection:
    """One client connection: a reader that queues requests per client thread, one worker per thread.

    Backpressure: a thread's queue holds at most `max_pending` calls and the connection at most
    `max_pending_bytes` of queued frames (one frame is always let through); when either is full the reader stops
    reading, and TCP pushes back on the client. When the client goes away, the reader stops waiting at once.
    """

    def __init__(
        self, websocket: WebSocket, session: Session, max_pending: int, max_bytes: int, max_pending_bytes: int
    ) -> None:
        self.websocket = websocket
        self.max_bytes = max_bytes
        self.session = session
        self.max_pending = max_pending
        self.max_pending_bytes = max_pending_bytes
        self.threads: dict[Hashable, tuple[asyncio.Queue[tuple[Request, int]], asyncio.Task[None]]] = {}
        self.queued_bytes = 0
        self._room = asyncio.Event()  # set whenever queued_bytes drops
        self.gone = asyncio.Event()  # the client is gone: stop waiting for room
        self._send_lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        async with self._send_lock:
            await self.websocket.send_bytes(msgpack.packb(message, use_bin_type=True))

    async def receive_forever(self) -> None:
        while True:
            frame = await self.websocket.receive()
            if frame["type"] == "websocket.disconnect":
                return
            data = frame.get("bytes")
            if data is None:
                await self.send(error_envelope(None, AclError(ACL_ERROR_INVALID_PARAM, "send binary msgpack frames")))
                continue
            try:
                message = budget.unpack(data)
            except TooManyElements as error:
                await self.send(error_envelope(None, error))
                continue
            except Exception as error:
                await self.send(error_envelope(None, AclError(ACL_ERROR_INVALID_PARAM, f"not msgpack: {error}")))
                continue
            batch = message if isinstance(message, list) else [message]
            for envelope in batch:
                if not await self._accept(envelope, len(data) // len(batch)):
                    return

    async def _accept(self, message: object, size: int) -> bool:
        """Queue one envelope for its thread (or answer why it cannot be); False when the client is gone."""
        try:
            request = parse_request(message)
        except Exception as error:  # answer with the request's id when it could be read
            ident = message.get("id") if isinstance(message, dict) else None
            readable = isinstance(ident, int) and not isinstance(ident, bool)
            if not isinstance(error, AclError):
                error = AclError(ACL_ERROR_INVALID_PARAM, f"malformed envelope: {type(error).__name__}")
            await self.send(error_envelope(ident if readable else None, error))
            return True
        if request.thread not in self.threads and len(self.threads) >= MAX_THREADS:
            too_many = f"a connection may use at most {MAX_THREADS} client threads"
            await self.send(error_envelope(request.id, AclError(ACL_ERROR_INVALID_PARAM, too_many, request.api)))
            return True
        while self.queued_bytes and self.queued_bytes + size > self.max_pending_bytes:
            self._room.clear()
            if not await self._unless_gone(self._room.wait()):
                return False
        queue = self._queue_of(request.thread)
        if not queue.full():
            queue.put_nowait((request, size))
        elif not await self._unless_gone(queue.put((request, size))):
            return False
        self.queued_bytes += size
        return True

    async def _unless_gone(self, waiting: Coroutine[Any, Any, Any]) -> bool:
        """Await `waiting` unless the client goes away first (then False)."""
        task = asyncio.ensure_future(waiting)
        gone = asyncio.ensure_future(self.gone.wait())
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        gone.cancel()
        if task.done():
            return True
        task.cancel()
        return False

    def _queue_of(self, thread: Hashable) -> asyncio.Queue[tuple[Request, int]]:
        entry = self.threads.get(thread)
        if entry is None:
            queue: asyncio.Queue[tuple[Request, int]] = asyncio.Queue(self.max_pending)
            entry = (queue, asyncio.get_running_loop().create_task(self._serve(thread, queue)))
            self.threads[thread] = entry
        return entry[0]

    async def _serve(self, thread: Hashable, queue: asyncio.Queue[tuple[Request, int]]) -> None:
        while True:
            request, size = await queue.get()
            try:
                await self._answer(thread, request)
            finally:
                self.queued_bytes -= size
                self._room.set()
            if self.gone.is_set():
                return

    async def _answer(self, thread: Hashable, request: Request) -> None:
        reply: dict[str, Any] | None = None
        try:
            result = await dispatch.call(self.session, request.api, request.args, thread, self.max_bytes)
            if request.reply:
                reply = result_envelope(request.id, result)
        except AclError as error:
            if not error.api:
                error.api = request.api
            if not request.reply:
                self.session.metrics.pipelined_error(self.session.context.tenant, error.api)
            reply = error_envelope(request.id, error, request.thread)
        except Exception as error:
            log.exception("vnpu fault in %s", request.api)
            fault = AclError(ACL_ERROR_INTERNAL_ERROR, f"vnpu internal error: {error!r:.200}", request.api)
            reply = error_envelope(request.id, fault, request.thread)
        if reply is not None:
            try:
                await self.send(reply)
            except Exception as error:  # the client is gone: nothing to answer, and the reader must stop waiting
                if not (isinstance(error, WebSocketDisconnect) or self._gone()):
                    log.warning("cannot answer %s: %r", request.api, error)
                self.gone.set()

    def _gone(self) -> bool:
        return WebSocketState.DISCONNECTED in (self.websocket.client_state, self.websocket.application_state)

    async def close(self) -> None:
        for _, task in self.threads.values():
            task.cancel()
        for _, task in self.threads.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def refuse(websocket: WebSocket, error: Unauthorized | AclError) -> None:
    """Answer the handshake as REST would (401 + WWW-Authenticate, or 404, with the JSON error body) when the
    server can send an HTTP response to a WebSocket request; else close with 4401/4404 and the reason."""
    unauthorized = isinstance(error, Unauthorized)
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        acl = AclError(ACL_ERROR_INVALID_PARAM, str(error)) if unauthorized else error
        response = error_response(401 if unauthorized else 404, acl)  # type: ignore[arg-type]
        if unauthorized:
            response.headers["WWW-Authenticate"] = "Bearer"
        await websocket.send_denial_response(response)
    else:
        await websocket.close(code=4401 if unauthorized else 4404, reason=str(error)[:120])


def install(app: FastAPI) -> None:
    @app.websocket("/v1/ws")
    async def websocket_endpoint(websocket: WebSocket) -> None:
        settings = websocket.app.state.settings
        registry: Registry = websocket.app.state.registry
        try:
            tenant = tenant_of(websocket, settings.tokens)
            query = websocket.query_params
            session = registry.open(tenant, "ws", query.get("context"), query.get("run"))
        except (Unauthorized, AclError) as error:
            await refuse(websocket, error)
            return
        await websocket.accept(subprotocol=offered_subprotocol(websocket))
        connection = Connection(
            websocket, session, settings.max_pending, settings.max_message, settings.max_pending_bytes
        )
        try:
            hello = {"session": session.id, "context": session.context.id, "tenant": tenant}
            await connection.send({"hello": hello})
            await connection.receive_forever()
        except WebSocketDisconnect:
            pass
        finally:
            await connection.close()
            registry.close(session)
