"""The runtime calls torch_npu needs beyond the seed: the device count before aclInit, aclrtMallocAlign32, the
device synchronize with a timeout, the op execute timeouts and the system parameters (process and context)."""

from __future__ import annotations

import pytest

from proto.constants import aclSysParamOpt
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    ACL_ERROR_RT_SYSPARAMOPT_NOT_SET,
    ACL_ERROR_UNINITIALIZE,
    AclError,
)
from server.npu import Machine, Runtime

DETERMINISTIC = aclSysParamOpt.ACL_OPT_DETERMINISTIC


async def test_the_device_count_is_answered_before_acl_init(machine: Machine) -> None:
    runtime = Runtime(machine)
    assert runtime.aclrtGetDeviceCount() == 2
    with pytest.raises(AclError) as caught:
        runtime.aclrtGetDevice()
    assert caught.value.code == ACL_ERROR_UNINITIALIZE
    await runtime.release_all()


async def test_malloc_align32_has_no_padding_bytes(rt: Runtime) -> None:
    a = rt.aclrtMallocAlign32(100, 0)
    b = rt.aclrtMallocAlign32(100, 0)
    assert b - a == 128  # 100 rounded up to 32, without aclrtMalloc's 32 more
    c = rt.aclrtMalloc(100, 0)
    d = rt.aclrtMalloc(100, 0)
    assert d - c == 192  # 100 rounded up to 32, plus 32, in the allocator's 64-byte blocks
    with pytest.raises(AclError) as caught:
        rt.aclrtMallocAlign32(0, 0)
    assert caught.value.code == ACL_ERROR_INVALID_PARAM
    for ptr in (a, b, c, d):
        rt.aclrtFree(ptr)


async def test_synchronize_device_with_timeout(rt: Runtime) -> None:
    await rt.aclrtSynchronizeDeviceWithTimeout(-1)
    await rt.aclrtSynchronizeDeviceWithTimeout(100)
    with pytest.raises(AclError) as caught:
        await rt.aclrtSynchronizeDeviceWithTimeout(0)
    assert caught.value.code == ACL_ERROR_INVALID_PARAM
    event = rt.aclrtCreateEvent()
    stream = rt.aclrtCreateStream()
    rt.aclrtStreamWaitEvent(stream, event)  # a legacy event never recorded: the stream waits
    with pytest.raises(AclError) as caught:
        await rt.aclrtSynchronizeDeviceWithTimeout(50)
    assert caught.value.code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    rt.aclrtRecordEvent(event, None)
    await rt.aclrtSynchronizeDeviceWithTimeout(-1)


async def test_system_parameters_of_the_process_and_the_context(rt: Runtime) -> None:
    assert rt.aclrtGetSysParamOpt(DETERMINISTIC) == 0
    rt.aclrtSetSysParamOpt(DETERMINISTIC, 1)
    assert rt.aclrtGetSysParamOpt(DETERMINISTIC) == 1
    with pytest.raises(AclError) as caught:
        rt.aclrtCtxGetSysParamOpt(DETERMINISTIC)
    assert caught.value.code == ACL_ERROR_RT_SYSPARAMOPT_NOT_SET
    rt.aclrtCtxSetSysParamOpt(DETERMINISTIC, 2)
    assert rt.aclrtCtxGetSysParamOpt(DETERMINISTIC) == 2
    with pytest.raises(AclError) as caught:
        rt.aclrtSetSysParamOpt(aclSysParamOpt.ACL_OPT_ENABLE_KERNEL_EARLY_START, 1)
    assert caught.value.code == ACL_ERROR_INVALID_PARAM


async def test_op_execute_timeouts(rt: Runtime) -> None:
    rt.aclrtSetOpExecuteTimeOut(3)
    rt.aclrtSetOpExecuteTimeOutWithMs(2500)
    assert rt.aclrtSetOpExecuteTimeOutV2(1_500_000) == 1_500_000


async def test_device_capability_and_uuid(rt: Runtime) -> None:
    assert rt.aclGetDeviceCapability(0, 0) == 20  # ACL_DEVICE_INFO_AI_CORE_NUM of Ascend910B3
    assert rt.aclGetDeviceCapability(1, 1) == 40
    for device, info in ((2, 0), (0, 3)):
        with pytest.raises(AclError) as caught:
            rt.aclGetDeviceCapability(device, info)
        assert caught.value.code == ACL_ERROR_INVALID_PARAM
    first, second = rt.aclrtDeviceGetUuid(0), rt.aclrtDeviceGetUuid(1)
    assert len(first) == len(second) == 16 and first != second and rt.aclrtDeviceGetUuid(0) == first
