"""Cross-stream capture: a fork/join over three streams, captured once and replayed, against a vnpu daemon.

    stream1:  copy a, b to the device;  record forkEvent
    stream2:  wait forkEvent;  x = a + 1.5 * b   (aclnnAdd);  record joinEvent2
    stream3:  wait forkEvent;  y = a * b         (aclnnMul);  record joinEvent3
    stream1:  wait joinEvent2, joinEvent3;  z = x + 2.0 * y  (aclnnAdd);  copy z to the host

The events are new-mode events, aclrtCreateEventExWithFlag(ACL_EVENT_SYNC): the only kind that pulls another
stream into a capture. The model is replayed with new inputs each time, and the same work also runs eagerly
on the same inputs: every replay must equal the eager result and match a float64 reference; the script exits
non-zero otherwise.

    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/cross_stream_capture.py
"""

# ruff: noqa: F403, F405
# (the C names come from the star import, as from acl/acl.h)

from __future__ import annotations

import sys

import numpy as np

from client.acl import *


def ACL_LOG(fmt: str, *args: object) -> None:
    print("[INFO] " + fmt % args, flush=True)


def CreateAclTensor(shape: list[int], dataType: int) -> tuple[int, object]:
    """Returns (deviceAddr, tensor): C's two out-parameters."""
    size = int(np.prod(shape)) * 4  # sizeof(float)
    # 申请Device侧内存
    deviceAddr = aclrtMalloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    # 计算连续tensor的stride
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    # 调用aclCreateTensor接口创建aclTensor
    tensor = aclCreateTensor(shape, dataType, strides, 0, ACL_FORMAT_ND, shape, deviceAddr)
    return deviceAddr, tensor


def main() -> int:
    devID = 0
    shape = [4, 2]
    size = 8
    replays = 4

    # 初始化
    aclInit(None)
    # 指定计算设备
    aclrtSetDevice(devID)
    a_d, a = CreateAclTensor(shape, ACL_FLOAT)
    b_d, b = CreateAclTensor(shape, ACL_FLOAT)
    x_d, x = CreateAclTensor(shape, ACL_FLOAT)
    y_d, y = CreateAclTensor(shape, ACL_FLOAT)
    z_d, z = CreateAclTensor(shape, ACL_FLOAT)
    alphaX = aclCreateScalar(1.5, ACL_FLOAT)
    alphaZ = aclCreateScalar(2.0, ACL_FLOAT)
    a_h = aclrtMallocHost(size * 4)
    b_h = aclrtMallocHost(size * 4)
    z_h = aclrtMallocHost(size * 4)

    stream1 = aclrtCreateStream()
    stream2 = aclrtCreateStream()
    stream3 = aclrtCreateStream()
    # 跨Stream捕获需使用aclrtCreateEventExWithFlag接口创建的ACL_EVENT_SYNC类型Event
    forkEvent = aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    joinEvent2 = aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    joinEvent3 = aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)
    workspaces: list[int] = []

    def issue() -> None:
        """The fork/join work; each call takes new executors (phase 2 consumes them)."""
        wsX, exX = aclnnAddGetWorkspaceSize(a, b, alphaX, x)  # x = a + 1.5 * b
        wsY, exY = aclnnMulGetWorkspaceSize(a, b, y)  # y = a * b
        wsZ, exZ = aclnnAddGetWorkspaceSize(x, y, alphaZ, z)  # z = x + 2.0 * y
        addrs = [aclrtMalloc(ws, ACL_MEM_MALLOC_HUGE_FIRST) if ws > 0 else None for ws in (wsX, wsY, wsZ)]
        workspaces.extend(addr for addr in addrs if addr is not None)
        aclrtMemcpyAsync(a_d, size * 4, a_h, size * 4, ACL_MEMCPY_HOST_TO_DEVICE, stream1)
        aclrtMemcpyAsync(b_d, size * 4, b_h, size * 4, ACL_MEMCPY_HOST_TO_DEVICE, stream1)
        # fork：stream2、stream3等待stream1上的forkEvent (during a capture this pulls them into the model)
        aclrtRecordEvent(forkEvent, stream1)
        aclrtStreamWaitEvent(stream2, forkEvent)
        aclrtStreamWaitEvent(stream3, forkEvent)
        aclnnAdd(addrs[0], wsX, exX, stream2)
        aclnnMul(addrs[1], wsY, exY, stream3)
        # join：stream2、stream3的最后一个任务是stream1所等待的Event Record
        aclrtRecordEvent(joinEvent2, stream2)
        aclrtRecordEvent(joinEvent3, stream3)
        aclrtStreamWaitEvent(stream1, joinEvent2)
        aclrtStreamWaitEvent(stream1, joinEvent3)
        aclnnAdd(addrs[2], wsZ, exZ, stream1)
        aclrtMemcpyAsync(z_h, size * 4, z_d, size * 4, ACL_MEMCPY_DEVICE_TO_HOST, stream1)

    def reference(a_v: np.ndarray, b_v: np.ndarray) -> np.ndarray:
        a64, b64 = a_v.astype(np.float64), b_v.astype(np.float64)
        return (a64 + 1.5 * b64) + 2.0 * (a64 * b64)

    rng = np.random.default_rng(7)
    failures = 0

    # ========开始捕获任务========
    aclmdlRICaptureBegin(stream1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    issue()
    status, _ = aclmdlRICaptureGetInfo(stream2)
    ACL_LOG("stream2 capture status: %d", status)  # ACTIVE (1): pulled into the capture by forkEvent
    # ========结束捕获任务========
    modelRI = aclmdlRICaptureEnd(stream1)

    for i in range(replays):
        # new inputs each time, written through HostBuffer.write (works in local and remote mode)
        a_v, b_v = rng.random(size, dtype=np.float32), rng.random(size, dtype=np.float32)
        a_h.write(a_v)
        b_h.write(b_v)
        # eager execution of the same work
        z_h.write(np.zeros(size, np.float32))
        issue()
        aclrtSynchronizeStream(stream1)
        eager = np.frombuffer(z_h.read(), np.float32)
        # replay of the captured model
        z_h.write(np.zeros(size, np.float32))
        ACL_LOG("execute model, loop: %d", i)
        aclmdlRIExecuteAsync(modelRI, stream1)
        aclrtSynchronizeStream(stream1)
        z_v = np.frombuffer(z_h.read(), np.float32)
        ACL_LOG("%s", " ".join(f"{v:f}" for v in z_v))
        expected = reference(a_v, b_v)
        if np.array_equal(z_v, eager) and np.allclose(z_v, expected, rtol=1e-6, atol=1e-6):
            ACL_LOG("loop %d equals eager execution and matches float64", i)
        else:
            print(
                f"[ERROR] loop {i}: z = {z_v.tolist()}, eager {eager.tolist()}, expected {expected.tolist()}",
                file=sys.stderr,
            )
            failures += 1

    # 释放资源
    aclmdlRIDestroy(modelRI)
    for tensor in (a, b, x, y, z):
        aclDestroyTensor(tensor)
    aclDestroyScalar(alphaX)
    aclDestroyScalar(alphaZ)
    for addr in (a_d, b_d, x_d, y_d, z_d, *workspaces):
        aclrtFree(addr)
    aclrtFreeHost(a_h)
    aclrtFreeHost(b_h)
    aclrtFreeHost(z_h)
    aclrtDestroyStream(stream1)
    aclrtDestroyStream(stream2)
    aclrtDestroyStream(stream3)
    aclrtDestroyEvent(forkEvent)
    aclrtDestroyEvent(joinEvent2)
    aclrtDestroyEvent(joinEvent3)
    # 释放计算设备的资源
    aclrtResetDevice(devID)
    # 去初始化
    aclFinalize()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
