"""The work of one launch is bounded: elements computed and workspace (207012 at the phase-2 call, before any
work, naming the limit, the launch's figure and the setting), and time on the kernel pool (507014 on the stream,
the run abandoned with its memory held until it ends).

Reliability probe §17: one aclnnMatmul over zero-stride views was accepted with unbounded compute (16 GiB and
minutes per launch, extrapolated).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import numpy as np
import pytest

from proto.aclnn import (
    aclCreateScalar,
    aclCreateTensor,
    aclnnAddGetWorkspaceSize,
    aclnnGeluGetWorkspaceSize,
    aclnnMatmulGetWorkspaceSize,
)
from proto.constants import aclDataType, aclFormat
from proto.errors import ACL_ERROR_RT_AICORE_TIMEOUT, ACL_ERROR_RT_OVER_LIMIT, AclError
from server.npu import Machine, Runtime
from tests.server.npu.devicekit import device_tensor, download

F32 = aclDataType.ACL_FLOAT
RNG = np.random.default_rng(17)


def broadcast(ptr: int, shape: tuple[int, ...]) -> object:
    """A zero-stride view of one float32 at `ptr` with `shape`: many elements over 4 bytes."""
    return aclCreateTensor(list(shape), F32, [0] * len(shape), 0, aclFormat.ACL_FORMAT_ND, [1], ptr)


async def runtime_on(machine: Machine) -> Runtime:
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    return rt


def upload_scalar(rt: Runtime, value: np.float32) -> int:
    return device_tensor(rt, np.array([value], np.float32))[1]


@pytest.fixture
async def bounded() -> AsyncIterator[tuple[Machine, Runtime]]:
    machine = Machine(memory_bytes=128 << 20, max_launch_workspace=1 << 20, launch_timeout=0.3)
    rt = await runtime_on(machine)
    yield machine, rt
    await rt.release_all()
    machine.close()


async def check_matmul(rt: Runtime) -> None:
    """The device and the stream work on: a small matmul is right (float64 reference)."""
    a, b = RNG.standard_normal((5, 7)).astype(np.float32), RNG.standard_normal((7, 3)).astype(np.float32)
    (at, _), (bt, _) = device_tensor(rt, a), device_tensor(rt, b)
    ot, out = device_tensor(rt, np.zeros((5, 3), np.float32))
    ws, executor = aclnnMatmulGetWorkspaceSize(at, bt, ot, 0)
    rt.aclnnMatmul(rt.aclrtMalloc(ws, 0), ws, executor, 0)
    await rt.aclrtSynchronizeStream(0)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(download(rt, out, (5, 3), np.float32), expected, rtol=1e-5, atol=1e-5)


async def test_the_probes_broadcast_matmul_is_refused_before_any_work(rt: Runtime) -> None:
    one = rt.aclrtMalloc(4, 0)
    out_t, _ = device_tensor(rt, np.zeros((1024, 1024), np.float32))
    k = 65536
    ws, executor = aclnnMatmulGetWorkspaceSize(broadcast(one, (1024, k)), broadcast(one, (k, 1024)), out_t, 0)
    workspace = rt.aclrtMalloc(ws, 0)
    free = rt.aclrtGetMemInfo(1)[0]
    started = time.monotonic()
    with pytest.raises(AclError) as info:
        rt.aclnnMatmul(workspace, ws, executor, 0)
    assert time.monotonic() - started < 0.5
    figure = 1024 * 1024 * k + 2 * 1024 * k + 1024 * 1024
    assert info.value.code == ACL_ERROR_RT_OVER_LIMIT and info.value.api == "aclnnMatmul"
    for named in (str(figure), str(1 << 34), "inner dimension 65536", "VNPU_MAX_LAUNCH_ELEMENTS"):
        assert named in info.value.message, info.value.message
    assert rt.ctx.stream(0).queued == 0 and rt.aclrtGetMemInfo(1)[0] == free
    await check_matmul(rt)


async def test_a_2048_matmul_is_under_the_default_bound(rt: Runtime) -> None:
    """`vnpu bench` figure 6's 2048² float32 matmul (2**33 multiply-adds plus its tensors) runs with the defaults."""
    value = np.float32(RNG.uniform(0.5, 1.5))
    one = upload_scalar(rt, value)
    out_t, out = device_tensor(rt, np.zeros((2048, 2048), np.float32))
    ws, executor = aclnnMatmulGetWorkspaceSize(broadcast(one, (2048, 2048)), broadcast(one, (2048, 2048)), out_t, 0)
    rt.aclnnMatmul(rt.aclrtMalloc(ws, 0) if ws else 0, ws, executor, 0)
    await rt.aclrtSynchronizeStream(0)
    got = download(rt, out, (2048, 2048), np.float32)
    np.testing.assert_allclose(got, np.full((2048, 2048), np.float64(value) ** 2 * 2048), rtol=1e-4)


async def test_elements_are_bounded_at_the_setting() -> None:
    machine = Machine(memory_bytes=16 << 20, max_launch_elements=3 * 4096)
    rt = await runtime_on(machine)
    try:
        x = RNG.standard_normal(4096).astype(np.float32)
        (xt, _), (ot, out) = device_tensor(rt, x), device_tensor(rt, np.zeros(4096, np.float32))
        alpha = aclCreateScalar(2.0, F32)
        _, executor = aclnnAddGetWorkspaceSize(xt, xt, alpha, ot)
        rt.aclnnAdd(0, 0, executor, 0)  # 3 × 4096: at the bound
        await rt.aclrtSynchronizeStream(0)
        np.testing.assert_allclose(download(rt, out, (4096,), np.float32), 3 * x.astype(np.float64), rtol=1e-6)
        big = RNG.standard_normal(4097).astype(np.float32)
        (bt, _), (bo, _) = device_tensor(rt, big), device_tensor(rt, np.zeros(4097, np.float32))
        _, executor = aclnnAddGetWorkspaceSize(bt, bt, alpha, bo)
        with pytest.raises(AclError) as info:
            rt.aclnnAdd(0, 0, executor, 0)
        assert info.value.code == ACL_ERROR_RT_OVER_LIMIT
        assert "computes 12291 elements" in info.value.message and "12288" in info.value.message
    finally:
        await rt.release_all()
        machine.close()


async def test_the_workspace_is_bounded(bounded: tuple[Machine, Runtime]) -> None:
    _, rt = bounded
    a_t, _ = device_tensor(rt, np.ones((512, 8), np.float32))
    b_t, _ = device_tensor(rt, np.ones((8, 1024), np.float32))
    out_t, _ = device_tensor(rt, np.zeros((512, 1024), np.float32))
    ws, executor = aclnnMatmulGetWorkspaceSize(a_t, b_t, out_t, 0)
    assert ws > 1 << 20
    with pytest.raises(AclError) as info:
        rt.aclnnMatmul(rt.aclrtMalloc(ws, 0), ws, executor, 0)
    assert info.value.code == ACL_ERROR_RT_OVER_LIMIT
    for named in (f"a {ws}-byte workspace", str(1 << 20), "VNPU_MAX_LAUNCH_WORKSPACE"):
        assert named in info.value.message, info.value.message
    await check_matmul(rt)


async def test_a_launch_past_the_time_limit_is_abandoned_with_507014(bounded: tuple[Machine, Runtime]) -> None:
    machine, rt = bounded
    _, one = device_tensor(rt, np.float16([0.7]))  # (erf(0) is quick)
    n = 1 << 25  # a float16 Gelu of ~1 s (or more) over a zero-stride input
    out_t, out = device_tensor(rt, np.zeros(n, np.float16))
    x = aclCreateTensor([n], aclDataType.ACL_FLOAT16, [0], 0, aclFormat.ACL_FORMAT_ND, [1], one)
    _, executor = aclnnGeluGetWorkspaceSize(x, out_t)
    stream = rt.aclrtCreateStream()
    rt.aclnnGelu(0, 0, executor, stream)
    started = time.monotonic()
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(stream)
    assert time.monotonic() - started < 0.9
    assert info.value.code == ACL_ERROR_RT_AICORE_TIMEOUT and "VNPU_LAUNCH_TIMEOUT" in info.value.message
    assert machine.pool.running == 1  # still running, abandoned
    rt.aclrtFree(out)  # held by the abandoned run: quarantined, not reused
    assert machine.devices[0].arena.quarantined_bytes > 0
    await check_matmul(rt)  # the stream and the device go on (the other pool thread is free)
    deadline = time.monotonic() + 10
    while machine.pool.running:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.01)  # its end reaches the loop
    assert machine.devices[0].arena.quarantined_bytes == 0
