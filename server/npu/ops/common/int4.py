"""int4 in numpy: what vnpu's kernels accept and produce.

CANN stores int4 two to a byte (aclDataType INT4) or eight to an int32 word ("INT4 (INT32)": WeightQuantBatchMatmul,
FusedInferAttentionScore, DynamicQuant's packed output). vnpu's convention for a kernel:

- an `ml_dtypes.int4` array holds one value per element (the logical shape);
- an int8 or uint8 array used as an int4 container holds two values per byte, an int32 array eight per word;
  the packed values run along the last axis, the lowest nibble first (value 2k of a byte in bits 0-3, value
  2k+1 in bits 4-7), each nibble a two's-complement value in [-8, 7]. So the logical last dimension is 2x
  (int8) or 8x (int32) the container's.

`unpack` turns either form into int8 values of the logical shape; `pack` does the reverse.
"""

from __future__ import annotations

from typing import Any, Final

import ml_dtypes
import numpy as np

INT4: Final = np.dtype(ml_dtypes.int4)
PER_CONTAINER: Final[dict[np.dtype[Any], int]] = {
    np.dtype(np.int8): 2,
    np.dtype(np.uint8): 2,
    np.dtype(np.int32): 8,
}


def unpack(x: np.ndarray) -> np.ndarray:
    """The int4 values of `x` (ml_dtypes.int4, or a packed int8/uint8/int32 container) as int8, logical shape."""
    if x.dtype == INT4:
        return x.astype(np.int8)
    per = PER_CONTAINER.get(x.dtype)
    if per is None:
        raise TypeError(f"an int4 container must be int4, int8, uint8 or int32, not {x.dtype}")
    bits = np.ascontiguousarray(x).view(np.uint8 if per == 2 else np.uint32).astype(np.uint32)
    shifts = np.arange(per, dtype=np.uint32) * 4
    nibbles = (bits[..., None] >> shifts) & 0xF
    values = np.where(nibbles >= 8, nibbles.astype(np.int16) - 16, nibbles.astype(np.int16)).astype(np.int8)
    return values.reshape(*x.shape[:-1], x.shape[-1] * per)


def pack(values: np.ndarray, container: np.dtype[Any] | type) -> np.ndarray:
    """int4 `values` (integers in [-8, 7], last dimension a multiple of the packing) packed into `container`
    (int8, uint8 or int32), or converted to ml_dtypes.int4 when `container` is int4."""
    dtype = np.dtype(container)
    if dtype == INT4:
        return values.astype(INT4)
    per = PER_CONTAINER[dtype]
    if values.shape[-1] % per:
        raise ValueError(f"the last dimension {values.shape[-1]} is not a multiple of {per}")
    nibbles = (values.astype(np.int64) & 0xF).astype(np.uint64)
    grouped = nibbles.reshape(*values.shape[:-1], values.shape[-1] // per, per)
    words = (grouped << (np.arange(per, dtype=np.uint64) * 4)).sum(axis=-1)
    unsigned = np.uint8 if per == 2 else np.uint32
    packed: np.ndarray = words.astype(unsigned).view(dtype)
    return packed
