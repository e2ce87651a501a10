"""Introspection and editing of a model from C (spec-modelri 3): the arrays of aclmdlRIGetStreams (left untouched
when too small) and aclmdlRIGetTasksByStream (filled, then 107039), aclmdlRITaskParams read and written as the
runtime does (GetParams zeroes the 200 bytes, then fills `type`'s union member), the launch attributes of a
kernel's cfg, and the aclrtLaunchKernelAttrValue union of aclmdlRIKernelTaskGetAttribute.

A kernel task's `args` is a device argument block holding the kernel description as JSON: a C program may copy it
to the host, change it and pass it back with isHostArgs = 1, or hand one task's block to another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.capi.convert import C, call, launch_config
from proto.constants import aclmdlRITaskType, aclrtLaunchKernelAttrId
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)

T = aclmdlRITaskType
A = aclrtLaunchKernelAttrId
EVENT_MEMBERS = {
    T.ACL_MODEL_RI_TASK_EVENT_RECORD: ("eventRecordTaskParams", "recordFlag"),
    T.ACL_MODEL_RI_TASK_EVENT_WAIT: ("eventWaitTaskParams", "waitFlag"),
    T.ACL_MODEL_RI_TASK_EVENT_RESET: ("eventResetTaskParams", "resetFlag"),
}


def _null(c: C, pointer: Any, name: str, code: int = ACL_ERROR_RT_PARAM_INVALID) -> None:
    if pointer == c.ffi.NULL:
        raise AclError(code, f"{name} is NULL: it must point to where the result goes")


def aclmdlRIGetStreams(c: C) -> Callable[..., int]:  # noqa: N802
    def body(model: Any, streams: Any, num: Any) -> int:
        count_in = None if num == c.ffi.NULL else int(num[0])
        handles, count = call("aclmdlRIGetStreams", c.address(model), streams != c.ffi.NULL, count_in)
        for i, handle in enumerate(handles):  # only on success: a short array is left untouched
            streams[i] = c.ffi.cast("aclrtStream", handle)
        num[0] = count
        return 0

    return body


def aclmdlRIGetTasksByStream(c: C) -> Callable[..., int]:  # noqa: N802
    def body(stream: Any, tasks: Any, num: Any) -> int:
        size = None if num == c.ffi.NULL else int(num[0])
        _, count = call("aclmdlRIGetTasksByStream", c.address(stream), False, size)  # every check, and the count
        if tasks == c.ffi.NULL:
            num[0] = count
            return 0
        assert size is not None
        handles = call("aclmdlRIGetTasksByStream", c.address(stream), True, count)[0] if count else []
        for i in range(max(size, count)):
            if i < size:
                tasks[i] = c.ffi.cast("aclmdlRITask", handles[i] if i < count else 0)
        num[0] = min(size, count)
        if size < count:
            raise AclError(
                ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY,
                f"stream {c.address(stream):#x} has {count} task(s) but the array holds {size}: it holds the first "
                f"{size}",
                "aclmdlRIGetTasksByStream",
            )
        return 0

    return body


def aclmdlRITaskGetType(c: C) -> Callable[..., int]:  # noqa: N802
    def body(task: Any, kind: Any) -> int:
        _null(c, kind, "type")
        kind[0] = call("aclmdlRITaskGetType", c.address(task))
        return 0

    return body


def aclmdlRITaskGetSeqId(c: C) -> Callable[..., int]:  # noqa: N802
    def body(task: Any, ident: Any) -> int:
        _null(c, ident, "id")
        ident[0] = call("aclmdlRITaskGetSeqId", c.address(task))
        return 0

    return body


def aclmdlRITaskGetParams(c: C) -> Callable[..., int]:  # noqa: N802
    def body(task: Any, params: Any) -> int:
        _null(c, params, "params")
        got = call("aclmdlRITaskGetParams", c.address(task))
        size = c.ffi.sizeof("aclmdlRITaskParams")
        c.ffi.memmove(params, b"\0" * size, size)
        p = params[0]
        kind = got["type"]
        p.type = kind
        p.taskGrp = c.ffi.cast("void *", got["taskGrp"] or 0)
        p.opInfoPtr = c.ffi.cast("void *", got["opInfoPtr"] or 0)
        p.opInfoSize = got["opInfoSize"] or 0
        if kind == T.ACL_MODEL_RI_TASK_KERNEL:
            k, src = p.kernelTaskParams, got["kernelTaskParams"]
            k.funcHandle = c.ffi.cast("void *", src["funcHandle"] or 0)
            k.args = c.ffi.cast("void *", src["args"] or 0)
            k.isHostArgs, k.argsSize, k.numBlocks = src["isHostArgs"], src["argsSize"], src["numBlocks"]
        elif kind in EVENT_MEMBERS:
            member, flag = EVENT_MEMBERS[T(kind)]
            src, dst = got[member], getattr(p, member)
            dst.event = c.ffi.cast("void *", src["event"] or 0)
            dst.eventFlag = src["eventFlag"]
            setattr(dst, flag, src[flag])
        elif kind == T.ACL_MODEL_RI_TASK_VALUE_WRITE:
            src = got["valueWriteTaskParams"]
            p.valueWriteTaskParams.devAddr = c.ffi.cast("void *", src["devAddr"] or 0)
            p.valueWriteTaskParams.value = src["value"]
        elif kind == T.ACL_MODEL_RI_TASK_VALUE_WAIT:
            src = got["valueWaitTaskParams"]
            p.valueWaitTaskParams.devAddr = c.ffi.cast("void *", src["devAddr"] or 0)
            p.valueWaitTaskParams.value, p.valueWaitTaskParams.flag = src["value"], src["flag"]
        return 0

    return body


def task_params(c: C, params: Any) -> dict[str, Any]:
    """The C struct as the call table's aclmdlRITaskParams: the header and the member `type` selects."""
    p = params[0]
    out: dict[str, Any] = {
        "type": int(p.type),
        "taskGrp": c.address(p.taskGrp),
        "opInfoPtr": c.address(p.opInfoPtr),
        "opInfoSize": int(p.opInfoSize),
    }
    kind = int(p.type)
    if kind == T.ACL_MODEL_RI_TASK_KERNEL:
        k = p.kernelTaskParams
        args: int | bytes = c.pinned.to_daemon(c.address(k.args))
        if k.isHostArgs and k.args != c.ffi.NULL:
            args = bytes(c.ffi.buffer(c.ffi.cast("char *", k.args), k.argsSize))  # host memory: its bytes
        out["kernelTaskParams"] = {
            "funcHandle": c.address(k.funcHandle),
            "cfg": launch_config(c, k.cfg),
            "args": args,
            "isHostArgs": int(k.isHostArgs),
            "argsSize": int(k.argsSize),
            "numBlocks": int(k.numBlocks),
        }
    elif kind in EVENT_MEMBERS:
        member, flag = EVENT_MEMBERS[T(kind)]
        src = getattr(p, member)
        out[member] = {"event": c.address(src.event), "eventFlag": int(src.eventFlag), flag: int(getattr(src, flag))}
    elif kind == T.ACL_MODEL_RI_TASK_VALUE_WRITE:
        v = p.valueWriteTaskParams
        out["valueWriteTaskParams"] = {"devAddr": c.address(v.devAddr), "value": int(v.value)}
    elif kind == T.ACL_MODEL_RI_TASK_VALUE_WAIT:
        w = p.valueWaitTaskParams
        out["valueWaitTaskParams"] = {"devAddr": c.address(w.devAddr), "value": int(w.value), "flag": int(w.flag)}
    return out


def aclmdlRITaskSetParams(c: C) -> Callable[..., int]:  # noqa: N802
    def body(task: Any, params: Any) -> int:
        call("aclmdlRITaskSetParams", c.address(task), None if params == c.ffi.NULL else task_params(c, params))
        return 0

    return body


def aclmdlRIKernelTaskGetAttribute(c: C) -> Callable[..., int]:  # noqa: N802
    def body(task: Any, attr_id: int, value: Any) -> int:
        _null(c, value, "attrValue", ACL_ERROR_INVALID_PARAM)
        got = call("aclmdlRIKernelTaskGetAttribute", c.address(task), attr_id)
        v = value[0]
        if attr_id in (A.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE,):
            v.schemMode = got
        elif attr_id == A.ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE:
            v.dynUBufSize = got
        elif attr_id == A.ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP:
            v.isDataDump = got
        elif attr_id == A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT:
            v.timeout = got
        else:
            v.timeoutUs.timeoutLow, v.timeoutUs.timeoutHigh = got & 0xFFFFFFFF, got >> 32
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclmdlRIGetStreams": aclmdlRIGetStreams,
    "aclmdlRIGetTasksByStream": aclmdlRIGetTasksByStream,
    "aclmdlRITaskGetType": aclmdlRITaskGetType,
    "aclmdlRITaskGetSeqId": aclmdlRITaskGetSeqId,
    "aclmdlRITaskGetParams": aclmdlRITaskGetParams,
    "aclmdlRITaskSetParams": aclmdlRITaskSetParams,
    "aclmdlRIKernelTaskGetAttribute": aclmdlRIKernelTaskGetAttribute,
}
