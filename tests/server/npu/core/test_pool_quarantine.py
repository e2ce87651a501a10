"""Memory freed while a task on the kernel pool holds it: quarantined until the task ends, never another's.

Reliability probe §1: a kernel still running on the pool kept writing into a block its context had freed and
another tenant had just allocated. Now the range stays out of the allocator until the kernel ends, the kernel's
stream reports 507053 as for any task whose memory was freed, and aclrtGetMemInfo counts the range as used.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from math import erf, sqrt

import numpy as np
import pytest

from proto.aclnn import aclnnGeluGetWorkspaceSize
from proto.constants import aclrtMemAttr
from proto.errors import ACL_ERROR_RT_DEVICE_MEM_ERROR, AclError
from server.npu import Machine, Runtime
from tests.server.npu.devicekit import device_tensor, download, read_bytes

N = 6 << 20  # float32 elements: a Gelu of ~1 s on the pool, writing out chunk by chunk
HBM = aclrtMemAttr.ACL_HBM_MEM


@pytest.fixture
async def tenants() -> AsyncIterator[tuple[Machine, Runtime, Runtime]]:
    machine = Machine(memory_bytes=128 << 20, kernel_threads=2)
    alice, bob = Runtime(machine), Runtime(machine)
    for rt in (alice, bob):
        rt.aclInit()
        rt.aclrtSetDevice(0)
    yield machine, alice, bob
    for rt in (alice, bob):
        await rt.release_all()
    machine.close()


async def until_running(rt: Runtime, stream: int) -> None:
    """Until the stream's kernel is on the pool (bounded: 5 s)."""
    deadline = time.monotonic() + 5
    while rt.ctx.stream(stream).running is None:
        assert time.monotonic() < deadline, "the kernel never started"
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)  # its plan is made on the loop; now it runs in a pool thread


def launch_gelu(rt: Runtime, x: np.ndarray) -> tuple[int, int, int]:
    """Gelu(x) queued on a new stream: (stream, x's pointer, out's pointer)."""
    xt, xp = device_tensor(rt, x)
    ot, op = device_tensor(rt, np.zeros_like(x))
    _, executor = aclnnGeluGetWorkspaceSize(xt, ot)
    stream = rt.aclrtCreateStream()
    rt.aclnnGelu(0, 0, executor, stream)
    return stream, xp, op


async def test_a_block_freed_under_a_running_kernel_is_not_reused(
    tenants: tuple[Machine, Runtime, Runtime],
) -> None:
    machine, alice, bob = tenants
    x = np.random.default_rng(5).standard_normal(N).astype(np.float32)
    stream, _, out = launch_gelu(alice, x)
    await until_running(alice, stream)
    free_before, _ = alice.aclrtGetMemInfo(HBM)
    assert alice.ctx.stream(stream).running is not None, alice.ctx.stream(stream).error  # still running
    alice.aclrtFree(out)  # immediate, as in the runtime; the kernel still writes out
    assert alice.aclrtGetMemInfo(HBM)[0] == free_before  # quarantined bytes are not free
    mine = bob.aclrtMalloc(x.nbytes, 0)
    assert not out <= mine < out + x.nbytes and not mine <= out < mine + x.nbytes
    pattern = np.random.default_rng(6).integers(0, 256, x.nbytes, dtype=np.uint8)
    bob.aclrtMemcpy(mine, x.nbytes, pattern, x.nbytes, 1)
    with pytest.raises(AclError) as info:
        await alice.aclrtSynchronizeStream(stream)
    assert info.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR
    assert f"{out:#x}" in info.value.message and "while the task ran" in info.value.message
    assert read_bytes(bob, mine, x.nbytes) == pattern.tobytes()  # never written by alice's kernel
    assert machine.devices[0].arena.quarantined_bytes == 0
    bob.aclrtFree(mine)
    assert alice.aclrtGetMemInfo(HBM)[0] >= free_before + x.nbytes  # back to the allocator: the kernel ended
    # the stream and the device work on: the same kernel into live memory is right
    again, _, out2 = launch_gelu(alice, x[: 1 << 10])
    await alice.aclrtSynchronizeStream(again)
    expected = [v * 0.5 * (1 + erf(v / sqrt(2))) for v in x[: 1 << 10].astype(np.float64)]
    np.testing.assert_allclose(download(alice, out2, (1 << 10,), np.float32), expected, rtol=1e-6, atol=1e-7)
