"""Test kit for the kernels: a fake device (one numpy byte buffer, a bump allocator, a bounds-checked
`region`), random samples and tolerances. Imported by the tests here and by this directory's conftest.

Tensors are written and read back through an address computation of their own (numpy fancy indexing over the
storage), independent of `server.npu.ops.views`, so the kernels' strided views are checked against it.
Storage is filled with random garbage first: a kernel that misses an element cannot pass by luck.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from proto.aclnn import KernelDesc, aclCreateTensor, aclOpExecutor, aclTensor, consume, revalidate
from proto.aclnn.dtypes import INFO, Kind
from proto.constants import aclDataType, aclFormat
from proto.errors import ACL_ERROR_RT_DEVICE_MEM_ERROR, AclError
from server.npu.memory.arena import Epoch
from server.npu.ops import ViewCache, run_kernel
from server.npu.ops.dtypes import NUMPY

DT = aclDataType
FLOATS = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE)
INTS = (DT.ACL_INT8, DT.ACL_INT16, DT.ACL_INT32, DT.ACL_INT64, DT.ACL_UINT8)
ALL = (*FLOATS, *INTS, DT.ACL_BOOL)
RTOL = {DT.ACL_FLOAT16: 2e-3, DT.ACL_BF16: 1.6e-2, DT.ACL_FLOAT: 2e-6, DT.ACL_DOUBLE: 1e-12}
"""Relative tolerance of one rounding into each float dtype, with margin (also used as absolute tolerance
for results of magnitude ~1)."""


class FakeMemory:
    """Device memory in miniature: allocations in one byte buffer, `region` refusing any stray byte."""

    BASE = 0x12_0000_0000

    def __init__(self, rng: np.random.Generator, size: int = 1 << 22) -> None:
        self.rng = rng
        self.buffer = rng.integers(0, 256, size, dtype=np.uint8)
        self.blocks: dict[int, int] = {}
        self.top = 0
        self.views = ViewCache(self.region, Epoch())  # nothing is ever freed here: the epoch never moves

    def alloc(self, nbytes: int) -> int:
        ptr = self.BASE + self.top
        self.blocks[ptr] = nbytes
        self.top += -(-max(nbytes, 1) // 64) * 64 + 64
        assert self.top <= self.buffer.size, "FakeMemory is full"
        return ptr

    def region(self, ptr: int, nbytes: int) -> np.ndarray:
        for start, size in self.blocks.items():
            if start <= ptr and ptr + nbytes <= start + size:
                offset = ptr - self.BASE
                return self.buffer[offset : offset + nbytes]
        raise AclError(ACL_ERROR_RT_DEVICE_MEM_ERROR, f"[{ptr:#x}, +{nbytes}) is not inside one allocation")

    def tensor(
        self,
        array: np.ndarray,
        dtype: aclDataType,
        *,
        step: int = 1,
        offset: int = 0,
        order: Sequence[int] | None = None,
    ) -> aclTensor:
        """A tensor holding `array`: elements `step` apart, starting `offset` elements in, dims laid out
        outermost-first in `order` (None: C order), over garbage-filled storage."""
        shape = array.shape
        layout = list(order) if order is not None else list(range(len(shape)))
        strides = [0] * len(shape)
        stride = step
        for axis in reversed(layout):
            strides[axis] = stride
            stride *= shape[axis]
        extent = offset + sum((d - 1) * s for d, s in zip(shape, strides, strict=True)) + 1
        ptr = self.alloc(extent * INFO[dtype].itemsize)
        t = aclCreateTensor(shape, dtype, strides, offset, aclFormat.ACL_FORMAT_ND, [extent], ptr)
        self.write(t, array)
        return t

    def write(self, t: aclTensor, array: np.ndarray) -> None:
        """Store `array` (broadcast to the tensor's shape) into the tensor's elements."""
        extent = t.offset + t.last_element + 1 if t.numel else 0
        values = np.broadcast_to(np.asarray(array, NUMPY[t.data_type]), t.view_dims)
        self._storage(t, extent)[self._index(t)] = values.reshape(-1)

    def empty(self, shape: Sequence[int], dtype: aclDataType, **layout: Any) -> aclTensor:
        """A tensor of garbage (random bytes reinterpreted)."""
        return self.tensor(np.zeros(shape, NUMPY[dtype]), dtype, **layout)

    def read(self, t: aclTensor) -> np.ndarray:
        """A copy of the tensor's elements, addressed independently of the kernels' views."""
        extent = t.offset + t.last_element + 1 if t.numel else 0
        return self._storage(t, extent)[self._index(t)].reshape(t.view_dims)

    def alias(self, t: aclTensor, shape: Sequence[int], strides: Sequence[int], offset: int) -> aclTensor:
        """Another view of the same storage as `t`."""
        storage = math.prod(t.storage_dims)
        return aclCreateTensor(shape, t.data_type, strides, offset, t.format, [storage], t.data)

    def _storage(self, t: aclTensor, extent: int) -> np.ndarray:
        start = t.data - self.BASE
        return self.buffer[start : start + extent * t.itemsize].view(NUMPY[t.data_type])

    @staticmethod
    def _index(t: aclTensor) -> np.ndarray:
        grid = np.indices(t.view_dims).reshape(len(t.view_dims), t.numel)
        return t.offset + (np.array(t.strides, dtype=np.int64).reshape(-1, 1) * grid).sum(axis=0)

    def launch(self, phase1: Callable[..., tuple[int, aclOpExecutor]], *args: object) -> int:
        """Phase 1, consume, revalidate, then the kernel over this memory; the workspace size."""
        size, executor = phase1(*args)
        self.execute(revalidate(consume(executor, phase1.__name__.removesuffix("GetWorkspaceSize"))))
        return size

    def execute(self, kernel: KernelDesc) -> None:
        """A revalidated kernel over this memory, planned afresh, with a fresh workspace."""
        size = kernel.workspace_size
        workspace = self.region(self.alloc(size), size) if size else None
        run_kernel(kernel, self.region, workspace, views=self.views)  # shared views, as the device's inline kernels


def sample(rng: np.random.Generator, shape: Sequence[int], dtype: aclDataType) -> np.ndarray:
    """Random values of `dtype`: normal floats, small-range integers (products do overflow int8), bools."""
    kind = INFO[dtype].kind
    if kind is Kind.FLOAT:
        return (rng.standard_normal(shape) * 2).astype(NUMPY[dtype])
    if kind is Kind.BOOL:
        return rng.random(shape) < 0.5
    low = 0 if kind is Kind.UINT else -100
    return rng.integers(low, 100, shape).astype(NUMPY[dtype])


def close(got: np.ndarray, want: np.ndarray, dtype: aclDataType, rtol: float | None = None) -> None:
    """`got` (of `dtype`) equals the float64 or exact reference `want`, within one rounding for floats."""
    if INFO[dtype].kind is Kind.FLOAT:
        tol = rtol if rtol is not None else RTOL[dtype]
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want.astype(NUMPY[dtype]))
