"""Several devices in one daemon, and two daemons on two ports driven by one client program (VNPU_DEVICES)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import numpy as np
import pytest

import client.acl as acl
import proto.aclnn as nn
from client.routing import DEVICE_STRIDE, parse_devices
from proto.errors import (
    ACL_ERROR_FEATURE_UNSUPPORTED,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_STREAM_CONTEXT,
    AclError,
)
from tests.client.conftest import daemon_thread
from tests.server.npu.devicekit import tensor_at

F32 = acl.ACL_FLOAT
RNG = np.random.default_rng(9)


@pytest.fixture
def one_daemon(daemon: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("VNPU_ENDPOINT", daemon)
    monkeypatch.delenv("VNPU_DEVICES", raising=False)
    acl.aclInit(None)
    yield daemon
    acl.aclFinalize()


def upload(values: np.ndarray) -> int:
    ptr: int = acl.aclrtMalloc(values.nbytes, 0)
    acl.aclrtMemcpy(ptr, values.nbytes, values, values.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    return ptr


def download(ptr: int, n: int) -> np.ndarray:
    out = np.zeros(n, np.float32)
    acl.aclrtMemcpy(out, out.nbytes, ptr, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return out


def muls(src: int, dst: int, n: int, value: float, stream: int) -> None:
    ws, ex = nn.aclnnMulsGetWorkspaceSize(
        tensor_at(src, (n,), F32), nn.aclCreateScalar(value, F32), tensor_at(dst, (n,), F32)
    )
    acl.aclnnMuls(0, ws, ex, stream)


def test_several_devices_in_one_daemon(one_daemon: str) -> None:
    assert acl.aclrtGetDeviceCount() == 2
    data = RNG.standard_normal(256).astype(np.float32)
    acl.aclrtSetDevice(0)
    a = upload(data)
    s0 = acl.aclrtCreateStream()
    free0 = acl.aclrtGetMemInfo(acl.ACL_HBM_MEM)[0]
    acl.aclrtSetDevice(1)
    assert acl.aclrtGetDevice() == 1
    free1_before = acl.aclrtGetMemInfo(acl.ACL_HBM_MEM)[0]
    b = acl.aclrtMalloc(1024, 0)
    assert (b - a) // DEVICE_STRIDE == 1  # device 1's pointers lie in its own range
    assert acl.aclrtGetMemInfo(acl.ACL_HBM_MEM)[0] < free1_before  # per-device memory
    acl.aclrtMemcpy(b, 1024, a, 1024, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)  # D2D across devices
    np.testing.assert_array_equal(download(b, 256), data)
    s1 = acl.aclrtCreateStream()
    with pytest.raises(AclError) as info:
        acl.aclrtSynchronizeStream(s0)  # a stream of device 0 while device 1 is current
    assert info.value.code == ACL_ERROR_RT_STREAM_CONTEXT
    c = acl.aclrtMalloc(1024, 0)
    acl.aclmdlRICaptureBegin(s1, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)  # a model on device 1
    muls(b, c, 256, 3.0, s1)
    model = acl.aclmdlRICaptureEnd(s1)
    acl.aclmdlRIExecuteAsync(model, s1)
    acl.aclrtSynchronizeStream(s1)
    np.testing.assert_allclose(download(c, 256), data.astype(np.float64) * 3, rtol=1e-6)
    acl.aclmdlRIDestroy(model)
    acl.aclrtSetDevice(0)
    assert acl.aclrtGetMemInfo(acl.ACL_HBM_MEM)[0] == free0  # device 0 untouched by device 1's work
    for device in (0, 0, 1):  # each aclrtSetDevice counts
        acl.aclrtResetDevice(device)


def test_parse_devices() -> None:
    routes = parse_devices("0=ws://a:9470/0, 1=wss://b:9471/1,2=http://c:1/")
    assert [(d, r.endpoint, r.remote) for d, r in routes.items()] == [
        (0, "http://a:9470", 0),
        (1, "https://b:9471", 1),
        (2, "http://c:1", 0),
    ]
    for bad in ("", "x=ws://a:1/0", "0=ftp://a/0", "0=ws://a:1/zero"):
        with pytest.raises(ValueError, match="VNPU_DEVICES"):
            parse_devices(bad)


def test_two_daemons_one_program(monkeypatch: pytest.MonkeyPatch) -> None:
    with daemon_thread(devices=1) as first, daemon_thread(devices=1) as second:
        ws = [url.replace("http", "ws") for url in (first, second)]
        monkeypatch.setenv("VNPU_DEVICES", f"0={ws[0]}/0,1={ws[1]}/0")
        acl.aclInit(None)
        try:
            assert acl.aclrtGetDeviceCount() == 2
            data = RNG.standard_normal(64).astype(np.float32)
            acl.aclrtSetDevice(0)
            a = upload(data)
            s0 = acl.aclrtCreateStream()
            muls(a, a, 64, 2.0, s0)
            acl.aclrtSynchronizeStream(s0)
            acl.aclrtSetDevice(1)
            b = upload(np.zeros(64, np.float32))
            assert (b - a) // DEVICE_STRIDE == 1
            with pytest.raises(AclError) as info:
                acl.aclrtMemcpy(b, 256, a, 256, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)
            assert info.value.code == ACL_ERROR_FEATURE_UNSUPPORTED and "host memory" in info.value.message
            acl.aclrtSetDevice(0)
            staged = download(a, 64)  # through host memory instead
            acl.aclrtSetDevice(1)
            acl.aclrtMemcpy(b, 256, staged, 256, acl.ACL_MEMCPY_HOST_TO_DEVICE)
            s1 = acl.aclrtCreateStream()
            muls(b, b, 64, 0.5, s1)
            acl.aclrtSynchronizeStream(s1)
            np.testing.assert_allclose(download(b, 64), data, rtol=1e-6)
            with pytest.raises(AclError) as info:
                acl.aclrtSetDevice(2)
            assert info.value.code == ACL_ERROR_RT_INVALID_DEVICEID
            # each daemon really holds its own part
            used = [httpx.get(f"{url}/v1/devices/0").json()["memory"]["used"] for url in (first, second)]
            assert all(u >= 256 for u in used)
            for device in (0, 1):
                acl.aclrtSetDevice(device)
                acl.aclrtResetDevice(device)
                acl.aclrtResetDevice(device)
        finally:
            acl.aclFinalize()
