"""Float64 references of ops-nn's activations, norms, matmuls and index operators (see references.py for the
convention: a launch's arguments by C name in, the written tensors by name out)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

Args = dict[str, Any]
Reference = Callable[[Args], dict[str, np.ndarray]]
REFERENCES: dict[str, Reference] = {}
_ERF = np.vectorize(math.erf, otypes=[np.float64])
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def f64(value: Any) -> np.ndarray:
    return np.asarray(value, np.float64)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def activation(name: str, function: Callable[[np.ndarray, Args], np.ndarray], source: str = "self") -> None:
    def compute(args: Args) -> dict[str, np.ndarray]:
        out = next(n for n in ("out", "y") if n in args)
        with np.errstate(all="ignore"):
            return {out: function(f64(args[source]), args)}

    REFERENCES[name] = compute


activation("Celu", lambda x, a: np.maximum(x, 0) + np.minimum(0, float(a["alpha"]) * np.expm1(x / float(a["alpha"]))))
activation(
    "Elu",
    lambda x, a: float(a["scale"]) * np.where(x > 0, x, float(a["alpha"]) * np.expm1(x * float(a["inputScale"]))),
)
activation(
    "GeluV2",
    lambda x, a: (
        0.5 * x * (1 + _ERF(x / math.sqrt(2)))
        if int(a["approximate"]) == 0
        else 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    ),
    source="x",
)
activation("Hardshrink", lambda x, a: np.where(np.abs(x) > float(a["lambd"]), x, 0.0))
activation("Softshrink", lambda x, a: np.sign(x) * np.maximum(np.abs(x) - float(a["lambd"]), 0.0))
activation("Hardsigmoid", lambda x, a: np.clip(x / 6 + 0.5, 0, 1))
activation("Hardswish", lambda x, a: x * np.clip(x + 3, 0, 6) / 6)
activation("Hardtanh", lambda x, a: np.clip(x, float(a["clipValueMin"]), float(a["clipValueMax"])))
activation("LeakyRelu", lambda x, a: np.where(x > 0, x, float(a["negativeSlope"]) * x))
activation("Mish", lambda x, a: x * np.tanh(softplus(x)))
activation("Selu", lambda x, a: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)))
activation(
    "Softplus",
    lambda x, a: np.where(
        x * float(a["beta"]) > float(a["threshold"]), x, softplus(float(a["beta"]) * x) / float(a["beta"])
    ),
)
activation("Swish", lambda x, a: x * sigmoid(float(a.get("betaOptional") or 1.0) * x))


def _halves(x: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    first, second = np.split(x, 2, axis=dim)
    return first, second


REFERENCES["Glu"] = lambda a: {"out": (lambda p: p[0] * sigmoid(p[1]))(_halves(f64(a["self"]), int(a["dim"])))}
REFERENCES["SwiGlu"] = lambda a: {"out": (lambda p: p[0] * sigmoid(p[0]) * p[1])(_halves(f64(a["x"]), int(a["dim"])))}


def _prelu(args: Args) -> dict[str, np.ndarray]:
    x, w = f64(args["self"]), f64(args["weight"]).ravel()
    if w.size > 1 and x.ndim >= 2:
        w = w.reshape((1, -1) + (1,) * (x.ndim - 2))
    return {"out": np.where(x > 0, x, w * x)}


REFERENCES["Prelu"] = _prelu


def _add_rms_norm(args: Args) -> dict[str, np.ndarray]:
    x = f64(args["x1"]) + f64(args["x2"])
    gamma = f64(args["gamma"])
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    rstd = 1.0 / np.sqrt((x * x).mean(axis=axes, keepdims=True) + float(args["epsilon"]))
    return {"yOut": x * rstd * gamma, "rstdOut": rstd, "xOut": x}


REFERENCES["AddRmsNorm"] = _add_rms_norm


def _layer_norm(args: Args) -> dict[str, np.ndarray]:
    x = f64(args["input"])
    axes = tuple(range(x.ndim - len(args["normalizedShape"]), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + float(args["eps"]))
    out = (x - mean) * rstd
    if args.get("weightOptional") is not None:
        out = out * f64(args["weightOptional"])
    if args.get("biasOptional") is not None:
        out = out + f64(args["biasOptional"])
    return {"out": out, "meanOutOptional": mean, "rstdOutOptional": rstd}


REFERENCES["LayerNorm"] = REFERENCES["LayerNormWithImplMode"] = _layer_norm


def _group_norm(args: Args) -> dict[str, np.ndarray]:
    x = f64(args["self"])
    n, c, group = int(args["N"]), int(args["C"]), int(args["group"])
    grouped = x.reshape(n, group, -1)
    mean = grouped.mean(axis=2, keepdims=True)
    rstd = 1.0 / np.sqrt(grouped.var(axis=2, keepdims=True) + float(args["eps"]))
    shape = (1, c) + (1,) * (x.ndim - 2)
    out = ((grouped - mean) * rstd).reshape(x.shape)
    if args.get("gamma") is not None:
        out = out * f64(args["gamma"]).reshape(shape)
    if args.get("beta") is not None:
        out = out + f64(args["beta"]).reshape(shape)
    return {"out": out, "meanOut": mean.reshape(n, group), "rstdOut": rstd.reshape(n, group)}


REFERENCES["GroupNorm"] = _group_norm


def _sync_batch_norm_gather_stats(args: Args) -> dict[str, np.ndarray]:
    """Its doc's formulas over the devices' sums; counts truncated to integers (the op_api casts them to INT32), and
    the biased variance for the running one when there is at most one sample (the Atlas A2 kernel's guard)."""
    count = float(np.trunc(f64(args["sampleCount"])).sum())
    batch_mean = f64(args["totalSum"]).sum(axis=0) / count
    batch_var = f64(args["totalSquareSum"]).sum(axis=0) / count - batch_mean**2
    momentum = float(args["momentum"])
    unbiased = batch_var * count / (count - 1) if count > 1 else batch_var
    return {
        "batchMean": batch_mean,
        "batchInvstd": 1.0 / np.sqrt(batch_var + float(args["eps"])),
        "mean": f64(args["mean"]) * (1 - momentum) + momentum * batch_mean,
        "variance": f64(args["variance"]) * (1 - momentum) + momentum * unbiased,
    }


REFERENCES["SyncBatchNormGatherStats"] = _sync_batch_norm_gather_stats
REFERENCES["Addmm"] = lambda a: {
    "out": float(a["beta"]) * f64(a["self"]) + float(a["alpha"]) * (f64(a["mat1"]) @ f64(a["mat2"]))
}
REFERENCES["Baddbmm"] = lambda a: {
    "out": float(a["beta"]) * f64(a["self"]) + float(a["alpha"]) * np.matmul(f64(a["batch1"]), f64(a["batch2"]))
}
REFERENCES["Dot"] = lambda a: {"out": np.asarray(np.dot(f64(a["self"]), f64(a["tensor"])))}
REFERENCES["Mv"] = lambda a: {"out": f64(a["self"]) @ f64(a["vec"])}


def _ints(value: Any) -> np.ndarray:
    return np.asarray(value).astype(np.int64)


REFERENCES["Embedding"] = lambda a: {"out": f64(a["weight"])[_ints(a["indices"])]}
REFERENCES["IndexSelect"] = lambda a: {"out": np.take(f64(a["self"]), _ints(a["index"]), axis=int(a["dim"]))}
REFERENCES["Gather"] = lambda a: {"out": np.take_along_axis(f64(a["self"]), _ints(a["index"]), axis=int(a["dim"]))}


def _index(args: Args) -> dict[str, np.ndarray]:
    keys = tuple(np.asarray(i) if np.asarray(i).dtype == np.bool_ else _ints(i) for i in args["indices"])
    return {"out": f64(args["self"])[keys]}


REFERENCES["Index"] = _index


def _along(x: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray, add: bool, scale: float = 1.0) -> np.ndarray:
    """x with source's slices along `dim` put at (or added to) `index`."""
    moved = np.moveaxis(x.copy(), dim, 0)
    values = np.moveaxis(source, dim, 0) * scale
    if add:
        np.add.at(moved, index, values)
    else:
        moved[index] = values
    return np.moveaxis(moved, 0, dim)


REFERENCES["IndexAdd"] = lambda a: {
    "out": _along(f64(a["self"]), int(a["dim"]), _ints(a["index"]), f64(a["source"]), True, float(a["alpha"]))
}
REFERENCES["IndexCopy"] = lambda a: {
    "outRef": _along(f64(a["selfRef"]), int(a["dim"]), _ints(a["index"]), f64(a["source"]), False)
}
REFERENCES["InplaceIndexCopy"] = lambda a: {
    "selfRef": _along(f64(a["selfRef"]), int(a["dim"]), _ints(a["index"]), f64(a["source"]), False)
}


def _scatter_add(args: Args) -> dict[str, np.ndarray]:
    out, dim = f64(args["self"]).copy(), int(args["dim"])
    index, src = _ints(args["index"]), f64(args["src"])
    for position in np.ndindex(index.shape):
        target = list(position)
        target[dim] = index[position]
        out[tuple(target)] += src[position]
    return {"out": out}


REFERENCES["ScatterAdd"] = _scatter_add


def _quant_matmul_v4(args: Args) -> dict[str, np.ndarray]:
    """W8A8: (x1 @ x2 [+ int32 bias]) · scale [· pertokenScale] [+ float bias] [+ offset]; an INT32 out unscaled.
    Float scales only (a packed UINT64/INT64 scale is refused: no reference)."""
    x1, x2 = _ints(args["x1"]).astype(np.float64), _ints(args["x2"]).astype(np.float64)
    if args.get("transposeX1"):
        x1 = np.swapaxes(x1, -1, -2)
    if args.get("transposeX2"):
        x2 = np.swapaxes(x2, -1, -2)
    product, bias = x1 @ x2, args.get("bias")
    integer_bias = bias is not None and np.asarray(bias).dtype.kind == "i"
    if integer_bias:
        product = product + f64(bias)
    if np.asarray(args["out"]).dtype == np.int32:
        return {"out": product}
    scale = np.asarray(args["scale"])
    if scale.dtype.kind != "f" and scale.dtype.name != "bfloat16":
        raise ValueError(f"a packed {scale.dtype} scale")
    result = product * f64(scale)
    if args.get("pertokenScaleOptional") is not None:
        result = result * f64(args["pertokenScaleOptional"])[..., :, None]
    if bias is not None and not integer_bias:
        result = result + f64(bias)
    if args.get("offset") is not None:
        result = result + f64(args["offset"])
    return {"out": result}


def _quant_matmul_v5(args: Args) -> dict[str, np.ndarray]:
    """V4's modes (x2Scale the scale, x1Scale per token, x2Offset the offset) and the G-B mode: 2-D scales, the
    formula's sum over k-blocks of (x1 row block . x2 column block) · x1Scale[m / gsM, j] · x2Scale[j, n / gsN]
    + bias, the scales laid out as their operands (groupSize's zeros inferred from the shapes)."""
    if any(args.get(name) is not None for name in ("yScale", "x1Offset")):
        raise ValueError("the T-CG mode is not covered")
    one, two = args.get("x1Scale"), np.asarray(args["x2Scale"])
    if args.get("yOffset") is not None:  # K-G: (x1 @ (x2 · x2Scale per 256 rows of k) + yOffset) · x1Scale
        words = np.asarray(args["x2"]).astype(np.int64) & 0xFFFFFFFF
        nibbles = np.stack([(words >> (4 * i)) & 0xF for i in range(8)], axis=-1).reshape(words.shape[0], -1)
        # a packed scale's float: bits 0-31 truncated to the top 19 (aclnnTransQuantParam's documented formula)
        factor = (two.astype(np.uint64) & np.uint64(0xFFFFE000)).astype(np.uint32).view(np.float32).astype(np.float64)
        weights = np.where(nibbles >= 8, nibbles - 16, nibbles) * np.repeat(factor, 256, axis=0)[: len(nibbles)]
        return {"out": (_ints(args["x1"]).astype(np.float64) @ weights + f64(args["yOffset"])) * f64(one)}
    if one is None or (int(args.get("groupSize") or 0) == 0 and min(np.ndim(one), two.ndim) < 2):
        v4 = {"scale": two, "offset": args.get("x2Offset"), "pertokenScaleOptional": one}
        return _quant_matmul_v4({**args, **v4})
    x1, x2, s1, s2 = _ints(args["x1"]).astype(np.float64), _ints(args["x2"]).astype(np.float64), f64(one), f64(two)
    x1, s1 = (x1.T, s1.T) if args.get("transposeX1") else (x1, s1)
    x2, s2 = (x2.T, s2.T) if args.get("transposeX2") else (x2, s2)
    (m, k), n = x1.shape, x2.shape[1]
    size = int(args.get("groupSize") or 0)
    gm, gn, gk = [
        (size >> shift) & 0xFFFF or -(-whole // parts)
        for shift, whole, parts in ((32, m, s1.shape[0]), (16, n, s2.shape[1]), (0, k, s1.shape[1]))
    ]
    out = np.zeros((m, n))
    for j in range(-(-k // gk)):
        block = x1[:, j * gk : (j + 1) * gk] @ x2[j * gk : (j + 1) * gk]
        out += block * s1[np.arange(m) // gm, j][:, None] * s2[j, np.arange(n) // gn][None, :]
    return {"out": out + (f64(args["bias"]) if args.get("bias") is not None else 0.0)}


REFERENCES["QuantMatmulV4"] = _quant_matmul_v4
REFERENCES["QuantMatmulV5"] = _quant_matmul_v5


def _scatter_nd_update(args: Args) -> dict[str, np.ndarray]:
    """varRef[indices[i]] = updates[i], each index a prefix of varRef's axes."""
    var, indices = f64(args["varRef"]).copy(), _ints(args["indices"])
    updates = f64(args["updates"]).reshape(-1, *var.shape[indices.shape[-1] :])
    for i, position in enumerate(indices.reshape(-1, indices.shape[-1])):
        var[tuple(position)] = updates[i]
    return {"varRef": var}


def _dynamic_quant(args: Args) -> dict[str, np.ndarray]:
    """Symmetric per-token int8: scale = max |x·smooth| / 127 over the last axis, y = round-half-even(x / scale)."""
    if np.asarray(args["yOut"]).dtype != np.int8:
        raise ValueError("an int4 / packed output")
    x = f64(args["x"]) * (1.0 if args.get("smoothScalesOptional") is None else f64(args["smoothScalesOptional"]))
    scale = np.abs(x).max(-1) / 127.0
    y = np.clip(np.rint(x / np.where(scale == 0, 1, scale)[..., None]), -128, 127)
    return {"yOut": y, "scaleOut": scale}


def _dynamic_quant_v2(args: Args) -> dict[str, np.ndarray]:
    """DynamicQuant with per-expert smooth rows chosen as the device's kernel scans groupIndex (row r, 1-based,
    takes the first expert from the previous row's on whose count is >= r), asymmetric when offsetOut is given:
    scale = (max - min) / 255, offset = 127 - max / scale, y = round(x / scale + offset)."""
    if np.asarray(args["yOut"]).dtype != np.int8:
        raise ValueError("an int4 / packed output")
    x, smooth, ends = f64(args["x"]), args.get("smoothScalesOptional"), args.get("groupIndexOptional")
    rows = x.reshape(-1, x.shape[-1]).copy()
    if smooth is not None and ends is not None:
        table, ends, expert = f64(smooth).reshape(-1, x.shape[-1]), _ints(ends).ravel(), 0
        for r in range(rows.shape[0]):
            while expert < len(ends) and ends[expert] < r + 1:
                expert += 1
            if expert == len(ends):
                break
            rows[r] *= table[expert]
    elif smooth is not None:
        rows *= f64(smooth).ravel()
    x = rows.reshape(x.shape)
    if args.get("offsetOut") is None:
        scale = np.abs(x).max(-1) / 127.0
        return {"yOut": np.clip(np.rint(x / np.where(scale == 0, 1, scale)[..., None]), -128, 127), "scaleOut": scale}
    high, low = x.max(-1), x.min(-1)
    scale = (high - low) / 255.0
    offset = np.where(scale > 0, 127.0 - high / np.where(scale == 0, 1, scale), 127.0)
    y = np.clip(np.rint(x / np.where(scale == 0, 1, scale)[..., None] + offset[..., None]), -128, 127)
    return {"yOut": np.where(scale[..., None] > 0, y, 0), "scaleOut": scale, "offsetOut": offset}


REFERENCES["ScatterNdUpdate"] = _scatter_nd_update
REFERENCES["DynamicQuant"] = _dynamic_quant
REFERENCES["DynamicQuantV2"] = _dynamic_quant_v2


def _weight_quant_batch_matmul_v2(args: Args) -> dict[str, np.ndarray]:
    """W8A16: y = x @ ((weight + antiquantOffset) · antiquantScale) + bias, the scale per tensor, per channel or
    per group of antiquantGroupSize rows; int8 weights and float scales only, no quantized output."""
    weight = np.asarray(args["weight"])
    scale = np.asarray(args["antiquantScale"])
    if weight.dtype != np.int8 or scale.dtype.kind not in "fV" or args.get("quantScaleOptional") is not None:
        raise ValueError("an int4 weight, a packed scale or a quantized output")
    group, w = int(args.get("antiquantGroupSize") or 0), weight.astype(np.float64)
    offset = args.get("antiquantOffsetOptional")

    def rows(t: Any) -> np.ndarray:
        t = f64(t)
        return np.repeat(t, group, axis=0)[: w.shape[0]] if group else t

    w = (w + (rows(offset) if offset is not None else 0.0)) * rows(scale)
    y = f64(args["x"]) @ w
    if args.get("biasOptional") is not None:
        y = y + f64(args["biasOptional"])
    return {"y": y}


REFERENCES["WeightQuantBatchMatmulV2"] = _weight_quant_batch_matmul_v2


def _apply_top_k_top_p(args: Args) -> dict[str, np.ndarray]:
    """Per row: keep the values ≥ the k-th largest (k ≤ 0 or ≥ V keeps all), softmax what is kept, drop the
    smallest ones whose cumulative probability (from the smallest) is ≤ 1 - p, always keeping the largest; the rest
    -inf."""
    logits = f64(args["logits"])
    out = np.full_like(logits, -np.inf)
    for b, row in enumerate(logits):
        keep = np.ones(row.shape, bool)
        if args.get("k") is not None and 0 < int(np.ravel(args["k"])[b]) < row.size:
            keep = row >= np.sort(row)[::-1][int(np.ravel(args["k"])[b]) - 1]
        if args.get("p") is not None:
            order = np.argsort(row, kind="stable")
            kept = np.where(keep[order], np.exp(row[order] - row[keep].max()), 0.0)
            dropped = np.cumsum(kept / kept.sum()) <= 1 - float(np.ravel(args["p"])[b])
            dropped[-1] = False
            keep[order[dropped]] = False
        out[b, keep] = row[keep]
    return {"out": out}


REFERENCES["ApplyTopKTopP"] = _apply_top_k_top_p
