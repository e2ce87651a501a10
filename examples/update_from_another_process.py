"""Concurrent task update driven by a second process that joins the first one's context, against a vnpu daemon.

    outtmp = self + alpha * other       (captured, alpha = 1.1)
    out    = outtmp + alpha_i * other   (the task group; alpha_i = 1.1, 5.5, 1.1, 5.5: out = 2.2, 6.6, 2.2, 6.6)

The first process captures the seed's model (EXTERNAL event wait before the task group) and executes it. A
second process, started with multiprocessing's 'spawn', joins the same context (VNPU_CONTEXT=<context id> in
its environment, then aclInit and aclrtSetDevice), so it shares the handles: it rewrites the task group on its
own update stream and records the EXTERNAL event that lets the model go on. The two processes take turns through
a pipe. Prints each output and exits non-zero if one differs from a float64 reference.

    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/update_from_another_process.py
"""

# ruff: noqa: F403, F405
# (the C names come from the star import, as from acl/acl.h)

from __future__ import annotations

import multiprocessing
import os
import sys
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from client.acl import *

TIMEOUT_S = 30  # the longest wait for the other process's answer


def ACL_LOG(fmt: str, *args: object) -> None:
    print("[INFO] " + fmt % args, flush=True)


def Strides(shape: list[int]) -> list[int]:
    # 计算连续tensor的stride
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    return strides


def CreateAclTensor(shape: list[int], dataType: int) -> tuple[int, object]:
    """Returns (deviceAddr, tensor): C's two out-parameters."""
    size = int(np.prod(shape)) * 4  # sizeof(float)
    # 申请Device侧内存
    deviceAddr = aclrtMalloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    # 调用aclCreateTensor接口创建aclTensor
    tensor = aclCreateTensor(shape, dataType, Strides(shape), 0, ACL_FORMAT_ND, shape, deviceAddr)
    return deviceAddr, tensor


def receive(conn: Connection, what: str) -> Any:
    if not conn.poll(TIMEOUT_S):
        raise TimeoutError(f"no {what} from the other process within {TIMEOUT_S} s")
    return conn.recv()


# ======== the second process: the updater ========


def updater(conn: Connection, contextId: str, shared: dict[str, Any]) -> None:
    """Joins the first process's context and drives the update stream and the EXTERNAL event record."""
    os.environ["VNPU_CONTEXT"] = contextId  # join that context instead of creating one
    devID = 0
    # 初始化
    aclInit(None)
    # 指定计算设备
    aclrtSetDevice(devID)
    shape = shared["shape"]
    # 在同一个Context中，Device内存、Event、任务组handle可直接使用；aclTensor是Host侧对象，需在本进程中创建
    outtmp = aclCreateTensor(shape, ACL_FLOAT, Strides(shape), 0, ACL_FORMAT_ND, shape, shared["outtmp_d"])
    other = aclCreateTensor(shape, ACL_FLOAT, Strides(shape), 0, ACL_FORMAT_ND, shape, shared["other_d"])
    out = aclCreateTensor(shape, ACL_FLOAT, Strides(shape), 0, ACL_FORMAT_ND, shape, shared["out_d"])
    event, handle = shared["event"], shared["handle"]
    updateStream = aclrtCreateStream()
    conn.send(("ready", current().context_id))
    scalars, workspaces = [], []
    try:
        while True:
            message = conn.recv()
            if message[0] == "stop":
                break
            value = message[1]
            updatealpha = aclCreateScalar(value, ACL_FLOAT)
            workspaceSize2, executor2 = aclnnAddGetWorkspaceSize(outtmp, other, updatealpha, out)
            workspaceAddr2 = aclrtMalloc(workspaceSize2, ACL_MEM_MALLOC_HUGE_FIRST) if workspaceSize2 > 0 else None
            scalars.append(updatealpha)
            workspaces.append(workspaceAddr2)
            # 开始更新任务，将aclnnAdd算子的alpha参数更新为alpha_i
            aclmdlRICaptureTaskUpdateBegin(updateStream, handle)
            aclnnAdd(workspaceAddr2, workspaceSize2, executor2, updateStream)
            aclmdlRICaptureTaskUpdateEnd(updateStream)
            ACL_LOG("[pid %d] update alpha value of aclnnAdd to %.1f", os.getpid(), value)
            # 更新任务之后，在updateStream上，下发Event Record任务，用于通知主流stream1继续执行Event Wait之后的任务
            aclrtRecordEvent(event, updateStream)
            aclrtSynchronizeStream(updateStream)
            conn.send(("updated", value))
    except AclError as error:
        conn.send(("error", str(error)))
    # 释放资源
    aclrtDestroyStream(updateStream)
    for tensor in (outtmp, other, out):
        aclDestroyTensor(tensor)
    for scalar in scalars:
        aclDestroyScalar(scalar)
    for addr in workspaces:
        if addr is not None:
            aclrtFree(addr)
    aclrtResetDevice(devID)
    aclFinalize()
    conn.send(("stopped", os.getpid()))
    conn.close()


# ======== the first process: capture and execute ========


def main() -> int:
    devID = 0
    shape = [4, 2]
    size = 8
    alphaValue = 1.1
    stepValues = [1.1, 5.5, 1.1, 5.5]  # alpha of the task group, one per execution

    # 初始化
    aclInit(None)
    # 指定计算设备
    aclrtSetDevice(devID)
    # 准备aclnnAdd算子的输入、输出参数
    self_d, self = CreateAclTensor(shape, ACL_FLOAT)
    other_d, other = CreateAclTensor(shape, ACL_FLOAT)
    out_d, out = CreateAclTensor(shape, ACL_FLOAT)
    outtmp_d, outtmp = CreateAclTensor(shape, ACL_FLOAT)
    alpha = aclCreateScalar(alphaValue, ACL_FLOAT)
    # outtmp = self + alpha * other
    workspaceSize, executor = aclnnAddGetWorkspaceSize(self, other, alpha, outtmp)
    workspaceAddr = aclrtMalloc(workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST) if workspaceSize > 0 else None
    # 更新前：out = outtmp + alpha * other
    workspaceSize1, executor1 = aclnnAddGetWorkspaceSize(outtmp, other, alpha, out)
    workspaceAddr1 = aclrtMalloc(workspaceSize1, ACL_MEM_MALLOC_HUGE_FIRST) if workspaceSize1 > 0 else None
    # 使用aclrtMallocHost申请锁页内存, filled through HostBuffer.write (works in local and remote mode)
    self_h = aclrtMallocHost(size * 4)
    other_h = aclrtMallocHost(size * 4)
    out_h = aclrtMallocHost(size * 4)
    self_h.write(np.full(size, 0, np.float32))
    other_h.write(np.full(size, 1, np.float32))
    out_h.write(np.full(size, 0, np.float32))

    stream1 = aclrtCreateStream()
    # 创建external类型的event
    event = aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    # ========开始捕获任务========
    aclmdlRICaptureBegin(stream1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    aclrtMemcpyAsync(self_d, size * 4, self_h, size * 4, ACL_MEMCPY_HOST_TO_DEVICE, stream1)
    aclrtMemcpyAsync(other_d, size * 4, other_h, size * 4, ACL_MEMCPY_HOST_TO_DEVICE, stream1)
    aclnnAdd(workspaceAddr, workspaceSize, executor, stream1)
    # 在主流stream1上，下发一个Event Wait任务，等待更新任务完成
    aclrtStreamWaitEvent(stream1, event)
    aclrtResetEvent(event, stream1)
    # 标记要更新的任务
    aclmdlRICaptureTaskGrpBegin(stream1)
    aclnnAdd(workspaceAddr1, workspaceSize1, executor1, stream1)
    handle = aclmdlRICaptureTaskGrpEnd(stream1)
    aclrtMemcpyAsync(out_h, size * 4, out_d, size * 4, ACL_MEMCPY_DEVICE_TO_HOST, stream1)
    # ========结束捕获任务========
    modelRI = aclmdlRICaptureEnd(stream1)

    # 启动第二个进程，加入本进程的Context
    contextId = current().context_id
    ACL_LOG("[pid %d] context id: %s", os.getpid(), contextId)
    shared = {"shape": shape, "outtmp_d": outtmp_d, "other_d": other_d, "out_d": out_d}
    shared |= {"event": event, "handle": handle}
    spawn = multiprocessing.get_context("spawn")
    conn, child_conn = spawn.Pipe()
    proc = spawn.Process(target=updater, args=(child_conn, contextId, shared), name="vnpu-updater")
    proc.start()
    child_conn.close()

    failures = 0
    a = float(np.float32(alphaValue))
    try:
        kind, joined = receive(conn, "ready message")
        ACL_LOG("[pid %d] updater pid %d joined context %s", os.getpid(), proc.pid, joined)
        if joined != contextId:
            raise RuntimeError(f"the updater joined context {joined}, not {contextId}")
        for i, value in enumerate(stepValues):
            ACL_LOG("[pid %d] execute model, loop: %d", os.getpid(), i)
            aclmdlRIExecuteAsync(modelRI, stream1)
            # the model runs up to its Event Wait; the other process updates the group and records the event
            conn.send(("update", value))
            kind, detail = receive(conn, "update")
            if kind != "updated":
                raise RuntimeError(f"the updater failed: {detail}")
            aclrtSynchronizeStreamWithTimeout(stream1, TIMEOUT_S * 1000)
            out_v = np.frombuffer(out_h.read(), np.float32)
            ACL_LOG("[pid %d] %s", os.getpid(), " ".join(f"{x:f}" for x in out_v))
            expected = np.zeros(size) + a * np.ones(size) + float(np.float32(value)) * np.ones(size)
            if np.allclose(out_v, expected, rtol=1e-6, atol=0):
                ACL_LOG("[pid %d] loop %d matches float64", os.getpid(), i)
            else:
                print(f"[ERROR] loop {i}: out = {out_v.tolist()}, expected {expected.tolist()}", file=sys.stderr)
                failures += 1
        conn.send(("stop",))
        kind, pid = receive(conn, "stop acknowledgement")
        ACL_LOG("[pid %d] updater pid %d %s", os.getpid(), pid, kind)
    finally:
        # 停止第二个进程
        proc.join(TIMEOUT_S)
        if proc.exitcode is None:
            print("[ERROR] the updater did not stop; terminating it", file=sys.stderr)
            proc.terminate()
            proc.join(5)
            failures += 1
        elif proc.exitcode != 0:
            print(f"[ERROR] the updater exited with {proc.exitcode}", file=sys.stderr)
            failures += 1
        conn.close()

    # 释放资源
    aclmdlRIDestroy(modelRI)
    for tensor in (self, other, out, outtmp):
        aclDestroyTensor(tensor)
    aclDestroyScalar(alpha)
    for addr in (self_d, other_d, out_d, outtmp_d):
        aclrtFree(addr)
    aclrtFreeHost(self_h)
    aclrtFreeHost(other_h)
    aclrtFreeHost(out_h)
    aclrtDestroyStream(stream1)
    aclrtDestroyEvent(event)
    for addr in (workspaceAddr, workspaceAddr1):
        if addr is not None:
            aclrtFree(addr)
    # 释放计算设备的资源
    aclrtResetDevice(devID)
    # 去初始化
    aclFinalize()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
