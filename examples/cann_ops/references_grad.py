"""Float64 references of ops-nn's activation gradients and losses (see references.py for the convention: a launch's
arguments by C name in, the written tensors by name out). Each is written from the operator's documentation and
torch's autograd formulas, per element where a loop reads more plainly than a vector expression."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

Args = dict[str, Any]
Reference = Callable[[Args], dict[str, np.ndarray]]
REFERENCES: dict[str, Reference] = {}
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def f64(value: Any) -> np.ndarray:
    return np.asarray(value, np.float64)


def sigmoid(x: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-x))


def _elementwise(derivative: Callable[[float, Args], float], x_name: str = "self") -> Reference:
    """gradOutput · derivative(x) per element, the two inputs broadcast; written into the operator's one output."""

    def compute(args: Args) -> dict[str, np.ndarray]:
        grad, x = np.broadcast_arrays(f64(args["gradOutput"]), f64(args[x_name]))
        out = next(n for n in ("gradInput", "out") if n in args)
        values = [g * derivative(float(v), args) for g, v in zip(grad.ravel(), x.ravel(), strict=True)]
        return {out: np.array(values, np.float64).reshape(grad.shape)}

    return compute


def _gelu_exact(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2))) + x * math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _gelu_tanh(x: float) -> float:
    k = math.sqrt(2 / math.pi)
    inner = k * (x + 0.044715 * x**3)
    t = math.tanh(inner)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)


def _swish(x: float, beta: float) -> float:
    s = 1 / (1 + math.exp(-beta * x))
    return s + beta * x * s * (1 - s)


def _mish(x: float) -> float:
    sp = math.log1p(math.exp(x)) if x < 30 else x
    t = math.tanh(sp)
    return t + x * (1 / (1 + math.exp(-x))) * (1 - t * t)


def _elu(x: float, a: Args) -> float:
    alpha, scale, input_scale = float(a["alpha"]), float(a["scale"]), float(a["inputScale"])
    if x > 0:
        return scale
    if a["isResult"]:
        return input_scale * (x + alpha * scale)
    return input_scale * alpha * scale * math.exp(input_scale * x)


REFERENCES["TanhBackward"] = _elementwise(lambda y, a: 1 - y * y, "output")
REFERENCES["SigmoidBackward"] = _elementwise(lambda y, a: y * (1 - y), "output")
REFERENCES["SiluBackward"] = _elementwise(lambda x, a: _swish(x, 1.0))
REFERENCES["GeluBackward"] = _elementwise(lambda x, a: _gelu_exact(x))
REFERENCES["GeluBackwardV2"] = _elementwise(
    lambda x, a: _gelu_tanh(x) if a["approximate"] == "tanh" else _gelu_exact(x)
)
REFERENCES["SoftplusBackward"] = _elementwise(
    lambda x, a: 1.0 if float(a["beta"]) * x > float(a["threshold"]) else 1 / (1 + math.exp(-float(a["beta"]) * x))
)
REFERENCES["HardswishBackward"] = _elementwise(lambda x, a: 0.0 if x < -3 else (1.0 if x > 3 else x / 3 + 0.5))
REFERENCES["HardsigmoidBackward"] = _elementwise(lambda x, a: 1 / 6 if -3 < x < 3 else 0.0)
REFERENCES["HardtanhBackward"] = _elementwise(lambda x, a: 1.0 if float(a["min"]) <= x <= float(a["max"]) else 0.0)
REFERENCES["EluBackward"] = _elementwise(_elu, "selfOrResult")
REFERENCES["SeluBackward"] = _elementwise(lambda y, a: SELU_SCALE if y > 0 else y + SELU_ALPHA * SELU_SCALE, "result")
REFERENCES["MishBackward"] = _elementwise(lambda x, a: _mish(x))
REFERENCES["SoftshrinkBackward"] = _elementwise(lambda x, a: 1.0 if abs(x) > float(a["lambda"]) else 0.0)
REFERENCES["ThresholdBackward"] = _elementwise(lambda x, a: 1.0 if x > float(a["threshold"]) else 0.0)
REFERENCES["LeakyReluBackward"] = _elementwise(lambda x, a: 1.0 if x > 0 else float(a["negativeSlope"]))
REFERENCES["HardshrinkBackward"] = _elementwise(lambda x, a: 1.0 if abs(x) > max(float(a["lambd"]), 0.0) else 0.0)
REFERENCES["HardswishBackwardV2"] = _elementwise(lambda x, a: 0.0 if x <= -3 else (1.0 if x >= 3 else x / 3 + 0.5))
REFERENCES["FastGeluBackward"] = _elementwise(lambda x, a: _swish(x, 1.702))
REFERENCES["LogSigmoidBackward"] = _elementwise(lambda x, a: 1 / (1 + math.exp(x)) if x < 700 else 0.0)
REFERENCES["SwishBackward"] = _elementwise(
    lambda x, a: _swish(x, 1.0 if a.get("betaOptional") is None else float(a["betaOptional"]))
)


def _log_softmax_backward(args: Args) -> dict[str, np.ndarray]:
    grad, output, dim = f64(args["gradOutput"]), f64(args["output"]), int(args["dim"])
    return {"out": grad - np.exp(output) * grad.sum(axis=dim, keepdims=True)}


REFERENCES["LogSoftmaxBackward"] = _log_softmax_backward


def _softmax_backward(args: Args) -> dict[str, np.ndarray]:
    grad, output, dim = f64(args["gradOutput"]), f64(args["output"]), int(args["dim"])
    return {"out": grad * output - (grad * output).sum(axis=dim, keepdims=True) * output}


def _glu_backward(args: Args) -> dict[str, np.ndarray]:
    x, dim = f64(args["self"]), int(args["dim"])
    a, b = np.split(x, 2, axis=dim)
    g = f64(args["gradOut"])
    return {"out": np.concatenate([g * sigmoid(b), g * a * sigmoid(b) * sigmoid(-b)], axis=dim)}


def _swi_glu_grad(args: Args) -> dict[str, np.ndarray]:
    x, dim = f64(args["x"]), int(args["dim"])
    a, b = np.split(x, 2, axis=dim)
    g = f64(args["yGrad"])
    swish_grad = sigmoid(a) + a * sigmoid(a) * sigmoid(-a)
    return {"out": np.concatenate([g * b * swish_grad, g * a * sigmoid(a)], axis=dim)}


def _prelu_backward(args: Args) -> dict[str, np.ndarray]:
    x = f64(args["self"])
    g, w = np.broadcast_to(f64(args["gradOutput"]), x.shape), f64(args["weight"])
    channel = np.zeros(x.shape, np.int64) if w.size == 1 else np.indices(x.shape)[1]
    slope = w.reshape(-1)[channel]
    grad_weight = np.zeros(w.size)
    for index in np.ndindex(x.shape):
        if x[index] <= 0:
            grad_weight[channel[index]] += x[index] * g[index]
    return {"gradInput": np.where(x > 0, g, slope * g), "gradWeight": grad_weight.reshape(np.shape(args["weight"]))}


def _ge_glu_backward(args: Args) -> dict[str, np.ndarray]:
    x, dim = f64(args["self"]), int(args["dim"])
    first, second = np.split(x, 2, axis=dim)
    left = bool(args.get("activateLeft", False))
    gate, linear = (first, second) if left else (second, first)
    derivative = np.vectorize(_gelu_tanh if int(args["approximate"]) == 1 else _gelu_exact, otypes=[np.float64])
    g, gelu = f64(args["gradOutput"]), f64(args["gelu"])
    d_gate, d_linear = g * linear * derivative(gate), g * gelu
    return {"gradInput": np.concatenate([d_gate, d_linear] if left else [d_linear, d_gate], axis=dim)}


REFERENCES["PreluBackward"] = _prelu_backward
REFERENCES["GeGluBackward"] = REFERENCES["GeGluV3Backward"] = _ge_glu_backward
REFERENCES["SoftmaxBackward"] = _softmax_backward
REFERENCES["GluBackward"] = _glu_backward
REFERENCES["SwiGluGrad"] = _swi_glu_grad
REFERENCES["Softsign"] = lambda a: {"out": f64(a["self"]) / (1 + np.abs(f64(a["self"])))}
REFERENCES["AddRelu"] = lambda a: {"out": np.maximum(f64(a["self"]) + float(a["alpha"]) * f64(a["other"]), 0.0)}
REFERENCES["InplaceAddRelu"] = lambda a: {
    "selfRef": np.maximum(f64(a["selfRef"]) + float(a["alpha"]) * f64(a["other"]), 0.0)
}


def _loss(per_element: Callable[[np.ndarray, np.ndarray, Args], np.ndarray], out: str = "out") -> Reference:
    def compute(args: Args) -> dict[str, np.ndarray]:
        x, y = np.broadcast_arrays(f64(args["self"]), f64(args["target"]))
        loss = per_element(x, y, args)
        mode = int(args["reduction"])
        return {out: loss if mode == 0 else np.asarray(loss.mean() if mode == 1 else loss.sum())}

    return compute


def _smooth_l1(x: np.ndarray, y: np.ndarray, a: Args) -> np.ndarray:
    beta, d = float(a["beta"]), np.abs(x - y)
    return d if beta == 0 else np.where(d < beta, 0.5 * d**2 / beta, d - 0.5 * beta)


REFERENCES["L1Loss"] = _loss(lambda x, y, a: np.abs(x - y))
REFERENCES["MseLoss"] = REFERENCES["MseLossOut"] = _loss(lambda x, y, a: (x - y) ** 2)
REFERENCES["SmoothL1Loss"] = _loss(_smooth_l1, "result")
REFERENCES["SoftMarginLoss"] = _loss(lambda x, y, a: np.log(1 + np.exp(-y * x)))


def _loss_grad(derivative: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Reference:
    """gradOutput · d loss / d self over the three inputs' broadcast; a mean's gradient over its element count."""

    def compute(args: Args) -> dict[str, np.ndarray]:
        g, x, y = np.broadcast_arrays(f64(args["gradOutput"]), f64(args["self"]), f64(args["target"]))
        out = "gradInput" if "gradInput" in args else "out"
        count = x.size if int(args["reduction"]) == 1 else 1
        return {out: g * derivative(x, y) / count}

    return compute


REFERENCES["L1LossBackward"] = _loss_grad(lambda x, y: np.sign(x - y))
REFERENCES["MseLossBackward"] = _loss_grad(lambda x, y: 2 * (x - y))
REFERENCES["SoftMarginLossBackward"] = _loss_grad(lambda x, y: -y * np.exp(-y * x) / (1 + np.exp(-y * x)))


def _weights(args: Args, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    w, p = args.get("weightOptional"), args.get("posWeightOptional")
    ones = np.ones(shape)
    return (ones if w is None else np.broadcast_to(f64(w), shape)), (
        ones if p is None else np.broadcast_to(f64(p), shape)
    )


def _bce_with_logits(args: Args) -> dict[str, np.ndarray]:
    x, t = f64(args["self"]), f64(args["target"])
    w, p = _weights(args, x.shape)
    loss = -w * (p * t * np.log(sigmoid(x)) + (1 - t) * np.log(1 - sigmoid(x)))
    mode = int(args["reduction"])
    return {"out": loss if mode == 0 else np.asarray(loss.mean() if mode == 1 else loss.sum())}


def _bce_with_logits_backward(args: Args) -> dict[str, np.ndarray]:
    x, t = f64(args["self"]), f64(args["target"])
    g = np.broadcast_to(f64(args["gradOutput"]), x.shape)
    w, p = _weights(args, x.shape)
    # d/dx of -w·[p·t·log σ(x) + (1 - t)·log(1 - σ(x))] = w·[-p·t·(1 - σ) + (1 - t)·σ]
    grad = g * w * (-p * t * (1 - sigmoid(x)) + (1 - t) * sigmoid(x))
    return {"out": grad / (x.size if int(args["reduction"]) == 1 else 1)}


def _kl_div_backward(args: Args) -> dict[str, np.ndarray]:
    x = f64(args["self"])
    g, t = np.broadcast_to(f64(args["gradOutput"]), x.shape), np.broadcast_to(f64(args["target"]), x.shape)
    grad = -(np.exp(t) if args["logTarget"] else t) * g
    mode = int(args["reduction"])
    count = {1: x.size, 3: x.shape[0]}.get(mode, 1)
    return {"out": grad / count}


def _kl_div_target_backward(args: Args) -> dict[str, np.ndarray]:
    t = f64(args["target"])
    g, x = np.broadcast_to(f64(args["gradOutput"]), t.shape), np.broadcast_to(f64(args["self"]), t.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        grad = g * np.exp(t) * (t - x + 1) if args["logTarget"] else g * (np.log(t) - x + 1)
    count = {1: t.size, 3: t.shape[0]}.get(int(args["reduction"]), 1)
    return {"gradTarget": grad / count}


def _smooth_l1_backward(args: Args) -> dict[str, np.ndarray]:
    g, x, y = np.broadcast_arrays(f64(args["gradOut"]), f64(args["self"]), f64(args["target"]))
    beta, d = float(args["beta"]), x - y
    slope = np.array([np.sign(v) if abs(v) >= beta else v / beta for v in d.ravel()]).reshape(d.shape)
    return {"gradInput": g * slope / (d.size if int(args["reduction"]) == 1 else 1)}


def _bce(args: Args) -> dict[str, np.ndarray]:
    x, t = f64(args["self"]), f64(args["target"])
    w = np.ones(x.shape) if args.get("weight") is None else np.broadcast_to(f64(args["weight"]), x.shape)
    with np.errstate(divide="ignore"):
        loss = -w * (t * np.clip(np.log(x), -100, None) + (1 - t) * np.clip(np.log(1 - x), -100, None))
    mode = int(args["reduction"])
    return {"out": loss if mode == 0 else np.asarray(loss.mean() if mode == 1 else loss.sum())}


def _bce_backward(args: Args) -> dict[str, np.ndarray]:
    x = f64(args["self"])
    g, t = np.broadcast_to(f64(args["gradOutput"]), x.shape), np.broadcast_to(f64(args["target"]), x.shape)
    w = args.get("weightOptional")
    weight = np.ones(x.shape) if w is None else np.broadcast_to(f64(w), x.shape)
    grad = g * weight * (x - t) / np.maximum(x * (1 - x), 1e-12)
    return {"out": grad / (x.size if int(args["reduction"]) == 1 else 1)}


def _bce_target_backward(args: Args) -> dict[str, np.ndarray]:
    x = f64(args["self"])
    g = np.broadcast_to(f64(args["gradOutput"]), x.shape)
    w, p = _weights(args, x.shape)
    # d/dt of -w·[p·t·log σ(x) + (1 - t)·log(1 - σ(x))]
    grad = -g * w * (p * np.log(sigmoid(x)) - np.log(1 - sigmoid(x)))
    return {"gradTarget": grad / (x.size if int(args["reduction"]) == 1 else 1)}


def _logit_grad(args: Args) -> dict[str, np.ndarray]:
    x, dy, eps = f64(args["x"]), f64(args["dy"]), float(args["eps"])
    low, high = (0.0, 1.0) if eps < 0 else (eps, 1 - eps)
    outside = np.nan if eps < 0 else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return {"out": np.where((x < low) | (x > high), outside, dy / (x * (1 - x)))}


REFERENCES["BinaryCrossEntropyWithLogitsTargetBackward"] = _bce_target_backward
REFERENCES["LogitGrad"] = _logit_grad


def _softmax_cross_entropy(args: Args) -> dict[str, np.ndarray]:
    x, y = f64(args["features"]), f64(args["labels"])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    softmax = e / e.sum(axis=1, keepdims=True)
    return {"loss": -(y * np.log(softmax)).sum(axis=1), "backprop": softmax - y}


REFERENCES["SoftmaxCrossEntropyWithLogits"] = _softmax_cross_entropy
REFERENCES["KlDivTargetBackward"] = _kl_div_target_backward
REFERENCES["SmoothL1LossBackward"] = _smooth_l1_backward
REFERENCES["BinaryCrossEntropy"] = _bce
REFERENCES["BinaryCrossEntropyBackward"] = _bce_backward
REFERENCES["BinaryCrossEntropyWithLogits"] = _bce_with_logits
REFERENCES["BinaryCrossEntropyWithLogitsBackward"] = _bce_with_logits_backward
REFERENCES["KlDivBackward"] = _kl_div_backward


def _class_axis(x: np.ndarray) -> int:
    return 0 if x.ndim == 1 else 1


def _nll_loss(args: Args) -> dict[str, np.ndarray]:
    x, target, weight = f64(args["self"]), np.asarray(args["target"]).astype(np.int64), f64(args["weight"])
    ignore, mode = int(args["ignoreIndex"]), int(args["reduction"])
    axis = _class_axis(x)
    losses, total = np.zeros(target.shape), 0.0
    for index in np.ndindex(target.shape):
        k = int(target[index])
        if k == ignore:
            continue
        place = (*index[:axis], k, *index[axis:])
        losses[index] = -weight[k] * x[place]
        total += weight[k]
    value = losses if mode == 0 else np.asarray(losses.sum() / total if mode == 1 else losses.sum())
    return {"out": value, "totalWeightOut": np.array([total])}


def _nll_loss_backward(args: Args) -> dict[str, np.ndarray]:
    x, target, weight = f64(args["self"]), np.asarray(args["target"]).astype(np.int64), f64(args["weight"])
    g, total = f64(args["gradOutput"]), float(f64(args["totalWeight"]).reshape(-1)[0])
    ignore, mode = int(args["ignoreIndex"]), int(args["reduction"])
    axis = _class_axis(x)
    grad = np.zeros(x.shape)
    for index in np.ndindex(target.shape):
        k = int(target[index])
        if k == ignore:
            continue
        scale = g[index] if mode == 0 and target.ndim else float(g.reshape(-1)[0])
        grad[(*index[:axis], k, *index[axis:])] = -scale * weight[k] / (total if mode == 1 else 1.0)
    return {"out": grad}


def _cross_entropy_parts(args: Args, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, float]:
    """Per row: the smoothed target distribution's weights a (what multiplies -logProb), its mask; the mode, ε."""
    n, c = logits.shape
    target = np.asarray(args["target"]).astype(np.int64)
    w = np.ones(c) if args.get("weightOptional") is None else f64(args["weightOptional"])
    eps, ignore = float(args["labelSmoothing"]), int(args["ignoreIndex"])
    a, kept = np.zeros((n, c)), target != ignore
    for i in range(n):
        if kept[i]:
            a[i] = eps / c * w
            a[i, target[i]] += (1 - eps) * w[target[i]]
    weight_sum = sum(w[target[i]] for i in range(n) if kept[i])
    return a, kept, np.asarray(weight_sum), args.get("reductionOptional") or "mean", eps


def _cross_entropy(args: Args) -> dict[str, np.ndarray]:
    x = f64(args["input"])
    log_prob = x - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)) - x.max(1, keepdims=True)
    a, _, weight_sum, mode, _ = _cross_entropy_parts(args, x)
    loss = -(a * log_prob).sum(1)
    value = loss if mode == "none" else np.asarray([loss.sum() / weight_sum if mode == "mean" else loss.sum()])
    return {"logProbOut": log_prob, "lossOut": value}


def _cross_entropy_grad(args: Args) -> dict[str, np.ndarray]:
    log_prob = f64(args["logProb"])
    a, _, weight_sum, mode, _ = _cross_entropy_parts(args, log_prob)
    g = f64(args["gradLoss"]).reshape(-1)
    scale = g if mode == "none" else np.full(len(a), g[0] / (weight_sum if mode == "mean" else 1.0))
    return {"out": (np.exp(log_prob) * a.sum(1, keepdims=True) - a) * scale[:, None]}


REFERENCES["CrossEntropyLoss"] = _cross_entropy
REFERENCES["CrossEntropyLossGrad"] = _cross_entropy_grad
REFERENCES["NLLLoss"] = REFERENCES["NLLLoss2d"] = _nll_loss
REFERENCES["NLLLossBackward"] = REFERENCES["NLLLoss2dBackward"] = _nll_loss_backward
