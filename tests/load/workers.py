"""What the client processes of the load and fault tests run.

Two kinds of children:

- functions started with multiprocessing's 'spawn' context (`own_model`, `shared_updater`): they report through
  a queue, never raise into the void (an exception becomes an ("error", ...) message);
- command lines run with `python -m tests.load.workers <command> ...` (PYTHONPATH = the repository root): a
  victim that reaches a state and waits there to be SIGKILLed (`victim capture|update|execute|join-update`), and
  a raw WebSocket client that sends calls and never reads a reply (`stall`).

Every wait is bounded: a child left behind by a failed test exits by itself.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from typing import Any

import numpy as np

F32_BYTES = 4
BARRIER_TIMEOUT_S = 60
VICTIM_LIFETIME_S = 120  # a victim that is not killed exits by itself after this
STALL_LIFETIME_S = 120
UPDATE_ATTEMPTS = 20_000  # UpdateBegin retries on 107033, per update
UPDATE_DEADLINE_S = 60


def strides(shape: list[int]) -> list[int]:
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = shape[i + 1] * out[i + 1]
    return out


def tensor(ptr: int, shape: list[int]) -> Any:
    from proto.aclnn import aclCreateTensor
    from proto.constants import ACL_FLOAT, ACL_FORMAT_ND

    return aclCreateTensor(shape, ACL_FLOAT, strides(shape), 0, ACL_FORMAT_ND, shape, ptr)


class Bound:
    """client.acl's surface (C names, constants, AclError) on an explicit `Session`: the pytest process uses this,
    so that its tests leave client.acl's process-wide session alone."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def __getattr__(self, name: str) -> Any:
        import functools

        import client.acl as acl
        from proto.calltable import CALLS

        if name in CALLS:
            return functools.partial(self.session.call, name)
        return getattr(acl, name)


def f32(value: float) -> float:
    return float(np.float32(value))


def use_only(**variables: str) -> None:
    """This process's VNPU_* environment: exactly `variables` (none inherited from the test run)."""
    for name in [n for n in os.environ if n.startswith("VNPU_")]:
        del os.environ[name]
    os.environ.update(variables)


class Seed:
    """The seed's concurrent task-update model, captured through `acl` (client.acl, or a Bound session):

        outtmp = self + alpha * other;  wait(EXTERNAL event); reset;  [group: out = outtmp + alpha * other];  D2H out

    with `self` and `other` read from pinned host buffers at every replay (so each execution can use new data)."""

    def __init__(self, acl: Any, shape: list[int], alpha: float, mode: int | None = None) -> None:
        self.acl = acl  # the client.acl module, or a Bound session
        self.shape = shape
        self.n = int(np.prod(shape))
        nbytes = self.n * F32_BYTES
        self.nbytes = nbytes
        self.alpha = alpha
        self.self_d, self.other_d, self.out_d, self.tmp_d = (
            acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST) for _ in range(4)
        )
        self.self_t, self.other_t, self.out_t, self.tmp_t = (
            tensor(p, shape) for p in (self.self_d, self.other_d, self.out_d, self.tmp_d)
        )
        self.self_h, self.other_h, self.out_h = (acl.aclrtMallocHost(nbytes) for _ in range(3))
        self.scalars = [acl.aclCreateScalar(alpha, acl.ACL_FLOAT)]
        self.workspaces: list[int] = []
        self.stream1 = acl.aclrtCreateStream()
        self.update_stream = acl.aclrtCreateStream()
        self.event = acl.aclrtCreateEventWithFlag(acl.ACL_EVENT_EXTERNAL)
        ws, ex = acl.aclnnAddGetWorkspaceSize(self.self_t, self.other_t, self.scalars[0], self.tmp_t)
        ws1, ex1 = acl.aclnnAddGetWorkspaceSize(self.tmp_t, self.other_t, self.scalars[0], self.out_t)
        s1 = self.stream1
        acl.aclmdlRICaptureBegin(s1, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL if mode is None else mode)
        acl.aclrtMemcpyAsync(self.self_d, nbytes, self.self_h, nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE, s1)
        acl.aclrtMemcpyAsync(self.other_d, nbytes, self.other_h, nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE, s1)
        acl.aclnnAdd(self.workspace(ws), ws, ex, s1)
        acl.aclrtStreamWaitEvent(s1, self.event)
        acl.aclrtResetEvent(self.event, s1)
        acl.aclmdlRICaptureTaskGrpBegin(s1)
        acl.aclnnAdd(self.workspace(ws1), ws1, ex1, s1)
        self.group = acl.aclmdlRICaptureTaskGrpEnd(s1)
        acl.aclrtMemcpyAsync(self.out_h, nbytes, self.out_d, nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST, s1)
        self.model = acl.aclmdlRICaptureEnd(s1)

    def workspace(self, size: int) -> int | None:
        if size <= 0:
            return None
        ptr: int = self.acl.aclrtMalloc(size, self.acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.workspaces.append(ptr)
        return ptr

    def step(self, self_v: np.ndarray, other_v: np.ndarray, alpha: float) -> np.ndarray:
        """One execution with new data, the group updated to `alpha` while the model waits; returns `out`."""
        acl = self.acl
        self.self_h.write(self_v)
        self.other_h.write(other_v)
        acl.aclmdlRIExecuteAsync(self.model, self.stream1)
        scalar = acl.aclCreateScalar(alpha, acl.ACL_FLOAT)
        self.scalars.append(scalar)
        ws2, ex2 = acl.aclnnAddGetWorkspaceSize(self.tmp_t, self.other_t, scalar, self.out_t)
        acl.aclmdlRICaptureTaskUpdateBegin(self.update_stream, self.group)
        acl.aclnnAdd(self.workspace(ws2), ws2, ex2, self.update_stream)
        acl.aclmdlRICaptureTaskUpdateEnd(self.update_stream)
        acl.aclrtRecordEvent(self.event, self.update_stream)
        acl.aclrtSynchronizeStream(self.update_stream)
        acl.aclrtSynchronizeStream(self.stream1)
        return np.frombuffer(self.out_h.read(), np.float32).copy()

    def expected(self, self_v: np.ndarray, other_v: np.ndarray, alpha: float) -> np.ndarray:
        """The float64 reference of one step (the scalars are float32 on the device)."""
        s, o = self_v.astype(np.float64), other_v.astype(np.float64)
        return s + f32(self.alpha) * o + f32(alpha) * o

    def destroy(self) -> None:
        acl = self.acl
        acl.aclmdlRIDestroy(self.model)
        for t in (self.self_t, self.other_t, self.out_t, self.tmp_t):
            acl.aclDestroyTensor(t)
        for s in self.scalars:
            acl.aclDestroyScalar(s)
        for p in (self.self_d, self.other_d, self.out_d, self.tmp_d, *self.workspaces):
            acl.aclrtFree(p)
        for h in (self.self_h, self.other_h, self.out_h):
            acl.aclrtFreeHost(h)
        acl.aclrtDestroyStream(self.stream1)
        acl.aclrtDestroyStream(self.update_stream)
        acl.aclrtDestroyEvent(self.event)


# ======== spawn children ========

OWN_SHAPE = [32, 16]


def own_alphas(index: int) -> tuple[float, float, float]:
    """The capture alpha and the two alternating update alphas of process `index`: distinct per process, exact in
    float32, so another process's update showing up here cannot go unnoticed."""
    return 0.5 + index, 1.25 + index, -(2.5 + index)


def own_model(endpoint: str, index: int, iterations: int, barrier: Any, results: Any, stop: Any = None) -> None:
    """Capture this process's own seed model, wait at `barrier`, then `iterations` times: new random data,
    execute, update the group to the next alternating alpha, check every output element against float64.
    With a `stop` event: iterate until it is set (at most `iterations` times), and keep everything allocated until
    then. Puts one result dict: checked iterations, mismatches, the largest error, or the error that stopped it."""
    use_only(VNPU_ENDPOINT=endpoint)
    outcome: dict[str, Any] = {"index": index, "pid": os.getpid(), "checked": 0, "mismatches": [], "max_error": 0.0}
    try:
        import client.acl as acl

        rng = np.random.default_rng(1000 + index)
        acl.aclInit(None)
        acl.aclrtSetDevice(0)
        outcome["context"] = acl.current().context_id
        capture_alpha, *alphas = own_alphas(index)
        seed = Seed(acl, OWN_SHAPE, capture_alpha)
        barrier.wait(BARRIER_TIMEOUT_S)  # every process has its model: the iterations overlap
        for i in range(iterations):
            if stop is not None and stop.is_set():
                break
            self_v = rng.standard_normal(seed.n).astype(np.float32)
            other_v = rng.standard_normal(seed.n).astype(np.float32)
            alpha = alphas[i % 2]
            out = seed.step(self_v, other_v, alpha)
            want = seed.expected(self_v, other_v, alpha)
            error = float(np.max(np.abs(out - want)))
            outcome["max_error"] = max(outcome["max_error"], error)
            if not np.allclose(out, want, rtol=1e-5, atol=1e-5):
                bad = int(np.argmax(np.abs(out - want)))
                outcome["mismatches"].append(f"iteration {i}: out[{bad}] = {out[bad]!r}, expected {want[bad]!r}")
            outcome["checked"] += 1
        if stop is not None:
            stop.wait(BARRIER_TIMEOUT_S)
        seed.destroy()
        acl.aclrtResetDevice(0)
        acl.aclFinalize()
    except BaseException as error:
        outcome["error"] = "".join(traceback.format_exception(error))[-3000:]
    results.put(outcome)


def slice_tensors(base: int, slices: int, length: int) -> list[Any]:
    return [tensor(base + i * length * F32_BYTES, [length]) for i in range(slices)]


def shared_updater(
    endpoint: str, context: str, shared: dict[str, Any], index: int, updates: int, messages: Any
) -> None:
    """Join `context` (VNPU_CONTEXT) with every call waiting (VNPU_LAUNCH_BLOCKING=1) and rewrite the shared
    model's task group `updates` times from this process's own update stream: each update sets every slice of
    `out` to this update's unique value. A busy group (107033 at UpdateBegin) is counted and retried.

    Messages: ("ready", index, context), ("applied", index, value) once the update ran on the update stream,
    ("done", index, busy count, [(UpdateBegin returned, UpdateEnd called) per update]), or ("error", index, text).
    Those intervals lie inside the daemon's own Begin..End of each update, so the intervals of all the updaters
    together must not overlap if the group admits one update at a time."""
    use_only(VNPU_ENDPOINT=endpoint, VNPU_CONTEXT=context, VNPU_LAUNCH_BLOCKING="1")
    try:
        import client.acl as acl

        rng = np.random.default_rng(index)
        acl.aclInit(None)
        acl.aclrtSetDevice(0)
        joined = acl.current().context_id
        if joined != context:
            raise RuntimeError(f"joined context {joined}, not {context}")
        # the model and its group are the first process's; this one sees them through the shared context
        if f"{shared['model']:#x}" not in acl.aclmdlRIDebugPrint(shared["model"]):
            raise RuntimeError("aclmdlRIDebugPrint does not name the shared model")
        slices, length = shared["slices"], shared["length"]
        zeros = slice_tensors(shared["zeros"], slices, length)
        ones = slice_tensors(shared["ones"], slices, length)
        outs = slice_tensors(shared["out"], slices, length)
        update_stream = acl.aclrtCreateStream()
        messages.put(("ready", index, joined))
        busy = 0
        scalars = []
        inside: list[tuple[float, float]] = []  # from UpdateBegin's return to UpdateEnd's call, per update
        deadline = time.monotonic() + UPDATE_DEADLINE_S
        for j in range(updates):
            value = shared_value(index, j)
            scalar = acl.aclCreateScalar(value, acl.ACL_FLOAT)
            scalars.append(scalar)
            launches = [
                acl.aclnnAddGetWorkspaceSize(z, o, scalar, out) for z, o, out in zip(zeros, ones, outs, strict=True)
            ]
            if any(size for size, _ in launches):
                raise RuntimeError("aclnnAdd asked for a workspace; this worker does not provide one")
            for _attempt in range(UPDATE_ATTEMPTS):
                try:
                    acl.aclmdlRICaptureTaskUpdateBegin(update_stream, shared["group"])
                    break
                except acl.AclError as error:
                    if error.code != acl.ACL_ERROR_STREAM_TASK_GROUP_STATUS or time.monotonic() > deadline:
                        raise
                    busy += 1
                    time.sleep(float(rng.uniform(0, 0.002)))
            else:
                raise RuntimeError(f"update {j}: the group stayed busy for {UPDATE_ATTEMPTS} attempts")
            began = time.monotonic()  # CLOCK_MONOTONIC: comparable between processes
            for size, executor in launches:
                acl.aclnnAdd(None, size, executor, update_stream)
            ending = time.monotonic()
            acl.aclmdlRICaptureTaskUpdateEnd(update_stream)
            inside.append((began, ending))
            acl.aclrtSynchronizeStream(update_stream)  # the update ran: it is applied
            messages.put(("applied", index, value))
        messages.put(("done", index, busy, inside))
        acl.aclrtDestroyStream(update_stream)
        for t in (*zeros, *ones, *outs):
            acl.aclDestroyTensor(t)
        for s in scalars:
            acl.aclDestroyScalar(s)
        acl.aclrtResetDevice(0)
        acl.aclFinalize()
    except BaseException as error:
        messages.put(("error", index, "".join(traceback.format_exception(error))[-3000:]))


def shared_value(index: int, update: int) -> float:
    """The unique value update `update` of updater `index` writes (an integer, exact in float32)."""
    return float(1000 * (index + 1) + update + 1)


# ======== command-line children ========


def say(*words: object) -> None:
    print(*words, flush=True)


def victim(phase: str, endpoint: str, *rest: str) -> None:
    """Reach `phase` holding resources, print READY <context> <segment> [more], then wait to be killed.

    capture: a capture left open (GLOBAL) on a stream, with tasks recorded in it.
    update: the seed model captured, then UpdateBegin and one kernel launch on the update stream, no UpdateEnd.
    execute: the seed model executing, its stream waiting on an EXTERNAL event that is never recorded, and a
        second thread blocked in aclrtSynchronizeStream on that stream.
    join-update <context> <group>: joins another process's context and begins an update of its group.
    """
    use_only(VNPU_ENDPOINT=endpoint, **({"VNPU_CONTEXT": rest[0]} if phase == "join-update" else {}))
    import client.acl as acl

    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    context = acl.current().context_id
    ballast = acl.aclrtMalloc(8 << 20, acl.ACL_MEM_MALLOC_HUGE_FIRST)  # so the memory it holds is plain to see
    host = acl.aclrtMallocHost(1 << 16)
    segment, _ = acl.current().call("vnpuHostInfo", host.ptr)
    extra: list[object] = []
    if phase == "capture":
        stream = acl.aclrtCreateStream()
        acl.aclrtMemsetAsync(ballast, 1 << 20, 7, 1 << 20, stream)  # runs: issued before the capture
        acl.aclmdlRICaptureBegin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        acl.aclrtMemsetAsync(ballast, 1 << 20, 9, 1 << 20, stream)  # recorded
        acl.aclrtMemcpyAsync(host, 1 << 16, ballast, 1 << 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, stream)
        status, model = acl.aclmdlRICaptureGetInfo(stream)
        assert status == acl.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE and model
        extra = [stream, model]
    elif phase in ("update", "execute"):
        seed = Seed(acl, [64, 64], 1.5)
        seed.self_h.write(np.ones(seed.n, np.float32))
        seed.other_h.write(np.ones(seed.n, np.float32))
        if phase == "update":
            scalar = acl.aclCreateScalar(3.0, acl.ACL_FLOAT)
            ws, ex = acl.aclnnAddGetWorkspaceSize(seed.tmp_t, seed.other_t, scalar, seed.out_t)
            acl.aclmdlRICaptureTaskUpdateBegin(seed.update_stream, seed.group)
            acl.aclnnAdd(seed.workspace(ws), ws, ex, seed.update_stream)
            extra = [seed.update_stream, seed.group]
        else:
            acl.aclmdlRIExecuteAsync(seed.model, seed.stream1)

            def wait_for_the_model() -> None:
                acl.aclrtSetDevice(0)  # the current device is per thread
                acl.aclrtSynchronizeStream(seed.stream1)  # never returns: no one records the event

            threading.Thread(target=wait_for_the_model, daemon=True).start()
            extra = [seed.stream1, seed.model]
    elif phase == "join-update":
        update_stream = acl.aclrtCreateStream()
        acl.aclmdlRICaptureTaskUpdateBegin(update_stream, int(rest[1]))
        extra = [update_stream]
    else:
        raise SystemExit(f"unknown phase {phase!r}")
    acl.aclrtGetDevice()  # a waiting call: everything above reached the daemon and ran (or failed: raised here)
    say("READY", context, segment, *extra)
    time.sleep(VICTIM_LIFETIME_S)
    say("NOT KILLED")


def stall(ws_url: str, kind: str, count: int, nbytes: int, progress_path: str) -> None:
    """A raw WebSocket client that never reads a reply. aclInit, aclrtSetDevice and aclrtMalloc(nbytes) have
    their replies read; then, without reading anything more, it sends (all `reply: true`, from one client thread):

    - kind "d2h": `count` synchronous device-to-host copies of `nbytes` (each reply carries `nbytes`);
    - kind "h2d": 16 of those, which clog the reply path, then `count` host-to-device copies carrying `nbytes` of
      data each (each reply is small), which queue up behind them.

    Writes how many calls it has sent to `progress_path` as it goes (sending blocks once the daemon stops reading
    and the socket buffers are full)."""
    import msgpack
    from websockets.sync.client import connect

    thread = [os.getpid(), 1]
    deadline = time.monotonic() + STALL_LIFETIME_S

    def report(sent: int) -> None:
        tmp = progress_path + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(sent))
        os.replace(tmp, progress_path)

    with connect(ws_url, max_size=None, open_timeout=10, compression=None, max_queue=4) as ws:
        hello = msgpack.unpackb(ws.recv(timeout=10))["hello"]

        def call(ident: int, api: str, **args: Any) -> Any:
            ws.send(msgpack.packb({"id": ident, "api": api, "args": args, "thread": thread, "reply": True}))
            reply = msgpack.unpackb(ws.recv(timeout=10))
            assert reply.get("id") == ident and "result" in reply, reply
            return reply["result"]

        call(1, "aclInit", configPath=None)
        call(2, "aclrtSetDevice", deviceId=0)
        ptr = call(3, "aclrtMalloc", size=nbytes, policy=0)["devPtr"]
        say("READY", hello["context"])
        d2h = {"dst": None, "destMax": nbytes, "src": ptr, "count": nbytes, "kind": 2}
        h2d = {"dst": ptr, "destMax": nbytes, "src": bytes(nbytes), "count": nbytes, "kind": 1}
        calls = [d2h] * count if kind == "d2h" else [d2h] * 16 + [h2d] * count

        def flood() -> None:
            for i, args in enumerate(calls):
                envelope = {"id": 100 + i, "api": "aclrtMemcpy", "args": args, "thread": thread, "reply": True}
                ws.send(msgpack.packb(envelope, use_bin_type=True))
                if i % 16 == 0:
                    report(i + 1)
                if time.monotonic() > deadline:
                    return
            report(len(calls))

        sender = threading.Thread(target=flood, daemon=True)
        sender.start()
        sender.join(STALL_LIFETIME_S)
        time.sleep(max(0.0, deadline - time.monotonic()))


def main(argv: list[str]) -> None:
    command, *args = argv
    if command == "victim":
        victim(*args)
    elif command == "stall":
        stall(args[0], args[1], int(args[2]), int(args[3]), args[4])
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
