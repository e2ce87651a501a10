"""Bad input against a real daemon (`python -m server.cli serve`, a subprocess): the ACL calls through the client
library, the WebSocket envelope decoder, and the REST surface fuzzed by schemathesis from the daemon's own OpenAPI
schema.

- ACL level (table-driven, `CASES`): invalid, destroyed and foreign (another context's) handles of streams,
  events, models and task groups; pointers outside allocations or freed; counts beyond destMax; negative and
  absurd sizes; wrong enum values; tensors whose view leaves its allocation (aclCreateTensor and aclnn phase 2);
  task updates with the wrong count or kind. Each gets its exact ACL code and a message naming the problem; then
  the session works on (a model replay, a task update, copies), and every byte of device and pinned memory that
  the failed call did not own -- random bytes written before it, in this context and in another one -- is
  unchanged. The asynchronous cases run again pipelined (the error raised at the next call that waits).
- WebSocket: truncated frames of valid envelopes, wrong types in every envelope field and in every argument of
  every call, headers declaring 2**31-byte strings/arrays/maps with a short body, deeply nested values, huge ints,
  a frame over the message limit, and a hypothesis fuzz of mutated valid envelopes (the existing one in
  tests/server/api/test_malformed.py throws random msgpack values): each gets an error envelope or a clean close
  of that connection alone, and another connection keeps working.
- REST: every operation of /openapi.json, positive and negative cases (schemathesis, a bounded number of examples):
  never a 5xx, every error body is the JSON error, every 2xx body conforms to the schema.

The bugs these tests found are fixed; their tests stay at the end of the file as regression tests.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import signal
import struct
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import msgpack
import pydantic
import pytest
import requests
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisDeprecationWarning, Unsatisfiable
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

import client.acl as acl
from client.config import Config
from client.session import Session
from proto.calltable import CALLS
from proto.errors import AclError
from tests.load.conftest import Daemon, start_daemon

F32 = acl.ACL_FLOAT
ND = acl.ACL_FORMAT_ND
H2D, D2H, D2D = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST, acl.ACL_MEMCPY_DEVICE_TO_DEVICE
BLOCK = 256  # bytes of every allocation of the world below: 64 float32
MAX_MESSAGE = 4 << 20  # the daemon's REST body and WebSocket message limit here
ERROR_KEYS = {"code", "name", "message", "api"}
RECV_TIMEOUT_S = 10.0


@pytest.fixture(scope="module")
def bad(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon for the module: 2 devices of 256 MiB, 4 MiB messages; it must stop cleanly at the end, with
    every byte of device memory back (nothing the bad input touched leaked)."""
    daemon = start_daemon(
        tmp_path_factory.mktemp("bad-input"),
        device_count="2",
        context_grace="0.05",
        max_body=str(MAX_MESSAGE),
        max_message=str(MAX_MESSAGE),
        shutdown_deadline="5",
    )
    try:
        yield daemon
        daemon.check_alive()
        deadline = time.monotonic() + 10
        while (used := [d["memory"]["used"] for d in httpx.get(f"{daemon.url}/v1/devices").json()]) != [0, 0]:
            assert time.monotonic() < deadline, f"device memory still in use after every context ended: {used}"
            time.sleep(0.05)
    finally:
        status = daemon.stop()
    assert status == 0, daemon.log_tail()


class Api:
    """The device calls of `client.acl` bound to one explicit Session (the module-wide session stays unused)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in CALLS:
            raise AttributeError(name)
        return functools.partial(self.session.call, name)


def tensor(ptr: int, shape: list[int], strides: list[int] | None = None, storage: list[int] | None = None) -> Any:
    if strides is None:  # contiguous
        strides = [1] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            strides[i] = strides[i + 1] * shape[i + 1]
    return acl.aclCreateTensor(shape, F32, strides, 0, ND, storage if storage is not None else shape, ptr)


def add_executor(a: int, b: int, out: int, alpha: float = 1.0) -> tuple[int, Any]:
    one = acl.aclCreateScalar(alpha, F32)
    ws_size, executor = acl.aclnnAddGetWorkspaceSize(tensor(a, [64]), tensor(b, [64]), one, tensor(out, [64]))
    return ws_size, executor


class World:
    """What a bad call can aim at: live, destroyed and foreign handles of every kind, and allocations filled with
    random bytes (this context's and another context's), with a snapshot of all of them."""

    def __init__(self, url: str, blocking: bool) -> None:
        self.session = Session(Config(endpoint=url, launch_blocking=blocking, host_memory="remote"))
        self.other_session = Session(Config(endpoint=url, host_memory="remote"))
        rt = self.rt = Api(self.session)
        rt.aclInit(None)
        rt.aclrtSetDevice(0)
        self.a, self.b, self.c, self.d = (rt.aclrtMalloc(BLOCK, 0) for _ in range(4))
        self.work = rt.aclrtMalloc(4096, 0)  # a workspace big enough for any executor below
        self.pinned = rt.aclrtMallocHost(BLOCK)
        self.s1, self.s2, self.s3, self.us = (rt.aclrtCreateStream() for _ in range(4))
        self.persistent = rt.aclrtCreateStreamWithConfig(0, acl.ACL_STREAM_PERSISTENT)
        self.event = rt.aclrtCreateEvent()
        self.ext = rt.aclrtCreateEventWithFlag(acl.ACL_EVENT_EXTERNAL)
        self.model, self.group = self._capture(rt, self.s1, self.a, self.b, self.c)
        self.dead_stream = rt.aclrtCreateStream()
        rt.aclrtDestroyStream(self.dead_stream)
        self.dead_event = rt.aclrtCreateEvent()
        rt.aclrtDestroyEvent(self.dead_event)
        self.dead_model, self.dead_group = self._capture(rt, self.s2, self.a, self.b, self.c)
        rt.aclmdlRIDestroy(self.dead_model)
        rt.aclrtSetDevice(1)
        self.stream_dev1 = rt.aclrtCreateStream()
        rt.aclrtSetDevice(0)
        # another context (another process, in CANN terms): its handles and memory are not this context's
        o = self.other = Api(self.other_session)
        o.aclInit(None)
        o.aclrtSetDevice(0)
        self.f_ptr = o.aclrtMalloc(4 * BLOCK, 0)
        self.f_stream = o.aclrtCreateStream()
        self.f_event = o.aclrtCreateEventWithFlag(acl.ACL_EVENT_SYNC)
        self.f_model, self.f_group = self._capture(o, self.f_stream, self.f_ptr, self.f_ptr + BLOCK, self.f_ptr + 512)
        self.freed = rt.aclrtMalloc(BLOCK, 0)
        rt.aclrtFree(self.freed)
        for ptr in (self.a, self.b, self.c, self.d, self.work):
            size = 4096 if ptr == self.work else BLOCK
            rt.aclrtMemcpy(ptr, size, os.urandom(size), size, H2D)
        o.aclrtMemcpy(self.f_ptr, 4 * BLOCK, os.urandom(4 * BLOCK), 4 * BLOCK, H2D)
        self.pinned.write(os.urandom(BLOCK))

    @staticmethod
    def _capture(rt: Api, stream: int, a: int, b: int, c: int) -> tuple[int, int]:
        """A model whose one task group adds a + b into c (64 float32)."""
        rt.aclmdlRICaptureBegin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        rt.aclmdlRICaptureTaskGrpBegin(stream)
        rt.aclnnAdd(0, *add_executor(a, b, c), stream)
        group: int = rt.aclmdlRICaptureTaskGrpEnd(stream)
        model: int = rt.aclmdlRICaptureEnd(stream)
        return model, group

    def snapshot(self) -> dict[str, bytes]:
        """Every byte of the world's memory, in both contexts."""
        regions = {"a": self.a, "b": self.b, "c": self.c, "d": self.d}
        out = {}
        for name, ptr in regions.items():
            buf = bytearray(BLOCK)
            self.rt.aclrtMemcpy(buf, BLOCK, ptr, BLOCK, D2H)
            out[name] = bytes(buf)
        work, foreign = bytearray(4096), bytearray(4 * BLOCK)
        self.rt.aclrtMemcpy(work, 4096, self.work, 4096, D2H)
        self.other.aclrtMemcpy(foreign, 4 * BLOCK, self.f_ptr, 4 * BLOCK, D2H)
        return out | {"work": bytes(work), "foreign": bytes(foreign), "pinned": self.pinned.read()}

    def works_on(self) -> None:
        """The session goes on: memory, a model replay, a task update, and the other context too."""
        rt = self.rt
        x, y = list(range(64)), [0.5] * 64
        for ptr, values in ((self.a, x), (self.b, y)):
            rt.aclrtMemcpy(ptr, BLOCK, struct.pack("64f", *values), BLOCK, H2D)
        for alpha in (1.0, 2.0):  # the group as captured (no failed update changed it), then a real update
            if alpha != 1.0:
                rt.aclmdlRICaptureTaskUpdateBegin(self.us, self.group)
                rt.aclnnAdd(0, *add_executor(self.a, self.b, self.c, alpha), self.us)
                rt.aclmdlRICaptureTaskUpdateEnd(self.us)
                rt.aclrtSynchronizeStream(self.us)
            rt.aclmdlRIExecuteAsync(self.model, self.s1)
            rt.aclrtSynchronizeStream(self.s1)
            out = bytearray(BLOCK)
            rt.aclrtMemcpy(out, BLOCK, self.c, BLOCK, D2H)
            assert struct.unpack("64f", out) == tuple(v + alpha * 0.5 for v in x), alpha
        fresh = rt.aclrtMalloc(BLOCK, 0)
        rt.aclrtMemsetAsync(fresh, BLOCK, 0x5A, BLOCK, self.s3)
        rt.aclrtSynchronizeStream(self.s3)
        back = bytearray(BLOCK)
        rt.aclrtMemcpy(back, BLOCK, fresh, BLOCK, D2H)
        assert back == b"\x5a" * BLOCK
        rt.aclrtFree(fresh)
        self.other.aclmdlRIExecuteAsync(self.f_model, self.f_stream)
        self.other.aclrtSynchronizeStream(self.f_stream)

    def close(self) -> None:
        for session in (self.session, self.other_session):
            session.close()


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    api: str  # the C name the error must carry
    code: int
    words: tuple[str, ...]  # each must be in the message
    action: Callable[[World], object]  # ends with the failing call
    cleanup: Callable[[World], object] | None = None  # AclError here is expected and ignored
    pipelined: bool = True  # False: the client raises it at once even when the call is pipelined


def _update_with(*launches: Callable[[World], object]) -> Callable[[World], object]:
    def action(w: World) -> None:
        w.rt.aclmdlRICaptureTaskUpdateBegin(w.us, w.group)
        for launch in launches:
            launch(w)
        w.rt.aclmdlRICaptureTaskUpdateEnd(w.us)

    return action


def _same_add(w: World) -> None:
    w.rt.aclnnAdd(0, *add_executor(w.a, w.b, w.c), w.us)


def _matmul(w: World) -> None:
    ws_size, executor = acl.aclnnMatmulGetWorkspaceSize(
        tensor(w.a, [8, 8]), tensor(w.b, [8, 8]), tensor(w.c, [8, 8]), 0
    )
    w.rt.aclnnMatmul(w.work, ws_size, executor, w.us)


def _end_update(w: World) -> None:
    w.rt.aclmdlRICaptureTaskUpdateEnd(w.us)


def _use_after_free(w: World) -> None:
    """A copy issued while its source is live, freed before the copy runs (the stream waits on an event)."""
    victim = w.rt.aclrtMalloc(BLOCK, 0)
    w.rt.aclrtStreamWaitEvent(w.s2, w.ext)
    w.rt.aclrtMemcpyAsync(w.d, BLOCK, victim, BLOCK, D2D, w.s2)
    w.rt.aclrtFree(victim)
    w.rt.aclrtRecordEvent(w.ext, w.s3)
    w.rt.aclrtSynchronizeStream(w.s2)


def _random(w: World, data_type: int = F32, result: int | None = None, count: Any = None) -> acl.aclrtRandomNumTaskInfo:
    """A uniform fp32 task into w.a, its counter w.c (both in the snapshot), 8 values unless `count` is given."""
    info = acl.aclrtRandomNumTaskInfo(data_type, randomResultAddr=result or w.a, randomCounterAddr=w.c)
    info.randomNumFuncParaInfo.funcType = acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS
    uniform = info.randomNumFuncParaInfo.paramInfo.uniformDisInfo
    uniform.min, uniform.max = (acl.aclrtRandomParaInfo.immediate(struct.pack("<f", v)) for v in (0.0, 1.0))
    info.randomSeed = acl.aclrtRandomParaInfo.immediate(bytes(8))
    info.randomNum = count or acl.aclrtRandomParaInfo.immediate((8).to_bytes(8, "little"))
    return info


def _random_count_in_memory(w: World) -> None:
    """A count read when the task runs: the random bytes of w.work, far past w.a's 256 bytes."""
    w.rt.aclrtRandomNumAsync(_random(w, count=acl.aclrtRandomParaInfo.address(w.work)), w.s3, None)
    w.rt.aclrtSynchronizeStream(w.s3)


def _reuse_executor(w: World) -> None:
    scratch = w.rt.aclrtMalloc(BLOCK, 0)  # the first launch writes here, outside the snapshot
    _, executor = add_executor(w.a, w.b, scratch)
    w.rt.aclnnAdd(0, 0, executor, w.s3)
    w.rt.aclnnAdd(0, 0, executor, w.s3)


R = acl  # codes and constants under their C names
P = R.ACL_ERROR_RT_PARAM_INVALID
H = R.ACL_ERROR_RT_INVALID_HANDLE  # a handle that is not a live one of the context (stale, foreign, made up)
INV = R.ACL_ERROR_INVALID_PARAM
NN = R.ACLNN_ERR_PARAM_INVALID

CASES: list[Case] = [
    # streams
    Case("stream: invalid handle", "aclrtSynchronizeStream", H, ("0xdeadbeef is not a stream of this context",),
         lambda w: w.rt.aclrtSynchronizeStream(0xDEADBEEF)),
    Case("stream: destroyed", "aclrtStreamQuery", H, ("is a stream that was destroyed",),
         lambda w: w.rt.aclrtStreamQuery(w.dead_stream)),
    Case("stream: destroyed twice", "aclrtDestroyStream", H, ("is a stream that was destroyed",),
         lambda w: w.rt.aclrtDestroyStream(w.dead_stream)),
    Case("stream: foreign", "aclrtMemsetAsync", H, ("is not a stream of this context",),
         lambda w: w.rt.aclrtMemsetAsync(w.d, BLOCK, 0, BLOCK, w.f_stream)),
    Case("stream: another device's", "aclrtSynchronizeStream", R.ACL_ERROR_RT_STREAM_CONTEXT,
         ("belongs to device 1", "this thread's device is 0"), lambda w: w.rt.aclrtSynchronizeStream(w.stream_dev1)),
    Case("stream: flag bits", "aclrtCreateStreamWithConfig", INV, ("flag 0x100",),
         lambda w: w.rt.aclrtCreateStreamWithConfig(0, 0x100)),
    Case("stream: timeout 0", "aclrtSynchronizeStreamWithTimeout", INV, ("timeout must be -1 or > 0",),
         lambda w: w.rt.aclrtSynchronizeStreamWithTimeout(w.s1, 0)),
    Case("stream: NULL destroy", "aclrtDestroyStream", INV, ("default stream cannot be destroyed",),
         lambda w: w.rt.aclrtDestroyStream(0)),
    # events
    Case("event: invalid handle", "aclrtRecordEvent", H, ("0x7 is not an event of this context",),
         lambda w: w.rt.aclrtRecordEvent(7, w.s3)),
    Case("event: destroyed", "aclrtQueryEventStatus", H, ("is an event that was destroyed",),
         lambda w: w.rt.aclrtQueryEventStatus(w.dead_event)),
    Case("event: foreign", "aclrtStreamWaitEvent", H, ("is not an event of this context",),
         lambda w: w.rt.aclrtStreamWaitEvent(w.s3, w.f_event)),
    Case("event: foreign sync", "aclrtSynchronizeEvent", H, ("is not an event of this context",),
         lambda w: w.rt.aclrtSynchronizeEvent(w.f_event)),
    Case("event: NULL", "aclrtDestroyEvent", INV, ("event is NULL",), lambda w: w.rt.aclrtDestroyEvent(0)),
    Case("event: flag 0", "aclrtCreateEventWithFlag", P, ("flag 0x0",),
         lambda w: w.rt.aclrtCreateEventWithFlag(0)),
    Case("event: flag 0x80", "aclrtCreateEventWithFlag", P, ("flag 0x80",),
         lambda w: w.rt.aclrtCreateEventWithFlag(0x80)),
    Case("event: EXTERNAL|SYNC", "aclrtCreateEventWithFlag", P, ("EXTERNAL cannot be combined",),
         lambda w: w.rt.aclrtCreateEventWithFlag(acl.ACL_EVENT_EXTERNAL | acl.ACL_EVENT_SYNC)),
    Case("event: Ex EXTERNAL", "aclrtCreateEventExWithFlag", P, ("created with aclrtCreateEventWithFlag",),
         lambda w: w.rt.aclrtCreateEventExWithFlag(acl.ACL_EVENT_EXTERNAL)),
    Case("event: query EXTERNAL", "aclrtQueryEventStatus", R.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ("EXTERNAL",),
         lambda w: w.rt.aclrtQueryEventStatus(w.ext)),
    Case("event: record flag 2", "aclrtRecordEventWithFlag", INV, ("neither ACL_EVENT_RECORD_DEFAULT",),
         lambda w: w.rt.aclrtRecordEventWithFlag(w.event, w.s3, 2)),
    Case("event: elapsed unrecorded", "aclrtEventElapsedTime", R.ACL_ERROR_RT_INTERNAL_ERROR,
         ("never recorded",), lambda w: w.rt.aclrtEventElapsedTime(w.event, w.event)),
    Case("event: negative wait timeout", "aclrtStreamWaitEventWithTimeout", INV, ("timeout must be >= 0",),
         lambda w: w.rt.aclrtStreamWaitEventWithTimeout(w.s3, w.ext, -1)),
    Case("event: wrong device", "aclrtRecordEvent", R.ACL_ERROR_RT_STREAM_CONTEXT, ("belongs to device",),
         lambda w: w.rt.aclrtRecordEvent(w.event, w.stream_dev1)),
    # models and capture
    Case("model: invalid handle", "aclmdlRIExecuteAsync", R.ACL_ERROR_RT_INVALID_HANDLE,
         ("0x1234567 is not a model of this context",),
         lambda w: w.rt.aclmdlRIExecuteAsync(0x1234567, w.s3)),
    Case("model: destroyed", "aclmdlRIExecute", R.ACL_ERROR_RT_INVALID_HANDLE, ("is a model that was destroyed",),
         lambda w: w.rt.aclmdlRIExecute(w.dead_model, -1)),
    Case("model: foreign", "aclmdlRIDebugPrint", R.ACL_ERROR_RT_INVALID_HANDLE, ("is not a model of this context",),
         lambda w: w.rt.aclmdlRIDebugPrint(w.f_model)),
    Case("model: foreign execute", "aclmdlRIExecuteAsync", R.ACL_ERROR_RT_INVALID_HANDLE,
         ("is not a model of this context",),
         lambda w: w.rt.aclmdlRIExecuteAsync(w.f_model, w.s3)),
    Case("model: NULL", "aclmdlRIDestroy", INV, ("modelRI is NULL",), lambda w: w.rt.aclmdlRIDestroy(0)),
    Case("model: execute timeout 0", "aclmdlRIExecute", P, ("timeout must be -1 or > 0",),
         lambda w: w.rt.aclmdlRIExecute(w.model, 0)),
    Case("model: json flags 2", "aclmdlRIDebugJsonPrint", INV, ("flags 2",),
         lambda w: w.session.call("aclmdlRIDebugJsonPrint", w.model, None, 2)),
    Case("capture: mode 3", "aclmdlRICaptureBegin", P, ("mode 3 is not an aclmdlRICaptureMode",),
         lambda w: w.rt.aclmdlRICaptureBegin(w.s3, 3)),
    Case("capture: NULL stream", "aclmdlRICaptureBegin", INV, ("default stream cannot be captured",),
         lambda w: w.rt.aclmdlRICaptureBegin(0, 0)),
    Case("capture: end, not capturing", "aclmdlRICaptureEnd", R.ACL_ERROR_RT_STREAM_NOT_CAPTURED,
         ("is not capturing",), lambda w: w.rt.aclmdlRICaptureEnd(w.s3)),
    Case("capture: exchange mode -1", "aclmdlRICaptureThreadExchangeMode", P, ("mode -1",),
         lambda w: w.rt.aclmdlRICaptureThreadExchangeMode(-1)),
    Case("capture: group end, not capturing", "aclmdlRICaptureTaskGrpEnd", R.ACL_ERROR_RT_STREAM_NOT_CAPTURED,
         ("is not capturing",), lambda w: w.rt.aclmdlRICaptureTaskGrpEnd(w.s3)),
    # task groups and updates
    Case("group: invalid handle", "aclmdlRICaptureTaskUpdateBegin", P, ("0x99999 is not a task group",),
         lambda w: w.rt.aclmdlRICaptureTaskUpdateBegin(w.us, 0x99999)),
    Case("group: destroyed with its model", "aclmdlRICaptureTaskUpdateBegin", P, ("is not a task group",),
         lambda w: w.rt.aclmdlRICaptureTaskUpdateBegin(w.us, w.dead_group)),
    Case("group: foreign", "aclmdlRICaptureTaskUpdateBegin", P, ("is not a task group",),
         lambda w: w.rt.aclmdlRICaptureTaskUpdateBegin(w.us, w.f_group)),
    Case("group: NULL", "aclmdlRICaptureTaskUpdateBegin", INV, ("handle is NULL",),
         lambda w: w.rt.aclmdlRICaptureTaskUpdateBegin(w.us, 0)),
    Case("update: no launch", "aclmdlRICaptureTaskUpdateEnd", R.ACL_ERROR_RT_INTERNAL_ERROR,
         ("unupdated tasks", "got 0"), _update_with()),
    Case("update: one launch too many", "aclnnAdd", R.ACL_ERROR_RT_INTERNAL_ERROR, ("one launch too many",),
         _update_with(_same_add, _same_add), cleanup=_end_update),
    Case("update: cube kernel for a vector one", "aclnnMatmul", R.ACL_ERROR_RT_INTERNAL_ERROR,
         ("vector kernel", "cube kernel", "cannot replace it"), _update_with(_matmul), cleanup=_end_update),
    Case("update: a copy inside", "aclrtMemsetAsync", R.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
         ("only kernel launches",), _update_with(lambda w: w.rt.aclrtMemsetAsync(w.d, BLOCK, 1, BLOCK, w.us)),
         cleanup=_end_update),
    Case("update: end without begin", "aclmdlRICaptureTaskUpdateEnd", R.ACL_ERROR_STREAM_TASK_GROUP_STATUS,
         ("is not in a task update",), _end_update),
    Case("update: begin twice", "aclmdlRICaptureTaskUpdateBegin", R.ACL_ERROR_STREAM_TASK_GROUP_STATUS,
         ("already in a task update",),
         lambda w: [w.rt.aclmdlRICaptureTaskUpdateBegin(w.us, w.group) for _ in range(2)], cleanup=_end_update),
    Case("update: model stream", "aclmdlRICaptureTaskUpdateBegin", R.ACL_ERROR_RT_STREAM_MODEL,
         ("ACL_STREAM_PERSISTENT",), lambda w: w.rt.aclmdlRICaptureTaskUpdateBegin(w.persistent, w.group)),
    # memory: pointers, counts, sizes, kinds
    Case("memcpy: src past the end", "aclrtMemcpy", P, ("src", "run 64 bytes past its end"),
         lambda w: w.rt.aclrtMemcpy(w.d, BLOCK, w.a + 64, BLOCK, D2D)),
    Case("memcpy: dst freed", "aclrtMemcpy", P, ("dst", "which was freed"),
         lambda w: w.rt.aclrtMemcpy(w.freed, BLOCK, w.a, BLOCK, D2D)),
    Case("memcpy: foreign src", "aclrtMemcpy", P, ("not in memory allocated by this context",),
         lambda w: w.rt.aclrtMemcpy(w.d, BLOCK, w.f_ptr, BLOCK, D2D)),
    Case("memcpy: foreign dst", "aclrtMemcpy", P, ("not in memory allocated by this context",),
         lambda w: w.rt.aclrtMemcpy(w.f_ptr, BLOCK, w.a, BLOCK, D2D)),
    Case("memcpy: count > destMax", "aclrtMemcpy", INV, ("count 256 is larger than destMax 255",),
         lambda w: w.rt.aclrtMemcpy(w.d, BLOCK - 1, w.a, BLOCK, D2D)),
    Case("memcpy: kind 99", "aclrtMemcpy", INV, ("kind 99 is not an aclrtMemcpyKind",),
         lambda w: w.rt.aclrtMemcpy(w.d, BLOCK, w.a, BLOCK, 99)),
    Case("memcpy: negative count", "aclrtMemcpy", INV, ("count", "greater than or equal to 0"),
         lambda w: w.rt.aclrtMemcpy(w.d, BLOCK, w.a, -1, D2D)),
    Case("memcpy: pageable dst too small", "aclrtMemcpy", INV, ("count 256 is larger than destMax 16",),
         lambda w: w.rt.aclrtMemcpy(bytearray(16), 16, w.a, BLOCK, D2H)),
    Case("memcpy: pageable src shorter than count", "aclrtMemcpy", INV, ("16-byte host buffer, too small for 256",),
         lambda w: w.rt.aclrtMemcpy(w.d, BLOCK, bytes(16), BLOCK, H2D)),
    Case("host write: past the buffer", "vnpuHostWrite", P, ("past the end",),
         lambda w: w.rt.vnpuHostWrite(w.pinned.ptr + 200, bytes(100))),
    Case("memcpy: host ptr past its buffer", "aclrtMemcpy", P, ("past the end", "aclrtMallocHost buffer"),
         lambda w: w.rt.aclrtMemcpy(w.work, 2 * BLOCK, w.pinned, 2 * BLOCK, H2D)),
    Case("memcpy async: src past the end", "aclrtMemcpyAsync", P, ("src", "past its end"),
         lambda w: w.rt.aclrtMemcpyAsync(w.d, BLOCK, w.b + 1, BLOCK, D2D, w.s3)),
    Case("memcpy async: dst freed", "aclrtMemcpyAsync", P, ("dst", "which was freed"),
         lambda w: w.rt.aclrtMemcpyAsync(w.freed + 8, 8, w.a, 8, D2D, w.s3)),
    Case("memcpy async: count > destMax", "aclrtMemcpyAsync", INV, ("larger than destMax",),
         lambda w: w.rt.aclrtMemcpyAsync(w.d, 8, w.a, 9, D2D, w.s3)),
    Case("memcpy async: pinned src freed between issue and run", "aclrtSynchronizeStream",
         R.ACL_ERROR_RT_DEVICE_MEM_ERROR, ("invalid memory access", "has been freed"), _use_after_free),
    Case("memset: count > maxCount", "aclrtMemset", INV, ("count 257 is larger than maxCount 256",),
         lambda w: w.rt.aclrtMemset(w.d, BLOCK, 7, BLOCK + 1)),
    Case("memset: past the end", "aclrtMemset", P, ("devPtr", "past its end"),
         lambda w: w.rt.aclrtMemset(w.d + 128, BLOCK, 7, BLOCK)),
    Case("memset async: freed", "aclrtMemsetAsync", P, ("devPtr", "which was freed"),
         lambda w: w.rt.aclrtMemsetAsync(w.freed, BLOCK, 7, BLOCK, w.s3)),
    Case("memset async: foreign", "aclrtMemsetAsync", P, ("not in memory allocated by this context",),
         lambda w: w.rt.aclrtMemsetAsync(w.f_ptr, BLOCK, 7, BLOCK, w.s3)),
    Case("free: double", "aclrtFree", P, ("double free",), lambda w: w.rt.aclrtFree(w.freed)),
    Case("free: not a start", "aclrtFree", P, ("not the start of an allocation",),
         lambda w: w.rt.aclrtFree(w.a + 64)),
    Case("free: foreign", "aclrtFree", P, ("not in memory allocated by this context",),
         lambda w: w.rt.aclrtFree(w.f_ptr)),
    Case("free: NULL", "aclrtFree", INV, ("devPtr is NULL",), lambda w: w.rt.aclrtFree(0)),
    Case("free host: a device pointer", "aclrtFreeHost", P, ("not the start of an aclrtMallocHost buffer",),
         lambda w: w.rt.aclrtFreeHost(w.a)),
    Case("malloc: size 0", "aclrtMalloc", INV, ("size must be > 0",), lambda w: w.rt.aclrtMalloc(0, 0)),
    Case("malloc: size -1", "aclrtMalloc", INV, ("size", "greater than or equal to 0"),
         lambda w: w.rt.aclrtMalloc(-1, 0)),
    Case("malloc: 2**63 bytes", "aclrtMalloc", R.ACL_ERROR_RT_MEMORY_ALLOCATION, ("out of memory",),
         lambda w: w.rt.aclrtMalloc(1 << 63, 0)),
    Case("malloc: policy 0x55", "aclrtMalloc", INV, ("policy 85 (0x55) is not an aclrtMemMallocPolicy: use",),
         lambda w: w.rt.aclrtMalloc(64, 0x55)),
    Case("malloc host: size 0", "aclrtMallocHost", INV, ("size must be > 0",),
         lambda w: w.rt.aclrtMallocHost(0)),
    Case("mem info: attr 42", "aclrtGetMemInfo", INV, ("attr 42",), lambda w: w.rt.aclrtGetMemInfo(42)),
    Case("device: 7", "aclrtSetDevice", R.ACL_ERROR_RT_INVALID_DEVICEID, ("device 7 does not exist",),
         lambda w: w.rt.aclrtSetDevice(7)),
    Case("device: -1", "aclrtSetDevice", R.ACL_ERROR_RT_INVALID_DEVICEID, ("device -1",),
         lambda w: w.rt.aclrtSetDevice(-1)),
    Case("host read: past the buffer", "vnpuHostRead", P, ("past the end",),
         lambda w: w.rt.vnpuHostRead(w.pinned.ptr + 8, BLOCK)),
    # built-in tasks
    Case("random: data type ACL_DOUBLE", "aclrtRandomNumAsync", INV, ("taskInfo->dataType ACL_DOUBLE",),
         lambda w: w.rt.aclrtRandomNumAsync(_random(w, acl.ACL_DOUBLE), w.s3, None)),
    Case("random: foreign result", "aclrtRandomNumAsync", P, ("randomResultAddr must be device memory",),
         lambda w: w.rt.aclrtRandomNumAsync(_random(w, result=w.f_ptr), w.s3, None)),
    Case("random: NULL task", "aclrtRandomNumAsync", INV, ("taskInfo is NULL",),
         lambda w: w.rt.aclrtRandomNumAsync(None, w.s3, None)),
    Case("random: count read at run time past the result", "aclrtSynchronizeStream", R.ACL_ERROR_RT_DEVICE_MEM_ERROR,
         ("invalid memory access", "past its end"), _random_count_in_memory),
    # aclnn: host objects (no round trip) and phase 2 against live memory
    Case("tensor: view past its storage", "aclCreateTensor", NN, ("reaches element 64", "hold 64 elements"),
         lambda w: acl.aclCreateTensor([65], F32, [1], 0, ND, [64], w.a)),
    Case("tensor: strides x dims past storage", "aclCreateTensor", NN, ("reaches element 70",),
         lambda w: acl.aclCreateTensor([8, 8], F32, [8, 1], 7, ND, [64], w.a)),
    Case("tensor: negative dim", "aclCreateTensor", NN, ("view_dims[0] is -4",),
         lambda w: acl.aclCreateTensor([-4], F32, [1], 0, ND, [4], w.a)),
    Case("tensor: strides count", "aclCreateTensor", NN, ("strides has 1 entries but view_dims has 2",),
         lambda w: acl.aclCreateTensor([2, 2], F32, [1], 0, ND, [4], w.a)),
    Case("tensor: dtype 999", "aclCreateTensor", NN, ("999 is not an aclDataType",),
         lambda w: acl.aclCreateTensor([4], 999, [1], 0, ND, [4], w.a)),
    Case("tensor: format 12345", "aclCreateTensor", NN, ("12345 is not an aclFormat",),
         lambda w: acl.aclCreateTensor([4], F32, [1], 0, 12345, [4], w.a)),
    Case("tensor: 9 dims", "aclCreateTensor", NN, ("at most 8",),
         lambda w: acl.aclCreateTensor([1] * 9, F32, [1] * 9, 0, ND, [1] * 9, w.a)),
    Case("phase 2: out runs past its allocation", "aclnnAdd", NN, ("out is not inside live memory", "past its end"),
         lambda w: w.rt.aclnnAdd(0, *add_executor(w.a, w.b, w.c + 64), w.s3)),
    Case("phase 2: storage larger than the allocation", "aclnnAdd", NN, ("self is not inside live memory",),
         lambda w: w.rt.aclnnAdd(0, *acl.aclnnAddGetWorkspaceSize(
             tensor(w.a, [128], storage=[256]), tensor(w.b, [1]), acl.aclCreateScalar(1.0, F32),
             tensor(w.d, [128], storage=[128])), w.s3)),
    Case("phase 2: freed input", "aclnnAdd", NN, ("other is not inside live memory", "which was freed"),
         lambda w: w.rt.aclnnAdd(0, *add_executor(w.a, w.freed, w.c), w.s3)),
    Case("phase 2: foreign output", "aclnnAdd", NN, ("out is not inside live memory",),
         lambda w: w.rt.aclnnAdd(0, *add_executor(w.a, w.b, w.f_ptr), w.s3)),
    Case("phase 2: pinned memory as a tensor", "aclnnAdd", NN, ("not device memory",),
         lambda w: w.rt.aclnnAdd(0, *add_executor(w.a, w.b, w.pinned.ptr), w.s3)),
    Case("phase 2: foreign stream", "aclnnAdd", H, ("is not a stream of this context",),
         lambda w: w.rt.aclnnAdd(0, *add_executor(w.a, w.b, w.c), w.f_stream)),
    Case("phase 2: NULL executor", "aclnnAdd", R.ACLNN_ERR_PARAM_NULLPTR, ("executor is NULL",),
         lambda w: w.rt.aclnnAdd(0, 0, None, w.s3)),
    Case("phase 2: another operator's executor", "aclnnMul", NN, ("describes aclnnAdd, not aclnnMul",),
         lambda w: w.rt.aclnnMul(0, 0, add_executor(w.a, w.b, w.c)[1].kernel, w.s3)),
    Case("phase 2: executor reused", "aclnnAdd", NN, ("single-use",), _reuse_executor, pipelined=False),
    Case("phase 2: workspace too small", "aclnnMatmul", NN, ("workspaceSize 16 is smaller",),
         lambda w: w.rt.aclnnMatmul(w.work, 16, acl.aclnnMatmulGetWorkspaceSize(
             tensor(w.a, [8, 8]), tensor(w.b, [8, 8]), tensor(w.c, [8, 8]), 0)[1], w.s3)),
    Case("phase 2: workspace NULL", "aclnnMatmul", NN, ("workspace is NULL",),
         lambda w: w.rt.aclnnMatmul(0, *acl.aclnnMatmulGetWorkspaceSize(
             tensor(w.a, [8, 8]), tensor(w.b, [8, 8]), tensor(w.c, [8, 8]), 0), w.s3)),
    Case("phase 2: workspace freed", "aclnnMatmul", NN, ("workspace is not inside live memory",),
         lambda w: w.rt.aclnnMatmul(w.freed, *acl.aclnnMatmulGetWorkspaceSize(
             tensor(w.a, [8, 8]), tensor(w.b, [8, 8]), tensor(w.c, [8, 8]), 0), w.s3)),
    Case("phase 2: tampered workspace size", "aclnnAdd", NN, ("workspace_size is 512", "need 0 bytes"),
         lambda w: w.rt.aclnnAdd(w.work, 512, dataclasses.replace(
             add_executor(w.a, w.b, w.c)[1].kernel, workspace_size=512), w.s3)),
    Case("phase 1: cubeMathType 9", "aclnnMatmulGetWorkspaceSize", NN, ("cubeMathType 9",),
         lambda w: acl.aclnnMatmulGetWorkspaceSize(tensor(w.a, [8, 8]), tensor(w.b, [8, 8]), tensor(w.c, [8, 8]), 9)),
    Case("phase 1: cast to dtype 999", "aclnnCastGetWorkspaceSize", NN, ("dtype: 999 is not an aclDataType",),
         lambda w: acl.aclnnCastGetWorkspaceSize(tensor(w.a, [64]), 999, tensor(w.c, [64]))),
    Case("phase 1: output with stride 0", "aclnnAddGetWorkspaceSize", NN, ("stride 0",),
         lambda w: acl.aclnnAddGetWorkspaceSize(tensor(w.a, [64]), tensor(w.b, [64]), acl.aclCreateScalar(1.0, F32),
                                                tensor(w.c, [64], strides=[0], storage=[1]))),
]  # fmt: skip

ASYNC_CASES = [c for c in CASES if c.api in CALLS and CALLS[c.api].asynchronous and c.pipelined]


@pytest.fixture
def world(bad: Daemon, request: pytest.FixtureRequest) -> Iterator[World]:
    w = World(bad.url, blocking=getattr(request, "param", True))
    try:
        yield w
    finally:
        w.close()


def run_case(w: World, case: Case) -> AclError:
    before = w.snapshot()
    with pytest.raises(AclError) as info:
        case.action(w)
        w.rt.aclrtGetDevice()  # a call that waits: it raises the error of a pipelined call
    if case.cleanup is not None:
        with contextlib.suppress(AclError):
            case.cleanup(w)
            w.rt.aclrtGetDevice()  # the cleanup's own (pipelined) error, if any, is raised here
    error = info.value
    assert (error.code, error.api) == (case.code, case.api), repr(error)
    for word in case.words:
        assert word in error.message, (word, error.message)
    assert "Traceback" not in error.message and "internal error" not in error.message
    w.rt.aclrtSynchronizeDevice()  # no sticky error left behind on any stream
    after = w.snapshot()
    changed = [name for name in before if before[name] != after[name]]
    assert not changed, f"{case.name}: the failed call changed the memory of {changed}"
    w.works_on()
    return error


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_bad_acl_call_gets_its_code_and_changes_nothing(world: World, case: Case) -> None:
    run_case(world, case)


@pytest.mark.parametrize("world", [False], indirect=True)
@pytest.mark.parametrize("case", ASYNC_CASES, ids=[c.name for c in ASYNC_CASES])
def test_a_bad_pipelined_call_is_raised_at_the_next_wait(world: World, case: Case) -> None:
    error = run_case(world, case)
    assert re.match(rf"{case.api} \(.+\.py:\d+\) #\d+ failed: ", error.message), error.message  # the caller's line


# --- the WebSocket envelope ---------------------------------------------------------------------------------------


def pack(value: object) -> bytes:
    return bytes(msgpack.packb(value, use_bin_type=True))


def unpack(frame: bytes | str) -> Any:
    assert isinstance(frame, bytes), frame
    return msgpack.unpackb(frame, raw=False, strict_map_key=False)


class Raw:
    """One WebSocket connection driven frame by frame."""

    def __init__(self, daemon: Daemon) -> None:
        self._stack = contextlib.ExitStack()  # websockets wants connect() used as a context manager
        url = daemon.url.replace("http", "ws") + "/v1/ws"
        self.ws: ClientConnection = self._stack.enter_context(connect(url, max_size=None, open_timeout=10))
        self.hello = unpack(self.ws.recv(timeout=RECV_TIMEOUT_S))["hello"]
        self.sentinels = iter(range(-(10**12), 0))

    def call(self, api: str, **args: Any) -> dict[str, Any]:
        ident = next(self.sentinels)
        self.ws.send(pack({"id": ident, "api": api, "args": args}))
        replies = self.replies_until(ident)
        assert len(replies) == 1, replies
        reply: dict[str, Any] = replies[0]
        return reply

    def replies_until(self, ident: int, limit: int = 100_000) -> list[dict[str, Any]]:
        """Every envelope up to and including the reply with `ident`."""
        replies = []
        for _ in range(limit):
            reply = unpack(self.ws.recv(timeout=RECV_TIMEOUT_S))
            replies.append(reply)
            if reply.get("id") == ident:
                return replies
        raise AssertionError(f"no reply {ident} among {limit} envelopes")

    def after(self, *frames: bytes | str) -> list[dict[str, Any]]:
        """Send `frames`, then a sentinel call on the same client thread; the envelopes that came before its reply
        (which must be a result: the connection and its thread go on)."""
        for frame in frames:
            self.ws.send(frame)
        ident = next(self.sentinels)
        self.ws.send(pack({"id": ident, "api": "aclrtGetDeviceCount", "args": {}}))
        replies = self.replies_until(ident)
        assert replies[-1] == {"id": ident, "result": {"count": 2}}, replies[-1]
        return replies[:-1]

    def close(self) -> None:
        self._stack.close()


@pytest.fixture
def conns(bad: Daemon) -> Iterator[tuple[Raw, Raw]]:
    """A connection for the bad frames and a bystander, both initialised."""
    target, bystander = Raw(bad), Raw(bad)
    try:
        for conn in (target, bystander):
            assert conn.call("aclInit", configPath=None)["result"] == {}
            assert conn.call("aclrtSetDevice", deviceId=0)["result"] == {}
        yield target, bystander
        assert bystander.after() == []  # never disturbed
    finally:
        target.close()
        bystander.close()


def assert_error(reply: dict[str, Any], ident: int | None, code: int, *words: str) -> None:
    assert set(reply) - {"thread"} == {"id", "error"} and reply["id"] == ident, reply
    assert set(reply["error"]) == ERROR_KEYS and reply["error"]["code"] == code, reply
    for word in words:
        assert word in reply["error"]["message"], (word, reply)


VALID_ENVELOPES: list[dict[str, Any]] = [
    {"id": 11, "api": "aclrtGetDevice", "args": {}},
    {"id": 12, "api": "aclrtMalloc", "args": {"size": 64, "policy": 0}, "thread": [4242, 7], "reply": True},
    {"id": 13, "api": "aclrtMemcpy",
     "args": {"dst": None, "destMax": 16, "src": 0x12C0_0000_0000, "count": 16, "kind": 2}},
    {"id": 14, "api": "vnpuHostWrite", "args": {"hostPtr": 0x7F00_0000_0000, "data": bytes(range(64))}},
    {"id": 15, "api": "aclnnAdd", "reply": False,
     "args": {"workspace": 0, "workspaceSize": 0, "stream": 0,
              "executor": add_executor(0x12C0_0000_0000, 0x12C0_0000_0100, 0x12C0_0000_0200)[1].kernel.to_wire()}},
]  # fmt: skip


def test_every_truncation_of_a_valid_envelope_is_refused_and_the_connection_goes_on(conns: tuple[Raw, Raw]) -> None:
    target, _ = conns
    for envelope in VALID_ENVELOPES:
        frame = pack(envelope)
        cuts = list(range(len(frame))) if len(frame) <= 200 else [*range(0, len(frame), 7), len(frame) - 1]
        frames = [frame[:cut] for cut in cuts] + [frame + b"\xc0", frame + frame]  # and trailing bytes
        replies = target.after(*frames)
        assert len(replies) == len(frames), (envelope["api"], len(replies), len(frames))
        for reply in replies:
            assert_error(reply, None, acl.ACL_ERROR_INVALID_PARAM, "not msgpack")


WRONG_VALUES: list[Any] = [
    None, True, False, 1.5, float("nan"), "7", "", b"7", [7], [], {"k": 7}, {}, msgpack.ExtType(5, b"x"), -1,
    2**64 - 1, -(2**63),
]  # fmt: skip


def _envelope_cases() -> list[tuple[dict[Any, Any], int | None, str]]:
    """(envelope, the id its error must name, words) for a wrong value in each field, as `parse_request` reads it."""
    cases: list[tuple[dict[Any, Any], int | None, str]] = []
    base = {"id": 21, "api": "aclrtGetDevice", "args": {}, "thread": "main", "reply": True}
    for value in WRONG_VALUES:
        if not (isinstance(value, int) and not isinstance(value, bool)):
            cases.append(({**base, "id": value}, None, "id must be an integer"))
        if not isinstance(value, str):
            cases.append(({**base, "api": value}, 21, "api must be a string"))
        if not isinstance(value, dict):
            cases.append(({**base, "args": value}, 21, "args must be a map"))
        if not isinstance(value, str | int) and not (
            isinstance(value, list) and all(isinstance(v, int) for v in value)
        ):
            cases.append(({**base, "thread": value}, 21, "thread must be"))
        if not isinstance(value, bool):
            cases.append(({**base, "reply": value}, 21, "reply must be a boolean"))
    cases.append(({**base, "extra": 1}, 21, "unknown envelope field(s): extra"))
    cases.append(({k: v for k, v in base.items() if k != "id"}, None, "id must be an integer"))
    return cases


def test_a_wrong_type_in_any_envelope_field_is_refused_naming_the_id(conns: tuple[Raw, Raw]) -> None:
    target, _ = conns
    cases = _envelope_cases()
    replies = target.after(*(pack(envelope) for envelope, _, _ in cases))
    assert len(replies) == len(cases)
    for (envelope, ident, words), reply in zip(cases, replies, strict=True):
        assert_error(reply, ident, acl.ACL_ERROR_INVALID_PARAM, words)
        assert reply["error"]["api"] == "", (envelope, reply)


@functools.cache
def base_args(api: str) -> dict[str, Any]:
    """Arguments of `api` that its request model accepts: 0, or None, b"", "" or [] where 0 is not of the type."""
    model, args = CALLS[api].request, dict.fromkeys(CALLS[api].arg_names, 0)
    for name in args:
        for candidate in (0, None, b"", "", [], False, {}):
            args[name] = candidate
            try:
                model.model_validate(args)
            except pydantic.ValidationError as error:
                if any(e["loc"][0] == name for e in error.errors()):
                    continue
            break
    model.model_validate(args)
    return args


def args_with(api: str, name: str, value: Any) -> dict[str, Any]:
    return {**base_args(api), name: value}


def refused(api: str, name: str, value: Any) -> bool:
    try:
        CALLS[api].request.model_validate(args_with(api, name, value))
    except pydantic.ValidationError:
        return True
    return False


def _argument_cases() -> list[tuple[str, str, Any]]:
    """(api, argument, value): every argument of every call with each wrong value its request model refuses."""
    return [
        (api, name, value)
        for api, call in CALLS.items()
        for name in call.arg_names
        for value in WRONG_VALUES
        if not (name == "executor" and isinstance(value, dict))  # a map is an executor's type: see EXECUTOR_CASES
        and refused(api, name, value)
    ]


def test_a_wrong_type_in_any_argument_of_any_call_is_refused_naming_it(conns: tuple[Raw, Raw]) -> None:
    target, _ = conns
    cases = _argument_cases()
    assert len(cases) > 1000
    for start in range(0, len(cases), 500):  # a batch at a time: one thread's queue holds max_pending calls
        batch = cases[start : start + 500]
        frames = [pack({"id": start + i, "api": api, "args": args_with(api, name, value)})
                  for i, (api, name, value) in enumerate(batch)]  # fmt: skip
        replies = target.after(*frames)
        assert len(replies) == len(batch)
        for i, ((api, name, value), reply) in enumerate(zip(batch, replies, strict=True)):
            assert_error(reply, start + i, acl.ACL_ERROR_INVALID_PARAM)
            assert reply["error"]["api"] == api and reply["error"]["message"].startswith(name), (value, reply)


def _executor(**changes: Any) -> dict[str, Any]:
    wire = add_executor(0x12C0_0000_0000, 0x12C0_0000_0100, 0x12C0_0000_0200)[1].kernel.to_wire()
    for path, value in changes.items():
        node = wire
        *parents, leaf = path.split("__")
        for key in parents:
            node = node[key]
        node[leaf] = value
    return wire


HUGE = [2**64 - 1, 2**63, -(2**63), 2**31, -(2**31) - 1]
EXECUTOR_CASES: list[tuple[dict[str, Any] | Any, int, str]] = [
    ({"op": "Add"}, NN, "missing field 'args'"),
    ({"op": "NoSuchOp", "args": {}, "workspace_size": 0}, NN, "unknown operator 'NoSuchOp'"),
    ({"op": 5, "args": {}, "workspace_size": 0}, NN, "unknown operator 5"),
    (_executor(workspace_size=-1), NN, "workspace_size must be an int >= 0"),
    (_executor(workspace_size=2**64 - 1), NN, "workspace_size must be an int >= 0"),
    (_executor(args__self__view_dims=[2**64 - 1]), NN, "view_dims[0] is 18446744073709551615"),
    (_executor(args__self__view_dims=[-(2**63)]), NN, "view_dims[0] is -9223372036854775808"),
    (_executor(args__self__strides=[2**63]), NN, "strides[0] is 9223372036854775808"),
    (_executor(args__self__offset=2**64 - 1), NN, "offset must be an int64 >= 0"),
    (_executor(args__self__data=2**64 - 1), NN, "data must be an int64 >= 0"),
    (_executor(args__self__data=-1), NN, "data must be an int64 >= 0"),
    (_executor(args__self__data_type="ACL_NOPE"), NN, "data_type 'ACL_NOPE' is not an aclDataType"),
    (_executor(args__self__data_type=2**63), NN, "data_type 9223372036854775808 is not an aclDataType"),
    (_executor(args__self__view_dims="64"), NN, "view_dims must be a sequence of ints"),
    (_executor(args__self__view_dims=[1.5]), NN, "view_dims[0] must be an int"),
    (_executor(args__alpha=[1]), NN, "args.alpha: must be an object"),
    (_executor(args__out=None), R.ACLNN_ERR_PARAM_NULLPTR, "out is a null pointer"),
    (_executor(args__self={"view_dims": [1]}), NN, "missing field 'data_type'"),
    (_executor(args__self__view_dims=[2**31] * 8, args__self__strides=[0] * 8, args__self__storage_dims=[1]), NN,
     "does not broadcast"),
    # valid descriptions down to the memory check (this connection allocated nothing there)
    (_executor(args__alpha__value=2**64 - 1), NN, "self is not inside live memory"),
    (_executor(args__alpha__value="-inf"), NN, "self is not inside live memory"),
]  # fmt: skip


def test_huge_ints_and_bad_kernel_descriptions_are_refused_naming_the_field(conns: tuple[Raw, Raw]) -> None:
    """Ints at and past every edge of every int argument (U64, I64, I32), ids at the edges of msgpack's ints, and
    kernel descriptions with huge or wrong values: an error naming the argument, never an internal error."""
    target, _ = conns
    frames, expected = [], []
    for call in CALLS.values():
        for name in call.arg_names:
            for value in HUGE:
                if refused(call.name, name, value):
                    frames.append(
                        pack({"id": len(frames), "api": call.name, "args": args_with(call.name, name, value)})
                    )
                    expected.append((call.name, acl.ACL_ERROR_INVALID_PARAM, name))
    for executor, code, words in EXECUTOR_CASES:
        args = {"workspace": 0, "workspaceSize": 0, "executor": executor, "stream": 0}
        frames.append(pack({"id": len(frames), "api": "aclnnAdd", "args": args}))
        expected.append(("aclnnAdd", code, words))
    replies = target.after(*frames)
    assert len(replies) == len(frames)
    for i, ((api, code, words), reply) in enumerate(zip(expected, replies, strict=True)):
        assert_error(reply, i, code, words)
        assert reply["error"]["api"] == api, reply
    for ident in (2**64 - 1, -(2**63), 0):
        target.ws.send(pack({"id": ident, "api": "aclrtGetDeviceCount"}))
        assert target.replies_until(ident) == [{"id": ident, "result": {"count": 2}}]


def _declared(header: int, length: int, body: bytes) -> bytes:
    return bytes([header]) + struct.pack(">I", length) + body


DECLARED_SIZES: list[tuple[str, bytes]] = [
    (f"{kind} of {length} {what}", _declared(header, length, body))
    for kind, header, body, what in (
        ("bin32", 0xC6, b"ab", "bytes"), ("str32", 0xDB, b"ab", "bytes"), ("ext32", 0xC9, b"\x01ab", "bytes"),
        ("array32", 0xDD, b"\x01\x02", "items"), ("map32", 0xDF, b"\x01\x02", "pairs"),
    )
    for length in (2**31, 2**32 - 1)
]  # fmt: skip


def test_headers_declaring_huge_sizes_are_refused_at_once(conns: tuple[Raw, Raw]) -> None:
    """A msgpack header declaring 2**31 (or 2**32 - 1) bytes, items or pairs with a 2-byte body, alone and as
    the value of every envelope field and argument: refused without reserving what it declares."""
    target, _ = conns
    frames = []
    for _, raw in DECLARED_SIZES:
        frames.append(raw)
        for prefix in (
            b"\x83\xa2id\x1f\xa3api\xabaclrtMalloc\xa4args\x82\xa6policy\x00\xa4size",  # args.size
            b"\x82\xa2id",  # id
            b"\x82\xa2id\x1f\xa3api",  # api
        ):
            frames.append(prefix + raw)
    start = time.monotonic()
    replies = target.after(*frames)
    assert time.monotonic() - start < 5
    assert len(replies) == len(frames)
    for reply in replies:  # a declared array or map beyond the element budget is refused as such
        assert_error(reply, None, acl.ACL_ERROR_INVALID_PARAM)
        message = reply["error"]["message"]
        assert "not msgpack" in message or "map and array entries" in message, reply


def nested(depth: int, leaf: Any = 1, kind: str = "list") -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


def test_nested_values_within_reach_of_the_decoder_are_refused(conns: tuple[Raw, Raw]) -> None:
    """Nesting 100 deep in every field and argument gets an error naming it; nesting past msgpack's own depth
    limit (1024) is 'not msgpack'. (The envelope is answered by the reader, a call by its thread: two batches.)"""
    target, _ = conns
    deep = nested(100)
    envelope_level: list[tuple[bytes, int | None, int, str]] = [
        (pack({"id": deep, "api": "aclInit"}), None, INV, "id must be an integer"),
        (pack({"id": 41, "api": deep}), 41, INV, "api must be a string"),
        (pack({"id": 42, "api": "aclInit", "args": deep}), 42, INV, "args must be a map"),
        (pack({"id": 43, "api": "aclInit", "thread": deep}), 43, INV, "thread must be"),
        (pack({"id": 44, "api": "aclInit", "reply": deep}), 44, INV, "reply must be"),
        (b"\x91" * 5000 + b"\x01", None, INV, "not msgpack"),
        (b"\x81\xa1k" * 5000 + b"\x01", None, INV, "not msgpack"),
    ]
    call_level: list[tuple[bytes, int | None, int, str]] = [
        (pack({"id": 45, "api": "aclrtMalloc", "args": {"size": deep, "policy": 0}}), 45, INV, "size: "),
        (pack({"id": 46, "api": "aclrtMalloc", "args": {"size": nested(100, kind="map"), "policy": 0}}), 46, INV,
         "size: "),
        (pack({"id": 47, "api": "aclnnAdd",
               "args": {"workspace": 0, "workspaceSize": 0, "stream": 0, "executor": nested(900, kind="map")}}),
         47, NN, "malformed kernel description"),
    ]  # fmt: skip
    for cases in (envelope_level, call_level):
        replies = target.after(*(frame for frame, *_ in cases))
        assert len(replies) == len(cases)
        for (_, ident, code, words), reply in zip(cases, replies, strict=True):
            assert_error(reply, ident, code, words)


def test_a_frame_over_the_message_limit_closes_that_connection_alone(bad: Daemon, conns: tuple[Raw, Raw]) -> None:
    target, bystander = conns
    with pytest.raises(ConnectionClosed) as info:  # while sending (the server closes mid-frame) or after
        target.ws.send(pack({"id": 51, "api": "vnpuHostWrite", "args": {"hostPtr": 1, "data": bytes(MAX_MESSAGE)}}))
        target.ws.recv(timeout=RECV_TIMEOUT_S)
    # the daemon closes with 1009 "message too big"; when it does so while the client is still sending, the
    # client's socket may see the reset before the close frame (then no code): either way this connection alone
    assert info.value.rcvd is None or info.value.rcvd.code == 1009, info.value
    assert bystander.after() == []
    fresh = Raw(bad)
    try:
        assert fresh.call("aclrtGetDevice")["error"]["code"] == acl.ACL_ERROR_UNINITIALIZE
    finally:
        fresh.close()


# --- hypothesis: mutations of valid envelopes ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_pair(bad: Daemon) -> Iterator[tuple[Raw, Raw]]:
    target, bystander = Raw(bad), Raw(bad)
    try:
        for conn in (target, bystander):
            conn.call("aclInit", configPath=None)
            conn.call("aclrtSetDevice", deviceId=0)
        yield target, bystander
    finally:
        target.close()
        bystander.close()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    frame = bytearray(pack(draw(st.sampled_from(VALID_ENVELOPES))))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(frame)))
        how = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "header"]))
        if how == "flip" and i < len(frame):
            frame[i] = draw(st.integers(0, 255))
        elif how == "insert":
            frame[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif how == "delete":
            del frame[i : i + draw(st.integers(1, 8))]
        elif how == "truncate":
            del frame[i:]
        else:  # a header of a big container or blob in the middle
            frame[i:i] = bytes([draw(st.sampled_from([0xC6, 0xDB, 0xDD, 0xDF, 0xC9, 0xDC, 0xDE]))]) + bytes(
                draw(st.binary(min_size=2, max_size=4))
            )
    return bytes(frame)


def well_formed(reply: object) -> bool:
    if not isinstance(reply, dict):
        return False
    if set(reply) == {"id", "result"}:
        return isinstance(reply["id"], int) and isinstance(reply["result"], dict)
    return (
        set(reply) - {"thread"} == {"id", "error"}
        and (reply["id"] is None or isinstance(reply["id"], int))
        and isinstance(reply["error"], dict)
        and set(reply["error"]) == ERROR_KEYS
        and reply["error"]["code"] != acl.ACL_ERROR_INTERNAL_ERROR
    )


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(frame=mutated())
def test_mutated_valid_envelopes_get_well_formed_answers(fuzz_pair: tuple[Raw, Raw], frame: bytes) -> None:
    target, bystander = fuzz_pair
    for reply in target.after(frame):  # the sentinel's answer: this connection and its thread go on
        assert well_formed(reply), (frame, reply)
    assert bystander.after() == []


# --- REST: schemathesis against the daemon's own schema -----------------------------------------------------------


@dataclasses.dataclass
class FuzzReport:
    requests: int = 0
    statuses: Counter[int] = dataclasses.field(default_factory=Counter)
    problems: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # kind -> examples

    def add(self, kind: str, example: str) -> None:
        self.problems.setdefault(kind, []).append(example)

    def summary(self, kind: str) -> str:
        found = self.problems.get(kind, [])
        return f"{len(found)} {kind} in {self.requests} requests, e.g.\n" + "\n".join(found[:5])


def _check_error_body(response: requests.Response) -> str | None:
    """What is wrong with an error response's body (None: it is the daemon's JSON error)."""
    try:
        body = response.json()
    except ValueError:
        return "not JSON"
    if not (isinstance(body, dict) and set(body) == {"error"} and isinstance(body["error"], dict)):
        return "not {'error': {...}}"
    error = body["error"]
    keys = set(error) - {"task"}  # a failed task's exception information, when a synchronize reports one
    if keys != ERROR_KEYS or not isinstance(error["code"], int) or "Traceback" in str(error["message"]):
        return f"fields {sorted(error)}"
    return None


CHECKS = (  # schemathesis's checks of a response against the schema
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
)
FAILURES = {  # what they report, by kind
    "ServerError": "5xx",
    "UndefinedStatusCode": "undocumented status",
    "UndefinedContentType": "undocumented content type",
    "MissingContentType": "undocumented content type",
    "MalformedMediaType": "undocumented content type",
    "JsonSchemaError": "body not conforming to the schema",
    "MalformedJson": "body not conforming to the schema",
    "ContentDeserializationError": "body not conforming to the schema",
    "AcceptedNegativeData": "invalid data accepted",
}


@pytest.fixture(scope="module")
def rest_fuzz(bad: Daemon) -> FuzzReport:
    """Every operation of /openapi.json, positive and negative cases, in a REST session of its own (set up with
    aclInit and a device before each operation, so that calls reach the device); the checks of schemathesis and
    the daemon's own error body, collected rather than raised."""
    import schemathesis
    from schemathesis import GenerationMode
    from schemathesis.checks import load_all_checks

    load_all_checks()
    from schemathesis import checks

    schema = schemathesis.openapi.from_url(f"{bad.url}/openapi.json")
    session = requests.Session()
    sid = session.post(f"{bad.url}/v1/sessions", timeout=10).json()["session"]
    session.headers["X-Vnpu-Session"] = sid
    report = FuzzReport()
    used = [getattr(checks, name) for name in CHECKS]
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= len(CALLS)
    for operation in operations:
        has_input = bool(operation.body or operation.path_parameters or operation.query)
        # a valid vnpuTake* waits as long as it is told for a callback (the fuzz launches host functions that
        # nobody takes): its bad input is fuzzed, its good input is the callback tests' (tests/*/test_callbacks*)
        waits = operation.label.rsplit("/", 1)[-1] in ("vnpuTakeReports", "vnpuTakeHostFuncs")
        positive = 0 if waits else 20
        for mode, examples in ((GenerationMode.POSITIVE, positive), (GenerationMode.NEGATIVE, 10 if has_input else 0)):
            if not examples:
                continue
            session.post(f"{bad.url}/v1/call/aclInit", json={"configPath": None}, timeout=10)
            session.post(f"{bad.url}/v1/call/aclrtSetDevice", json={"deviceId": 0}, timeout=10)
            _fuzz(operation, mode, examples, bad.url, session, report, used)
    session.delete(f"{bad.url}/v1/sessions/{sid}", timeout=10)
    return report


def _fuzz(
    operation: Any,
    mode: Any,
    examples: int,
    url: str,
    session: requests.Session,
    report: FuzzReport,
    used: list[Any],
) -> None:
    """`examples` cases of one operation in one generation mode (no shrinking: failures are collected)."""
    label = f"{operation.label} [{mode.value}]"

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        try:
            response = case.call(base_url=url, session=session, timeout=15)
        except requests.RequestException as error:
            report.add("transport error", f"{label}: {error!r:.200}")
            return
        report.requests += 1
        report.statuses[response.status_code] += 1
        example = f"{label} {response.status_code} {response.text[:160]!r}"
        if response.status_code >= 400 and (wrong := _check_error_body(response)):
            report.add("malformed error body", f"{example}: {wrong}")
        try:
            case.validate_response(response, checks=used)
        except BaseExceptionGroup as failures:
            for failure in failures.exceptions:
                report.add(FAILURES.get(type(failure).__name__, type(failure).__name__), example)

    with contextlib.suppress(Unsatisfiable), warnings.catch_warnings():
        # schemathesis's negative strategies of some operations draw from `random`, which hypothesis deprecates
        warnings.simplefilter("ignore", HypothesisDeprecationWarning)
        run()


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_rest_fuzz_gets_no_5xx_and_every_error_is_the_json_error(rest_fuzz: FuzzReport, bad: Daemon) -> None:
    assert rest_fuzz.requests > 1500, rest_fuzz.requests
    assert rest_fuzz.statuses[200] > 100 and rest_fuzz.statuses[400] > 100, rest_fuzz.statuses  # it reached the device
    for kind in ("transport error", "5xx", "malformed error body", "invalid data accepted",
                 "undocumented content type", "body not conforming to the schema"):  # fmt: skip
        assert kind not in rest_fuzz.problems, rest_fuzz.summary(kind)
    bad.check_alive()


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_every_rest_status_is_documented_in_the_schema(rest_fuzz: FuzzReport) -> None:
    assert "undocumented status" not in rest_fuzz.problems, rest_fuzz.summary("undocumented status")


# --- bugs found by these tests, fixed since: they stay as regression tests ---------------------------------


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ({"size": nested(1000), "policy": 0}, "size"),
        ({"size": nested(1000, kind="map"), "policy": 0}, "size"),
        ({"size": 64, "policy": nested(1000)}, "policy"),
    ],
    ids=["list", "map", "policy"],
)
def test_a_deeply_nested_argument_gets_an_error_and_the_thread_goes_on(
    bad: Daemon, args: dict[str, Any], name: str
) -> None:
    conn = Raw(bad)
    try:
        conn.ws.send(pack({"id": 60, "api": "aclInit", "args": {}}))
        assert unpack(conn.ws.recv(timeout=5)) == {"id": 60, "result": {}}
        conn.ws.send(pack({"id": 61, "api": "aclrtMalloc", "args": args}))
        reply = unpack(conn.ws.recv(timeout=2))
        assert_error(reply, 61, acl.ACL_ERROR_INVALID_PARAM, f"{name}: ")
        assert conn.after() == []
    finally:
        conn.close()


@pytest.mark.parametrize("field", ["id", "api", "reply"])
def test_a_deeply_nested_envelope_field_gets_an_error_envelope(bad: Daemon, field: str) -> None:
    conn = Raw(bad)
    try:
        conn.ws.send(pack({"id": 60, "api": "aclInit", "args": {}}))
        assert unpack(conn.ws.recv(timeout=5)) == {"id": 60, "result": {}}
        conn.ws.send(pack({"id": 62, "api": "aclInit", "args": {}} | {field: nested(1000)}))
        reply = unpack(conn.ws.recv(timeout=2))
        assert reply["error"]["code"] == acl.ACL_ERROR_INVALID_PARAM, reply
        assert conn.after() == []
    finally:
        conn.close()


def _total_ram() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no MemTotal")


def test_pinned_memory_beyond_the_machine_is_refused(bad: Daemon) -> None:
    size = max(1 << 40, 16 * _total_ram())
    session = Session(Config(endpoint=bad.url, host_memory="remote"))
    rt = Api(session)
    try:
        rt.aclInit(None)
        try:
            rt.aclrtFreeHost(rt.aclrtMallocHost(size))
            code = acl.ACL_SUCCESS
        except AclError as error:
            code = error.code
        assert code == acl.ACL_ERROR_RT_MEMORY_ALLOCATION, f"aclrtMallocHost({size}) returned {code}"
    finally:
        session.close()


def test_a_view_of_more_elements_than_addressable_is_refused_naming_the_tensor(bad: Daemon) -> None:
    session = Session(Config(endpoint=bad.url, launch_blocking=True))
    rt = Api(session)
    try:
        rt.aclInit(None)
        rt.aclrtSetDevice(0)
        x, out = rt.aclrtMalloc(64, 0), rt.aclrtMalloc(64, 0)
        stream = rt.aclrtCreateStream()
        view = acl.aclCreateTensor([2**62, 4], F32, [0, 0], 0, ND, [1], x)
        scalar = acl.aclCreateTensor([], F32, [], 0, ND, [1], out)
        try:
            ws_size, executor = acl.aclnnReduceSumGetWorkspaceSize(view, acl.aclCreateIntArray([]), False, F32, scalar)
            rt.aclnnReduceSum(0, ws_size, executor, stream)
            rt.aclrtSynchronizeStream(stream)
            error = None
        except AclError as raised:
            error = raised
        assert error is not None and error.code == acl.ACLNN_ERR_PARAM_INVALID and "self" in error.message, error
    finally:
        session.close()


def test_a_broadcast_view_of_many_elements_does_not_stall_the_daemon(tmp_path: Path) -> None:
    daemon = start_daemon(tmp_path, memory="64MiB")
    session = Session(Config(endpoint=daemon.url))
    rt = Api(session)
    try:
        rt.aclInit(None)
        rt.aclrtSetDevice(0)
        x, out = rt.aclrtMalloc(64, 0), rt.aclrtMalloc(64, 0)
        stream = rt.aclrtCreateStream()
        view = acl.aclCreateTensor([2**40], F32, [0], 0, ND, [1], x)
        scalar = acl.aclCreateTensor([], F32, [], 0, ND, [1], out)
        ws_size, executor = acl.aclnnReduceSumGetWorkspaceSize(view, acl.aclCreateIntArray([]), False, F32, scalar)
        rt.aclnnReduceSum(0, ws_size, executor, stream)  # pipelined: the daemon takes it and starts the kernel
        slowest, until = 0.0, time.monotonic() + 3.0
        while time.monotonic() < until:  # another client, for 3 s: it must always get an answer within 1 s
            start = time.monotonic()
            with contextlib.suppress(httpx.TimeoutException):
                httpx.get(f"{daemon.url}/healthz", timeout=1.5)
            slowest = max(slowest, time.monotonic() - start)
            time.sleep(0.1)
        assert slowest < 1.0, f"another client waited {slowest:.1f} s for the kernel"
    finally:
        daemon.stop(signal.SIGKILL, timeout=10)
        session.close()
