"""The call table: every ACL function the device implements, declared once.

Each `Call` has the exact C name, a request model (the C arguments in C order under their C parameter names, the
array-length arguments dropped, the out-parameters removed) and a result model (the out-parameters, in C order).
The daemon's REST routes, its WebSocket dispatcher, the OpenAPI schema and the client are all generated from this
table, and tests check them against it.

Wire conventions (JSON and msgpack alike):
- pointers and handles are integers (or, as vnpu prints them, "0x..." strings); 0 or null is NULL (for a stream:
  the default stream);
- enum values are plain integers, checked by the device, so an out-of-range value gets the runtime's own code;
- pageable host memory (a plain buffer in C) travels as bytes: a source is the bytes themselves, a destination is
  `null` and the copied bytes come back in the result's `data` (JSON: base64; prefer the raw-body routes for bulk);
- a phase-2 launch (`aclnnAdd`, ...) carries the executor as the kernel description of `proto.aclnn.KernelDesc`,
  or (what the client sends over the WebSocket) that description msgpack-encoded as bytes, which the daemon
  decodes and checks once however often they come;
- a C struct argument (aclrtRandomNumAsync's `taskInfo`) is an object of its C fields, nested as in C, with
  integers and lists of integers (byte arrays) as leaves; the daemon's device sees it as plain dicts and lists;
- `vnpu*` calls are vnpu's own (host-buffer access for remote clients), not ACL functions.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Final

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, WithJsonSchema, create_model

from proto.aclnn import OPS, KernelDesc

U64 = Annotated[int, Field(ge=0, le=2**64 - 1)]
I64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
U32 = Annotated[int, Field(ge=0, le=2**32 - 1)]
I32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
U8 = Annotated[int, Field(ge=0, le=255)]
HEX = re.compile(r"0[xX][0-9a-fA-F]{1,16}")


def _from_hex(value: object) -> object:
    """vnpu prints handles and pointers as 0x...: that form is accepted wherever one is expected."""
    return int(value, 16) if isinstance(value, str) and HEX.fullmatch(value) else value


_ADDRESS_SCHEMA = [
    {"type": "integer", "minimum": 0, "maximum": 2**64 - 1},
    {"type": "string", "pattern": f"^{HEX.pattern}$"},
]
_HEX_IN, _NULLABLE = BeforeValidator(_from_hex), WithJsonSchema({"anyOf": [*_ADDRESS_SCHEMA, {"type": "null"}]})
# a handle or pointer where a REST path or query names one: decimal or 0x...
Address = Annotated[U64, _HEX_IN, WithJsonSchema({"anyOf": _ADDRESS_SCHEMA})]
Handle = Annotated[
    U64 | None, _HEX_IN, _NULLABLE, Field(description="a handle (an integer or 0x...); 0 or null is NULL")
]
Stream = Annotated[
    U64 | None,
    _HEX_IN,
    _NULLABLE,
    Field(description="a stream (an integer or 0x...); 0 or null is the default stream"),
]
Ptr = Annotated[
    U64 | None,
    _HEX_IN,
    _NULLABLE,
    Field(description="a device or pinned host pointer (an integer or 0x...); 0 or null is NULL"),
]
# bytes in JSON are standard base64 (RFC 4648 section 4) both ways; msgpack carries them as they are
Bytes = Annotated[bytes, PlainSerializer(lambda b: base64.b64encode(b).decode(), return_type=str, when_used="json")]
Src = Annotated[
    int | Bytes | None,
    Field(description="a device or pinned host pointer, or the bytes of pageable host memory (JSON: base64)"),
]
Dst = Annotated[
    U64 | None,
    _HEX_IN,
    _NULLABLE,
    Field(description="a device or pinned host pointer (an integer or 0x...), or null for pageable memory"),
]
Kernel = Annotated[
    dict[str, Any] | Bytes | None,
    Field(description="the executor: a kernel description (KernelDesc wire form), or its msgpack encoding as bytes"),
]
Data = Annotated[Bytes | None, Field(description="bytes copied into pageable host memory (null otherwise)")]

Arg = tuple[str, Any]


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, ser_json_bytes="base64", val_json_bytes="base64")


class DueCallback(WireModel):
    """A callback the client is to run now: `fn(userData)`, then (`blocking`) vnpuCallbackDone(callbackId)."""

    callbackId: U64  # noqa: N815
    fn: U64
    userData: U64  # noqa: N815
    blocking: bool
    captured: bool  # from a model: handed back at every replay, so the client keeps fn and userData


class DestroyCallback(WireModel):
    """A destroy callback of a model (aclmdlRIDestroyRegisterCallback) for the client to call: func(userData)."""

    func: U64
    userData: U64  # noqa: N815


class aclrtMemLocation(WireModel):  # noqa: N801 - the C struct's name
    id: U32 = 0
    type: I32 = 0  # aclrtMemLocationType


class aclrtPhysicalMemProp(WireModel):  # noqa: N801
    """aclrtMallocPhysical's and aclrtMemGetAllocationGranularity's properties (zero, as `= {}` in C, unless set)."""

    handleType: I32 = 0  # noqa: N815 - aclrtMemHandleType
    allocationType: I32 = 0  # noqa: N815 - aclrtMemAllocationType
    memAttr: I32 = 0  # noqa: N815 - aclrtMemAttr
    location: aclrtMemLocation = aclrtMemLocation()
    reserve: U64 = 0


class aclrtMemAccessDesc(WireModel):  # noqa: N801
    flags: I32 = 0  # aclrtMemAccessFlags
    location: aclrtMemLocation = aclrtMemLocation()


class aclmdlRICondTaskParams(WireModel):  # noqa: N801
    """aclmdlRIAddCondTask's params (passed by value in C). `modelRIArray` is the C array's address, only checked
    for NULL (0: 107000); from Python leave it out: the sub-models come back as the call's result."""

    handle: Handle = None  # aclmdlRICondHandle
    type: I32 = 0  # aclmdlRICondTaskType
    size: U32 = 0
    modelRIArray: Annotated[int | None, Field(ge=0, le=2**64 - 1)] = None  # noqa: N815


# exported flat by client.acl
STRUCTS: tuple[type[WireModel], ...] = (
    aclrtMemLocation,
    aclrtPhysicalMemProp,
    aclrtMemAccessDesc,
    aclmdlRICondTaskParams,
)


class RandomParaInfo(WireModel):
    """aclrtRandomParaInfo: a value (isAddr 0: the first `size` bytes of valueOrAddr) or a device address
    (isAddr 1) that the task reads when it runs."""

    isAddr: U8  # noqa: N815
    valueOrAddr: Annotated[list[U8], Field(min_length=8, max_length=8)]  # noqa: N815
    size: U8


class RandomNumFuncParaInfo(WireModel):
    """aclrtRandomNumFuncParaInfo; `paramInfo` is C's union as its two slots: dropoutRation, min or mean first,
    then max or stddev."""

    funcType: I32  # noqa: N815
    paramInfo: Annotated[list[RandomParaInfo], Field(min_length=2, max_length=2)]  # noqa: N815


class RandomNumTaskInfo(WireModel):
    """aclrtRandomNumTaskInfo (`proto.randomnum`), its reserved bytes left out."""

    dataType: I32  # noqa: N815
    randomNumFuncParaInfo: RandomNumFuncParaInfo  # noqa: N815
    randomParaAddr: Ptr  # noqa: N815
    randomResultAddr: Ptr  # noqa: N815
    randomCounterAddr: Ptr  # noqa: N815
    randomSeed: RandomParaInfo  # noqa: N815
    randomNum: RandomParaInfo  # noqa: N815


# -- aclmdlRI task parameters (aclmdlRITaskGetParams / aclmdlRITaskSetParams): introspection and editing --------


class aclrtLaunchKernelAttr(WireModel):  # noqa: N801
    """One launch attribute: `value` is the union aclrtLaunchKernelAttrValue's first 8 bytes, little-endian (the
    member of `id`: schemMode, dynUBufSize, isDataDump, timeout in s, timeoutUs as low | high << 32)."""

    id: I32 = 0
    value: U64 = 0


class aclrtLaunchKernelCfg(WireModel):  # noqa: N801
    attrs: list[aclrtLaunchKernelAttr] | None = None  # C: attrs + numAttrs; None: attrs NULL (107000)


class KernelPlaceHolder(WireModel):
    """A placeholder of an argument block: its 8-byte slot's offset and the data the slot points to."""

    offset: U32
    data: Bytes


class KernelArgsData(WireModel):
    """An aclrtArgsHandle as a launch carries it (`proto.kernelargs`): parameter bytes, 8-byte aligned each."""

    data: Bytes
    placeholders: list[KernelPlaceHolder] = []


class aclmdlRIKernelTaskParams(WireModel):  # noqa: N801
    """A kernel task's parameters. vnpu's kernels are aclnn kernels: `funcHandle` names the operator, `args`
    points to the task's device argument block holding its kernel description as JSON (`argsSize` bytes), or is
    those bytes (`isHostArgs`). `kernel` is vnpu's own: the description's wire form (GetParams fills it; given to
    SetParams it is the arguments, and args/argsSize are not needed). In Python: `params.desc` is the
    KernelDesc, and `params.desc = new` sets it."""

    funcHandle: Handle = 0  # noqa: N815
    cfg: aclrtLaunchKernelCfg | None = None
    args: Annotated[int | Bytes | None, Field(description="device pointer, or host bytes (isHostArgs)")] = 0
    isHostArgs: U32 = 0  # noqa: N815
    argsSize: U64 = 0  # noqa: N815
    numBlocks: U32 = 0  # noqa: N815
    kernel: dict[str, Any] | None = None

    @property
    def desc(self) -> KernelDesc | None:
        return None if self.kernel is None else KernelDesc.from_wire(self.kernel)

    @desc.setter
    def desc(self, value: KernelDesc) -> None:
        self.kernel = value.to_wire()


class aclmdlRIEventRecordTaskParams(WireModel):  # noqa: N801
    event: Handle = 0
    eventFlag: U32 = 0  # noqa: N815
    recordFlag: U32 = 0  # noqa: N815


class aclmdlRIEventWaitTaskParams(WireModel):  # noqa: N801
    event: Handle = 0
    eventFlag: U32 = 0  # noqa: N815
    waitFlag: U32 = 0  # noqa: N815


class aclmdlRIEventResetTaskParams(WireModel):  # noqa: N801
    event: Handle = 0
    eventFlag: U32 = 0  # noqa: N815
    resetFlag: U32 = 0  # noqa: N815


class aclmdlRIValueWriteTaskParams(WireModel):  # noqa: N801
    devAddr: Ptr = 0  # noqa: N815
    value: U64 = 0


class aclmdlRIValueWaitTaskParams(WireModel):  # noqa: N801
    devAddr: Ptr = 0  # noqa: N815
    value: U64 = 0
    flag: U32 = 0


class aclmdlRITaskParams(WireModel):  # noqa: N801
    """aclmdlRITaskParams: C's anonymous union is one member per arm; the one `type` names is the one read."""

    type: I32 = 0  # aclmdlRITaskType
    taskGrp: Handle = 0  # noqa: N815
    opInfoPtr: Ptr = 0  # noqa: N815
    opInfoSize: U64 = 0  # noqa: N815
    kernelTaskParams: aclmdlRIKernelTaskParams = aclmdlRIKernelTaskParams()  # noqa: N815
    eventRecordTaskParams: aclmdlRIEventRecordTaskParams = aclmdlRIEventRecordTaskParams()  # noqa: N815
    eventWaitTaskParams: aclmdlRIEventWaitTaskParams = aclmdlRIEventWaitTaskParams()  # noqa: N815
    eventResetTaskParams: aclmdlRIEventResetTaskParams = aclmdlRIEventResetTaskParams()  # noqa: N815
    valueWriteTaskParams: aclmdlRIValueWriteTaskParams = aclmdlRIValueWriteTaskParams()  # noqa: N815
    valueWaitTaskParams: aclmdlRIValueWaitTaskParams = aclmdlRIValueWaitTaskParams()  # noqa: N815


TASK_PARAMS_STRUCTS = (
    aclrtLaunchKernelAttr,
    aclrtLaunchKernelCfg,
    aclmdlRIKernelTaskParams,
    aclmdlRIEventRecordTaskParams,
    aclmdlRIEventWaitTaskParams,
    aclmdlRIEventResetTaskParams,
    aclmdlRIValueWriteTaskParams,
    aclmdlRIValueWaitTaskParams,
    aclmdlRITaskParams,
)
STRUCTS = STRUCTS + TASK_PARAMS_STRUCTS


class TdtItem(WireModel):
    """One data item of a TDT dataset as a channel carries it (acltdtDataItem's fields, its bytes included)."""

    tensorType: I32  # noqa: N815 - acltdtTensorType
    dims: list[I64]
    dataType: I32  # noqa: N815
    data: Bytes
    sliceNum: U64 = 0  # noqa: N815
    sliceId: U64 = 0  # noqa: N815


# a queue route on the wire: [src, dst], and with its status [src, dst, status]
RoutePair = Annotated[list[U32], Field(min_length=2, max_length=2)]
RouteStatus = Annotated[list[I64], Field(min_length=3, max_length=3)]


# the calls the runtime answers before aclInit (from the driver, with no ACL state): torch.npu.is_available() asks
# the device count first
BEFORE_INIT: Final = frozenset({"aclrtGetDeviceCount"})


@dataclass(frozen=True)
class Call:
    """One function of the table. `asynchronous`: a C call that only queues work (a launch, an async copy, an
    event record/wait/reset, an execute, an update step): it has no out-parameter, so a client may pipeline it."""

    name: str
    request: type[WireModel]
    result: type[WireModel]
    asynchronous: bool
    doc: str

    @cached_property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(self.request.model_fields)

    @cached_property
    def out_names(self) -> tuple[str, ...]:
        return tuple(self.result.model_fields)


def _model(name: str, fields: tuple[Arg, ...]) -> type[WireModel]:
    spec: dict[str, Any] = {n: (t, None if n == "configPath" else ...) for n, t in fields}
    return create_model(name, __base__=WireModel, **spec)


def call(name: str, *args: Arg, out: tuple[Arg, ...] = (), asynchronous: bool = False, doc: str = "") -> Call:
    return Call(name, _model(f"{name}Request", args), _model(f"{name}Result", out), asynchronous, doc)


LAUNCH: Final = call(
    "aclnnLaunch",
    ("workspace", Ptr),
    ("workspaceSize", U64),
    ("executor", Kernel),
    ("stream", Stream),
    asynchronous=True,
    doc="Phase 2 of an aclnn operator: queue the kernel that the executor describes on the stream.",
)
"""The one launch pattern of every operator's phase 2, `aclnn<Op>(workspace, workspaceSize, executor, stream)`:
its request and result models, shared by all (`launch_call`)."""


def launch_call(op: str) -> Call:
    """The phase-2 call `aclnn<op>` of an operator: the launch pattern under the operator's C name."""
    return Call(
        f"aclnn{op}",
        LAUNCH.request,
        LAUNCH.result,
        True,
        f"Phase 2 of aclnn{op}: queue the kernel that the executor describes on the stream.",
    )


_CALLS: tuple[Call, ...] = (
    # init and devices
    call("aclInit", ("configPath", str | None), doc="Initialise (refcounted); the config file is not read."),
    call("aclFinalize"),
    call("aclrtSetDevice", ("deviceId", I32)),
    call("aclrtResetDevice", ("deviceId", I32)),
    call("aclrtResetDeviceForce", ("deviceId", I32)),
    call("aclrtCreateContext", ("deviceId", I32), out=(("context", U64),)),
    call("aclrtDestroyContext", ("context", Handle)),
    call("aclrtSetCurrentContext", ("context", Handle)),
    call("aclrtGetCurrentContext", out=(("context", U64),)),
    call("aclrtCtxGetCurrentDefaultStream", out=(("stream", U64),)),
    call("aclrtGetDevice", out=(("deviceId", I32),)),
    call("aclrtGetDeviceCount", out=(("count", U32),)),
    call("aclrtSynchronizeDevice"),
    call("aclrtSynchronizeDeviceWithTimeout", ("timeout", I32)),
    call("aclrtGetDeviceInfo", ("deviceId", U32), ("attr", I32), out=(("value", I64),)),
    call("aclrtGetDeviceCapability", ("deviceId", I32), ("devFeatureType", I32), out=(("value", I32),)),
    call("aclGetDeviceCapability", ("deviceId", U32), ("deviceInfo", I32), out=(("value", I64),)),
    call("aclrtDeviceGetUuid", ("deviceId", I32), out=(("uuid", Bytes),), doc="The 16 bytes of aclrtUuid."),
    call("aclrtQueryDeviceStatus", ("deviceId", I32), out=(("deviceStatus", I32),)),
    call(
        "aclrtGetErrorVerbose",
        ("deviceId", I32),
        out=(("tryRepair", U32), ("hasDetail", U32), ("errorType", I32)),
        doc="The fields of aclrtErrorInfo (no detail: vnpu emulates no HBM or link faults).",
    ),
    call(
        "aclrtGetDeviceUtilizationRate",
        ("deviceId", I32),
        out=(
            ("cubeUtilization", I32),
            ("vectorUtilization", I32),
            ("aicpuUtilization", I32),
            ("memoryUtilization", I32),
        ),
        doc="The fields of aclrtUtilizationInfo; -1 where the device cannot say.",
    ),
    call("aclrtGetDeviceResLimit", ("deviceId", I32), ("type", I32), out=(("value", U32),)),
    call("aclrtSetDeviceResLimit", ("deviceId", I32), ("type", I32), ("value", U32)),
    call("aclrtResetDeviceResLimit", ("deviceId", I32)),
    call("aclrtGetResInCurrentThread", ("type", I32), out=(("value", U32),)),
    call("aclrtSetOpWaitTimeout", ("timeout", U32)),
    call("aclrtSetOpExecuteTimeOut", ("timeout", U32)),
    call("aclrtSetOpExecuteTimeOutWithMs", ("timeout", U32)),
    call("aclrtSetOpExecuteTimeOutV2", ("timeout", U64), out=(("actualTimeout", U64),)),
    call("aclrtSetSysParamOpt", ("opt", I32), ("value", I64)),
    call("aclrtGetSysParamOpt", ("opt", I32), out=(("value", I64),)),
    call("aclrtCtxSetSysParamOpt", ("opt", I32), ("value", I64)),
    call("aclrtCtxGetSysParamOpt", ("opt", I32), out=(("value", I64),)),
    call("aclrtDeviceCanAccessPeer", ("deviceId", I32), ("peerDeviceId", I32), out=(("canAccessPeer", I32),)),
    call("aclrtDeviceEnablePeerAccess", ("peerDeviceId", I32), ("flags", U32)),
    call("aclrtDeviceDisablePeerAccess", ("peerDeviceId", I32)),
    # memory
    call("aclrtMalloc", ("size", U64), ("policy", I32), out=(("devPtr", U64),)),
    call("aclrtMallocAlign32", ("size", U64), ("policy", I32), out=(("devPtr", U64),)),
    call("aclrtFree", ("devPtr", Ptr)),
    call("aclrtMallocHost", ("size", U64), out=(("hostPtr", U64),)),
    call("aclrtFreeHost", ("hostPtr", Ptr)),
    call("aclrtGetMemInfo", ("attr", I32), out=(("free", U64), ("total", U64))),
    # IPC memory, host registration, managed memory
    call(
        "aclrtIpcMemGetExportKey",
        ("devPtr", Ptr),
        ("size", U64),
        ("len", U64),
        ("flags", U64),
        out=(("key", str),),
        doc="The key, which must fit in len bytes with its NUL.",
    ),
    call("aclrtIpcMemSetImportPid", ("key", str | None), ("pid", list[I32] | None)),
    call("aclrtIpcMemImportByKey", ("key", str | None), ("flags", U64), out=(("devPtr", U64),)),
    call("aclrtIpcMemClose", ("key", str | None)),
    call("aclrtHostRegisterV2", ("ptr", Ptr), ("size", U64), ("flag", U32)),
    call("aclrtHostGetDevicePointer", ("pHost", Ptr), ("flag", U32), out=(("pDevice", U64),)),
    call("aclrtHostUnregister", ("ptr", Ptr)),
    call("aclrtMemAllocManaged", ("size", U64), ("flag", U32), out=(("ptr", U64),)),
    # virtual and physical memory (aclrtDrvMemHandle values are handles; shareable handles 64-bit values)
    call(
        "aclrtMemGetAllocationGranularity",
        ("prop", aclrtPhysicalMemProp | None),
        ("option", I32),
        out=(("granularity", U64),),
    ),
    call(
        "aclrtReserveMemAddress",
        ("size", U64),
        ("alignment", U64),
        ("expectPtr", Ptr),
        ("flags", U64),
        out=(("virPtr", U64),),
    ),
    call("aclrtReleaseMemAddress", ("virPtr", Ptr)),
    call(
        "aclrtMallocPhysical",
        ("size", U64),
        ("prop", aclrtPhysicalMemProp | None),
        ("flags", U64),
        out=(("handle", U64),),
    ),
    call("aclrtFreePhysical", ("handle", Handle)),
    call("aclrtMapMem", ("virPtr", Ptr), ("size", U64), ("offset", U64), ("handle", Handle), ("flags", U64)),
    call("aclrtUnmapMem", ("virPtr", Ptr)),
    call(
        "aclrtMemSetAccess",
        ("virPtr", Ptr),
        ("size", U64),
        ("desc", list[aclrtMemAccessDesc] | None),
        doc="desc: the count descriptors (the C count is the list's length).",
    ),
    call(
        "aclrtMemExportToShareableHandle",
        ("handle", Handle),
        ("handleType", I32),
        ("flags", U64),
        out=(("shareableHandle", U64),),
    ),
    call(
        "aclrtMemExportToShareableHandleV2",
        ("handle", Handle),
        ("flags", U64),
        ("shareType", I32),
        out=(("shareableHandle", Bytes),),
        doc="The bytes C finds behind shareableHandle (ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT: the 8-byte handle).",
    ),
    call("aclrtMemSetPidToShareableHandle", ("shareableHandle", U64), ("pid", list[I32] | None)),
    call("aclrtMemImportFromShareableHandle", ("shareableHandle", U64), ("deviceId", I32), out=(("handle", U64),)),
    call(
        "aclrtMemImportFromShareableHandleV2",
        ("shareableHandle", Bytes | None),
        ("shareType", I32),
        ("flags", U64),
        out=(("handle", U64),),
    ),
    call(
        "aclrtMemcpy",
        ("dst", Dst),
        ("destMax", U64),
        ("src", Src),
        ("count", U64),
        ("kind", I32),
        out=(("data", Data),),
    ),
    call(
        "aclrtMemcpyAsync",
        ("dst", Dst),
        ("destMax", U64),
        ("src", Src),
        ("count", U64),
        ("kind", I32),
        ("stream", Stream),
        out=(("data", Data),),
        asynchronous=True,
        doc="Queued copy; with pageable host memory the runtime makes it synchronous (the bytes come back), so a "
        "client pipelines it only when its destination is not pageable.",
    ),
    call("aclrtMemset", ("devPtr", Ptr), ("maxCount", U64), ("value", I32), ("count", U64)),
    call(
        "aclrtMemsetAsync",
        ("devPtr", Ptr),
        ("maxCount", U64),
        ("value", I32),
        ("count", U64),
        ("stream", Stream),
        asynchronous=True,
    ),
    call(
        "aclrtReduceAsync",
        ("dst", Ptr),
        ("src", Ptr),
        ("count", U64),
        ("kind", I32),
        ("type", I32),
        ("stream", Stream),
        ("reserve", Handle),
        asynchronous=True,
        doc="dst[i] = dst[i] op src[i] over count bytes of device memory (SUM, MAX, MIN).",
    ),
    call(
        "aclrtRandomNumAsync",
        ("taskInfo", RandomNumTaskInfo | None),
        ("stream", Stream),
        ("reserve", Handle),
        asynchronous=True,
        doc="randomNum random values of dataType (or a dropout bit mask) into device memory, from the seed and the "
        "16-byte device counter, which the task advances.",
    ),
    call("aclrtValueWrite", ("devAddr", Ptr), ("value", U64), ("flag", U32), ("stream", Stream), asynchronous=True),
    call("aclrtValueWait", ("devAddr", Ptr), ("value", U64), ("flag", U32), ("stream", Stream), asynchronous=True),
    # streams
    call("aclrtCreateStream", out=(("stream", U64),)),
    call("aclrtCreateStreamWithConfig", ("priority", U32), ("flag", U32), out=(("stream", U64),)),
    call("aclrtDestroyStream", ("stream", Stream)),
    call("aclrtDestroyStreamForce", ("stream", Stream)),
    call("aclrtSynchronizeStream", ("stream", Stream)),
    call("aclrtSynchronizeStreamWithTimeout", ("stream", Stream), ("timeout", I32)),
    call("aclrtStreamQuery", ("stream", Stream), out=(("status", I32),)),
    call("vnpuStreams", out=(("streams", list[U64]),), doc="The streams of this context, default ones included."),
    call("aclrtStreamGetId", ("stream", Stream), out=(("streamId", I32),)),
    call("aclrtStreamGetFlags", ("stream", Stream), out=(("flags", U32),)),
    call("aclrtStreamGetPriority", ("stream", Stream), out=(("priority", U32),)),
    call("aclrtGetThreadLastTaskId", out=(("taskId", U32),)),
    call("aclrtSetStreamFailureMode", ("stream", Stream), ("mode", U64)),
    call("aclrtStreamAbort", ("stream", Stream)),
    call("aclrtStreamStop", ("stream", Stream)),
    call(
        "aclrtSetStreamAttribute",
        ("stream", Stream),
        ("stmAttrType", I32),
        ("value", U64),
        doc="`value` is the union aclrtStreamAttrValue's member for the attribute: failureMode (64 bits) for "
        "ACL_STREAM_ATTR_FAILURE_MODE, the 32-bit one (the low 32 bits of `value`) for the others.",
    ),
    call(
        "aclrtGetStreamAttribute",
        ("stream", Stream),
        ("stmAttrType", I32),
        out=(("value", U64),),
        doc="The union aclrtStreamAttrValue's member for the attribute (see aclrtSetStreamAttribute).",
    ),
    # overflow detection (vnpu detects no overflow: the status stays zero)
    call("aclrtSetDeviceSatMode", ("mode", I32), doc="Recorded per process; kernels compute inf/NaN in any mode."),
    call("aclrtGetDeviceSatMode", out=(("mode", I32),)),
    call("aclrtSetStreamOverflowSwitch", ("stream", Stream), ("flag", U32)),
    call("aclrtGetStreamOverflowSwitch", ("stream", Stream), out=(("flag", U32),)),
    call(
        "aclrtGetOverflowStatus",
        ("outputAddr", Ptr),
        ("outputSize", U64),
        ("stream", Stream),
        asynchronous=True,
        doc="Queue the copy of the ACL context's 64 bytes of overflow status into device memory outputAddr.",
    ),
    call(
        "aclrtResetOverflowStatus",
        ("stream", Stream),
        asynchronous=True,
        doc="Queue the clearing of the ACL context's overflow status.",
    ),
    call(
        "aclrtGetFloatOverflowStatus",
        ("outputAddr", Ptr),
        ("outputSize", U64),
        ("stream", Stream),
        asynchronous=True,
        doc="aclrtGetOverflowStatus under its other name (a NULL outputAddr is 107000 here).",
    ),
    call("aclrtResetFloatOverflowStatus", ("stream", Stream), asynchronous=True, doc="aclrtResetOverflowStatus."),
    # events
    call("aclrtCreateEvent", out=(("event", U64),)),
    call("aclrtCreateEventWithFlag", ("flag", U32), out=(("event", U64),)),
    call("aclrtCreateEventExWithFlag", ("flag", U32), out=(("event", U64),)),
    call("aclrtDestroyEvent", ("event", Handle)),
    call("aclrtRecordEvent", ("event", Handle), ("stream", Stream), asynchronous=True),
    call("aclrtStreamWaitEvent", ("stream", Stream), ("event", Handle), asynchronous=True),
    call("aclrtStreamWaitEventWithTimeout", ("stream", Stream), ("event", Handle), ("timeout", I32), asynchronous=True),
    call("aclrtRecordEventWithFlag", ("event", Handle), ("stream", Stream), ("flag", U32), asynchronous=True),
    call(
        "aclrtStreamWaitEventWithFlag",
        ("stream", Stream),
        ("event", Handle),
        ("timeout", U32),
        ("flag", U32),
        asynchronous=True,
    ),
    call("aclrtResetEvent", ("event", Handle), ("stream", Stream), asynchronous=True),
    call("aclrtQueryEventStatus", ("event", Handle), out=(("status", I32),)),
    call("aclrtQueryEvent", ("event", Handle), out=(("status", I32),)),
    call("aclrtQueryEventWaitStatus", ("event", Handle), out=(("status", I32),)),
    call("aclrtSynchronizeEvent", ("event", Handle)),
    call("aclrtSynchronizeEventWithTimeout", ("event", Handle), ("timeout", I32)),
    call("aclrtEventElapsedTime", ("start", Handle), ("end", Handle), out=(("ms", float),)),
    call("aclrtEventGetTimestamp", ("event", Handle), out=(("timestamp", U64),)),
    call(
        "aclrtIpcGetEventHandle",
        ("event", Handle),
        out=(("handle", Bytes),),
        doc="The 64 bytes of aclrtIpcEventHandle: any context of the daemon may open them.",
    ),
    call("aclrtIpcOpenEventHandle", ("handle", Bytes), out=(("event", U64),)),
    # notifies
    call("aclrtCreateNotify", ("flag", U64), out=(("notify", U64),)),
    call("aclrtDestroyNotify", ("notify", Handle)),
    call("aclrtRecordNotify", ("notify", Handle), ("stream", Stream), asynchronous=True),
    call("aclrtWaitAndResetNotify", ("notify", Handle), ("stream", Stream), ("timeout", U32), asynchronous=True),
    call(
        "aclrtNotifyGetExportKey",
        ("notify", Handle),
        ("len", U64),
        ("flags", U64),
        out=(("key", str),),
        doc="The key another process imports the notify by; len is the size of the C key buffer.",
    ),
    call("aclrtNotifySetImportPid", ("notify", Handle), ("pid", list[I32])),
    call("aclrtNotifyImportByKey", ("key", str), ("flags", U64), out=(("notify", U64),)),
    call("aclrtGetNotifyId", ("notify", Handle), out=(("notifyId", U32),)),
    # TDT channels and queues (device objects; data items, datasets, attributes and route lists are host objects)
    call(
        "acltdtCreateChannelWithCapacity",
        ("deviceId", U32),
        ("name", str | None),
        ("capacity", U64),
        out=(("handle", U64),),
        doc="A channel of `capacity` datasets on the device, by name (a second create of the name joins it).",
    ),
    call(
        "acltdtCreateChannel",
        ("deviceId", U32),
        ("name", str | None),
        out=(("handle", U64),),
        doc="A channel of the legacy TDT kind: its send and receive take timeout -1 only.",
    ),
    call("acltdtStopChannel", ("handle", Handle)),
    call("acltdtCleanChannel", ("handle", Handle)),
    call("acltdtDestroyChannel", ("handle", Handle)),
    call(
        "acltdtSendTensor",
        ("handle", Handle),
        ("name", str),
        ("items", list[TdtItem]),
        ("timeout", I32),
        doc="Put one dataset (its name and items) in the channel; a full channel waits up to timeout ms (-1: "
        "forever, 0: not at all), then ACL_ERROR_RT_QUEUE_FULL.",
    ),
    call(
        "acltdtReceiveTensor",
        ("handle", Handle),
        ("timeout", I32),
        out=(("name", str), ("items", list[TdtItem])),
        doc="Take the oldest dataset; an empty channel waits up to timeout ms, then ACL_ERROR_RT_QUEUE_EMPTY.",
    ),
    call("acltdtQueryChannelSize", ("handle", Handle), out=(("size", U64),)),
    call(
        "acltdtCreateQueue",
        ("name", str),
        ("depth", U32),
        out=(("qid", U32),),
        doc="A queue of the current device with the attributes' name ('' : one is made up) and depth.",
    ),
    call("acltdtDestroyQueue", ("qid", U32)),
    call(
        "acltdtEnqueueData",
        ("qid", U32),
        ("data", Bytes),
        ("userData", Bytes),
        ("timeout", I32),
        ("rsv", U32),
        doc="The data and its user data as one entry of the queue; a full queue waits up to timeout ms.",
    ),
    call(
        "acltdtDequeueData",
        ("qid", U32),
        ("dataSize", U64),
        ("userDataSize", U64),
        ("timeout", I32),
        out=(("data", Bytes), ("retDataSize", U64), ("userData", Bytes)),
        doc="The oldest entry (it must fit in dataSize bytes) and up to userDataSize bytes of its user data.",
    ),
    call(
        "acltdtBindQueueRoutes",
        ("routes", list[RoutePair]),
        out=(("status", list[I32]),),
        doc="Bind each (src, dst) route; the status of each comes back (ACL_TDT_QUEUE_ROUTE_BIND when bound).",
    ),
    call("acltdtUnbindQueueRoutes", ("routes", list[RoutePair]), out=(("status", list[I32]),)),
    call(
        "acltdtQueryQueueRoutes",
        ("mode", I32),
        ("srcId", U32 | None),
        ("dstId", U32 | None),
        out=(("routes", list[RouteStatus]),),
        doc="The bound routes of the current device that match the query: (src, dst, status) each.",
    ),
    # callbacks and host functions (the vnpu* calls are the client's half: `client.callbacks`)
    call("aclrtSubscribeReport", ("threadId", U64), ("stream", Stream)),
    call("aclrtUnSubscribeReport", ("threadId", U64), ("stream", Stream)),
    call(
        "aclrtLaunchCallback",
        ("fn", Handle),
        ("userData", Handle),
        ("blockType", I32),
        ("stream", Stream),
        doc="fn and userData are opaque to the daemon: it hands them back to the subscribed thread. Not "
        "pipelined: its subscription errors come back from the call itself, as programs check them.",
    ),
    call("aclrtLaunchHostFunc", ("stream", Stream), ("fn", Handle), ("args", Handle), doc="Not pipelined either."),
    call(
        "vnpuTakeReports",
        ("timeout", I32),
        out=(("reports", list[DueCallback]),),
        doc="aclrtProcessReport's wait: the callbacks due for the calling thread; 507012 when none is due within "
        "timeout ms (-1: forever).",
    ),
    call(
        "vnpuTakeHostFuncs",
        ("timeout", I32),
        out=(("reports", list[DueCallback]),),
        doc="The host functions due for the calling process, as vnpuTakeReports gives callbacks.",
    ),
    call("vnpuCallbackDone", ("callbackId", U64), doc="A blocking callback's function returned: its stream goes on."),
    # capture and task update
    call("aclmdlRICaptureBegin", ("stream", Stream), ("mode", I32)),
    call("aclmdlRICaptureGetInfo", ("stream", Stream), out=(("status", I32), ("modelRI", U64))),
    call("aclmdlRICaptureEnd", ("stream", Stream), out=(("modelRI", U64),)),
    call("aclmdlRICaptureThreadExchangeMode", ("mode", I32), out=(("mode", I32),)),
    call("aclmdlRICaptureTaskGrpBegin", ("stream", Stream)),
    call("aclmdlRICaptureTaskGrpEnd", ("stream", Stream), out=(("handle", U64),)),
    call("aclmdlRICaptureTaskUpdateBegin", ("stream", Stream), ("handle", Handle), asynchronous=True),
    call("aclmdlRICaptureTaskUpdateEnd", ("stream", Stream), asynchronous=True),
    # models
    call("aclmdlRIExecuteAsync", ("modelRI", Handle), ("stream", Stream), asynchronous=True),
    call("aclmdlRIExecute", ("modelRI", Handle), ("timeout", I32)),
    call(
        "aclmdlRIDestroy",
        ("modelRI", Handle),
        out=(("callbacks", list[DestroyCallback]),),
        doc="The destroy callbacks registered on the model, ordered by func: the client calls each func(userData) "
        "on the destroying thread (C has no out-parameter).",
    ),
    call("aclmdlRIDebugPrint", ("modelRI", Handle), out=(("text", str),), doc="Returns the dump as text."),
    call(
        "aclmdlRIDebugJsonPrint",
        ("modelRI", Handle),
        ("path", str | None),
        ("flags", U32),
        out=(("trace", str),),
        doc="Returns the chrome-trace JSON; the client writes it to `path`.",
    ),
    # Build API: a model from bound persistent streams, and its stream-control tasks (not pipelined: build time)
    call("aclmdlRIBuildBegin", ("flag", U32), out=(("modelRI", U64),)),
    call("aclmdlRIBindStream", ("modelRI", Handle), ("stream", Stream), ("flag", U32)),
    call("aclmdlRIEndTask", ("modelRI", Handle), ("stream", Stream)),
    call("aclmdlRIBuildEnd", ("modelRI", Handle), ("reserve", Ptr)),
    call("aclmdlRIUnbindStream", ("modelRI", Handle), ("stream", Stream)),
    call("aclrtActiveStream", ("activeStream", Stream), ("stream", Stream)),
    call(
        "aclrtSwitchStream",
        ("leftValue", Ptr),
        ("cond", I32),
        ("rightValue", Ptr),
        ("dataType", I32),
        ("trueStream", Stream),
        ("falseStream", Stream),
        ("stream", Stream),
        doc="Compares *leftValue and *rightValue (int32 or int64) when the task runs; falseStream must be NULL.",
    ),
    # labels: jump targets inside a Build model (breadth spec 7.3; not pipelined: build time)
    call("aclrtCreateLabel", out=(("label", U64),)),
    call("aclrtDestroyLabel", ("label", Handle)),
    call(
        "aclrtCreateLabelList",
        ("labels", list[Handle] | None),
        ("num", U64),
        out=(("labelList", U64),),
        doc="labels: the label handles (null: NULL); num: C's count, checked first (0 < num <= 65535), then it "
        "must be len(labels). The list is device memory (16 bytes a label), freed by aclrtDestroyLabelList.",
    ),
    call("aclrtDestroyLabelList", ("labelList", Ptr)),
    call("aclrtSetLabel", ("label", Handle), ("stream", Stream)),
    call(
        "aclrtSwitchLabelByIndex",
        ("ptr", Ptr),
        ("maxValue", U32),
        ("labelList", Ptr),
        ("stream", Stream),
        doc="Reads the uint32 index at ptr when the task runs; an index not below maxValue takes maxValue - 1.",
    ),
    # conditional models (IF / WHILE / SWITCH: modelri spec 4)
    call(
        "aclmdlRICondHandleCreate",
        ("modelRI", Handle),
        ("defaultLaunchValue", U32),
        ("flag", U32),
        out=(("handle", U64),),
    ),
    call("aclmdlRICondHandleGetCondPtr", ("handle", Handle), out=(("ptr", U64),)),
    call(
        "aclmdlRIAddCondTask",
        ("params", aclmdlRICondTaskParams | None),
        ("stream", Stream),
        ("flags", U32),
        out=(("modelRIArray", list[U64]),),
        doc="Returns the `size` sub-models (C: written into params.modelRIArray).",
    ),
    call("aclmdlRICaptureToModelRIBegin", ("stream", Stream), ("modelRI", Handle), ("mode", I32)),
    call(
        "vnpuCaptureEndNoModel",
        ("stream", Stream),
        doc="aclmdlRICaptureEnd(stream, NULL) from C: ends a sub-model's capture; for a root model's capture 107000 "
        "and the capture goes on.",
    ),
    # aclmdlRI introspection and editing (spec-modelri 3)
    call(
        "aclmdlRIGetStreams",
        ("modelRI", Handle),
        ("streams", bool),
        ("numStreams", U32 | None),
        out=(("streams", list[U64]), ("numStreams", U32)),
        doc="streams: whether C passes an array (False: NULL, the count only); numStreams: its length (null: NULL).",
    ),
    call(
        "aclmdlRIGetTasksByStream",
        ("stream", Handle),
        ("tasks", bool),
        ("numTasks", U32 | None),
        out=(("tasks", list[U64]), ("numTasks", U32)),
        doc="tasks: whether C passes an array (False: NULL, the count only); numTasks: its length (null: NULL).",
    ),
    call("aclmdlRITaskGetType", ("task", Handle), out=(("type", I32),)),
    call("aclmdlRITaskGetSeqId", ("task", Handle), out=(("id", U32),)),
    call("aclmdlRITaskGetParams", ("task", Handle), out=(("params", aclmdlRITaskParams),)),
    call("aclmdlRITaskSetParams", ("task", Handle), ("params", aclmdlRITaskParams | None)),
    call("aclmdlRITaskDisable", ("task", Handle)),
    call(
        "aclmdlRIKernelTaskGetAttribute",
        ("task", Handle),
        ("attrId", I32),
        out=(("attrValue", U64),),
        doc="attrValue: the union aclrtLaunchKernelAttrValue's first 8 bytes (see aclrtLaunchKernelAttr).",
    ),
    call("aclmdlRIUpdate", ("modelRI", Handle)),
    # models: names, ids, abort, destroy callbacks (modelri spec 5)
    call("aclmdlRISetName", ("modelRI", Handle), ("name", str | None)),
    call(
        "aclmdlRIGetName",
        ("modelRI", Handle),
        ("maxLen", U32),
        out=(("name", str),),
        doc="maxLen is the size of the C buffer, which must hold the name and its NUL (507000 otherwise).",
    ),
    call("aclmdlRIGetId", ("modelRI", Handle), out=(("modelRIId", U32),)),
    call("aclmdlRIAbort", ("modelRI", Handle)),
    call(
        "aclmdlRIDestroyRegisterCallback",
        ("modelRI", Handle),
        ("func", Handle),
        ("userData", Handle),
        doc="func and userData are opaque to the daemon: aclmdlRIDestroy hands them back to the client.",
    ),
    call("aclmdlRIDestroyUnregisterCallback", ("modelRI", Handle), ("func", Handle)),
    # custom kernels: numpy implementations registered by name (server.npu.kernels, docs/kernels.md)
    call(
        "aclrtBinaryLoadFromData",
        ("data", Bytes),
        ("options", Handle),
        out=(("binHandle", U64),),
        doc="A kernel binary (ascendc_fatbin_library's file lists its kernels); options are accepted and ignored. "
        "aclrtBinaryLoadFromFile is this call on the file's bytes, read by the client.",
    ),
    call("aclrtBinaryGetFunction", ("binHandle", Handle), ("kernelName", str | None), out=(("funcHandle", U64),)),
    call("aclrtBinaryUnLoad", ("binHandle", Handle)),
    call(
        "aclrtLaunchKernel",
        ("funcHandle", Handle),
        ("numBlocks", U32),
        ("argsData", Bytes | None),
        ("stream", Stream),
        asynchronous=True,
        doc="argsData: the argument block's bytes (each argument at an 8-byte boundary).",
    ),
    call(
        "aclrtLaunchKernelWithConfig",
        ("funcHandle", Handle),
        ("numBlocks", U32),
        ("stream", Stream),
        ("cfg", aclrtLaunchKernelCfg | None),
        ("argsHandle", KernelArgsData | None),
        ("reserve", Handle),
        asynchronous=True,
        doc="argsHandle: the aclrtArgsHandle's parameters and placeholders (the client builds it on the host).",
    ),
    # markers (mstx, msproftx) into the trace: the client numbers ranges, so none waits for a reply
    call(
        "vnpuMarkerMark",
        ("message", str),
        ("domain", str | None),
        ("stream", Stream),
        asynchronous=True,
        doc="An instant marker on the calling thread's lane of the trace (mstxMarkA, aclprofMark).",
    ),
    call(
        "vnpuMarkerRangeStart",
        ("rangeId", U64),
        ("message", str),
        ("domain", str | None),
        ("stream", Stream),
        asynchronous=True,
        doc="A range marker starts (mstxRangeStartA, aclprofRangeStart); the client chose its id.",
    ),
    call(
        "vnpuMarkerRangeEnd",
        ("rangeId", U64),
        asynchronous=True,
        doc="The range `rangeId` ends and becomes a slice of the trace; an id not open is dropped.",
    ),
    call(
        "vnpuLaunchKernel",
        ("kernelName", str | None),
        ("numBlocks", U32),
        ("stream", Stream),
        ("args", Bytes),
        asynchronous=True,
        doc="A `Name<<<numBlocks, nullptr, stream>>>(args...)` launch, as ascendc_library's stubs make it.",
    ),
    call(
        "vnpuTakePrinted",
        out=(("text", str),),
        doc="What the process's kernels printed (AscendC::printf) since the last call, in stream order.",
    ),
    # aclnn phase 1 for a client that keeps no copy of the operator rules (the native toolkit)
    call(
        "vnpuWorkspaceSize",
        ("op", str),
        ("args", dict[str, Any]),
        out=(("workspaceSize", U64),),
        doc='Phase 1 of an operator (`op`: "Add") over its arguments in the kernel description\'s wire form: the '
        "workspace size, or the phase-1 call's error (161001/161002), by the same rules as the Python client's. "
        "A client remembers the answer for a repeated description.",
    ),
    # vnpu's own: pinned host memory seen from a remote client
    call(
        "vnpuHostWrite",
        ("hostPtr", Ptr),
        ("data", Bytes),
        doc="Write bytes into an aclrtMallocHost buffer (what host code does with a plain store).",
    ),
    call(
        "vnpuHostRead", ("hostPtr", Ptr), ("count", U64), out=(("data", Bytes),), doc="Read an aclrtMallocHost buffer."
    ),
    call(
        "vnpuHostInfo",
        ("hostPtr", Ptr),
        out=(("name", str), ("size", U64)),
        doc="The shared-memory segment behind an aclrtMallocHost buffer, for zero-copy mapping on the same machine.",
    ),
)


class CallTable(dict[str, Call]):
    """The table by C name: the ACL functions, and the phase 2 of every declared aclnn operator, resolved through
    the operator registry (`proto.aclnn.OPS`) when asked for by name. Iterating gives the functions only: the
    ~1,200 launches are one pattern (`LAUNCH`), not rows."""

    def get(self, name: str, default: Call | None = None) -> Call | None:  # type: ignore[override]
        found = dict.get(self, name)
        if found is not None:
            return found
        return _launch(name) or default

    def __getitem__(self, name: str) -> Call:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None


_LAUNCHES: dict[str, Call] = {}


def _launch(name: str) -> Call | None:
    """The phase-2 call `name` ("aclnnAdd") of a declared operator, made once; None for any other name."""
    if not name.startswith("aclnn") or name[5:] not in OPS:
        return None
    made = _LAUNCHES.get(name)
    if made is None:
        made = _LAUNCHES[name] = launch_call(name[5:])
    return made


def is_launch(name: str) -> bool:
    """Whether `name` is an operator's phase 2 (`aclnn<Op>` of a declared operator)."""
    return _launch(name) is not None


CALLS: Final = CallTable({c.name: c for c in _CALLS})
"""The table, by C name."""
