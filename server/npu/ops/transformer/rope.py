"""Rotary position embedding kernels: RotaryPositionEmbedding, ApplyRotaryPosEmb, RopeWithSinCosCache,
InterleaveRope (hicann/ops-transformer posembedding/).

Every variant computes y = x·cos + rotate(x)·sin in float32 and rounds once into its output; they differ in how x
is split into the rotated halves and where cos/sin come from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.numeric import store, wide

Array = np.ndarray


def _broadcast(op: str, name: str, table: Array, x: Array) -> Array:
    try:
        fits = np.broadcast_shapes(table.shape, x.shape) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise invalid(op, name, f"shape {table.shape} does not broadcast to x's {x.shape}")
    return wide(table)


def _rotate_half(x: Array) -> Array:
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rotary_position_embedding(x: Array, cos: Array, sin: Array, mode: int, out: Array, workspace: Array | None) -> None:
    """out = x·cos + rotate(x)·sin, rotate by `mode`: 0 half (rotate_half), 1 interleave (pairs (2i, 2i+1)),
    2 quarter (two rotate_halves of D/2), 3 interleave-half (x de-interleaved into [x_even, x_odd] first; the
    output stays de-interleaved).

    Constraints (docs/aclnnRotaryPositionEmbedding.md, posembedding/rotary_position_embedding): x, cos, sin, out
    FLOAT16/BFLOAT16/FLOAT, x and out 4-D of one shape (BNSD, BSND or SBND), cos and sin the same shape,
    broadcasting to x (the leading three axes each 1 or x's); D equal for all, ≤ 1024 (< 896 on A2/A3), even
    (a multiple of 4 in quarter mode); mode 0-3.
    """
    op = "RotaryPositionEmbedding"
    if mode not in (0, 1, 2, 3):
        raise invalid(op, "mode", f"is {mode}; it must be 0 (half), 1 (interleave), 2 (quarter) or 3 (interleave-half)")
    depth = x.shape[-1]
    if depth % (4 if mode == 2 else 2):
        raise invalid(op, "x", f"D = {depth} is not a multiple of {4 if mode == 2 else 2} (mode {mode})")
    c, s, v = _broadcast(op, "cos", cos, x), _broadcast(op, "sin", sin, x), wide(x)
    if mode == 0:
        part1, part2 = v, _rotate_half(v)
    elif mode == 1:
        even, odd = v[..., ::2], v[..., 1::2]
        part1, part2 = v, np.stack([-odd, even], axis=-1).reshape(v.shape)
    elif mode == 2:
        half = depth // 2
        part1 = v
        part2 = np.concatenate([_rotate_half(v[..., :half]), _rotate_half(v[..., half:])], axis=-1)
    else:
        even, odd = v[..., ::2], v[..., 1::2]
        part1, part2 = np.concatenate([even, odd], axis=-1), np.concatenate([-odd, even], axis=-1)
    store(out, part1 * c + part2 * s)


def apply_rotary_pos_emb(
    queryRef: Array, keyRef: Array, cos: Array, sin: Array, layout: int, workspace: Array | None
) -> None:
    """queryRef, keyRef = (x·cos + rotate_half(x)·sin) for x in (queryRef, keyRef), in place.

    Constraints (docs/aclnnApplyRotaryPosEmb.md): queryRef, keyRef, cos, sin BFLOAT16/FLOAT16/FLOAT of one dtype,
    4-D; layout 1 (BSND; 2 SBND and 3 BNSD are reserved, not supported by CANN today); query (B, S, Nq, D), key
    (B, S, Nk, D), cos and sin (B, S, 1, D) of one shape; D = 128 (the docs' limit; vnpu takes any even D).
    """
    op = "ApplyRotaryPosEmb"
    if layout not in (1, 2, 3):
        raise invalid(op, "layout", f"is {layout}; it must be 1 (BSND), 2 (SBND) or 3 (BNSD)")
    for name, ref in (("queryRef", queryRef), ("keyRef", keyRef)):
        if ref.shape[-1] % 2:
            raise invalid(op, name, f"D = {ref.shape[-1]} is odd")
        c, s, v = _broadcast(op, "cos", cos, ref), _broadcast(op, "sin", sin, ref), wide(ref)
        store(ref, v * c + _rotate_half(v) * s)


def _rotate_tokens(x: Array, cos: Array, sin: Array, neox: bool) -> Array:
    """x [T, N, rotaryDim] rotated with cos/sin [T, rotaryDim/2] (NeoX halves or GPT-J pairs)."""
    c, s = cos[:, None, :], sin[:, None, :]
    if neox:
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)
    x1, x2 = x[..., ::2], x[..., 1::2]
    return np.stack([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1).reshape(x.shape)


def rope_with_sin_cos_cache(
    positions: Array, queryIn: Array, keyIn: Array, cosSinCache: Array, mropeSection: Sequence[int] | None,
    headSize: int, isNeoxStyle: bool, queryOut: Array, keyOut: Array, workspace: Array | None,
) -> None:  # fmt: skip
    """queryOut/keyOut = the first rotaryDim values of each head rotated with cos/sin gathered from cosSinCache at
    `positions` (the rest copied); mrope (positions [3, T]) takes cos/sin sections from the three position rows.

    Constraints (docs/aclnnRopeWithSinCosCache.md): positions INT64 (T) (rope) or (3, T) (mrope, mropeSection
    given); queryIn (T, Nq·headSize), keyIn (T, Nk·headSize), cosSinCache (maxSeqLen, rotaryDim) 2-D, one dtype of
    BFLOAT16/FLOAT16/FLOAT32; rotaryDim ≤ headSize, headSize and rotaryDim multiples of 32 (16 for FLOAT32);
    queryOut/keyOut like queryIn/keyIn. The docs write rotaryDim = Σ mropeSection, but their formula slices the
    rotaryDim/2 cos columns with the sections: vnpu requires Σ mropeSection = rotaryDim / 2 (vLLM's convention).
    Positions outside [0, maxSeqLen) are a 161002 naming positions.
    """
    op = "RopeWithSinCosCache"
    rotary = cosSinCache.shape[-1]
    if headSize <= 0 or rotary > headSize or rotary % 2:
        raise invalid(op, "headSize", f"is {headSize}; cosSinCache's rotaryDim {rotary} must be even and ≤ it")
    table = wide(cosSinCache)
    if positions.size and (positions.min() < 0 or positions.max() >= table.shape[0]):
        raise invalid(op, "positions", f"values must lie in [0, {table.shape[0]}) (cosSinCache's rows)")
    half = rotary // 2
    if mropeSection is None:
        if positions.ndim != 1:
            raise invalid(op, "positions", f"shape {positions.shape}: rope mode takes (numTokens)")
        gathered = table[positions]
    else:
        sections = [int(v) for v in mropeSection]
        if positions.ndim != 2 or positions.shape[0] != len(sections) or sum(sections) != half:
            shape = positions.shape
            raise invalid(op, "mropeSection", f"{sections} with positions {shape}: needs 3 rows summing to {half}")
        rows = table[positions]  # [3, T, rotary]
        bounds = np.cumsum([0, *sections])
        cos_parts = [rows[i, :, bounds[i] : bounds[i + 1]] for i in range(len(sections))]
        sin_parts = [rows[i, :, half + bounds[i] : half + bounds[i + 1]] for i in range(len(sections))]
        gathered = np.concatenate([*cos_parts, *sin_parts], axis=-1)
    cos, sin = gathered[:, :half], gathered[:, half:]
    for name, x, out in (("queryIn", queryIn, queryOut), ("keyIn", keyIn, keyOut)):
        if x.ndim != 2 or x.shape[1] % headSize or x.shape[0] != cos.shape[0]:
            raise invalid(op, name, f"shape {x.shape} is not ({cos.shape[0]}, heads × {headSize})")
        heads = wide(x).reshape(x.shape[0], -1, headSize)
        rotated = _rotate_tokens(heads[..., :rotary], cos, sin, isNeoxStyle)
        store(out, np.concatenate([rotated, heads[..., rotary:]], axis=-1).reshape(x.shape))


def interleave_rope(x: Array, cos: Array, sin: Array, out: Array, workspace: Array | None) -> None:
    """out = q·cos + rotate_half(q)·sin with q = x de-interleaved (x[..., ::2] then x[..., 1::2]).

    Constraints (posembedding/interleave_rope/README.md): x, out (B, N, S, D) FLOAT16/BFLOAT16; cos, sin
    (B, 1, S or 1, D), x's dtype; D = 64 (vnpu takes any even D); contiguous tensors.
    """
    op = "InterleaveRope"
    if x.ndim != 4 or x.shape[-1] % 2:
        raise invalid(op, "x", f"shape {x.shape} is not (B, N, S, D) with an even D")
    v = wide(x)
    q = np.concatenate([v[..., ::2], v[..., 1::2]], axis=-1)
    store(out, q * _broadcast(op, "cos", cos, x) + _rotate_half(q) * _broadcast(op, "sin", sin, x))


FUNCTIONS: dict[str, Callable[..., None]] = {
    "RotaryPositionEmbedding": rotary_position_embedding,
    "ApplyRotaryPosEmb": apply_rotary_pos_emb,
    "RopeWithSinCosCache": rope_with_sin_cos_cache,
    "InterleaveRope": interleave_rope,
}
