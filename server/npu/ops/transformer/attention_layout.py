"""Attention layouts and sequence lengths: the `inputLayout` strings of CANN's attention operators.

Batch layouts put a batch axis first (or second): BSH (H = N·D), BSND, BNSD, SBH and, as an output only, NBSD.
Token layouts pack the batches' sequences one after another: TND and NTD (T = Σ sequence lengths), with the
batches' boundaries given as cumulative lengths. A layout "IN_OUT" (BNSD_BSND, TND_NTD, ...) reads the inputs in
IN and writes the output in OUT.

Internally a batch layout is viewed as [B, N, S, D] ("bnsd") and a token layout as [T, N, D] ("tnd").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from server.npu.ops.common.errors import invalid

BATCH: Final = frozenset({"BSH", "BSND", "BNSD", "SBH", "NBSD"})
TOKEN: Final = frozenset({"TND", "NTD"})


@dataclass(frozen=True)
class Layout:
    """A parsed inputLayout: the inputs' layout and the output's."""

    inp: str
    out: str

    @property
    def tokens(self) -> bool:
        """True for TND/NTD inputs (cumulative sequence lengths)."""
        return self.inp in TOKEN


def parse(op: str, text: str, inputs: frozenset[str]) -> Layout:
    """`text` ("BSH", "BNSD_BSND", ...) as a Layout whose input is one of `inputs`; 161002 naming inputLayout."""
    parts = text.split("_") if isinstance(text, str) else []
    if len(parts) not in (1, 2) or parts[0] not in inputs:
        raise invalid(op, "inputLayout", f"{text!r} is not one of the layouts aclnn{op} accepts")
    inp, out = parts[0], parts[-1]
    family = TOKEN if inp in TOKEN else BATCH
    if out not in family or (len(parts) == 2 and out == "SBH"):
        raise invalid(op, "inputLayout", f"{text!r}: the output layout {out} does not go with the input {inp}")
    return Layout(inp, out)


def to_bnsd(op: str, name: str, x: np.ndarray, layout: str, heads: int) -> np.ndarray:
    """The [B, N, S, D] view of a batch-layout tensor with `heads` heads (BSH/SBH split H into heads × D)."""
    if layout in ("BSH", "SBH"):
        if x.ndim != 3 or heads <= 0 or x.shape[2] % heads:
            raise invalid(op, name, f"shape {x.shape} is not {layout} with H a multiple of {heads} heads")
        split = x.reshape(*x.shape[:2], heads, x.shape[2] // heads)
        return split.transpose(0, 2, 1, 3) if layout == "BSH" else split.transpose(1, 2, 0, 3)
    if x.ndim != 4:
        raise invalid(op, name, f"shape {x.shape} is not 4-D ({layout})")
    order = {"BSND": (0, 2, 1, 3), "BNSD": (0, 1, 2, 3), "NBSD": (1, 0, 2, 3)}[layout]
    return x.transpose(order)


def from_bnsd(x: np.ndarray, layout: str) -> np.ndarray:
    """A [B, N, S, D] array rearranged into `layout` (BSH/SBH merge N and D into H)."""
    if layout == "BSH":
        b, n, s, d = x.shape
        return x.transpose(0, 2, 1, 3).reshape(b, s, n * d)
    if layout == "SBH":
        b, n, s, d = x.shape
        return x.transpose(2, 0, 1, 3).reshape(s, b, n * d)
    order = {"BSND": (0, 2, 1, 3), "BNSD": (0, 1, 2, 3), "NBSD": (1, 0, 2, 3)}[layout]
    return x.transpose(order)


def to_tnd(op: str, name: str, x: np.ndarray, layout: str) -> np.ndarray:
    """The [T, N, D] view of a TND or NTD tensor."""
    if x.ndim != 3:
        raise invalid(op, name, f"shape {x.shape} is not 3-D ({layout})")
    return x if layout == "TND" else x.transpose(1, 0, 2)


def from_tnd(x: np.ndarray, layout: str) -> np.ndarray:
    """A [T, N, D] array rearranged into TND or NTD."""
    return x if layout == "TND" else x.transpose(1, 0, 2)


def per_batch(op: str, name: str, values: Sequence[int] | None, batch: int, full: int) -> list[int]:
    """Each batch's valid length from an actual-length array (None: `full`; one value: every batch; at least
    `batch` values: the first `batch`); each must lie in [0, full]."""
    if values is None:
        return [full] * batch
    if len(values) == 1:
        lengths = [int(values[0])] * batch
    elif len(values) >= batch:
        lengths = [int(v) for v in values[:batch]]
    else:
        raise invalid(op, name, f"has {len(values)} values; it needs 1 or at least the batch size {batch}")
    for b, length in enumerate(lengths):
        if not 0 <= length <= full:
            raise invalid(op, name, f"batch {b} has length {length}, outside [0, {full}] (the tensor's S)")
    return lengths


def cumulative(op: str, name: str, values: Sequence[int] | None, total: int) -> list[tuple[int, int]]:
    """The batches' [start, end) token ranges from cumulative lengths (TND/NTD): non-decreasing, non-negative,
    the last at most T = `total`."""
    if values is None:
        raise invalid(op, name, "is required with a TND/NTD layout (cumulative sequence lengths)")
    ranges, start = [], 0
    for b, end in enumerate(int(v) for v in values):
        if end < start:
            raise invalid(op, name, f"value {b} ({end}) is below the previous one ({start}); it must be cumulative")
        ranges.append((start, end))
        start = end
    if start > total:
        raise invalid(op, name, f"the last cumulative length {start} exceeds T = {total}")
    return ranges
