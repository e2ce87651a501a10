"""The aclnn operator API on the host: host objects, operator declarations, phase 1, kernel descriptions.

As in CANN, tensors, scalars, int arrays and executors are host objects and phase 1
(`aclnnXxxGetWorkspaceSize`) runs on the host: the client gets the real runtime's errors at once, with no
round trip. Phase 2 carries the executor's `KernelDesc`; the device runs `revalidate` on it (the same
declaration's checks) and then a numpy kernel from `server.npu.ops`. Pure standard library: no numpy here.
"""

from proto.aclnn.decl import Arg, ArgKind, OpDecl
from proto.aclnn.executor import aclDestroyAclOpExecutor, aclOpExecutor, aclSetAclOpExecutorRepeatable, consume
from proto.aclnn.host import (
    aclCreateIntArray,
    aclCreateScalar,
    aclCreateTensor,
    aclDestroyIntArray,
    aclDestroyScalar,
    aclDestroyTensor,
    aclIntArray,
    aclScalar,
    aclTensor,
)
from proto.aclnn.kernel import KernelDesc
from proto.aclnn.ops import DECLS
from proto.aclnn.phase1 import (
    aclnnAbsGetWorkspaceSize,
    aclnnAddGetWorkspaceSize,
    aclnnAddsGetWorkspaceSize,
    aclnnCastGetWorkspaceSize,
    aclnnDivGetWorkspaceSize,
    aclnnExpGetWorkspaceSize,
    aclnnGeluGetWorkspaceSize,
    aclnnInplaceAddGetWorkspaceSize,
    aclnnInplaceCopyGetWorkspaceSize,
    aclnnInplaceMulGetWorkspaceSize,
    aclnnMatmulGetWorkspaceSize,
    aclnnMeanGetWorkspaceSize,
    aclnnMulGetWorkspaceSize,
    aclnnMulsGetWorkspaceSize,
    aclnnNegGetWorkspaceSize,
    aclnnReduceSumGetWorkspaceSize,
    aclnnReluGetWorkspaceSize,
    aclnnSiluGetWorkspaceSize,
    aclnnSoftmaxGetWorkspaceSize,
    aclnnSubGetWorkspaceSize,
    aclnnSubsGetWorkspaceSize,
    get_workspace_size,
    revalidate,
)
from proto.aclnn.registry import OPS

__all__ = [
    "DECLS",
    "OPS",
    "Arg",
    "ArgKind",
    "KernelDesc",
    "OpDecl",
    "aclCreateIntArray",
    "aclCreateScalar",
    "aclCreateTensor",
    "aclDestroyAclOpExecutor",
    "aclDestroyIntArray",
    "aclDestroyScalar",
    "aclDestroyTensor",
    "aclIntArray",
    "aclOpExecutor",
    "aclScalar",
    "aclSetAclOpExecutorRepeatable",
    "aclTensor",
    "aclnnAbsGetWorkspaceSize",
    "aclnnAddGetWorkspaceSize",
    "aclnnAddsGetWorkspaceSize",
    "aclnnCastGetWorkspaceSize",
    "aclnnDivGetWorkspaceSize",
    "aclnnExpGetWorkspaceSize",
    "aclnnGeluGetWorkspaceSize",
    "aclnnInplaceAddGetWorkspaceSize",
    "aclnnInplaceCopyGetWorkspaceSize",
    "aclnnInplaceMulGetWorkspaceSize",
    "aclnnMatmulGetWorkspaceSize",
    "aclnnMeanGetWorkspaceSize",
    "aclnnMulGetWorkspaceSize",
    "aclnnMulsGetWorkspaceSize",
    "aclnnNegGetWorkspaceSize",
    "aclnnReduceSumGetWorkspaceSize",
    "aclnnReluGetWorkspaceSize",
    "aclnnSiluGetWorkspaceSize",
    "aclnnSoftmaxGetWorkspaceSize",
    "aclnnSubGetWorkspaceSize",
    "aclnnSubsGetWorkspaceSize",
    "consume",
    "get_workspace_size",
    "revalidate",
]
