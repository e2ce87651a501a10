"""Numpy views of aclTensors over device memory: strided, offset, never copied."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from proto.aclnn import aclTensor
from proto.errors import ACLNN_ERR_INNER, AclError
from server.npu.ops.dtypes import np_dtype

Region = Callable[[int, int], np.ndarray]
"""The device's memory access: `region(ptr, nbytes)` is a 1-D uint8 view of [ptr, ptr + nbytes) (no copy),
or AclError when that range is not inside one live allocation."""


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
