"""Quantization around attention: int8/int4 KV caches dequantized ("antiquant"), int8 outputs ("post-quant").

Antiquant (IncreFlashAttention's design doc, docs/IFA算子设计介绍.md: C = A · (B + offset) × scale): a key or value
in int8, or int4 (an ml_dtypes.int4 array, or eight values per int32 word, `server.npu.ops.common.int4`), becomes
(x + offset) · scale in float32. The scale/offset come either separately (keyAntiquantScale/Offset,
valueAntiquantScale/Offset with keyAntiquantMode/valueAntiquantMode) or combined (antiquantScale/Offset with a
leading axis of 2: index 0 for the key, 1 for the value, and antiquantMode). Modes vnpu implements:

- 0 per-channel (or per-tensor): a single value, or KV_N·D values ((1, N, 1, D), (1, N, D), (1, H), (N, D), (H)...);
- 1 per-token: (1, B, S) or (B, S), indexed by batch and by the token's position in its sequence;
- 2 per-tensor × per-head: (N), one value per KV head;
- 3 per-token × per-head: (B, N, S).
Modes 4-7 (scales paged like the cache, per-token-group, FP8 per-block) are refused with 161002.

Post-quant (quantScale2/quantOffset2): out = saturate_int8(rint(x · scale + offset)), scale per-tensor (one value)
or per-channel (N·Dv values, in (N, Dv) order). rint rounds half to even, as the vector unit's default cast.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from server.npu.ops.common import int4
from server.npu.ops.common.errors import invalid, unsupported

QUANTIZED_KV = frozenset({np.dtype(np.int8), np.dtype(np.int32), int4.INT4})


@dataclass(frozen=True)
class Dequant:
    """How one of key/value is dequantized: (x + offset) · scale, `mode` as above."""

    op: str
    name: str  # the C name of the scale argument
    mode: int
    scale: np.ndarray
    offset: np.ndarray | None

    def apply(self, x: np.ndarray, batch: int, positions: np.ndarray) -> np.ndarray:
        """x [KV_N, L, D] (integer values) of batch `batch`, whose tokens sit at `positions` (L) in its sequence."""
        heads, _, depth = x.shape
        scale = self._shaped(self.scale, heads, depth, batch, positions)
        offset = 0.0 if self.offset is None else self._shaped(self.offset, heads, depth, batch, positions)
        result: np.ndarray = ((x.astype(np.float32) + offset) * scale).astype(np.float32)
        return result

    def _shaped(self, values: np.ndarray, heads: int, depth: int, batch: int, positions: np.ndarray) -> np.ndarray:
        v = values.astype(np.float32)
        if self.mode == 0:
            if v.size == 1:
                return v.reshape(1, 1, 1)
            if v.size != heads * depth:
                raise invalid(self.op, self.name, f"per-channel needs 1 or {heads}×{depth} values, not {v.shape}")
            return v.reshape(heads, 1, depth)
        if self.mode == 2:
            if v.size != heads:
                raise invalid(self.op, self.name, f"per-tensor×per-head needs {heads} values, not {v.shape}")
            return v.reshape(heads, 1, 1)
        table = v.reshape(-1, v.shape[-1]) if self.mode == 1 else v.reshape(-1, heads, v.shape[-1])
        if batch >= table.shape[0] or (positions.size and int(positions.max()) >= table.shape[-1]):
            raise invalid(self.op, self.name, f"shape {values.shape} has no entry for batch {batch}'s tokens")
        picked: np.ndarray = table[batch]
        if self.mode == 1:
            per_token: np.ndarray = picked[positions].reshape(1, -1, 1)
            return per_token
        per_head: np.ndarray = picked[:, positions][:, :, None]
        return per_head


def dequant(
    op: str,
    role: str,
    separate: tuple[np.ndarray | None, np.ndarray | None, int],
    combined: tuple[np.ndarray | None, np.ndarray | None, int],
) -> Dequant | None:
    """The Dequant of the key (role "key") or value ("value"): the separate parameters (scale, offset, mode) when
    given, else the combined ones' slice 0 (key) or 1 (value); None when neither is given."""
    scale, offset, mode = separate
    name = f"{role}AntiquantScaleOptional"
    if scale is None:
        scale, offset, mode = combined
        name = "antiquantScaleOptional"
        if scale is None:
            return None
        index = 0 if role == "key" else 1
        if scale.ndim == 0 or scale.shape[0] != 2:
            raise invalid(op, name, f"shape {scale.shape}: the combined scale needs a leading axis of 2 (key, value)")
        scale = scale[index]
        offset = None if offset is None else offset[index]
    if mode not in (0, 1, 2, 3):
        raise unsupported(op, name, f"antiquant mode {mode}")
    if offset is not None and offset.shape != scale.shape:
        offset_name = name.replace("Scale", "Offset")
        raise invalid(op, offset_name, f"shape {offset.shape} differs from the scale's {scale.shape}")
    return Dequant(op, name, mode, scale, offset)


def widen_kv(op: str, name: str, x: np.ndarray) -> np.ndarray:
    """A key/value tensor as values of its logical shape: int4 (int4 or int32 container) unpacked along the
    last axis; int8 and floats as they are."""
    if x.dtype == np.int32 or x.dtype == int4.INT4:
        return int4.unpack(x)
    if x.dtype not in QUANTIZED_KV and x.dtype.kind not in "fV" and x.dtype.name != "bfloat16":
        raise invalid(op, name, f"dtype {x.dtype} is not a key/value dtype")
    return x


def post_quant(op: str, x: np.ndarray, heads_axis: int, scale: np.ndarray, offset: np.ndarray | None) -> np.ndarray:
    """x (float32, heads on axis `heads_axis`, Dv last) quantized to int8 with quantScale2/quantOffset2."""
    heads, dv = x.shape[heads_axis], x.shape[-1]

    def shaped(values: np.ndarray, name: str) -> np.ndarray:
        v = values.astype(np.float32)
        if v.size == 1:
            return v.reshape(())
        if v.size != heads * dv:
            raise invalid(op, name, f"per-channel needs 1 or {heads}×{dv} values, not {values.shape}")
        shape = [1] * x.ndim
        shape[heads_axis], shape[-1] = heads, dv
        return v.reshape(shape)

    y = x * shaped(scale, "quantScale2Optional")
    if offset is not None:
        y = y + shaped(offset, "quantOffset2Optional")
    quantized: np.ndarray = np.clip(np.rint(y), -128, 127).astype(np.int8)
    return quantized
