"""Virtual and physical memory (spec-breadth 11, the memory/7 and memory/8 samples): reserve, allocate, map, use
from kernels and copies across mapping boundaries, unmap, release, free; shareable handles between two
processes with and without the pid whitelist; the ACL layer's checks in order and vnpu's driver checks."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from proto.aclnn import aclCreateScalar, aclnnAddGetWorkspaceSize
from proto.calltable import aclrtMemAccessDesc, aclrtMemLocation, aclrtPhysicalMemProp
from proto.constants import (
    ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
    aclDataType,
    aclrtMemAttr,
    aclrtMemLocationType,
    aclrtMemSharedHandleType,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.core.caller import calling_thread
from server.npu.memory.quota import Quota, Share
from server.npu.memory.vmem import GRANULARITY
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import download, read_bytes, tensor_at, upload, upload_into

DEVICE = aclrtMemLocation(id=0, type=aclrtMemLocationType.ACL_MEM_LOCATION_TYPE_DEVICE)
PROP = aclrtPhysicalMemProp(memAttr=aclrtMemAttr.ACL_HBM_MEM_HUGE, location=DEVICE)
G = GRANULARITY
IMPORTER = (4321, 1)


@pytest.fixture
async def other(machine: Machine) -> AsyncIterator[Runtime]:
    runtime = Runtime(machine)
    with calling_thread(IMPORTER):
        runtime.aclInit()
        runtime.aclrtSetDevice(0)
    yield runtime
    with calling_thread(IMPORTER):
        await runtime.release_all()


def mapped(rt: Runtime, chunks: int) -> tuple[int, list[int]]:
    """A reservation of `chunks` granules, each backed by its own physical block."""
    va = rt.aclrtReserveMemAddress(chunks * G, 0, None, 0)
    handles = [rt.aclrtMallocPhysical(G, PROP, 0) for _ in range(chunks)]
    for i, handle in enumerate(handles):
        rt.aclrtMapMem(va + i * G, G, 0, handle, 0)
    return va, handles


async def test_a_kernel_and_copies_span_adjacent_mappings(rt: Runtime) -> None:
    va, _ = mapped(rt, 2)
    rng = np.random.default_rng(11)
    n = 4096
    start = va + G - 2 * n  # the last 8 KiB of the first block and the first 8 KiB of the second
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    upload_into(rt, start, a)
    upload_into(rt, start + 4 * n, b)
    out = rt.aclrtMalloc(4 * n, 0)
    ws, ex = aclnnAddGetWorkspaceSize(
        tensor_at(start, (n,), aclDataType.ACL_FLOAT),
        tensor_at(start + 4 * n, (n,), aclDataType.ACL_FLOAT),
        aclCreateScalar(2.0, aclDataType.ACL_FLOAT),
        tensor_at(out, (n,), aclDataType.ACL_FLOAT),
    )
    stream = rt.aclrtCreateStream()
    rt.aclnnAdd(0, ws, ex, stream)
    await rt.aclrtSynchronizeStream(stream)
    np.testing.assert_allclose(download(rt, out, (n,), np.float32), a.astype(np.float64) + 2 * b, rtol=1e-6)


async def test_two_mappings_of_one_block_alias(rt: Runtime) -> None:
    handle = rt.aclrtMallocPhysical(G, PROP, 0)
    one, two = rt.aclrtReserveMemAddress(G, 0, None, 0), rt.aclrtReserveMemAddress(G, 0, None, 0)
    rt.aclrtMapMem(one, G, 0, handle, 0)
    rt.aclrtMapMem(two, G, 0, handle, 0)
    data = np.random.default_rng(3).integers(0, 256, 1000, dtype=np.uint8)
    upload_into(rt, one + 100, data)
    assert read_bytes(rt, two + 100, 1000) == data.tobytes()
    rt.aclrtMemsetAsync(two, 64, 0x5A, 64, None)
    await rt.aclrtSynchronizeStream(None)
    assert read_bytes(rt, one, 64) == b"\x5a" * 64


async def test_free_while_mapped_is_deferred_and_unmap_revokes(rt: Runtime) -> None:
    free_before = rt.aclrtGetMemInfo(0)[0]
    va, (handle,) = mapped(rt, 1)
    assert rt.aclrtGetMemInfo(0)[0] <= free_before - G  # physical memory is device memory
    upload_into(rt, va, np.arange(16, dtype=np.int32))
    rt.aclrtFreePhysical(handle)  # deferred: still mapped
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtFreePhysical, handle)  # the handle itself is gone
    np.testing.assert_array_equal(download(rt, va, (16,), np.int32), np.arange(16))
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtReleaseMemAddress, va)
    assert "aclrtUnmapMem" in error.message
    rt.aclrtUnmapMem(va)
    assert rt.aclrtGetMemInfo(0)[0] == free_before  # the last mapping took the memory with it
    error = fails(ACL_ERROR_RT_PARAM_INVALID, download, rt, va, (16,), np.int32)
    assert "no physical memory is mapped" in error.message
    rt.aclrtReleaseMemAddress(va)
    error = fails(ACL_ERROR_RT_PARAM_INVALID, download, rt, va, (16,), np.int32)
    assert "released" in error.message
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtReleaseMemAddress, va)


async def test_a_task_queued_before_the_unmap_fails_at_its_synchronize(rt: Runtime) -> None:
    va, (handle,) = mapped(rt, 1)
    stream = rt.aclrtCreateStream()
    event = rt.aclrtCreateEvent()
    rt.aclrtStreamWaitEvent(stream, event)  # holds the stream until the record below
    rt.aclrtMemsetAsync(va, 64, 1, 64, stream)
    rt.aclrtUnmapMem(va)
    rt.aclrtRecordEvent(event, None)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(stream)
    assert info.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR
    rt.aclrtMapMem(va, G, 0, handle, 0)  # map again and the stream works on
    rt.aclrtMemsetAsync(va, 64, 7, 64, None)
    await rt.aclrtSynchronizeStream(None)
    assert read_bytes(rt, va, 64) == b"\x07" * 64


async def test_acl_layer_checks(rt: Runtime) -> None:
    bad = ACL_ERROR_INVALID_PARAM
    fails(bad, rt.aclrtMemGetAllocationGranularity, None, 0)
    ddr_on_device = PROP.model_copy(update={"memAttr": aclrtMemAttr.ACL_DDR_MEM_HUGE})
    assert "ACL_MEM_LOCATION_TYPE_HOST" in fails(bad, rt.aclrtMemGetAllocationGranularity, ddr_on_device, 0).message
    fails(bad, rt.aclrtMemGetAllocationGranularity, PROP.model_copy(update={"memAttr": 0}), 0)  # ACL_DDR_MEM
    assert rt.aclrtMemGetAllocationGranularity(PROP, 0) == G
    one_gib = PROP.model_copy(update={"memAttr": aclrtMemAttr.ACL_HBM_MEM_HUGE1G})
    assert rt.aclrtMemGetAllocationGranularity(one_gib, 1) == 1 << 30
    fails(bad, rt.aclrtReserveMemAddress, 0, 0, None, 0)
    fails(bad, rt.aclrtReserveMemAddress, G, 0, None, 2)
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtReserveMemAddress, G, 0, 0x1000_0000_0000, 0)
    fails(bad, rt.aclrtMallocPhysical, G, None, 0)
    fails(bad, rt.aclrtMallocPhysical, 0, PROP, 0)
    fails(bad, rt.aclrtMallocPhysical, G, PROP, 1)
    fails(bad, rt.aclrtMallocPhysical, G, PROP.model_copy(update={"handleType": 2}), 0)
    fails(bad, rt.aclrtMallocPhysical, G, PROP.model_copy(update={"allocationType": 1}), 0)
    managed = aclrtMemLocation(id=0, type=aclrtMemLocationType.ACL_MEM_LOCATION_TYPE_MANAGED)
    fails(bad, rt.aclrtMallocPhysical, G, PROP.model_copy(update={"location": managed}), 0)
    fails(bad, rt.aclrtMallocPhysical, G, ddr_on_device, 0)
    fails(ACL_ERROR_RT_INVALID_DEVICEID, rt.aclrtMallocPhysical, G, PROP.model_copy(
        update={"location": aclrtMemLocation(id=9, type=1)}), 0)  # fmt: skip
    va, handle = rt.aclrtReserveMemAddress(G, 0, None, 1), rt.aclrtMallocPhysical(G, PROP, 0)
    fails(bad, rt.aclrtMapMem, None, G, 0, handle, 0)
    fails(bad, rt.aclrtMapMem, va, G, 0, None, 0)
    fails(bad, rt.aclrtMapMem, va, 0, 0, handle, 0)
    fails(bad, rt.aclrtMapMem, va, G, 0, handle, 1)
    fails(bad, rt.aclrtUnmapMem, None)
    fails(bad, rt.aclrtReleaseMemAddress, None)
    fails(bad, rt.aclrtFreePhysical, None)
    fails(bad, rt.aclrtMemSetAccess, va, G, None)
    fails(bad, rt.aclrtMemExportToShareableHandle, handle, 2, 0)
    fails(bad, rt.aclrtMemSetPidToShareableHandle, 1, [])
    fails(bad, rt.aclrtMemImportFromShareableHandleV2, None, 1, 0)
    fails(bad, rt.aclrtMemImportFromShareableHandleV2, b"\0" * 8, 1, 1)
    rt.aclrtMapMem(va, G, 0, handle, 0)  # nothing was lost on the way
    upload_into(rt, va, np.ones(4, np.float32))
    np.testing.assert_array_equal(download(rt, va, (4,), np.float32), np.ones(4))


async def test_driver_checks(rt: Runtime) -> None:
    bad = ACL_ERROR_RT_PARAM_INVALID
    va = rt.aclrtReserveMemAddress(3 * G, 0, None, 0)
    handle, small = rt.aclrtMallocPhysical(G, PROP, 0), rt.aclrtMallocPhysical(4096, PROP, 0)
    assert "whole block" in fails(bad, rt.aclrtMapMem, va, 2 * G, 0, handle, 0).message
    fails(bad, rt.aclrtMapMem, va, G, 4096, handle, 0)
    assert "granularity" in fails(bad, rt.aclrtMapMem, va, 4096, 0, small, 0).message
    fails(bad, rt.aclrtMapMem, va + 4096, G, 0, handle, 0)  # not aligned
    fails(bad, rt.aclrtMapMem, va + 3 * G, G, 0, handle, 0)  # past the end: in no reservation
    fails(bad, rt.aclrtMapMem, rt.aclrtMalloc(64, 0), G, 0, handle, 0)  # not a reservation
    rt.aclrtMapMem(va + G, G, 0, handle, 0)
    other = rt.aclrtMallocPhysical(G, PROP, 0)
    assert "overlap" in fails(bad, rt.aclrtMapMem, va + G, G, 0, other, 0).message
    fails(bad, rt.aclrtUnmapMem, va)  # nothing mapped there
    assert "inside the mapping" in fails(bad, rt.aclrtUnmapMem, va + G + 64).message
    fails(bad, rt.aclrtReleaseMemAddress, va + G)  # not the start
    rw = aclrtMemAccessDesc(flags=3, location=DEVICE)
    rt.aclrtMemSetAccess(va + G, G, [rw])
    assert "not mapped" in fails(bad, rt.aclrtMemSetAccess, va, G, [rw]).message
    fails(bad, rt.aclrtMemSetAccess, va + G, G, [])
    fails(bad, rt.aclrtMemSetAccess, va + G, G, [aclrtMemAccessDesc(flags=2, location=DEVICE)])
    fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtMemExportToShareableHandleV2, handle, 0, 2)  # FABRIC: A3 only
    fails(bad, rt.aclrtMemExportToShareableHandle, handle, 0, 2)
    rt.aclrtMemExportToShareableHandle(handle, 0, 0)
    fails(bad, rt.aclrtMemExportToShareableHandle, handle, 0, 0)  # one shareable handle per handle


async def test_shareable_handle_between_processes(rt: Runtime, other: Runtime) -> None:
    va, (handle,) = mapped(rt, 1)
    data = np.random.default_rng(7).standard_normal(256).astype(np.float32)
    upload_into(rt, va, data)
    shareable = rt.aclrtMemExportToShareableHandle(handle, 0, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtMemImportFromShareableHandle, shareable, 0)  # not in the same process
    with calling_thread(IMPORTER):
        error = fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtMemImportFromShareableHandle, shareable, 0)
        assert "aclrtMemSetPidToShareableHandle" in error.message and "4321" in error.message
        fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtMemSetPidToShareableHandle, shareable, [1])  # not the exporter
    rt.aclrtMemSetPidToShareableHandle(shareable, [IMPORTER[0]])
    with calling_thread(IMPORTER):
        imported = other.aclrtMemImportFromShareableHandle(shareable, 0)
        other_va = other.aclrtReserveMemAddress(G, 0, None, 0)
        fails(ACL_ERROR_RT_PARAM_INVALID, download, other, va, (256,), np.float32)  # the exporter's range is not ours
        other.aclrtMapMem(other_va, G, 0, imported, 0)
        np.testing.assert_array_equal(download(other, other_va, (256,), np.float32), data)
        upload_into(other, other_va, -data)
    np.testing.assert_array_equal(download(rt, va, (256,), np.float32), -data)
    rt.aclrtUnmapMem(va)
    rt.aclrtFreePhysical(handle)  # the exporter lets go; the importer's mapping keeps the memory
    with calling_thread(IMPORTER):
        np.testing.assert_array_equal(download(other, other_va, (256,), np.float32), -data)
        fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtMemImportFromShareableHandle, shareable, 0)  # it went


async def test_v2_default_handles_without_pid_validation(rt: Runtime, other: Runtime) -> None:
    va, (handle,) = mapped(rt, 1)
    upload_into(rt, va, np.arange(8, dtype=np.int64))
    flags = ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION
    default = aclrtMemSharedHandleType.ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT
    blob = rt.aclrtMemExportToShareableHandleV2(handle, flags, default)
    assert len(blob) == 8
    with calling_thread(IMPORTER):
        fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtMemImportFromShareableHandleV2, b"\1" * 8, default, 0)
        imported = other.aclrtMemImportFromShareableHandleV2(blob, default, 0)
        other_va = other.aclrtReserveMemAddress(G, 0, None, 0)
        other.aclrtMapMem(other_va, G, 0, imported, 0)
        np.testing.assert_array_equal(download(other, other_va, (8,), np.int64), np.arange(8))


async def test_import_needs_a_current_context(machine: Machine, rt: Runtime) -> None:
    _, (handle,) = mapped(rt, 1)
    shareable = rt.aclrtMemExportToShareableHandle(handle, 0, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    bare = Runtime(machine)
    with calling_thread(IMPORTER):
        bare.aclInit()
        fails(ACL_ERROR_RT_CONTEXT_NULL, bare.aclrtMemImportFromShareableHandle, shareable, 0)
        fails(ACL_ERROR_RT_INVALID_DEVICEID, bare.aclrtMemImportFromShareableHandle, shareable, 7)
        await bare.release_all()


async def test_reset_releases_everything_and_the_memory_comes_back(rt: Runtime) -> None:
    free_before = rt.aclrtGetMemInfo(0)[0]
    va, _ = mapped(rt, 3)
    rt.aclrtMallocPhysical(G, PROP, 0)  # never mapped
    await rt.aclrtResetDevice(0)
    rt.aclrtSetDevice(0)
    assert rt.aclrtGetMemInfo(0)[0] == free_before
    assert "released" in fails(ACL_ERROR_RT_PARAM_INVALID, download, rt, va, (4,), np.float32).message
    again, _ = mapped(rt, 2)  # the address space and the daemon's mappings are reused
    upload_into(rt, again, np.ones(4, np.float32))
    np.testing.assert_array_equal(download(rt, again, (4,), np.float32), np.ones(4))


async def test_another_device_reaches_a_reservation_with_peer_memory(rt: Runtime) -> None:
    prop1 = PROP.model_copy(update={"location": aclrtMemLocation(id=1, type=1)})
    handle = rt.aclrtMallocPhysical(G, prop1, 0)  # device 1's memory, mapped into device 0's addresses
    va = rt.aclrtReserveMemAddress(G, 0, None, 0)
    rt.aclrtMapMem(va, G, 0, handle, 0)
    before = rt.ctx.machine.devices[1].arena.free_bytes
    src = upload(rt, np.arange(32, dtype=np.float32))
    rt.aclrtMemcpy(va, 128, src, 128, 3)
    np.testing.assert_array_equal(download(rt, va, (32,), np.float32), np.arange(32))
    assert rt.ctx.machine.devices[1].arena.free_bytes == before


async def test_freed_physical_memory_is_charged_until_its_last_mapping_goes(machine: Machine) -> None:
    """issue 39, 4: aclrtFreePhysical right after aclrtMapMem (the usual idiom) gave the bytes back to the quotas
    while the memory stayed held, so one tenant took the whole device past its share."""
    quota = Quota("evil", {"memory": Share("bytes of memory", 8 * G, ACL_ERROR_RT_MEMORY_ALLOCATION, "Q")})
    quota.shares |= {k: Share(k, 64, ACL_ERROR_RT_MEMORY_ALLOCATION, "X") for k in ("stream", "event", "model")}
    evil = Runtime(machine, memory_quota=6 * G, quota=quota)
    evil.aclInit()
    evil.aclrtSetDevice(0)
    vas = []
    for n in range(6):
        va = evil.aclrtReserveMemAddress(G, 0, None, 0)
        handle = evil.aclrtMallocPhysical(G, PROP, 0)
        evil.aclrtMapMem(va, G, 0, handle, 0)
        evil.aclrtFreePhysical(handle)  # still mapped: still held, still charged
        vas.append(va)
        assert evil.ctx.memory.used == quota.shares["memory"].used == (n + 1) * G
    error = fails(ACL_ERROR_RT_MEMORY_ALLOCATION, evil.aclrtMallocPhysical, G, PROP, 0)
    assert "memory quota" in error.message
    evil.aclrtUnmapMem(vas[0])  # the last mapping of a freed block: now it goes
    assert evil.ctx.memory.used == 5 * G
    evil.aclrtMapMem(vas[0], G, 0, evil.aclrtMallocPhysical(G, PROP, 0), 0)
    await evil.release_all()
    assert evil.ctx.memory.used == 0 == quota.shares["memory"].used


async def test_an_exported_block_stays_charged_while_an_importer_maps_it(rt: Runtime, other: Runtime) -> None:
    handle = rt.aclrtMallocPhysical(G, PROP, 0)
    shareable = rt.aclrtMemExportToShareableHandle(handle, 0, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    with calling_thread(IMPORTER):
        imported = other.aclrtMemImportFromShareableHandle(shareable, 0)
        va = other.aclrtReserveMemAddress(G, 0, None, 0)
        other.aclrtMapMem(va, G, 0, imported, 0)
    rt.aclrtFreePhysical(handle)
    assert rt.ctx.memory.used == G  # the importer still maps it: the exporter's charge stays
    with calling_thread(IMPORTER):
        other.aclrtFreePhysical(imported)
        assert rt.ctx.memory.used == G
        other.aclrtUnmapMem(va)
    assert rt.ctx.memory.used == 0
