"""The enums and constants of the ACL C API, under their exact C names and values.

Each C `typedef enum` is an `IntEnum` named after the C type whose members carry the C macro names, so
`aclDataType.ACL_FLOAT == 0`. Every member is also exported flat (`ACL_FLOAT`), as in C; `#define` flags are
plain ints. Sources: `acl_base_rt.h`, `acl_rt.h`, `acl_mdl.h` of GitHub `hicann/runtime` and the spec
(`shared/spec/cann-runtime.md`).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final


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

# aclmdlRIDebugJsonPrint flags
ACL_MODEL_RI_DEBUG_JSON_SUMMARY: Final = 0x0
ACL_MODEL_RI_DEBUG_JSON_VERBOSE: Final = 0x1

# aclmdlRIBindStream flags
ACL_MODEL_STREAM_FLAG_HEAD: Final = 0x00000000
ACL_MODEL_STREAM_FLAG_DEFAULT: Final = 0x7FFFFFFF

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
)


def flat_constants() -> dict[str, int]:
    """Every C macro name of this module with its value: the members of `ENUMS` and the `#define`s."""
    flat: dict[str, int] = {}
    for enum in ENUMS:
        for name, member in enum.__members__.items():
            flat[name] = int(member)
    for name, value in globals().items():
        if name.startswith("ACL_") and isinstance(value, int):
            flat[name] = value
    return flat
