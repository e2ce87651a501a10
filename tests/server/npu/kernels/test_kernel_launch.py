"""Custom kernels on the device: binaries, functions, the three launch forms, their checks and codes, traps,
printf, and a custom kernel captured in a task group whose arguments an update changes; values on random data
against a float64 reference."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from proto import fatbin
from proto.constants import ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_VECTOR_CORE_EXCEPTION,
    AclError,
)
from proto.kernelargs import KernelArgs
from server.npu import Runtime
from server.npu import kernels as K
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import download, upload

K.load()


def pointers(*values: int) -> bytes:
    return b"".join(struct.pack("<Q", v) for v in values)


def vector_add_args(a: int, b: int, dst: int, alpha: float, n: int) -> bytes:
    return pointers(a, b, dst) + struct.pack("<f4x", alpha) + struct.pack("<I4x", n)


async def test_add_custom_from_a_fatbin_over_8_blocks(rt: Runtime) -> None:
    rng = np.random.default_rng(19)
    x, y = (rng.standard_normal(8 * 2048).astype(np.float16) for _ in range(2))
    px, py, pz = upload(rt, x), upload(rt, y), rt.aclrtMalloc(x.nbytes, 0)
    binary = rt.aclrtBinaryLoadFromData(fatbin.dumps(["add_custom"]), None)
    func = rt.aclrtBinaryGetFunction(binary, "add_custom")
    assert rt.aclrtBinaryGetFunction(binary, "add_custom") == func  # one handle per name
    args = KernelArgs(func)
    for p in (px, py, pz):
        args.append(struct.pack("<Q", p))
    args.finalize()
    stream = rt.aclrtCreateStream()
    rt.aclrtLaunchKernelWithConfig(func, 8, stream, None, args.wire(), None)
    await rt.aclrtSynchronizeStream(stream)
    expected = (x.astype(np.float64) + y.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(download(rt, pz, x.shape, np.float16), expected)


async def test_vector_add_by_raw_args_and_by_name(rt: Runtime) -> None:
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    alpha, n = float(np.float32(rng.uniform(-3, 3))), 50
    pa, pb, pd = upload(rt, a), upload(rt, b), upload(rt, np.zeros(64, np.float32))
    binary = rt.aclrtBinaryLoadFromData(b"\x7fELF any real kernel binary", None)
    func = rt.aclrtBinaryGetFunction(binary, "VectorAddKernel")
    rt.aclrtLaunchKernel(func, 1, vector_add_args(pa, pb, pd, alpha, n), 0)
    await rt.aclrtSynchronizeStream(0)
    want = np.zeros(64)
    want[:n] = a[:n].astype(np.float64) + alpha * b[:n].astype(np.float64)
    np.testing.assert_allclose(download(rt, pd, (64,), np.float32), want, rtol=1e-6, atol=1e-6)
    counts = upload(rt, np.zeros(4, np.uint32))
    for _ in range(3):
        rt.vnpuLaunchKernel("EasyOPf", 4, 0, pointers(counts))
    await rt.aclrtSynchronizeStream(0)
    assert download(rt, counts, (4,), np.uint32).tolist() == [3, 3, 3, 3]


async def test_the_runtimes_checks_and_codes(rt: Runtime) -> None:
    binary = rt.aclrtBinaryLoadFromData(fatbin.dumps(["add_custom", "NotRegistered"]), None)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtBinaryLoadFromData, None, None)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtBinaryLoadFromData, b"", None)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtBinaryGetFunction, None, "add_custom")
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtBinaryGetFunction, binary, None)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtBinaryGetFunction, 0x1234, "add_custom")
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtBinaryGetFunction, binary, "EasyOPf")
    assert "has no kernel 'EasyOPf'" in error.message and "add_custom" in error.message
    func = rt.aclrtBinaryGetFunction(binary, "add_custom")
    missing = rt.aclrtBinaryGetFunction(binary, "NotRegistered")
    z = rt.aclrtMalloc(64, 0)
    good = {"data": pointers(z, z, z), "placeholders": []}
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtLaunchKernelWithConfig, func, 0, 0, None, good, None)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtLaunchKernelWithConfig, func, 1, 0, None, None, None)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtLaunchKernelWithConfig, func, 1, 0, None, good, 0x10)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtLaunchKernelWithConfig, None, 1, 0, None, good, None)
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtLaunchKernelWithConfig, binary, 1, 0, None, good, None)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtLaunchKernel, func, 1, None, 0)
    error = fails(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, rt.aclrtLaunchKernel, missing, 1, pointers(z), 0)
    assert "kernel NotRegistered has no numpy implementation" in error.message and "VNPU_KERNELS" in error.message
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtLaunchKernel, func, 1, pointers(z, z), 0)
    assert "holds 16 bytes" in error.message and "takes 24" in error.message
    host = rt.aclrtMallocHost(64)
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtLaunchKernel, func, 1, pointers(z, host, z), 0)
    assert "argument #1 of kernel add_custom" in error.message
    rt.aclrtFree(z)
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtLaunchKernel, func, 1, pointers(z, z, z), 0)
    assert "freed by aclrtFree" in error.message
    rt.aclrtBinaryUnLoad(binary)
    error = fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtLaunchKernel, func, 1, pointers(0, 0, 0), 0)
    assert "destroyed" in error.message or "not a function" in error.message
    fails(ACL_ERROR_RT_INVALID_HANDLE, rt.aclrtBinaryUnLoad, binary)
    counts = upload(rt, np.zeros(1, np.uint32))  # nothing was lost: the default stream still runs kernels
    rt.vnpuLaunchKernel("EasyOPf", 1, 0, pointers(counts))
    await rt.aclrtSynchronizeStream(0)
    assert download(rt, counts, (1,), np.uint32).tolist() == [1]


async def test_a_trap_fails_its_task_with_the_vector_core_exception(rt: Runtime) -> None:
    counts = upload(rt, np.zeros(2, np.uint32))
    stream = rt.aclrtCreateStream()
    rt.vnpuLaunchKernel("ErrorOPf", 1, stream, b"")
    rt.vnpuLaunchKernel("EasyOPf", 2, stream, pointers(counts))
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(stream)
    assert info.value.code == ACL_ERROR_RT_VECTOR_CORE_EXCEPTION and "ErrorOPf trapped" in info.value.message
    await rt.aclrtSynchronizeStream(stream)  # reported once; the kernels after it ran (continue on failure)
    assert download(rt, counts, (2,), np.uint32).tolist() == [1, 1]


async def test_printf_in_stream_order_and_a_failing_implementation(rt: Runtime) -> None:
    values = upload(rt, np.zeros(3, np.int32))
    stream = rt.aclrtCreateStream()
    rt.vnpuLaunchKernel("DeviceWrite", 3, stream, pointers(values) + struct.pack("<i4x", -7))
    rt.vnpuLaunchKernel("KernelPrint", 2, stream, b"")
    rt.vnpuLaunchKernel("DeviceRead", 1, stream, pointers(values))
    await rt.aclrtSynchronizeStream(stream)
    assert rt.vnpuTakePrinted() == "Source data: -7\n" * 3 + "Hello World\n" * 2 + "Destination data: -7\n"
    assert rt.vnpuTakePrinted() == ""

    @K.kernel("BrokenKernel", K.ptr("int32"))
    def broken(k: K.Block, p: np.ndarray) -> None:
        p[10**6] = 1

    try:
        rt.vnpuLaunchKernel("BrokenKernel", 1, stream, pointers(values))
        with pytest.raises(AclError) as info:
            await rt.aclrtSynchronizeStream(stream)
        assert info.value.code == ACL_ERROR_RT_VECTOR_CORE_EXCEPTION and "IndexError" in info.value.message
    finally:
        K.unregister("BrokenKernel")


async def test_a_captured_custom_kernel_updated_through_its_task_group(rt: Runtime) -> None:
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal(32).astype(np.float32) for _ in range(2))
    pa, pb, pd = upload(rt, a), upload(rt, b), rt.aclrtMalloc(a.nbytes, 0)
    binary = rt.aclrtBinaryLoadFromData(fatbin.dumps(["VectorAddKernel"]), None)
    func = rt.aclrtBinaryGetFunction(binary, "VectorAddKernel")
    s, updater = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    rt.aclmdlRICaptureTaskGrpBegin(s)
    rt.aclrtLaunchKernel(func, 1, vector_add_args(pa, pb, pd, 2.0, 32), s)
    group = rt.aclmdlRICaptureTaskGrpEnd(s)
    model = rt.aclmdlRICaptureEnd(s)
    for alpha in (2.0, float(np.float32(rng.uniform(-4, 4)))):
        if alpha != 2.0:
            rt.aclmdlRICaptureTaskUpdateBegin(updater, group)
            rt.aclrtLaunchKernel(func, 1, vector_add_args(pa, pb, pd, alpha, 32), updater)
            rt.aclmdlRICaptureTaskUpdateEnd(updater)
            await rt.aclrtSynchronizeStream(updater)
        rt.aclmdlRIExecuteAsync(model, s)
        await rt.aclrtSynchronizeStream(s)
        want = a.astype(np.float64) + alpha * b.astype(np.float64)
        np.testing.assert_allclose(download(rt, pd, (32,), np.float32), want, rtol=1e-6, atol=1e-6)


async def test_add_custom_placeholder_variant_by_its_argument_count(rt: Runtime) -> None:
    """kernel/0's placeholder mode: add_custom with totalLength and tileNum in placeholder buffers."""
    rng = np.random.default_rng(23)
    x, y = (rng.standard_normal(8 * 2048).astype(np.float16) for _ in range(2))
    total = 8 * 1024  # only the first half
    px, py, pz = upload(rt, x), upload(rt, y), upload(rt, np.zeros(x.size, np.float16))
    func = rt.aclrtBinaryGetFunction(rt.aclrtBinaryLoadFromData(fatbin.dumps(["add_custom"]), None), "add_custom")
    args = KernelArgs(func)
    for p in (px, py, pz):
        args.append(struct.pack("<Q", p))
    for value, param in ((total, args.append_placeholder()), (8, args.append_placeholder())):
        args.placeholder_buffer(param, 4)[:] = struct.pack("<i", value)
    args.finalize()
    rt.aclrtLaunchKernelWithConfig(func, 8, 0, None, args.wire(), None)
    await rt.aclrtSynchronizeStream(0)
    want = np.zeros(x.size, np.float64)
    want[:total] = x[:total].astype(np.float64) + y[:total].astype(np.float64)
    np.testing.assert_array_equal(download(rt, pz, x.shape, np.float16), want.astype(np.float16))
