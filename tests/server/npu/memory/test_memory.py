"""aclrtMalloc/Free, MallocHost/FreeHost, Memcpy[Async], Memset[Async], GetMemInfo on the device directly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from proto.constants import (
    ACL_HBM_MEM,
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    aclrtMemcpyKind,
)
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu import Machine, Runtime
from server.npu.core import markers
from server.npu.memory.arena import MemoryFault
from tests.conftest import MEMORY

H2D, D2H, D2D = ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE
H2H, DEFAULT = aclrtMemcpyKind.ACL_MEMCPY_HOST_TO_HOST, aclrtMemcpyKind.ACL_MEMCPY_DEFAULT


def code_of(info: pytest.ExceptionInfo[AclError]) -> int:
    return info.value.code


async def test_malloc_is_aligned_accounted_and_freed(rt: Runtime) -> None:
    free0, total = rt.aclrtGetMemInfo(ACL_HBM_MEM)
    assert total == MEMORY and free0 == MEMORY
    ptrs = [rt.aclrtMalloc(n, ACL_MEM_MALLOC_HUGE_FIRST) for n in (1, 100, 4096, 12345)]
    assert all(p % 64 == 0 for p in ptrs)
    assert len(set(ptrs)) == 4
    free1, _ = rt.aclrtGetMemInfo(ACL_HBM_MEM)
    assert free1 < free0 - 4096 - 12345
    for p in ptrs:
        rt.aclrtFree(p)
    assert rt.aclrtGetMemInfo(ACL_HBM_MEM) == (free0, total)


@pytest.mark.parametrize(
    ("size", "policy", "code"),
    [
        (0, ACL_MEM_MALLOC_HUGE_FIRST, ACL_ERROR_INVALID_PARAM),
        (-5, ACL_MEM_MALLOC_HUGE_FIRST, ACL_ERROR_INVALID_PARAM),
        (64, 99, ACL_ERROR_INVALID_PARAM),
        (MEMORY * 2, ACL_MEM_MALLOC_HUGE_FIRST, ACL_ERROR_RT_MEMORY_ALLOCATION),
    ],
)
async def test_malloc_errors(rt: Runtime, size: int, policy: int, code: int) -> None:
    with pytest.raises(AclError) as info:
        rt.aclrtMalloc(size, policy)
    assert info.value.code == code and info.value.api == "aclrtMalloc"
    assert rt.aclrtMalloc(64, ACL_MEM_MALLOC_NORMAL_ONLY | ACL_MEM_TYPE_HIGH_BAND_WIDTH)  # still works


async def test_free_errors_explain_the_pointer(rt: Runtime) -> None:
    p = rt.aclrtMalloc(256, ACL_MEM_MALLOC_HUGE_FIRST)
    with pytest.raises(AclError) as info:
        rt.aclrtFree(p + 16)
    assert code_of(info) == ACL_ERROR_RT_PARAM_INVALID and "not the start" in info.value.message
    rt.aclrtFree(p)
    with pytest.raises(AclError) as info:
        rt.aclrtFree(p)
    assert code_of(info) == ACL_ERROR_RT_PARAM_INVALID and "double free" in info.value.message
    with pytest.raises(AclError) as info:
        rt.aclrtFree(0)
    assert code_of(info) == ACL_ERROR_INVALID_PARAM
    with pytest.raises(AclError) as info:
        rt.aclrtFree(0x1234)
    assert code_of(info) == ACL_ERROR_RT_PARAM_INVALID


async def test_out_of_memory_then_recovers(rt: Runtime) -> None:
    big = rt.aclrtMalloc(MEMORY - (1 << 20), ACL_MEM_MALLOC_HUGE_FIRST)
    with pytest.raises(AclError) as info:
        rt.aclrtMalloc(2 << 20, ACL_MEM_MALLOC_HUGE_FIRST)
    assert code_of(info) == ACL_ERROR_RT_MEMORY_ALLOCATION and "largest free block" in info.value.message
    rt.aclrtFree(big)
    rt.aclrtFree(rt.aclrtMalloc(2 << 20, ACL_MEM_MALLOC_HUGE_FIRST))


async def test_sync_memcpy_roundtrip_all_directions(rt: Runtime) -> None:
    rng = np.random.default_rng(1)
    data = rng.random(1000).astype(np.float32)
    n = data.nbytes
    a = rt.aclrtMalloc(n, ACL_MEM_MALLOC_HUGE_FIRST)
    b = rt.aclrtMalloc(n, ACL_MEM_MALLOC_HUGE_FIRST)
    h = rt.aclrtMallocHost(n)
    rt.aclrtMemcpy(a, n, data, n, H2D)  # pageable -> device
    rt.aclrtMemcpy(b, n, a, n, D2D)
    rt.aclrtMemcpy(h, n, b, n, D2H)  # device -> pinned
    out = np.zeros_like(data)
    rt.aclrtMemcpy(out, n, h, n, D2H)  # pinned -> pageable
    np.testing.assert_array_equal(out, data)
    # pointer arithmetic inside an allocation: copy the second half only
    half = np.zeros(500, np.float32)
    rt.aclrtMemcpy(half, n // 2, a + n // 2, n // 2, D2H)
    np.testing.assert_array_equal(half, data[500:])


async def test_a_sync_copy_goes_by_its_pointers_and_notes_a_contradicting_kind(rt: Runtime) -> None:
    """aclrtMemcpy's kind is a reserved parameter (CANN's documentation): the pointers decide, a contradicting kind is
    noted in the trace; INNER/INTER device-to-device are not kinds it translates (100000, MemcpyKindTranslate)."""
    a = rt.aclrtMalloc(16, ACL_MEM_MALLOC_HUGE_FIRST)
    rt.aclrtMemcpy(a, 16, b"0123456789abcdef", 16, D2H)  # wrong kind: the pointers decide
    out = bytearray(16)
    rt.aclrtMemcpy(out, 16, a, 16, H2D)
    assert bytes(out) == b"0123456789abcdef"
    marks = [r[1] for r in rt.machine.tracer.ring if r[0] is markers.MarkTask]
    assert marks == [
        "aclrtMemcpy: kind ACL_MEMCPY_DEVICE_TO_HOST ignored: the pointers say ACL_MEMCPY_HOST_TO_DEVICE "
        "(pageable host to device memory)",
        "aclrtMemcpy: kind ACL_MEMCPY_HOST_TO_DEVICE ignored: the pointers say ACL_MEMCPY_DEVICE_TO_HOST "
        "(device to pageable host memory)",
    ]
    for kind in (6, 7, 42):
        with pytest.raises(AclError) as info:
            rt.aclrtMemcpy(out, 16, a, 16, kind)
        assert code_of(info) == ACL_ERROR_INVALID_PARAM


async def test_an_async_copy_checks_its_kind_as_the_runtime_does(rt: Runtime) -> None:
    """MemcpyKindAutoCorrect (hicann/runtime api_error.cc): with pageable memory on one side only some kinds are
    allowed (107000 otherwise); between device and pinned memory the kind is set from the pointers (noted in the
    trace); host to host is not asynchronous (207000)."""
    a, h = rt.aclrtMalloc(16, ACL_MEM_MALLOC_HUGE_FIRST), rt.aclrtMallocHost(16)
    stream = rt.aclrtCreateStream()
    for wrong in (H2D, H2H):  # device -> pageable takes D2H or D2D
        with pytest.raises(AclError) as info:
            await rt.aclrtMemcpyAsync(bytearray(16), 16, a, 16, wrong, stream)
        assert code_of(info) == ACL_ERROR_RT_PARAM_INVALID
        assert "src is device memory and dst is pageable host memory" in info.value.message
        assert "ACL_MEMCPY_DEVICE_TO_HOST or ACL_MEMCPY_DEVICE_TO_DEVICE" in info.value.message
    await rt.aclrtMemcpyAsync(bytearray(16), 16, a, 16, D2D, stream)  # allowed
    with pytest.raises(AclError) as info:
        await rt.aclrtMemcpyAsync(h, 16, h, 16, DEFAULT, stream)  # host to host: not asynchronously
    assert code_of(info) == ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    await rt.aclrtMemcpyAsync(h, 16, a, 16, H2D, stream)  # set to D2H: runs
    await rt.aclrtSynchronizeStream(stream)
    marks = [r[1] for r in rt.machine.tracer.ring if r[0] is markers.MarkTask]
    assert marks == [
        "aclrtMemcpyAsync: kind ACL_MEMCPY_HOST_TO_DEVICE set to ACL_MEMCPY_DEVICE_TO_HOST (device to pinned host "
        "memory)"
    ]


@pytest.mark.parametrize(
    ("case", "code", "words"),
    [
        ("dest_max", ACL_ERROR_INVALID_PARAM, "destMax"),
        ("past_end", ACL_ERROR_RT_PARAM_INVALID, "past its end"),
        ("null", ACL_ERROR_INVALID_PARAM, "NULL"),
        ("freed", ACL_ERROR_RT_PARAM_INVALID, "was freed"),
        ("small_host", ACL_ERROR_INVALID_PARAM, "too small"),
        ("readonly", ACL_ERROR_INVALID_PARAM, "read-only"),
    ],
)
async def test_memcpy_errors(rt: Runtime, case: str, code: int, words: str) -> None:
    a = rt.aclrtMalloc(64, ACL_MEM_MALLOC_HUGE_FIRST)
    f = rt.aclrtMalloc(64, ACL_MEM_MALLOC_HUGE_FIRST)
    rt.aclrtFree(f)
    args = {
        "dest_max": (a, 32, b"x" * 64, 64),
        "past_end": (a + 32, 64, b"x" * 64, 64),
        "null": (0, 64, b"x" * 64, 64),
        "freed": (f, 64, b"x" * 64, 64),
        "small_host": (a, 64, b"x" * 10, 64),
        "readonly": (b"y" * 64, 64, a, 64),
    }[case]
    with pytest.raises(AclError) as info:
        rt.aclrtMemcpy(*args, H2D)
    assert code_of(info) == code and words in info.value.message, info.value.message
    rt.aclrtMemcpy(a, 64, b"z" * 64, 64, H2D)  # the device still works


async def test_memset_sync_and_async(rt: Runtime) -> None:
    a = rt.aclrtMalloc(100, ACL_MEM_MALLOC_HUGE_FIRST)
    rt.aclrtMemset(a, 100, 0x1AB, 100)  # value is truncated to a byte, as C memset does
    out = bytearray(100)
    rt.aclrtMemcpy(out, 100, a, 100, D2H)
    assert out == b"\xab" * 100
    s = rt.aclrtCreateStream()
    rt.aclrtMemsetAsync(a + 10, 90, 7, 20, s)
    await rt.aclrtSynchronizeStream(s)
    rt.aclrtMemcpy(out, 100, a, 100, D2H)
    assert out == b"\xab" * 10 + b"\x07" * 20 + b"\xab" * 70
    with pytest.raises(AclError) as info:
        rt.aclrtMemset(a, 10, 0, 20)
    assert code_of(info) == ACL_ERROR_INVALID_PARAM


async def test_async_copy_reads_source_when_it_runs(rt: Runtime) -> None:
    """A queued copy sees what earlier tasks of the stream wrote, not what the source held at issue time."""
    n = 4096
    a, b = rt.aclrtMalloc(n, 0), rt.aclrtMalloc(n, 0)
    h = rt.aclrtMallocHost(n)
    s = rt.aclrtCreateStream()
    ev = rt.aclrtCreateEventWithFlag(1)  # a binary event, never recorded yet: the stream blocks on it
    rt.aclrtStreamWaitEvent(s, ev)
    await rt.aclrtMemcpyAsync(b, n, a, n, D2D, s)
    await rt.aclrtMemcpyAsync(h, n, b, n, D2H, s)
    data = np.random.default_rng(3).integers(0, 255, n, dtype=np.uint8)
    rt.aclrtMemcpy(a, n, data, n, H2D)  # written after the copies were issued, before they run
    rt.aclrtRecordEvent(ev, 0)
    await rt.aclrtSynchronizeStream(s)
    out = np.zeros(n, np.uint8)
    rt.aclrtMemcpy(out, n, h, n, D2H)
    np.testing.assert_array_equal(out, data)


async def test_async_copy_with_pageable_memory_waits_for_the_stream(rt: Runtime) -> None:
    n = 256
    a = rt.aclrtMalloc(n, 0)
    s = rt.aclrtCreateStream()
    rt.aclrtMemsetAsync(a, n, 5, n, s)
    out = bytearray(n)
    await rt.aclrtMemcpyAsync(out, n, a, n, D2H, s)  # pageable: synchronous after the memset
    assert out == b"\x05" * n


async def test_async_copy_to_freed_memory_fails_the_task_not_the_stream(rt: Runtime) -> None:
    n = 64
    a, b = rt.aclrtMalloc(n, 0), rt.aclrtMalloc(n, 0)
    s = rt.aclrtCreateStream()
    ev = rt.aclrtCreateEventWithFlag(1)
    rt.aclrtStreamWaitEvent(s, ev)
    await rt.aclrtMemcpyAsync(b, n, a, n, D2D, s)
    rt.aclrtFree(a)  # freed while the copy is queued: undefined on the NPU, explained by vnpu
    rt.aclrtMemsetAsync(b, n, 9, n, s)
    rt.aclrtRecordEvent(ev, 0)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(s)
    assert info.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR
    assert f"{a:#x}" in info.value.message and "freed" in info.value.message
    await rt.aclrtSynchronizeStream(s)  # the sticky error was reported once
    out = bytearray(n)
    rt.aclrtMemcpy(out, n, b, n, D2H)
    assert out == b"\x09" * n  # the task after the failed one ran


async def test_host_memory_is_shared_memory_and_released(machine: Machine, rt: Runtime) -> None:
    h = rt.aclrtMallocHost(1 << 20)
    buf = machine.host.find(h)
    assert buf is not None
    path = Path("/dev/shm") / buf.name
    assert path.exists() and path.stat().st_size == 1 << 20
    rt.aclrtFreeHost(h)
    assert not path.exists()
    with pytest.raises(AclError) as info:
        rt.aclrtFreeHost(h)
    assert info.value.code == ACL_ERROR_RT_PARAM_INVALID and "double free" in info.value.message
    h2 = rt.aclrtMallocHost(100)
    name = machine.host.find(h2).name  # type: ignore[union-attr]
    await rt.release_all()
    assert not (Path("/dev/shm") / name).exists()


async def test_host_pointer_bounds(rt: Runtime) -> None:
    h = rt.aclrtMallocHost(100)
    a = rt.aclrtMalloc(200, 0)
    with pytest.raises(AclError) as info:
        rt.aclrtMemcpy(a, 200, h, 200, H2D)
    assert info.value.code == ACL_ERROR_RT_PARAM_INVALID and "past the end" in info.value.message
    with pytest.raises(AclError) as info:
        rt.aclrtMallocHost(0)
    assert info.value.code == ACL_ERROR_INVALID_PARAM


def test_the_record_of_freed_host_buffers_is_bounded_and_precise(machine: Machine) -> None:
    from server.npu.memory import hostmem

    host = machine.host
    first = host.malloc(64)
    live = host.malloc(64)
    host.free(first.ptr)
    with pytest.raises(MemoryFault, match="points into a freed aclrtMallocHost buffer"):
        host.region(first.ptr + 8, 4)
    with pytest.raises(MemoryFault, match="points into no live aclrtMallocHost buffer"):
        host.region(live.end + 8, 4)  # the guard page after a live buffer: above a freed one, but not in it
    for _ in range(hostmem.FREED_KEPT + 3):
        host.free(host.malloc(16).ptr)
    assert len(host._freed) == hostmem.FREED_KEPT
    with pytest.raises(MemoryFault, match="not the start of an aclrtMallocHost buffer"):
        host.free(first.ptr)  # forgotten by now: still refused, with the plainer message
    host.free(live.ptr)
