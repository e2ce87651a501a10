"""Numpy views of aclTensors over device memory: strided, offset, never copied."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from proto.aclnn import aclTensor
from proto.errors import ACLNN_ERR_INNER, AclError
from server.npu.ops.dtypes import np_dtype

Region = Callable[[int, int], np.ndarray]
"""The device's memory access: `region(ptr, nbytes)` is a 1-D uint8 view of [ptr, ptr + nbytes) (no copy),
or AclError when that range is not inside one live allocation."""

Views = Callable[[aclTensor, bool], np.ndarray]
"""How a kernel sees its tensors: `views(tensor, writeable)` is `tensor_view` of it (see `ViewCache`)."""


def tensor_view(tensor: aclTensor, region: Region, *, writeable: bool = True) -> np.ndarray:
    """The view `tensor` describes: its byte range from `region` as its dtype, with its element strides.

    An empty tensor touches no memory (its pointer is not checked). Inputs are best taken with
    `writeable=False`, so that a kernel cannot write them by mistake.
    """
    dtype = np_dtype(tensor.data_type)
    if tensor.numel == 0:
        return np.empty(tensor.view_dims, dtype)
    ptr, nbytes = tensor.byte_range()
    raw = region(ptr, nbytes)
    if raw.dtype != np.uint8 or raw.shape != (nbytes,):
        raise AclError(ACLNN_ERR_INNER, f"region({ptr:#x}, {nbytes}) returned {raw.dtype} {raw.shape}")
    strides = tuple(s * dtype.itemsize for s in tensor.strides)
    view = np.ndarray(tensor.view_dims, dtype, buffer=raw, strides=strides)  # numpy checks it fits in raw
    view.flags.writeable = writeable
    return view


class Generation(Protocol):
    """A counter that moves whenever memory is freed (`server.npu.memory.arena.Epoch`)."""

    @property
    def value(self) -> int: ...


class ViewCache:
    """`tensor_view`s by what they view (pointer, offset, shape, strides, dtype), so that every kernel naming the
    same memory the same way shares one view instead of resolving it again on every launch.

    A view checked against live memory stays valid until some memory is freed, so the cache empties whenever
    `generation` moves (a stale view then fails its region check again, as the first one would have). It holds
    at most `capacity` views and starts over when full, so its size depends on the tensors in use, not on the
    number of tasks. Not thread-safe: use it on the event loop only.
    """

    def __init__(self, region: Region, generation: Generation, capacity: int = 4096) -> None:
        self.region = region
        self.capacity = capacity
        self._generation = generation
        self._seen = generation.value
        self._views: dict[tuple[object, ...], np.ndarray] = {}

    def __len__(self) -> int:
        """Distinct views held."""
        return len(self._views)

    def __call__(self, tensor: aclTensor, writeable: bool) -> np.ndarray:
        if self._seen != self._generation.value:
            self._views.clear()
            self._seen = self._generation.value
        key = (tensor.data, tensor.offset, tensor.view_dims, tensor.strides, tensor.data_type, writeable)
        view = self._views.get(key)
        if view is None:
            view = tensor_view(tensor, self.region, writeable=writeable)
            if len(self._views) >= self.capacity:
                self._views.clear()
            self._views[key] = view
        return view


def uncached(region: Region) -> Views:
    """Views resolved afresh on every call (off the event loop, or where nothing is cached)."""
    return lambda tensor, writeable: tensor_view(tensor, region, writeable=writeable)
