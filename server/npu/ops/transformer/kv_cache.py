"""aclnnScatterPaKvCache: write this step's keys/values into a paged KV cache at their slots.

Source: hicann/ops-transformer attention/scatter_pa_kv_cache (docs/aclnnScatterPaKvCache.md, op_host/
scatter_pa_kv_cache_def.cpp; the public header is generated, the prototype is the doc's). torch_npu's
npu_scatter_pa_kv_cache and vllm-ascend's cache write call it with cacheMode "Norm" or "PA_NZ" and scatterMode
"None" (scenarios 1, 2 and 6 of the doc):

- token t goes to block slotMapping[t] // blockSize, row slotMapping[t] % blockSize;
- "Norm":  key [T, N, Dk] -> keyCacheRef [blockNum, blockSize, N, Dk] (likewise value/valueCacheRef, Dv may differ);
- "PA_NZ": key [T, N, Dk] -> keyCacheRef [blockNum, N·Dk / D0, blockSize, D0] (the FRACTAL_NZ cache);
- a 0-D (or absent) value and valueCacheRef: keys only (scenario 6).

Constraints (the doc): key/value/caches one dtype (FLOAT16, BFLOAT16, INT8 on A2/A3); slotMapping INT32/INT64
[T], values in [0, blockNum·blockSize), no duplicates (a duplicate's result is unspecified; vnpu keeps the last);
key 3-D (4-D keys are the compressed scenario 3); only key/value may be non-contiguous.
vnpu skips negative slots (vLLM's padding slot -1; the doc leaves them undefined) and refuses a slot past the cache
(161002 naming slotMapping). The compressed scenarios (compressLens, seqLens, compressSeqOffset, scatterMode
"Alibi"/"Rope"/"Omni") and "Nct" (strides/offsets into non-contiguous memory) are refused (161002); strides and
offsets without "Nct" are ignored, as its docs say.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from server.npu.ops.common.errors import invalid, unsupported

Array = np.ndarray


def _write(op: str, names: tuple[str, str], x: Array, cache: Array, slots: Array, nz: bool) -> None:
    name, cache_name = names
    if cache.ndim != 4:
        raise invalid(op, cache_name, f"shape {cache.shape} is not 4-D")
    if x.ndim != 3:
        raise invalid(op, name, f"shape {x.shape} is not [tokens, heads, headSize]")
    blocks, block_size = cache.shape[0], cache.shape[2] if nz else cache.shape[1]
    capacity = blocks * block_size
    if slots.size and int(slots.max()) >= capacity:
        where = int(np.argmax(slots >= capacity))
        raise invalid(op, "slotMapping", f"token {where} has slot {int(slots[where])}; {cache_name} holds {capacity}")
    keep = slots >= 0
    block, row = slots[keep] // block_size, slots[keep] % block_size
    tokens = x[keep]
    if nz:
        lanes, width = cache.shape[1], cache.shape[3]
        if lanes * width != x.shape[1] * x.shape[2]:
            raise invalid(op, cache_name, f"shape {cache.shape} does not hold {name}'s {x.shape[1:]} per token")
        cache[block, :, row, :] = tokens.reshape(-1, lanes, width)
    else:
        if cache.shape[2:] != x.shape[1:]:
            raise invalid(op, cache_name, f"shape {cache.shape} does not hold {name} rows of {x.shape[1:]}")
        cache[block, row] = tokens


def scatter_pa_kv_cache(
    key: Array, keyCacheRef: Array, slotMapping: Array, value: Array | None, valueCacheRef: Array | None,
    compressLensOptional: Array | None, compressSeqOffsetOptional: Array | None, seqLensOptional: Array | None,
    cacheModeOptional: str | None, scatterModeOptional: str | None, stridesOptional: Sequence[int] | None,
    offsetsOptional: Sequence[int] | None, workspace: Array | None,
) -> None:  # fmt: skip
    """keyCacheRef[slot] = key[t], valueCacheRef[slot] = value[t] for each token t (see the module)."""
    op = "ScatterPaKvCache"
    mode = cacheModeOptional or "Norm"
    scatter = scatterModeOptional or "None"
    if mode not in ("Norm", "PA_NZ"):
        raise invalid(op, "cacheModeOptional", f"is {mode!r}; it must be 'Norm' or 'PA_NZ'")
    if scatter != "None":
        raise unsupported(op, "scatterModeOptional", f"scatterMode {scatter!r}")
    for name, given in (("compressLensOptional", compressLensOptional), ("seqLensOptional", seqLensOptional),
                        ("compressSeqOffsetOptional", compressSeqOffsetOptional)):  # fmt: skip
        if given is not None:
            raise unsupported(op, name, "the compressed KV scenarios")
    slots = slotMapping.reshape(-1).astype(np.int64)
    if slots.size != key.shape[0]:
        raise invalid(op, "slotMapping", f"has {slots.size} slots; key has {key.shape[0]} tokens")
    _write(op, ("key", "keyCacheRef"), key, keyCacheRef, slots, mode == "PA_NZ")
    if value is not None and value.ndim > 0:
        if valueCacheRef is None or valueCacheRef.ndim == 0:
            raise invalid(op, "valueCacheRef", "is required when value is given")
        if value.shape[0] != key.shape[0]:
            raise invalid(op, "value", f"has {value.shape[0]} tokens; key has {key.shape[0]}")
        _write(op, ("value", "valueCacheRef"), value, valueCacheRef, slots, mode == "PA_NZ")


FUNCTIONS: dict[str, Callable[..., None]] = {"ScatterPaKvCache": scatter_pa_kv_cache}
