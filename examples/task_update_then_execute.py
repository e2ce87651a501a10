"""Task update, "update first, then execute" (seed page, method 2, first flow), against a vnpu daemon.

    outtmp = self + alpha * other               (captured, fixed: alpha = 1.1)
    out    = outtmp + alpha_i * other           (the task group: rewritten before every execution)

One stream, no event: the update (UpdateBegin, aclnnAdd, UpdateEnd) and the model execution are queued on the
same stream, so stream order puts every update before the execution that follows it. alpha_i alternates
between 5.5, 1.1 and 2.0. Prints each output and exits non-zero if one differs from a float64 reference.

    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/task_update_then_execute.py
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
    alphaValue = 1.1
    updateValues = [5.5, 1.1, 2.0, 5.5, 1.1]  # alpha of the task group, one per execution

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
    self_v = np.arange(size, dtype=np.float32) - 3.0
    other_v = np.linspace(0.5, 2.0, size, dtype=np.float32)
    self_h = aclrtMallocHost(size * 4)
    other_h = aclrtMallocHost(size * 4)
    out_h = aclrtMallocHost(size * 4)
    self_h.write(self_v)
    other_h.write(other_v)
    out_h.write(np.zeros(size, np.float32))

    stream = aclrtCreateStream()
    # ========开始捕获任务========
    aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    aclrtMemcpyAsync(self_d, size * 4, self_h, size * 4, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    aclrtMemcpyAsync(other_d, size * 4, other_h, size * 4, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    aclnnAdd(workspaceAddr, workspaceSize, executor, stream)
    # 标记要更新的任务
    aclmdlRICaptureTaskGrpBegin(stream)
    aclnnAdd(workspaceAddr1, workspaceSize1, executor1, stream)
    handle = aclmdlRICaptureTaskGrpEnd(stream)
    aclrtMemcpyAsync(out_h, size * 4, out_d, size * 4, ACL_MEMCPY_DEVICE_TO_HOST, stream)
    # ========结束捕获任务========
    modelRI = aclmdlRICaptureEnd(stream)

    failures = 0
    a = float(np.float32(alphaValue))
    outtmp_ref = self_v.astype(np.float64) + a * other_v.astype(np.float64)
    scalars, workspaces = [], []
    for i, value in enumerate(updateValues):
        # 每次更新都需调用第一段接口，获取新的aclOpExecutor (an executor is consumed by its launch)
        updatealpha = aclCreateScalar(value, ACL_FLOAT)
        workspaceSize2, executor2 = aclnnAddGetWorkspaceSize(outtmp, other, updatealpha, out)
        workspaceAddr2 = aclrtMalloc(workspaceSize2, ACL_MEM_MALLOC_HUGE_FIRST) if workspaceSize2 > 0 else None
        scalars.append(updatealpha)
        workspaces.append(workspaceAddr2)
        # 先更新任务：与模型执行下发在同一个Stream上，无需Event
        aclmdlRICaptureTaskUpdateBegin(stream, handle)
        aclnnAdd(workspaceAddr2, workspaceSize2, executor2, stream)
        aclmdlRICaptureTaskUpdateEnd(stream)
        ACL_LOG("update alpha value of aclnnAdd to %.1f", value)
        # 再执行模型
        ACL_LOG("execute model, loop: %d", i)
        aclmdlRIExecuteAsync(modelRI, stream)
        aclrtSynchronizeStream(stream)
        out_v = np.frombuffer(out_h.read(), np.float32)
        ACL_LOG("%s", " ".join(f"{x:f}" for x in out_v))
        expected = outtmp_ref + float(np.float32(value)) * other_v.astype(np.float64)
        if np.allclose(out_v, expected, rtol=1e-6, atol=1e-6):
            ACL_LOG("loop %d matches float64", i)
        else:
            print(f"[ERROR] loop {i}: out = {out_v.tolist()}, expected {expected.tolist()}", file=sys.stderr)
            failures += 1

    # 释放资源
    aclmdlRIDestroy(modelRI)
    aclDestroyTensor(self)
    aclDestroyTensor(other)
    aclDestroyTensor(out)
    aclDestroyTensor(outtmp)
    aclDestroyScalar(alpha)
    for scalar in scalars:
        aclDestroyScalar(scalar)
    aclrtFree(self_d)
    aclrtFree(other_d)
    aclrtFree(out_d)
    aclrtFree(outtmp_d)
    aclrtFreeHost(self_h)
    aclrtFreeHost(other_h)
    aclrtFreeHost(out_h)
    aclrtDestroyStream(stream)
    for addr in [workspaceAddr, workspaceAddr1, *workspaces]:
        if addr is not None:
            aclrtFree(addr)
    # 释放计算设备的资源
    aclrtResetDevice(devID)
    # 去初始化
    aclFinalize()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
