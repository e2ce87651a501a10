"""Device queries and resource limits (spec-breadth 1.4): attributes, capabilities, status, and the cube/vector
core limits a process sets per device. The numbers are the SoC's of `proto.identity`; memory is the device's."""

from __future__ import annotations

import hashlib
import os

from proto.constants import (
    aclDeviceInfo,
    aclrtDevAttr,
    aclrtDevFeatureType,
    aclrtDeviceStatus,
    aclrtDevResLimitType,
    aclrtErrorType,
)
from proto.enumtext import not_member
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_DEV_SETUP_ERROR,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from proto.identity import (
    AICORE_CORES,
    AICPU_CORES,
    CUBE_CORES,
    L2_CACHE_BYTES,
    NPU_ARCHES,
    SOC_NAME,
    UB_BYTES_PER_VECTOR_CORE,
    VECTOR_CORES,
)
from server.npu.area import Area, acl_call, require

A = aclrtDevAttr
FIXED_ATTRIBUTES = {
    A.ACL_DEV_ATTR_AICPU_CORE_NUM: AICPU_CORES,
    A.ACL_DEV_ATTR_AICORE_CORE_NUM: AICORE_CORES,
    A.ACL_DEV_ATTR_CUBE_CORE_NUM: CUBE_CORES,
    A.ACL_DEV_ATTR_VECTOR_CORE_NUM: VECTOR_CORES,
    A.ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE: UB_BYTES_PER_VECTOR_CORE,
    A.ACL_DEV_ATTR_L2_CACHE_SIZE: L2_CACHE_BYTES,
    A.ACL_DEV_ATTR_IS_VIRTUAL: 0,  # the runtime's "virtual" is a vNPU partition of a real chip, which this is not
    A.ACL_DEV_ATTR_NPU_ARCH: NPU_ARCHES[SOC_NAME],
}
CORES = {
    aclrtDevResLimitType.ACL_RT_DEV_RES_CUBE_CORE: CUBE_CORES,
    aclrtDevResLimitType.ACL_RT_DEV_RES_VECTOR_CORE: VECTOR_CORES,
}


# aclGetDeviceCapability: the SoC's platform numbers by aclDeviceInfo (ai_core_cnt, vector_core_cnt, l2_size)
CAPABILITIES = {
    aclDeviceInfo.ACL_DEVICE_INFO_AI_CORE_NUM: AICORE_CORES,
    aclDeviceInfo.ACL_DEVICE_INFO_VECTOR_CORE_NUM: VECTOR_CORES,
    aclDeviceInfo.ACL_DEVICE_INFO_L2_SIZE: L2_CACHE_BYTES,
}


class DeviceInfoCalls(Area):
    @acl_call
    def aclrtDeviceGetUuid(self, device_id: int) -> bytes:
        """16 bytes naming the device for the daemon's life: the same for every process of this daemon."""
        device = self.machine.device(device_id)
        return hashlib.blake2b(
            f"vnpu {os.getpid()} {id(self.machine)} {device.index}".encode(), digest_size=16
        ).digest()

    @acl_call
    def aclGetDeviceCapability(self, device_id: int, device_info: int) -> int:
        """The ACL layer's form of three platform numbers: the device id is only checked against the count, an
        unknown aclDeviceInfo is 100000 (as the runtime answers both)."""
        count = len(self.machine.devices)
        if not 0 <= device_id < count:
            raise AclError(ACL_ERROR_INVALID_PARAM, f"deviceId {device_id} is not below the device count {count}")
        found = CAPABILITIES.get(device_info)  # type: ignore[call-overload]
        if found is None:
            taken = not_member("deviceInfo", device_info, aclDeviceInfo, {int(i) for i in CAPABILITIES})
            raise AclError(ACL_ERROR_INVALID_PARAM, taken)
        return int(found)

    @acl_call
    def aclrtGetDeviceInfo(self, device_id: int, attr: int) -> int:
        device = self.machine.device(device_id)
        if attr not in aclrtDevAttr._value2member_map_:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, not_member("attr", attr, aclrtDevAttr))
        if attr == A.ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE:
            return device.arena.capacity
        if attr == A.ACL_DEV_ATTR_PHY_CHIP_ID:
            return device.index
        if attr not in FIXED_ATTRIBUTES:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                f"vnpu does not model {aclrtDevAttr(attr).name} of its {SOC_NAME} device",
            )
        return FIXED_ATTRIBUTES[attr]  # type: ignore[index]

    @acl_call
    def aclrtGetDeviceCapability(self, device_id: int, dev_feature_type: int) -> int:
        """Task update of AIC/AIV kernels is supported (1); the other feature types are not queryable (107000)."""
        self.machine.device(device_id)
        if dev_feature_type != aclrtDevFeatureType.ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"devFeatureType {dev_feature_type} cannot be queried")
        return 1

    @acl_call
    def aclrtQueryDeviceStatus(self, device_id: int) -> int:
        self.machine.device(device_id)
        return aclrtDeviceStatus.ACL_RT_DEVICE_STATUS_NORMAL

    @acl_call
    def aclrtGetErrorVerbose(self, device_id: int) -> tuple[int, int, int]:
        """(tryRepair, hasDetail, errorType): the runtime reports only HBM uncorrectable errors and link errors
        here, and vnpu emulates neither, so ACL_RT_NO_ERROR (spec-breadth 3.1)."""
        self.machine.device(device_id)
        return (0, 0, aclrtErrorType.ACL_RT_NO_ERROR)

    @acl_call
    def aclrtGetDeviceUtilizationRate(self, device_id: int) -> tuple[int, int, int, int]:
        """(cube, vector, AI CPU, memory) utilization in percent: -1 each, the runtime's answer when the driver
        cannot say (memory is always -1): vnpu does not sample its cores."""
        self.machine.device(device_id)
        return (-1, -1, -1, -1)

    @acl_call
    def aclrtGetDeviceResLimit(self, device_id: int, type_: int) -> int:
        self._open_device(device_id, type_)
        return self.ctx.res_limits.get((device_id, type_), CORES[type_])  # type: ignore[index]

    @acl_call
    def aclrtSetDeviceResLimit(self, device_id: int, type_: int, value: int) -> None:
        """At most the device's core count of that type; kernels see the limit through aclrtGetResInCurrentThread."""
        self._open_device(device_id, type_)
        most = CORES[type_]  # type: ignore[index]
        require(0 <= value <= most, f"value {value} is more than the device's {most} cores of that type",
                ACL_ERROR_RT_PARAM_INVALID)  # fmt: skip
        self.ctx.res_limits[(device_id, type_)] = value

    @acl_call
    def aclrtResetDeviceResLimit(self, device_id: int) -> None:
        self._open_device(device_id, 0)
        for kind in CORES:
            self.ctx.res_limits.pop((device_id, kind), None)

    @acl_call
    def aclrtGetResInCurrentThread(self, type_: int) -> int:
        index = self.ctx.device().index
        if type_ not in CORES:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, not_member("type", type_, aclrtDevResLimitType))
        return self.ctx.res_limits.get((index, type_), CORES[type_])  # type: ignore[index]

    def _open_device(self, device_id: int, type_: int) -> None:
        self.machine.device(device_id)
        if type_ not in CORES:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, not_member("type", type_, aclrtDevResLimitType))
        if not any(c.device.index == device_id for c in self.ctx.acl_contexts.values()):
            raise AclError(
                ACL_ERROR_RT_DEV_SETUP_ERROR, f"device {device_id} is not open in this process: call aclrtSetDevice"
            )
