"""aclInit/aclFinalize and aclrtSetDevice/ResetDevice/GetDevice/GetDeviceCount, refcounted as in the spec."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from proto.constants import ACL_EVENT_SYNC, ACL_HBM_MEM
from proto.errors import (
    ACL_ERROR_REPEAT_FINALIZE,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_UNINITIALIZE,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.memory.hostmem import sweep_stale


async def test_calls_before_acl_init_fail(machine: Machine) -> None:
    rt = Runtime(machine)
    for call in (lambda: rt.aclrtSetDevice(0), lambda: rt.aclrtMalloc(64, 0), rt.aclrtGetDevice):
        with pytest.raises(AclError) as info:
            call()
        assert info.value.code == ACL_ERROR_UNINITIALIZE and "aclInit" in info.value.message
    with pytest.raises(AclError) as info:
        await rt.aclFinalize()
    assert info.value.code == ACL_ERROR_REPEAT_FINALIZE


async def test_init_and_finalize_are_refcounted(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclInit(None)
    rt.aclrtSetDevice(0)
    await rt.aclFinalize()
    assert rt.aclrtGetDevice() == 0  # one aclInit still stands
    await rt.aclFinalize()
    with pytest.raises(AclError) as info:
        rt.aclrtGetDevice()
    assert info.value.code == ACL_ERROR_UNINITIALIZE
    with pytest.raises(AclError) as info:
        await rt.aclFinalize()
    assert info.value.code == ACL_ERROR_REPEAT_FINALIZE


async def test_set_get_and_count(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    assert rt.aclrtGetDeviceCount() == 2
    with pytest.raises(AclError) as info:
        rt.aclrtGetDevice()
    assert info.value.code == ACL_ERROR_RT_CONTEXT_NULL
    for bad in (2, -1):
        with pytest.raises(AclError) as info:
            rt.aclrtSetDevice(bad)
        assert info.value.code == ACL_ERROR_RT_INVALID_DEVICEID and "2 device(s)" in info.value.message
    rt.aclrtSetDevice(1)
    assert rt.aclrtGetDevice() == 1
    rt.aclrtSetDevice(0)
    assert rt.aclrtGetDevice() == 0
    await rt.release_all()


async def test_reset_device_frees_everything_at_refcount_zero(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    rt.aclrtSetDevice(0)  # refcount 2
    free0, _ = rt.aclrtGetMemInfo(ACL_HBM_MEM)
    ptr = rt.aclrtMalloc(1 << 20, 0)
    s = rt.aclrtCreateStream()
    ev = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)
    rt.aclrtMemsetAsync(ptr, 1 << 20, 1, 1 << 20, s)
    await rt.aclrtResetDevice(0)  # refcount 1: nothing freed
    assert rt.aclrtGetMemInfo(ACL_HBM_MEM)[0] < free0
    await rt.aclrtSynchronizeStream(s)
    used_streams = machine.devices[0].streams.used
    await rt.aclrtResetDevice(0)  # refcount 0: pending work finished, then everything freed
    assert machine.devices[0].arena.free_bytes == machine.devices[0].arena.capacity
    assert machine.devices[0].streams.used == used_streams - 2  # the stream and the default stream
    assert machine.devices[0].events.used == 0
    with pytest.raises(AclError) as info:
        rt.aclrtGetDevice()
    assert info.value.code == ACL_ERROR_RT_CONTEXT_NULL
    rt.aclrtSetDevice(0)
    with pytest.raises(AclError) as info:
        rt.aclrtRecordEvent(ev, 0)
    assert info.value.code == ACL_ERROR_RT_INVALID_HANDLE  # the event went with the device
    with pytest.raises(AclError) as info:
        await rt.aclrtResetDevice(1)  # never set: the runtime's RT_ERROR_CONTEXT_DEL (spec-breadth 1.3)
    assert info.value.code == ACL_ERROR_RT_CONTEXT_RELEASE_ERROR
    await rt.release_all()


async def test_two_contexts_do_not_see_each_other(machine: Machine) -> None:
    a, b = Runtime(machine), Runtime(machine)
    for rt in (a, b):
        rt.aclInit()
        rt.aclrtSetDevice(0)
    s = a.aclrtCreateStream()
    ptr = a.aclrtMalloc(64, 0)
    with pytest.raises(AclError) as info:
        await b.aclrtSynchronizeStream(s)
    assert info.value.code == ACL_ERROR_RT_INVALID_HANDLE
    with pytest.raises(AclError) as info:
        b.aclrtFree(ptr)
    assert info.value.code == ACL_ERROR_RT_PARAM_INVALID
    await a.release_all()
    assert machine.devices[0].arena.used_bytes == 0
    await b.release_all()


def test_sweep_removes_segments_of_dead_daemons(tmp_path: Path) -> None:
    dead = tmp_path / "vnpu-999999999-3"
    alive = tmp_path / f"vnpu-{os.getpid()}-3"
    other = tmp_path / "something-else"
    for p in (dead, alive, other):
        p.write_bytes(b"x")
    assert sweep_stale(tmp_path) == [dead.name]
    assert alive.exists() and other.exists() and not dead.exists()
