"""Peer access (spec-breadth 13): the checks, and a copy between the two devices once access is granted."""

from __future__ import annotations

import numpy as np

from proto.constants import ACL_MEMCPY_DEVICE_TO_DEVICE
from proto.errors import ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_INVALID_DEVICEID
from server.npu import Runtime
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import download, upload


async def test_peer_checks(rt: Runtime) -> None:
    assert rt.aclrtDeviceCanAccessPeer(0, 1) == rt.aclrtDeviceCanAccessPeer(1, 0) == 1
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtDeviceCanAccessPeer, 1, 1)
    fails(ACL_ERROR_RT_INVALID_DEVICEID, rt.aclrtDeviceCanAccessPeer, 0, 9)
    fails(ACL_ERROR_FEATURE_UNSUPPORTED, rt.aclrtDeviceEnablePeerAccess, 1, 1)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtDeviceEnablePeerAccess, 0, 0)  # the current device
    fails(ACL_ERROR_RT_INVALID_DEVICEID, rt.aclrtDeviceEnablePeerAccess, 5, 0)
    rt.aclrtDeviceEnablePeerAccess(1, 0)
    assert rt.ctx.peer_access == {(0, 1)}
    rt.aclrtDeviceDisablePeerAccess(1)
    assert rt.ctx.peer_access == set()
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtDeviceDisablePeerAccess, 0)


async def test_a_copy_from_a_peer_device(rt: Runtime) -> None:
    data = np.random.default_rng(13).standard_normal(64).astype(np.float32)
    rt.aclrtSetDevice(1)
    theirs = upload(rt, data)
    rt.aclrtSetDevice(0)
    rt.aclrtDeviceEnablePeerAccess(1, 0)
    mine = rt.aclrtMalloc(data.nbytes, 0)
    rt.aclrtMemcpy(mine, data.nbytes, theirs, data.nbytes, ACL_MEMCPY_DEVICE_TO_DEVICE)
    np.testing.assert_array_equal(download(rt, mine, (64,), np.float32), data)
