"""The aclnn operator API on the host: host objects, operator declarations, phase 1, kernel descriptions.

As in CANN, tensors, scalars, int arrays, lists and executors are host objects and phase 1
(`aclnnXxxGetWorkspaceSize`) runs on the host: the client gets the real runtime's errors at once, with no
round trip. Phase 2 carries the executor's `KernelDesc`; the device runs `revalidate` on it (the same
declaration's checks) and then a numpy kernel from `server.npu.ops`. Pure standard library: no numpy here.

Every public operator of CANN is declared (`OPS`, from `proto.aclnn.catalog`); `aclnn<Op>GetWorkspaceSize` of
any of them is an attribute of this module, made on first use (importing the package reads no catalog).
"""

from typing import Any

from proto.aclnn.decl import Arg, ArgKind, OpDecl
from proto.aclnn.executor import aclDestroyAclOpExecutor, aclOpExecutor, aclSetAclOpExecutorRepeatable, consume
from proto.aclnn.host import (
    aclCreateIntArray,
    aclCreateScalar,
    aclCreateTensor,
    aclDestroyIntArray,
    aclDestroyScalar,
    aclDestroyTensor,
    aclGetDataType,
    aclGetFormat,
    aclGetIntArraySize,
    aclGetStorageShape,
    aclGetViewOffset,
    aclGetViewShape,
    aclGetViewStrides,
    aclIntArray,
    aclScalar,
    aclTensor,
)
from proto.aclnn.hostlist import (
    aclBoolArray,
    aclCreateBoolArray,
    aclCreateFloatArray,
    aclCreateScalarList,
    aclCreateTensorList,
    aclDestroyBoolArray,
    aclDestroyFloatArray,
    aclDestroyScalarList,
    aclDestroyTensorList,
    aclFloatArray,
    aclGetBoolArraySize,
    aclGetFloatArraySize,
    aclGetScalarListSize,
    aclGetTensorListSize,
    aclScalarList,
    aclTensorList,
)
from proto.aclnn.kernel import KernelDesc
from proto.aclnn.ops import RULES, decls
from proto.aclnn.phase1 import function, get_workspace_size, revalidate
from proto.aclnn.registry import OPS

HOST_FUNCTIONS = (
    "aclCreateTensor",
    "aclCreateScalar",
    "aclCreateIntArray",
    "aclCreateFloatArray",
    "aclCreateBoolArray",
    "aclCreateTensorList",
    "aclCreateScalarList",
    "aclDestroyTensor",
    "aclDestroyScalar",
    "aclDestroyIntArray",
    "aclDestroyFloatArray",
    "aclDestroyBoolArray",
    "aclDestroyTensorList",
    "aclDestroyScalarList",
    "aclGetViewShape",
    "aclGetStorageShape",
    "aclGetViewStrides",
    "aclGetViewOffset",
    "aclGetFormat",
    "aclGetDataType",
    "aclGetIntArraySize",
    "aclGetFloatArraySize",
    "aclGetBoolArraySize",
    "aclGetTensorListSize",
    "aclGetScalarListSize",
    "aclSetAclOpExecutorRepeatable",
    "aclDestroyAclOpExecutor",
)
"""The host-object functions of `aclnn/acl_meta.h` vnpu has, under their C names."""


def __getattr__(name: str) -> Any:
    """`aclnn<Op>GetWorkspaceSize` of any declared operator; `DECLS`, the 21 operators vnpu had first."""
    if name == "DECLS":
        return decls()
    found = function(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return found


__all__ = [
    "HOST_FUNCTIONS",
    "OPS",
    "RULES",
    "Arg",
    "ArgKind",
    "KernelDesc",
    "OpDecl",
    "aclBoolArray",
    "aclCreateBoolArray",
    "aclCreateFloatArray",
    "aclCreateIntArray",
    "aclCreateScalar",
    "aclCreateScalarList",
    "aclCreateTensor",
    "aclCreateTensorList",
    "aclDestroyAclOpExecutor",
    "aclDestroyBoolArray",
    "aclDestroyFloatArray",
    "aclDestroyIntArray",
    "aclDestroyScalar",
    "aclDestroyScalarList",
    "aclDestroyTensor",
    "aclDestroyTensorList",
    "aclFloatArray",
    "aclGetBoolArraySize",
    "aclGetDataType",
    "aclGetFloatArraySize",
    "aclGetFormat",
    "aclGetIntArraySize",
    "aclGetScalarListSize",
    "aclGetStorageShape",
    "aclGetTensorListSize",
    "aclGetViewOffset",
    "aclGetViewShape",
    "aclGetViewStrides",
    "aclIntArray",
    "aclOpExecutor",
    "aclScalar",
    "aclScalarList",
    "aclSetAclOpExecutorRepeatable",
    "aclTensor",
    "aclTensorList",
    "consume",
    "function",
    "get_workspace_size",
    "revalidate",
]
