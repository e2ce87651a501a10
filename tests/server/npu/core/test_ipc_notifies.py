"""IPC notifies (spec-breadth 6.2, the notify samples): an export key, the import pid list, peer access for
another device, a record in one process releasing a wait-and-reset in another; only the owner destroys it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from proto.constants import (
    ACL_NOTIFY_DEFAULT,
    ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT,
    ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION,
    ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS,
    aclrtStreamStatus,
)
from proto.errors import ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_PARAM_INVALID
from server.npu import Machine, Runtime
from server.npu.core.caller import calling_thread
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import download

BLOCKED = aclrtStreamStatus.ACL_STREAM_STATUS_NOT_READY
IMPORTER = (4321, 1)  # (pid, thread) of the importing process
PEER = ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS


@pytest.fixture
async def other(machine: Machine) -> AsyncIterator[Runtime]:
    runtime = Runtime(machine)
    with calling_thread(IMPORTER):
        runtime.aclInit()
    yield runtime
    with calling_thread(IMPORTER):
        await runtime.release_all()


async def test_a_record_in_the_owner_releases_the_importer(rt: Runtime, other: Runtime) -> None:
    notify = rt.aclrtCreateNotify(ACL_NOTIFY_DEFAULT)
    key = rt.aclrtNotifyGetExportKey(notify, 65, ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT)
    assert len(key) < 65 and rt.aclrtNotifyGetExportKey(notify, 65, ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT) == key
    with calling_thread(IMPORTER):
        fails(ACL_ERROR_RT_CONTEXT_NULL, other.aclrtNotifyImportByKey, key, PEER)  # no device yet
        other.aclrtSetDevice(1)
        error = fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtNotifyImportByKey, key, PEER)
        assert "aclrtNotifySetImportPid" in error.message and "4321" in error.message
    rt.aclrtNotifySetImportPid(notify, [99, IMPORTER[0]])  # what the importer's aclrtDeviceGetBareTgid says
    with calling_thread(IMPORTER):
        error = fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtNotifyImportByKey, key, 0)  # another device
        assert "ENABLE_PEER_ACCESS" in error.message and "aclrtDeviceEnablePeerAccess(0" in error.message
        other.aclrtDeviceEnablePeerAccess(0, 0)  # as CANN's notify/0 sample does: then flags 0 imports
        imported = other.aclrtNotifyImportByKey(key, 0)
        stream, out = other.aclrtCreateStream(), other.aclrtMalloc(8, 0)
        other.aclrtWaitAndResetNotify(imported, stream, 0)
        other.aclrtMemsetAsync(out, 8, 0x5A, 8, stream)
        await asyncio.sleep(0.02)
        assert other.aclrtStreamQuery(stream) == BLOCKED
    rt.aclrtRecordNotify(notify, None)
    with calling_thread(IMPORTER):
        await asyncio.wait_for(other.aclrtSynchronizeStream(stream), 5)
        assert download(other, out, (8,), "uint8").tolist() == [0x5A] * 8


async def test_export_checks_and_ownership(rt: Runtime, other: Runtime) -> None:
    notify = rt.aclrtCreateNotify(ACL_NOTIFY_DEFAULT)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtNotifySetImportPid, notify, [1])  # not exported yet
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtNotifyGetExportKey, notify, 0, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtNotifyGetExportKey, notify, 65, 1)  # flags 0 or 2
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtNotifyGetExportKey, notify, 8, 0)  # the buffer is too small
    key = rt.aclrtNotifyGetExportKey(notify, 65, ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtNotifySetImportPid, notify, [])
    with calling_thread(IMPORTER):
        other.aclrtSetDevice(0)
        fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtNotifyImportByKey, key, 4)  # not an import flag
        fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtNotifyImportByKey, key + "0", 0)
        imported = other.aclrtNotifyImportByKey(key, 0)  # no pid list needed: validation is off
        assert other.aclrtNotifyImportByKey(key, 0) == imported
        other.aclrtDestroyNotify(imported)  # forgotten there, alive here
    rt.aclrtRecordNotify(notify, None)
    await rt.aclrtSynchronizeStream(None)
    rt.aclrtDestroyNotify(notify)
    with calling_thread(IMPORTER):
        fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtNotifyImportByKey, key, 0)  # gone with its owner's destroy


async def test_the_owners_teardown_ends_its_exports(machine: Machine, other: Runtime) -> None:
    owner = Runtime(machine)
    owner.aclInit()
    owner.aclrtSetDevice(0)
    key = owner.aclrtNotifyGetExportKey(owner.aclrtCreateNotify(ACL_NOTIFY_DEFAULT), 65, 2)
    await owner.release_all()  # its client went away
    with calling_thread(IMPORTER):
        other.aclrtSetDevice(0)
        fails(ACL_ERROR_RT_PARAM_INVALID, other.aclrtNotifyImportByKey, key, 0)
