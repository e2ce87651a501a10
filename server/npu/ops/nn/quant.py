"""Dynamic per-token quantization (hicann/ops-nn quant/dynamic_quant, dynamic_quant_v2): DynamicQuant, DynamicQuantV2.

Each row (the last axis) of x, optionally multiplied by smoothScales, is quantized with its own scale computed in
float32: symmetric scale = max|row| / qmax, y = round(row / scale); asymmetric (DynamicQuantV2 with offsetOut)
scale = (max - min) / (qmax - qmin), offset = qmax - max / scale, y = round(row / scale + offset). round is half to
even; a row of zeros gets scale 0 and y = 0 (and offset qmax).

The output dtype decides qmax/qmin: INT8 127/-128; INT4 7/-8, as an ml_dtypes.int4 array or packed eight to an
INT32 word along the last axis (vnpu's int4 convention, `server.npu.ops.common.int4`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from server.npu.ops.common import int4
from server.npu.ops.common.errors import invalid, unsupported
from server.npu.ops.common.numeric import store, wide

Array = np.ndarray
RANGES = {np.dtype(np.int8): (127, -128), int4.INT4: (7, -8), np.dtype(np.int32): (7, -8)}


def _smoothed(op: str, x: Array, smooth: Array | None, group_index: Array | None) -> Array:
    v = wide(x)
    if smooth is None:
        if group_index is not None:
            raise invalid(op, "smoothScalesOptional", "is required with groupIndexOptional")
        return v
    hidden = x.shape[-1]
    if group_index is None:
        if smooth.size != hidden:
            raise invalid(op, "smoothScalesOptional", f"has {smooth.size} values; x's last axis is {hidden}")
        smoothed: Array = v * wide(smooth).reshape(hidden)
        return smoothed
    table = wide(smooth).reshape(-1, hidden)
    ends = np.asarray(group_index).astype(np.int64).reshape(-1)
    if ends.size != table.shape[0]:
        raise invalid(
            op, "groupIndexOptional", f"has {ends.size} values; smoothScalesOptional has {table.shape[0]} rows"
        )
    rows = v.reshape(-1, hidden).copy()
    # row r (1-based) takes the first expert, from the previous row's on, whose count reaches r -- the device's
    # forward scan, which is the first expert where the running maximum of the counts reaches r
    experts = np.searchsorted(np.maximum.accumulate(ends), np.arange(1, rows.shape[0] + 1), side="left")
    covered = experts < ends.size  # rows past every count are not smoothed
    rows[covered] *= table[experts[covered]]
    return rows.reshape(v.shape)


def _quantize(op: str, v: Array, y_out: Array, scale_out: Array, offset_out: Array | None) -> None:
    limits = RANGES.get(y_out.dtype)
    if limits is None:
        raise unsupported(op, "yOut", f"output dtype {y_out.dtype}")
    qmax, qmin = limits
    with np.errstate(divide="ignore", invalid="ignore"):
        if offset_out is None:
            scale = np.max(np.abs(v), axis=-1) / np.float32(qmax)
            y = v / scale[..., None]
        else:
            high, low = np.max(v, axis=-1), np.min(v, axis=-1)
            scale = (high - low) / np.float32(qmax - qmin)
            offset = np.where(scale > 0, np.float32(qmax) - high / scale, np.float32(qmax))
            y = v / scale[..., None] + offset[..., None]
            store(offset_out, offset.reshape(offset_out.shape))
        y = np.where(scale[..., None] > 0, y, 0)
    values = np.clip(np.rint(y), qmin, qmax).astype(np.int8)
    if y_out.dtype == np.int32:
        if values.shape[-1] % 8:
            raise invalid(op, "x", f"last axis {values.shape[-1]} is not a multiple of 8 (INT32-packed int4)")
        y_out[...] = int4.pack(values, np.int32)
    else:
        y_out[...] = values.astype(y_out.dtype)
    store(scale_out, scale.reshape(scale_out.shape))


def dynamic_quant(
    x: Array, smoothScalesOptional: Array | None, yOut: Array, scaleOut: Array, workspace: Array | None
) -> None:
    """yOut = round(x·smooth / scaleOut), scaleOut = row max |x·smooth| / qmax (symmetric, per token).

    Constraints (quant/dynamic_quant/docs/aclnnDynamicQuant.md): x FLOAT16/BFLOAT16, 2-8-D; smoothScales x's
    dtype, 1-D of x's last axis; yOut INT8, INT4 or INT32 (eight int4 per word: last axis x's / 8, x's last axis
    a multiple of 8; INT4 needs an even last axis), otherwise x's shape; scaleOut FLOAT32, x's shape without the
    last axis.
    """
    _quantize("DynamicQuant", _smoothed("DynamicQuant", x, smoothScalesOptional, None), yOut, scaleOut, None)


def dynamic_quant_v2(
    x: Array, smoothScalesOptional: Array | None, groupIndexOptional: Array | None, dstType: int, yOut: Array,
    scaleOut: Array, offsetOut: Array | None, workspace: Array | None,
) -> None:  # fmt: skip
    """DynamicQuant, asymmetric when offsetOut is given, with per-expert smoothScales for MoE: rows
    [groupIndex[e-1], groupIndex[e]) use smoothScales[e] (rows past the last group are not smoothed); a group index
    that is not sorted is read as the device's kernel scans it (`_smoothed`).

    Constraints (quant/dynamic_quant_v2/docs/aclnnDynamicQuantV2.md): x FLOAT16/BFLOAT16, > 1-D; smoothScales x's
    dtype, (H) or (experts ≤ 1024, H) with groupIndex (1-D, experts; the doc lists a float dtype, vnpu reads it as
    the cumulative row counts torch_npu passes); dstType 2 (INT8), 29 (INT4) or 3 (INT32) matching yOut;
    scaleOut/offsetOut FLOAT32 of x's shape without the last axis.
    """
    op = "DynamicQuantV2"
    expected = {2: np.dtype(np.int8), 29: int4.INT4, 3: np.dtype(np.int32)}.get(dstType)
    if expected is None or expected != yOut.dtype:
        raise invalid(op, "dstType", f"is {dstType}; yOut is {yOut.dtype} (2 INT8, 29 INT4, 3 INT32)")
    _quantize(op, _smoothed(op, x, smoothScalesOptional, groupIndexOptional), yOut, scaleOut, offsetOut)


FUNCTIONS: dict[str, Callable[..., None]] = {"DynamicQuant": dynamic_quant, "DynamicQuantV2": dynamic_quant_v2}
