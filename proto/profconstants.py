"""The enums and `#define`s of the profiling and dump headers (`acl/acl_prof.h`, `acl/acl_dump.h`), under their
exact C names and values.

Source: `include/external/acl/acl_prof.h` and `acl_dump.h` of GitHub `hicann/runtime`. `proto.constants` takes
them in (its `ENUMS` and flat names), so the toolkit's headers and Python see one set of values.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final

# aclprofCreateConfig's dataTypeConfig bits (a uint64_t mask)
ACL_PROF_ACL_API: Final = 0x0001
ACL_PROF_TASK_TIME: Final = 0x0002
ACL_PROF_AICORE_METRICS: Final = 0x0004
ACL_PROF_AICPU: Final = 0x0008
ACL_PROF_L2CACHE: Final = 0x0010
ACL_PROF_HCCL_TRACE: Final = 0x0020
ACL_PROF_TRAINING_TRACE: Final = 0x0040
ACL_PROF_MSPROFTX: Final = 0x0080
ACL_PROF_RUNTIME_API: Final = 0x0100
ACL_PROF_GE_API_L0: Final = 0x0200
ACL_PROF_TASK_TIME_L0: Final = 0x0800
ACL_PROF_TASK_MEMORY: Final = 0x1000
ACL_PROF_TASK_TIME_L2: Final = 0x2000
ACL_PROF_OP_ATTR: Final = 0x4000
ACL_PROF_TASK_TIME_L3: Final = 0x8000
ACL_PROF_GE_API_L1: Final = 0x01000000
ACL_PROF_API_STATS: Final = 0x400000000
ACL_PROF_AICORE_SHAPE: Final = 0x800000000
# lengths: an op's name and type buffers (with the NUL), the dims of aclprofTensor.shape
ACL_PROF_MAX_OP_NAME_LEN: Final = 257
ACL_PROF_MAX_OP_TYPE_LEN: Final = 65
ACL_PROF_TENSOR_DATA_SHAPE_LEN: Final = 8
ACL_PROF_EVENT_ATTR_VERSION: Final = 1

# acl_dump.h
ACL_DUMP_MAX_FILE_PATH_LENGTH: Final = 4096
ACL_DUMP_MAX_SHAPE_NUM: Final = 25
ACL_OP_DUMP_OP_AICORE_ARGS: Final = 0x00000001


class aclprofAicoreMetrics(IntEnum):  # noqa: N801 - aclprofCreateConfig
    ACL_AICORE_ARITHMETIC_UTILIZATION = 0
    ACL_AICORE_PIPE_UTILIZATION = 1
    ACL_AICORE_MEMORY_BANDWIDTH = 2
    ACL_AICORE_L0B_AND_WIDTH = 3
    ACL_AICORE_RESOURCE_CONFLICT_RATIO = 4
    ACL_AICORE_MEMORY_UB = 5
    ACL_AICORE_L2_CACHE = 6
    ACL_AICORE_PIPE_EXECUTE_UTILIZATION = 7
    ACL_AICORE_MEMORY_ACCESS = 8
    ACL_AICORE_NONE = 0xFF


class aclprofStepTag(IntEnum):  # noqa: N801 - aclprofGetStepTimestamp
    ACL_STEP_START = 0
    ACL_STEP_END = 1


class aclprofSubscribeOpFlag(IntEnum):  # noqa: N801 - aclprofGetOpFlag
    ACL_SUBSCRIBE_OP = 0
    ACL_SUBSCRIBE_SUBGRAPH = 1
    ACL_SUBSCRIBE_OP_THREAD = 2
    ACL_SUBSCRIBE_NONE = 0xFF


class aclprofSubscribeOpAttri(IntEnum):  # noqa: N801 - aclprofGetOpAttriValue
    ACL_SUBSCRIBE_ATTRI_THREADID = 0
    ACL_SUBSCRIBE_ATTRI_NONE = 1


class aclprofConfigType(IntEnum):  # noqa: N801 - aclprofSetConfig (2 is not used)
    ACL_PROF_ARGS_MIN = 0
    ACL_PROF_STORAGE_LIMIT = 1
    ACL_PROF_SYS_HARDWARE_MEM_FREQ = 3
    ACL_PROF_LLC_MODE = 4
    ACL_PROF_SYS_IO_FREQ = 5
    ACL_PROF_SYS_INTERCONNECTION_FREQ = 6
    ACL_PROF_DVPP_FREQ = 7
    ACL_PROF_HOST_SYS = 8
    ACL_PROF_HOST_SYS_USAGE = 9
    ACL_PROF_HOST_SYS_USAGE_FREQ = 10
    ACL_PROF_LOW_POWER_FREQ = 11
    ACL_PROF_SYS_MEM_SERVICEFLOW = 12
    ACL_PROF_SYS_CPU_FREQ = 13
    ACL_PROF_OPTYPE = 14
    ACL_PROF_NTS_METRICS = 15
    ACL_PROF_PATH = 16
    ACL_PROF_ARGS_MAX = 17


class aclprofMessageType(IntEnum):  # noqa: N801 - aclprofEventAttributes.messageType
    ACL_PROF_MESSAGE_TYPE_TENSOR_INFO = 0


class acldumpType(IntEnum):  # noqa: N801 - acldumpGetPath
    AIC_ERR_BRIEF_DUMP = 1
    AIC_ERR_NORM_DUMP = 2
    AIC_ERR_DETAIL_DUMP = 3
    DATA_DUMP = 4
    OVERFLOW_DUMP = 5


class acldumpTensorType(IntEnum):  # noqa: N801 - acldumpTensorInfo.type
    ACL_DUMP_TENSOR_INPUT = 0
    ACL_DUMP_TENSOR_OUTPUT = 1
    ACL_DUMP_TENSOR_WORKSPACE = 2


class acldumpTensorAddressType(IntEnum):  # noqa: N801 - acldumpTensorInfo.addrType
    ACL_DUMP_ADDR_PTR = 0
    ACL_DUMP_ADDR_PTR_PTR = 1
    ACL_DUMP_ADDR_RAW = 2


class acldumpTensorPlacement(IntEnum):  # noqa: N801 - acldumpTensorInfo.placement
    ACL_DUMP_PLACEMENT_DEVICE = 0
    ACL_DUMP_PLACEMENT_HOST = 1
    ACL_DUMP_PLACEMENT_END = 2


ENUMS: Final[tuple[type[IntEnum], ...]] = (
    aclprofAicoreMetrics,
    aclprofStepTag,
    aclprofSubscribeOpFlag,
    aclprofSubscribeOpAttri,
    aclprofConfigType,
    aclprofMessageType,
    acldumpType,
    acldumpTensorType,
    acldumpTensorAddressType,
    acldumpTensorPlacement,
)
DEFINES: Final = {n: v for n, v in dict(globals()).items() if n.startswith("ACL_") and type(v) is int}
