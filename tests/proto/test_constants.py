"""The ACL enums and flags keep the exact C names and values of the CANN headers.

Every expected number is a literal taken from `shared/spec/cann-runtime.md` (sections 1.1, 3.1, 4, 5) or from
`acl_rt.h` / `acl_base_rt.h` of GitHub `hicann/runtime`, never read back from the module under test.
"""

from __future__ import annotations

from enum import IntEnum

import pytest

from proto import constants as c
from proto import opconstants, profconstants

# --- spec section 5: aclDataType and aclFormat
DATA_TYPES = {
    "ACL_DT_UNDEFINED": -1,
    "ACL_FLOAT": 0,
    "ACL_FLOAT16": 1,
    "ACL_INT8": 2,
    "ACL_INT32": 3,
    "ACL_UINT8": 4,
    "ACL_INT16": 6,
    "ACL_UINT16": 7,
    "ACL_UINT32": 8,
    "ACL_INT64": 9,
    "ACL_UINT64": 10,
    "ACL_DOUBLE": 11,
    "ACL_BOOL": 12,
    "ACL_STRING": 13,
    "ACL_COMPLEX64": 16,
    "ACL_COMPLEX128": 17,
    "ACL_BF16": 27,
    "ACL_INT4": 29,
    "ACL_COMPLEX32": 33,
    # 34-41: fp8/fp6/fp4 (names from acl_base_rt.h)
    "ACL_HIFLOAT8": 34,
    "ACL_FLOAT8_E5M2": 35,
    "ACL_FLOAT8_E4M3FN": 36,
    "ACL_FLOAT8_E8M0": 37,
    "ACL_FLOAT6_E3M2": 38,
    "ACL_FLOAT6_E2M3": 39,
    "ACL_FLOAT4_E2M1": 40,
    "ACL_FLOAT4_E1M2": 41,
}

FORMATS = {
    "ACL_FORMAT_UNDEFINED": -1,
    "ACL_FORMAT_NCHW": 0,
    "ACL_FORMAT_NHWC": 1,
    "ACL_FORMAT_ND": 2,
    "ACL_FORMAT_NC1HWC0": 3,
    "ACL_FORMAT_FRACTAL_Z": 4,
    "ACL_FORMAT_FRACTAL_NZ": 29,
    "ACL_FORMAT_NCDHW": 30,
    "ACL_FORMAT_NC": 35,
    "ACL_FORMAT_NCL": 47,
}

# --- spec section 4: memory
MEMCPY_KINDS = {
    "ACL_MEMCPY_HOST_TO_HOST": 0,
    "ACL_MEMCPY_HOST_TO_DEVICE": 1,
    "ACL_MEMCPY_DEVICE_TO_HOST": 2,
    "ACL_MEMCPY_DEVICE_TO_DEVICE": 3,
    "ACL_MEMCPY_DEFAULT": 4,
    "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE": 5,
    "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE": 6,
    "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE": 7,
}

MALLOC_POLICIES = {
    "ACL_MEM_MALLOC_HUGE_FIRST": 0,
    "ACL_MEM_MALLOC_HUGE_ONLY": 1,
    "ACL_MEM_MALLOC_NORMAL_ONLY": 2,
    "ACL_MEM_MALLOC_HUGE_FIRST_P2P": 3,
    "ACL_MEM_MALLOC_HUGE_ONLY_P2P": 4,
    "ACL_MEM_MALLOC_NORMAL_ONLY_P2P": 5,
    "ACL_MEM_MALLOC_HUGE1G_ONLY": 6,
    "ACL_MEM_MALLOC_HUGE1G_ONLY_P2P": 7,
    "ACL_MEM_TYPE_LOW_BAND_WIDTH": 0x100,
    "ACL_MEM_TYPE_HIGH_BAND_WIDTH": 0x1000,
}

MEM_ATTRS = {"ACL_DDR_MEM": 0, "ACL_HBM_MEM": 1}

CALLBACK_BLOCK_TYPES = {"ACL_CALLBACK_NO_BLOCK": 0, "ACL_CALLBACK_BLOCK": 1}

STREAM_FLAGS = {
    "ACL_STREAM_FAST_LAUNCH": 0x1,
    "ACL_STREAM_FAST_SYNC": 0x2,
    "ACL_STREAM_PERSISTENT": 0x4,
    "ACL_STREAM_HUGE": 0x8,
    "ACL_STREAM_CPU_SCHEDULE": 0x10,
    "ACL_STREAM_DEVICE_USE_ONLY": 0x20,
}

STREAM_STATUS = {"ACL_STREAM_STATUS_COMPLETE": 0, "ACL_STREAM_STATUS_NOT_READY": 1}

# --- spec section 3.1: events
EVENT_FLAGS = {
    "ACL_EVENT_SYNC": 0x1,
    "ACL_EVENT_CAPTURE_STREAM_PROGRESS": 0x2,
    "ACL_EVENT_TIME_LINE": 0x8,
    "ACL_EVENT_DEVICE_USE_ONLY": 0x10,
    "ACL_EVENT_EXTERNAL": 0x20,
    "ACL_EVENT_IPC": 0x40,
}

RECORD_WAIT_FLAGS = {
    "ACL_EVENT_RECORD_DEFAULT": 0,
    "ACL_EVENT_RECORD_EXTERNAL": 1,
    "ACL_EVENT_WAIT_DEFAULT": 0,
    "ACL_EVENT_WAIT_EXTERNAL": 1,
}

EVENT_STATUS = {"ACL_EVENT_STATUS_COMPLETE": 0, "ACL_EVENT_STATUS_NOT_READY": 1}
# Reversed with respect to aclrtEventStatus.
EVENT_RECORDED_STATUS = {"ACL_EVENT_RECORDED_STATUS_NOT_READY": 0, "ACL_EVENT_RECORDED_STATUS_COMPLETE": 1}
EVENT_WAIT_STATUS = {"ACL_EVENT_WAIT_STATUS_COMPLETE": 0, "ACL_EVENT_WAIT_STATUS_NOT_READY": 1}

# --- spec section 1.1 and 6: aclmdlRI
CAPTURE_MODES = {
    "ACL_MODEL_RI_CAPTURE_MODE_GLOBAL": 0,
    "ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL": 1,
    "ACL_MODEL_RI_CAPTURE_MODE_RELAXED": 2,
}

CAPTURE_STATUSES = {
    "ACL_MODEL_RI_CAPTURE_STATUS_NONE": 0,
    "ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE": 1,
    "ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED": 2,
}

TASK_TYPES = {
    "ACL_MODEL_RI_TASK_DEFAULT": 0,
    "ACL_MODEL_RI_TASK_KERNEL": 1,
    "ACL_MODEL_RI_TASK_EVENT_RECORD": 2,
    "ACL_MODEL_RI_TASK_EVENT_WAIT": 3,
    "ACL_MODEL_RI_TASK_EVENT_RESET": 4,
    "ACL_MODEL_RI_TASK_VALUE_WRITE": 5,
    "ACL_MODEL_RI_TASK_VALUE_WAIT": 6,
}

MODEL_RI_FLAGS = {
    "ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY": 0x0,
    "ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE": 0x1,
    "ACL_MODEL_STREAM_FLAG_HEAD": 0x0,
    "ACL_MODEL_STREAM_FLAG_DEFAULT": 0x7FFFFFFF,
}

LAST_ERR_LEVELS = {"ACL_RT_THREAD_LEVEL": 0}

# (C typedef name, the expected members): enums whose members the spec pins.
ENUM_TABLES: list[tuple[str, dict[str, int]]] = [
    ("aclDataType", DATA_TYPES),
    ("aclFormat", FORMATS),
    ("aclrtMemcpyKind", MEMCPY_KINDS),
    ("aclrtMemMallocPolicy", MALLOC_POLICIES),
    ("aclrtMemAttr", MEM_ATTRS),
    ("aclrtCallbackBlockType", CALLBACK_BLOCK_TYPES),
    ("aclrtStreamStatus", STREAM_STATUS),
    ("aclrtEventStatus", EVENT_STATUS),
    ("aclrtEventRecordedStatus", EVENT_RECORDED_STATUS),
    ("aclrtEventWaitStatus", EVENT_WAIT_STATUS),
    ("aclmdlRICaptureMode", CAPTURE_MODES),
    ("aclmdlRICaptureStatus", CAPTURE_STATUSES),
    ("aclmdlRITaskType", TASK_TYPES),
    ("aclrtLastErrLevel", LAST_ERR_LEVELS),
]

# `#define` flags, plain ints in the module.
DEFINE_TABLES: list[dict[str, int]] = [STREAM_FLAGS, EVENT_FLAGS, RECORD_WAIT_FLAGS, MODEL_RI_FLAGS]

# Whole enums (every member, nothing else) pinned against acl_rt.h / acl_base_rt.h.
HEADER_ENUMS: dict[str, dict[str, int]] = {
    "aclrtRunMode": {"ACL_DEVICE": 0, "ACL_HOST": 1},
    "aclrtDeviceStatus": {
        "ACL_RT_DEVICE_STATUS_NORMAL": 0,
        "ACL_RT_DEVICE_STATUS_ABNORMAL": 1,
        "ACL_RT_DEVICE_STATUS_END": 0xFFFF,
    },
    "aclrtStreamAttr": {
        "ACL_STREAM_ATTR_FAILURE_MODE": 1,
        "ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK": 2,
        "ACL_STREAM_ATTR_USER_CUSTOM_TAG": 3,
        "ACL_STREAM_ATTR_CACHE_OP_INFO": 4,
        "ACL_STREAM_ATTR_PRIORITY": 5,
    },
    "aclrtMemLocationType": {
        "ACL_MEM_LOCATION_TYPE_HOST": 0,
        "ACL_MEM_LOCATION_TYPE_DEVICE": 1,
        "ACL_MEM_LOCATION_TYPE_UNREGISTERED": 2,
        "ACL_MEM_LOCATION_TYPE_MANAGED": 3,
        "ACL_MEM_LOCATION_TYPE_HOST_NUMA": 4,
    },
    "aclmdlRICondTaskType": {
        "ACL_MODEL_RI_COND_TYPE_IF": 0,
        "ACL_MODEL_RI_COND_TYPE_WHILE": 1,
        "ACL_MODEL_RI_COND_TYPE_SWITCH": 2,
    },
    "aclrtMemcpyKind": MEMCPY_KINDS,
    "aclrtEventStatus": {**EVENT_STATUS, "ACL_EVENT_STATUS_RESERVED": 2},
    "aclrtEventRecordedStatus": EVENT_RECORDED_STATUS,
    "aclrtEventWaitStatus": {**EVENT_WAIT_STATUS, "ACL_EVENT_WAIT_STATUS_RESERVED": 0xFFFF},
    "aclrtStreamStatus": {**STREAM_STATUS, "ACL_STREAM_STATUS_RESERVED": 0xFFFF},
    "aclrtMemMallocPolicy": {**MALLOC_POLICIES, "ACL_MEM_ACCESS_USER_SPACE_READONLY": 0x100000},
    "aclrtMemAttr": {
        "ACL_DDR_MEM": 0,
        "ACL_HBM_MEM": 1,
        "ACL_DDR_MEM_HUGE": 2,
        "ACL_DDR_MEM_NORMAL": 3,
        "ACL_HBM_MEM_HUGE": 4,
        "ACL_HBM_MEM_NORMAL": 5,
        "ACL_DDR_MEM_P2P_HUGE": 6,
        "ACL_DDR_MEM_P2P_NORMAL": 7,
        "ACL_HBM_MEM_P2P_HUGE": 8,
        "ACL_HBM_MEM_P2P_NORMAL": 9,
        "ACL_HBM_MEM_HUGE1G": 10,
        "ACL_HBM_MEM_P2P_HUGE1G": 11,
        "ACL_MEM_NORMAL": 12,
        "ACL_MEM_HUGE": 13,
        "ACL_MEM_HUGE1G": 14,
        "ACL_MEM_P2P_NORMAL": 15,
        "ACL_MEM_P2P_HUGE": 16,
        "ACL_MEM_P2P_HUGE1G": 17,
    },
    "aclmdlRICaptureMode": CAPTURE_MODES,
    "aclmdlRICaptureStatus": CAPTURE_STATUSES,
    "aclmdlRITaskType": TASK_TYPES,
    "aclrtCallbackBlockType": CALLBACK_BLOCK_TYPES,
    "aclrtLastErrLevel": LAST_ERR_LEVELS,
}


def _enum(type_name: str) -> type[IntEnum]:
    enum = getattr(c, type_name)
    assert isinstance(enum, type) and issubclass(enum, IntEnum), f"{type_name} is not an IntEnum"
    return enum


@pytest.mark.parametrize(
    ("type_name", "name", "value"),
    [(t, n, v) for t, table in ENUM_TABLES for n, v in table.items()],
)
def test_enum_member_has_the_spec_value(type_name: str, name: str, value: int) -> None:
    enum = _enum(type_name)
    assert enum.__name__ == type_name
    assert name in enum.__members__, f"{type_name} lacks {name}"
    assert int(enum[name]) == value
    # Flat, as in C.
    assert c.flat_constants()[name] == value


@pytest.mark.parametrize(
    ("name", "value"),
    [(n, v) for table in DEFINE_TABLES for n, v in table.items()],
)
def test_define_has_the_spec_value(name: str, value: int) -> None:
    flag = getattr(c, name)
    assert type(flag) is int
    assert flag == value


@pytest.mark.parametrize(("type_name", "members"), sorted(HEADER_ENUMS.items()))
def test_header_enum_is_complete(type_name: str, members: dict[str, int]) -> None:
    enum = _enum(type_name)
    assert {n: int(m) for n, m in enum.__members__.items()} == members


def test_recorded_status_is_the_reverse_of_event_status() -> None:
    assert c.aclrtEventStatus.ACL_EVENT_STATUS_COMPLETE == 0
    assert c.aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_COMPLETE == 1
    assert c.aclrtEventStatus.ACL_EVENT_STATUS_NOT_READY == 1
    assert c.aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_NOT_READY == 0


def test_data_type_extensions_of_the_header() -> None:
    assert c.aclDataType.ACL_UINT1 == 30
    assert c.aclDataType.ACL_HIFLOAT4 == 42
    assert c.aclDataType.ACL_HIFLOAT4_SCALE == 43


def test_event_flags_are_distinct_bits() -> None:
    seen = 0
    for value in EVENT_FLAGS.values():
        assert value & (value - 1) == 0, "one bit per flag"
        assert seen & value == 0
        seen |= value


def test_aliases_share_a_value() -> None:
    assert c.aclrtDevAttr.ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE == 204
    assert c.aclrtDevAttr.ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE == 204
    assert c.aclrtDevAttr.ACL_DEV_ATTR_SUPER_POD_DEVICE_ID == 403


def test_every_enum_is_registered() -> None:
    registered = set(c.ENUMS)
    # profconstants: the enums of acl_prof.h and acl_dump.h; opconstants: acl_op(_compiler).h and hccl_types.h
    names = {**vars(c), **vars(profconstants), **vars(opconstants)}
    defined = {v for v in names.values() if isinstance(v, type) and issubclass(v, IntEnum) and v is not IntEnum}
    assert defined == registered
    for type_name in {t for t, _ in ENUM_TABLES} | set(HEADER_ENUMS):
        assert _enum(type_name) in registered


def test_flat_constants_include_every_enum_member() -> None:
    flat = c.flat_constants()
    for enum in c.ENUMS:
        for name, member in enum.__members__.items():
            assert flat[name] == int(member), f"{enum.__name__}.{name}"


def test_flat_constants_include_the_defines() -> None:
    flat = c.flat_constants()
    for table in DEFINE_TABLES:
        for name, value in table.items():
            assert flat[name] == value


def test_flat_constants_have_no_name_with_two_values() -> None:
    seen: dict[str, int] = {}
    clashes = []
    for enum in c.ENUMS:
        for name, member in enum.__members__.items():
            if name in seen and seen[name] != int(member):
                clashes.append(name)
            seen.setdefault(name, int(member))
    for name, value in vars(c).items():
        if name.startswith("ACL_") and isinstance(value, int):
            if name in seen and seen[name] != value:
                clashes.append(name)
            seen.setdefault(name, value)
    assert clashes == []
    assert c.flat_constants() == seen


# acl_rt.h's two untyped enums name their members without the ACL_ prefix.
# the C names without ACL_: memory page/type names, and acldumpType (AIC_ERR_BRIEF_DUMP ... OVERFLOW_DUMP)
UNPREFIXED = {*c.aclrtMemPgType.__members__, *c.aclrtMemType.__members__, *profconstants.acldumpType.__members__}
UNPREFIXED |= {name for enum in opconstants.ENUMS if enum.__name__.startswith("Hccl") for name in enum.__members__}


def test_flat_constants_are_plain_ints() -> None:
    for name, value in c.flat_constants().items():
        assert name.startswith("ACL_") or name in UNPREFIXED
        assert type(value) is int
