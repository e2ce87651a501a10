"""Quantization parameters shared by the quantized kernels.

- A UINT64/INT64 dequantization scale is what aclnnTransQuantParamV2 produces (its doc's formula): the float32
  scale truncated to its top 19 bits (`bits & 0xFFFFE000`) in bits 0-31, bit 46 set, and an optional 9-bit signed
  offset in bits 37-45. `dequant_scale` decodes it to (scale, offset); a float scale is used as it is.
- Casts to an integer output round half to even (the vector unit's default rint) and saturate.
"""

from __future__ import annotations

from typing import Final

import numpy as np

SCALE_MASK: Final = 0xFFFFE000


def dequant_scale(scale: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(float32 scale, float32 offset or None) from a FLOAT32/BFLOAT16/FLOAT16 or a packed UINT64/INT64 scale."""
    if scale.dtype in (np.uint64, np.int64):
        raw = scale.astype(np.int64).view(np.uint64)
        low = (raw & np.uint64(SCALE_MASK)).astype(np.uint32)
        nine = ((raw >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.int64)
        offset = np.where(nine >= 256, nine - 512, nine).astype(np.float32)
        return low.view(np.float32), offset
    return scale.astype(np.float32), None


def pack_dequant_scale(scale: np.ndarray, offset: np.ndarray | None = None) -> np.ndarray:
    """The UINT64 form of a float32 scale (and offset), as aclnnTransQuantParamV2 builds it (for tests/callers)."""
    bits = np.asarray(scale, np.float32).view(np.uint32).astype(np.uint64) & np.uint64(SCALE_MASK)
    packed = bits | np.uint64(1 << 46)
    if offset is not None:
        nine = np.clip(np.rint(np.asarray(offset, np.float32)), -256, 255).astype(np.int64) & 0x1FF
        packed = packed | (nine.astype(np.uint64) << np.uint64(37))
    result: np.ndarray = packed.astype(np.uint64)
    return result


def saturate(values: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """values rounded half to even and clipped to the integer `dtype`'s range, in that dtype."""
    info = np.iinfo(dtype)
    rounded: np.ndarray = np.clip(np.rint(values), info.min, info.max).astype(dtype)
    return rounded
