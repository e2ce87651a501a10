"""Task update, method 1 of the seed page: split the work at the variable task, against a vnpu daemon.

    model 1 (captured):  copy self, other to the device;  outtmp = self + alpha * other          (alpha = 1.1)
    eager, between:      out = outtmp + alpha_i * other    (a new aclnnAdd every step: alpha_i = 1.1, 5.5, ...)
    model 2 (captured):  res = out * other;  copy res to the host

The work before and after the task that changes is captured (aclmdlRICaptureBegin/End) into two models; the
changing task is launched eagerly between their executions, on the same stream. Prints each result and exits
non-zero if one differs from a float64 reference.

    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/split_models.py
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
    stepValues = [1.1, 5.5, 1.1, 5.5]  # alpha of the eager aclnnAdd, one per step

    # 初始化
    aclInit(None)
    # 指定计算设备
    aclrtSetDevice(devID)
    # 准备算子的输入、输出参数
    self_d, self = CreateAclTensor(shape, ACL_FLOAT)
    other_d, other = CreateAclTensor(shape, ACL_FLOAT)
    outtmp_d, outtmp = CreateAclTensor(shape, ACL_FLOAT)
    out_d, out = CreateAclTensor(shape, ACL_FLOAT)
    res_d, res = CreateAclTensor(shape, ACL_FLOAT)
    alpha = aclCreateScalar(alphaValue, ACL_FLOAT)
    # outtmp = self + alpha * other (model 1)
    workspaceSize, executor = aclnnAddGetWorkspaceSize(self, other, alpha, outtmp)
    workspaceAddr = aclrtMalloc(workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST) if workspaceSize > 0 else None
    # res = out * other (model 2)
    workspaceSize3, executor3 = aclnnMulGetWorkspaceSize(out, other, res)
    workspaceAddr3 = aclrtMalloc(workspaceSize3, ACL_MEM_MALLOC_HUGE_FIRST) if workspaceSize3 > 0 else None

    # 使用aclrtMallocHost申请锁页内存, filled through HostBuffer.write (works in local and remote mode)
    self_v = np.arange(size, dtype=np.float32) * 0.25
    other_v = np.full(size, 2.0, np.float32) - np.arange(size, dtype=np.float32) * 0.125
    self_h = aclrtMallocHost(size * 4)
    other_h = aclrtMallocHost(size * 4)
    res_h = aclrtMallocHost(size * 4)
    self_h.write(self_v)
    other_h.write(other_v)
    res_h.write(np.zeros(size, np.float32))

    stream = aclrtCreateStream()
    # ========捕获模型1：可变任务之前的任务========
    aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    aclrtMemcpyAsync(self_d, size * 4, self_h, size * 4, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    aclrtMemcpyAsync(other_d, size * 4, other_h, size * 4, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    aclnnAdd(workspaceAddr, workspaceSize, executor, stream)
    modelRI1 = aclmdlRICaptureEnd(stream)
    # ========捕获模型2：可变任务之后的任务========
    aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    aclnnMul(workspaceAddr3, workspaceSize3, executor3, stream)
    aclrtMemcpyAsync(res_h, size * 4, res_d, size * 4, ACL_MEMCPY_DEVICE_TO_HOST, stream)
    modelRI2 = aclmdlRICaptureEnd(stream)

    failures = 0
    a = float(np.float32(alphaValue))
    self64, other64 = self_v.astype(np.float64), other_v.astype(np.float64)
    scalars, workspaces = [], []
    for i, value in enumerate(stepValues):
        ACL_LOG("execute model 1, loop: %d", i)
        aclmdlRIExecuteAsync(modelRI1, stream)
        # 可变任务单独下发：out = outtmp + alpha_i * other，每次调用第一段接口获取新的aclOpExecutor
        stepalpha = aclCreateScalar(value, ACL_FLOAT)
        workspaceSize2, executor2 = aclnnAddGetWorkspaceSize(outtmp, other, stepalpha, out)
        workspaceAddr2 = aclrtMalloc(workspaceSize2, ACL_MEM_MALLOC_HUGE_FIRST) if workspaceSize2 > 0 else None
        scalars.append(stepalpha)
        workspaces.append(workspaceAddr2)
        aclnnAdd(workspaceAddr2, workspaceSize2, executor2, stream)
        ACL_LOG("launch aclnnAdd with alpha %.1f", value)
        ACL_LOG("execute model 2, loop: %d", i)
        aclmdlRIExecuteAsync(modelRI2, stream)
        aclrtSynchronizeStream(stream)
        res_v = np.frombuffer(res_h.read(), np.float32)
        ACL_LOG("%s", " ".join(f"{x:f}" for x in res_v))
        expected = (self64 + a * other64 + float(np.float32(value)) * other64) * other64
        if np.allclose(res_v, expected, rtol=1e-6, atol=1e-6):
            ACL_LOG("loop %d matches float64", i)
        else:
            print(f"[ERROR] loop {i}: res = {res_v.tolist()}, expected {expected.tolist()}", file=sys.stderr)
            failures += 1

    # 释放资源
    aclmdlRIDestroy(modelRI1)
    aclmdlRIDestroy(modelRI2)
    for tensor in (self, other, outtmp, out, res):
        aclDestroyTensor(tensor)
    aclDestroyScalar(alpha)
    for scalar in scalars:
        aclDestroyScalar(scalar)
    for addr in (self_d, other_d, outtmp_d, out_d, res_d):
        aclrtFree(addr)
    aclrtFreeHost(self_h)
    aclrtFreeHost(other_h)
    aclrtFreeHost(res_h)
    aclrtDestroyStream(stream)
    for addr in [workspaceAddr, workspaceAddr3, *workspaces]:
        if addr is not None:
            aclrtFree(addr)
    # 释放计算设备的资源
    aclrtResetDevice(devID)
    # 去初始化
    aclFinalize()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
