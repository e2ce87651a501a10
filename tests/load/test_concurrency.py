"""Concurrency against one daemon: many client processes updating their own models at once; several processes
joined to one context contending for one task group (a critical resource: one update at a time, 107033 for the
others, and a replay never sees a mix of old and new kernels); threads of one process under the capture modes
of spec 1.3."""

from __future__ import annotations

import itertools
import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from client.config import Config
from client.session import Session
from proto.errors import (
    ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC,
    ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from tests.load import workers
from tests.load.conftest import CONTEXT_GRACE_S, ClientThread, Daemon, device_free, device_view, eventually, gather

SPAWN = multiprocessing.get_context("spawn")
RESULT_TIMEOUT_S = 120
GLOBAL, THREAD_LOCAL, RELAXED, NONE = 0, 1, 2, 3  # aclmdlRICaptureMode, and "no capture" (spec 1.3: MAX)
MODE_NAMES = {GLOBAL: "GLOBAL", THREAD_LOCAL: "THREAD_LOCAL", RELAXED: "RELAXED", NONE: "NONE"}


def bound_session(url: str, **config: Any) -> workers.Bound:
    return workers.Bound(Session(Config(endpoint=url, **config)))


@pytest.fixture
def quiet_daemon(idle_daemon: Daemon) -> Iterator[Daemon]:
    """The module's daemon, holding nothing of an earlier test; after this one, all its memory is back."""
    daemon = idle_daemon
    free = device_free(daemon.url)
    yield daemon
    eventually(lambda: device_view(daemon.url)["contexts"] == [], CONTEXT_GRACE_S + 10, "this test's contexts end")
    assert device_free(daemon.url) == free, "the test's contexts did not give all their memory back"
    daemon.check_alive()


def join_all(processes: list[Any], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    for proc in processes:
        proc.join(max(0.1, deadline - time.monotonic()))
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
            proc.join(10)


# ======== many processes, each with its own model ========

PROCESSES = 8
ITERATIONS = 15


@pytest.mark.slow
def test_processes_update_their_own_models_without_cross_talk(quiet_daemon: Daemon) -> None:
    """PROCESSES client processes (spawn) each capture the seed's model (EXTERNAL event, task group, update
    stream) and, all at once, run ITERATIONS executions with new random data and an update to alternating alphas
    that no other process uses; every output element matches that iteration's float64 reference."""
    results = SPAWN.Queue()
    barrier = SPAWN.Barrier(PROCESSES)
    processes = [
        SPAWN.Process(target=workers.own_model, args=(quiet_daemon.url, i, ITERATIONS, barrier, results))
        for i in range(PROCESSES)
    ]
    for proc in processes:
        proc.start()
    try:
        outcomes = [results.get(timeout=RESULT_TIMEOUT_S) for _ in processes]
    finally:
        join_all(processes)
    errors = [f"process {o['index']}: {o['error']}" for o in outcomes if "error" in o]
    assert not errors, "\n".join(errors)
    assert sorted(o["index"] for o in outcomes) == list(range(PROCESSES))
    for outcome in outcomes:
        assert outcome["mismatches"] == [], f"process {outcome['index']}: {outcome['mismatches'][:5]}"
        assert outcome["checked"] == ITERATIONS
        assert outcome["max_error"] < 1e-4
    assert len({o["context"] for o in outcomes}) == PROCESSES  # one context each
    assert all(p.exitcode == 0 for p in processes)


# ======== several processes, one context, one task group ========

UPDATERS = 4
UPDATES = 15
SLICES, LENGTH = 4, 256  # the group: one kernel per slice of `out`


@pytest.mark.slow
def test_joined_processes_contend_for_one_task_group(quiet_daemon: Daemon) -> None:
    """This process captures a model whose task group holds SLICES kernels, kernel i writing `value` into slice i
    of `out` (out_i = zeros_i + value * ones_i), then the model copies `out` to pinned host memory. UPDATERS
    processes join its context (VNPU_CONTEXT, every call waiting) and each rewrites the group UPDATES times from
    its own update stream, with values no other update uses; this process replays the model on its stream after
    each update it is told was applied. Checked:

    - the group admits one update at a time: the others get 107033 at UpdateBegin and retry, every updater
      finishes all its updates, and the updaters' Begin..End intervals never overlap;
    - every replay sees a whole group: all slices hold one value, the initial one or one an updater wrote;
    - at the end the group holds the last value of one of the updaters, and counts every update."""
    url = quiet_daemon.url
    acl = bound_session(url)
    try:
        acl.aclInit(None)
        acl.aclrtSetDevice(0)
        n = SLICES * LENGTH
        zeros_d, ones_d, out_d = (acl.aclrtMalloc(n * 4, 0) for _ in range(3))
        acl.aclrtMemcpy(zeros_d, n * 4, np.zeros(n, np.float32), n * 4, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        acl.aclrtMemcpy(ones_d, n * 4, np.ones(n, np.float32), n * 4, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        out_h = acl.aclrtMallocHost(n * 4)
        stream = acl.aclrtCreateStream()
        initial = 0.5
        alpha = acl.aclCreateScalar(initial, acl.ACL_FLOAT)
        zeros, ones, outs = (workers.slice_tensors(p, SLICES, LENGTH) for p in (zeros_d, ones_d, out_d))
        acl.aclmdlRICaptureBegin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        acl.aclmdlRICaptureTaskGrpBegin(stream)
        for z, o, out in zip(zeros, ones, outs, strict=True):
            size, executor = acl.aclnnAddGetWorkspaceSize(z, o, alpha, out)
            acl.aclnnAdd(None, size, executor, stream)
        group = acl.aclmdlRICaptureTaskGrpEnd(stream)
        acl.aclrtMemcpyAsync(out_h, n * 4, out_d, n * 4, acl.ACL_MEMCPY_DEVICE_TO_HOST, stream)
        model = acl.aclmdlRICaptureEnd(stream)

        def replay() -> np.ndarray:
            acl.aclmdlRIExecuteAsync(model, stream)
            acl.aclrtSynchronizeStream(stream)
            return np.frombuffer(out_h.read(), np.float32).reshape(SLICES, LENGTH).copy()

        assert np.all(replay() == initial)
        context = acl.session.context_id
        shared = {"model": model, "group": group, "zeros": zeros_d, "ones": ones_d, "out": out_d}
        shared |= {"slices": SLICES, "length": LENGTH}
        messages = SPAWN.Queue()
        processes = [
            SPAWN.Process(target=workers.shared_updater, args=(url, context, shared, i, UPDATES, messages))
            for i in range(UPDATERS)
        ]
        for proc in processes:
            proc.start()
        planned = {workers.shared_value(i, j) for i in range(UPDATERS) for j in range(UPDATES)}
        seen: list[float] = []
        done: dict[int, tuple[int, list[tuple[float, float]]]] = {}
        errors: list[str] = []
        try:
            deadline = time.monotonic() + RESULT_TIMEOUT_S
            while len(done) + len(errors) < UPDATERS:  # at most UPDATERS * (UPDATES + 2) messages
                kind, index, *rest = messages.get(timeout=max(1.0, deadline - time.monotonic()))
                if kind == "ready":
                    assert rest == [context]
                elif kind == "applied":
                    assert rest[0] in planned
                    out = replay()
                    assert np.all(out == out[0, 0]), f"a replay saw a mix of groups: {np.unique(out)}"
                    assert out[0, 0] in planned, out[0, 0]  # an update applied (this one, or a later one)
                    seen.append(float(out[0, 0]))
                elif kind == "done":
                    done[index] = (rest[0], rest[1])
                else:
                    errors.append(f"updater {index}: {rest[0]}")
        finally:
            join_all(processes)
        assert not errors, "\n".join(errors)
        assert sorted(done) == list(range(UPDATERS)) and len(seen) == UPDATERS * UPDATES
        assert all(p.exitcode == 0 for p in processes)
        intervals = sorted(interval for _, inside in done.values() for interval in inside)
        assert len(intervals) == UPDATERS * UPDATES
        for (_, end), (begin, _) in itertools.pairwise(intervals):
            assert end <= begin, "two updates of one group were in progress at the same time"
        final = replay()
        assert np.all(final == final[0, 0])
        assert float(final[0, 0]) in {workers.shared_value(i, UPDATES - 1) for i in range(UPDATERS)}
        view = httpx.get(f"{url}/v1/models/{model}", timeout=10).json()
        assert [g["updates"] for g in view["groups"]] == [UPDATERS * UPDATES]
        busy = sum(count for count, _ in done.values())
        print(f"{busy} UpdateBegin calls of {UPDATERS} processes found the group busy (107033) and retried")
        acl.aclmdlRIDestroy(model)
        for t in (*zeros, *ones, *outs):
            acl.aclDestroyTensor(t)
        acl.aclDestroyScalar(alpha)
        acl.aclrtResetDevice(0)
        acl.aclFinalize()
    finally:
        acl.session.close()


# ======== threads of one process and the capture modes ========


def unsafe_call_allowed(ctx: int, thr: int, x: int) -> bool:
    """Spec 1.3, as written there: `ctx` the lowest mode of the context's active captures, `thr` the lowest of
    those this thread began, `x` this thread's exchange mode (NONE: no capture)."""
    if ctx == NONE or x == RELAXED:
        return True
    if x == GLOBAL and (ctx == GLOBAL or thr == THREAD_LOCAL):
        return False
    return not (x == THREAD_LOCAL and thr in (GLOBAL, THREAD_LOCAL))


def test_the_rule_reads_as_the_spec_says() -> None:
    """Spot checks of the rule above against API15's summary: GLOBAL blocks every thread (in its default GLOBAL
    exchange mode), THREAD_LOCAL only the capturing thread, RELAXED none; a RELAXED exchange mode allows all."""
    assert not unsafe_call_allowed(GLOBAL, NONE, GLOBAL)
    assert not unsafe_call_allowed(GLOBAL, GLOBAL, GLOBAL)
    assert unsafe_call_allowed(THREAD_LOCAL, NONE, GLOBAL)
    assert not unsafe_call_allowed(THREAD_LOCAL, THREAD_LOCAL, GLOBAL)
    assert unsafe_call_allowed(RELAXED, RELAXED, GLOBAL)
    assert unsafe_call_allowed(GLOBAL, GLOBAL, RELAXED)
    assert unsafe_call_allowed(GLOBAL, NONE, THREAD_LOCAL)  # not its own capture: THREAD_LOCAL lets it through
    assert not unsafe_call_allowed(GLOBAL, GLOBAL, THREAD_LOCAL)


SCENARIOS = [(GLOBAL,), (THREAD_LOCAL,), (RELAXED,), (THREAD_LOCAL, RELAXED), (RELAXED, GLOBAL), (THREAD_LOCAL,) * 2]


def test_capture_modes_across_threads_follow_the_spec(quiet_daemon: Daemon) -> None:
    """Two capturing threads (a capture each, in the scenario's modes), two other threads of the process and a
    thread of a second session joined to the same context (another process) run concurrently; each sets its
    exchange mode to GLOBAL, THREAD_LOCAL and RELAXED in turn (aclmdlRICaptureThreadExchangeMode returns the
    previous one) and tries the unsafe calls: synchronous aclrtMemcpy and aclrtMemset (denied: 107030) and an
    aclrtMemcpyAsync into pageable memory on a stream that is not capturing (which the runtime makes
    synchronous: denied with 107041). Every outcome is the one spec 1.3's rule gives."""
    url = quiet_daemon.url
    acl = bound_session(url)
    joined: workers.Bound | None = None
    names = ["capturer-0", "capturer-1", "plain-0", "plain-1", "joined"]
    threads = {name: ClientThread(name) for name in names}
    try:
        acl.aclInit(None)
        acl.aclrtSetDevice(0)
        joined = bound_session(url, context=acl.session.context_id)
        joined.aclInit(None)
        assert joined.session.context_id == acl.session.context_id
        dev = acl.aclrtMalloc(4096, 0)
        api = {name: joined if name == "joined" else acl for name in names}
        streams = gather(
            [threads[n].submit(lambda a=api[n]: (a.aclrtSetDevice(0), a.aclrtCreateStream())[1]) for n in names]
        )
        own = dict(zip(names, streams, strict=True))  # a capture stream (capturers), a plain stream (the others)
        spare = {n: acl.aclrtCreateStream() for n in names}  # never captured: for the pageable async copy

        tally = {"allowed": 0, "denied": 0}

        def probe(name: str, modes: tuple[int, ...], capturing: bool) -> list[str]:
            a = api[name]
            ctx = min(modes)
            thr = modes[int(name[-1])] if capturing else NONE
            wrong = []
            previous = GLOBAL
            for x in (THREAD_LOCAL, RELAXED, GLOBAL, RELAXED, THREAD_LOCAL, GLOBAL):
                old = a.aclmdlRICaptureThreadExchangeMode(x)
                if old != previous:
                    wrong.append(f"{name}: ExchangeMode({x}) returned {old}, not {previous}")
                previous = x
                allowed = unsafe_call_allowed(ctx, thr, x)
                host = bytearray(64)  # pageable memory
                attempts: list[tuple[str, int, Callable[[], Any]]] = [
                    (
                        "aclrtMemcpy",
                        ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
                        lambda h=host: a.aclrtMemcpy(h, 64, dev, 64, 2),
                    ),
                    ("aclrtMemset", ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, lambda: a.aclrtMemset(dev, 64, 1, 64)),
                    (
                        "aclrtMemcpyAsync(pageable)",
                        ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC,
                        lambda h=host: a.aclrtMemcpyAsync(h, 64, dev, 64, 2, spare[name]),
                    ),
                ]
                for call, denied_code, attempt in attempts:
                    try:
                        attempt()
                        got = "allowed"
                    except AclError as error:
                        got = "denied" if error.code == denied_code else f"error {error.code}"
                    want = "allowed" if allowed else "denied"
                    tally[got] = tally.get(got, 0) + 1
                    if got != want:
                        wrong.append(
                            f"{name} ({'capturing' if capturing else 'not capturing'}), captures in "
                            f"{[MODE_NAMES[m] for m in modes]}, exchange mode {MODE_NAMES[x]}: {call} {got}, "
                            f"expected {want}"
                        )
            return wrong

        checked = 0
        for modes in SCENARIOS:
            capturers = names[: len(modes)]
            gather(
                [
                    threads[n].submit(lambda n=n, m=m: acl.aclmdlRICaptureBegin(own[n], m))
                    for n, m in zip(capturers, modes, strict=False)
                ]
            )
            wrong = gather([threads[n].submit(lambda n=n, m=modes, c=capturers: probe(n, m, n in c)) for n in names])
            assert [w for ws in wrong for w in ws] == []
            checked += 1
            models = gather([threads[n].submit(lambda n=n: acl.aclmdlRICaptureEnd(own[n])) for n in capturers])
            for model in models:
                acl.aclmdlRIDestroy(model)
            # no capture is left: everything is allowed again, in every exchange mode
            assert gather([threads[n].submit(lambda n=n: probe(n, (NONE,), False)) for n in names]) == [[]] * 5
        assert checked == len(SCENARIOS)
        assert tally["denied"] >= 60 and tally["allowed"] >= 300, tally  # both outcomes, in numbers
        gather([threads[n].submit(lambda n=n: api[n].aclrtResetDevice(0)) for n in names])
        joined.aclFinalize()
        acl.aclrtResetDevice(0)
        acl.aclFinalize()
    finally:
        for worker in threads.values():
            worker.stop()
        if joined is not None:
            joined.session.close()
        acl.session.close()


THREADS = 4
THREAD_ITERATIONS = 12


def test_threads_of_one_process_run_their_own_models_under_thread_local_capture(quiet_daemon: Daemon) -> None:
    """THREADS threads of one process share its session; each captures its own seed model in THREAD_LOCAL mode
    (all at once), then iterates: new data, execute, update, and a synchronous aclrtMemcpy read of the result --
    allowed while the other threads capture, since THREAD_LOCAL blocks only the capturing thread. Half way each
    thread captures a throwaway model, during which its own synchronous copy is refused (107030) while the others
    go on. Thread 0 also makes a pipelined call fail: the error comes back to thread 0's next waiting call only."""
    acl = bound_session(quiet_daemon.url)
    barrier = threading.Barrier(THREADS, timeout=30)
    workers_ = [ClientThread(f"model-{i}") for i in range(THREADS)]
    try:
        acl.aclInit(None)

        def run(index: int) -> int:
            acl.aclrtSetDevice(0)
            rng = np.random.default_rng(index)
            capture_alpha, *alphas = workers.own_alphas(index)
            barrier.wait()
            seed = workers.Seed(acl, [16, 16], capture_alpha, mode=acl.ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL)
            spare = acl.aclrtCreateStream()
            checked = 0
            for i in range(THREAD_ITERATIONS):
                if i == THREAD_ITERATIONS // 2:
                    acl.aclmdlRICaptureBegin(spare, acl.ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL)
                    with pytest.raises(AclError) as denied:
                        acl.aclrtMemcpy(bytearray(64), 64, seed.out_d, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)
                    assert denied.value.code == ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
                    acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(spare))
                if index == 0 and i == 3:  # past the end of out_d: fails when it runs, reported to this thread
                    end = seed.nbytes + 32
                    acl.aclrtMemcpyAsync(seed.out_d, end, seed.tmp_d + 32, end, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, spare)
                    with pytest.raises(AclError) as late:
                        acl.aclrtSynchronizeStream(spare)
                    assert late.value.code == ACL_ERROR_RT_PARAM_INVALID and "aclrtMemcpyAsync (" in late.value.message
                self_v, other_v = (rng.standard_normal(seed.n).astype(np.float32) for _ in range(2))
                alpha = alphas[i % 2]
                out = seed.step(self_v, other_v, alpha)
                read = np.empty(seed.n, np.float32)
                acl.aclrtMemcpy(read, seed.nbytes, seed.out_d, seed.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
                want = seed.expected(self_v, other_v, alpha)
                np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5, err_msg=f"thread {index}, iteration {i}")
                np.testing.assert_array_equal(read, out)
                checked += 1
            acl.aclrtDestroyStream(spare)
            seed.destroy()
            acl.aclrtResetDevice(0)
            return checked

        answers = [w.submit(lambda i=i: run(i)) for i, w in enumerate(workers_)]
        assert gather(answers, seconds=RESULT_TIMEOUT_S) == [THREAD_ITERATIONS] * THREADS
        acl.aclFinalize()
    finally:
        barrier.abort()
        for worker in workers_:
            worker.stop()
        acl.session.close()
