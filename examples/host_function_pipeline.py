"""A host-function pipeline: the host makes and checks each batch in stream order, with no synchronize until the end.

    for each batch i, on one stream:
        host function  produce(i):  write batch i into the pinned input buffer
        copy the input to the device;  out = x * x + 0.5 * x  (aclnnMul, aclnnAdd);  copy out to the pinned output
        host function  consume(i):  check the pinned output against float64;  record done[i]
    and on a second stream, subscribed to a report thread of the program (aclrtSubscribeReport):
        wait done[i];  callback progress(i), run by that thread in aclrtProcessReport

Every batch is queued before any runs. A host function holds its stream until it returns, so batch i+1's
input is written only after batch i's copy has read it, and batch i+1's output lands only after batch i was
checked: the two pinned buffers serve every batch with no synchronize in between. A stream runs either host
functions or a report thread's callbacks, never both, hence the second stream (the CANN samples' report-thread
loop). The script exits non-zero if a batch is wrong or a progress callback is missing.

    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/host_function_pipeline.py
"""

# ruff: noqa: F403, F405
# (the C names come from the star import, as from acl/acl.h)

from __future__ import annotations

import sys
import threading

import numpy as np

from client.acl import *

BATCHES, N = 6, 256
NBYTES = N * 4  # float32


def ACL_LOG(fmt: str, *args: object) -> None:
    print("[INFO] " + fmt % args, flush=True)


def tensor(ptr: int) -> object:
    return aclCreateTensor([N], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [N], ptr)


def report_loop(stream: int, subscribed: threading.Event, stop: threading.Event) -> None:
    """The samples' report thread: subscribe to the stream, then run its callbacks until told to stop."""
    aclrtSubscribeReport(threading.get_ident(), stream)
    subscribed.set()
    while not stop.is_set():
        try:
            aclrtProcessReport(100)
        except AclError as error:
            if error.code != ACL_ERROR_RT_REPORT_TIMEOUT:  # nothing due within 100 ms: look again
                raise
    aclrtUnSubscribeReport(threading.get_ident(), stream)


def main() -> int:
    aclInit(None)
    aclrtSetDevice(0)
    in_h, out_h = aclrtMallocHost(NBYTES), aclrtMallocHost(NBYTES)
    x_d, sq_d, out_d = (aclrtMalloc(NBYTES, ACL_MEM_MALLOC_HUGE_FIRST) for _ in range(3))
    x, sq, out = tensor(x_d), tensor(sq_d), tensor(out_d)
    rng = np.random.default_rng(2026)
    batches = [rng.standard_normal(N).astype(np.float32) for _ in range(BATCHES)]
    wrong: list[int] = []
    progress: list[int] = []

    def produce(i: int) -> None:
        in_h.write(batches[i])

    def consume(i: int) -> None:
        got = np.frombuffer(out_h.read(), np.float32)
        v = batches[i].astype(np.float64)
        if np.allclose(got, v * v + 0.5 * v, rtol=1e-5, atol=1e-6):
            ACL_LOG("batch %d matches float64", i)
        else:
            wrong.append(i)
            ACL_LOG("batch %d is WRONG", i)

    pipeline, reported = aclrtCreateStream(), aclrtCreateStream()
    subscribed, stop = threading.Event(), threading.Event()
    reporter = threading.Thread(target=report_loop, args=(reported, subscribed, stop))
    reporter.start()
    subscribed.wait(10)
    done = [aclrtCreateEvent() for _ in range(BATCHES)]
    half = aclCreateScalar(0.5, ACL_FLOAT)
    for i in range(BATCHES):
        mul_ws, mul = aclnnMulGetWorkspaceSize(x, x, sq)  # an executor serves one launch
        add_ws, add = aclnnAddGetWorkspaceSize(sq, x, half, out)
        aclrtLaunchHostFunc(pipeline, produce, i)
        aclrtMemcpyAsync(x_d, NBYTES, in_h, NBYTES, ACL_MEMCPY_HOST_TO_DEVICE, pipeline)
        aclnnMul(0, mul_ws, mul, pipeline)
        aclnnAdd(0, add_ws, add, pipeline)
        aclrtMemcpyAsync(out_h, NBYTES, out_d, NBYTES, ACL_MEMCPY_DEVICE_TO_HOST, pipeline)
        aclrtLaunchHostFunc(pipeline, consume, i)
        aclrtRecordEvent(done[i], pipeline)
        aclrtStreamWaitEvent(reported, done[i])
        aclrtLaunchCallback(progress.append, i, ACL_CALLBACK_BLOCK, reported)
    ACL_LOG("queued %d batches", BATCHES)
    aclrtSynchronizeStream(pipeline)
    aclrtSynchronizeStream(reported)  # the blocking callbacks have returned
    stop.set()
    reporter.join()
    ACL_LOG("the report thread ran the progress callbacks %s", progress)
    for event in done:
        aclrtDestroyEvent(event)
    aclrtFreeHost(in_h)
    aclrtFreeHost(out_h)
    for ptr in (x_d, sq_d, out_d):
        aclrtFree(ptr)
    aclrtDestroyStream(pipeline)
    aclrtDestroyStream(reported)
    aclrtResetDevice(0)
    aclFinalize()
    return 1 if wrong or progress != list(range(BATCHES)) else 0


if __name__ == "__main__":
    sys.exit(main())
