"""ACL contexts (aclrtContext) inside a daemon context, forced resets and forced stream destruction
(spec-breadth 1.2, 1.3, 2.2): codes, per-thread current contexts, and the state after each error."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from proto.constants import ACL_EVENT_SYNC
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.core.caller import calling_thread

RNG = np.random.default_rng(14)


def code_of(call: object, *args: object) -> int:
    with pytest.raises(AclError) as info:
        call(*args)  # type: ignore[operator]
    return info.value.code


async def async_code_of(call: object, *args: object) -> int:
    with pytest.raises(AclError) as info:
        await call(*args)  # type: ignore[operator]
    return info.value.code


async def roundtrip(rt: Runtime, stream: int | None) -> None:
    """Random bytes into device memory, a memset on `stream` over half of them: the stream and the device work."""
    data = RNG.integers(0, 256, 256, dtype=np.uint8)
    value = int(RNG.integers(0, 256))
    ptr = rt.aclrtMalloc(256, 0)
    rt.aclrtMemcpy(ptr, 256, data, 256, 1)
    rt.aclrtMemsetAsync(ptr, 256, value, 128, stream)
    await rt.aclrtSynchronizeStream(stream)
    out = np.zeros(256, np.uint8)
    rt.aclrtMemcpy(out, 256, ptr, 256, 2)
    np.testing.assert_array_equal(out, np.concatenate([np.full(128, value, np.uint8), data[128:]]))
    rt.aclrtFree(ptr)


async def test_a_created_context_is_current_with_its_own_default_stream(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    primary = rt.aclrtGetCurrentContext()
    primary_stream = rt.aclrtCtxGetCurrentDefaultStream()
    made = rt.aclrtCreateContext(1)
    assert rt.aclrtGetCurrentContext() == made != primary
    assert rt.aclrtGetDevice() == 1  # the context's device became the thread's
    own = rt.aclrtCtxGetCurrentDefaultStream()
    assert own not in (0, primary_stream)
    await roundtrip(rt, own)  # the real handle works wherever a stream is taken
    await roundtrip(rt, None)  # and NULL means that same stream now
    created = rt.aclrtCreateStream()
    rt.aclrtSetCurrentContext(primary)
    assert rt.aclrtGetDevice() == 0 and rt.aclrtCtxGetCurrentDefaultStream() == primary_stream
    await rt.aclrtDestroyContext(made)  # its streams go with it
    assert await async_code_of(rt.aclrtSynchronizeStream, created) == ACL_ERROR_RT_INVALID_HANDLE
    assert code_of(rt.aclrtSetCurrentContext, made) == ACL_ERROR_RT_PARAM_INVALID
    assert await async_code_of(rt.aclrtDestroyContext, made) == ACL_ERROR_RT_CONTEXT_NULL
    assert machine.devices[1].streams.used == 0
    await roundtrip(rt, None)  # the primary context works on
    await rt.aclrtResetDevice(0)
    await rt.release_all()


async def test_context_mistakes_get_the_runtimes_codes(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    assert code_of(rt.aclrtGetCurrentContext) == ACL_ERROR_RT_CONTEXT_NULL  # no device set, no context made
    assert code_of(rt.aclrtCtxGetCurrentDefaultStream) == ACL_ERROR_RT_CONTEXT_NULL
    assert code_of(rt.aclrtCreateContext, 2) == ACL_ERROR_RT_INVALID_DEVICEID
    assert code_of(rt.aclrtCreateContext, -1) == ACL_ERROR_RT_INVALID_DEVICEID
    assert code_of(rt.aclrtSetCurrentContext, None) == ACL_ERROR_INVALID_PARAM
    assert code_of(rt.aclrtSetCurrentContext, 0x1234) == ACL_ERROR_RT_PARAM_INVALID
    assert await async_code_of(rt.aclrtDestroyContext, None) == ACL_ERROR_INVALID_PARAM
    rt.aclrtSetDevice(0)
    primary = rt.aclrtGetCurrentContext()
    with pytest.raises(AclError) as info:
        await rt.aclrtDestroyContext(primary)
    assert info.value.code == ACL_ERROR_RT_CONTEXT_NULL and "aclrtResetDevice releases it" in info.value.message
    assert rt.aclrtGetCurrentContext() == primary  # nothing changed
    await roundtrip(rt, None)
    await rt.release_all()


async def test_current_contexts_are_per_thread(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    with calling_thread(("p", 1)):
        rt.aclrtSetDevice(0)
        primary = rt.aclrtGetCurrentContext()
    with calling_thread(("p", 2)):
        assert code_of(rt.aclrtGetCurrentContext) == ACL_ERROR_RT_CONTEXT_NULL
        made = rt.aclrtCreateContext(0)
    with calling_thread(("p", 3)):
        rt.aclrtSetCurrentContext(made)  # another thread may adopt a context
        assert rt.aclrtGetCurrentContext() == made
    with calling_thread(("p", 1)):
        assert rt.aclrtGetCurrentContext() == primary
    with calling_thread(("p", 2)):
        await rt.aclrtDestroyContext(made)
        # the device's primary context is there, so the thread falls back to it
        assert rt.aclrtGetCurrentContext() == primary
    with calling_thread(("p", 3)):
        assert rt.aclrtGetCurrentContext() == primary
    with calling_thread(("p", 1)):
        await rt.aclrtResetDevice(0)
    with calling_thread(("p", 2)):
        assert code_of(rt.aclrtGetCurrentContext) == ACL_ERROR_RT_CONTEXT_NULL
    await rt.release_all()


async def test_a_context_on_a_device_never_set_is_released_at_finalize(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclrtCreateContext(1)
    rt.aclrtMalloc(1024, 0)
    rt.aclrtCreateStream()
    assert machine.devices[1].streams.used == 2
    await rt.aclFinalize()
    assert machine.devices[1].streams.used == 0
    assert machine.devices[1].arena.used_bytes == 0


async def test_reset_device_force_drops_every_reference(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    for _ in range(3):
        rt.aclrtSetDevice(0)
    ptr = rt.aclrtMalloc(64, 0)
    await rt.aclrtResetDeviceForce(0)
    assert machine.devices[0].arena.used_bytes == 0 and machine.devices[0].streams.used == 0
    assert code_of(rt.aclrtGetDevice) == ACL_ERROR_RT_CONTEXT_NULL
    assert code_of(rt.aclrtFree, ptr) == ACL_ERROR_RT_PARAM_INVALID
    for reset in (rt.aclrtResetDeviceForce, rt.aclrtResetDevice):
        with pytest.raises(AclError) as info:
            await reset(0)
        assert info.value.code == ACL_ERROR_RT_CONTEXT_RELEASE_ERROR and "already been reset" in info.value.message
        assert await async_code_of(reset, 5) == ACL_ERROR_RT_INVALID_DEVICEID
    # set, forced reset and finalize again, as stream/2_multi_stream does three times in one process
    for _ in range(3):
        rt.aclrtSetDevice(0)
        await roundtrip(rt, rt.aclrtCreateStream())
        await rt.aclrtResetDeviceForce(0)
    await rt.aclFinalize()
    assert rt.ctx.init_count == 0


async def test_destroy_stream_force_discards_queued_work(machine: Machine) -> None:
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    s = rt.aclrtCreateStream()
    gate = rt.aclrtCreateEventWithFlag(ACL_EVENT_SYNC)  # a legacy event: a wait blocks until a record
    ptr = rt.aclrtMalloc(64, 0)
    rt.aclrtMemset(ptr, 64, 0, 64)
    rt.aclrtStreamWaitEvent(s, gate)
    rt.aclrtMemsetAsync(ptr, 64, 7, 64, s)  # queued behind the wait: never runs
    await asyncio.wait_for(rt.aclrtDestroyStreamForce(s), 5)
    out = np.ones(64, np.uint8)
    rt.aclrtMemcpy(out, 64, ptr, 64, 2)
    assert not out.any()
    assert await async_code_of(rt.aclrtSynchronizeStream, s) == ACL_ERROR_RT_INVALID_HANDLE
    assert await async_code_of(rt.aclrtDestroyStreamForce, None) == ACL_ERROR_INVALID_PARAM
    default = rt.aclrtCtxGetCurrentDefaultStream()
    with pytest.raises(AclError) as info:
        await rt.aclrtDestroyStreamForce(default)
    assert info.value.code == ACL_ERROR_INVALID_PARAM and "default stream" in info.value.message
    await roundtrip(rt, default)
    await rt.release_all()
