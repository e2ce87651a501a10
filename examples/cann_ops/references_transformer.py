"""Float64 references of ops-transformer's attention (see references.py for the convention): FusedInferAttentionScore
V1-V4, IncreFlashAttentionV4 and PromptFlashAttentionV3 over contiguous K/V in the layouts BNSD, BSND and BSH (and
the output-layout pairs such as BNSD_BSND), GQA, per-batch KV lengths, a boolean mask (True removes the pair) and
the causal sparse modes 2/3. softmax(scale · QKᵀ) V in double precision; a row with no pair left is 0, its LSE +inf.
What these examples do not use (a paged cache, TND, quantization, pse, shared prefixes) raises: no reference."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Args = dict[str, Any]
REFERENCES: dict[str, Callable[[Args], dict[str, np.ndarray]]] = {}
INT_MAX = 2147483647
UNSUPPORTED = ("blockTableOptional", "pseShiftOptional", "pseShift", "antiquantScaleOptional", "deqScale1Optional",
               "deqScale1", "keyAntiquantScaleOptional", "keySharedPrefixOptional", "queryRopeOptional",
               "learnableSinkOptional", "dequantScaleQueryOptional", "quantScale2Optional", "quantScale2")  # fmt: skip


def _bnsd(x: np.ndarray, layout: str, heads: int) -> np.ndarray:
    x = np.asarray(x, np.float64)
    if layout == "BNSD":
        return x
    if layout == "BSND":
        return x.transpose(0, 2, 1, 3)
    if layout == "BSH":
        b, s, h = x.shape
        return x.reshape(b, s, heads, h // heads).transpose(0, 2, 1, 3)
    raise ValueError(f"layout {layout}")


def _to_layout(x: np.ndarray, layout: str) -> np.ndarray:
    if layout == "BNSD":
        return x
    if layout == "BSND":
        return x.transpose(0, 2, 1, 3)
    if layout == "BSH":
        b, n, s, d = x.shape
        return x.transpose(0, 2, 1, 3).reshape(b, s, n * d)
    raise ValueError(f"output layout {layout}")


def _first(value: Any) -> np.ndarray:
    return np.asarray(value[0] if isinstance(value, list) else value)


def attention(args: Args) -> dict[str, np.ndarray]:
    for name in UNSUPPORTED:
        if args.get(name) is not None:
            raise ValueError(f"{name} is not covered")
    layout = str(args["inputLayout"]).split("_")
    heads = int(args["numHeads"])
    kv_heads = int(args.get("numKeyValueHeads") or 0) or heads
    q = _bnsd(args["query"], layout[0], heads)
    k, v = _bnsd(_first(args["key"]), layout[0], kv_heads), _bnsd(_first(args["value"]), layout[0], kv_heads)
    scores = np.einsum("bnsd,bntd->bnst", q, np.repeat(k, heads // kv_heads, axis=1)) * float(args["scaleValue"])
    b, _, sq, skv = scores.shape
    allowed = np.ones(scores.shape, bool)
    lengths = args.get("actualSeqLengthsKvOptional", args.get("actualSeqLengthsKv"))
    if lengths is None and "actualSeqLengthsOptional" not in args:  # IncreFlashAttention: its lengths are the KV's
        lengths = args.get("actualSeqLengths")
    if lengths is not None:
        for i, n in enumerate(np.broadcast_to(np.asarray(lengths, np.int64), (b,))):
            allowed[i, :, :, int(n) :] = False
    mode = int(args.get("sparseMode") or 0)
    mask = args.get("attenMaskOptional", args.get("attenMask"))
    if mode in (2, 3):
        shift = skv - sq if mode == 3 else 0
        allowed &= np.arange(skv)[None, :] <= np.arange(sq)[:, None] + shift
    elif mask is not None:
        if (
            mode == 0
            and max(abs(int(args.get("preTokens", INT_MAX))), abs(int(args.get("nextTokens", INT_MAX)))) < INT_MAX
        ):
            raise ValueError("a preTokens/nextTokens band")
        m = np.asarray(mask).astype(bool)
        m = m[None, None] if m.ndim == 2 else m[:, None] if m.ndim == 3 else m
        allowed &= ~np.broadcast_to(m[..., :sq, :skv], scores.shape)
    elif mode not in (0, 1):
        raise ValueError(f"sparseMode {mode}")
    scores = np.where(allowed, scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    valid = np.isfinite(top)
    weights = np.where(allowed, np.exp(scores - np.where(valid, top, 0)), 0.0)
    total = weights.sum(-1, keepdims=True)
    out = np.where(valid, np.einsum("bnst,bntd->bnsd", weights, np.repeat(v, heads // kv_heads, axis=1))
                   / np.where(valid, total, 1), 0.0)  # fmt: skip
    result = {"attentionOut": _to_layout(out, layout[-1])}
    if args.get("softmaxLseFlag") and args.get("softmaxLse") is not None:
        result["softmaxLse"] = np.where(valid, top + np.log(np.where(valid, total, 1)), np.inf)
    return result


for _name in ("FusedInferAttentionScore", "FusedInferAttentionScoreV2", "FusedInferAttentionScoreV3",
              "FusedInferAttentionScoreV4", "IncreFlashAttentionV4", "PromptFlashAttentionV3"):  # fmt: skip
    REFERENCES[_name] = attention


def rotary_position_embedding(args: Args) -> dict[str, np.ndarray]:
    """out = x·cos + rotate(x)·sin: mode 0 rotate_half ([-x2, x1] of the halves), 1 interleaved pairs
    ((x0, x1) -> (-x1, x0)); the other modes raise."""
    x, mode = np.asarray(args["x"], np.float64), int(args["mode"])
    if mode == 0:
        half = x.shape[-1] // 2
        turned = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    elif mode == 1:
        turned = np.empty_like(x)
        turned[..., 0::2], turned[..., 1::2] = -x[..., 1::2], x[..., 0::2]
    else:
        raise ValueError(f"mode {mode}")
    return {"out": x * np.asarray(args["cos"], np.float64) + turned * np.asarray(args["sin"], np.float64)}


REFERENCES["RotaryPositionEmbedding"] = rotary_position_embedding


def apply_rotary_pos_emb(args: Args) -> dict[str, np.ndarray]:
    """queryRef and keyRef rotated in place with rotate_half, cos and sin broadcast (BSND: (B, S, 1, D))."""
    result = {}
    for name in ("queryRef", "keyRef"):
        x = np.asarray(args[name], np.float64)
        half = x.shape[-1] // 2
        turned = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
        result[name] = x * np.asarray(args["cos"], np.float64) + turned * np.asarray(args["sin"], np.float64)
    return result


def moe_gating_top_k_softmax(args: Args) -> dict[str, np.ndarray]:
    """softmax over the experts in double precision, its k largest (values, expert indices; ties to the lower
    index), rowIdx[t, j] = j·tokens + t; a finished row gives the expert count as its indices."""
    x = np.asarray(args["x"], np.float64)
    shifted = np.exp(x - x.max(-1, keepdims=True))
    probs = shifted / shifted.sum(-1, keepdims=True)
    k = int(args["k"])
    order = np.argsort(-probs, axis=-1, kind="stable")[..., :k]
    values = np.take_along_axis(probs, order, -1)
    if args.get("finishedOptional") is not None:
        order = np.where(np.asarray(args["finishedOptional"], bool)[..., None], x.shape[-1], order)
    tokens = int(np.prod(x.shape[:-1]))
    rows = (np.arange(k)[None, :] * tokens + np.arange(tokens)[:, None]).reshape(*x.shape[:-1], k)
    return {"yOut": values, "expertIdxOut": order, "rowIdxOut": rows}


def rope_with_sin_cos_cache(args: Args) -> dict[str, np.ndarray]:
    """vLLM's rotary embedding: the cache row of each token's position is [cos | sin] (rotaryDim/2 each); each head's
    first rotaryDim values, as complex numbers (NeoX: first half + i·second half; GPT-J: even + i·odd), are
    multiplied by cos + i·sin, the rest kept. mrope (mropeSection) raises."""
    if args.get("mropeSection") is not None:
        raise ValueError("mropeSection is not covered")
    table = np.asarray(args["cosSinCache"], np.float64)[np.asarray(args["positions"], np.int64)]
    half = table.shape[-1] // 2
    turn = (table[:, :half] + 1j * table[:, half:])[:, None, :]  # [T, 1, rotaryDim/2]
    head, neox = int(args["headSize"]), bool(args["isNeoxStyle"])
    result = {}
    for given, name in (("queryIn", "queryOut"), ("keyIn", "keyOut")):
        x = np.asarray(args[given], np.float64)
        heads = x.reshape(x.shape[0], -1, head).copy()
        part = heads[..., : 2 * half]
        if neox:
            z = (part[..., :half] + 1j * part[..., half:]) * turn
            heads[..., : 2 * half] = np.concatenate([z.real, z.imag], axis=-1)
        else:
            z = (part[..., 0::2] + 1j * part[..., 1::2]) * turn
            heads[..., : 2 * half] = np.stack([z.real, z.imag], axis=-1).reshape(part.shape)
        result[name] = heads.reshape(x.shape)
    return result


REFERENCES["ApplyRotaryPosEmb"] = apply_rotary_pos_emb
REFERENCES["RopeWithSinCosCache"] = rope_with_sin_cos_cache
REFERENCES["MoeGatingTopKSoftmax"] = moe_gating_top_k_softmax


def _heads_first(x: np.ndarray, layout: str, heads: int) -> np.ndarray:
    """[B, N, S, D] from BSH, SBH, BSND or BNSD."""
    x = np.asarray(x, np.float64)
    if layout == "SBH":
        x = x.transpose(1, 0, 2)
        layout = "BSH"
    return _bnsd(x, layout, heads)


def flash_attention_score(args: Args) -> dict[str, np.ndarray]:
    """Training forward without pse, dropout or sparse bands: softmax(scale·QKᵀ, masked) V, and the row max and
    the row sum of exp(score - max) of the scaled, masked scores, each repeated 8 times ([B, N, Sq, 8])."""
    if args.get("realShiftOptional") is not None or float(args.get("keepProb", 1.0)) != 1.0:
        raise ValueError("pse or dropout is not covered")
    if int(args.get("sparseMode") or 0) != 0 or max(int(args["preTokens"]), int(args["nextTokens"])) < INT_MAX:
        raise ValueError("a sparse mode or band is not covered")
    layout, heads = str(args["inputLayout"]), int(args["headNum"])
    q = _heads_first(args["query"], layout, heads)
    kv_heads = np.shape(args["key"])[-1] // q.shape[-1] if layout in ("BSH", "SBH") else heads
    k, v = (_heads_first(args[name], layout, kv_heads) for name in ("key", "value"))
    kv_heads = k.shape[1]
    scores = np.einsum("bnsd,bntd->bnst", q, np.repeat(k, heads // kv_heads, 1)) * float(args["scaleValue"])
    mask = args.get("attenMaskOptional")
    if mask is not None:
        m = np.asarray(mask).astype(bool)
        m = m[None, None] if m.ndim == 2 else m[:, None] if m.ndim == 3 else m
        scores = np.where(np.broadcast_to(m, scores.shape), -np.inf, scores)
    top = scores.max(-1, keepdims=True)
    weights = np.exp(scores - top)
    total = weights.sum(-1, keepdims=True)
    out = np.einsum("bnst,bntd->bnsd", weights / total, np.repeat(v, heads // kv_heads, 1))
    b, n, s, d = out.shape
    shaped = {"BNSD": out, "BSND": out.transpose(0, 2, 1, 3), "BSH": out.transpose(0, 2, 1, 3).reshape(b, s, n * d)}
    shaped["SBH"] = shaped["BSH"].transpose(1, 0, 2)
    return {"attentionOutOut": shaped[layout], "softmaxMaxOut": np.repeat(top, 8, -1),
            "softmaxSumOut": np.repeat(total, 8, -1)}  # fmt: skip


REFERENCES["FlashAttentionScore"] = REFERENCES["FlashAttentionScoreV2"] = flash_attention_score


def grouped_matmul(args: Args) -> dict[str, np.ndarray]:
    """GroupedMatmulV4/V5 without quantization or activation: group g's rows of x (groupType 0, the M axis cut by
    groupListOptional: cumulative ends, sizes, or (id, size) rows) times weight g, plus bias g; tensor lists are one
    group each. Rows no group covers keep out's values."""
    quantized = ("scaleOptional", "offsetOptional", "antiquantScaleOptional", "perTokenScaleOptional")
    if any(args.get(name) for name in quantized) or int(args.get("actType", 0)) or int(args.get("groupType", 0)):
        raise ValueError("quantization, activations and groupType != 0 are not covered")
    xs, ws = [np.asarray(t, np.float64) for t in args["x"]], [np.asarray(t, np.float64) for t in args["weight"]]
    weights = ws if len(ws) > 1 else list(ws[0]) if ws[0].ndim == 3 else ws
    biases = [np.asarray(b, np.float64) for b in args.get("biasOptional") or []]
    bias = biases if len(biases) > 1 else list(biases[0]) if biases and biases[0].ndim == 2 else biases
    if len(xs) > 1:
        rows = xs
    else:
        listed = np.asarray(args["groupListOptional"], np.int64)
        kind = int(args.get("groupListType", 0))
        sizes = np.diff(listed, prepend=0) if kind == 0 else listed if kind == 1 else listed[:, 1]
        rows = np.split(xs[0], np.cumsum(sizes))[: len(weights)]
    ys = [r @ w + (bias[g] if bias else 0) for g, (r, w) in enumerate(zip(rows, weights, strict=False))]
    outs = [np.asarray(t, np.float64) for t in args["out"]]
    if len(outs) > 1:
        return {f"out.{g}": y for g, y in enumerate(ys)}
    whole = outs[0].copy()
    done = sum(len(y) for y in ys)
    whole[:done] = np.concatenate(ys) if ys else whole[:0]
    return {"out.0": whole}


REFERENCES["GroupedMatmulV4"] = REFERENCES["GroupedMatmulV5"] = grouped_matmul
