"""The query rows and the keys/values of each batch of an inference-attention launch.

The query is viewed as [B, N, S, D] (batch layouts) or [T, N, D] (token layouts, batches cut by cumulative
actualSeqLengths). For a batch layout, actualSeqLengths gives each batch's valid rows (ignored when S is 1,
as the docs say for the decode case), and queryPaddingSize moves them to the end of S (left padding: rows
[S - pad - len, S - pad)).

Keys/values come from one of:
- a paged cache (blockTable given): key[0]/value[0] are the caches (`paged_kv`), actualSeqLengthsKv the lengths;
- a tensor list of B tensors, one per batch with a batch axis of 1 (the "non-contiguous" KV of the docs);
- one tensor in the input layout ([B, ...] or, for TND/NTD, cumulative actualSeqLengthsKv);
with kvPaddingSize moving the valid keys to the end of S, as for the query. Each batch yields [KV_N, L, D]
arrays and the positions of its L keys in its stored sequence (what attenMask and pseShift columns index).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from server.npu.ops.common.errors import invalid, unsupported
from server.npu.ops.transformer import attention_layout as lay
from server.npu.ops.transformer.attention_quant import QUANTIZED_KV, widen_kv
from server.npu.ops.transformer.infer_call import InferCall
from server.npu.ops.transformer.paged_kv import PagedCache

UNBOUNDED = 1 << 62


def _padding(call: InferCall, tensor: np.ndarray | None, batches: int, name: str) -> list[int] | None:
    if tensor is None:
        return None
    flat = tensor.reshape(-1).astype(np.int64)
    if flat.size == 0:
        return None
    return [max(0, int(flat[b] if flat.size >= batches else flat[0])) for b in range(batches)]


def _ranges(call: InferCall, name: str, lengths: list[int], pads: list[int] | None, full: int) -> list[tuple[int, int]]:
    if pads is None:
        return [(0, n) for n in lengths]
    ranges = []
    for b, (n, pad) in enumerate(zip(lengths, pads, strict=True)):
        end = full - pad
        if end - n < 0 or end > full:
            raise invalid(call.op, name, f"batch {b}: padding {pad} and length {n} do not fit in S = {full}")
        ranges.append((end - n, end))
    return ranges


@dataclass
class Query:
    """The query (and its rope part) in canonical form, with each batch's row range."""

    data: np.ndarray  # [B, N, S, D] or [T, N, D]
    rope: np.ndarray | None
    ranges: list[tuple[int, int]]
    tokens: bool
    decode: bool  # a batch layout with S == 1 (sparseMode, preTokens, nextTokens do not apply)

    @property
    def batches(self) -> int:
        return len(self.ranges)

    def rows(self, b: int) -> np.ndarray:
        """Batch b's query as [N, Sq, D] (rope part appended along D)."""
        parts = [self.data] if self.rope is None else [self.data, self.rope]
        start, end = self.ranges[b]
        picked = [x[start:end].transpose(1, 0, 2) if self.tokens else x[b, :, start:end] for x in parts]
        return np.concatenate([x.astype(np.float32) for x in picked], axis=-1)

    def mask_rows(self, b: int) -> np.ndarray:
        """The rows of attenMask/pseShift batch b's queries read: their positions in S (0.. for TND/NTD)."""
        start, end = self.ranges[b]
        return np.arange(end - start) if self.tokens else np.arange(start, end)


def query(call: InferCall, layout: lay.Layout) -> Query:
    names, heads = call.names, call.num_heads
    if layout.tokens:
        data = lay.to_tnd(call.op, names.query, call.query, layout.inp)
        rope = None
        if call.query_rope is not None:
            rope = lay.to_tnd(call.op, "queryRopeOptional", call.query_rope, layout.inp)
        ranges = lay.cumulative(call.op, names.q_lengths, call.q_lengths, data.shape[0])
        decode = False
    else:
        data = lay.to_bnsd(call.op, names.query, call.query, layout.inp, heads)
        rope = None
        if call.query_rope is not None:
            rope = lay.to_bnsd(call.op, "queryRopeOptional", call.query_rope, layout.inp, heads)
        batches, full = data.shape[0], data.shape[2]
        decode = full == 1
        given = None if decode else call.q_lengths
        lengths = lay.per_batch(call.op, names.q_lengths, given, batches, full)
        pads = _padding(call, call.query_padding, batches, names.query_padding) if given is not None else None
        ranges = _ranges(call, names.query_padding, lengths, pads, full)
    if data.shape[1] != heads:
        raise invalid(call.op, "numHeads", f"is {heads}; {names.query} has {data.shape[1]} heads")
    return Query(data, rope, ranges, layout.tokens, decode)


@dataclass
class Keys:
    """Each batch's keys and values ([KV_N, L, D], the stored dtype) and their positions in the sequence."""

    call: InferCall
    layout: lay.Layout
    batches: int

    def __post_init__(self) -> None:
        call, names, heads = self.call, self.call.names, self.kv_heads
        if not call.key or not call.value or len(call.key) != len(call.value):
            raise invalid(call.op, names.value, "key and value must be lists of the same, non-zero length")
        self.key = [widen_kv(call.op, names.key, k) for k in call.key]
        self.value = [widen_kv(call.op, names.value, v) for v in call.value]
        rope = None if call.key_rope is None else widen_kv(call.op, "keyRopeOptional", call.key_rope)
        self.paged: tuple[PagedCache, PagedCache, PagedCache | None] | None = None
        if call.block_table is not None:
            self._paged(rope, heads)
        elif len(self.key) > 1:
            if self.layout.tokens or len(self.key) != self.batches:
                raise invalid(call.op, names.key, f"a list of {len(self.key)} tensors needs B = {self.batches}")
            self.lists = [self._dense_one(i) for i in range(self.batches)]
        elif self.layout.tokens:
            pairs = ((names.key, self.key[0]), (names.value, self.value[0]))
            self.tnd = [lay.to_tnd(call.op, n, x, self.layout.inp) for n, x in pairs]
            self.tnd_rope = None if rope is None else lay.to_tnd(call.op, "keyRopeOptional", rope, self.layout.inp)
            self.ranges = lay.cumulative(call.op, names.kv_lengths, call.kv_lengths, self.tnd[0].shape[0])
            if len(self.ranges) < self.batches:
                raise invalid(call.op, names.kv_lengths, f"has {len(self.ranges)} batches; the query {self.batches}")
        else:
            self.dense = self._dense(self.key[0], self.value[0], rope)
            keys = self.dense[0]
            if keys.shape[0] != self.batches:
                raise invalid(call.op, names.key, f"has batch {keys.shape[0]}; the query has {self.batches}")
            self._lengths(keys.shape[2])
        self.quantized = self.key[0].dtype in QUANTIZED_KV

    @property
    def kv_heads(self) -> int:
        return self.call.kv_heads or self.call.num_heads

    def _paged(self, rope: np.ndarray | None, heads: int) -> None:
        call, names = self.call, self.call.names
        if call.kv_lengths is None:
            raise invalid(call.op, names.kv_lengths, "is required with a paged KV cache (blockTable)")
        if len(self.key) != 1:
            raise unsupported(call.op, names.key, "a tensor list with a paged KV cache")
        cache = [
            PagedCache(call.op, n, x, heads, call.block_size, names.block_table, names.kv_lengths)
            for n, x in ((names.key, self.key[0]), (names.value, self.value[0]))
        ]
        rope_cache = None
        if rope is not None:
            rope_cache = PagedCache(call.op, "keyRopeOptional", rope, heads, call.block_size, names.block_table)
        self.paged = (cache[0], cache[1], rope_cache)
        self.lengths = lay.per_batch(call.op, names.kv_lengths, call.kv_lengths, self.batches, UNBOUNDED)

    def _dense(
        self, key: np.ndarray, value: np.ndarray, rope: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        call, names, inp = self.call, self.call.names, self.layout.inp
        k = lay.to_bnsd(call.op, names.key, key, inp, self.kv_heads)
        v = lay.to_bnsd(call.op, names.value, value, inp, self.kv_heads)
        r = None if rope is None else lay.to_bnsd(call.op, "keyRopeOptional", rope, inp, self.kv_heads)
        if k.shape[1] != self.kv_heads:
            raise invalid(call.op, "numKeyValueHeads", f"is {self.kv_heads}; {names.key} has {k.shape[1]} heads")
        if v.shape[:3] != k.shape[:3]:
            raise invalid(call.op, names.value, f"shape {value.shape} does not match {names.key}'s {key.shape}")
        return k, v, r

    def _dense_one(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        arrays = self._dense(self.key[i], self.value[i], None)
        if arrays[0].shape[0] != 1:
            raise invalid(self.call.op, self.call.names.key, f"tensor {i} has batch {arrays[0].shape[0]}, not 1")
        return arrays

    def _lengths(self, full: int) -> None:
        call, names = self.call, self.call.names
        self.lengths = lay.per_batch(call.op, names.kv_lengths, call.kv_lengths, self.batches, full)
        pads = None
        if call.kv_padding is not None and call.kv_lengths is not None:
            pads = _padding(call, call.kv_padding, self.batches, names.kv_padding)
        self.kv_ranges = _ranges(call, names.kv_padding, self.lengths, pads, full)

    def batch(self, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        """Batch b's keys [KV_N, L, Dk], values [KV_N, L, Dv], rope keys or None, and the keys' positions."""
        call = self.call
        if self.paged is not None:
            length = self.lengths[b]
            key_cache, value_cache, rope_cache = self.paged
            assert call.block_table is not None
            rope = None if rope_cache is None else rope_cache.gather(call.block_table, b, length)
            k, v = key_cache.gather(call.block_table, b, length), value_cache.gather(call.block_table, b, length)
            return k, v, rope, np.arange(length)
        if len(self.key) > 1:
            k4, v4, _ = self.lists[b]
            full = k4.shape[2]
            length = lay.per_batch(call.op, call.names.kv_lengths, call.kv_lengths, self.batches, full)[b]
            return k4[0, :, :length], v4[0, :, :length], None, np.arange(length)
        if self.layout.tokens:
            start, end = self.ranges[b]
            k, v = (x[start:end].transpose(1, 0, 2) for x in self.tnd)
            rope = None if self.tnd_rope is None else self.tnd_rope[start:end].transpose(1, 0, 2)
            if k.shape[0] != self.kv_heads:
                raise invalid(call.op, "numKeyValueHeads", f"is {self.kv_heads}; {call.names.key} has {k.shape[0]}")
            return k, v, rope, np.arange(end - start)
        k4, v4, r4 = self.dense
        start, end = self.kv_ranges[b]
        rope = None if r4 is None else r4[b, :, start:end]
        return k4[b, :, start:end], v4[b, :, start:end], rope, np.arange(start, end)
