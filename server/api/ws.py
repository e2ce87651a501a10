"""WebSocket `/v1/ws`: binary msgpack envelopes (see `proto.envelope`), in order per connection and client thread.

On connect (optionally `?context=<id>` to join an existing context of the tenant) the server sends
`{"hello": {"session", "context", "tenant"}}`. A frame holds one envelope, or an array of envelopes (the client
batches pipelined calls), taken in order as if each had come alone. Each request is answered with its result,
or -- when it asked for no reply (`reply: false`, a pipelined call) -- only if it fails; an error names the
call's id and C name. The calls of one client thread run one after another, each in its thread's worker; the calls
of a connection start in the order it received them, whatever their thread: a call starts once every call received
before it has started, or waits behind a call of its own thread that is blocked (a synchronize waiting for an
event), so the order the client made them in holds across its threads -- a launch queued by torch_npu's
task-queue thread between the main thread's aclmdlRICaptureTaskUpdateBegin and End lands in the update -- while a
thread blocked in a synchronize does not stop another thread from recording the event it waits for. What a
connection may hold -- queued calls, unsent replies -- is bounded (see `Connection`).
With `?idle=1` replies also tell which streams a synchronize would find finished, and `?printed=1` brings kernel
printf on the reply of a synchronizing call (`server.api.idle`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Hashable, Mapping
from typing import Any

from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from starlette.websockets import WebSocketState

from proto import news
from proto.calltable import CALLS
from proto.envelope import Request, error_envelope, parse_request, result_envelope
from proto.errors import ACL_ERROR_INTERNAL_ERROR, ACL_ERROR_INVALID_PARAM, AclError
from proto.printf import SYNCHRONIZING
from server.api import budget, dispatch
from server.api.auth import Unauthorized, offered_subprotocol, tenant_of
from server.api.budget import TooManyElements
from server.api.errors import error_response
from server.api.flow import Budget
from server.api.idle import ACK_S, StreamNews
from server.api.sessions import Registry, Session
from server.api.settings import Settings

log = logging.getLogger("vnpu.ws")
MAX_THREADS = 1024  # client threads per connection, each with its own queue
PROBE_S = 1.0  # how often a reader that waits for room tells the client so (a dead client's send fails)

Item = tuple[Request, int, int] | None  # a call, its memory cost and its place in the connection; None: no more


class Connection:
    """One client connection: a reader that queues requests per client thread, one worker per thread.

    Flow: the reader always reads, so a thread blocked in the daemon holds up only itself -- until the queued calls
    of all threads together reach `max_pending` calls or `max_pending_bytes` of memory (counted as decoded; one
    frame is always let through). Then the reader stops, TCP pushes back on the client, and every `PROBE_S` it
    sends the client `{"paused": {"calls", "bytes"}}` (ignored by clients), so a client that died meanwhile is
    noticed by a failed send and reclaimed. A worker waits before a call while the connection holds
    `max_reply_bytes` of replies not yet sent (a client that reads no replies). When the client goes, the queued
    calls of a context other connections share still run, for at most `disconnect_drain` seconds, so what they
    record reaches the others; a private context's queued calls are dropped, as nobody is left to see them.
    """

    def __init__(self, websocket: WebSocket, session: Session, settings: Settings) -> None:
        self.websocket = websocket
        self.session = session
        self.max_bytes = settings.max_message
        self.max_pending = settings.max_pending
        self.drain = settings.disconnect_drain
        self.pending = Budget(settings.max_pending_bytes)  # queued calls, all threads
        self.replies = Budget(settings.max_reply_bytes)  # replies made and not yet sent
        self.queued = 0  # calls queued, all threads
        self.threads: dict[Hashable, tuple[asyncio.Queue[Item], asyncio.Task[None]]] = {}
        self.gone = asyncio.Event()  # the client is gone: nothing more to read or answer
        self._send_lock = asyncio.Lock()
        self._probe: asyncio.Task[None] | None = None
        self.reports_idle = False  # the client asked for the streams it may take as synchronized (server.api.idle)
        self.reports_printed = False  # the client asked for kernel printf on the replies of synchronizing calls
        self.news = StreamNews(session, lambda: self.queued, self._tell)
        self._acks: deque[asyncio.Future[None]] = deque()  # joins announced, waiting for the client to acknowledge
        self._order: deque[tuple[int, Hashable]] = deque()  # (place, thread) of the calls not started yet, in order
        self._received = 0  # the next call's place
        self._busy: set[Hashable] = set()  # the threads running a started call (one that waits, when it lasts)
        self._moved = asyncio.Event()  # set when a call starts or ends (a new Event each time)

    async def send(self, message: dict[str, Any]) -> None:
        await self._send(budget.pack(message))

    async def _send(self, data: bytes) -> None:
        async with self._send_lock:
            await self.websocket.send_bytes(data)

    async def receive_forever(self) -> None:
        while await self._room():
            frame = await self.websocket.receive()
            if frame["type"] == "websocket.disconnect":
                return
            data = frame.get("bytes")
            if data is None:
                await self.send(error_envelope(None, AclError(ACL_ERROR_INVALID_PARAM, "send binary msgpack frames")))
                continue
            try:
                message, cost = budget.unpack_costed(data)
            except TooManyElements as error:
                await self.send(error_envelope(None, error))
                continue
            except Exception as error:
                await self.send(error_envelope(None, AclError(ACL_ERROR_INVALID_PARAM, f"not msgpack: {error}")))
                continue
            batch = message if isinstance(message, list) else [message]
            for envelope in batch:
                if envelope == news.SHARED_ACK:
                    self._shared_acknowledged()
                    continue
                await self._accept(envelope, cost // len(batch))

    async def _room(self) -> bool:
        """Wait while the queued calls fill the connection's budget, telling the client; False once it is gone."""
        while self.queued >= self.max_pending or self.pending.full:
            dropped: asyncio.Future[Any] = self.pending.dropped()
            gone = asyncio.ensure_future(self.gone.wait())
            await asyncio.wait({dropped, gone}, timeout=PROBE_S, return_when=asyncio.FIRST_COMPLETED)
            idle = not dropped.done()
            dropped.cancel()
            gone.cancel()
            if self.gone.is_set():
                return False
            if idle and (self._probe is None or self._probe.done()):
                notice = {"paused": {"calls": self.queued, "bytes": self.pending.used}}
                self._probe = asyncio.ensure_future(self._tell(budget.pack(notice)))
        return not self.gone.is_set()

    async def _accept(self, message: object, size: int) -> None:
        """Queue one envelope for its thread, or answer why it cannot be."""
        try:
            request = parse_request(message)
        except Exception as error:  # answer with the request's id when it could be read
            ident = message.get("id") if isinstance(message, dict) else None
            readable = isinstance(ident, int) and not isinstance(ident, bool)
            if not isinstance(error, AclError):
                error = AclError(ACL_ERROR_INVALID_PARAM, f"malformed envelope: {type(error).__name__}")
            await self.send(error_envelope(ident if readable else None, error))
            return
        if request.thread not in self.threads and len(self.threads) >= MAX_THREADS:
            too_many = f"a connection may use at most {MAX_THREADS} client threads"
            await self.send(error_envelope(request.id, AclError(ACL_ERROR_INVALID_PARAM, too_many, request.api)))
            return
        self.news.last_received = request.id
        place = self._received
        self._received += 1
        self._order.append((place, request.thread))
        self._queue_of(request.thread).put_nowait((request, size, place))
        self.queued += 1
        self.pending.take(size)

    def _queue_of(self, thread: Hashable) -> asyncio.Queue[Item]:
        entry = self.threads.get(thread)
        if entry is None:
            queue: asyncio.Queue[Item] = asyncio.Queue()
            entry = (queue, asyncio.get_running_loop().create_task(self._serve(thread, queue)))
            self.threads[thread] = entry
        return entry[0]

    async def _serve(self, thread: Hashable, queue: asyncio.Queue[Item]) -> None:
        while (item := await queue.get()) is not None:
            request, size, place = item
            try:
                while not self._may_start(place):
                    await self._moved.wait()
                await self._answer(thread, request, place)
            finally:
                self._started(place, thread)
                self._busy.discard(thread)
                self._move()
                self.queued -= 1
                self.pending.give(size)

    def _may_start(self, place: int) -> bool:
        """Whether every call received before the one at `place` has started or waits behind its thread's blocked
        call."""
        for earlier, thread in self._order:
            if earlier == place:
                return True
            if thread not in self._busy:
                return False
        return True

    def _started(self, place: int, thread: Hashable) -> None:
        """The call at `place` starts (or ends without starting): the calls received after it may."""
        if (place, thread) in self._order:
            self._order.remove((place, thread))
            self._busy.add(thread)
            self._move()

    def _move(self) -> None:
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()

    async def _answer(self, thread: Hashable, request: Request, place: int) -> None:
        """Run one call and send its reply, if any, within the connection's budget of replies."""
        held = self._reply_size(request)
        await self.replies.room(held)
        self.replies.take(held)
        try:
            reply = await self._reply(thread, request, place)
            if reply is None or self.gone.is_set():
                return
            self._annotate(reply, thread, request.api)
            data = budget.pack(reply)
            del reply
            self.replies.give(held)
            held = len(data)
            self.replies.take(held)
            await self._tell(data)
        finally:
            self.replies.give(held)

    def _annotate(self, reply: dict[str, Any], thread: Hashable, api: str) -> None:
        """What a waiting call's reply tells besides its result: kernel printf at a synchronizing call, and the
        streams a synchronize may take as finished (server.api.idle)."""
        runtime = self.session.runtime
        if self.reports_printed and api in SYNCHRONIZING and runtime.ctx.printed.pending:
            reply["printed"] = runtime.ctx.printed.take()
        if self.reports_idle:
            self.news.annotate(reply, thread)

    def _reply_size(self, request: Request) -> int:
        """The bytes a call's reply will carry, known before it runs: those of a copy into pageable memory."""
        call, args = CALLS.get(request.api), request.args if isinstance(request.args, Mapping) else {}
        count = args.get("count")
        if call is None or "data" not in call.out_names or args.get("dst") is not None:
            return 0
        return min(count, self.max_bytes) if isinstance(count, int) and count > 0 else 0

    async def _reply(self, thread: Hashable, request: Request, place: int) -> dict[str, Any] | None:
        if isinstance(request.args, Mapping):
            self.news.recent.touch(request.args)
        self._started(place, thread)  # the runtime runs it before its first wait: the next call may start
        try:
            result = await dispatch.call(self.session, request.api, request.args, thread, self.max_bytes)
            return result_envelope(request.id, result) if request.reply else None
        except AclError as error:
            if not error.api:
                error.api = request.api
            if not request.reply:
                self.session.metrics.pipelined_error(self.session.context.tenant, error.api)
            return error_envelope(request.id, error, request.thread)
        except Exception as error:
            log.exception("vnpu fault in %s", request.api)
            fault = AclError(ACL_ERROR_INTERNAL_ERROR, f"vnpu internal error: {error!r:.200}", request.api)
            return error_envelope(request.id, fault, request.thread)

    async def _tell(self, data: bytes) -> None:
        """Send, or note that the client is gone (then nothing more is answered and the reader stops waiting)."""
        try:
            await self._send(data)
        except Exception as error:
            if not (isinstance(error, WebSocketDisconnect) or self._gone()):
                log.warning("cannot send to the client: %r", error)
            self.gone.set()

    async def tell_shared(self) -> None:
        """Another session joins the context: tell a client that was told of idle streams, and wait (at most
        `ACK_S`) until it has forgotten them."""
        if not self.reports_idle or self.gone.is_set():
            return
        acked = asyncio.get_running_loop().create_future()
        self._acks.append(acked)
        await self._tell(budget.pack(news.SHARED))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(acked), ACK_S)

    def _shared_acknowledged(self, every: bool = False) -> None:
        """The client acknowledged the oldest announcement (`every`: the connection ends, none will be)."""
        while self._acks:
            acked = self._acks.popleft()
            if not acked.done():
                acked.set_result(None)
            if not every:
                return

    def _gone(self) -> bool:
        return WebSocketState.DISCONNECTED in (self.websocket.client_state, self.websocket.application_state)

    async def close(self) -> None:
        """Stop the workers: at once, or, in a context other connections share, once their queued calls have run
        (for at most `drain` seconds)."""
        self.gone.set()
        self.replies.open()
        self._shared_acknowledged(every=True)
        if self._probe is not None:
            self._probe.cancel()
        await self.news.close()
        workers = [task for _, task in self.threads.values()]
        if workers and len(self.session.context.sessions) > 1:
            for queue, _ in self.threads.values():
                queue.put_nowait(None)
            _, late = await asyncio.wait(workers, timeout=self.drain)
            if late:
                log.warning("session %s: queued calls dropped after %g s", self.session.id, self.drain)
        for task in workers:
            task.cancel()
        for task in workers:
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
        connection = Connection(websocket, session, settings)
        connection.reports_idle = query.get("idle") == "1"
        connection.reports_printed = query.get("printed") == "1"
        try:
            await registry.announce(session)
            hello = {"session": session.id, "context": session.context.id, "tenant": tenant}
            await connection.send({"hello": hello})
            session.on_shared = connection.tell_shared  # a later join is told to it (after its hello)
            await connection.receive_forever()
        except WebSocketDisconnect:
            pass
        finally:
            await connection.close()
            registry.close(session)
