"""Batching of pipelined calls over the WebSocket.

A call that asks for no reply is not sent at once: it waits in the outbox, which leaves as one frame (a msgpack
array of envelopes, see `proto.envelope`) when a call that waits is sent (ahead of it, in the same frame), when it
holds `MAX_CALLS` calls or `MAX_BYTES` bytes, or `FLUSH_DELAY` after its first call (a flusher thread), whichever
comes first, and at the latest when the program exits. Frames leave in the order their calls were made, so the
daemon sees every thread's calls in order. `AsyncOutbox` batches for `client.aio`, without a timer.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Final

import msgpack

MAX_CALLS: Final = 128
MAX_BYTES: Final = 256 << 10
FLUSH_DELAY: Final = 0.0005  # seconds a pipelined call may wait for company


def frame_of(envelopes: list[bytes]) -> bytes:
    """One frame for packed envelopes: the envelope itself, or a msgpack array of them."""
    if len(envelopes) == 1:
        return envelopes[0]
    header: bytes = msgpack.Packer().pack_array_header(len(envelopes))
    return header + b"".join(envelopes)


class Outbox:
    """The blocking client's outbox: any thread queues or sends; a flusher thread sends what waits too long."""

    def __init__(self, send: Callable[[bytes], None]) -> None:
        self._send = send
        self._pending: list[bytes] = []
        self._bytes = 0
        self._changed = threading.Condition()
        self._sending = threading.Lock()  # held from taking the pending calls until their frame is sent
        self._closed = False
        threading.Thread(target=self._flush_later, name="vnpu-flusher", daemon=True).start()
        atexit.register(self.flush_at_exit)  # a program may end right after a pipelined call

    def later(self, envelope: bytes) -> None:
        """Queue a packed envelope that needs no reply."""
        with self._changed:
            self._pending.append(envelope)
            self._bytes += len(envelope)
            if len(self._pending) == 1:
                self._changed.notify()
            full = len(self._pending) >= MAX_CALLS or self._bytes >= MAX_BYTES
        if full:
            self.now()

    def put(self, envelope: bytes) -> None:
        """Queue a packed envelope that the caller sends at once with `now()` (the flusher is not woken)."""
        with self._changed:
            self._pending.append(envelope)
            self._bytes += len(envelope)

    def now(self, envelope: bytes | None = None) -> None:
        """Send the pending calls, then `envelope`, in one frame (raises what the connection raises)."""
        with self._sending:
            with self._changed:
                envelopes, self._pending, self._bytes = self._pending, [], 0
            if envelope is not None:
                envelopes.append(envelope)
            if envelopes:
                self._send(frame_of(envelopes))

    def flush_at_exit(self) -> None:
        with contextlib.suppress(Exception):
            self.now()

    def close(self) -> None:
        """Send what is pending and stop the flusher."""
        atexit.unregister(self.flush_at_exit)
        with self._changed:
            self._closed = True
            self._changed.notify()
        self.now()

    def _flush_later(self) -> None:
        while True:
            with self._changed:
                while not self._pending and not self._closed:
                    self._changed.wait()
                if self._closed:
                    return
            time.sleep(FLUSH_DELAY)
            with contextlib.suppress(Exception):  # the connection is gone: the reader tells the next call
                self.now()


class AsyncOutbox:
    """The outbox of an asyncio session. No timer (an event loop may end right after a pipelined call, and its
    timers with it): a pipelined call goes out at once unless a frame is being sent, and then leaves with the
    calls that queue up behind that frame -- batches form exactly when the connection is the bottleneck."""

    def __init__(self, send: Callable[[bytes], Awaitable[None]]) -> None:
        self._send = send
        self._pending: list[bytes] = []
        self._sending = asyncio.Lock()  # frames leave in the order their calls were taken

    async def later(self, envelope: bytes) -> None:
        self._pending.append(envelope)
        if not self._sending.locked() or len(self._pending) >= MAX_CALLS:
            await self.now()

    async def now(self, envelope: bytes | None = None) -> None:
        if envelope is not None:
            self._pending.append(envelope)
        async with self._sending:  # the holder sends until nothing is left, what queued behind it included
            while self._pending:
                envelopes, self._pending = self._pending, []
                await self._send(frame_of(envelopes))
