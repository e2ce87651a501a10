"""Every function of the call table, through REST and through the WebSocket, with the same scenario: the seed's
capture-and-update flow, every event and stream call, memory in all directions, and every aclnn operator."""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import numpy as np
import pytest

import proto.aclnn as nn
from proto.calltable import CALLS
from proto.constants import ACL_TDT_QUEUE_ROUTE_BIND, aclDataType
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_INVALID_QUEUE_ID,
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_QUEUE_EMPTY,
    ACL_ERROR_RT_QUEUE_FULL,
    ACL_ERROR_RT_STREAM_CAPTURED,
    AclError,
)
from proto.randomnum import aclrtRandomNumTaskInfo, aclrtRandomParaInfo
from tests.server.api.callers import RestCaller, WsCaller
from tests.server.api.conftest import LiveServer
from tests.server.npu.devicekit import tensor_at

Caller = Callable[..., Awaitable[dict[str, Any]]]
F32 = aclDataType.ACL_FLOAT
RNG = np.random.default_rng(5)


CALLER_TID = 8  # the callers' thread: a client's [pid, tid], so that aclrtSubscribeReport can name it


class Remote:
    """Device memory through a caller: float32 arrays in, float32 arrays out."""

    def __init__(self, c: Caller) -> None:
        self.c = c

    async def put(self, array: np.ndarray) -> int:
        data = np.ascontiguousarray(array, np.float32).tobytes()
        ptr: int = (await self.c("aclrtMalloc", size=len(data), policy=0))["devPtr"]
        await self.c("aclrtMemcpy", dst=ptr, destMax=len(data), src=data, count=len(data), kind=1)
        return ptr

    async def get(self, ptr: int, shape: tuple[int, ...]) -> np.ndarray:
        n = int(np.prod(shape)) * 4
        data = (await self.c("aclrtMemcpy", dst=None, destMax=n, src=ptr, count=n, kind=2))["data"]
        return np.frombuffer(data, np.float32).reshape(shape)

    async def launch(self, op: str, stream: int, *args: Any) -> None:
        ws, ex = getattr(nn, f"aclnn{op}GetWorkspaceSize")(*args)
        space = (await self.c("aclrtMalloc", size=ws, policy=0))["devPtr"] if ws else 0
        await self.c(f"aclnn{op}", workspace=space, workspaceSize=ws, executor=ex.kernel.to_wire(), stream=stream)


async def exercise(c: Caller) -> None:
    r = Remote(c)
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    assert (await c("aclrtGetDevice"))["deviceId"] == 0
    assert (await c("aclrtGetDeviceCount"))["count"] == 2
    await c("aclrtSetOpWaitTimeout", timeout=0)
    await c("aclrtSetOpExecuteTimeOut", timeout=2)
    await c("aclrtSetOpExecuteTimeOutWithMs", timeout=1500)
    assert (await c("aclrtSetOpExecuteTimeOutV2", timeout=1200))["actualTimeout"] == 1200
    await c("aclrtSetSysParamOpt", opt=0, value=1)
    assert (await c("aclrtGetSysParamOpt", opt=0))["value"] == 1
    await c("aclrtCtxSetSysParamOpt", opt=0, value=2)
    assert (await c("aclrtCtxGetSysParamOpt", opt=0))["value"] == 2
    assert (await c("aclGetDeviceCapability", deviceId=1, deviceInfo=1))["value"] == 40  # vector cores
    assert len((await c("aclrtDeviceGetUuid", deviceId=0))["uuid"]) in (16, 24)  # bytes (base64 over JSON)
    aligned = (await c("aclrtMallocAlign32", size=100, policy=0))["devPtr"]
    await c("aclrtFree", devPtr=aligned)
    assert (await c("aclrtGetDeviceInfo", deviceId=1, attr=201))["value"] == 40  # ACL_DEV_ATTR_VECTOR_CORE_NUM
    assert (await c("aclrtGetDeviceCapability", deviceId=0, devFeatureType=1))["value"] == 1
    assert (await c("aclrtQueryDeviceStatus", deviceId=1))["deviceStatus"] == 0
    assert (await c("aclrtGetErrorVerbose", deviceId=1)) == {"tryRepair": 0, "hasDetail": 0, "errorType": 0}
    assert set((await c("aclrtGetDeviceUtilizationRate", deviceId=0)).values()) == {-1}
    await c("aclrtSetDeviceResLimit", deviceId=0, type=0, value=8)
    assert (await c("aclrtGetDeviceResLimit", deviceId=0, type=0))["value"] == 8
    assert (await c("aclrtGetResInCurrentThread", type=0))["value"] == 8
    await c("aclrtResetDeviceResLimit", deviceId=0)
    assert (await c("aclrtGetResInCurrentThread", type=0))["value"] == 20
    free0, total = (await c("aclrtGetMemInfo", attr=1)).values()
    assert free0 <= total

    # memory, every direction
    data = RNG.standard_normal(16).astype(np.float32).tobytes()
    a, b = (await c("aclrtMalloc", size=64, policy=0))["devPtr"], (await c("aclrtMalloc", size=64, policy=0))["devPtr"]
    h = (await c("aclrtMallocHost", size=64))["hostPtr"]
    info = await c("vnpuHostInfo", hostPtr=h)
    assert info["name"].startswith("vnpu-") and info["size"] == 64
    await c("vnpuHostWrite", hostPtr=h, data=data)
    assert (await c("vnpuHostRead", hostPtr=h, count=64))["data"] == data
    s = (await c("aclrtCreateStream"))["stream"]
    s2 = (await c("aclrtCreateStreamWithConfig", priority=0, flag=0))["stream"]
    await c("aclrtMemcpyAsync", dst=a, destMax=64, src=h, count=64, kind=1, stream=s)
    await c("aclrtMemcpyAsync", dst=b, destMax=64, src=a, count=64, kind=3, stream=s)
    await c("aclrtSynchronizeStream", stream=s)
    assert (await c("aclrtMemcpy", dst=None, destMax=64, src=b, count=64, kind=2))["data"] == data
    await c("aclrtMemset", devPtr=b, maxCount=64, value=1, count=64)
    await c("aclrtMemsetAsync", devPtr=a, maxCount=64, value=2, count=32, stream=s)
    got = await c("aclrtMemcpyAsync", dst=None, destMax=64, src=b, count=64, kind=2, stream=s)
    assert got["data"] == b"\x01" * 64

    # events and streams
    plain = (await c("aclrtCreateEvent"))["event"]
    legacy = (await c("aclrtCreateEventWithFlag", flag=0x9))["event"]
    ex = (await c("aclrtCreateEventExWithFlag", flag=0x9))["event"]
    ext = (await c("aclrtCreateEventWithFlag", flag=0x20))["event"]
    await c("aclrtRecordEvent", event=legacy, stream=s)
    await c("aclrtStreamWaitEvent", stream=s2, event=legacy)
    await c("aclrtStreamWaitEventWithTimeout", stream=s2, event=legacy, timeout=5)
    await c("aclrtResetEvent", event=legacy, stream=s2)
    await c("aclrtRecordEvent", event=plain, stream=s)
    await c("aclrtRecordEvent", event=ex, stream=s)
    await c("aclrtSynchronizeEvent", event=plain)
    await c("aclrtSynchronizeEventWithTimeout", event=ex, timeout=5000)
    assert (await c("aclrtQueryEventStatus", event=ex))["status"] == 1
    assert (await c("aclrtQueryEvent", event=plain))["status"] == 0
    assert (await c("aclrtQueryEventWaitStatus", event=plain))["status"] == 0
    assert (await c("aclrtEventElapsedTime", start=plain, end=ex))["ms"] >= 0
    await c("aclrtSynchronizeStreamWithTimeout", stream=s2, timeout=5000)
    assert (await c("aclrtStreamQuery", stream=s2))["status"] == 0
    await c("aclrtRecordEventWithFlag", event=ex, stream=s, flag=0)
    await c("aclrtStreamWaitEventWithFlag", stream=s2, event=ex, timeout=0, flag=0)
    await c("aclrtSynchronizeStream", stream=s2)
    assert (await c("aclrtEventGetTimestamp", event=ex))["timestamp"] > 0
    ids = {(await c("aclrtStreamGetId", stream=h))["streamId"] for h in (s, s2, 0)}
    assert len(ids) == 3
    assert (await c("aclrtStreamGetFlags", stream=s2))["flags"] == 0
    assert (await c("aclrtStreamGetPriority", stream=s2))["priority"] == 0
    await c("aclrtSetStreamFailureMode", stream=s2, mode=0)
    await c("aclrtSetStreamAttribute", stream=s2, stmAttrType=3, value=0xC0FFEE)  # ACL_STREAM_ATTR_USER_CUSTOM_TAG
    assert (await c("aclrtGetStreamAttribute", stream=s2, stmAttrType=3))["value"] == 0xC0FFEE
    assert (await c("aclrtGetDeviceSatMode"))["mode"] == 1  # ACL_RT_OVERFLOW_MODE_INFNAN
    await c("aclrtSetDeviceSatMode", mode=0)
    assert (await c("aclrtGetDeviceSatMode"))["mode"] == 0
    await c("aclrtSetStreamOverflowSwitch", stream=s2, flag=1)
    assert (await c("aclrtGetStreamOverflowSwitch", stream=s2))["flag"] == 1
    await c("aclrtMemset", devPtr=b, maxCount=64, value=9, count=64)
    await c("aclrtGetOverflowStatus", outputAddr=b, outputSize=64, stream=s2)
    await c("aclrtResetOverflowStatus", stream=s2)
    await c("aclrtResetFloatOverflowStatus", stream=s2)
    await c("aclrtGetFloatOverflowStatus", outputAddr=b, outputSize=64, stream=s2)
    await c("aclrtSynchronizeStream", stream=s2)
    assert (await c("aclrtMemcpy", dst=None, destMax=64, src=b, count=64, kind=2))["data"] == bytes(64)
    await c("aclrtStreamAbort", stream=s2)
    await c("aclrtStreamStop", stream=s2)
    ipc = (await c("aclrtCreateEventExWithFlag", flag=0x40))["event"]  # ACL_EVENT_IPC
    handle = (await c("aclrtIpcGetEventHandle", event=ipc))["handle"]
    handle = base64.b64decode(handle) if isinstance(handle, str) else handle  # JSON carries bytes as base64
    assert len(handle) == 64 and (await c("aclrtIpcOpenEventHandle", handle=handle))["event"] == ipc  # our own
    await c("aclrtDestroyEvent", event=ipc)
    notify = (await c("aclrtCreateNotify", flag=0))["notify"]
    assert (await c("aclrtGetNotifyId", notify=notify))["notifyId"] >= 0
    key = (await c("aclrtNotifyGetExportKey", notify=notify, len=65, flags=0))["key"]
    await c("aclrtNotifySetImportPid", notify=notify, pid=[7])  # the callers' pid
    assert (await c("aclrtNotifyImportByKey", key=key, flags=0))["notify"] == notify  # its own: the same handle
    await c("aclrtRecordNotify", notify=notify, stream=s)
    await c("aclrtWaitAndResetNotify", notify=notify, stream=s2, timeout=5)
    await c("aclrtSynchronizeStream", stream=s2)
    await c("aclrtDestroyNotify", notify=notify)
    word = (await c("aclrtMalloc", size=8, policy=0))["devPtr"]
    await c("aclrtValueWrite", devAddr=word, value=2**63 + 5, flag=0, stream=s)
    await c("aclrtValueWait", devAddr=word, value=2**63, flag=0, stream=s2)  # GEQ
    await c("aclrtSynchronizeStream", stream=s2)
    await c("aclrtReduceAsync", dst=word, src=word, count=8, kind=10, type=3, stream=s2, reserve=None)  # INT32 SUM
    await c("aclrtSynchronizeStream", stream=s2)
    kernels = (await c("aclrtBinaryLoadFromData", data=b"vnpu-fatbin 1\nkernel EasyOPf\n", options=None))["binHandle"]
    easy = (await c("aclrtBinaryGetFunction", binHandle=kernels, kernelName="EasyOPf"))["funcHandle"]
    slot = word.to_bytes(8, "little")
    await c("aclrtLaunchKernel", funcHandle=easy, numBlocks=1, argsData=slot, stream=s2)
    args = {"data": slot, "placeholders": []}
    cfg = {"attrs": [{"id": 8, "value": 5_000_000}]}  # ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US
    await c("aclrtLaunchKernelWithConfig", funcHandle=easy, numBlocks=1, stream=s2, cfg=cfg, argsHandle=args, reserve=0)
    await c("vnpuLaunchKernel", kernelName="DeviceRead", numBlocks=1, stream=s2, args=slot)
    await c("aclrtSynchronizeStream", stream=s2)
    assert (await c("vnpuTakePrinted"))["text"].startswith("Destination data: ")
    # phase 1 by the daemon's rules (the native client's way): the workspace size the Python rules give
    x4 = tensor_at(0x1000, (4,), F32)
    size, add = nn.aclnnAddGetWorkspaceSize(x4, x4, nn.aclCreateScalar(1.0, F32), x4)
    wire = add.kernel.to_wire()["args"]
    assert await c("vnpuWorkspaceSize", op="Add", args=wire) == {"workspaceSize": size}
    await c("vnpuMarkerRangeStart", rangeId=3, message="r", domain=None, stream=s2)
    await c("vnpuMarkerMark", message="m", domain="d", stream=s2)
    await c("vnpuMarkerRangeEnd", rangeId=3)
    await c("aclrtBinaryUnLoad", binHandle=kernels)
    counter = (await c("aclrtMalloc", size=16, policy=0))["devPtr"]
    await c("aclrtMemset", devPtr=counter, maxCount=16, value=0, count=16)
    info = aclrtRandomNumTaskInfo(aclDataType.ACL_UINT32, randomResultAddr=word, randomCounterAddr=counter)
    info.randomNumFuncParaInfo.funcType = 1  # UNIFORM_DIS
    uniform = info.randomNumFuncParaInfo.paramInfo.uniformDisInfo
    uniform.min, uniform.max = (aclrtRandomParaInfo.immediate(v.to_bytes(4, "little")) for v in (10, 20))
    info.randomSeed, info.randomNum = (aclrtRandomParaInfo.immediate(v.to_bytes(8, "little")) for v in (5, 2))
    await c("aclrtRandomNumAsync", taskInfo=info.to_wire(), stream=s2, reserve=None)  # two uint32 in [10, 20)
    await c("aclrtSynchronizeStream", stream=s2)
    for ptr, n, dtype, check in ((word, 8, np.uint32, lambda v: ((v >= 10) & (v < 20)).all()),
                                 (counter, 16, np.uint64, lambda v: list(v) == [1, 0])):  # fmt: skip
        data = (await c("aclrtMemcpy", dst=None, destMax=n, src=ptr, count=n, kind=2))["data"]
        assert check(np.frombuffer(base64.b64decode(data) if isinstance(data, str) else data, dtype))
    assert {s, s2} <= set((await c("vnpuStreams"))["streams"])
    last = (await c("aclrtGetThreadLastTaskId"))["taskId"]
    await c("aclrtMemsetAsync", devPtr=word, maxCount=8, value=0, count=8, stream=s2)
    assert (await c("aclrtGetThreadLastTaskId"))["taskId"] == last + 1  # its last task (a value wait) was on s2 too
    await c("aclrtSubscribeReport", threadId=CALLER_TID, stream=s2)
    await c("aclrtLaunchCallback", fn=0xC0DE, userData=0xDA7A, blockType=1, stream=s2)
    (due,) = (await c("vnpuTakeReports", timeout=5000))["reports"]
    assert due == {
        "callbackId": due["callbackId"],
        "fn": 0xC0DE,
        "userData": 0xDA7A,
        "blocking": True,
        "captured": False,
    }
    ident = due["callbackId"]
    await c("vnpuCallbackDone", callbackId=ident)
    await c("aclrtUnSubscribeReport", threadId=CALLER_TID, stream=s2)
    await c("aclrtLaunchHostFunc", stream=s2, fn=0xF00, args=0)
    (due,) = (await c("vnpuTakeHostFuncs", timeout=5000))["reports"]
    assert due["fn"] == 0xF00
    ident = due["callbackId"]
    await c("vnpuCallbackDone", callbackId=ident)
    await c("aclrtSynchronizeStream", stream=s2)
    # virtual memory: two granules, each backed by a block, written and read across the boundary
    loc = {"id": 0, "type": 1}
    prop = {"handleType": 0, "allocationType": 0, "memAttr": 4, "location": loc, "reserve": 0}
    gran = (await c("aclrtMemGetAllocationGranularity", prop=prop, option=0))["granularity"]
    va = (await c("aclrtReserveMemAddress", size=2 * gran, alignment=0, expectPtr=None, flags=0))["virPtr"]
    blocks = [(await c("aclrtMallocPhysical", size=gran, prop=prop, flags=0))["handle"] for _ in range(2)]
    for i, block in enumerate(blocks):
        await c("aclrtMapMem", virPtr=va + i * gran, size=gran, offset=0, handle=block, flags=0)
    await c("aclrtMemSetAccess", virPtr=va, size=2 * gran, desc=[{"flags": 3, "location": loc}])
    seam = RNG.standard_normal(8).astype(np.float32)
    await c("aclrtMemcpy", dst=va + gran - 16, destMax=32, src=seam.tobytes(), count=32, kind=1)
    assert (await r.get(va + gran - 16, (8,))).tolist() == seam.tolist()
    shared = (await c("aclrtMemExportToShareableHandle", handle=blocks[0], handleType=0, flags=0))["shareableHandle"]
    await c("aclrtMemSetPidToShareableHandle", shareableHandle=shared, pid=[7])
    blob = (await c("aclrtMemExportToShareableHandleV2", handle=blocks[1], flags=1, shareType=1))["shareableHandle"]
    for api, args in (
        ("aclrtMemImportFromShareableHandle", {"shareableHandle": shared, "deviceId": 0}),
        ("aclrtMemImportFromShareableHandleV2", {"shareableHandle": blob, "shareType": 1, "flags": 0}),
    ):
        with pytest.raises(AclError) as caught:  # a process does not import its own export
            await c(api, **args)
        assert caught.value.code == ACL_ERROR_RT_PARAM_INVALID and "already held" in caught.value.message
    for i, block in enumerate(blocks):
        await c("aclrtUnmapMem", virPtr=va + i * gran)
        await c("aclrtFreePhysical", handle=block)
    await c("aclrtReleaseMemAddress", virPtr=va)
    # IPC memory (imported here too: a process may import its own key), host registration, managed memory
    key = (await c("aclrtIpcMemGetExportKey", devPtr=word, size=8, len=65, flags=0))["key"]
    await c("aclrtIpcMemSetImportPid", key=key, pid=[7])
    alias = (await c("aclrtIpcMemImportByKey", key=key, flags=0))["devPtr"]
    await c("aclrtMemcpy", dst=alias, destMax=8, src=b"\x11" * 8, count=8, kind=1)
    assert (await c("aclrtMemcpy", dst=None, destMax=8, src=word, count=8, kind=2))["data"] == b"\x11" * 8
    await c("aclrtIpcMemClose", key=key)
    host = (await c("aclrtMallocHost", size=64))["hostPtr"]
    await c("aclrtHostRegisterV2", ptr=host, size=64, flag=2)
    mapped = (await c("aclrtHostGetDevicePointer", pHost=host, flag=0))["pDevice"]
    await c("aclrtMemcpy", dst=mapped, destMax=8, src=b"\x22" * 8, count=8, kind=1)
    assert (await c("vnpuHostRead", hostPtr=host, count=8))["data"] == b"\x22" * 8
    await c("aclrtHostUnregister", ptr=host)
    await c("aclrtFreeHost", hostPtr=host)
    managed = (await c("aclrtMemAllocManaged", size=64, flag=1))["ptr"]
    await c("vnpuHostWrite", hostPtr=managed, data=b"\x33" * 8)
    assert (await c("aclrtMemcpy", dst=None, destMax=8, src=managed, count=8, kind=2))["data"] == b"\x33" * 8
    await c("aclrtFree", devPtr=managed)
    assert (await c("aclrtDeviceCanAccessPeer", deviceId=0, peerDeviceId=1))["canAccessPeer"] == 1
    await c("aclrtDeviceEnablePeerAccess", peerDeviceId=1, flags=0)
    await c("aclrtDeviceDisablePeerAccess", peerDeviceId=1)
    await c("aclrtSynchronizeDevice")
    await c("aclrtSynchronizeDeviceWithTimeout", timeout=-1)

    # ACL contexts: a created one is current (its own default stream, a real handle), then the primary again
    primary = (await c("aclrtGetCurrentContext"))["context"]
    made = (await c("aclrtCreateContext", deviceId=1))["context"]
    assert (await c("aclrtGetCurrentContext"))["context"] == made != primary
    assert (await c("aclrtGetDevice"))["deviceId"] == 1
    own = (await c("aclrtCtxGetCurrentDefaultStream"))["stream"]
    await c("aclrtMemsetAsync", devPtr=(await c("aclrtMalloc", size=64, policy=0))["devPtr"], maxCount=64, value=3,
            count=64, stream=own)  # fmt: skip
    await c("aclrtSynchronizeStream", stream=own)
    doomed = (await c("aclrtCreateStream"))["stream"]
    await c("aclrtDestroyStreamForce", stream=doomed)
    await c("aclrtSetCurrentContext", context=primary)
    assert (await c("aclrtGetDevice"))["deviceId"] == 0
    await c("aclrtDestroyContext", context=made)
    with pytest.raises(AclError) as caught:
        await c("aclrtSetCurrentContext", context=made)
    assert caught.value.code == ACL_ERROR_RT_PARAM_INVALID

    # the seed: capture with an EXTERNAL event and a task group, update on a second stream
    x, o, tmp = await r.put(np.zeros(8)), await r.put(np.zeros(8)), await r.put(np.zeros(8))
    other = await r.put(np.ones(8))
    xt, ot, tt, yt = (tensor_at(p, (8,), F32) for p in (x, o, tmp, other))
    alpha = nn.aclCreateScalar(1.1, F32)
    await c("aclmdlRICaptureBegin", stream=s, mode=0)
    status = await c("aclmdlRICaptureGetInfo", stream=s)
    assert status["status"] == 1 and status["modelRI"] > 0
    assert (await c("aclmdlRICaptureThreadExchangeMode", mode=2))["mode"] == 0
    assert (await c("aclmdlRICaptureThreadExchangeMode", mode=0))["mode"] == 2
    with pytest.raises(AclError) as caught:
        await c("aclrtSynchronizeStream", stream=s)
    assert caught.value.code == ACL_ERROR_RT_STREAM_CAPTURED
    await r.launch("Add", s, xt, yt, alpha, tt)
    await c("aclrtStreamWaitEvent", stream=s, event=ext)
    await c("aclrtResetEvent", event=ext, stream=s)
    await c("aclmdlRICaptureTaskGrpBegin", stream=s)
    await r.launch("Add", s, tt, yt, alpha, ot)
    handle = (await c("aclmdlRICaptureTaskGrpEnd", stream=s))["handle"]
    model = (await c("aclmdlRICaptureEnd", stream=s))["modelRI"]
    assert "task group" in (await c("aclmdlRIDebugPrint", modelRI=model))["text"]
    assert len(json.loads((await c("aclmdlRIDebugJsonPrint", modelRI=model, path=None, flags=0))["trace"])) == 4
    for value, want in ((1.1, 2.2), (5.5, 6.6)):
        await c("aclmdlRIExecuteAsync", modelRI=model, stream=s)
        await c("aclmdlRICaptureTaskUpdateBegin", stream=s2, handle=handle)
        await r.launch("Add", s2, tt, yt, nn.aclCreateScalar(value, F32), ot)
        await c("aclmdlRICaptureTaskUpdateEnd", stream=s2)
        await c("aclrtRecordEvent", event=ext, stream=s2)
        await c("aclrtSynchronizeStream", stream=s2)
        await c("aclrtSynchronizeStream", stream=s)
        np.testing.assert_allclose(await r.get(o, (8,)), np.full(8, want), rtol=1e-6)
    await c("aclrtRecordEvent", event=ext, stream=s2)
    with pytest.raises(AclError) as caught:  # the runtime runs capture models with aclmdlRIExecuteAsync only
        await c("aclmdlRIExecute", modelRI=model, timeout=5000)
    assert caught.value.code == ACL_ERROR_RT_PARAM_INVALID

    # introspection and editing (spec-modelri 3): the seed's model, its group kernel edited, its first kernel gone
    lanes = await c("aclmdlRIGetStreams", modelRI=model, streams=True, numStreams=4)
    assert lanes["numStreams"] == 1
    listed = await c("aclmdlRIGetTasksByStream", stream=lanes["streams"][0], tasks=True, numTasks=8)
    assert listed["numTasks"] == 4
    first, wait, _, grouped = listed["tasks"]
    assert (await c("aclmdlRITaskGetType", task=wait))["type"] == 3  # ACL_MODEL_RI_TASK_EVENT_WAIT
    assert (await c("aclmdlRITaskGetSeqId", task=grouped))["id"] == 3
    params = (await c("aclmdlRITaskGetParams", task=grouped))["params"]
    assert params["type"] == 1 and params["taskGrp"] == handle
    params["taskGrp"] = 0
    await c("aclmdlRITaskSetParams", task=grouped, params=params)
    assert (await c("aclmdlRIKernelTaskGetAttribute", task=grouped, attrId=7))["attrValue"] == 1090  # s, default
    await c("aclmdlRITaskDisable", task=first)
    await c("aclmdlRIUpdate", modelRI=model)
    assert (await c("aclmdlRIGetTasksByStream", stream=lanes["streams"][0], tasks=False, numTasks=0))["numTasks"] == 3
    # names, ids, abort, destroy callbacks (the client calls func(userData) itself: the daemon hands them back)
    await c("aclmdlRISetName", modelRI=model, name="seed graph")
    assert (await c("aclmdlRIGetName", modelRI=model, maxLen=11))["name"] == "seed graph"
    ident = (await c("aclmdlRIGetId", modelRI=model))["modelRIId"]
    assert (
        json.loads((await c("aclmdlRIDebugJsonPrint", modelRI=model, path=None, flags=0))["trace"])[0]["args"][
            "Model Id"
        ]
        == ident
    )
    await c("aclmdlRIAbort", modelRI=model)  # not running: nothing to stop
    for func, user_data in ((0x5000, 0xA), (0x4000, 0xB), (0x6000, 0)):
        await c("aclmdlRIDestroyRegisterCallback", modelRI=model, func=func, userData=user_data)
    await c("aclmdlRIDestroyUnregisterCallback", modelRI=model, func=0x6000)
    destroyed = await c("aclmdlRIDestroy", modelRI=model)
    assert destroyed["callbacks"] == [{"func": 0x4000, "userData": 0xB}, {"func": 0x5000, "userData": 0xA}]

    # the Build API: p1 (HEAD) adds, then jumps on *left == *right to p2, which activates p3, the end stream
    p1, p2, p3 = [(await c("aclrtCreateStreamWithConfig", priority=0, flag=4))["stream"] for _ in range(3)]
    built = (await c("aclmdlRIBuildBegin", flag=0))["modelRI"]
    for stream, flag in ((p1, 0), (p2, 0x7FFFFFFF), (p3, 0x7FFFFFFF)):
        await c("aclmdlRIBindStream", modelRI=built, stream=stream, flag=flag)
    left, right = await r.put(np.full(1, 2.0)), await r.put(np.full(1, 2.0))
    start = RNG.standard_normal(8).astype(np.float32)
    await c("aclrtMemcpyAsync", dst=x, destMax=32, src=start.tobytes(), count=32, kind=1, stream=p1)
    np.testing.assert_array_equal(await r.get(x, (8,)), start)  # pageable: copied at once, not kept
    await r.launch("Add", p1, xt, yt, alpha, ot)  # o = x + 1.1
    await c("aclrtSwitchStream", leftValue=left, cond=0, rightValue=right, dataType=0, trueStream=p2,
            falseStream=None, stream=p1)  # fmt: skip
    await r.launch("Add", p1, xt, xt, alpha, ot)  # not run: the switch jumps
    await r.launch("Add", p2, ot, ot, alpha, tt)  # tmp = 2.1 o
    await c("aclrtActiveStream", activeStream=p3, stream=p2)
    await c("aclmdlRIEndTask", modelRI=built, stream=p3)
    await c("aclmdlRIBuildEnd", modelRI=built, reserve=None)
    await c("aclmdlRIExecuteAsync", modelRI=built, stream=s)
    await c("aclrtSynchronizeStream", stream=s)
    await c("aclmdlRIExecute", modelRI=built, timeout=5000)
    np.testing.assert_allclose(await r.get(o, (8,)), start.astype(np.float64) + 1.1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(await r.get(tmp, (8,)), 2.1 * (start.astype(np.float64) + 1.1), rtol=1e-5, atol=1e-6)
    await c("aclmdlRIUnbindStream", modelRI=built, stream=p1)
    await c("aclmdlRIDestroy", modelRI=built)  # unbinds p2 and p3
    for stream in (p1, p2, p3):
        await c("aclrtDestroyStream", stream=stream)
    # labels: one persistent stream; the index word picks y = x + x (label 0) or nothing more (label 1)
    p4 = (await c("aclrtCreateStreamWithConfig", priority=0, flag=4))["stream"]
    labelled = (await c("aclmdlRIBuildBegin", flag=0))["modelRI"]
    await c("aclmdlRIBindStream", modelRI=labelled, stream=p4, flag=0)
    labels = [(await c("aclrtCreateLabel"))["label"] for _ in range(2)]
    labels_at = (await c("aclrtCreateLabelList", labels=labels, num=2))["labelList"]
    index = (await c("aclrtMalloc", size=4, policy=0))["devPtr"]
    await c("aclrtMemcpy", dst=index, destMax=4, src=(1).to_bytes(4, "little"), count=4, kind=1)
    await c("aclrtSwitchLabelByIndex", ptr=index, maxValue=2, labelList=labels_at, stream=p4)
    await c("aclrtSetLabel", label=labels[0], stream=p4)
    await r.launch("Add", p4, xt, xt, alpha, tt)  # tmp = 2.1 x: skipped while the index is 1
    await c("aclrtSetLabel", label=labels[1], stream=p4)
    await c("aclmdlRIEndTask", modelRI=labelled, stream=p4)
    await c("aclmdlRIBuildEnd", modelRI=labelled, reserve=None)
    before = await r.get(tmp, (8,))
    await c("aclmdlRIExecute", modelRI=labelled, timeout=5000)
    np.testing.assert_array_equal(await r.get(tmp, (8,)), before)
    await c("aclrtMemcpy", dst=index, destMax=4, src=(0).to_bytes(4, "little"), count=4, kind=1)
    await c("aclmdlRIExecute", modelRI=labelled, timeout=5000)
    np.testing.assert_allclose(await r.get(tmp, (8,)), 2.1 * start.astype(np.float64), rtol=1e-5, atol=1e-6)
    await c("aclmdlRIDestroy", modelRI=labelled)
    await c("aclrtDestroyLabelList", labelList=labels_at)
    for label in labels:
        await c("aclrtDestroyLabel", label=label)
    await c("aclrtDestroyStream", stream=p4)
    await c("aclrtFree", devPtr=index)
    # conditional models: an IF with two branches captured into sub-models; ASSIGN_DEFAULT (1) picks branch 0
    await c("aclmdlRICaptureBegin", stream=s, mode=2)
    parent = (await c("aclmdlRICaptureGetInfo", stream=s))["modelRI"]
    cond = (await c("aclmdlRICondHandleCreate", modelRI=parent, defaultLaunchValue=1, flag=1))["handle"]
    word = (await c("aclmdlRICondHandleGetCondPtr", handle=cond))["ptr"]
    params = {"handle": cond, "type": 0, "size": 2}
    subs = (await c("aclmdlRIAddCondTask", params=params, stream=s, flags=0))["modelRIArray"]
    for sub, scale in zip(subs, (2.0, 3.0), strict=True):
        await c("aclmdlRICaptureToModelRIBegin", stream=s2, modelRI=sub, mode=2)
        await r.launch("Muls", s2, yt, nn.aclCreateScalar(scale, F32), ot)
        if scale == 2.0:
            assert (await c("aclmdlRICaptureEnd", stream=s2))["modelRI"] == sub
        else:
            await c("vnpuCaptureEndNoModel", stream=s2)
    assert (await c("aclmdlRICaptureEnd", stream=s))["modelRI"] == parent
    await c("aclrtValueWrite", devAddr=word, value=0, flag=0, stream=s)  # overwritten by the launch's default
    await c("aclrtSynchronizeStream", stream=s)
    await c("aclmdlRIExecuteAsync", modelRI=parent, stream=s)
    await c("aclrtSynchronizeStream", stream=s)
    np.testing.assert_allclose(await r.get(o, (8,)), np.full(8, 2.0), rtol=1e-6)
    assert "[0] ran 1x" in (await c("aclmdlRIDebugPrint", modelRI=parent))["text"]
    await c("aclmdlRIDestroy", modelRI=parent)

    # every aclnn operator once, a few checked against float64
    await every_operator(r, s)
    await tdt_calls(c)

    for event in (plain, legacy, ex, ext):
        await c("aclrtDestroyEvent", event=event)
    await c("aclrtDestroyStream", stream=s2)
    await c("aclrtFree", devPtr=a)
    await c("aclrtFreeHost", hostPtr=h)
    await c("aclrtSetDevice", deviceId=0)  # a second reference, which the forced reset drops too
    await c("aclrtResetDeviceForce", deviceId=0)
    with pytest.raises(AclError) as caught:
        await c("aclrtResetDevice", deviceId=0)
    assert caught.value.code == ACL_ERROR_RT_CONTEXT_RELEASE_ERROR
    await c("aclFinalize")


async def tdt_calls(c: Caller) -> None:
    """Channels, queues and routes: a dataset's bytes come back as sent; the capacity and misuse codes hold."""
    data = RNG.standard_normal(6).astype(np.float32).tobytes()
    item = {"tensorType": 0, "dims": [2, 3], "dataType": 0, "data": data, "sliceNum": 0, "sliceId": 0}
    ch = (await c("acltdtCreateChannelWithCapacity", deviceId=0, name="wire", capacity=1))["handle"]
    await c("acltdtSendTensor", handle=ch, name="ds", items=[item], timeout=0)
    with pytest.raises(AclError) as caught:
        await c("acltdtSendTensor", handle=ch, name="ds", items=[item], timeout=0)
    assert caught.value.code == ACL_ERROR_RT_QUEUE_FULL
    assert (await c("acltdtQueryChannelSize", handle=ch))["size"] == 1
    got = await c("acltdtReceiveTensor", handle=ch, timeout=0)
    raw = got["items"][0]["data"]
    assert got["name"] == "ds" and (base64.b64decode(raw) if isinstance(raw, str) else raw) == data
    await c("acltdtSendTensor", handle=ch, name="", items=[item], timeout=-1)
    await c("acltdtCleanChannel", handle=ch)
    with pytest.raises(AclError) as caught:
        await c("acltdtReceiveTensor", handle=ch, timeout=0)
    assert caught.value.code == ACL_ERROR_RT_QUEUE_EMPTY
    await c("acltdtStopChannel", handle=ch)
    await c("acltdtDestroyChannel", handle=ch)
    legacy = (await c("acltdtCreateChannel", deviceId=0, name="legacy"))["handle"]
    with pytest.raises(AclError) as caught:
        await c("acltdtSendTensor", handle=legacy, name="", items=[item], timeout=0)
    assert caught.value.code == ACL_ERROR_INVALID_PARAM
    await c("acltdtDestroyChannel", handle=legacy)
    src = (await c("acltdtCreateQueue", name="src", depth=4))["qid"]
    dst = (await c("acltdtCreateQueue", name="", depth=4))["qid"]
    assert (await c("acltdtBindQueueRoutes", routes=[[src, dst]]))["status"] == [ACL_TDT_QUEUE_ROUTE_BIND]
    found = await c("acltdtQueryQueueRoutes", mode=2, srcId=src, dstId=dst)
    assert found["routes"] == [[src, dst, ACL_TDT_QUEUE_ROUTE_BIND]]
    assert (await c("acltdtUnbindQueueRoutes", routes=[[src, dst]]))["status"] == [0]
    assert (await c("acltdtQueryQueueRoutes", mode=0, srcId=src, dstId=None))["routes"] == []
    await c("acltdtEnqueueData", qid=src, data=data, userData=b"tag", timeout=0, rsv=0)
    got = await c("acltdtDequeueData", qid=src, dataSize=len(data), userDataSize=8, timeout=0)
    raw, tag = got["data"], got["userData"]
    assert (base64.b64decode(raw) if isinstance(raw, str) else raw) == data and got["retDataSize"] == len(data)
    assert (base64.b64decode(tag) if isinstance(tag, str) else tag) == b"tag"
    await c("acltdtDestroyQueue", qid=src)
    with pytest.raises(AclError) as caught:
        await c("acltdtDestroyQueue", qid=src)
    assert caught.value.code == ACL_ERROR_INVALID_QUEUE_ID
    await c("acltdtDestroyQueue", qid=dst)


async def every_operator(r: Remote, s: int) -> None:
    m = RNG.standard_normal((4, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 2)).astype(np.float32)
    mp, wp = await r.put(m), await r.put(w)
    mt, wt = tensor_at(mp, (4, 3), F32), tensor_at(wp, (3, 2), F32)
    outs = {name: await r.put(np.zeros(shape)) for name, shape in (("mm", (4, 2)), ("sum", (4,)), ("e", (4, 3)))}
    mm, sm, e = tensor_at(outs["mm"], (4, 2), F32), tensor_at(outs["sum"], (4,), F32), tensor_at(outs["e"], (4, 3), F32)
    one, two = nn.aclCreateScalar(1.0, F32), nn.aclCreateScalar(2.0, F32)
    dims = nn.aclCreateIntArray([1])
    scratch = tensor_at(await r.put(np.zeros((4, 3))), (4, 3), F32)
    launches: list[tuple[str, tuple[Any, ...]]] = [
        ("Add", (mt, mt, one, e)),
        ("Adds", (mt, two, one, e)),
        ("Sub", (mt, mt, one, e)),
        ("Subs", (mt, two, one, e)),
        ("Mul", (mt, mt, e)),
        ("Muls", (mt, two, e)),
        ("Div", (mt, mt, e)),
        ("InplaceCopy", (scratch, mt)),
        ("InplaceAdd", (scratch, mt, one)),
        ("InplaceMul", (scratch, mt)),
        ("Relu", (mt, e)),
        ("Gelu", (mt, e)),
        ("Silu", (mt, e)),
        ("Abs", (mt, e)),
        ("Neg", (mt, e)),
        ("Cast", (mt, F32, e)),
        ("Mean", (mt, dims, False, F32, sm)),
        ("Softmax", (mt, -1, e)),
        ("ReduceSum", (mt, dims, False, F32, sm)),
        ("Matmul", (mt, wt, mm, 0)),
        ("Exp", (mt, e)),
    ]
    assert {op for op, _ in launches} == {decl.name for decl in nn.DECLS}  # vnpu's first 21
    for op, args in launches:
        await r.launch(op, s, *args)
    await r.c("aclrtSynchronizeStream", stream=s)
    m64 = m.astype(np.float64)
    np.testing.assert_allclose(await r.get(outs["e"], (4, 3)), np.exp(m64), rtol=1e-6)
    np.testing.assert_allclose(await r.get(outs["sum"], (4,)), m64.sum(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(await r.get(outs["mm"], (4, 2)), m64 @ w.astype(np.float64), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(await r.get(scratch.data, (4, 3)), 2 * m64 * m64, rtol=1e-5, atol=1e-6)


async def test_every_call_over_rest(http: httpx.AsyncClient) -> None:
    caller = RestCaller(http, thread=f"7-{CALLER_TID}")
    await exercise(caller)
    assert caller.sent == set(CALLS) | {decl.c_name for decl in nn.DECLS} | {decl.c_name for decl in nn.DECLS}


async def test_every_call_over_the_websocket(live: LiveServer) -> None:
    caller = await WsCaller.connect(live.ws_url)
    caller.thread = [7, CALLER_TID]
    try:
        await exercise(caller)
        assert caller.sent == set(CALLS) | {decl.c_name for decl in nn.DECLS}
        assert caller.orphans == []
    finally:
        await caller.close()
