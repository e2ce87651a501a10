"""A connection's flow (reliability 11, 12, 18, 19): a thread blocked in the daemon holds up only itself, a client
killed while the daemon has stopped reading it is reclaimed, queued calls are bounded by the memory they take, and
a client that reads no replies cannot make the daemon hold more than `max_reply_bytes` of them."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import numpy as np

from proto.constants import ACL_EVENT_SYNC
from tests.server.api.callers import WsCaller
from tests.server.api.conftest import LiveServer, start_live
from tests.server.api.conftest import test_settings as make_settings

MiB = 1 << 20
SPAN = 200  # bytes the memsets write, in turn
FRAME_BYTES = 14_000  # about, of 128 pipelined memsets


@asynccontextmanager
async def serving(**settings: object) -> AsyncIterator[LiveServer]:
    server, task = await start_live(make_settings(**settings))
    try:
        yield server
    finally:
        server.server.should_exit = True
        await asyncio.wait_for(task, 10)


class Blocked:
    """A connection whose thread "main" waits in aclrtSynchronizeStream on a stream that waits for an event."""

    def __init__(self, caller: WsCaller, ptr: int, stream: int, event: int, sync: int) -> None:
        self.caller, self.ptr, self.stream, self.event = caller, ptr, stream, event
        self.sync = caller._waiting[sync]  # its reply
        self.memsets = 0

    @classmethod
    async def start(cls, server: LiveServer) -> Blocked:
        a = await WsCaller.connect(server.ws_url)
        await a("aclInit", configPath=None)
        await a("aclrtSetDevice", deviceId=0)
        ptr = (await a("aclrtMalloc", size=SPAN, policy=0))["devPtr"]
        stream = (await a("aclrtCreateStream"))["stream"]
        event = (await a("aclrtCreateEventWithFlag", flag=ACL_EVENT_SYNC))["event"]
        await a.send("aclrtStreamWaitEvent", reply=False, stream=stream, event=event)
        return cls(a, ptr, stream, event, await a.send("aclrtSynchronizeStream", stream=stream))

    async def pipeline(self, count: int) -> None:
        """`count` one-byte memsets behind the blocked call: byte i % SPAN becomes i % 256, in order."""
        first, self.memsets = self.memsets, self.memsets + count
        calls = [
            {"devPtr": self.ptr + i % SPAN, "maxCount": 1, "value": i % 256, "count": 1, "stream": self.stream}
            for i in range(first, self.memsets)
        ]
        await self.caller.send_batch("aclrtMemsetAsync", calls)

    async def flood(self, budget: int) -> None:
        """Pipeline until the daemon says it stopped reading, or 3 budgets' worth of frames were sent."""
        for _ in range(3 * budget // FRAME_BYTES):
            if self.caller.notices:
                return
            await asyncio.wait_for(self.pipeline(128), 5)
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)

    def expected(self) -> bytes:
        last = [max(i for i in range(j, self.memsets, SPAN)) for j in range(min(SPAN, self.memsets))]
        return bytes(i % 256 for i in last)

    async def release(self, server: LiveServer) -> None:
        """Record the event from another connection of the context."""
        b = await WsCaller.connect(server.ws_url, context=self.caller.hello["context"])
        await b("aclrtSetDevice", deviceId=0)
        await b("aclrtRecordEvent", event=self.event, stream=0)
        await b.close()


async def settles(check: Callable[[], bool], seconds: float) -> bool:
    for _ in range(int(seconds / 0.02)):
        if check():
            return True
        await asyncio.sleep(0.02)
    return check()


async def test_a_blocked_thread_holds_up_only_itself() -> None:
    """5000 calls (more than the 4096 a thread's queue held, when a full queue stopped the reader) queue behind a
    blocked call; another thread of the connection is still served, and every queued call runs, in order."""
    async with serving() as server:
        blocked = await Blocked.start(server)
        a = blocked.caller
        for _ in range(40):
            await blocked.pipeline(125)
        other = await a.send("aclrtGetDeviceCount", thread="other")
        assert await a.reply(other, timeout=5) == {"count": 2}
        assert not blocked.sync.done()
        await blocked.release(server)
        assert (await asyncio.wait_for(blocked.sync, 10))["result"] == {}
        await a("aclrtSynchronizeStream", stream=blocked.stream)
        data = (await a("aclrtMemcpy", dst=None, destMax=SPAN, src=blocked.ptr, count=SPAN, kind=2))["data"]
        assert data == blocked.expected() and a.orphans == []
        await a.close()


async def test_a_client_killed_while_its_connection_is_paused_is_reclaimed() -> None:
    async with serving(max_pending_bytes=256 << 10) as server:
        blocked = await Blocked.start(server)
        a, registry = blocked.caller, server.app.state.registry
        await blocked.flood(256 << 10)
        notices = list(a.notices)
        a.ws.transport.abort()  # killed: no closing handshake, nothing more read
        session, context = a.hello["session"], a.hello["context"]
        assert await settles(lambda: session not in registry.sessions and context not in registry.contexts, 5)
        assert notices[-1]["paused"]["bytes"] >= 256 << 10  # the daemon said why it waited
        async with httpx.AsyncClient(base_url=server.url) as http:
            view = (await http.get("/v1/devices/0")).json()
        assert view["memory"]["used"] == 0 and view["streams"]["used"] == 0 and view["events"]["used"] == 0


def held_by(snapshot: tracemalloc.Snapshot, *files: str) -> int:
    """Bytes of the live allocations made under any of `files` (the daemon's side of the connection)."""
    return sum(t.size for t in snapshot.traces if any(f.filename.endswith(files) for f in t.traceback))


async def test_queued_calls_are_bounded_by_the_memory_they_take() -> None:
    """Tiny pipelined calls take about 5x their wire size once decoded: the budget counts that, so the calls
    the daemon holds for a paused connection take about `max_pending_bytes`, not 5x it."""
    limit = MiB
    async with serving(max_pending_bytes=limit, max_pending=1 << 30) as server:
        blocked = await Blocked.start(server)
        tracemalloc.start(12)
        try:
            await blocked.flood(limit)
            held = held_by(tracemalloc.take_snapshot(), "server/api/ws.py")
        finally:
            tracemalloc.stop()
        print(f"held {held / MiB:.2f} MiB of queued calls")
        assert held <= limit * 1.1, f"{held / MiB:.1f} MiB of queued calls held for a {limit / MiB:.0f} MiB budget"
        assert held >= limit / 4  # the measure sees them
        await blocked.release(server)
        assert (await asyncio.wait_for(blocked.sync, 10))["result"] == {}
        await blocked.caller("aclrtSynchronizeStream", stream=blocked.stream)
        args: dict[str, Any] = {"dst": None, "destMax": SPAN, "src": blocked.ptr, "count": SPAN, "kind": 2}
        assert (await blocked.caller("aclrtMemcpy", **args))["data"] == blocked.expected()
        await blocked.caller.close()


async def test_a_client_that_reads_no_replies_cannot_make_the_daemon_hold_them() -> None:
    """8 client threads each ask for an 8 MiB device-to-host copy and the client reads nothing: the daemon holds
    about `max_reply_bytes` (16 MiB) of replies, not 8 of them; once the client reads, every reply comes, right."""
    size, threads = 8 * MiB, 8
    async with serving(max_reply_bytes=16 * MiB) as server:
        a = await WsCaller.connect(server.ws_url, max_queue=1)
        await a("aclInit", configPath=None)
        await a("aclrtSetDevice", deviceId=0)
        ptr = (await a("aclrtMalloc", size=size, policy=0))["devPtr"]
        data = np.random.default_rng(18).integers(0, 256, size, dtype=np.uint8).tobytes()
        await a("aclrtMemcpy", dst=ptr, destMax=size, src=data, count=size, kind=1)
        a._reader.cancel()
        tracemalloc.start(12)
        try:
            args = {"dst": None, "destMax": size, "src": ptr, "count": size, "kind": 2}
            idents = [await a.send("aclrtMemcpy", thread=f"t{i}", **args) for i in range(threads)]
            replies = [a._waiting[ident] for ident in idents]
            await asyncio.sleep(2)
            held = held_by(tracemalloc.take_snapshot(), "server/api/ws.py", "server/api/dispatch.py")
        finally:
            tracemalloc.stop()
        print(f"held {held / MiB:.1f} MiB of replies")
        assert held <= 24 * MiB, f"the daemon held {held / MiB:.0f} MiB of replies nobody read"
        a._reader = asyncio.get_running_loop().create_task(a._read())
        for reply in replies:
            assert (await asyncio.wait_for(reply, 10))["result"]["data"] == data
        await a.close()
