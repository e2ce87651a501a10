"""Paged KV caches: one sequence's keys or values gathered from cache blocks through a block table.

A cache holds `blockNum` blocks of `blockSize` tokens; a batch's tokens 0..L-1 live in blocks
blockTable[b, 0], blockTable[b, 1], ... (token t in block t // blockSize at row t % blockSize). The cache
layouts CANN's attention operators take:

- BnBsH  (blockNum, blockSize, H)              H = KV_N · D
- BnNBsD (blockNum, KV_N, blockSize, D)
- NZ     (blockNum, KV_N, D / D0, blockSize, D0)  D split into D0-wide columns (D0 = 16 for fp16/bf16, 32 for int8)

`gather` returns [KV_N, L, D]. A block id outside [0, blockNum) or a sequence needing more blocks than the
table's row holds is a 161002 naming blockTableOptional (or the length argument): the hardware would read
another request's memory; vnpu refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from server.npu.ops.common.errors import invalid


@dataclass(frozen=True)
class PagedCache:
    """One paged cache tensor and how to read it: its layout by rank, its heads, its block size."""

    op: str
    name: str  # the C name of the cache argument, for errors
    cache: np.ndarray
    heads: int
    block_size: int
    table_name: str = "blockTableOptional"
    length_name: str = "actualSeqLengthsKvOptional"

    def __post_init__(self) -> None:
        rank, shape = self.cache.ndim, self.cache.shape
        if rank not in (3, 4, 5):
            raise invalid(self.op, self.name, f"a paged cache must be 3-D, 4-D or 5-D (BnBsH, BnNBsD, NZ), not {shape}")
        rows = shape[1] if rank == 3 else shape[2] if rank == 4 else shape[3]
        if self.block_size <= 0 or rows != self.block_size:
            raise invalid(self.op, "blockSize", f"is {self.block_size}; {self.name} {shape} has blocks of {rows}")
        if rank == 3 and shape[2] % self.heads:
            raise invalid(self.op, self.name, f"H = {shape[2]} is not a multiple of {self.heads} KV heads")
        if rank > 3 and shape[1] != self.heads:
            raise invalid(self.op, self.name, f"has {shape[1]} heads; numKeyValueHeads says {self.heads}")

    @property
    def blocks(self) -> int:
        return int(self.cache.shape[0])

    def block_ids(self, table: np.ndarray, batch: int, length: int) -> np.ndarray:
        """The ids of the blocks holding batch `batch`'s first `length` tokens, checked against the cache."""
        needed = -(-length // self.block_size)
        if table.ndim != 2 or batch >= table.shape[0]:
            raise invalid(self.op, self.table_name, f"shape {table.shape} has no row for batch {batch}")
        if needed > table.shape[1]:
            raise invalid(
                self.op,
                self.length_name,
                f"batch {batch} has {length} tokens = {needed} blocks of {self.block_size}; "
                f"{self.table_name} holds {table.shape[1]} per batch",
            )
        ids = table[batch, :needed].astype(np.int64)
        bad = (ids < 0) | (ids >= self.blocks)
        if bad.any():
            where = int(np.argmax(bad))
            raise invalid(
                self.op,
                self.table_name,
                f"batch {batch} entry {where} is block {int(ids[where])}; {self.name} has {self.blocks} blocks",
            )
        return ids

    def gather(self, table: np.ndarray, batch: int, length: int) -> np.ndarray:
        """Batch `batch`'s first `length` tokens as [KV_N, length, D] (the cache's dtype)."""
        ids = self.block_ids(table, batch, length)
        picked: np.ndarray = self.cache[ids]
        tokens: np.ndarray
        if self.cache.ndim == 3:  # [n, bs, H] -> [n*bs, N, D] -> [N, L, D]
            tokens = picked.reshape(-1, self.heads, self.cache.shape[2] // self.heads)[:length].transpose(1, 0, 2)
            return tokens
        if self.cache.ndim == 4:  # [n, N, bs, D] -> [N, n*bs, D]
            tokens = picked.transpose(1, 0, 2, 3).reshape(self.heads, -1, self.cache.shape[3])[:, :length]
            return tokens
        d1, d0 = self.cache.shape[2], self.cache.shape[4]  # [n, N, D1, bs, D0] -> [N, n, bs, D1, D0]
        tokens = picked.transpose(1, 0, 3, 2, 4).reshape(self.heads, -1, d1 * d0)[:, :length]
        return tokens
