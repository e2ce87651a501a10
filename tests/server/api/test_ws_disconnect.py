"""Reliability 3: calls queued in the daemon behind a blocked call still run when their process exits, if another
process shares the context (the record the other one waits for arrives), up to `disconnect_drain` seconds."""

from __future__ import annotations

import asyncio

import pytest

from proto.constants import ACL_EVENT_SYNC
from proto.errors import AclError
from tests.server.api.callers import WsCaller
from tests.server.api.conftest import LiveServer
from tests.server.api.test_ws_flow import serving, settles


async def joined(server: LiveServer) -> tuple[WsCaller, WsCaller, int, int]:
    """Two connections of one context, a gate event and a done event (legacy: a wait blocks until a record)."""
    a = await WsCaller.connect(server.ws_url)
    await a("aclInit", configPath=None)
    await a("aclrtSetDevice", deviceId=0)
    gate = (await a("aclrtCreateEventWithFlag", flag=ACL_EVENT_SYNC))["event"]
    done = (await a("aclrtCreateEventWithFlag", flag=ACL_EVENT_SYNC))["event"]
    b = await WsCaller.connect(server.ws_url, context=a.hello["context"])
    await b("aclrtSetDevice", deviceId=0)
    return a, b, gate, done


async def exit_behind_a_blocked_call(b: WsCaller, gate: int, done: int) -> None:
    """b blocks its thread on the gate, queues the record of `done` behind it, and exits."""
    stream = (await b("aclrtCreateStream"))["stream"]
    await b.send("aclrtStreamWaitEvent", reply=False, stream=stream, event=gate)
    await b.send("aclrtSynchronizeStream", stream=stream)
    await b.send("aclrtRecordEvent", reply=False, event=done, stream=0)
    await b("aclrtGetDeviceCount", thread="other")  # everything before it was read
    await b.ws.close()


async def test_a_shared_contexts_queued_calls_run_after_their_process_exits() -> None:
    async with serving() as server:
        a, b, gate, done = await joined(server)
        await exit_behind_a_blocked_call(b, gate, done)
        await asyncio.sleep(0.3)  # b's connection has ended
        await a("aclrtRecordEvent", event=gate, stream=0)
        waiter = (await a("aclrtCreateStream"))["stream"]
        await a("aclrtStreamWaitEvent", stream=waiter, event=done)
        assert await a("aclrtSynchronizeStreamWithTimeout", stream=waiter, timeout=5000) == {}  # the record came
        registry = server.app.state.registry
        assert await settles(lambda: b.hello["session"] not in registry.sessions, 2)
        await a.close()


async def test_the_queued_calls_of_a_process_that_exited_stop_at_the_deadline() -> None:
    async with serving(disconnect_drain=0.5) as server:
        a, b, gate, done = await joined(server)
        await exit_behind_a_blocked_call(b, gate, done)
        registry = server.app.state.registry
        assert await settles(lambda: b.hello["session"] not in registry.sessions, 3)  # the gate never came
        waiter = (await a("aclrtCreateStream"))["stream"]
        await a("aclrtStreamWaitEvent", stream=waiter, event=done)
        with pytest.raises(AclError):  # dropped at the deadline: no record
            await a("aclrtSynchronizeStreamWithTimeout", stream=waiter, timeout=300)
        await a("aclrtRecordEvent", event=done, stream=0)  # the context goes on
        assert await a("aclrtSynchronizeStreamWithTimeout", stream=waiter, timeout=5000) == {}
        await a.close()


async def test_a_private_contexts_queued_calls_go_with_it_at_once() -> None:
    async with serving(disconnect_drain=30) as server:
        a = await WsCaller.connect(server.ws_url)
        await a("aclInit", configPath=None)
        await a("aclrtSetDevice", deviceId=0)
        gate = (await a("aclrtCreateEventWithFlag", flag=ACL_EVENT_SYNC))["event"]
        await exit_behind_a_blocked_call(a, gate, gate)
        registry = server.app.state.registry
        assert await settles(lambda: a.hello["context"] not in registry.contexts, 2)  # no drain: nobody to see it
