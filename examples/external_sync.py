"""Two captured models synchronised across their boundary with ACL_EVENT_RECORD_EXTERNAL / ACL_EVENT_WAIT_EXTERNAL.

    producer (stream a):  mid = x + step          ... aclrtRecordEventWithFlag(event, ACL_EVENT_RECORD_EXTERNAL)
    consumer (stream b):  aclrtStreamWaitEventWithFlag(event, ACL_EVENT_WAIT_EXTERNAL) ... y = mid * 2

The event is an aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) event. The binding happens at launch, on the host: each
execution of the producer gets a fresh record of the event, and each execution of the consumer waits for the
record that was the event's latest when it was launched -- so launching the producer, then the consumer, on two
streams orders them on the device without any synchronisation between the streams in the program.

    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/external_sync.py
"""

# ruff: noqa: F403, F405
# (the C names come from the star import, as from acl/acl.h)

from __future__ import annotations

import sys

import numpy as np

from client.acl import *

N, STEPS = 8, 4


def ACL_LOG(fmt: str, *args: object) -> None:
    print("[INFO] " + fmt % args, flush=True)


def main() -> int:
    aclInit(None)
    aclrtSetDevice(0)
    a, b = aclrtCreateStream(), aclrtCreateStream()
    x_host = np.random.default_rng(29).standard_normal(N).astype(np.float32)
    x, step, mid, y = (aclrtMalloc(4 * N, ACL_MEM_MALLOC_HUGE_FIRST) for _ in range(4))
    aclrtMemcpy(x, 4 * N, x_host, 4 * N, ACL_MEMCPY_HOST_TO_DEVICE)
    xt, st, mt, yt = (aclCreateTensor([N], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [N], p) for p in (x, step, mid, y))
    event = aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    one, two = aclCreateScalar(1.0, ACL_FLOAT), aclCreateScalar(2.0, ACL_FLOAT)

    aclmdlRICaptureBegin(a, ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    ws, ex = aclnnAddGetWorkspaceSize(xt, st, one, mt)
    aclnnAdd(None, ws, ex, a)
    aclrtRecordEventWithFlag(event, a, ACL_EVENT_RECORD_EXTERNAL)
    producer = aclmdlRICaptureEnd(a)

    aclmdlRICaptureBegin(b, ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    aclrtStreamWaitEventWithFlag(b, event, 0, ACL_EVENT_WAIT_EXTERNAL)
    ws, ex = aclnnMulsGetWorkspaceSize(mt, two, yt)
    aclnnMuls(None, ws, ex, b)
    consumer = aclmdlRICaptureEnd(b)

    ok = True
    for i in range(STEPS):
        aclrtMemcpy(step, 4 * N, np.full(N, i, np.float32), 4 * N, ACL_MEMCPY_HOST_TO_DEVICE)
        aclmdlRIExecuteAsync(producer, a)  # its record of the event is this execution's from now on
        aclmdlRIExecuteAsync(consumer, b)  # waits for exactly that record
        aclrtSynchronizeStream(b)
        out = np.empty(N, np.float32)
        aclrtMemcpy(out, out.nbytes, y, out.nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
        matches = bool(np.allclose(out, (x_host.astype(np.float64) + i) * 2, rtol=1e-5, atol=1e-6))
        ACL_LOG("step %d: the consumer saw the producer's result of this step, matches float64: %s", i, matches)
        ok &= matches
    aclrtSynchronizeStream(a)

    for model in (producer, consumer):
        aclmdlRIDestroy(model)
    aclrtDestroyEvent(event)
    for ptr in (x, step, mid, y):
        aclrtFree(ptr)
    for stream in (a, b):
        aclrtDestroyStream(stream)
    aclrtResetDevice(0)
    aclFinalize()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
