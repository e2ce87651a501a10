"""Property: a random program of kernels, copies, memsets and cross-stream event edges, captured and then
replayed, leaves device memory exactly as running it eagerly does.

Each of three streams writes only its own vectors; data crosses streams only through an edge, which copies
into a fresh mailbox vector before the record, so the program is race-free and its result is deterministic.
"""

from __future__ import annotations

import asyncio

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proto.constants import (
    ACL_EVENT_SYNC,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
)
from server.npu import Machine, Runtime
from tests.server.npu.devicekit import Vec

STREAMS, OWN, N = 3, 2, 8

op = st.one_of(
    st.tuples(
        st.just("adds"), st.integers(0, 2), st.integers(0, 1), st.integers(0, 1), st.sampled_from([-1.5, 0.5, 2])
    ),
    st.tuples(st.just("muls"), st.integers(0, 2), st.integers(0, 1), st.integers(0, 1), st.sampled_from([-1, 0.5, 3])),
    st.tuples(st.just("copy"), st.integers(0, 2), st.integers(0, 1), st.integers(0, 1)),
    st.tuples(st.just("memset"), st.integers(0, 2), st.integers(0, 1)),
    st.tuples(st.just("edge"), st.integers(0, 2), st.integers(0, 2), st.integers(0, 1), st.integers(0, 1)),
)


class Program:
    def __init__(self, rt: Runtime, ops: list[tuple]) -> None:
        self.rt = rt
        self.ops = ops
        self.streams = [rt.aclrtCreateStream() for _ in range(STREAMS)]
        rng = np.random.default_rng(len(ops))
        self.initial = [rng.standard_normal(N).astype(np.float32) for _ in range(STREAMS * OWN)]
        self.vecs = [Vec(rt, v) for v in self.initial]
        edges = sum(1 for o in ops if o[0] == "edge") + 2 * (STREAMS - 1)
        self.mailboxes = [Vec(rt, np.zeros(N, np.float32)) for _ in range(edges)]
        self.events = [rt.aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) for _ in range(edges)]

    def reset(self) -> None:
        zeros = [np.zeros(N, np.float32)] * len(self.mailboxes)
        for vec, values in zip(self.vecs + self.mailboxes, self.initial + zeros, strict=True):
            self.rt.aclrtMemcpy(vec.ptr, N * 4, values, N * 4, ACL_MEMCPY_HOST_TO_DEVICE)

    def own(self, stream: int, i: int) -> Vec:
        return self.vecs[stream * OWN + i]

    async def issue(self) -> None:
        rt, s = self.rt, self.streams
        edge = iter(range(len(self.events)))
        for k in range(1, STREAMS):
            self._edge(next(edge), 0, k, None, None)
        for o in self.ops:
            kind = o[0]
            if kind == "adds":
                self.own(o[1], o[2]).adds(self.own(o[1], o[3]), o[4], s[o[1]])
            elif kind == "muls":
                self.own(o[1], o[2]).muls(self.own(o[1], o[3]), o[4], s[o[1]])
            elif kind == "copy":
                dst, src = self.own(o[1], o[2]), self.own(o[1], o[3])
                await rt.aclrtMemcpyAsync(dst.ptr, N * 4, src.ptr, N * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s[o[1]])
            elif kind == "memset":
                rt.aclrtMemsetAsync(self.own(o[1], o[2]).ptr, N * 4, 0x3F, N * 4, s[o[1]])
            elif o[1] != o[2]:
                self._edge(next(edge), o[1], o[2], o[3], o[4])
        for k in range(1, STREAMS):
            self._edge(next(edge), k, 0, None, None)

    def _edge(self, i: int, a: int, b: int, src: int | None, dst: int | None) -> None:
        """a -> b: a copies its vector into mailbox i and records; b waits, then folds the mailbox in."""
        rt, s, box = self.rt, self.streams, self.mailboxes[i]
        if src is not None:
            box.muls(self.own(a, src), 1.0, s[a])
        rt.aclrtRecordEvent(self.events[i], s[a])
        rt.aclrtStreamWaitEvent(s[b], self.events[i])
        if dst is not None:
            self.own(b, dst).muls(box, 1.0, s[b])

    def memory(self) -> list[np.ndarray]:
        return [v.read() for v in self.vecs + self.mailboxes]


async def run(ops: list[tuple]) -> None:
    machine = Machine(devices=1, memory_bytes=8 << 20)
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    try:
        prog = Program(rt, ops)
        await prog.issue()
        await rt.aclrtSynchronizeDevice()
        eager = prog.memory()
        prog.reset()
        await rt.aclrtSynchronizeDevice()
        rt.aclmdlRICaptureBegin(prog.streams[0], ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        await prog.issue()
        model = rt.aclmdlRICaptureEnd(prog.streams[0])
        for _ in range(2):
            rt.aclmdlRIExecuteAsync(model, prog.streams[1])
            await rt.aclrtSynchronizeStream(prog.streams[1])
            for got, want in zip(prog.memory(), eager, strict=True):
                np.testing.assert_array_equal(got, want)
            prog.reset()
            await rt.aclrtSynchronizeDevice()
    finally:
        await rt.release_all()
        machine.close()


@settings(max_examples=40, deadline=None)
@given(st.lists(op, max_size=25))
def test_capture_then_replay_equals_eager(ops: list[tuple]) -> None:
    asyncio.run(run(ops))
