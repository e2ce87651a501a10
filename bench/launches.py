"""Figures 1-4: eager launches, replay, replay vs eager, the seed loop and task update vs capture."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from bench.report import Goal, Row, interleave, timed
from bench.wire import AddOperands, Bench, tensor
from client import acl, core


def capture(ops: AddOperands, stream: int, kernels: int, group_at: int | None = None) -> tuple[int, int | None]:
    """A model of `kernels` aclnnAdd launches captured on `stream`; with `group_at`, that kernel alone is a task
    group (the update target). Returns (model, group handle)."""
    acl.aclmdlRICaptureBegin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    handle = None
    for i in range(kernels):
        if i == group_at:
            acl.aclmdlRICaptureTaskGrpBegin(stream)
            ops.launch(stream)
            handle = acl.aclmdlRICaptureTaskGrpEnd(stream)
        else:
            ops.launch(stream)
    model: int = acl.aclmdlRICaptureEnd(stream)
    return model, handle


def figure1(bench: Bench) -> list[Row]:
    """Eager launches (phase 1 + phase 2, pipelined) then one synchronize, vs the echo of as many envelopes."""
    count = bench.pick(20_000, 500)
    bench.use()
    ops = AddOperands(8)
    stream = acl.aclrtCreateStream()
    frame = ops.envelope(stream)

    cpu: dict[str, list[float]] = {"launch_client": [], "launch_daemon": [], "echo_client": [], "echo_daemon": []}

    def accounted(kind: str, run: Callable[[], float]) -> float:
        """Also the CPU time per message of this process and of the daemon (where the time goes)."""
        client, daemon = time.process_time(), bench.daemon.cpu_seconds()
        rate = run()
        cpu[f"{kind}_client"].append((time.process_time() - client) / count)
        cpu[f"{kind}_daemon"].append((bench.daemon.cpu_seconds() - daemon) / count)
        return rate

    def launches(n: int = count) -> float:
        start = time.perf_counter()
        for _ in range(n):
            ops.launch(stream)
        acl.aclrtSynchronizeStream(stream)
        return n / (time.perf_counter() - start)

    def vnpu() -> float:
        return accounted("launch", launches)

    def echo() -> float:
        return accounted("echo", lambda: count / bench.echo.pipelined(frame, count))

    launches(count // 10)  # warm-up rounds a tenth as long
    bench.echo.pipelined(frame, count // 10)
    ours, floor = interleave(bench.reps, vnpu, echo, warmup=False)
    cpu_s = {f"cpu_per_message_s {k}": statistics.median(v) for k, v in cpu.items()}
    placed, unplaced = interleave(bench.reps, launches, lambda: _without_caller_lines(launches))
    acl.aclrtDestroyStream(stream)
    ops.free()
    return [
        Row(
            "1",
            f"eager aclnnAdd launches, {count} × 8 elements + synchronize",
            "/s",
            ours,
            "pipelined echo of the same envelopes",
            floor,
            ratio=[a / b for a, b in zip(ours, floor, strict=True)],
            ratio_meaning="of the echo rate",
            goal=Goal(">=", 0.8, 1.0),
            extra={"count": count, "envelope_bytes": len(frame), **cpu_s},
        ),
        Row(
            "1",
            "the same launches, each remembering its caller's file and line (named by a later error)",
            "/s",
            placed,
            "the same launches without",
            unplaced,
            ratio=[a / b for a, b in zip(placed, unplaced, strict=True)],
            ratio_meaning="of the rate without",
            goal=Goal(">=", 0.95),
        ),
    ]


def _without_caller_lines(launches: Callable[[], float]) -> float:
    """`launches` with the client's caller-line lookup switched off (what a pipelined call cost before)."""
    real = core.caller_line
    core.caller_line = lambda: None
    try:
        return launches()
    finally:
        core.caller_line = real


def _device_seconds(model: int, stream: int, start: int, end: int) -> float:
    """Device time of one replay of `model`, from timed events: a first replay keeps the stream busy while the
    start record, the measured replay and the end record arrive, so no network wait falls between the events."""
    acl.aclmdlRIExecuteAsync(model, stream)
    acl.aclrtRecordEvent(start, stream)
    acl.aclmdlRIExecuteAsync(model, stream)
    acl.aclrtRecordEvent(end, stream)
    acl.aclrtSynchronizeStream(stream)
    return float(acl.aclrtEventElapsedTime(start, end)) / 1000


def figure2(bench: Bench) -> list[Row]:
    """Replay of a 1000-kernel model: device time per task vs np.add(out=) on the same 8-element arrays."""
    kernels = bench.pick(1000, 100)
    bench.use()
    ops = AddOperands(8)
    stream = acl.aclrtCreateStream()
    start, end = acl.aclrtCreateEvent(), acl.aclrtCreateEvent()
    model, _ = capture(ops, stream, kernels)
    a, b, o = np.ones(8, np.float32), np.ones(8, np.float32), np.empty(8, np.float32)
    wall: list[float] = []

    def vnpu() -> float:
        wall.append(timed(lambda: (acl.aclmdlRIExecuteAsync(model, stream), acl.aclrtSynchronizeStream(stream))))
        return _device_seconds(model, stream, start, end) / kernels

    def numpy() -> float:
        begin = time.perf_counter()
        for _ in range(kernels):
            np.add(a, b, out=o)
        return (time.perf_counter() - begin) / kernels

    ours, floor = interleave(bench.reps, vnpu, numpy)
    acl.aclmdlRIDestroy(model)
    for event in (start, end):
        acl.aclrtDestroyEvent(event)
    acl.aclrtDestroyStream(stream)
    ops.free()
    return [
        Row(
            "2",
            f"replay of a {kernels}-kernel model (aclmdlRIExecuteAsync), device time per task",
            "s",
            ours,
            "in-process np.add(out=), 8 elements",
            floor,
            ratio=[a / b for a, b in zip(ours, floor, strict=True)],
            ratio_meaning="of np.add",
            goal=Goal("<=", 10, 5),
            extra={"kernels": kernels, "wall_execute_and_synchronize_s": wall[-bench.reps :]},
        )
    ]


def figure3(bench: Bench) -> list[Row]:
    """The same 100 kernels, eagerly (launch ×100 + synchronize) and as a replay (execute + synchronize)."""
    kernels, inner = 100, bench.pick(10, 2)
    bench.use()
    ops = AddOperands(8)
    stream = acl.aclrtCreateStream()
    model, _ = capture(ops, stream, kernels)

    def eager() -> float:
        begin = time.perf_counter()
        for _ in range(inner):
            for _ in range(kernels):
                ops.launch(stream)
            acl.aclrtSynchronizeStream(stream)
        return (time.perf_counter() - begin) / inner

    def replay() -> float:
        begin = time.perf_counter()
        for _ in range(inner):
            acl.aclmdlRIExecuteAsync(model, stream)
            acl.aclrtSynchronizeStream(stream)
        return (time.perf_counter() - begin) / inner

    ours, alternative = interleave(bench.reps, replay, eager)
    acl.aclmdlRIDestroy(model)
    acl.aclrtDestroyStream(stream)
    ops.free()
    return [
        Row(
            "3",
            f"replay of {kernels} kernels (execute + synchronize) on the same connection",
            "s",
            ours,
            f"eager: {kernels} launches + synchronize",
            alternative,
            ratio=[e / r for r, e in zip(ours, alternative, strict=True)],
            ratio_meaning="faster than eager",
            goal=Goal(">=", 10, 30),
        )
    ]


class SeedLoop:
    """The seed's model (examples/task_update_concurrent.py): H2D copies, an Add, a wait on an EXTERNAL event and
    its reset, a 1-kernel task group, a D2H copy; one step executes it, updates the group on the update stream
    (alternating alpha 1.1 / 5.5), records the event there and synchronizes both streams."""

    def __init__(self) -> None:
        shape, size = [4, 2], 8 * 4
        (self.self_d, self.self_t), (self.other_d, self.other_t), (self.out_d, self.out_t), (self.tmp_d, self.tmp_t) = (
            tensor(shape) for _ in range(4)
        )
        self.alphas = [acl.aclCreateScalar(v, acl.ACL_FLOAT) for v in (1.1, 5.5)]
        self.self_h, self.other_h, self.out_h = (acl.aclrtMallocHost(size) for _ in range(3))
        self.self_h.write(np.zeros(8, np.float32))
        self.other_h.write(np.ones(8, np.float32))
        self.stream, self.update_stream = acl.aclrtCreateStream(), acl.aclrtCreateStream()
        self.event = acl.aclrtCreateEventWithFlag(acl.ACL_EVENT_EXTERNAL)
        s = self.stream
        acl.aclmdlRICaptureBegin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        acl.aclrtMemcpyAsync(self.self_d, size, self.self_h, size, acl.ACL_MEMCPY_HOST_TO_DEVICE, s)
        acl.aclrtMemcpyAsync(self.other_d, size, self.other_h, size, acl.ACL_MEMCPY_HOST_TO_DEVICE, s)
        self._add(self.self_t, self.alphas[0], self.tmp_t, s)
        acl.aclrtStreamWaitEvent(s, self.event)
        acl.aclrtResetEvent(self.event, s)
        acl.aclmdlRICaptureTaskGrpBegin(s)
        self._add(self.tmp_t, self.alphas[0], self.out_t, s)
        self.handle = acl.aclmdlRICaptureTaskGrpEnd(s)
        acl.aclrtMemcpyAsync(self.out_h, size, self.out_d, size, acl.ACL_MEMCPY_DEVICE_TO_HOST, s)
        self.model = acl.aclmdlRICaptureEnd(s)
        self.steps = 0

    def _add(self, first: object, alpha: object, out: object, stream: int) -> None:
        ws_size, executor = acl.aclnnAddGetWorkspaceSize(first, self.other_t, alpha, out)
        acl.aclnnAdd(None, ws_size, executor, stream)

    def step(self) -> None:
        acl.aclmdlRIExecuteAsync(self.model, self.stream)
        acl.aclmdlRICaptureTaskUpdateBegin(self.update_stream, self.handle)
        self._add(self.tmp_t, self.alphas[self.steps % 2], self.out_t, self.update_stream)
        acl.aclmdlRICaptureTaskUpdateEnd(self.update_stream)
        acl.aclrtRecordEvent(self.event, self.update_stream)
        acl.aclrtSynchronizeStream(self.update_stream)
        acl.aclrtSynchronizeStream(self.stream)
        self.steps += 1

    def check(self) -> None:
        """The last step's output is outtmp + alpha·other with the alpha of that step's update."""
        alpha = float(np.float32((1.1, 5.5)[(self.steps - 1) % 2]))
        out = np.frombuffer(self.out_h.read(), np.float32)
        if not np.allclose(out, float(np.float32(1.1)) + alpha, rtol=1e-6):
            raise RuntimeError(f"the seed loop computed {out.tolist()}")

    def close(self) -> None:
        acl.aclmdlRIDestroy(self.model)
        for t in (self.self_t, self.other_t, self.out_t, self.tmp_t):
            acl.aclDestroyTensor(t)
        for a in self.alphas:
            acl.aclDestroyScalar(a)
        for p in (self.self_d, self.other_d, self.out_d, self.tmp_d):
            acl.aclrtFree(p)
        for h in (self.self_h, self.other_h, self.out_h):
            acl.aclrtFreeHost(h)
        acl.aclrtDestroyStream(self.stream)
        acl.aclrtDestroyStream(self.update_stream)
        acl.aclrtDestroyEvent(self.event)


def figure4(bench: Bench) -> list[Row]:
    bench.use()
    steps = bench.pick(300, 20)
    seed = SeedLoop()
    ops = AddOperands(8)
    frame_bytes = ops.envelope(seed.update_stream)  # the echo sends a real aclnnAdd envelope
    rtt_vnpu: list[float] = []

    def loop() -> float:
        begin = time.perf_counter()
        for _ in range(steps):
            seed.step()
        return (time.perf_counter() - begin) / steps

    def echo() -> float:
        rtt_vnpu.append(timed(lambda: [acl.aclrtGetDevice() for _ in range(steps)]) / steps)
        return bench.echo.round_trip(frame_bytes, steps)

    ours, floor = interleave(bench.reps, loop, echo)
    seed.check()
    rows = [
        Row(
            "4",
            "seed loop step (execute + 1-kernel group update + record + synchronize both)",
            "s",
            ours,
            "one WebSocket request/response (echo)",
            floor,
            ratio=[a / b for a, b in zip(ours, floor, strict=True)],
            ratio_meaning="round trips",
            goal=Goal("<=", 2, 1.2),
            extra={"steps_per_rep": steps, "vnpu_call_round_trip_s (aclrtGetDevice)": rtt_vnpu[-bench.reps :]},
        )
    ]
    seed.close()

    # updating one kernel of a 100-kernel model vs capturing the model again
    stream, update_stream = acl.aclrtCreateStream(), acl.aclrtCreateStream()
    model, handle = capture(ops, stream, 100, group_at=50)
    updates, captures = bench.pick(10, 2), bench.pick(3, 1)

    def update() -> float:
        begin = time.perf_counter()
        for _ in range(updates):
            acl.aclmdlRICaptureTaskUpdateBegin(update_stream, handle)
            ops.launch(update_stream)
            acl.aclmdlRICaptureTaskUpdateEnd(update_stream)
            acl.aclrtSynchronizeStream(update_stream)
        return (time.perf_counter() - begin) / updates

    def recapture() -> float:
        total = 0.0
        for _ in range(captures):
            begin = time.perf_counter()
            again, _ = capture(ops, stream, 100, group_at=50)
            total += time.perf_counter() - begin
            acl.aclmdlRIDestroy(again)
        return total / captures

    cheap, dear = interleave(bench.reps, update, recapture)
    acl.aclmdlRIDestroy(model)
    rows.append(
        Row(
            "4",
            "update one kernel of a 100-kernel model (UpdateBegin + launch + UpdateEnd + synchronize)",
            "s",
            cheap,
            "capture the 100-kernel model again",
            dear,
            ratio=[d / c for c, d in zip(cheap, dear, strict=True)],
            ratio_meaning="cheaper",
            goal=Goal(">=", 20, 100),
        )
    )

    # editing one kernel's parameters (aclmdlRITaskSetParams + aclmdlRIUpdate) and replaying, vs capturing again
    model, _ = capture(ops, stream, 100)
    (lane,), _ = acl.aclmdlRIGetStreams(model, True, 1)
    tasks, _ = acl.aclmdlRIGetTasksByStream(lane, True, 100)
    target = tasks[50]
    params = acl.aclmdlRITaskGetParams(target)
    desc = params.kernelTaskParams.desc
    alphas = [acl.aclCreateScalar(value, acl.ACL_FLOAT) for value in (1.0, 2.0)]

    def edit() -> float:
        begin = time.perf_counter()
        for i in range(updates):
            params.kernelTaskParams.desc = type(desc)(desc.op, {**desc.args, "alpha": alphas[i % 2]})
            acl.aclmdlRITaskSetParams(target, params)
            acl.aclmdlRIUpdate(model)
            acl.aclmdlRIExecuteAsync(model, stream)
            acl.aclrtSynchronizeStream(stream)
        return (time.perf_counter() - begin) / updates

    edited, recaptured = interleave(bench.reps, edit, recapture)
    acl.aclmdlRIDestroy(model)
    for alpha in alphas:
        acl.aclDestroyScalar(alpha)
    acl.aclrtDestroyStream(stream)
    acl.aclrtDestroyStream(update_stream)
    ops.free()
    rows.append(
        Row(
            "4",
            "edit one kernel of a 100-kernel model (TaskSetParams + Update + execute + synchronize)",
            "s",
            edited,
            "capture the 100-kernel model again",
            recaptured,
            ratio=[d / c for c, d in zip(edited, recaptured, strict=True)],
            ratio_meaning="cheaper",
            goal=Goal(">=", 20, 100),
        )
    )
    return rows
