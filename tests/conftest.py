"""Shared fixtures: a Machine with two small devices and a Runtime (one client context) on device 0; the C toolkit,
built once per test session (tests/capi, tests/native, tests/torch_npu)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.npu import Machine, Runtime
from tests.daemons import build_toolkit

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


@pytest.fixture(scope="session")
def toolkit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`vnpu toolkit` into a temporary directory, once per session."""
    if shutil.which("g++") is None:
        pytest.fail("g++ is needed for the C toolkit tests (.ci/run installs it)")
    return build_toolkit(tmp_path_factory.mktemp("toolkit") / "cann")
