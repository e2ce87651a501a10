"""The enums and constants of the ACL C API, under their exact C names and values.

Each C `typedef enum` is an `IntEnum` named after the C type whose members carry the C macro names, so
`aclDataType.ACL_FLOAT == 0`. `flat_constants()` also gives every member flat (`ACL_FLOAT`), as in C;
`#define` flags are plain module-level ints.

Sources: `include/external/acl/acl_base_rt.h` and `acl_rt.h` of GitHub `hicann/runtime` (ACL 1.17), the
`aclmdlRIBindStream` page of its `docs/zh/api_ref` (the repository's `acl_mdl.h` is an empty stub), and the
spec (`shared/spec/cann-runtime.md`). Where the spec and a header disagree, the header wins and a comment
says so.
"""

# The N801 suppressions below keep the C type names once pep8-naming ("N") is selected; until then ruff
# reports them as unused (RUF100), hence this file-level exemption.

from __future__ import annotations

from enum import IntEnum
from typing import Final

from proto import opconstants as _op
from proto import profconstants as _prof


class aclDataType(IntEnum):  # noqa: N801 - the C type name
    ACL_DT_UNDEFINED = -1
    ACL_FLOAT = 0
    ACL_FLOAT16 = 1
    ACL_INT8 = 2
    ACL_INT32 = 3
    ACL_UINT8 = 4
    ACL_INT16 = 6
    ACL_UINT16 = 7
    ACL_UINT32 = 8
    ACL_INT64 = 9
    ACL_UINT64 = 10
    ACL_DOUBLE = 11
    ACL_BOOL = 12
    ACL_STRING = 13
    ACL_COMPLEX64 = 16
    ACL_COMPLEX128 = 17
    ACL_BF16 = 27
    ACL_INT4 = 29
    ACL_UINT1 = 30
    ACL_COMPLEX32 = 33
    ACL_HIFLOAT8 = 34
    ACL_FLOAT8_E5M2 = 35
    ACL_FLOAT8_E4M3FN = 36
    ACL_FLOAT8_E8M0 = 37
    ACL_FLOAT6_E3M2 = 38
    ACL_FLOAT6_E2M3 = 39
    ACL_FLOAT4_E2M1 = 40
    ACL_FLOAT4_E1M2 = 41
    ACL_HIFLOAT4 = 42
    ACL_HIFLOAT4_SCALE = 43


class aclFormat(IntEnum):  # noqa: N801
    ACL_FORMAT_UNDEFINED = -1
    ACL_FORMAT_NCHW = 0
    ACL_FORMAT_NHWC = 1
    ACL_FORMAT_ND = 2
    ACL_FORMAT_NC1HWC0 = 3
    ACL_FORMAT_FRACTAL_Z = 4
    ACL_FORMAT_NC1HWC0_C04 = 12
    ACL_FORMAT_HWCN = 16
    ACL_FORMAT_NDHWC = 27
    ACL_FORMAT_FRACTAL_NZ = 29
    ACL_FORMAT_NCDHW = 30
    ACL_FORMAT_NDC1HWC0 = 32
    ACL_FRACTAL_Z_3D = 33
    ACL_FORMAT_NC = 35
    ACL_FORMAT_NCL = 47
    ACL_FORMAT_FRACTAL_NZ_C0_16 = 50
    ACL_FORMAT_FRACTAL_NZ_C0_32 = 51
    ACL_FORMAT_FRACTAL_NZ_C0_2 = 52
    ACL_FORMAT_FRACTAL_NZ_C0_4 = 53
    ACL_FORMAT_FRACTAL_NZ_C0_8 = 54


class aclrtMemcpyKind(IntEnum):  # noqa: N801
    ACL_MEMCPY_HOST_TO_HOST = 0
    ACL_MEMCPY_HOST_TO_DEVICE = 1
    ACL_MEMCPY_DEVICE_TO_HOST = 2
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3
    ACL_MEMCPY_DEFAULT = 4
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7


class aclrtMemMallocPolicy(IntEnum):  # noqa: N801
    ACL_MEM_MALLOC_HUGE_FIRST = 0
    ACL_MEM_MALLOC_HUGE_ONLY = 1
    ACL_MEM_MALLOC_NORMAL_ONLY = 2
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5
    ACL_MEM_MALLOC_HUGE1G_ONLY = 6
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000


class aclrtMemAttr(IntEnum):  # noqa: N801
    ACL_DDR_MEM = 0
    ACL_HBM_MEM = 1
    ACL_DDR_MEM_HUGE = 2
    ACL_DDR_MEM_NORMAL = 3
    ACL_HBM_MEM_HUGE = 4
    ACL_HBM_MEM_NORMAL = 5
    ACL_DDR_MEM_P2P_HUGE = 6
    ACL_DDR_MEM_P2P_NORMAL = 7
    ACL_HBM_MEM_P2P_HUGE = 8
    ACL_HBM_MEM_P2P_NORMAL = 9
    ACL_HBM_MEM_HUGE1G = 10
    ACL_HBM_MEM_P2P_HUGE1G = 11
    ACL_MEM_NORMAL = 12
    ACL_MEM_HUGE = 13
    ACL_MEM_HUGE1G = 14
    ACL_MEM_P2P_NORMAL = 15
    ACL_MEM_P2P_HUGE = 16
    ACL_MEM_P2P_HUGE1G = 17


class aclrtEventStatus(IntEnum):  # noqa: N801
    ACL_EVENT_STATUS_COMPLETE = 0
    ACL_EVENT_STATUS_NOT_READY = 1
    ACL_EVENT_STATUS_RESERVED = 2


class aclrtEventRecordedStatus(IntEnum):  # noqa: N801 - note: the reverse of aclrtEventStatus
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1


class aclrtEventWaitStatus(IntEnum):  # noqa: N801
    ACL_EVENT_WAIT_STATUS_COMPLETE = 0
    ACL_EVENT_WAIT_STATUS_NOT_READY = 1
    ACL_EVENT_WAIT_STATUS_RESERVED = 0xFFFF


class aclrtStreamStatus(IntEnum):  # noqa: N801
    ACL_STREAM_STATUS_COMPLETE = 0
    ACL_STREAM_STATUS_NOT_READY = 1
    ACL_STREAM_STATUS_RESERVED = 0xFFFF


class aclmdlRICaptureMode(IntEnum):  # noqa: N801
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0
    ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL = 1
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED = 2


class aclmdlRICaptureStatus(IntEnum):  # noqa: N801
    ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0
    ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE = 1
    ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED = 2


class aclmdlRITaskType(IntEnum):  # noqa: N801
    ACL_MODEL_RI_TASK_DEFAULT = 0
    ACL_MODEL_RI_TASK_KERNEL = 1
    ACL_MODEL_RI_TASK_EVENT_RECORD = 2
    ACL_MODEL_RI_TASK_EVENT_WAIT = 3
    ACL_MODEL_RI_TASK_EVENT_RESET = 4
    ACL_MODEL_RI_TASK_VALUE_WRITE = 5
    ACL_MODEL_RI_TASK_VALUE_WAIT = 6


class aclrtCallbackBlockType(IntEnum):  # noqa: N801
    ACL_CALLBACK_NO_BLOCK = 0
    ACL_CALLBACK_BLOCK = 1


class aclrtLastErrLevel(IntEnum):  # noqa: N801
    ACL_RT_THREAD_LEVEL = 0


# --- acl_base_rt.h: device capabilities (aclGetDeviceCapability)
class aclDeviceInfo(IntEnum):  # noqa: N801
    ACL_DEVICE_INFO_UNDEFINED = -1
    ACL_DEVICE_INFO_AI_CORE_NUM = 0
    ACL_DEVICE_INFO_VECTOR_CORE_NUM = 1
    ACL_DEVICE_INFO_L2_SIZE = 2


# --- acl_rt.h: devices
class aclrtRunMode(IntEnum):  # noqa: N801 - aclrtGetRunMode
    ACL_DEVICE = 0
    ACL_HOST = 1


class aclrtTsId(IntEnum):  # noqa: N801 - aclrtSetTsDevice
    ACL_TS_ID_AICORE = 0
    ACL_TS_ID_AIVECTOR = 1
    ACL_TS_ID_RESERVED = 2


class aclrtDeviceStatus(IntEnum):  # noqa: N801 - aclrtQueryDeviceStatus
    ACL_RT_DEVICE_STATUS_NORMAL = 0
    ACL_RT_DEVICE_STATUS_ABNORMAL = 1
    ACL_RT_DEVICE_STATUS_END = 0xFFFF


class aclrtDevAttr(IntEnum):  # noqa: N801 - aclrtGetDeviceInfo
    ACL_DEV_ATTR_AICPU_CORE_NUM = 1
    ACL_DEV_ATTR_AICORE_CORE_NUM = 101
    ACL_DEV_ATTR_CUBE_CORE_NUM = 102
    ACL_DEV_ATTR_VECTOR_CORE_NUM = 201
    ACL_DEV_ATTR_WARP_SIZE = 202
    ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE = 203
    ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE = 204  # deprecated alias of ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE
    ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE = 204
    ACL_DEV_ATTR_MAX_GRID_DIM_X = 205
    ACL_DEV_ATTR_MAX_GRID_DIM_Y = 206
    ACL_DEV_ATTR_MAX_GRID_DIM_Z = 207
    ACL_DEV_ATTR_MAX_BLOCK_PER_GRID = 208
    ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK = 209
    ACL_DEV_ATTR_MAX_BLOCK_DIM_X = 210
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Y = 211
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Z = 212
    ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE = 301
    ACL_DEV_ATTR_L2_CACHE_SIZE = 302
    ACL_DEV_ATTR_SMP_ID = 401
    ACL_DEV_ATTR_PHY_CHIP_ID = 402
    ACL_DEV_ATTR_SUPER_POD_DEVIDE_ID = 403  # deprecated (misspelt) alias of ACL_DEV_ATTR_SUPER_POD_DEVICE_ID
    ACL_DEV_ATTR_SUPER_POD_DEVICE_ID = 403
    ACL_DEV_ATTR_SUPER_POD_SERVER_ID = 404
    ACL_DEV_ATTR_SUPER_POD_ID = 405
    ACL_DEV_ATTR_CUST_OP_PRIVILEGE = 406
    ACL_DEV_ATTR_MAINBOARD_ID = 407
    ACL_DEV_ATTR_HD_CONNECT_TYPE = 408
    ACL_DEV_ATTR_DEVICE_FORM_FACTOR = 409
    ACL_DEV_ATTR_SUPER_POD_CHASSIS_ID = 410
    ACL_DEV_ATTR_IS_VIRTUAL = 501
    ACL_DEV_ATTR_NPU_ARCH = 601


class aclrtDevFeatureType(IntEnum):  # noqa: N801 - aclrtGetDeviceCapability
    ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV = 1  # task update of AIC/AIV kernels (aclmdlRI task groups)
    ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV = 21


class aclrtFloatOverflowMode(IntEnum):  # noqa: N801 - aclrtSetDeviceSatMode
    ACL_RT_OVERFLOW_MODE_SATURATION = 0
    ACL_RT_OVERFLOW_MODE_INFNAN = 1
    ACL_RT_OVERFLOW_MODE_UNDEF = 2


# --- acl_rt.h: streams
class aclrtStreamConfigAttr(IntEnum):  # noqa: N801 - aclrtSetStreamConfigOpt
    ACL_RT_STREAM_WORK_ADDR_PTR = 0
    ACL_RT_STREAM_WORK_SIZE = 1
    ACL_RT_STREAM_FLAG = 2
    ACL_RT_STREAM_PRIORITY = 3


class aclrtStreamAttr(IntEnum):  # noqa: N801 - aclrtSetStreamAttribute / aclrtGetStreamAttribute
    ACL_STREAM_ATTR_FAILURE_MODE = 1
    ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK = 2
    ACL_STREAM_ATTR_USER_CUSTOM_TAG = 3
    ACL_STREAM_ATTR_CACHE_OP_INFO = 4
    ACL_STREAM_ATTR_PRIORITY = 5


class aclrtStreamState(IntEnum):  # noqa: N801 - aclrtRegStreamStateCallback
    ACL_RT_STREAM_STATE_CREATE_POST = 1
    ACL_RT_STREAM_STATE_DESTROY_PRE = 2


class aclrtDeviceState(IntEnum):  # noqa: N801 - aclrtRegDeviceStateCallback
    ACL_RT_DEVICE_STATE_SET_PRE = 0
    ACL_RT_DEVICE_STATE_SET_POST = 1
    ACL_RT_DEVICE_STATE_RESET_PRE = 2
    ACL_RT_DEVICE_STATE_RESET_POST = 3


# --- acl_rt.h: memory
class aclrtHostRegisterType(IntEnum):  # noqa: N801 - aclrtHostRegister
    ACL_HOST_REGISTER_MAPPED = 0
    ACL_HOST_REGISTER_IOMEMORY = 0x04
    ACL_HOST_REGISTER_READONLY = 0x08


class aclrtMallocAttrType(IntEnum):  # noqa: N801 - aclrtMallocWithCfg
    ACL_RT_MEM_ATTR_RSV = 0
    ACL_RT_MEM_ATTR_MODULE_ID = 1
    ACL_RT_MEM_ATTR_DEVICE_ID = 2
    ACL_RT_MEM_ATTR_VA_FLAG = 3


class aclrtMemLocationType(IntEnum):  # noqa: N801 - aclrtPointerGetAttributes, aclrtPhysicalMemProp
    ACL_MEM_LOCATION_TYPE_HOST = 0
    ACL_MEM_LOCATION_TYPE_DEVICE = 1
    ACL_MEM_LOCATION_TYPE_UNREGISTERED = 2
    ACL_MEM_LOCATION_TYPE_MANAGED = 3
    ACL_MEM_LOCATION_TYPE_HOST_NUMA = 4


class aclrtMemAllocationType(IntEnum):  # noqa: N801 - aclrtPhysicalMemProp
    ACL_MEM_ALLOCATION_TYPE_PINNED = 0


class aclrtMemHandleType(IntEnum):  # noqa: N801 - aclrtPhysicalMemProp
    ACL_MEM_HANDLE_TYPE_NONE = 0
    ACL_MEM_HANDLE_TYPE_POSIX = 2


class aclrtMemGranularityOptions(IntEnum):  # noqa: N801 - aclrtMemGetAllocationGranularity
    ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM = 0
    ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1
    ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF


class aclrtMemAccessFlags(IntEnum):  # noqa: N801 - aclrtMemSetAccess
    ACL_RT_MEM_ACCESS_FLAGS_NONE = 0x0
    ACL_RT_MEM_ACCESS_FLAGS_READ = 0x1
    ACL_RT_MEM_ACCESS_FLAGS_READWRITE = 0x3


class aclrtMemManagedLocationType(IntEnum):  # noqa: N801 - unified (managed) memory
    ACL_MEM_LOCATIONTYPE_INVALID = 0
    ACL_MEM_LOCATIONTYPE_DEVICE = 1
    ACL_MEM_LOCATIONTYPE_HOST = 2
    ACL_MEM_LOCATIONTYPE_HOST_NUMA = 3
    ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT = 4


class aclrtMemManagedAdviseType(IntEnum):  # noqa: N801 - aclrtMemManagedAdvise
    ACL_MEM_ADVISE_SET_READ_MOSTLY = 0
    ACL_MEM_ADVISE_UNSET_READ_MOSTLY = 1
    ACL_MEM_ADVISE_SET_PREFERRED_LOCATION = 2
    ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 3
    ACL_MEM_ADVISE_SET_ACCESSED_BY = 4
    ACL_MEM_ADVISE_UNSET_ACCESSED_BY = 5


# --- acl_rt.h: aclmdlRI conditional tasks
class aclmdlRICondHandleFlag(IntEnum):  # noqa: N801 - aclmdlRICondHandleCreate
    ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT = 1


class aclmdlRICondTaskType(IntEnum):  # noqa: N801 - aclmdlRIAddCondTask
    ACL_MODEL_RI_COND_TYPE_IF = 0
    ACL_MODEL_RI_COND_TYPE_WHILE = 1
    ACL_MODEL_RI_COND_TYPE_SWITCH = 2


# --- acl_base_rt.h: logging, options, CANN attributes
class aclLogLevel(IntEnum):  # noqa: N801 - aclAppLog
    ACL_DEBUG = 0
    ACL_INFO = 1
    ACL_WARNING = 2
    ACL_ERROR = 3


class aclMemType(IntEnum):  # noqa: N801 - where a buffer lives (model/op APIs)
    ACL_MEMTYPE_DEVICE = 0
    ACL_MEMTYPE_HOST = 1
    ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT = 2


class aclSysParamOpt(IntEnum):  # noqa: N801 - aclrtSetSysParamOpt
    ACL_OPT_DETERMINISTIC = 0
    ACL_OPT_ENABLE_DEBUG_KERNEL = 1
    ACL_OPT_STRONG_CONSISTENCY = 2  # deprecated: ACL_OPT_DETERMINISTIC with value 2
    ACL_OPT_ENABLE_KERNEL_EARLY_START = 3


class aclCannAttr(IntEnum):  # noqa: N801 - aclGetCannAttribute
    ACL_CANN_ATTR_UNDEFINED = -1
    ACL_CANN_ATTR_INF_NAN = 0
    ACL_CANN_ATTR_BF16 = 1
    ACL_CANN_ATTR_JIT_COMPILE = 2


# --- acl_rt.h: the other enums, in the header's order
class aclrtMemPgType(IntEnum):  # noqa: N801 - page kind (a plain enum in C, not typedef-ed)
    NORMAL_PAGE_TYPE = 0
    HUGE_PAGE_TYPE = 1
    HUGE1G_PAGE_TYPE = 2


class aclrtMemType(IntEnum):  # noqa: N801 - memory kind (a plain enum in C, not typedef-ed)
    HBM_TYPE = 0
    DDR_TYPE = 1
    P2P_HBM_TYPE = 2
    P2P_DDR_TYPE = 3


class aclrtIpcMemAttrType(IntEnum):  # noqa: N801 - aclrtIpcMemSetAttr
    ACL_RT_IPC_MEM_ATTR_ACCESS_LINK = 0


class aclrtGroupAttr(IntEnum):  # noqa: N801 - aclrtGetGroupInfoDetail
    ACL_GROUP_AICORE_INT = 0
    ACL_GROUP_AIV_INT = 1
    ACL_GROUP_AIC_INT = 2
    ACL_GROUP_SDMANUM_INT = 3
    ACL_GROUP_ASQNUM_INT = 4
    ACL_GROUP_GROUPID_INT = 5


class aclrtMemManagedRangeAttribute(IntEnum):  # noqa: N801 - aclrtMemManagedGetAttr
    ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY = 1
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION = 2
    ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY = 3
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE = 4
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID = 5
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION = 6
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE = 7
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID = 8


class aclrtMemSharedHandleType(IntEnum):  # noqa: N801 - aclrtMemExportToShareableHandleV2
    ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT = 0x1
    ACL_MEM_SHARE_HANDLE_TYPE_FABRIC = 0x2


class aclrtErrorType(IntEnum):  # noqa: N801 - aclrtGetErrorVerbose
    ACL_RT_NO_ERROR = 0
    ACL_RT_ERROR_MEMORY = 1
    ACL_RT_ERROR_L2 = 2
    ACL_RT_ERROR_AICORE = 3
    ACL_RT_ERROR_LINK = 4
    ACL_RT_ERROR_L3_PORT = 5
    ACL_RT_ERROR_OTHERS = 0xFFFF


class aclrtAicoreErrorType(IntEnum):  # noqa: N801 - aclrtErrorInfoDetail
    ACL_RT_AICORE_ERROR_UNKNOWN = 0
    ACL_RT_AICORE_ERROR_SW = 1
    ACL_RT_AICORE_ERROR_HW_LOCAL = 2


class aclrtCmoType(IntEnum):  # noqa: N801 - aclrtCmoAsync
    ACL_RT_CMO_TYPE_PREFETCH = 0
    ACL_RT_CMO_TYPE_WRITEBACK = 1
    ACL_RT_CMO_TYPE_INVALID = 2
    ACL_RT_CMO_TYPE_FLUSH = 3


class aclrtBinaryLoadOptionType(IntEnum):  # noqa: N801 - aclrtBinaryLoadFromFile options
    ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD = 1
    ACL_RT_BINARY_LOAD_OPT_LAZY_MAGIC = 2  # older name of ACL_RT_BINARY_LOAD_OPT_MAGIC
    ACL_RT_BINARY_LOAD_OPT_MAGIC = 2
    ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE = 3


class aclrtEngineType(IntEnum):  # noqa: N801 - launch attribute ENGINE_TYPE
    ACL_RT_ENGINE_TYPE_AIC = 0
    ACL_RT_ENGINE_TYPE_AIV = 1


class aclrtLaunchKernelAttrId(IntEnum):  # noqa: N801 - aclrtLaunchKernelWithConfig attributes
    ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE = 1
    ACL_RT_LAUNCH_KERNEL_ATTR_LOCAL_MEMORY_SIZE = 2  # deprecated alias of ..._DYN_UBUF_SIZE
    ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE = 2
    ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE = 3
    ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET = 4
    ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH = 5
    ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP = 6
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT = 7
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US = 8
    ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING = 9


class aclrtReduceKind(IntEnum):  # noqa: N801 - aclrtReduceAsync
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM = 10
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX = 11
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN = 12
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL = 13


class aclrtDevResLimitType(IntEnum):  # noqa: N801 - aclrtSetDeviceResLimit
    ACL_RT_DEV_RES_CUBE_CORE = 0
    ACL_RT_DEV_RES_VECTOR_CORE = 1


class aclrtCondition(IntEnum):  # noqa: N801 - aclrtSwitchStream
    ACL_RT_EQUAL = 0
    ACL_RT_NOT_EQUAL = 1
    ACL_RT_GREATER = 2
    ACL_RT_GREATER_OR_EQUAL = 3
    ACL_RT_LESS = 4
    ACL_RT_LESS_OR_EQUAL = 5


class aclrtCompareDataType(IntEnum):  # noqa: N801 - aclrtSwitchStream
    ACL_RT_SWITCH_INT32 = 0
    ACL_RT_SWITCH_INT64 = 1


class aclrtRandomNumFuncType(IntEnum):  # noqa: N801 - aclrtRandomNumAsync
    ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK = 0
    ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS = 1
    ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS = 2
    ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS = 3


class aclrtDeviceTaskAbortStage(IntEnum):  # noqa: N801 - aclrtSetDeviceTaskAbortCallback
    ACL_RT_DEVICE_TASK_ABORT_PRE = 0
    ACL_RT_DEVICE_TASK_ABORT_POST = 1


class aclrtUpdateTaskAttrId(IntEnum):  # noqa: N801 - aclrtTaskUpdateAsync
    ACL_RT_UPDATE_RANDOM_TASK = 1
    ACL_RT_UPDATE_AIC_AIV_TASK = 2


class aclrtSnapShotStage(IntEnum):  # noqa: N801 - aclrtSnapShotCallbackRegister
    ACL_RT_SNAPSHOT_LOCK_PRE = 0
    ACL_RT_SNAPSHOT_BACKUP_PRE = 1
    ACL_RT_SNAPSHOT_BACKUP_POST = 2
    ACL_RT_SNAPSHOT_RESTORE_PRE = 3
    ACL_RT_SNAPSHOT_RESTORE_POST = 4
    ACL_RT_SNAPSHOT_UNLOCK_POST = 5


class aclrtFuncAttribute(IntEnum):  # noqa: N801 - aclrtGetFunctionAttribute
    ACL_FUNC_ATTR_KERNEL_TYPE = 1
    ACL_FUNC_ATTR_KERNEL_RATIO = 2
    ACL_FUNC_ATTR_KERNEL_SCHED_MODE = 3


class aclrtKernelType(IntEnum):  # noqa: N801 - values of ACL_FUNC_ATTR_KERNEL_TYPE
    ACL_KERNEL_TYPE_AICORE = 0
    ACL_KERNEL_TYPE_CUBE = 1
    ACL_KERNEL_TYPE_VECTOR = 2
    ACL_KERNEL_TYPE_MIX = 3
    ACL_KERNEL_TYPE_AICPU = 100


class aclrtCntNotifyRecordMode(IntEnum):  # noqa: N801 - aclrtCntNotifyRecord
    ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE = 0
    ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE = 1
    ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE = 2
    ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE = 4


class aclrtCntNotifyWaitMode(IntEnum):  # noqa: N801 - aclrtCntNotifyWaitWithTimeout
    ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE = 0
    ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE = 1
    ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE = 2
    ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE = 3
    ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE = 4


class aclCANNPackageName(IntEnum):  # noqa: N801 - aclsysGetCANNVersion
    ACL_PKG_NAME_CANN = 0
    ACL_PKG_NAME_RUNTIME = 1
    ACL_PKG_NAME_COMPILER = 2
    ACL_PKG_NAME_HCCL = 3
    ACL_PKG_NAME_TOOLKIT = 4
    ACL_PKG_NAME_OPP = 5
    ACL_PKG_NAME_OPP_KERNEL = 6
    ACL_PKG_NAME_DRIVER = 7


class aclrtHacType(IntEnum):  # noqa: N801 - hardware accelerator kinds
    ACL_RT_HAC_TYPE_STARS = 0
    ACL_RT_HAC_TYPE_AICPU = 1
    ACL_RT_HAC_TYPE_AIC = 2
    ACL_RT_HAC_TYPE_AIV = 3
    ACL_RT_HAC_TYPE_PCIEDMA = 4
    ACL_RT_HAC_TYPE_RDMA = 5
    ACL_RT_HAC_TYPE_SDMA = 6
    ACL_RT_HAC_TYPE_DVPP = 7
    ACL_RT_HAC_TYPE_UDMA = 8
    ACL_RT_HAC_TYPE_CCU = 9


class aclrtHostMemMapCapability(IntEnum):  # noqa: N801 - aclrtHostMemMapCapabilities
    ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED = 0
    ACL_RT_HOST_MEM_MAP_SUPPORTED = 1


class aclrtMemLinkType(IntEnum):  # noqa: N801 - aclrtMemMapSetLink
    ACL_RT_MEM_ACCESS_LINK_SIO = 0
    ACL_RT_MEM_ACCESS_LINK_HCCS = 1
    ACL_RT_MEM_ACCESS_UB_ONE_PORT_PATH = 2
    ACL_RT_MEM_ACCESS_UB_MULTI_PORT_PATH = 3


class aclrtAtomicOperationCapability(IntEnum):  # noqa: N801 - atomic capability bits
    ACL_RT_ATOMIC_CAPABILITY_SIGNED = 1 << 0
    ACL_RT_ATOMIC_CAPABILITY_UNSIGNED = 1 << 1
    ACL_RT_ATOMIC_CAPABILITY_REDUCATION = 1 << 2  # deprecated (misspelt) alias
    ACL_RT_ATOMIC_CAPABILITY_REDUCTION = 1 << 2
    ACL_RT_ATOMIC_CAPABILITY_SCALAR8 = 1 << 3
    ACL_RT_ATOMIC_CAPABILITY_SCALAR16 = 1 << 4
    ACL_RT_ATOMIC_CAPABILITY_SCALAR32 = 1 << 5
    ACL_RT_ATOMIC_CAPABILITY_SCALAR64 = 1 << 6
    ACL_RT_ATOMIC_CAPABILITY_SCALAR128 = 1 << 7
    ACL_RT_ATOMIC_CAPABILITY_VECTOR32X4 = 1 << 8


class aclrtAtomicOperation(IntEnum):  # noqa: N801 - aclrtDeviceGetHostAtomicCapabilities
    ACL_RT_ATOMIC_OPERATION_INTEGER_ADD = 0
    ACL_RT_ATOMIC_OPERATION_INTEGER_MIN = 1
    ACL_RT_ATOMIC_OPERATION_INTEGER_MAX = 2
    ACL_RT_ATOMIC_OPERATION_INTEGER_INCREMENT = 3
    ACL_RT_ATOMIC_OPERATION_INTEGER_DECREMENT = 4
    ACL_RT_ATOMIC_OPERATION_AND = 5
    ACL_RT_ATOMIC_OPERATION_OR = 6
    ACL_RT_ATOMIC_OPERATION_XOR = 7
    ACL_RT_ATOMIC_OPERATION_EXCHANGE = 8
    ACL_RT_ATOMIC_OPERATION_CAS = 9
    ACL_RT_ATOMIC_OPERATION_FLOAT_ADD = 10
    ACL_RT_ATOMIC_OPERATION_FLOAT_MIN = 11
    ACL_RT_ATOMIC_OPERATION_FLOAT_MAX = 12
    ACL_RT_ATOMIC_OPERATION_DMA_ADD = 30
    ACL_RT_ATOMIC_OPERATION_DMA_MIN = 31
    ACL_RT_ATOMIC_OPERATION_DMA_MAX = 32
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_ADD = 40
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MIN = 41
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MAX = 42
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_CAS = 43
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH = 44


class aclrtDeviceLimit(IntEnum):  # noqa: N801 - aclrtDeviceSetLimit
    ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE = 0
    ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE = 1
    ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE = 2
    ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE = 3
    ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE = 4


class aclRegisterCallbackType(IntEnum):  # noqa: N801 - aclInitCallbackRegister
    ACL_REG_TYPE_ACL_MODEL = 0
    ACL_REG_TYPE_ACL_OP_EXECUTOR = 1
    ACL_REG_TYPE_ACL_OP_CBLAS = 2
    ACL_REG_TYPE_ACL_OP_COMPILER = 3
    ACL_REG_TYPE_ACL_TDT_CHANNEL = 4
    ACL_REG_TYPE_ACL_TDT_QUEUE = 5
    ACL_REG_TYPE_ACL_DVPP = 6
    ACL_REG_TYPE_ACL_RETR = 7
    ACL_REG_TYPE_OTHER = 0xFFFF


class aclrtProcessState(IntEnum):  # noqa: N801 - snapshot process state
    ACL_RT_PROCESS_STATE_RUNNING = 0
    ACL_RT_PROCESS_STATE_LOCKED = 1


# aclrtEvent flags (#define in acl_rt.h)
ACL_EVENT_SYNC: Final = 0x00000001
ACL_EVENT_CAPTURE_STREAM_PROGRESS: Final = 0x00000002
ACL_EVENT_TIME_LINE: Final = 0x00000008
ACL_EVENT_DEVICE_USE_ONLY: Final = 0x00000010
ACL_EVENT_EXTERNAL: Final = 0x00000020
ACL_EVENT_IPC: Final = 0x00000040

# aclrtRecordEventWithFlag / aclrtStreamWaitEventWithFlag flags
ACL_EVENT_RECORD_DEFAULT: Final = 0x0
ACL_EVENT_RECORD_EXTERNAL: Final = 0x1
ACL_EVENT_WAIT_DEFAULT: Final = 0x0
ACL_EVENT_WAIT_EXTERNAL: Final = 0x1

# aclrtCreateStreamWithConfig flags
ACL_STREAM_FAST_LAUNCH: Final = 0x00000001
ACL_STREAM_FAST_SYNC: Final = 0x00000002
ACL_STREAM_PERSISTENT: Final = 0x00000004
ACL_STREAM_HUGE: Final = 0x00000008
ACL_STREAM_CPU_SCHEDULE: Final = 0x00000010
ACL_STREAM_DEVICE_USE_ONLY: Final = 0x00000020

# aclrtValueWait flags (the wait condition)
ACL_STREAM_WAIT_VALUE_GEQ: Final = 0x00000000
ACL_STREAM_WAIT_VALUE_EQ: Final = 0x00000001
ACL_STREAM_WAIT_VALUE_AND: Final = 0x00000002
ACL_STREAM_WAIT_VALUE_NOR: Final = 0x00000003

# aclrtSetStreamFailureMode modes
ACL_CONTINUE_ON_FAILURE: Final = 0x00000000
ACL_STOP_ON_FAILURE: Final = 0x00000001

# aclrtGetDeviceCapability results
ACL_DEV_FEATURE_SUPPORT: Final = 0x00000001
ACL_DEV_FEATURE_NOT_SUPPORT: Final = 0x00000000

# aclrtHostRegisterV2 flags
ACL_HOST_REG_MAPPED: Final = 0x2
ACL_HOST_REG_IOMEMORY: Final = 0x4
ACL_HOST_REG_READONLY: Final = 0x8
ACL_HOST_REG_PINNED: Final = 0x10000000

# aclmdlRIDebugJsonPrint flags: the spec gives only the values (SUMMARY 0x0, VERBOSE 0x1); names: acl_rt.h
ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY: Final = 0x0
ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE: Final = 0x1

# aclmdlRIBindStream flags: acl_mdl.h of the model package, values from docs/zh/api_ref of hicann/runtime
ACL_MODEL_STREAM_FLAG_HEAD: Final = 0x00000000
ACL_MODEL_STREAM_FLAG_DEFAULT: Final = 0x7FFFFFFF

# acl_rt.h version of the runtime API (aclrtGetVersion)
ACL_MAJOR_VERSION: Final = 1
ACL_MINOR_VERSION: Final = 17
ACL_PATCH_VERSION: Final = 0

# aclrtCreateNotify flags
ACL_NOTIFY_DEFAULT: Final = 0x00000000
ACL_NOTIFY_DEVICE_USE_ONLY: Final = 0x00000001

# export / import flags of notifies, IPC memory and VMM handles
ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT: Final = 0x0
ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION: Final = 0x02
ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT: Final = 0x0
ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS: Final = 0x02
ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT: Final = 0x0
ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION: Final = 0x1
ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT: Final = 0x0
ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS: Final = 0x1
ACL_RT_VMM_EXPORT_FLAG_DEFAULT: Final = 0x0
ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION: Final = 0x1

# sizes and limits used by acl_rt.h structs
ACL_RT_MAX_RECORD_PA_NUM_PER_DEV: Final = 20
ACL_IPC_EVENT_HANDLE_SIZE: Final = 64  # bytes of aclrtIpcEventHandle
ACL_RT_MEM_UCE_INFO_MAX_NUM: Final = 20  # entries of aclrtMemUceInfoArray
ACL_RT_CMO_MAX_BARRIER_NUM: Final = 6  # entries of aclrtBarrierTaskInfo
ACL_PKG_VERSION_MAX_SIZE: Final = 128  # aclCANNPackageVersion
ACL_PKG_VERSION_PARTS_MAX_SIZE: Final = 64

# unified memory attach flag, memory link indexes (aclrtMemMapSelectedLink)
ACL_RT_MEM_ATTACH_GLOBAL: Final = 0x01
ACL_RT_MEM_LINK_IDX_0: Final = 0  # SIO
ACL_RT_MEM_LINK_IDX_1: Final = 1  # HCCS

# values of ACL_DEV_ATTR_HD_CONNECT_TYPE
ACL_HOST_DEVICE_CONNECT_TYPE_PCIE: Final = 0
ACL_HOST_DEVICE_CONNECT_TYPE_HCCS: Final = 1
ACL_HOST_DEVICE_CONNECT_TYPE_UB: Final = 2

# values of the ACL_RT_IPC_MEM_ATTR_ACCESS_LINK attribute (aclrtIpcMemSetAttr)
ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO: Final = 0
ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS: Final = 1
ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_ONE_PORT_PATH: Final = 2
ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH: Final = 3

# kernel binary magics (ACL_RT_BINARY_LOAD_OPT_MAGIC)
ACL_RT_BINARY_MAGIC_ELF_AICORE: Final = 0x43554245
ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE: Final = 0x41415246
ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE: Final = 0x41494343

# values of ACL_DEV_ATTR_DEVICE_FORM_FACTOR
ACL_DEVICE_FORM_FACTOR_POD: Final = 0
ACL_DEVICE_FORM_FACTOR_A_K: Final = 1
ACL_DEVICE_FORM_FACTOR_A_X: Final = 2
ACL_DEVICE_FORM_FACTOR_PCIE_CARD: Final = 3

# aclrtGetDevicesTopo result bits
ACL_RT_DEVS_TOPOLOGY_HCCS: Final = 0x01
ACL_RT_DEVS_TOPOLOGY_PIX: Final = 0x02
ACL_RT_DEVS_TOPOLOGY_PIB: Final = 0x04
ACL_RT_DEVS_TOPOLOGY_PHB: Final = 0x08
ACL_RT_DEVS_TOPOLOGY_SYS: Final = 0x10
ACL_RT_DEVS_TOPOLOGY_SIO: Final = 0x20
ACL_RT_DEVS_TOPOLOGY_HCCS_SW: Final = 0x40

# aclrtCheckMemType memory kinds
ACL_RT_MEM_TYPE_DEV: Final = 0x2
ACL_RT_MEM_TYPE_DVPP: Final = 0x8
ACL_RT_MEM_TYPE_RSVD: Final = 0x10


# TDT channels and queues (acl/acl_tdt.h, acl/acl_tdt_queue.h)
class acltdtTensorType(IntEnum):  # noqa: N801
    ACL_TENSOR_DATA_UNDEFINED = -1
    ACL_TENSOR_DATA_TENSOR = 0
    ACL_TENSOR_DATA_END_OF_SEQUENCE = 1
    ACL_TENSOR_DATA_ABNORMAL = 2
    ACL_TENSOR_DATA_SLICE_TENSOR = 3
    ACL_TENSOR_DATA_END_TENSOR = 4


class acltdtQueueAttrType(IntEnum):  # noqa: N801
    ACL_TDT_QUEUE_NAME_PTR = 0
    ACL_TDT_QUEUE_DEPTH_UINT32 = 1


class acltdtQueueRouteParamType(IntEnum):  # noqa: N801
    ACL_TDT_QUEUE_ROUTE_SRC_UINT32 = 0
    ACL_TDT_QUEUE_ROUTE_DST_UINT32 = 1
    ACL_TDT_QUEUE_ROUTE_STATUS_INT32 = 2


class acltdtQueueRouteQueryMode(IntEnum):  # noqa: N801
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC = 0
    ACL_TDT_QUEUE_ROUTE_QUERY_DST = 1
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST = 2
    ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL = 100


class acltdtQueueRouteQueryInfoParamType(IntEnum):  # noqa: N801
    ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM = 0
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32 = 1
    ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32 = 2


class acltdtAllocBufType(IntEnum):  # noqa: N801
    ACL_TDT_NORMAL_MEM = 0
    ACL_TDT_DVPP_MEM = 1


# queue permissions (acltdtGrantQueue) and the status of a queue route
ACL_TDT_QUEUE_PERMISSION_MANAGE: Final = 1
ACL_TDT_QUEUE_PERMISSION_DEQUEUE: Final = 2
ACL_TDT_QUEUE_PERMISSION_ENQUEUE: Final = 4
ACL_TDT_QUEUE_ROUTE_UNBIND: Final = 0
ACL_TDT_QUEUE_ROUTE_BIND: Final = 1
ACL_TDT_QUEUE_ROUTE_BIND_ABNORMAL: Final = 2


ENUMS: Final[tuple[type[IntEnum], ...]] = (
    aclDataType,
    aclFormat,
    aclrtMemcpyKind,
    aclrtMemMallocPolicy,
    aclrtMemAttr,
    aclrtEventStatus,
    aclrtEventRecordedStatus,
    aclrtEventWaitStatus,
    aclrtStreamStatus,
    aclmdlRICaptureMode,
    aclmdlRICaptureStatus,
    aclmdlRITaskType,
    aclrtCallbackBlockType,
    aclrtLastErrLevel,
    aclDeviceInfo,
    aclrtRunMode,
    aclrtTsId,
    aclrtDeviceStatus,
    aclrtDevAttr,
    aclrtDevFeatureType,
    aclrtFloatOverflowMode,
    aclrtStreamConfigAttr,
    aclrtStreamAttr,
    aclrtStreamState,
    aclrtDeviceState,
    aclrtHostRegisterType,
    aclrtMallocAttrType,
    aclrtMemLocationType,
    aclrtMemAllocationType,
    aclrtMemHandleType,
    aclrtMemGranularityOptions,
    aclrtMemAccessFlags,
    aclrtMemManagedLocationType,
    aclrtMemManagedAdviseType,
    aclmdlRICondHandleFlag,
    aclmdlRICondTaskType,
    aclLogLevel,
    aclMemType,
    aclSysParamOpt,
    aclCannAttr,
    aclrtMemPgType,
    aclrtMemType,
    aclrtIpcMemAttrType,
    aclrtGroupAttr,
    aclrtMemManagedRangeAttribute,
    aclrtMemSharedHandleType,
    aclrtErrorType,
    aclrtAicoreErrorType,
    aclrtCmoType,
    aclrtBinaryLoadOptionType,
    aclrtEngineType,
    aclrtLaunchKernelAttrId,
    aclrtReduceKind,
    aclrtDevResLimitType,
    aclrtCondition,
    aclrtCompareDataType,
    aclrtRandomNumFuncType,
    aclrtDeviceTaskAbortStage,
    aclrtUpdateTaskAttrId,
    aclrtSnapShotStage,
    aclrtFuncAttribute,
    aclrtKernelType,
    aclrtCntNotifyRecordMode,
    aclrtCntNotifyWaitMode,
    aclCANNPackageName,
    aclrtHacType,
    aclrtHostMemMapCapability,
    aclrtMemLinkType,
    aclrtAtomicOperationCapability,
    aclrtAtomicOperation,
    aclrtDeviceLimit,
    aclRegisterCallbackType,
    aclrtProcessState,
    acltdtTensorType,
    acltdtQueueAttrType,
    acltdtQueueRouteParamType,
    acltdtQueueRouteQueryMode,
    acltdtQueueRouteQueryInfoParamType,
    acltdtAllocBufType,
    *_prof.ENUMS,  # acl_prof.h, acl_dump.h
    *_op.ENUMS,  # acl_op.h, acl_op_compiler.h, hccl/hccl_types.h
)
globals().update(_prof.DEFINES)  # their #defines, flat like the ones above


def flat_constants() -> dict[str, int]:
    """Every C macro name of this module with its value: the members of `ENUMS` and the `#define`s."""
    flat: dict[str, int] = {}
    for enum in ENUMS:
        for name, member in enum.__members__.items():
            flat[name] = int(member)
    for name, value in globals().items():
        if name.startswith("ACL_") and isinstance(value, int):
            flat[name] = int(value)
    return flat


# C code writes ACL_FLOAT, not aclDataType.ACL_FLOAT: every enum member is exported flat as well (as the member,
# so it keeps its readable name). Typed code uses the enum classes; these names serve the C-style mirror.
globals().update({name: member for enum in ENUMS for name, member in enum.__members__.items()})
