"""The driver shared by FusedInferAttentionScore V1-V5, IncreFlashAttentionV4 and PromptFlashAttentionV3.

`run(call)` computes, batch by batch, softmax(scaleValue · QKᵀ + pse, masked) V (`attention_core.attend`) and
writes attentionOut (and softmaxLse when softmaxLseFlag is set) in the output layout. What it implements:

- layouts BSH, BSND, BNSD, TND, NTD and the IN_OUT forms (BNSD_BSND, BSH_NBSD, TND_NTD, ...);
- GQA/MQA (numKeyValueHeads dividing numHeads; 0 means numHeads);
- KV from a paged cache (BnBsH, BnNBsD, NZ), a per-batch tensor list, or one tensor; shared prefixes
  (keySharedPrefix/valueSharedPrefix, put before every batch's keys); MLA's queryRope/keyRope (their dot product
  added to QKᵀ, i.e. appended to D);
- actualSeqLengths/actualSeqLengthsKv as host int arrays (cumulative for TND/NTD), left padding;
- sparseMode 0-4 with preTokens/nextTokens and attenMask (`attention_core.sparse`); in the decode case (a batch
  layout with S = 1 and no rope) sparseMode, preTokens and nextTokens are ignored and only attenMask applies;
- pseShift added after the scaling (pseType 0), ALiBi pse generated from slopes (pseType 2: -slope·|i-j|,
  3: -slope·sqrt|i-j|, positions offset by qStartIdx/kvStartIdx); learnableSink;
- int8/int4 KV dequantization (`attention_quant`), int8 output quantization (quantScale2/quantOffset2).
Not implemented (161002 naming the argument): full quantization (int8 query, deqScale1, quantScale1, deqScale2,
dequantScaleQuery), antiquant modes 4-7, a shared prefix with TND/NTD or with quantized KV, sparseMode 5-8.

Rows past a batch's actual length and batches without keys get 0 in attentionOut and +inf in softmaxLse.
innerPrecise (0-3) selects precision modes on the hardware; vnpu always computes in float32 and always applies
the invalid-row correction.
"""

from __future__ import annotations

import numpy as np

from server.npu.ops.common.errors import invalid, unsupported
from server.npu.ops.transformer import attention_layout as lay
from server.npu.ops.transformer.attention_core import CAUSAL_MODES, attend, sparse
from server.npu.ops.transformer.attention_quant import post_quant, widen_kv
from server.npu.ops.transformer.infer_call import InferCall
from server.npu.ops.transformer.infer_inputs import Keys, Query, query

INPUT_LAYOUTS = frozenset({"BSH", "BSND", "BNSD", "TND", "NTD"})


def _plane(call: InferCall, name: str, tensor: np.ndarray, b: int, decode: bool) -> np.ndarray:
    """Batch b's [heads or 1, rows or 1, columns] slice of attenMask or pseShift."""
    pick = b if tensor.shape[0] > 1 else 0
    plane: np.ndarray
    if tensor.ndim == 2:
        plane = tensor[pick][None, None, :] if decode else tensor[None]
    elif tensor.ndim == 3:
        plane = tensor[pick][None]
    elif tensor.ndim == 4:
        plane = tensor[pick]
    else:
        raise invalid(call.op, name, f"shape {tensor.shape} is not 2-D, 3-D or 4-D")
    return plane


def _lookup(call: InferCall, name: str, plane: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    rows = np.zeros_like(rows) if plane.shape[1] == 1 else rows
    if rows.size and int(rows.max()) >= plane.shape[1]:
        raise invalid(call.op, name, f"has {plane.shape[1]} rows; the query needs {int(rows.max()) + 1}")
    if cols.size and int(cols.max()) >= plane.shape[2]:
        raise invalid(call.op, name, f"has {plane.shape[2]} columns; the keys need {int(cols.max()) + 1}")
    picked: np.ndarray = plane[:, rows][:, :, cols]
    return picked


def _validate(call: InferCall) -> None:
    op = call.op
    if call.full_quant or call.query.dtype == np.int8:
        what = call.full_quant[0] if call.full_quant else call.names.query
        raise unsupported(op, what, "full quantization (int8 query, deqScale1/quantScale1/deqScale2)")
    if not 0 <= call.inner_precise <= 3:
        raise invalid(op, "innerPrecise", f"is {call.inner_precise}; it must be 0, 1, 2 or 3")
    if call.sparse_mode not in range(5):
        raise invalid(op, "sparseMode", f"is {call.sparse_mode}; vnpu implements 0-4 (5-8 are not supported)")
    if call.num_heads <= 0:
        raise invalid(op, "numHeads", f"is {call.num_heads}; it must be positive")
    kv_heads = call.kv_heads or call.num_heads
    if kv_heads < 0 or call.num_heads % kv_heads:
        raise invalid(op, "numKeyValueHeads", f"is {call.kv_heads}; it must divide numHeads = {call.num_heads}")
    if call.pse_type not in (0, 2, 3):
        raise invalid(op, "pseType", f"is {call.pse_type}; inference attention takes 0, 2 or 3")
    if (call.key_prefix is None) != (call.value_prefix is None):
        raise invalid(op, "valueSharedPrefixOptional", "keySharedPrefix and valueSharedPrefix go together")
    if (call.query_rope is None) != (call.key_rope is None):
        raise invalid(op, "keyRopeOptional", "queryRope and keyRope go together")
    if call.out.dtype == np.int8 and call.quant_scale2 is None:
        raise invalid(op, call.names.quant_scale2, "is required for an int8 attentionOut")
    if call.lse_flag and call.lse is None:
        raise invalid(op, call.names.lse, "is required when softmaxLseFlag is set")


class _Prefix:
    """keySharedPrefix/valueSharedPrefix as [KV_N, P, D] arrays put before every batch's keys."""

    def __init__(self, call: InferCall, layout: lay.Layout, keys: Keys) -> None:
        self.key = self.value = None
        if call.key_prefix is None or call.value_prefix is None:
            return
        if layout.tokens or keys.quantized:
            raise unsupported(call.op, "keySharedPrefixOptional", "a shared prefix with TND/NTD or quantized KV")
        views = []
        for name, x in (("keySharedPrefixOptional", call.key_prefix), ("valueSharedPrefixOptional", call.value_prefix)):
            view = lay.to_bnsd(call.op, name, widen_kv(call.op, name, x), layout.inp, keys.kv_heads)
            if view.shape[0] != 1:
                raise invalid(call.op, name, f"shape {x.shape}: a shared prefix has batch 1")
            views.append(view[0])
        full = views[0].shape[1]
        length = full if call.prefix_length is None else int(call.prefix_length[0])
        if not 0 <= length <= full:
            raise invalid(call.op, "actualSharedPrefixLenOptional", f"is {length}; the prefix holds {full}")
        self.key, self.value = (v[:, :length].astype(np.float32) for v in views)

    @property
    def length(self) -> int:
        return 0 if self.key is None else self.key.shape[1]


def _allowed(call: InferCall, q: Query, b: int, rows: int, cols: np.ndarray, decode: bool) -> np.ndarray | None:
    """Batch b's allowed pairs [1 or N, rows, len(cols)] from sparseMode and attenMask (True = attend)."""
    names = call.names
    mode = 0 if decode else call.sparse_mode
    if call.mask is None and mode in CAUSAL_MODES | {1}:
        raise invalid(call.op, names.mask, f"is required with sparseMode {mode}")
    left_padded = call.query_padding is not None or call.kv_padding is not None
    pre, nxt = (2**62, 2**62) if decode or left_padded else (call.pre_tokens, call.next_tokens)
    shape = sparse(mode, pre, nxt, rows, cols.size, call.mask is not None)
    allowed = None if shape is None else shape[None]
    if call.mask is not None and mode in (0, 1):
        plane = _plane(call, names.mask, call.mask, b, decode)
        kept = ~_lookup(call, names.mask, plane, q.mask_rows(b), cols).astype(bool)
        allowed = kept if allowed is None else allowed & kept
    return allowed


def _bias(call: InferCall, q: Query, b: int, rows: int, cols: np.ndarray, decode: bool) -> np.ndarray | None:
    if call.pse is None:
        return None
    if call.pse_type == 0:
        plane = _plane(call, call.names.pse, call.pse, b, decode)
        return _lookup(call, call.names.pse, plane, q.mask_rows(b), cols).astype(np.float32)
    slopes = call.pse.astype(np.float32).reshape(-1, 1, 1)
    q0 = 0 if call.q_start is None else int(call.q_start[0])
    k0 = 0 if call.kv_start is None else int(call.kv_start[0])
    distance = np.abs((q0 + np.arange(rows))[:, None] - (k0 + np.arange(cols.size))[None, :]).astype(np.float32)
    alibi: np.ndarray = -slopes * (distance if call.pse_type == 2 else np.sqrt(distance))
    return alibi


def run(call: InferCall) -> None:
    """Compute one launch into call.out (and call.lse)."""
    _validate(call)
    layout = lay.parse(call.op, call.layout, INPUT_LAYOUTS)
    if call.query.size == 0 or call.out.size == 0:
        return
    q = query(call, layout)
    keys = Keys(call, layout, q.batches)
    prefix = _prefix_of(call, layout, keys)
    decode = q.decode and call.query_rope is None
    sink = None if call.sink is None else call.sink.astype(np.float32).reshape(-1)
    outs, lses = [], []
    for b in range(q.batches):
        qb = q.rows(b)
        k, v, rope, positions = keys.batch(b)
        k, v = _dequantized(call, keys, k, v, b, positions)
        if rope is not None:
            k = np.concatenate([k, rope.astype(np.float32)], axis=-1)
        if qb.shape[-1] != k.shape[-1]:
            raise invalid(call.op, call.names.key, f"has D = {k.shape[-1]}; the query has {qb.shape[-1]}")
        cols = positions + prefix.length
        if prefix.key is not None and prefix.value is not None:
            k = np.concatenate([prefix.key, k], axis=1)
            v = np.concatenate([prefix.value, v], axis=1)
            cols = np.concatenate([np.arange(prefix.length), cols])
        rows = qb.shape[1]
        allowed = _allowed(call, q, b, rows, cols, decode)
        bias = _bias(call, q, b, rows, cols, decode)
        result = attend(qb, k, v, call.scale, allowed, bias, sink)
        outs.append(result.out)
        lses.append(result.lse)
    _write(call, layout, q, outs, lses)


def _prefix_of(call: InferCall, layout: lay.Layout, keys: Keys) -> _Prefix:
    return _Prefix(call, layout, keys)


def _dequantized(
    call: InferCall, keys: Keys, k: np.ndarray, v: np.ndarray, b: int, positions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    if not keys.quantized:  # contiguous float32 in one pass from a gathered, transposed view
        return np.ascontiguousarray(k, np.float32), np.ascontiguousarray(v, np.float32)
    if call.key_dequant is None or call.value_dequant is None:
        raise invalid(call.op, "keyAntiquantScaleOptional", "quantized keys/values need antiquant scales")
    return call.key_dequant.apply(k, b, positions), call.value_dequant.apply(v, b, positions)


def _write(call: InferCall, layout: lay.Layout, q: Query, outs: list[np.ndarray], lses: list[np.ndarray]) -> None:
    names = call.names
    heads = call.num_heads
    dv = outs[0].shape[-1] if outs else 0
    if layout.tokens:
        result = np.zeros((q.data.shape[0], heads, dv), np.float32)
        lse = np.full((q.data.shape[0], heads), np.inf, np.float32)
        for (start, end), out, row_lse in zip(q.ranges, outs, lses, strict=True):
            result[start:end] = out.transpose(1, 0, 2)
            lse[start:end] = row_lse.T
    else:
        batches, _, seq, _ = q.data.shape
        result = np.zeros((batches, heads, seq, dv), np.float32)
        lse = np.full((batches, heads, seq), np.inf, np.float32)
        for b, ((start, end), out, row_lse) in enumerate(zip(q.ranges, outs, lses, strict=True)):
            result[b, :, start:end] = out
            lse[b, :, start:end] = row_lse
    if call.out.dtype == np.int8:
        assert call.quant_scale2 is not None
        result = post_quant(call.op, result, 1, call.quant_scale2, call.quant_offset2)
    elif call.quant_scale2 is not None:
        raise invalid(call.op, names.quant_scale2, f"is given but attentionOut is {call.out.dtype}, not int8")
    final = lay.from_tnd(result, layout.out) if layout.tokens else lay.from_bnsd(result, layout.out)
    if final.shape != call.out.shape:
        raise invalid(call.op, names.out, f"has shape {call.out.shape}; the result is {final.shape} ({layout.out})")
    np.copyto(call.out, final, casting="unsafe")
    if call.lse_flag and call.lse is not None:
        if call.lse.size != lse.size:
            raise invalid(call.op, names.lse, f"has shape {call.lse.shape}; it needs {lse.shape} + (1,)")
        np.copyto(call.lse, lse.reshape(call.lse.shape), casting="unsafe")
