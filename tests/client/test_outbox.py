"""The outbox batches pipelined calls: what leaves in which frame, and in which order."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import msgpack

from client import outbox
from client.config import Config
from client.outbox import AsyncOutbox, Outbox
from client.session import Session
from proto.constants import ACL_EVENT_EXTERNAL

ROOT = Path(__file__).resolve().parents[2]


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


async def test_the_asyncio_outbox_sends_at_once_and_batches_behind_a_slow_send() -> None:
    wire = Wire()
    gate = asyncio.Event()

    async def send(frame: bytes) -> None:
        await gate.wait()  # a slow connection
        wire.send(frame)

    box = AsyncOutbox(send)
    first = asyncio.ensure_future(box.later(packed(0)))  # goes out at once, and blocks on the connection
    await asyncio.sleep(0)
    behind = [asyncio.ensure_future(box.later(packed(i))) for i in range(1, 6)]
    last = asyncio.ensure_future(box.now(packed(6)))
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(first, *behind, last)
    assert wire.frames == [[0], [1, 2, 3, 4, 5, 6]]  # in order; what queued behind the slow send, in one frame
    await box.later(packed(7))  # nothing in flight: out at once, alone
    assert wire.frames[-1] == [7]
    gate.clear()
    first = asyncio.ensure_future(box.later(packed(8)))
    await asyncio.sleep(0)
    await box.later(packed(9))  # queued behind a send in flight, and no call after it ...
    gate.set()
    await first
    assert wire.frames[-2:] == [[8], [9]]  # ... leaves when that send is done


def test_a_program_that_ends_right_after_a_pipelined_call_still_sends_it(daemon: str) -> None:
    """A second process joins the context, records an EXTERNAL event (pipelined) and exits at once: the record
    must still reach the daemon, or this stream's wait on it would never end."""
    session = Session(Config(endpoint=daemon))
    try:
        session.call("aclInit", None)
        session.call("aclrtSetDevice", 0)
        stream = session.call("aclrtCreateStream")
        event = session.call("aclrtCreateEventWithFlag", ACL_EVENT_EXTERNAL)
        session.call("aclrtStreamWaitEventWithTimeout", stream, event, 20_000)
        program = (
            "from client.config import Config\n"
            "from client.session import Session\n"
            f"s = Session(Config(endpoint={daemon!r}, context={session.context_id!r}))\n"
            "s.call('aclInit', None)\n"
            "s.call('aclrtSetDevice', 0)\n"
            f"s.call('aclrtRecordEvent', {event}, 0)\n"  # pipelined; no call waits after it
        )
        child = subprocess.run(
            [sys.executable, "-c", program], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60
        )
        assert child.returncode == 0
        session.call("aclrtSynchronizeStreamWithTimeout", stream, 20_000)  # returns: the record arrived
    finally:
        session.close()
