"""Processes sharing one context (issue 39, 6): aclInit/aclFinalize counts and a device's aclrtSetDevice references
are per process, as in CANN, so a process that joined another's context cannot free what the other still uses --
its extra aclFinalize is 100037, its extra aclrtResetDevice 507007, its aclrtResetDeviceForce lets go of its own
references only -- and the context's device goes when its last process lets go."""

from __future__ import annotations

import numpy as np
import pytest

from proto.constants import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from proto.errors import ACL_ERROR_REPEAT_FINALIZE, ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, AclError
from server.npu import Machine, Runtime
from server.npu.core.caller import calling_thread

A, B = (("session-a", 100), 1), (("session-b", 200), 1)  # two client processes, one thread each
SECRET = b"A" * 64


def as_(who: tuple[object, object], call: object, *args: object) -> object:
    with calling_thread(who):  # type: ignore[arg-type]
        return call(*args)  # type: ignore[operator]


async def as_async(who: tuple[object, object], call: object, *args: object) -> object:
    with calling_thread(who):  # type: ignore[arg-type]
        return await call(*args)  # type: ignore[operator]


def refused(code: int, who: tuple[object, object], call: object, *args: object) -> AclError:
    with pytest.raises(AclError) as caught, calling_thread(who):  # type: ignore[arg-type]
        call(*args)  # type: ignore[operator]
    assert caught.value.code == code, caught.value
    return caught.value


async def arefused(code: int, who: tuple[object, object], call: object, *args: object) -> AclError:
    with pytest.raises(AclError) as caught, calling_thread(who):  # type: ignore[arg-type]
        await call(*args)  # type: ignore[operator]
    assert caught.value.code == code, caught.value
    return caught.value


def process_a(machine: Machine) -> tuple[Runtime, int]:
    """Process A: aclInit, aclrtSetDevice, aclrtMalloc, and 64 bytes of its data written there."""
    rt = Runtime(machine)
    as_(A, rt.aclInit)
    as_(A, rt.aclrtSetDevice, 0)
    ptr = as_(A, rt.aclrtMalloc, 64, 0)
    assert isinstance(ptr, int)
    as_(A, rt.aclrtMemcpy, ptr, 64, np.frombuffer(SECRET, np.uint8).copy(), 64, ACL_MEMCPY_HOST_TO_DEVICE)
    return rt, ptr


def a_still_reads(rt: Runtime, ptr: int) -> None:
    out = bytearray(64)
    as_(A, rt.aclrtMemcpy, out, 64, ptr, 64, ACL_MEMCPY_DEVICE_TO_HOST)
    assert bytes(out) == SECRET


async def test_an_extra_finalize_of_the_joined_process_is_100037(machine: Machine) -> None:
    rt, ptr = process_a(machine)
    as_(B, rt.aclInit)
    await as_async(B, rt.aclFinalize)
    await arefused(ACL_ERROR_REPEAT_FINALIZE, B, rt.aclFinalize)  # B has nothing more to finalize
    a_still_reads(rt, ptr)
    await as_async(A, rt.aclFinalize)  # the last process: now everything goes
    assert machine.devices[0].arena.used_bytes == 0


async def test_an_extra_reset_of_the_joined_process_is_507007(machine: Machine) -> None:
    rt, ptr = process_a(machine)
    as_(B, rt.aclInit)
    as_(B, rt.aclrtSetDevice, 0)
    await as_async(B, rt.aclrtResetDevice, 0)
    error = await arefused(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, B, rt.aclrtResetDevice, 0)
    assert "this process" in error.message
    a_still_reads(rt, ptr)
    await as_async(A, rt.aclrtResetDevice, 0)  # A's last reference: the device's memory goes
    assert machine.devices[0].arena.used_bytes == 0


async def test_a_force_reset_lets_go_of_the_callers_references_only(machine: Machine) -> None:
    rt, ptr = process_a(machine)
    as_(B, rt.aclInit)
    as_(B, rt.aclrtSetDevice, 0)
    as_(B, rt.aclrtSetDevice, 0)
    await as_async(B, rt.aclrtResetDeviceForce, 0)
    a_still_reads(rt, ptr)
    refused(107002, B, rt.aclrtGetDevice)  # B's thread has no current device any more; A's has
    assert as_(A, rt.aclrtGetDevice) == 0
    await as_async(A, rt.aclrtResetDeviceForce, 0)
    assert machine.devices[0].arena.used_bytes == 0


async def test_one_process_keeps_the_runtime_counts(machine: Machine) -> None:
    rt, _ = process_a(machine)
    as_(A, rt.aclrtSetDevice, 0)
    await as_async(A, rt.aclrtResetDevice, 0)
    assert machine.devices[0].arena.used_bytes > 0  # one reference left
    await as_async(A, rt.aclrtResetDevice, 0)
    assert machine.devices[0].arena.used_bytes == 0
    await arefused(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, A, rt.aclrtResetDevice, 0)
    await as_async(A, rt.aclFinalize)
    await arefused(ACL_ERROR_REPEAT_FINALIZE, A, rt.aclFinalize)
