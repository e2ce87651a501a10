"""An expired REST session says so: named again, it is "expired at ... after N s without a call (VNPU_SESSION_IDLE,
default 600)"; a call in the tenant's default session that replaced an expired one is told why it must call
aclInit again. A session that never existed keeps the plain answer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_UNINITIALIZE, AclError
from server.app import create_app
from tests.server.api.callers import RestCaller
from tests.server.api.conftest import test_settings as make_settings

IDLE = 0.2


@pytest.fixture
async def served() -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    app = create_app(make_settings(session_idle=IDLE))
    transport = httpx.ASGITransport(app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://v") as c:
        yield app, c


async def expire(app: FastAPI) -> None:
    await asyncio.sleep(IDLE * 1.5)
    app.state.registry.expire_idle()


async def test_a_named_session_that_expired_says_when_and_why(served: tuple[FastAPI, httpx.AsyncClient]) -> None:
    app, client = served
    session = (await client.post("/v1/sessions")).json()["session"]
    c = RestCaller(client, session)
    await c("aclInit", configPath=None)
    await expire(app)
    with pytest.raises(AclError) as info:
        await c("aclrtSetDevice", deviceId=0)
    message = info.value.message
    assert info.value.code == ACL_ERROR_INVALID_PARAM and f"session {session!r} expired at " in message
    assert f"after {IDLE:g} s without a call (VNPU_SESSION_IDLE, default 600)" in message
    assert "POST /v1/sessions opens a new one" in message and "default REST session" not in message
    with pytest.raises(AclError) as never:
        await RestCaller(client, "0123456789abcdef")("aclInit", configPath=None)
    assert never.value.message == "no session '0123456789abcdef': it never existed or has ended"
    fresh = RestCaller(client, (await client.post("/v1/sessions")).json()["session"])
    await fresh("aclInit", configPath=None)  # the daemon goes on
    await fresh("aclrtSetDevice", deviceId=0)


async def test_the_default_session_replacing_an_expired_one_says_why(served: tuple[FastAPI, httpx.AsyncClient]) -> None:
    app, client = served
    c = RestCaller(client)  # no session named: the tenant's default REST session
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    await expire(app)
    with pytest.raises(AclError) as info:
        await c("aclrtMalloc", size=64, policy=0)
    message = info.value.message
    assert info.value.code == ACL_ERROR_UNINITIALIZE and "aclInit" in message
    assert "(the default REST session, of calls that name none) expired at " in message
    assert "and its context with its memory and handles went with it" in message
    await c("aclInit", configPath=None)  # once initialised again, the new session works as any
    await c("aclrtSetDevice", deviceId=0)
    assert (await c("aclrtMalloc", size=64, policy=0))["devPtr"]
