"""Host registration and managed memory (spec-breadth 12, host_register/0 and managed_memory/0): a kernel
computes on the device address of registered pinned memory and the host sees the sums without a copy; managed
memory is one address for host code and kernels; the runtime's checks and codes."""

from __future__ import annotations

import numpy as np

from proto.aclnn import aclCreateScalar, aclnnAddGetWorkspaceSize
from proto.constants import (
    ACL_HOST_REG_MAPPED,
    ACL_HOST_REG_PINNED,
    ACL_RT_MEM_ATTACH_GLOBAL,
    aclDataType,
)
from proto.errors import (
    ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
    ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
)
from server.npu import Machine, Runtime
from server.npu.core.caller import calling_thread
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import download, pinned, tensor_at

F16 = aclDataType.ACL_FLOAT16
N = 2048


async def add_on(rt: Runtime, x: int, y: int, z: int) -> None:
    ws, ex = aclnnAddGetWorkspaceSize(
        tensor_at(x, (N,), F16),
        tensor_at(y, (N,), F16),
        aclCreateScalar(1.0, aclDataType.ACL_FLOAT),
        tensor_at(z, (N,), F16),
    )
    rt.aclnnAdd(0, ws, ex, None)
    await rt.aclrtSynchronizeStream(None)


async def test_zero_copy_add_on_registered_host_memory(rt: Runtime) -> None:
    rng = np.random.default_rng(8)
    hosts = [rt.aclrtMallocHost(N * 2) for _ in range(3)]
    a, b = rng.standard_normal(N).astype(np.float16), rng.standard_normal(N).astype(np.float16)
    pinned(rt, hosts[0], N, np.float16)[:] = a
    pinned(rt, hosts[1], N, np.float16)[:] = b
    for host in hosts:
        rt.aclrtHostRegisterV2(host, N * 2, ACL_HOST_REG_MAPPED)
    devs = [rt.aclrtHostGetDevicePointer(host, 0) for host in hosts]
    assert all(rt.ctx.machine.device_of(d) is rt.ctx.machine.devices[0] for d in devs) and devs[0] != hosts[0]
    await add_on(rt, *devs)
    expected = (a.astype(np.float64) + b.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(pinned(rt, hosts[2], N, np.float16), expected)  # no copy back
    for host in hosts:
        rt.aclrtHostUnregister(host)
    fails(ACL_ERROR_RT_PARAM_INVALID, download, rt, devs[0], (1,), np.float16)  # the device address went
    fails(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, rt.aclrtHostUnregister, hosts[0])


async def test_registration_checks(rt: Runtime, machine: Machine) -> None:
    host = rt.aclrtMallocHost(4096)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtHostRegisterV2, None, 64, ACL_HOST_REG_MAPPED)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtHostRegisterV2, host, 0, ACL_HOST_REG_MAPPED)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtHostRegisterV2, host, 64, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtHostRegisterV2, host, 64, 0x1)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtHostRegisterV2, host, 8192, ACL_HOST_REG_MAPPED)  # past the buffer
    error = fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtHostRegisterV2, 0x5000_0000, 64, ACL_HOST_REG_MAPPED)
    assert "aclrtMallocHost" in error.message
    rt.aclrtHostRegisterV2(0x5000_0000, 64, ACL_HOST_REG_PINNED)  # recorded: no device address
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtHostGetDevicePointer, 0x5000_0000, 0)
    rt.aclrtHostRegisterV2(host, 1024, ACL_HOST_REG_MAPPED)
    fails(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, rt.aclrtHostRegisterV2, host + 512, 64, ACL_HOST_REG_MAPPED)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtHostGetDevicePointer, None, 0)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtHostGetDevicePointer, host, 1)
    assert "pass its start" in fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtHostGetDevicePointer, host + 8, 0).message
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtHostUnregister, None)
    fails(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, rt.aclrtHostUnregister, host + 8)
    dev = rt.aclrtHostGetDevicePointer(host, 0)
    rt.aclrtFreeHost(host)  # unregisters with it
    assert machine.owner(dev) is None
    bare = Runtime(machine)
    with calling_thread((77, 1)):
        bare.aclInit()
        fails(ACL_ERROR_RT_CONTEXT_NULL, bare.aclrtHostRegisterV2, 0x5000_0000, 64, ACL_HOST_REG_PINNED)
        await bare.release_all()


async def test_managed_memory_is_one_address_for_host_and_device(rt: Runtime) -> None:
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtMemAllocManaged, 64, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtMemAllocManaged, 0, ACL_RT_MEM_ATTACH_GLOBAL)
    used = rt.ctx.memory.used
    x, y, z = (rt.aclrtMemAllocManaged(N * 2, ACL_RT_MEM_ATTACH_GLOBAL) for _ in range(3))
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(N).astype(np.float16), rng.standard_normal(N).astype(np.float16)
    rt.vnpuHostWrite(x, a.tobytes())  # host code writes it in place
    rt.vnpuHostWrite(y, b.tobytes())
    name, size = rt.vnpuHostInfo(x)
    assert size == N * 2 and name.startswith("vnpu-")
    await add_on(rt, x, y, z)
    got = np.frombuffer(rt.vnpuHostRead(z, N * 2), np.float16)
    np.testing.assert_array_equal(got, (a.astype(np.float64) + b.astype(np.float64)).astype(np.float16))
    for ptr in (x, y, z):
        rt.aclrtFree(ptr)
    assert rt.ctx.memory.used == used
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtFree, x)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.vnpuHostRead, x, 4)


async def test_reset_releases_registrations_and_managed_memory(rt: Runtime, machine: Machine) -> None:
    host = rt.aclrtMallocHost(256)
    rt.aclrtHostRegisterV2(host, 256, ACL_HOST_REG_MAPPED)
    dev = rt.aclrtHostGetDevicePointer(host, 0)
    managed = rt.aclrtMemAllocManaged(256, ACL_RT_MEM_ATTACH_GLOBAL)
    await rt.aclrtResetDevice(0)
    assert machine.owner(dev) is None and machine.owner(managed) is None
    rt.aclrtSetDevice(0)
    rt.aclrtHostRegisterV2(host, 256, ACL_HOST_REG_MAPPED)  # the pinned buffer lives on, unregistered
