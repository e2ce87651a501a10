"""Device queries and resource limits (spec-breadth 1.4): the SoC's numbers, the device's memory, the codes for
bad ids, attributes and types, and the limits' lifetime."""

from __future__ import annotations

import pytest

from proto.constants import aclrtDevAttr, aclrtDevResLimitType
from proto.errors import (
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_DEV_SETUP_ERROR,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from proto.identity import CUBE_CORES, VECTOR_CORES
from server.npu import Machine, Runtime

A = aclrtDevAttr
CUBE, VECTOR = aclrtDevResLimitType.ACL_RT_DEV_RES_CUBE_CORE, aclrtDevResLimitType.ACL_RT_DEV_RES_VECTOR_CORE


def code_of(call: object, *args: object) -> int:
    with pytest.raises(AclError) as info:
        call(*args)  # type: ignore[operator]
    return info.value.code


async def test_device_attributes(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    assert rt.aclrtGetDeviceInfo(0, A.ACL_DEV_ATTR_VECTOR_CORE_NUM) == VECTOR_CORES == 40
    assert rt.aclrtGetDeviceInfo(1, A.ACL_DEV_ATTR_CUBE_CORE_NUM) == CUBE_CORES == 20
    assert rt.aclrtGetDeviceInfo(1, A.ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE) == machine.devices[1].arena.capacity
    assert rt.aclrtGetDeviceInfo(1, A.ACL_DEV_ATTR_PHY_CHIP_ID) == 1
    assert rt.aclrtGetDeviceInfo(0, A.ACL_DEV_ATTR_NPU_ARCH) == 2201
    assert code_of(rt.aclrtGetDeviceInfo, 2, A.ACL_DEV_ATTR_CUBE_CORE_NUM) == ACL_ERROR_RT_INVALID_DEVICEID
    assert code_of(rt.aclrtGetDeviceInfo, 0, 999) == ACL_ERROR_RT_PARAM_INVALID
    with pytest.raises(AclError) as info:
        rt.aclrtGetDeviceInfo(0, A.ACL_DEV_ATTR_WARP_SIZE)
    assert info.value.code == ACL_ERROR_RT_FEATURE_NOT_SUPPORT and "ACL_DEV_ATTR_WARP_SIZE" in info.value.message
    assert rt.aclrtGetDeviceCapability(0, 1) == 1  # task update of AIC/AIV kernels
    assert code_of(rt.aclrtGetDeviceCapability, 0, 21) == ACL_ERROR_RT_PARAM_INVALID
    assert rt.aclrtQueryDeviceStatus(1) == 0
    assert code_of(rt.aclrtQueryDeviceStatus, -1) == ACL_ERROR_RT_INVALID_DEVICEID
    assert rt.aclrtGetErrorVerbose(1) == (0, 0, 0)  # ACL_RT_NO_ERROR: no fault is emulated
    assert code_of(rt.aclrtGetErrorVerbose, 2) == ACL_ERROR_RT_INVALID_DEVICEID
    assert rt.aclrtGetDeviceUtilizationRate(0) == (-1, -1, -1, -1)  # the runtime's "cannot say"
    assert code_of(rt.aclrtGetDeviceUtilizationRate, -1) == ACL_ERROR_RT_INVALID_DEVICEID
    await rt.release_all()


async def test_resource_limits(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    assert code_of(rt.aclrtGetDeviceResLimit, 0, CUBE) == ACL_ERROR_RT_DEV_SETUP_ERROR  # not open yet
    assert code_of(rt.aclrtGetResInCurrentThread, CUBE) == ACL_ERROR_RT_CONTEXT_NULL
    rt.aclrtSetDevice(0)
    assert (rt.aclrtGetDeviceResLimit(0, CUBE), rt.aclrtGetDeviceResLimit(0, VECTOR)) == (20, 40)
    rt.aclrtSetDeviceResLimit(0, CUBE, 8)  # kernel/1 asks 8 cube cores
    assert rt.aclrtGetDeviceResLimit(0, CUBE) == 8 and rt.aclrtGetResInCurrentThread(CUBE) == 8
    assert code_of(rt.aclrtSetDeviceResLimit, 0, VECTOR, 41) == ACL_ERROR_RT_PARAM_INVALID
    assert code_of(rt.aclrtSetDeviceResLimit, 0, 2, 1) == ACL_ERROR_RT_PARAM_INVALID
    assert code_of(rt.aclrtSetDeviceResLimit, -1, CUBE, 1) == ACL_ERROR_RT_INVALID_DEVICEID
    assert rt.aclrtGetDeviceResLimit(0, VECTOR) == 40  # the refused set changed nothing
    rt.aclrtResetDeviceResLimit(0)
    assert rt.aclrtGetResInCurrentThread(CUBE) == 20
    rt.aclrtSetDeviceResLimit(0, VECTOR, 1)
    await rt.aclrtResetDeviceForce(0)
    rt.aclrtSetDevice(0)
    assert rt.aclrtGetDeviceResLimit(0, VECTOR) == 40  # a new primary context starts from the device's counts
    await rt.release_all()
