"""Reliability 2 and 11: an aclrtMemcpyAsync from pageable memory is synchronous, as the runtime makes it, so the
client waits for it instead of pipelining it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import client.acl as acl
from client.config import Config
from client.session import Session
from tests.daemons import serving

H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
JOIN_S = 30  # a hang, not a slow machine, runs past this


def run_threads(*targets: object) -> list[threading.Thread]:
    threads = [threading.Thread(target=t, daemon=True) for t in targets]  # type: ignore[arg-type]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_S)
    return [t for t in threads if t.is_alive()]


def test_a_pageable_h2d_async_copy_has_landed_when_it_returns(daemon: str) -> None:
    """Thread 1 queues a wait on an EXTERNAL event, then copies pageable bytes in asynchronously and tells thread 2
    "done"; thread 2 reads the device memory. A third thread records the event later. The copy returns only once it
    has run (after the record), so thread 2 reads the new bytes."""
    session = Session(Config(endpoint=daemon))
    c = session.call
    try:
        c("aclInit", None)
        c("aclrtSetDevice", 0)
        x = c("aclrtMalloc", 4096, 0)
        c("aclrtMemset", x, 4096, 0, 4096)
        s, other = c("aclrtCreateStream"), c("aclrtCreateStream")
        event = c("aclrtCreateEventWithFlag", acl.ACL_EVENT_EXTERNAL)
        c("aclrtStreamWaitEvent", s, event)  # s holds everything queued behind this until the record
        done = threading.Event()
        order: list[str] = []
        seen: list[bytes] = []

        def copier() -> None:
            c("aclrtSetDevice", 0)
            c("aclrtMemcpyAsync", x, 4096, b"\x07" * 4096, 4096, H2D, s)
            order.append("copy returned")
            done.set()

        def recorder() -> None:
            c("aclrtSetDevice", 0)
            time.sleep(0.5)  # the copy is on its way by now (without the fix it has long returned)
            order.append("recorded")
            c("aclrtRecordEvent", event, other)
            c("aclrtSynchronizeStream", other)

        def reader() -> None:
            c("aclrtSetDevice", 0)
            if done.wait(JOIN_S):
                out = bytearray(4096)
                c("aclrtMemcpy", out, 4096, x, 4096, D2H)  # synchronous: it does not wait for the streams
                seen.append(bytes(out))

        assert not run_threads(copier, recorder, reader), "a thread hung"
        assert order == ["recorded", "copy returned"]
        assert seen == [b"\x07" * 4096]
        c("aclrtSynchronizeStream", s)  # the stream is fine and empty
        c("aclrtResetDevice", 0)
    finally:
        session.close()


@pytest.mark.slow
def test_two_threads_with_pageable_copies_behind_an_event_finish(tmp_path: Path) -> None:
    """Reliability 11, the program of the report against a daemon process: stream S waits on an EXTERNAL event;
    thread 1 makes 10 pageable 8 MiB async copies on S (80 MiB, over the daemon's 64 MiB of queued calls per
    connection); thread 2, 0.5 s later, records the event on another stream and synchronizes S. In C thread 1
    blocks in its first copy until the record and the program ends; so it must here."""
    size, copies = 8 << 20, 10
    with serving(tmp_path) as daemon:
        session = Session(Config(endpoint=daemon.url))
        c = session.call
        try:
            c("aclInit", None)
            c("aclrtSetDevice", 0)
            dev = c("aclrtMalloc", size, 0)
            s, other = c("aclrtCreateStream"), c("aclrtCreateStream")
            event = c("aclrtCreateEventWithFlag", acl.ACL_EVENT_EXTERNAL)
            c("aclrtStreamWaitEvent", s, event)
            finished: list[str] = []
            data = [bytes([i]) * size for i in range(1, copies + 1)]

            def thread_1() -> None:
                c("aclrtSetDevice", 0)
                for chunk in data:
                    c("aclrtMemcpyAsync", dev, size, chunk, size, H2D, s)
                finished.append("copies")

            def thread_2() -> None:
                c("aclrtSetDevice", 0)
                time.sleep(0.5)
                c("aclrtRecordEvent", event, other)
                c("aclrtSynchronizeStream", s)
                finished.append("record and synchronize")

            assert not run_threads(thread_1, thread_2), "the program hung"
            assert sorted(finished) == ["copies", "record and synchronize"]
            out = bytearray(16)
            c("aclrtMemcpy", out, 16, dev + size - 16, 16, D2H)
            assert out == bytes([copies]) * 16  # every copy ran, in order
            c("aclrtResetDevice", 0)
        finally:
            session.close()
        daemon.check_alive()
