"""The seed's C example ("任务更新", concurrent task update), line by line against a vnpu daemon.

    outtmp = self + alpha * other
    out    = outtmp + alpha * other     before the update (alpha = 1.1)
    out    = outtmp + updatealpha * other   after the update (updatealpha = 5.5)

A model captured on stream1 waits on an EXTERNAL event before its task group; the update stream rewrites the
group's aclnnAdd and records the event. Prints what the C program prints (2.2 x 8, then 6.6 x 8) and exits
non-zero if an output differs from a float64 reference.

    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/task_update_concurrent.py
"""

# ruff: noqa: F403, F405
# (the C names come from the star import, as from acl/acl.h)

from __future__ import annotations

import sys

import numpy as np

from client.acl import *


def ACL_LOG(fmt: str, *args: object) -> None:
    print("[INFO] " + fmt % args, flush=True)


def GetShapeSize(shape: list[int]) -> int:
    shape_size = 1
    for i in shape:
        shape_size *= i
    return shape_size


def CreateAclTensor(shape: list[int], dataType: int) -> tuple[int, object]:
    """Returns (deviceAddr, tensor): C's two out-parameters."""
    size = GetShapeSize(shape) * 4  # sizeof(float)
    # 申请Device侧内存
    deviceAddr = aclrtMalloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    # 计算连续tensor的stride
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    # 调用aclCreateTensor接口创建aclTensor
    tensor = aclCreateTensor(shape, dataType, strides, 0, ACL_FORMAT_ND, shape, deviceAddr)
    return deviceAddr, tensor


def ignore_empty_update(error: AclError, loop: int) -> None:
    """The C sample ignores the return value of aclmdlRICaptureTaskUpdateEnd. At loop 0 its update is empty,
    and an empty update of a non-empty task group fails with 507000 ("contains unupdated tasks") on the real
    runtime as on vnpu; the group keeps its task (alpha = 1.1) and the state goes back to NONE. Go on, as the C
    program does; any other error is a real one."""
    if not (loop == 0 and error.code == ACL_ERROR_RT_INTERNAL_ERROR and error.api == "aclmdlRICaptureTaskUpdateEnd"):
        raise error


def main() -> int:
    devID = 0
    # aclnnAdd: self = self + other * alpha
    shape = [4, 2]
    alphaValue = 1.1
    updatealphaValue = 5.5
    size = GetShapeSize(shape)

    # 初始化
    aclInit(None)
    # 指定计算设备
    aclrtSetDevice(devID)
    # 准备aclnnAdd算子的输入、输出参数
    self_d, self = CreateAclTensor(shape, ACL_FLOAT)
    other_d, other = CreateAclTensor(shape, ACL_FLOAT)
    alpha = aclCreateScalar(alphaValue, ACL_FLOAT)
    updatealpha = aclCreateScalar(updatealphaValue, ACL_FLOAT)
    out_d, out = CreateAclTensor(shape, ACL_FLOAT)
    outtmp_d, outtmp = CreateAclTensor(shape, ACL_FLOAT)
    # 调用aclnnAdd算子的第一段接口，获取算子计算所需的workspace大小以及包含了算子计算流程的执行器
    # 后续涉及多次调用aclnnAdd算子，此处需调用多次第一段接口，获取不同的aclOpExecutor
    # outtmp = self + alpha * other
    # 更新前：out = outtmp + alpha * other 更新后：out = outtmp + updatealpha * other
    workspaceSize, executor = aclnnAddGetWorkspaceSize(self, other, alpha, outtmp)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = aclrtMalloc(workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST)
    # 更新前：out = outtmp + alpha * other
    workspaceSize1, executor1 = aclnnAddGetWorkspaceSize(outtmp, other, alpha, out)
    workspaceAddr1 = None
    if workspaceSize1 > 0:
        workspaceAddr1 = aclrtMalloc(workspaceSize1, ACL_MEM_MALLOC_HUGE_FIRST)
    # 更新后：out = outtmp + updatealpha * other
    workspaceSize2, executor2 = aclnnAddGetWorkspaceSize(outtmp, other, updatealpha, out)
    workspaceAddr2 = None
    if workspaceSize2 > 0:
        workspaceAddr2 = aclrtMalloc(workspaceSize2, ACL_MEM_MALLOC_HUGE_FIRST)
    # 使用aclrtMallocHost申请锁页内存
    self_h = aclrtMallocHost(size * 4)
    other_h = aclrtMallocHost(size * 4)
    out_h = aclrtMallocHost(size * 4)
    # for (i = 0; i < 8; i++) { self_h[i] = 0; other_h[i] = 1; out_h[i] = 0; } -- written through the wire when
    # the daemon's memory is not mapped here (remote mode), so never through a numpy view
    self_h.write(np.full(size, 0, np.float32))
    other_h.write(np.full(size, 1, np.float32))
    out_h.write(np.full(size, 0, np.float32))

    stream1 = aclrtCreateStream()
    # 创建external类型的event
    event = aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)
    # ========开始捕获任务========
    aclmdlRICaptureBegin(stream1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    # 异步拷贝，将aclnnAdd算子self输入的数据从Host侧传到Device侧
    aclrtMemcpyAsync(self_d, size * 4, self_h, size * 4, ACL_MEMCPY_HOST_TO_DEVICE, stream1)
    # 异步拷贝，将aclnnAdd算子other输入的数据从Host侧传到Device侧
    aclrtMemcpyAsync(other_d, size * 4, other_h, size * 4, ACL_MEMCPY_HOST_TO_DEVICE, stream1)
    # 执行aclnnAdd算子
    aclnnAdd(workspaceAddr, workspaceSize, executor, stream1)
    # 在主流stream1上，下发一个Event Wait任务，等待更新任务完成
    aclrtStreamWaitEvent(stream1, event)
    aclrtResetEvent(event, stream1)
    # 标记要更新的任务
    aclmdlRICaptureTaskGrpBegin(stream1)
    aclnnAdd(workspaceAddr1, workspaceSize1, executor1, stream1)
    handle = aclmdlRICaptureTaskGrpEnd(stream1)
    # 异步拷贝，将算子输出数据从Device侧传回Host侧
    aclrtMemcpyAsync(out_h, size * 4, out_d, size * 4, ACL_MEMCPY_DEVICE_TO_HOST, stream1)
    # ========结束捕获任务========
    modelRI = aclmdlRICaptureEnd(stream1)

    updateStream = aclrtCreateStream()
    failures = 0
    # float64 reference: outtmp = self + alpha * other, out = outtmp + alpha' * other (the scalars are float32)
    a, ua = float(np.float32(alphaValue)), float(np.float32(updatealphaValue))
    outtmp_ref = np.zeros(size) + a * np.ones(size)
    for i in range(2):
        ACL_LOG("execute model, loop: %d", i)
        aclmdlRIExecuteAsync(modelRI, stream1)
        # 开始更新任务，将aclnnAdd算子的alpha参数更新为updatealpha
        aclmdlRICaptureTaskUpdateBegin(updateStream, handle)
        if i == 1:
            aclnnAdd(workspaceAddr2, workspaceSize2, executor2, updateStream)
            ACL_LOG("update alpha value of aclnnAdd")
        try:
            aclmdlRICaptureTaskUpdateEnd(updateStream)
        except AclError as error:  # raised here when every call waits (HTTP, VNPU_LAUNCH_BLOCKING=1)
            ignore_empty_update(error, i)
        # 更新任务之后，在updateStream上，下发Event Record任务，用于通知主流stream1继续执行Event Wait之后的任务
        aclrtRecordEvent(event, updateStream)
        try:
            aclrtSynchronizeStream(updateStream)
        except AclError as error:  # over the WebSocket UpdateEnd was pipelined: its error comes here
            ignore_empty_update(error, i)
            aclrtSynchronizeStream(updateStream)  # the synchronize ran; this gives its own result
        aclrtSynchronizeStream(stream1)
        # the model's device-to-host copy wrote out_h; read it now that stream1 is synchronized
        out_v = np.frombuffer(out_h.read(), np.float32)
        ACL_LOG("%f %f %f %f %f %f %f %f\n", *out_v[:8])
        expected = outtmp_ref + (ua if i == 1 else a) * np.ones(size)
        if not np.allclose(out_v, expected, rtol=1e-6, atol=0):
            print(f"[ERROR] loop {i}: out = {out_v.tolist()}, expected {expected.tolist()}", file=sys.stderr)
            failures += 1

    # 释放资源
    aclmdlRIDestroy(modelRI)
    aclDestroyTensor(self)
    aclDestroyTensor(other)
    aclDestroyTensor(out)
    aclDestroyTensor(outtmp)
    aclDestroyScalar(alpha)
    aclDestroyScalar(updatealpha)
    aclrtFree(self_d)
    aclrtFree(other_d)
    aclrtFree(out_d)
    aclrtFree(outtmp_d)
    aclrtFreeHost(self_h)
    aclrtFreeHost(other_h)
    aclrtFreeHost(out_h)
    aclrtDestroyStream(stream1)
    aclrtDestroyStream(updateStream)
    aclrtDestroyEvent(event)
    if workspaceAddr is not None:
        aclrtFree(workspaceAddr)
    if workspaceAddr1 is not None:
        aclrtFree(workspaceAddr1)
    if workspaceAddr2 is not None:
        aclrtFree(workspaceAddr2)
    # 释放计算设备的资源
    aclrtResetDevice(devID)
    # 去初始化
    aclFinalize()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
