"""Helpers for tests that drive the device: put numpy arrays into device memory as aclTensors and read them back."""

from __future__ import annotations

import numpy as np

from proto.aclnn import aclCreateScalar, aclCreateTensor, aclnnAddsGetWorkspaceSize, aclTensor
from proto.constants import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, aclDataType, aclFormat
from server.npu import Runtime
from server.npu.ops.dtypes import NUMPY

ACL_OF = {np.dtype(v): k for k, v in NUMPY.items()}


def contiguous_strides(shape: tuple[int, ...]) -> list[int]:
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= dim
    return strides[::-1]


def upload(rt: Runtime, array: np.ndarray) -> int:
    ptr = rt.aclrtMalloc(max(array.nbytes, 1), 0)
    upload_into(rt, ptr, array)
    return ptr


def upload_into(rt: Runtime, ptr: int, array: np.ndarray) -> None:
    data = np.ascontiguousarray(array)
    rt.aclrtMemcpy(ptr, data.nbytes, data.view(np.uint8).reshape(-1), data.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)


def download(rt: Runtime, ptr: int, shape: tuple[int, ...], dtype: np.dtype | type) -> np.ndarray:
    out = np.empty(shape, dtype)
    rt.aclrtMemcpy(out.view(np.uint8).reshape(-1), out.nbytes, ptr, out.nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
    return out


def read_bytes(rt: Runtime, ptr: int, n: int) -> bytes:
    out = bytearray(n)
    rt.aclrtMemcpy(out, n, ptr, n, ACL_MEMCPY_DEVICE_TO_HOST)
    return bytes(out)


def device_tensor(rt: Runtime, array: np.ndarray) -> tuple[aclTensor, int]:
    """A contiguous ND tensor holding `array` in fresh device memory, and its pointer."""
    ptr = upload(rt, array)
    shape = tuple(array.shape)
    return tensor_at(ptr, shape, ACL_OF[array.dtype]), ptr


def tensor_at(ptr: int, shape: tuple[int, ...], dtype: aclDataType) -> aclTensor:
    return aclCreateTensor(list(shape), dtype, contiguous_strides(shape), 0, aclFormat.ACL_FORMAT_ND, list(shape), ptr)


def pinned(rt: Runtime, ptr: int, count: int, dtype: np.dtype | type = np.float32) -> np.ndarray:
    """The aclrtMallocHost buffer at `ptr` as a numpy array that the test reads and writes like C host code."""
    buf = rt.ctx.machine.host.find(ptr)
    assert buf is not None
    start = ptr - buf.ptr
    return buf.array[start : start + count * np.dtype(dtype).itemsize].view(dtype)


class Vec:
    """A float32 vector in device memory, with kernels that write into it (fresh executors every time)."""

    def __init__(self, rt: Runtime, values: np.ndarray) -> None:
        self.rt = rt
        self.n = len(values)
        self.ptr = upload(rt, values.astype(np.float32))
        self.t = tensor_at(self.ptr, (self.n,), aclDataType.ACL_FLOAT)

    def adds(self, src: Vec, value: float, stream: int) -> None:
        """self = src + value (aclnnAdds, a vector kernel)."""
        from proto.aclnn import aclCreateScalar, aclnnAddsGetWorkspaceSize

        one = aclCreateScalar(1.0, aclDataType.ACL_FLOAT)
        ws, ex = aclnnAddsGetWorkspaceSize(src.t, aclCreateScalar(value, aclDataType.ACL_FLOAT), one, self.t)
        self.rt.aclnnAdds(0, ws, ex, stream)

    def muls(self, src: Vec, value: float, stream: int) -> None:
        """self = src * value (aclnnMuls, a vector kernel)."""
        from proto.aclnn import aclCreateScalar, aclnnMulsGetWorkspaceSize

        ws, ex = aclnnMulsGetWorkspaceSize(src.t, aclCreateScalar(value, aclDataType.ACL_FLOAT), self.t)
        self.rt.aclnnMuls(0, ws, ex, stream)

    def read(self) -> np.ndarray:
        return download(self.rt, self.ptr, (self.n,), np.float32)


def counter_add(rt: Runtime, ptr: int, step: int, stream: int) -> None:
    """*ptr (int64) += step, as a kernel on `stream`."""
    t = tensor_at(ptr, (1,), aclDataType.ACL_INT64)
    one = aclCreateScalar(1, aclDataType.ACL_INT64)
    ws, ex = aclnnAddsGetWorkspaceSize(t, aclCreateScalar(step, aclDataType.ACL_INT64), one, t)
    rt.aclnnAdds(0, ws, ex, stream)
