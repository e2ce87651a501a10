"""Figure 11: the embedded device (VNPU_ENDPOINT=embedded). The seed loop step through the client on the device
embedded in this process, against the same step driven directly through `server.npu` on an event loop here (the
device's own cost: no client, no envelope, no WebSocket layer), and against the step over the bench's daemon; and
both again with this process on one core (`bench.placement`): the program's threads (the caller, the device's
loop, the reader and the batch flusher) take turns on the GIL anyway, and on two cores every hand-off between
them also wakes the other core.

And the start: a fresh program's `aclInit` + `aclrtSetDevice` on the embedded device (the device is imported and
started inside it) against the same calls over the bench's running daemon, each in a new process, alternately;
and the program's whole start, `from client.acl import *` included, both ways."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import numpy as np

from bench.daemon import ROOT, child_env
from bench.launches import SeedLoop
from bench.placement import ONE_CORE
from bench.report import Goal, Row, interleave
from bench.wire import Bench, close_session, open_session
from client.config import EMBEDDED
from client.embedded import EmbeddedDevice
from proto.aclnn import aclCreateScalar, aclCreateTensor, aclnnAddGetWorkspaceSize
from proto.constants import (
    ACL_EVENT_EXTERNAL,
    ACL_FORMAT_ND,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
    aclDataType,
)
from server.npu import Machine, Runtime

F32 = aclDataType.ACL_FLOAT
SIZE = 8 * 4
# a program's start, timed inside a new process: the import of the client, then the first two calls
START = """
import json, time
begin = time.perf_counter()
from client.acl import *
imported = time.perf_counter()
aclInit(None)
aclrtSetDevice(0)
ready = time.perf_counter()
aclrtResetDevice(0)
aclFinalize()
print(json.dumps({"import": imported - begin, "calls": ready - imported}))
"""


class DirectSeed:
    """The seed's model and step of `SeedLoop`, on a `server.npu` Runtime driven in-process."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        ptrs = [rt.aclrtMalloc(SIZE, 0) for _ in range(4)]
        self.self_d, self.other_d, self.out_d, _ = ptrs
        self.self_t, self.other_t, self.out_t, self.tmp_t = (
            aclCreateTensor([4, 2], F32, [2, 1], 0, ACL_FORMAT_ND, [4, 2], p) for p in ptrs
        )
        self.alphas = [aclCreateScalar(v, F32) for v in (1.1, 5.5)]
        self.self_h, self.other_h, self.out_h = (rt.aclrtMallocHost(SIZE) for _ in range(3))
        self.stream, self.update_stream = rt.aclrtCreateStream(), rt.aclrtCreateStream()
        self.event = rt.aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
        self.host(self.self_h)[:] = 0
        self.host(self.other_h)[:] = 1
        self.steps = 0

    def host(self, ptr: int) -> np.ndarray:
        """A pinned buffer as float32, as C host code sees it."""
        buffer = self.rt.ctx.machine.host.find(ptr)
        assert buffer is not None
        return buffer.array[ptr - buffer.ptr :][:SIZE].view(np.float32)

    async def capture(self) -> None:
        rt, s = self.rt, self.stream
        rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        await rt.aclrtMemcpyAsync(self.self_d, SIZE, self.self_h, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, s)
        await rt.aclrtMemcpyAsync(self.other_d, SIZE, self.other_h, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, s)
        self._add(self.self_t, 0, self.tmp_t, s)
        rt.aclrtStreamWaitEvent(s, self.event)
        rt.aclrtResetEvent(self.event, s)
        rt.aclmdlRICaptureTaskGrpBegin(s)
        self._add(self.tmp_t, 0, self.out_t, s)
        self.handle = rt.aclmdlRICaptureTaskGrpEnd(s)
        await rt.aclrtMemcpyAsync(self.out_h, SIZE, self.out_d, SIZE, ACL_MEMCPY_DEVICE_TO_HOST, s)
        self.model = rt.aclmdlRICaptureEnd(s)

    def _add(self, first: object, alpha: int, out: object, stream: int) -> None:
        ws, executor = aclnnAddGetWorkspaceSize(first, self.other_t, self.alphas[alpha], out)
        self.rt.aclnnAdd(0, ws, executor, stream)

    async def step(self) -> None:
        rt = self.rt
        rt.aclmdlRIExecuteAsync(self.model, self.stream)
        rt.aclmdlRICaptureTaskUpdateBegin(self.update_stream, self.handle)
        self._add(self.tmp_t, self.steps % 2, self.out_t, self.update_stream)
        rt.aclmdlRICaptureTaskUpdateEnd(self.update_stream)
        rt.aclrtRecordEvent(self.event, self.update_stream)
        await rt.aclrtSynchronizeStream(self.update_stream)
        await rt.aclrtSynchronizeStream(self.stream)
        self.steps += 1

    def check(self) -> None:
        """As SeedLoop.check: the last step computed outtmp + alpha·other, the host buffers holding 0 and 1."""
        out = self.host(self.out_h)
        alpha = float(np.float32((1.1, 5.5)[(self.steps - 1) % 2]))
        if not np.allclose(out, float(np.float32(1.1)) + alpha, rtol=1e-6):
            raise RuntimeError(f"the directly driven seed loop computed {out.tolist()}")


def figure11(bench: Bench) -> list[Row]:
    steps = bench.pick(300, 20)
    loop = asyncio.new_event_loop()

    async def start() -> DirectSeed:  # streams belong to the loop that runs them
        runtime = Runtime(Machine(1, 64 << 20))
        runtime.aclInit()
        runtime.aclrtSetDevice(0)
        seed = DirectSeed(runtime)
        await seed.capture()
        return seed

    direct = loop.run_until_complete(start())
    embedded = open_session(EMBEDDED)
    bench.use(embedded)
    on_embedded = SeedLoop()
    bench.use()
    over_daemon = SeedLoop()

    def through(session_seed: SeedLoop, session: object) -> float:
        bench.use(session)  # type: ignore[arg-type]
        begin = time.perf_counter()
        for _ in range(steps):
            session_seed.step()
        return (time.perf_counter() - begin) / steps

    async def directly() -> float:
        begin = time.perf_counter()
        for _ in range(steps):
            await direct.step()
        return (time.perf_counter() - begin) / steps

    ours, device, daemon, ours_one, device_one = interleave(
        bench.reps,
        lambda: through(on_embedded, embedded),
        lambda: loop.run_until_complete(directly()),
        lambda: through(over_daemon, bench.session),
        ONE_CORE.around((), lambda: through(on_embedded, embedded)),
        ONE_CORE.around((), lambda: loop.run_until_complete(directly())),
    )
    bench.use(embedded)
    on_embedded.check()
    on_embedded.close()
    bench.use()
    over_daemon.check()
    over_daemon.close()
    direct.check()
    close_session(embedded)
    EmbeddedDevice.get().close()
    loop.run_until_complete(direct.rt.release_all())
    loop.close()
    direct.rt.ctx.machine.close()
    label = "seed loop step on the embedded device (VNPU_ENDPOINT=embedded, through the client)"

    def against_device(where: str, floor_where: str, on_embedded: list[float], on_device: list[float]) -> Row:
        return Row(
            "11",
            label + where,
            "s",
            on_embedded,
            "the same step driven directly through server.npu in-process" + floor_where,
            on_device,
            ratio=[e / d for e, d in zip(on_embedded, on_device, strict=True)],
            ratio_meaning="the device's own cost",
            goal=Goal("<=", 1.5),
            extra={"steps_per_rep": steps},
        )

    return [
        *start_rows(bench),
        against_device("", "", ours, device),
        against_device(", the program on one core", ", on one core", ours_one, device_one),
        Row(
            "11",
            label,
            "s",
            ours,
            "the same step over the daemon (WebSocket, loopback)",
            daemon,
            ratio=[d / e for e, d in zip(ours, daemon, strict=True)],
            ratio_meaning="faster than over the daemon",
        ),
    ]


def start_rows(bench: Bench) -> list[Row]:
    """aclInit + aclrtSetDevice in a new process, embedded and over the running daemon (and with the import)."""

    def start(endpoint: str) -> dict[str, float]:
        env = child_env(VNPU_ENDPOINT=endpoint)
        done = subprocess.run([sys.executable, "-c", START], cwd=ROOT, env=env, capture_output=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"a program's start on {endpoint} failed: {done.stderr.decode()[-2000:]}")
        times: dict[str, float] = json.loads(done.stdout.decode().splitlines()[-1])
        return times

    runs: list[tuple[dict[str, float], dict[str, float]]] = []
    for _ in range(bench.reps):
        runs.append((start(EMBEDDED), start(bench.daemon.endpoint)))
    calls = [e["calls"] for e, _ in runs], [d["calls"] for _, d in runs]
    whole = [e["import"] + e["calls"] for e, _ in runs], [d["import"] + d["calls"] for _, d in runs]

    def row(label: str, floor_label: str, samples: tuple[list[float], list[float]], goal: Goal) -> Row:
        ours, daemon = samples
        return Row(
            "11",
            label,
            "s",
            ours,
            floor_label,
            daemon,
            ratio=[e / d for e, d in zip(ours, daemon, strict=True)],
            ratio_meaning="the daemon's",
            goal=goal,
        )

    return [
        row(
            "aclInit + aclrtSetDevice on the embedded device, in a new process (the device imported and started)",
            "the same two calls over the running daemon",
            calls,
            Goal("<=", 1.0, on="value"),
        ),
        row(
            "a program's start on the embedded device: `from client.acl import *`, aclInit, aclrtSetDevice",
            "the same start over the running daemon",
            whole,
            Goal("<=", 3.0),
        ),
    ]
