"""Which arguments and results of the call table are C enums: the OpenAPI page shows their names and values.

The wire carries enums as plain integers (the device checks them and answers the runtime's own code); this
table only says which C enum of `proto.constants` each integer is, as the C prototype does. A test checks it
against the toolkit's headers (tests/capi/test_callenums_headers.py).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final

from proto import constants as c

ENUM_ARGS: Final[dict[str, dict[str, type[IntEnum]]]] = {
    # arguments and results of calls, by C name, then parameter name (a result: the out-parameter's name)
    "aclrtGetDeviceInfo": {"attr": c.aclrtDevAttr},
    "aclGetDeviceCapability": {"deviceInfo": c.aclDeviceInfo},
    "aclrtGetDeviceCapability": {"devFeatureType": c.aclrtDevFeatureType},
    "aclrtQueryDeviceStatus": {"deviceStatus": c.aclrtDeviceStatus},
    "aclrtGetErrorVerbose": {"errorType": c.aclrtErrorType},
    "aclrtGetDeviceResLimit": {"type": c.aclrtDevResLimitType},
    "aclrtSetDeviceResLimit": {"type": c.aclrtDevResLimitType},
    "aclrtGetResInCurrentThread": {"type": c.aclrtDevResLimitType},
    "aclrtMalloc": {"policy": c.aclrtMemMallocPolicy},
    "aclrtMallocAlign32": {"policy": c.aclrtMemMallocPolicy},
    **{name: {"opt": c.aclSysParamOpt} for name in ("aclrtSetSysParamOpt", "aclrtGetSysParamOpt")},
    **{name: {"opt": c.aclSysParamOpt} for name in ("aclrtCtxSetSysParamOpt", "aclrtCtxGetSysParamOpt")},
    "aclrtGetMemInfo": {"attr": c.aclrtMemAttr},
    "aclrtMemGetAllocationGranularity": {"option": c.aclrtMemGranularityOptions},
    "aclrtMemExportToShareableHandle": {"handleType": c.aclrtMemHandleType},
    "aclrtMemExportToShareableHandleV2": {"shareType": c.aclrtMemSharedHandleType},
    "aclrtMemImportFromShareableHandleV2": {"shareType": c.aclrtMemSharedHandleType},
    "aclrtMemcpy": {"kind": c.aclrtMemcpyKind},
    "aclrtMemcpyAsync": {"kind": c.aclrtMemcpyKind},
    "aclrtReduceAsync": {"kind": c.aclrtReduceKind, "type": c.aclDataType},
    "aclrtStreamQuery": {"status": c.aclrtStreamStatus},
    "aclrtSetStreamAttribute": {"stmAttrType": c.aclrtStreamAttr},
    "aclrtGetStreamAttribute": {"stmAttrType": c.aclrtStreamAttr},
    "aclrtSetDeviceSatMode": {"mode": c.aclrtFloatOverflowMode},
    "aclrtGetDeviceSatMode": {"mode": c.aclrtFloatOverflowMode},
    "aclrtQueryEventStatus": {"status": c.aclrtEventRecordedStatus},
    "aclrtQueryEvent": {"status": c.aclrtEventStatus},
    "aclrtQueryEventWaitStatus": {"status": c.aclrtEventWaitStatus},
    "aclrtLaunchCallback": {"blockType": c.aclrtCallbackBlockType},
    "aclmdlRICaptureBegin": {"mode": c.aclmdlRICaptureMode},
    "aclmdlRICaptureGetInfo": {"status": c.aclmdlRICaptureStatus},
    "aclmdlRICaptureThreadExchangeMode": {"mode": c.aclmdlRICaptureMode},
    "aclrtSwitchStream": {"cond": c.aclrtCondition, "dataType": c.aclrtCompareDataType},
    "aclmdlRICondHandleCreate": {"flag": c.aclmdlRICondHandleFlag},
    "aclmdlRICaptureToModelRIBegin": {"mode": c.aclmdlRICaptureMode},
    "aclmdlRITaskGetType": {"type": c.aclmdlRITaskType},
    "aclmdlRIKernelTaskGetAttribute": {"attrId": c.aclrtLaunchKernelAttrId},
    # fields of the C structs the calls take, by struct name
    "aclrtMemLocation": {"type": c.aclrtMemLocationType},
    "aclrtPhysicalMemProp": {
        "handleType": c.aclrtMemHandleType,
        "allocationType": c.aclrtMemAllocationType,
        "memAttr": c.aclrtMemAttr,
    },
    "aclrtMemAccessDesc": {"flags": c.aclrtMemAccessFlags},
    "aclmdlRICondTaskParams": {"type": c.aclmdlRICondTaskType},
    "RandomNumTaskInfo": {"dataType": c.aclDataType},
    "RandomNumFuncParaInfo": {"funcType": c.aclrtRandomNumFuncType},
    "aclrtLaunchKernelAttr": {"id": c.aclrtLaunchKernelAttrId},
    "aclmdlRITaskParams": {"type": c.aclmdlRITaskType},
}

FLAGS: Final[frozenset[type[IntEnum]]] = frozenset({c.aclrtMemMallocPolicy})
"""Enums whose members combine (a policy with memory-type bits): any combination is a value, not only a member."""
