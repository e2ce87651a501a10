"""Faults: client processes SIGKILLed in the middle of a capture, of a task update and of an execution; a client
that stops reading its replies; the daemon stopping under a connected client and a new one taking over.

After every fault the daemon must still serve (healthz, and a client process running the seed's pattern beside
the fault keeps producing right results), and once the context grace period is over everything the dead client
held is back: device memory (GET /v1/devices/0), its streams, events and models (no context of it is listed,
the device's counts are back to what they were), its pinned-memory segment, and no stream stays blocked (a
stream that could not be closed would keep its memory)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from client.config import Config
from client.errors import TransportError
from client.session import Session
from proto.errors import (
    ACL_ERROR_STREAM_TASK_GROUP_STATUS,
    AclError,
)
from tests.load import workers
from tests.load.conftest import (
    CONTEXT_GRACE_S,
    ROOT,
    ClientThread,
    Daemon,
    child_env,
    context_ids,
    device_free,
    device_view,
    eventually,
    rss_kib,
    start_daemon,
)

SHM = Path("/dev/shm")
MiB = 1 << 20
SPAWN = multiprocessing.get_context("spawn")
HEALTHY_ITERATIONS = 5000  # at most; it runs until told to stop
RECLAIM_S = CONTEXT_GRACE_S + 15  # disconnect, grace period, release: a generous bound
CALL_BOUND_S = 5.0  # a call of a healthy client beside a stalled one must complete within this

pytestmark = pytest.mark.slow


# ======== helpers ========


def bound_session(url: str, **config: Any) -> workers.Bound:
    return workers.Bound(Session(Config(endpoint=url, **config)))


@dataclass
class Victim:
    proc: subprocess.Popen[str]
    context: str
    segment: Path
    extra: list[int]

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        status = self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        assert status == -signal.SIGKILL, f"the client exited with {status} before it was killed"


def start_client(what: str, log: Path, *args: str) -> tuple[subprocess.Popen[str], list[str]]:
    """`python -m tests.load.workers <args>`; returns it and the words of its READY line (within 30 s)."""
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.load.workers", *args],
            cwd=ROOT,
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    stdout = proc.stdout
    assert stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(30)
    words = lines[0].split() if lines else []
    if words[:1] != ["READY"]:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        stdout.close()
        pytest.fail(f"the {what} did not get ready: {lines!r}\n{log.read_text()[-3000:]}")
    return proc, words


def start_victim(daemon: Daemon, log_dir: Path, phase: str, *args: str) -> Victim:
    """A client process that reaches `phase` and waits there (see workers.victim)."""
    proc, words = start_client(f"{phase} victim", log_dir / f"victim-{phase}.txt", "victim", phase, daemon.url, *args)
    return Victim(proc, words[1], SHM / words[2], [int(w) for w in words[3:]])


def settles(check: Callable[[], bool], seconds: float) -> bool:
    """Poll `check` for up to `seconds`; whether it became true (for a plain assert)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def context_of(url: str, context: str) -> dict[str, Any]:
    found = [c for c in device_view(url)["contexts"] if c["id"] == context]
    assert len(found) == 1, f"context {context} is not listed"
    return found[0]


def counts(view: dict[str, Any]) -> dict[str, int]:
    return {kind: view[kind]["used"] for kind in ("memory", "streams", "events", "models")}


@dataclass
class Healthy:
    """A client process (spawn) running the seed's pattern on its own model beside a fault, every output checked."""

    proc: Any
    barrier: Any
    stop: Any
    results: Any

    def go(self) -> None:
        self.barrier.wait(10)

    def result(self) -> dict[str, Any]:
        """Stop it; its outcome, which must be clean."""
        self.stop.set()
        outcome: dict[str, Any] = self.results.get(timeout=60)
        self.proc.join(30)
        assert "error" not in outcome, outcome["error"]
        assert outcome["mismatches"] == []
        assert outcome["checked"] >= 5, outcome
        return outcome


@pytest.fixture
def healthy(idle_daemon: Daemon) -> Iterator[Healthy]:
    """A healthy client that captured its model and waits for `go()`; then it iterates until `result()` (at most
    HEALTHY_ITERATIONS times), holding its memory, streams and model until then."""
    results, barrier, stop = SPAWN.Queue(), SPAWN.Barrier(2), SPAWN.Event()
    proc = SPAWN.Process(
        target=workers.own_model,
        args=(idle_daemon.url, 7, HEALTHY_ITERATIONS, barrier, results, stop),
        name="vnpu-healthy",
    )
    proc.start()
    try:
        eventually(lambda: barrier.n_waiting >= 1 or not proc.is_alive(), 30, "the healthy client captured its model")
        assert proc.is_alive(), "the healthy client died before its iterations"
        yield Healthy(proc, barrier, stop, results)
    finally:
        barrier.abort()  # a test that failed before letting it go: it gives up at once instead of timing out
        stop.set()
        proc.join(30)
        if proc.is_alive():
            proc.terminate()
            proc.join(10)


# ======== a client process killed mid-capture, mid-update, mid-execution ========


@pytest.mark.parametrize(
    "phase",
    [
        "capture",
        "update",
        pytest.param("execute"),
    ],
)
def test_a_client_killed_mid_phase_gives_everything_back(
    daemon: Daemon, healthy: Healthy, tmp_path: Path, phase: str
) -> None:
    before = device_view(daemon.url)  # the healthy client's model and memory included
    victim = start_victim(daemon, tmp_path, phase)
    try:
        assert victim.segment.exists()
        held = device_view(daemon.url)
        assert held["memory"]["used"] >= before["memory"]["used"] + 8 * MiB
        mine = context_of(daemon.url, victim.context)
        assert mine["sessions"] == 1
        streams = {s["handle"]: s for s in mine["streams"]}
        models = {m["handle"]: m for m in mine["models"]}
        if phase == "capture":
            stream, model = victim.extra
            assert streams[stream]["capturing"] and models[model]["state"] == "capturing"
        elif phase == "update":
            assert [m["state"] for m in mine["models"]] == ["ready"]
        else:  # its stream runs the model, which waits on the EXTERNAL event that no one will record
            stream, model = victim.extra

            def waiting() -> bool:
                s = {s["handle"]: s for s in context_of(daemon.url, victim.context)["streams"]}[stream]
                return s["queued"] >= 1 and "aclmdlRIExecuteAsync" in (s["running"] or "")

            eventually(waiting, 10, "the victim's model execution is running (blocked on its event wait)")
        healthy.go()  # the healthy client starts its iterations ...
        victim.kill()  # ... and the victim dies
    finally:
        if victim.proc.poll() is None:
            victim.kill()
    assert httpx.get(f"{daemon.url}/healthz", timeout=5).json()["status"] == "ok"
    eventually(lambda: victim.context not in context_ids(daemon.url), RECLAIM_S, "the dead context is reclaimed")
    # the context is no longer listed once its release began: memory, streams, events and models must follow
    assert settles(lambda: counts(device_view(daemon.url)) == counts(before), 5), (
        f"the dead context left {counts(device_view(daemon.url))}, before it: {counts(before)}"
    )
    assert not victim.segment.exists()
    outcome = healthy.result()  # it ran through all of that, and ran right
    assert outcome["context"] != victim.context
    eventually(lambda: device_view(daemon.url)["contexts"] == [], RECLAIM_S, "the healthy client's context ends")


def test_a_process_killed_mid_update_in_a_shared_context_leaves_the_group_recoverable(
    idle_daemon: Daemon, tmp_path: Path
) -> None:
    """A second process joined the first one's context and began an update of its task group; it is killed
    before UpdateEnd. The context lives on (the first process is still in it), and so does the dead process's
    update stream, a resource of the context -- but its update ends, unapplied, with the process (reliability 14):
    the group is free for the survivor's updates at once, and the dead stream is in no update any more."""
    daemon = idle_daemon
    free = device_free(daemon.url)
    acl = bound_session(daemon.url, launch_blocking=True)
    try:
        acl.aclInit(None)
        acl.aclrtSetDevice(0)
        context = acl.session.context_id
        seed = workers.Seed(acl, [8, 8], 1.0)
        victim = start_victim(daemon, tmp_path, "join-update", context, str(seed.group))
        try:
            assert victim.context == context
            assert context_of(daemon.url, context)["sessions"] == 2
            (dead_stream,) = victim.extra
            with pytest.raises(AclError) as busy:
                acl.aclmdlRICaptureTaskUpdateBegin(seed.update_stream, seed.group)
            assert busy.value.code == ACL_ERROR_STREAM_TASK_GROUP_STATUS
            assert f"{dead_stream:#x}" in busy.value.message  # it names the stream holding the group
            victim.kill()
        finally:
            if victim.proc.poll() is None:
                victim.kill()
        eventually(lambda: context_of(daemon.url, context)["sessions"] == 1, 10, "the dead process's session ends")
        time.sleep(CONTEXT_GRACE_S + 0.2)  # past the grace period: the context has a session, it stays
        assert context in context_ids(daemon.url) and acl.aclrtGetDevice() == 0
        with pytest.raises(AclError) as ended:
            acl.aclmdlRICaptureTaskUpdateEnd(dead_stream)
        assert ended.value.code == ACL_ERROR_STREAM_TASK_GROUP_STATUS  # its update ended with its process
        rng = np.random.default_rng(5)
        for alpha in (2.0, -3.0):
            self_v, other_v = (rng.standard_normal(seed.n).astype(np.float32) for _ in range(2))
            out = seed.step(self_v, other_v, alpha)
            np.testing.assert_allclose(out, seed.expected(self_v, other_v, alpha), rtol=1e-5, atol=1e-5)
        acl.aclrtDestroyStream(dead_stream)
        seed.destroy()
        acl.aclrtResetDevice(0)
        acl.aclFinalize()
    finally:
        acl.session.close()
    eventually(lambda: device_free(daemon.url) == free, RECLAIM_S, "the shared context's memory is back")


# ======== a client that never reads its replies ========


def start_stall(daemon: Daemon, tmp_path: Path, kind: str, count: int, nbytes: int) -> tuple[Victim, Path]:
    """A raw WebSocket client that floods and never reads (see workers.stall); and its progress file."""
    progress = tmp_path / f"stall-{kind}.txt"
    ws_url = daemon.url.replace("http://", "ws://") + "/v1/ws"
    args = ("stall", ws_url, kind, str(count), str(nbytes), str(progress))
    proc, words = start_client("stalled client", tmp_path / f"stall-{kind}-err.txt", *args)
    return Victim(proc, words[1], Path("/nonexistent"), []), progress


def sent(progress: Path) -> int:
    try:
        return int(progress.read_text() or 0)
    except (OSError, ValueError):
        return 0


def settled(progress: Path, quiet_s: float = 1.0, seconds: float = 30.0) -> int:
    """Wait until the stalled client's send count stops moving for `quiet_s` (it sent everything, or the socket
    pushes back); returns it."""
    deadline = time.monotonic() + seconds
    last, since = sent(progress), time.monotonic()
    while time.monotonic() - since < quiet_s:
        assert time.monotonic() < deadline, f"the stalled client kept sending for {seconds} s"
        time.sleep(0.1)
        now = sent(progress)
        if now != last:
            last, since = now, time.monotonic()
    return last


@pytest.fixture
def own_daemon(tmp_path: Path) -> Iterator[Daemon]:
    """A daemon of the test's own, for faults that leave it changed (a leak, a high RSS)."""
    started = start_daemon(tmp_path / "daemon", context_grace=str(CONTEXT_GRACE_S), shutdown_deadline="2")
    try:
        yield started
    finally:
        started.stop()


def test_a_stalled_client_does_not_stall_others_and_its_replies_are_bounded(own_daemon: Daemon, tmp_path: Path) -> None:
    """A raw WebSocket client sends 20000 synchronous 256 KiB device-to-host copies and reads no reply: the
    daemon would owe it 5 GiB of replies. Its connection stops at the first replies the socket cannot take
    (backpressure), while another client's calls keep completing within CALL_BOUND_S, with right results, and
    the daemon's RSS grows by far less than what it owes."""
    daemon = own_daemon
    rss_before = rss_kib(daemon.pid)
    stalled, progress = start_stall(daemon, tmp_path, "d2h", 20_000, 256 << 10)
    acl = bound_session(daemon.url)
    bounded = ClientThread("healthy-client")
    try:
        eventually(lambda: sent(progress) > 1000, 30, "the stalled client is flooding")
        bounded.call(CALL_BOUND_S, acl.aclInit, None)
        bounded.call(CALL_BOUND_S, acl.aclrtSetDevice, 0)
        n = 16 << 10
        dev = bounded.call(CALL_BOUND_S, acl.aclrtMalloc, n * 4, 0)
        stream = bounded.call(CALL_BOUND_S, acl.aclrtCreateStream)
        rng = np.random.default_rng(3)
        slowest = 0.0
        for i in range(40):  # while the flood goes on, and after it settled
            data = rng.standard_normal(n).astype(np.float32)
            out = np.empty(n, np.float32)
            start = time.monotonic()
            bounded.call(CALL_BOUND_S, acl.aclrtMemcpyAsync, dev, n * 4, data, n * 4, 1, stream)
            if i % 2:
                bounded.call(CALL_BOUND_S, acl.aclrtMemsetAsync, dev, 64, 0, 64, stream)
                data[:16] = 0
            bounded.call(CALL_BOUND_S, acl.aclrtSynchronizeStream, stream)
            bounded.call(CALL_BOUND_S, acl.aclrtMemcpy, out, n * 4, dev, n * 4, 2)
            slowest = max(slowest, time.monotonic() - start)
            np.testing.assert_array_equal(out, data)
        assert slowest < CALL_BOUND_S, f"a round of the healthy client took {slowest:.2f} s"
        total = settled(progress)
        growth_mib = (rss_kib(daemon.pid) - rss_before) / 1024
        assert growth_mib < 64, f"the daemon grew by {growth_mib:.0f} MiB for a client that owes {total} replies"
        assert stalled.context in context_ids(daemon.url) and daemon.healthy()
        bounded.call(CALL_BOUND_S, acl.aclrtResetDevice, 0)
        bounded.call(CALL_BOUND_S, acl.aclFinalize)
    finally:
        acl.session.close()
        bounded.stop()
        stalled.kill()


def test_a_stalled_client_that_dies_is_reclaimed(own_daemon: Daemon, tmp_path: Path) -> None:
    daemon = own_daemon
    free = device_free(daemon.url)
    stalled, progress = start_stall(daemon, tmp_path, "d2h", 20_000, 256 << 10)
    try:
        # far more than VNPU_MAX_PENDING (4096) calls of one client thread sent: its queue in the daemon is full
        if not settles(lambda: sent(progress) >= 8000, 30):
            pytest.fail(f"the stalled client sent only {sent(progress)} calls")
        assert device_free(daemon.url) < free
    finally:
        stalled.kill()
    assert settles(lambda: stalled.context not in context_ids(daemon.url), RECLAIM_S / 3), "its context stays"
    assert device_free(daemon.url) == free


def test_a_stalled_client_cannot_make_the_daemon_hold_its_queued_payloads(own_daemon: Daemon, tmp_path: Path) -> None:
    rss_before = rss_kib(own_daemon.pid)
    stalled, progress = start_stall(own_daemon, tmp_path, "h2d", 400, MiB)
    try:
        total = settled(progress)
        growth_mib = (rss_kib(own_daemon.pid) - rss_before) / 1024
        assert own_daemon.healthy()
    finally:
        stalled.kill()
    assert total < 400, "the daemon read every queued call: no backpressure by bytes"  # VNPU_MAX_PENDING_BYTES
    assert growth_mib < 256, f"the daemon grew by {growth_mib:.0f} MiB holding a stalled client's calls"


# ======== the daemon stops under a connected client ========


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_stopped_daemon_is_a_transport_error_and_a_new_one_serves(tmp_path: Path, how: str) -> None:
    """A client thread waits in aclrtSynchronizeStream (its stream waits on an EXTERNAL event) when the daemon
    stops: the wait ends with TransportError, not a hang, and so do the session's later calls, waiting or
    pipelined. A new daemon on the same port serves a new session (and removes the pinned-memory segments a
    killed daemon left behind)."""
    first = start_daemon(tmp_path / "first", context_grace="0.5", shutdown_deadline="2")
    second: Daemon | None = None
    old = bound_session(first.url)
    bounded = ClientThread("healthy-client")
    try:
        old.aclInit(None)
        old.aclrtSetDevice(0)
        stream = old.aclrtCreateStream()
        event = old.aclrtCreateEventWithFlag(old.ACL_EVENT_EXTERNAL)
        host = old.aclrtMallocHost(4096)
        segment = SHM / old.session.call("vnpuHostInfo", host.ptr)[0]
        assert segment.exists()
        old.aclrtStreamWaitEvent(stream, event)
        outcome: list[BaseException | str] = []

        def wait_forever() -> None:
            try:
                old.aclrtSetDevice(0)  # the current device is per thread
                old.aclrtSynchronizeStream(stream)
                outcome.append("returned")
            except BaseException as error:
                outcome.append(error)

        waiter = threading.Thread(target=wait_forever, name="waiter", daemon=True)
        waiter.start()
        eventually(lambda: any(s["queued"] for s in device_view(first.url)["contexts"][0]["streams"]), 10, "a wait")
        time.sleep(0.2)  # the synchronize is in the daemon
        assert not outcome
        status = first.stop(getattr(signal, how), timeout=20)
        assert status == (0 if how == "SIGTERM" else -signal.SIGKILL)
        waiter.join(15)
        assert outcome, "the waiting call still hangs after the daemon stopped"
        assert isinstance(outcome[0], TransportError), outcome[0]
        assert "connection to the daemon closed" in str(outcome[0])
        with pytest.raises(TransportError):
            bounded.call(10, old.aclrtGetDevice)
        with pytest.raises(TransportError):
            bounded.call(10, old.aclrtRecordEvent, event, stream)  # pipelined: refused at once too
        if how == "SIGTERM":
            assert not segment.exists()  # a graceful stop removes it (a killed daemon cannot)

        second = start_daemon(tmp_path / "second", port=first.port)
        assert not segment.exists()  # the new daemon removed the dead one's segment
        new = bound_session(second.url)
        try:
            new.aclInit(None)
            new.aclrtSetDevice(0)
            seed = workers.Seed(new, [4, 2], 1.1)
            ones = np.ones(8, np.float32)
            np.testing.assert_allclose(seed.step(0 * ones, ones, 5.5), seed.expected(0 * ones, ones, 5.5), rtol=1e-6)
            seed.destroy()
            new.aclrtResetDevice(0)
            new.aclFinalize()
        finally:
            new.session.close()
        with pytest.raises(TransportError):  # the old session does not come back by itself
            bounded.call(10, old.aclrtGetDevice)
    finally:
        old.session.close()
        bounded.stop()
        first.stop(signal.SIGKILL, timeout=10)
        if second is not None:
            assert second.stop() == 0
