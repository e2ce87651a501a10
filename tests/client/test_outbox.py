"""The outbox batches pipelined calls: what leaves in which frame, and in which order."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import msgpack

from client import outbox
from client.outbox import AsyncOutbox, Outbox


class Wire:
    def __init__(self) -> None:
        self.frames: list[list[int]] = []
        self.lock = threading.Lock()

    def send(self, frame: bytes) -> None:
        message = msgpack.unpackb(frame)
        with self.lock:
            self.frames.append(message if isinstance(message, list) else [message])

    def sent(self) -> list[int]:
        with self.lock:
            return [call for frame in self.frames for call in frame]


def packed(i: int) -> bytes:
    data: bytes = msgpack.packb(i)
    return data


def test_pipelined_calls_leave_with_the_next_waiting_call_in_one_frame() -> None:
    wire = Wire()
    box = Outbox(wire.send)
    try:
        for i in range(5):
            box.later(packed(i))
        box.now(packed(5))
        assert wire.frames[0] == [0, 1, 2, 3, 4, 5]
        box.now(packed(6))  # nothing pending: the call alone, as a plain envelope
        assert wire.frames[1] == [6]
    finally:
        box.close()


def test_a_full_outbox_leaves_at_once_and_a_lone_call_after_the_delay() -> None:
    wire = Wire()
    box = Outbox(wire.send)
    try:
        n = outbox.MAX_CALLS * 3 + 1
        for i in range(n):
            box.later(packed(i))
        deadline = time.monotonic() + 5
        while len(wire.sent()) < n and time.monotonic() < deadline:
            time.sleep(0.001)
        assert wire.sent() == list(range(n))  # every call, in order
        assert max(len(f) for f in wire.frames) == outbox.MAX_CALLS
    finally:
        box.close()


def test_order_holds_across_threads_and_close_sends_the_rest() -> None:
    wire = Wire()
    box = Outbox(wire.send)

    def caller(base: int) -> None:
        for i in range(300):
            if i % 50 == 49:
                box.now(packed(base + i))
            else:
                box.later(packed(base + i))

    threads = [threading.Thread(target=caller, args=(k * 1000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    box.close()
    sent = wire.sent()
    assert sorted(sent) == sorted(k * 1000 + i for k in range(4) for i in range(300))
    for k in range(4):  # each thread's calls in the order it made them
        mine = [c for c in sent if c // 1000 == k]
        assert mine == sorted(mine)


def test_a_broken_connection_does_not_kill_the_flusher() -> None:
    calls: list[bytes] = []

    def send(frame: bytes) -> None:
        calls.append(frame)
        raise OSError("connection reset")

    box = Outbox(send)
    box.later(packed(1))
    deadline = time.monotonic() + 5
    while not calls and time.monotonic() < deadline:
        time.sleep(0.001)
    assert calls == [packed(1)]
    box.later(packed(2))  # the flusher still runs
    while len(calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert calls[-1] == packed(2)
    with contextlib.suppress(OSError):
        box.close()


async def test_the_asyncio_outbox_batches_in_order_and_flushes_after_the_delay() -> None:
    wire = Wire()

    async def send(frame: bytes) -> None:
        await asyncio.sleep(0)  # a real send may yield
        wire.send(frame)

    box = AsyncOutbox(send)
    for i in range(3):
        await box.later(packed(i))
    await box.now(packed(3))
    assert wire.frames == [[0, 1, 2, 3]]
    await box.later(packed(4))
    assert len(wire.frames) == 1  # waits for company ...
    await asyncio.sleep(outbox.FLUSH_DELAY * 20)
    assert wire.frames[1] == [4]  # ... not for long
    calls = [box.later(packed(i)) for i in range(5, 5 + outbox.MAX_CALLS * 2)]
    await asyncio.gather(*calls, box.now(packed(9999)))
    assert wire.sent() == [*range(0, 5 + outbox.MAX_CALLS * 2), 9999]
    assert max(len(f) for f in wire.frames) <= outbox.MAX_CALLS + 1
