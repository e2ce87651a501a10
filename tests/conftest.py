"""Shared fixtures: a Machine with two small devices and a Runtime (one client context) on device 0."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.npu import Machine, Runtime

MEMORY = 64 << 20


@pytest.fixture
async def machine() -> AsyncIterator[Machine]:
    m = Machine(devices=2, memory_bytes=MEMORY, max_streams=64, max_events=64)
    yield m
    m.close()


@pytest.fixture
async def rt(machine: Machine) -> AsyncIterator[Runtime]:
    runtime = Runtime(machine)
    runtime.aclInit()
    runtime.aclrtSetDevice(0)
    yield runtime
    await runtime.release_all()
