"""IPC memory (spec-breadth 10, memory/10 and memory/11): an export key for a range of device memory, the import
pid list, peer access for another device, the importer's own address onto the same bytes, close in both
processes, and a free of the exported memory closing every window onto it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from proto.constants import (
    ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT,
    ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
    ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.core.caller import calling_thread
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import download, upload, upload_into

IMPORTER = (4321, 1)
PEER = ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS


@pytest.fixture
async def other(machine: Machine) -> AsyncIterator[Runtime]:
    runtime = Runtime(machine)
    with calling_thread(IMPORTER):
        runtime.aclInit()
    yield runtime
    with calling_thread(IMPORTER):
        await runtime.release_all()


async def test_the_importer_reads_and_writes_the_exported_range(rt: Runtime, other: Runtime) -> None:
    data = np.random.default_rng(2).standard_normal(64).astype(np.float32)
    ptr = upload(rt, data)
    key = rt.aclrtIpcMemGetExportKey(ptr + 64, 128, 65, ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT)  # elements 16..47
    assert len(key) < 65 and rt.aclrtIpcMemGetExportKey(ptr + 64, 128, 65, 0) == key
    with calling_thread(IMPORTER):
        fails(ACL_ERROR_RT_CONTEXT_NULL, other.aclrtIpcMemImportByKey, key, 0)  # no current device yet
        other.aclrtSetDevice(0)
        error = fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtIpcMemImportByKey, key, 0)
        assert "aclrtIpcMemSetImportPid" in error.message and "4321" in error.message
    rt.aclrtIpcMemSetImportPid(key, [99, IMPORTER[0]])
    with calling_thread(IMPORTER):
        imported = other.aclrtIpcMemImportByKey(key, 0)
        assert imported != ptr + 64  # the importer's own address
        np.testing.assert_array_equal(download(other, imported, (32,), np.float32), data[16:48])
        upload_into(other, imported, np.full(32, 5, np.float32))
        fails(ACL_ERROR_RT_PARAM_INVALID, download, other, imported, (33,), np.float32)  # past the exported range
        fails(ACL_ERROR_RT_PARAM_INVALID, download, other, ptr, (1,), np.float32)  # the exporter's own address
        fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtIpcMemImportByKey, key, 0)  # already imported here
    expected = data.copy()
    expected[16:48] = 5
    np.testing.assert_array_equal(download(rt, ptr, (64,), np.float32), expected)
    with calling_thread(IMPORTER):
        other.aclrtIpcMemClose(key)
        fails(ACL_ERROR_RT_PARAM_INVALID, download, other, imported, (1,), np.float32)
        fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtIpcMemClose, key)
    rt.aclrtIpcMemClose(key)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcMemClose, key)
    with calling_thread(IMPORTER):
        fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtIpcMemImportByKey, key, 0)  # the key is gone


async def test_checks(rt: Runtime) -> None:
    ptr = rt.aclrtMalloc(256, 0)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtIpcMemGetExportKey, None, 64, 65, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcMemGetExportKey, ptr, 0, 65, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcMemGetExportKey, ptr, 64, 0, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcMemGetExportKey, ptr, 64, 65, 2)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcMemGetExportKey, ptr, 64, 8, 0)  # the key does not fit
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcMemGetExportKey, ptr, 512, 65, 0)  # past the allocation
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcMemGetExportKey, rt.aclrtMallocHost(64), 64, 65, 0)  # not device
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtIpcMemSetImportPid, None, [1])
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtIpcMemSetImportPid, "k", None)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcMemSetImportPid, "vnpu-ipc-mem-unknown", [1])
    key = rt.aclrtIpcMemGetExportKey(ptr, 64, 65, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcMemSetImportPid, key, [])
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtIpcMemImportByKey, None, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcMemImportByKey, key, 2)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtIpcMemImportByKey, "no such key", 0)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtIpcMemClose, None)
    upload_into(rt, ptr, np.arange(4, dtype=np.int32))  # the memory works on
    np.testing.assert_array_equal(download(rt, ptr, (4,), np.int32), np.arange(4))


async def test_another_device_needs_peer_access(rt: Runtime, other: Runtime) -> None:
    ptr = upload(rt, np.arange(16, dtype=np.int32))
    key = rt.aclrtIpcMemGetExportKey(ptr, 64, 65, ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    with calling_thread(IMPORTER):
        other.aclrtSetDevice(1)
        assert "ENABLE_PEER_ACCESS" in fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtIpcMemImportByKey, key, 0).message
        imported = other.aclrtIpcMemImportByKey(key, PEER)
        assert other.machine.device_of(imported) is other.machine.devices[1]  # an address of the importer's device
        copy = other.aclrtMalloc(64, 0)
        await other.aclrtMemcpyAsync(copy, 64, imported, 64, 3, None)
        await other.aclrtSynchronizeStream(None)
        np.testing.assert_array_equal(download(other, copy, (16,), np.int32), np.arange(16))


async def test_peer_access_enabled_beforehand_lets_a_plain_import_through(rt: Runtime, other: Runtime) -> None:
    """CANN's notify/0 sample: aclrtDeviceEnablePeerAccess on the importer's device, then ImportByKey with flags 0
    (the flag only enables peer access itself: the runtime's IpcOpenMemory)."""
    data = np.random.default_rng(7).integers(-1000, 1000, 16, dtype=np.int32)
    ptr = upload(rt, data)
    key = rt.aclrtIpcMemGetExportKey(ptr, 64, 65, ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    with calling_thread(IMPORTER):
        other.aclrtSetDevice(1)
        other.aclrtDeviceEnablePeerAccess(0, 0)
        imported = other.aclrtIpcMemImportByKey(key, 0)
        copy = other.aclrtMalloc(64, 0)
        await other.aclrtMemcpyAsync(copy, 64, imported, 64, 3, None)
        await other.aclrtSynchronizeStream(None)
        np.testing.assert_array_equal(download(other, copy, (16,), np.int32), data)
        other.aclrtIpcMemClose(key)
        other.aclrtDeviceDisablePeerAccess(0)  # taken back: a plain import is refused again
        error = fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtIpcMemImportByKey, key, 0)
        assert "aclrtDeviceEnablePeerAccess(0" in error.message


async def test_freeing_the_exported_memory_closes_every_window(rt: Runtime, other: Runtime) -> None:
    ptr = upload(rt, np.ones(16, np.float32))
    key = rt.aclrtIpcMemGetExportKey(ptr, 64, 65, ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    with calling_thread(IMPORTER):
        other.aclrtSetDevice(0)
        imported = other.aclrtIpcMemImportByKey(key, 0)
        stream = other.aclrtCreateStream()
        event = other.aclrtCreateEvent()
        other.aclrtStreamWaitEvent(stream, event)
        other.aclrtMemsetAsync(imported, 64, 0, 64, stream)  # queued before the free, runs after it
    rt.aclrtFree(ptr)
    reused = rt.aclrtMalloc(64, 0)  # the block may go to anyone now
    upload_into(rt, reused, np.full(16, 9, np.float32))
    with calling_thread(IMPORTER):
        other.aclrtRecordEvent(event, None)
        with pytest.raises(AclError) as info:
            await other.aclrtSynchronizeStream(stream)
        assert info.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR
        assert "released" in fails(ACL_ERROR_RT_PARAM_INVALID, download, other, imported, (1,), np.float32).message
        fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtIpcMemImportByKey, key, 0)
    np.testing.assert_array_equal(download(rt, reused, (16,), np.float32), np.full(16, 9))  # untouched


async def test_teardown_of_the_importer_closes_its_window(rt: Runtime, machine: Machine) -> None:
    ptr = rt.aclrtMalloc(64, 0)
    key = rt.aclrtIpcMemGetExportKey(ptr, 64, 65, ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    importer = Runtime(machine)
    with calling_thread(IMPORTER):
        importer.aclInit()
        importer.aclrtSetDevice(0)
        imported = importer.aclrtIpcMemImportByKey(key, 0)
        await importer.release_all()
    assert machine.owner(imported) is None
    export = machine.ipc.memory[key]
    assert export.windows == []
