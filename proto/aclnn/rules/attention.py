"""The attention family (ops-transformer attention/): FusedInferAttentionScore V1-V4, IncreFlashAttentionV4,
PromptFlashAttentionV3 (`Attention`, one rule over the roles each header names) and FlashAttentionScore (V1, V2).

Phase 1 checks what the documentation refuses and the arguments' metadata decide: the layout string, the head
counts (numHeads the query's, numKeyValueHeads dividing it), the dtypes, the query, key, value and output shapes
in the layout, the softmax LSE's shape, the sequence lengths (host arrays: at most the tensors' S, cumulative for
TND/NTD) and, for a paged KV cache, the block size and that every sequence fits the blocks its block-table row can
address. Block ids live in device memory: the kernel checks them against the cache when it runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import DT
from proto.aclnn.entry import Row, nullable
from proto.aclnn.host import aclTensor
from proto.aclnn.rules.base import (
    Checked,
    NoWorkspace,
    first_written_dtype,
    flag,
    int_attr,
    ints,
    number,
    opt_tensor,
    require_dtype,
    require_in,
    require_range,
    require_rank,
    require_shape,
    shape_str,
    tensor,
    tensors,
    text,
)
from proto.constants import aclDataType

BATCH: Final = ("BSH", "BSND", "BNSD", "SBH", "NBSD")
TOKEN: Final = ("TND", "NTD")
FIA_LAYOUTS: Final = frozenset(
    {"BSH", "BSND", "BNSD", "TND", "NTD", "BNSD_BSND", "BSND_BNSD", "BSH_BNSD", "BNSD_NBSD", "BSND_NBSD",
     "BSH_NBSD", "NTD_TND", "TND_NTD"}
)  # fmt: skip
HALF: Final = frozenset({DT.ACL_FLOAT16, DT.ACL_BF16})
KV: Final = HALF | {DT.ACL_INT8, DT.ACL_INT4, DT.ACL_INT32}
MAX_HEADS, MAX_RATIO, MAX_BATCH, MAX_D, MAX_BLOCK = 256, 64, 65536, 512, 512


def split(layout: str, shape: tuple[int, ...], heads: int, name: str) -> tuple[int, int, int, int]:
    """(B, N, S, D) of a batch-layout tensor, or (1, N, T, D) of a token-layout one; OpArgError naming `name`."""
    rank = 3 if layout in ("BSH", "SBH", "TND", "NTD") else 4
    if len(shape) != rank:
        raise OpArgError(f"{name} has shape {shape_str(shape)}; layout {layout} is {rank}-D")
    if layout in ("BSH", "SBH"):
        if heads <= 0 or shape[2] % heads:
            raise OpArgError(f"{name} has H = {shape[2]}, which is not a multiple of {heads} heads ({layout})")
        b, s = (shape[0], shape[1]) if layout == "BSH" else (shape[1], shape[0])
        return b, heads, s, shape[2] // heads
    if layout in TOKEN:
        t, n = (shape[0], shape[1]) if layout == "TND" else (shape[1], shape[0])
        return 1, n, t, shape[2]
    positions = {"BSND": (0, 2, 1, 3), "BNSD": (0, 1, 2, 3), "NBSD": (1, 0, 2, 3)}[layout]
    b, n, s, d = (shape[i] for i in positions)
    return b, n, s, d


def joined(layout: str, b: int, n: int, s: int, d: int) -> tuple[int, ...]:
    """The shape of a (B, N, S, D) result (or (T, N, D) for a token layout) in `layout`."""
    return {
        "BSH": (b, s, n * d), "SBH": (s, b, n * d), "BSND": (b, s, n, d), "BNSD": (b, n, s, d),
        "NBSD": (n, b, s, d), "TND": (s, n, d), "NTD": (n, s, d),
    }[layout]  # fmt: skip


def _lengths(name: str, values: tuple[int, ...] | None, batches: int, limit: int | None, what: str) -> None:
    if values is None:
        return
    if len(values) != 1 and len(values) < batches:
        raise OpArgError(f"{name} has {len(values)} values; it needs 1 or at least the batch size {batches}")
    for b, v in enumerate(values[:batches]):
        if v < 0 or (limit is not None and v > limit):
            raise OpArgError(f"{name}[{b}] is {v}; it must lie in [0, {limit}] ({what})")


def _cumulative(name: str, values: tuple[int, ...] | None, total: int) -> None:
    if values is None:
        raise OpArgError(f"{name} is null; a TND/NTD layout needs the cumulative sequence lengths")
    previous = 0
    for i, v in enumerate(values):
        if v < previous:
            raise OpArgError(f"{name}[{i}] is {v}, below {previous}: the lengths of TND/NTD are cumulative")
        previous = v
    if previous > total:
        raise OpArgError(f"{name} ends at {previous}; the tensor holds T = {total} tokens")


@dataclass(frozen=True, eq=False)
class Attention(NoWorkspace):
    """One inference-attention operator, its roles by C name (None: the operator has no such argument)."""

    layouts: frozenset[str]
    q_lengths: str | None
    kv_lengths: str
    block_table: str | None
    key_list: bool = True
    lse_flag: str | None = "softmaxLseFlag"
    quant_scale2: str = "quantScale2Optional"
    full_quant: tuple[str, ...] = ("deqScale1Optional", "quantScale1Optional", "deqScale2Optional")
    sparse: bool = True
    precise_max: int = 3

    def result_dtype(self, args: Args) -> aclDataType:
        return first_written_dtype(args)

    def check(self, args: Args) -> None:
        layout_text = text(args, "inputLayout") or ""
        if layout_text not in self.layouts:
            raise OpArgError(f"inputLayout is {layout_text!r}; it must be one of {', '.join(sorted(self.layouts))}")
        inp, out_layout = layout_text.split("_")[0], layout_text.split("_")[-1]
        heads, kv_heads = self._heads(args)
        query = tensor(args, "query")
        quantized = any(opt_tensor(args, n) is not None for n in self.full_quant if n in args)
        require_dtype("query", query.data_type, HALF | ({DT.ACL_INT8} if quantized else frozenset()))
        b, n, s, d = split(inp, query.view_dims, heads, "query")
        if n != heads:
            raise OpArgError(f"numHeads is {heads}; query has {n} heads ({inp})")
        if inp in TOKEN:
            q_lengths = ints(args, self.q_lengths) if self.q_lengths else None
            _cumulative(self.q_lengths or "actualSeqLengths", q_lengths, s)
            b = len(ints(args, self.q_lengths) or ()) if self.q_lengths else 1
        elif s > 1 and self.q_lengths:
            _lengths(self.q_lengths, ints(args, self.q_lengths), b, s, "the query's S")
        if b > MAX_BATCH or d > MAX_D:
            raise OpArgError(f"query has B = {b}, D = {d}; the operator takes B ≤ {MAX_BATCH}, D ≤ {MAX_D}")
        dv = self._keys(args, inp, query, b, kv_heads)
        self._outputs(args, out_layout, query, b, n, s, dv)
        if self.sparse:
            require_in("sparseMode", int_attr(args, "sparseMode"), range(5))
        require_range("innerPrecise", int_attr(args, "innerPrecise"), 0, self.precise_max)
        if not math.isfinite(number(args, "scaleValue")):
            raise OpArgError(f"scaleValue is {number(args, 'scaleValue')}; it must be finite")

    def _heads(self, args: Args) -> tuple[int, int]:
        heads = int_attr(args, "numHeads")
        if not 0 < heads <= MAX_HEADS:
            raise OpArgError(f"numHeads is {heads}; it must lie in [1, {MAX_HEADS}]")
        kv = int_attr(args, "numKeyValueHeads")
        if kv < 0:
            raise OpArgError(f"numKeyValueHeads is {kv}; it must be 0 (numHeads) or positive")
        kv = kv or heads
        if heads % kv or heads // kv > MAX_RATIO:
            raise OpArgError(
                f"numKeyValueHeads is {kv}; it must divide numHeads {heads} with a ratio of at most {MAX_RATIO}"
            )
        return heads, kv

    def _keys(self, args: Args, inp: str, query: aclTensor, batches: int, kv_heads: int) -> int:
        """Checks the keys and values; their D (the output's)."""
        keys = tensors(args, "key") if self.key_list else (tensor(args, "key"),)
        values = tensors(args, "value") if self.key_list else (tensor(args, "value"),)
        if not keys or len(keys) != len(values):
            raise OpArgError(f"key holds {len(keys)} tensors and value {len(values)}; they must be equal, not 0")
        for i, (k, v) in enumerate(zip(keys, values, strict=True)):
            require_dtype(f"key[{i}]", k.data_type, KV)
            if v.data_type != k.data_type or v.view_dims[:-1] != k.view_dims[:-1]:
                have = f"{shape_str(v.view_dims)} {dtypes.name(v.data_type)}"
                raise OpArgError(f"value[{i}] is {have}; it must match key[{i}] but in D")
            if k.data_type in HALF and k.data_type != query.data_type:
                raise OpArgError(f"key[{i}] has dtype {dtypes.name(k.data_type)}; a float key must be query's")
        table = opt_tensor(args, self.block_table) if self.block_table else None
        kv_lengths = ints(args, self.kv_lengths)
        if table is not None:
            return self._paged(args, table, keys[0], values[0], batches, kv_heads, kv_lengths)
        if inp in TOKEN:
            _, kn, t, _ = split(inp, keys[0].view_dims, kv_heads, "key[0]")
            _cumulative(self.kv_lengths, kv_lengths, t)
            return split(inp, values[0].view_dims, kv_heads, "value[0]")[3]
        per_batch = len(keys) > 1
        if per_batch and len(keys) != batches:
            raise OpArgError(f"key holds {len(keys)} tensors; a list of tensors needs one per batch ({batches})")
        for i, k in enumerate(keys):
            kb, kn, ks, _ = split(inp, k.view_dims, kv_heads, f"key[{i}]")
            if kn != kv_heads:
                raise OpArgError(f"numKeyValueHeads is {kv_heads}; key[{i}] has {kn} heads")
            if kb != (1 if per_batch else batches):
                raise OpArgError(f"key[{i}] has batch {kb}; it must be {1 if per_batch else batches}")
            _lengths(self.kv_lengths, kv_lengths, batches, ks, f"key[{i}]'s S")
        return split(inp, values[0].view_dims, kv_heads, "value[0]")[3]

    def _paged(self, args: Args, table: aclTensor, key: aclTensor, value: aclTensor, batches: int, kv_heads: int,
               kv_lengths: tuple[int, ...] | None) -> int:  # fmt: skip
        name = self.block_table or ""
        require_dtype(name, table.data_type, frozenset({DT.ACL_INT32}))
        require_rank(name, table, 2)
        if table.view_dims[0] < batches:
            raise OpArgError(f"{name} has {table.view_dims[0]} rows; it needs one per batch ({batches})")
        block = int_attr(args, "blockSize")
        align = 32 if key.data_type == DT.ACL_INT8 else 16
        if not 0 < block <= MAX_BLOCK or block % align:
            raise OpArgError(f"blockSize is {block}; it must be a multiple of {align} in [{align}, {MAX_BLOCK}]")
        rank = len(key.view_dims)
        if rank not in (3, 4, 5):
            raise OpArgError(f"key has shape {shape_str(key.view_dims)}; a paged cache is 3-D, 4-D or 5-D")
        rows = key.view_dims[1] if rank == 3 else key.view_dims[2] if rank == 4 else key.view_dims[3]
        if rows != block:
            raise OpArgError(f"blockSize is {block}; key's blocks hold {rows} tokens ({shape_str(key.view_dims)})")
        if (rank == 3 and key.view_dims[2] % kv_heads) or (rank > 3 and key.view_dims[1] != kv_heads):
            raise OpArgError(f"key {shape_str(key.view_dims)} does not hold numKeyValueHeads = {kv_heads} heads")
        if kv_lengths is None:
            raise OpArgError(f"{self.kv_lengths} is null; a paged KV cache (with {name}) needs the sequence lengths")
        capacity = min(table.view_dims[1], key.view_dims[0]) * block
        _lengths(self.kv_lengths, kv_lengths, batches, capacity, f"{name}'s {table.view_dims[1]} blocks of {block}")
        shape = value.view_dims
        return shape[2] // kv_heads if rank == 3 else shape[3] if rank == 4 else shape[2] * shape[4]

    def _outputs(self, args: Args, layout: str, query: aclTensor, b: int, n: int, s: int, dv: int) -> None:
        out = tensor(args, "attentionOut")
        scale2 = opt_tensor(args, self.quant_scale2) if self.quant_scale2 in args else None
        require_dtype("attentionOut", out.data_type, HALF | ({DT.ACL_INT8} if scale2 is not None else frozenset()))
        if out.data_type != DT.ACL_INT8 and query.data_type in HALF and out.data_type != query.data_type:
            raise OpArgError(f"attentionOut has dtype {dtypes.name(out.data_type)}; it must be query's")
        token = layout in TOKEN
        require_shape("attentionOut", out, joined(layout, b, n, s, dv), f"{layout} with value's D {dv}")
        if self.lse_flag and flag(args, self.lse_flag):
            lse = opt_tensor(args, "softmaxLse")
            if lse is None:
                raise OpArgError("softmaxLse is null; softmaxLseFlag asks for it")
            require_dtype("softmaxLse", lse.data_type, frozenset({DT.ACL_FLOAT}))
            require_shape("softmaxLse", lse, (s, n, 1) if token else (b, n, s, 1))


def _flash_score(args: Args) -> None:
    layout = text(args, "inputLayout") or ""
    require_in("inputLayout", layout, ("BSH", "SBH", "BSND", "BNSD"))
    query, key, value = tensor(args, "query"), tensor(args, "key"), tensor(args, "value")
    floats = frozenset({DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_FLOAT})
    require_dtype("query", query.data_type, floats)
    for name, t in (("key", key), ("value", value)):
        if t.data_type != query.data_type:
            raise OpArgError(f"{name} has dtype {dtypes.name(t.data_type)}; it must be query's")
    heads = int_attr(args, "headNum")
    if not 0 < heads <= MAX_HEADS:
        raise OpArgError(f"headNum is {heads}; it must lie in [1, {MAX_HEADS}]")
    b, n, s, d = split(layout, query.view_dims, heads, "query")
    kb = split(layout, key.view_dims, key.view_dims[2] // d if layout in ("BSH", "SBH") and d else heads, "key")
    kv_heads = kb[1]
    if kb[0] != b or kv_heads <= 0 or heads % kv_heads or kb[3] != d:
        have, want = shape_str(key.view_dims), shape_str(query.view_dims)
        raise OpArgError(f"key has shape {have}; it does not fit query {want} (B, D, heads dividing headNum)")
    keep = number(args, "keepProb")
    if keep != 1.0:
        raise OpArgError(f"keepProb is {keep}: vnpu implements no dropout (keepProb 1 only)")
    mode = int_attr(args, "sparseMode")
    require_in("sparseMode", mode, range(5))
    if "pseType" in args:
        require_in("pseType", int_attr(args, "pseType"), (0, 1, 2, 3))
    require_shape("attentionOutOut", tensor(args, "attentionOutOut"), query.view_dims, "query's")
    for name in ("softmaxMaxOut", "softmaxSumOut"):
        t = tensor(args, name)
        require_dtype(name, t.data_type, frozenset({DT.ACL_FLOAT}))
        require_shape(name, t, (b, n, s, 8))


FIA_V1_NULLABLE: Final = (
    "pseShift", "attenMask", "actualSeqLengths", "actualSeqLengthsKv", "deqScale1", "quantScale1", "deqScale2",
    "quantScale2", "quantOffset2", "antiquantScale", "antiquantOffset", "blockTable", "queryPaddingSize",
    "kvPaddingSize", "softmaxLse",
)  # fmt: skip
IFA_NULLABLE: Final = (
    "pseShift", "attenMask", "actualSeqLengths", "dequantScale1", "quantScale1", "dequantScale2", "quantScale2",
    "quantOffset2", "antiquantScale", "antiquantOffset", "blocktable", "kvPaddingSize",
)  # fmt: skip
PFA_NULLABLE: Final = (
    "pseShift", "attenMask", "actualSeqLengths", "actualSeqLengthsKv", "deqScale1", "quantScale1", "deqScale2",
    "quantScale2", "quantOffset2",
)  # fmt: skip
FIA = Attention(FIA_LAYOUTS, "actualSeqLengthsOptional", "actualSeqLengthsKvOptional", "blockTableOptional")
FIA_V1 = Attention(
    FIA_LAYOUTS, "actualSeqLengths", "actualSeqLengthsKv", "blockTable", quant_scale2="quantScale2",
    full_quant=("deqScale1", "quantScale1", "deqScale2"),
)  # fmt: skip
IFA = Attention(
    frozenset({"BSH", "BSND", "BNSD"}), None, "actualSeqLengths", "blocktable", lse_flag=None,
    quant_scale2="quantScale2", full_quant=("dequantScale1", "quantScale1"), sparse=False, precise_max=1,
)  # fmt: skip
PFA = Attention(
    frozenset({"BSH", "BSND", "BNSD", "TND", "BNSD_BSND"}), "actualSeqLengths", "actualSeqLengthsKv", None,
    key_list=False, lse_flag=None, quant_scale2="quantScale2", full_quant=("deqScale1", "quantScale1"),
)  # fmt: skip
FAS_NULLABLE: Final = ("softmaxOutOut",)

TABLE: Final[dict[str, Row]] = {
    "FusedInferAttentionScore": nullable(FIA_V1, *FIA_V1_NULLABLE),
    "FusedInferAttentionScoreV2": nullable(FIA, "softmaxLse"),
    "FusedInferAttentionScoreV3": nullable(FIA, "softmaxLse"),
    "FusedInferAttentionScoreV4": nullable(FIA, "softmaxLse"),
    "IncreFlashAttentionV4": nullable(IFA, *IFA_NULLABLE),
    "PromptFlashAttentionV3": nullable(PFA, *PFA_NULLABLE),
    "FlashAttentionScore": nullable(Checked(_flash_score, doc="attention/flash_attention_score/docs"), *FAS_NULLABLE),
    "FlashAttentionScoreV2": nullable(Checked(_flash_score, doc="attention/flash_attention_score/docs"), *FAS_NULLABLE),
}
