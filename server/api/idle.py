"""Synchronizes that need no request: a connection tells its client which streams a synchronize would find
finished, on the reply of a waiting call and when a stream it named finishes later.

A client that asks for it (`?idle=1` on `/v1/ws`, what `client.session` does) gets:
- on the reply to a waiting call that succeeded, `"idle": [stream, ...]`: the streams among those its recent calls
  named (`RECENT`) for which an `aclrtSynchronizeStream` by the same client thread, processed right then, would
  return at once and succeed (`Runtime.synchronize_outlook`), and `"pending": [stream, ...]`: those that still
  have work (and no error), each of which gets one message when that work is done:
- `{"stream": S, "finished": bool, "upto": N, "thread": T}`: whether a synchronize of S by thread T, processed
  then, after every call up to request N (the latest the daemon had received), would return at once and succeed.

Either is said as finished only when nothing of the connection was in flight (no other call queued or running:
every call the client had sent was processed, its error, if any, sent before), the context has no other session,
and no kernel that may print was issued in it (its text is for a real synchronize). A client sends its calls in
the order of their request numbers, so it may answer a synchronize of S itself when it knows S finished as of a
request number at least its latest (any thread); a stream reported pending it may wait for. A stream aborted by
another thread while the client waits thus reads as finished, as a synchronize that arrived after the abort.

A session that joins the context changes that: before a join is answered, every connection of the context that
asked for these messages is told `{"shared": true}` and acknowledges it (`{"ack": "shared"}`, from its reader,
once it has forgotten what it knew), so nothing the newcomer does can precede a synchronize answered from stale
news. A connection that does not acknowledge within `ACK_S` (a client stuck) does not hold the join longer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Any

from proto import news
from server.api import budget
from server.api.sessions import Session
from server.npu.core.caller import calling_thread
from server.npu.core.stream import Stream

log = logging.getLogger("vnpu.ws")
RECENT = 8  # streams named by a connection's latest calls whose state its replies may report
ACK_S = 2.0  # how long a join waits for a connection to acknowledge that its context is shared now


class RecentStreams:
    """The streams a connection's latest calls named, newest last."""

    def __init__(self) -> None:
        self.handles: dict[int, None] = {}

    def touch(self, args: Mapping[str, Any]) -> None:
        handle = args.get("stream")
        if type(handle) is int and handle:
            handles = self.handles
            if handle in handles:
                del handles[handle]
            elif len(handles) >= RECENT:
                del handles[next(iter(handles))]
            handles[handle] = None


class StreamNews:
    """What one connection tells its client about streams; `in_flight()` counts its calls queued or running,
    `send` sends a message (in order with the replies)."""

    def __init__(self, session: Session, in_flight: Callable[[], int], send: Callable[[bytes], Awaitable[None]]):
        self.session = session
        self.in_flight = in_flight
        self.send = send
        self.recent = RecentStreams()
        self.last_received = 0  # the latest request number received
        self.watching: dict[int, asyncio.Task[None]] = {}

    def quiet(self, calls: int) -> bool:
        """Nothing but `calls` calls in flight, the context alone, no kernel that may print."""
        runtime = self.session.runtime
        return self.in_flight() == calls and len(self.session.context.sessions) == 1 and not runtime.ctx.printed.armed

    def annotate(self, reply: dict[str, Any], thread: Hashable) -> None:
        """Add what the reply of a waiting call (the only one in flight) can tell about the recent streams."""
        if "result" not in reply or not self.quiet(1):
            return
        runtime = self.session.runtime
        finished, pending = [], []
        with calling_thread(self.session.thread(thread)):
            for handle in self.recent.handles:
                outlook = runtime.synchronize_outlook(handle)
                if outlook is None:
                    continue
                if outlook[1]:
                    finished.append(handle)
                else:
                    pending.append(handle)
                    if handle not in self.watching:
                        watch = self._watch(handle, outlook[0], thread)
                        self.watching[handle] = asyncio.get_running_loop().create_task(watch)
        if finished:
            reply[news.IDLE] = finished
        if pending:
            reply[news.PENDING] = pending

    async def _watch(self, handle: int, stream: Stream, thread: Hashable) -> None:
        finished = False  # a report is always sent: the client may be waiting for it
        try:
            await stream.reach(stream.issued)
            if self.quiet(0):
                with calling_thread(self.session.thread(thread)):
                    outlook = self.session.runtime.synchronize_outlook(handle)
                finished = outlook is not None and outlook[1]
        except Exception:
            log.exception("vnpu fault while watching stream %#x", handle)
        finally:
            del self.watching[handle]
        wire_thread = list(thread) if isinstance(thread, tuple) else thread
        report = news.report(handle, finished, self.last_received, wire_thread)
        await self.send(budget.pack(report))

    async def close(self) -> None:
        for task in list(self.watching.values()):
            task.cancel()
        for task in list(self.watching.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
