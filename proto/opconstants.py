"""The enums of the legacy single-operator headers (`acl/acl_op.h`, `acl/acl_op_compiler.h`) and of HCCL
(`hccl/hccl_types.h`), under their exact C names and values.

Sources: `inc/external/acl/acl_op.h` and `acl_op_compiler.h` of GitHub `hicann/ge`; `include/hccl/hccl_types.h` of
`hicann/hcomm`. `proto.constants` takes them in (its `ENUMS` and flat names), so the toolkit's headers and Python
see one set of values.
"""

from __future__ import annotations

from enum import IntEnum


class aclopEngineType(IntEnum):  # noqa: N801 - acl_op.h: which engine a legacy operator runs on
    ACL_ENGINE_SYS = 0
    ACL_ENGINE_AICORE = 1
    ACL_ENGINE_VECTOR = 2


class aclopCompileType(IntEnum):  # noqa: N801 - acl_op_compiler.h
    ACL_COMPILE_SYS = 0
    ACL_COMPILE_UNREGISTERED = 1


class aclCompileOpt(IntEnum):  # noqa: N801 - aclSetCompileopt / aclGetCompileopt
    ACL_PRECISION_MODE = 0
    ACL_AICORE_NUM = 1
    ACL_AUTO_TUNE_MODE = 2
    ACL_OP_SELECT_IMPL_MODE = 3
    ACL_OPTYPELIST_FOR_IMPLMODE = 4
    ACL_OP_DEBUG_LEVEL = 5
    ACL_DEBUG_DIR = 6
    ACL_OP_COMPILER_CACHE_MODE = 7
    ACL_OP_COMPILER_CACHE_DIR = 8
    ACL_OP_PERFORMANCE_MODE = 9
    ACL_OP_JIT_COMPILE = 10
    ACL_OP_DETERMINISTIC = 11
    ACL_CUSTOMIZE_DTYPES = 12
    ACL_OP_PRECISION_MODE = 13
    ACL_ALLOW_HF32 = 14
    ACL_PRECISION_MODE_V2 = 15
    ACL_OP_DEBUG_OPTION = 16


class aclOpCompileFlag(IntEnum):  # noqa: N801 - aclopSetCompileFlag
    ACL_OP_COMPILE_DEFAULT = 0
    ACL_OP_COMPILE_FUZZ = 1


class HcclResult(IntEnum):
    HCCL_SUCCESS = 0
    HCCL_E_PARA = 1
    HCCL_E_PTR = 2
    HCCL_E_MEMORY = 3
    HCCL_E_INTERNAL = 4
    HCCL_E_NOT_SUPPORT = 5
    HCCL_E_NOT_FOUND = 6
    HCCL_E_UNAVAIL = 7
    HCCL_E_SYSCALL = 8
    HCCL_E_TIMEOUT = 9
    HCCL_E_OPEN_FILE_FAILURE = 10
    HCCL_E_TCP_CONNECT = 11
    HCCL_E_ROCE_CONNECT = 12
    HCCL_E_TCP_TRANSFER = 13
    HCCL_E_ROCE_TRANSFER = 14
    HCCL_E_RUNTIME = 15
    HCCL_E_DRV = 16
    HCCL_E_PROFILING = 17
    HCCL_E_CCE = 18
    HCCL_E_NETWORK = 19
    HCCL_E_AGAIN = 20
    HCCL_E_REMOTE = 21
    HCCL_E_SUSPENDING = 22
    HCCL_E_OPRETRY_FAIL = 23
    HCCL_E_OOM = 24
    HCCL_E_IN_STATUS = 1041
    HCCL_E_RESERVED = 1042


class HcclReduceOp(IntEnum):
    HCCL_REDUCE_SUM = 0
    HCCL_REDUCE_PROD = 1
    HCCL_REDUCE_MAX = 2
    HCCL_REDUCE_MIN = 3
    HCCL_REDUCE_RESERVED = 255


class HcclDataType(IntEnum):
    HCCL_DATA_TYPE_INT8 = 0
    HCCL_DATA_TYPE_INT16 = 1
    HCCL_DATA_TYPE_INT32 = 2
    HCCL_DATA_TYPE_FP16 = 3
    HCCL_DATA_TYPE_FP32 = 4
    HCCL_DATA_TYPE_INT64 = 5
    HCCL_DATA_TYPE_UINT64 = 6
    HCCL_DATA_TYPE_UINT8 = 7
    HCCL_DATA_TYPE_UINT16 = 8
    HCCL_DATA_TYPE_UINT32 = 9
    HCCL_DATA_TYPE_FP64 = 10
    HCCL_DATA_TYPE_BFP16 = 11
    HCCL_DATA_TYPE_INT128 = 12
    HCCL_DATA_TYPE_HIF8 = 14
    HCCL_DATA_TYPE_FP8E4M3 = 15
    HCCL_DATA_TYPE_FP8E5M2 = 16
    HCCL_DATA_TYPE_FP8E8M0 = 17
    HCCL_DATA_TYPE_RESERVED = 255


class HcclConfig(IntEnum):
    HCCL_DETERMINISTIC = 0
    HCCL_CONFIG_RESERVED = 1


class HcclSendRecvType(IntEnum):
    HCCL_SEND = 0
    HCCL_RECV = 1
    HCCL_SEND_RECV_RESERVED = 2


ENUMS = (
    aclopEngineType,
    aclopCompileType,
    aclCompileOpt,
    aclOpCompileFlag,
    HcclResult,
    HcclReduceOp,
    HcclDataType,
    HcclConfig,
    HcclSendRecvType,
)
