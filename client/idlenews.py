"""Synchronizes answered without a request, from what the daemon said (`server.api.idle` has the rules).

The reply to a waiting call may name streams that a synchronize by the same thread would find finished at that
point (`idle`), and streams that still run (`pending`), each of which the daemon reports on once its work is done
(`{"stream", "finished", "upto", "thread"}`). What is known finished holds as of a request number: while no later
request has been sent (any thread: calls leave in the order of their numbers), nothing can have queued work on
the stream or failed there, so `aclrtSynchronizeStream` of such a stream by that thread is answered here -- no
request, and the same outcome: an error of an earlier pipelined call of the thread is raised as at any waiting
call (`Protocol.settle`). A synchronize of a pending stream waits for its report instead of sending a request,
and sends one after all when the report does not say finished as of a number at least the synchronize's own.
When another session joins the context the daemon says `{"shared": true}`: everything known is forgotten, and
the reader acknowledges it before the join is answered.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import msgpack

from client.core import thread_identity
from proto import news

SYNCHRONIZE = "aclrtSynchronizeStream"
SHARED_ACK: bytes = msgpack.packb(news.SHARED_ACK)


class IdleNews:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._thread: tuple[int, ...] = ()  # the client thread whose synchronizes the news is about
        self._upto = 0  # the request number as of which `_finished` holds
        self._finished: set[int] = set()
        self._pending: set[int] = set()  # streams the daemon will report on

    def replied(self, ident: int, thread: tuple[int, ...], message: dict[str, Any]) -> None:
        """The reply to request `ident` of `thread` (which may name finished and pending streams)."""
        if not (self._finished or self._pending or news.IDLE in message or news.PENDING in message):
            self._thread, self._upto = thread, ident  # nothing known, nothing to wake: no lock needed
            return
        with self._changed:
            self._thread, self._upto = thread, ident
            self._finished = set(message.get(news.IDLE, ()))
            self._pending = set(message.get(news.PENDING, ()))
            self._changed.notify_all()

    def reported(self, message: dict[str, Any]) -> None:
        """A report on a pending stream."""
        stream, upto = message[news.REPORT_KEY], message["upto"]
        with self._changed:
            self._pending.discard(stream)
            if message["finished"] and tuple(message["thread"]) == self._thread and upto >= self._upto:
                if upto > self._upto:  # what was known as of an earlier number may have changed since
                    self._upto, self._finished = upto, set()
                self._finished.add(stream)
            self._changed.notify_all()

    def forget(self) -> None:
        with self._changed:
            self._finished.clear()
            self._pending.clear()
            self._changed.notify_all()

    def finished(self, api: str, args: dict[str, Any], last_request: int, flush: Callable[[], None]) -> bool:
        """Whether the call (`api` with `args`) is a synchronize, by the news' thread, of a stream known finished
        as of `last_request` (the session's latest request number) or later -- waiting for a pending stream's
        report if need be, after `flush` has sent the pipelined calls that may be what the stream waits for."""
        stream = args.get("stream")
        if api != SYNCHRONIZE or type(stream) is not int:
            return False
        flushed = False
        with self._changed:
            while self._thread == tuple(thread_identity()):
                if stream in self._finished and self._upto >= last_request:
                    return True
                if stream not in self._pending:
                    return False
                if not flushed:
                    self._changed.release()  # not held while sending: the reader may need it meanwhile
                    try:
                        flush()
                    finally:
                        self._changed.acquire()
                    flushed = True
                    continue
                self._changed.wait()
            return False
