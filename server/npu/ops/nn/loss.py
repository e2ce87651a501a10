"""Losses (hicann/ops-nn loss/) and their gradients: L1, MSE, smooth L1, soft margin, binary cross entropy (of
probabilities and of logits), KL divergence (gradients), negative log likelihood over (N, C), (C) and (N, C, H, W),
cross entropy (with label smoothing), softmax cross entropy with soft labels, logit's gradient.

Elementwise parts are computed in float32 (float64 for DOUBLE), broadcasting the inputs; a reduction (mean or sum)
accumulates in float64 and is rounded once into its one-value output. reduction: 0 none, 1 mean, 2 sum
(KlDivBackward: 3 batchmean). A gradient of a mean divides by the number of loss elements.

Constraints are the rules' (`proto/aclnn/rules/loss.py`, from each operator's docs/aclnn<Op>.md): FLOAT, FLOAT16,
BFLOAT16 (L1Loss also INT64); NLL targets INT64/INT32/UINT8 in [0, C) or ignoreIndex (a target out of range is
161002 here, as the device reports it).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.numeric import FLOAT64, store, wide

Array = np.ndarray


def _computed(*arrays: Array) -> list[Array]:
    """The inputs in the dtype they are computed in: float64 if any is DOUBLE, else float32."""
    target = FLOAT64 if any(a.dtype == FLOAT64 for a in arrays) else np.dtype(np.float32)
    return [a.astype(target, copy=False) for a in arrays]


def _reduce(loss: Array, reduction: int, out: Array) -> None:
    """The elementwise loss into out (none), or its mean or sum (accumulated in float64)."""
    if reduction == 0:
        store(out, loss)
        return
    total = loss.astype(np.float64) if loss.dtype.kind == "f" else loss
    with np.errstate(invalid="ignore"):
        value = total.mean() if reduction == 1 else total.sum()
    store(out, np.full(out.shape, value, dtype=np.result_type(value)))


def _scale(reduction: int, count: int) -> float:
    """The factor a gradient of a mean carries (1 for none and sum)."""
    return 1.0 / count if reduction == 1 and count else 1.0


def _elementwise(function: Callable[[Array, Array], Array], doc: str) -> Callable[..., None]:
    """A forward loss over self and target: `function` of the computed inputs, then the reduction."""

    def kernel(self: Array, target: Array, reduction: int, out: Array, workspace: Array | None) -> None:
        x, y = _computed(self, target)
        with np.errstate(over="ignore", invalid="ignore"):
            _reduce(function(x, y), reduction, out)

    kernel.__doc__ = doc
    return kernel


def l1_loss(self: Array, target: Array, reduction: int, out: Array, workspace: Array | None) -> None:
    """|x - y|, reduced; two INT64 inputs stay integral."""
    if self.dtype.kind in "iu" and target.dtype.kind in "iu":
        _reduce(np.abs(self.astype(np.int64) - target.astype(np.int64)), reduction, out)
        return
    _elementwise(lambda x, y: np.abs(x - y), "")(self, target, reduction, out, None)


def _smooth_l1(x: Array, y: Array, beta: float) -> Array:
    d = np.abs(x - y)
    if beta == 0:
        plain: Array = d
        return plain
    b = d.dtype.type(beta)
    smooth: Array = np.where(d < b, 0.5 * d * d / b, d - 0.5 * b)
    return smooth


def smooth_l1_loss(self: Array, target: Array, reduction: int, beta: float, result: Array,
                   workspace: Array | None) -> None:  # fmt: skip
    """0.5·(x - y)²/beta where |x - y| < beta, else |x - y| - 0.5·beta (beta 0: |x - y|), reduced."""
    _elementwise(lambda x, y: _smooth_l1(x, y, beta), "")(self, target, reduction, result, None)


def _gradient(function: Callable[[Array, Array, Array], Array], doc: str) -> Callable[..., None]:
    """A loss gradient written into `out`: `function`(g, x, y) (gradOutput's factor in it), divided by the element
    count for a mean."""

    def kernel(gradOutput: Array, self: Array, target: Array, reduction: int, out: Array,  # noqa: N803
               workspace: Array | None) -> None:  # fmt: skip
        g, x, y = _computed(gradOutput, self, target)
        with np.errstate(over="ignore", invalid="ignore"):
            value = function(g, x, y)
        store(out, value * value.dtype.type(_scale(reduction, out.size)))

    kernel.__doc__ = doc
    return kernel


_L1_GRAD = _gradient(lambda g, x, y: g * np.sign(x - y), "")


def l1_loss_backward(gradOutput: Array, self: Array, target: Array, reduction: int, gradInput: Array,  # noqa: N803
                     workspace: Array | None) -> None:  # fmt: skip
    """gradInput = gradOutput · sign(x - y) (over the element count for a mean)."""
    _L1_GRAD(gradOutput, self, target, reduction, gradInput, workspace)


def _sigmoid(v: Array) -> Array:
    with np.errstate(over="ignore"):
        s: Array = 1 / (1 + np.exp(-v))
    return s


def binary_cross_entropy_with_logits(self: Array, target: Array, weightOptional: Array | None,  # noqa: N803
                                     posWeightOptional: Array | None, reduction: int, out: Array,  # noqa: N803
                                     workspace: Array | None) -> None:  # fmt: skip
    """-w·[p·t·log σ(x) + (1 - t)·log(1 - σ(x))] = w·[(1 - t)·x + (p·t + 1 - t)·softplus(-x)], reduced."""
    x, t = _computed(self, target)
    p = 1 if posWeightOptional is None else wide(posWeightOptional)
    w = 1 if weightOptional is None else wide(weightOptional)
    softplus_neg = np.logaddexp(0, -x)
    loss = w * ((1 - t) * x + ((p - 1) * t + 1) * softplus_neg)
    _reduce(np.broadcast_to(loss, x.shape), reduction, out)


def binary_cross_entropy_with_logits_backward(gradOutput: Array, self: Array, target: Array,  # noqa: N803
                                              weightOptional: Array | None, posWeightOptional: Array | None,  # noqa: N803
                                              reduction: int, out: Array, workspace: Array | None) -> None:  # fmt: skip
    """g·w·[(p·t + 1 - t)·σ(x) - p·t], divided by self's element count for a mean."""
    g, x, t = _computed(gradOutput, self, target)
    p = 1 if posWeightOptional is None else wide(posWeightOptional)
    w = 1 if weightOptional is None else wide(weightOptional)
    value = g * w * (((p - 1) * t + 1) * _sigmoid(x) - p * t)
    store(out, value * x.dtype.type(_scale(reduction, x.size)))


def binary_cross_entropy_with_logits_target_backward(gradOutput: Array, self: Array, target: Array,  # noqa: N803
                                                     weightOptional: Array | None, posWeightOptional: Array | None,  # noqa: N803
                                                     reduction: int, gradTarget: Array,  # noqa: N803
                                                     workspace: Array | None) -> None:  # fmt: skip
    """d/dtarget of the logits loss: g·w·[(p - 1)·softplus(-x) - x], over self's element count for a mean."""
    g, x = _computed(gradOutput, self)
    p = 1 if posWeightOptional is None else wide(posWeightOptional)
    w = 1 if weightOptional is None else wide(weightOptional)
    value = g * w * ((p - 1) * np.logaddexp(0, -x) - x)
    store(gradTarget, np.broadcast_to(value * x.dtype.type(_scale(reduction, x.size)), gradTarget.shape))


def softmax_cross_entropy_with_logits(features: Array, labels: Array, loss: Array, backprop: Array,
                                      workspace: Array | None) -> None:  # fmt: skip
    """Per row of (N, C): loss = -Σ labels·log softmax(features), backprop = softmax(features) - labels."""
    x, y = _computed(features, labels)
    shifted = x - x.max(axis=1, keepdims=True)
    log_prob = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    store(loss, -(y * log_prob).astype(np.float64).sum(axis=1))
    store(backprop, np.exp(log_prob) - y)


def logit_grad(x: Array, dy: Array, eps: float, out: Array, workspace: Array | None) -> None:
    """dx = dy / (x·(1 - x)); eps >= 0: 0 outside [eps, 1 - eps]; eps < 0: NaN outside [0, 1]."""
    v, g = _computed(x, dy)
    with np.errstate(divide="ignore", invalid="ignore"):
        low, high, outside = (0.0, 1.0, np.nan) if eps < 0 else (eps, 1 - eps, 0.0)
        store(out, np.where((v < low) | (v > high), outside, g / (v * (1 - v))))


def kl_div_backward(gradOutput: Array, self: Array, target: Array, reduction: int, logTarget: bool,  # noqa: N803
                    out: Array, workspace: Array | None) -> None:  # fmt: skip
    """d/dx of target·(log target - x): -target·g (logTarget: -exp(target)·g); mean divides by the element
    count, batchmean (3) by self's first dim."""
    if reduction not in (0, 1, 2, 3):
        raise invalid("KlDivBackward", "reduction", f"is {reduction}; it must be 0, 1, 2 or 3")
    g, x, t = _computed(gradOutput, self, target)
    with np.errstate(over="ignore"):
        value = -(np.exp(t) if logTarget else t) * g
    count = self.size if reduction == 1 else (self.shape[0] if reduction == 3 and self.ndim else 1)
    store(out, np.broadcast_to(value / x.dtype.type(count or 1), out.shape))


def kl_div_target_backward(gradOutput: Array, self: Array, target: Array, reduction: int, logTarget: bool,  # noqa: N803
                           gradTarget: Array, workspace: Array | None) -> None:  # noqa: N803  # fmt: skip
    """d/dtarget of target·(log target - x): g·(log t - x + 1) (logTarget: g·exp(t)·(t - x + 1)); a mean divides by
    the element count, batchmean (3) by the first dim."""
    g, x, t = _computed(gradOutput, self, target)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        value = g * (np.exp(t) * (t - x + 1) if logTarget else np.log(t) - x + 1)
    count = gradTarget.size if reduction == 1 else (gradTarget.shape[0] if reduction == 3 and gradTarget.ndim else 1)
    store(gradTarget, np.broadcast_to(value / value.dtype.type(count or 1), gradTarget.shape))


def smooth_l1_loss_backward(gradOut: Array, self: Array, target: Array, reduction: int, beta: float,  # noqa: N803
                            gradInput: Array, workspace: Array | None) -> None:  # noqa: N803  # fmt: skip
    """g·(x - y)/beta where |x - y| < beta, else g·sign(x - y) (beta 0: the sign), over N for a mean."""
    g, x, y = _computed(gradOut, self, target)
    d = x - y
    slope = np.sign(d) if beta == 0 else np.where(np.abs(d) < beta, d / d.dtype.type(beta), np.sign(d))
    store(gradInput, g * slope * g.dtype.type(_scale(reduction, gradInput.size)))


LOG_FLOOR = -100.0
"""torch's floor of each log in the binary cross entropy (log 0 would be -inf)."""


def binary_cross_entropy(self: Array, target: Array, weight: Array | None, reduction: int, out: Array,
                         workspace: Array | None) -> None:  # fmt: skip
    """-w·[t·log x + (1 - t)·log(1 - x)] over probabilities x, each log floored at -100, reduced."""
    x, t = _computed(self, target)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.maximum(np.log(x), LOG_FLOOR), np.maximum(np.log1p(-x), LOG_FLOOR)
    loss = -(t * logs[0] + (1 - t) * logs[1]) * (1 if weight is None else wide(weight))
    _reduce(np.broadcast_to(loss, x.shape), reduction, out)


def binary_cross_entropy_backward(gradOutput: Array, self: Array, target: Array, weightOptional: Array | None,  # noqa: N803
                                  reduction: int, out: Array, workspace: Array | None) -> None:  # fmt: skip
    """g·w·(x - t) / max(x·(1 - x), 1e-12), over self's element count for a mean."""
    g, x, t = _computed(gradOutput, self, target)
    w = 1 if weightOptional is None else wide(weightOptional)
    value = g * w * (x - t) / np.maximum(x * (1 - x), x.dtype.type(1e-12))
    store(out, np.broadcast_to(value * x.dtype.type(_scale(reduction, x.size)), out.shape))


def _cross_entropy_weights(target: Array, weightOptional: Array | None, ignoreIndex: int, classes: int, op: str,  # noqa: N803
                           ) -> tuple[Array, Array, Array, Array]:  # fmt: skip
    """The class weights (C,), the targets made safe to index, the kept mask and each row's weight (0 ignored)."""
    w = np.ones(classes) if weightOptional is None else weightOptional.astype(np.float64)
    picks = target.astype(np.int64)
    kept = picks != ignoreIndex
    if (kept & ((picks < 0) | (picks >= classes))).any():
        raise invalid(op, "target", f"holds a class outside [0, {classes}) that is not ignoreIndex")
    safe = np.where(kept, picks, 0)
    return w, safe, kept, np.where(kept, w[safe], 0.0)


def cross_entropy_loss(input: Array, target: Array, weightOptional: Array | None, reductionOptional: str | None,  # noqa: N803
                       ignoreIndex: int, labelSmoothing: float, lseSquareScaleForZloss: float, returnZloss: bool,  # noqa: N803
                       lossOut: Array, logProbOut: Array, zlossOut: Array, lseForZlossOut: Array,  # noqa: N803
                       workspace: Array | None) -> None:  # fmt: skip
    """logProb = x - logsumexp(x) per row; loss_n = (1 - ε)·(-w[t]·logProb[n, t]) + ε/C·(-Σ_c w_c·logProb[n, c]),
    0 where t is ignoreIndex; mean divides Σ loss by Σ w[t] over kept rows. zlossOut and lseForZlossOut are not
    written (zloss is not supported, as on CANN)."""
    x = input.astype(np.float64)
    n, c = x.shape
    w, safe, kept, row_w = _cross_entropy_weights(target, weightOptional, ignoreIndex, c, "CrossEntropyLoss")
    shifted = x - x.max(axis=1, keepdims=True)
    log_prob = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    store(logProbOut, log_prob)
    nll = -row_w * log_prob[np.arange(n), safe]
    smooth = np.where(kept, -(log_prob * w).sum(axis=1), 0.0)
    loss = (1 - labelSmoothing) * nll + labelSmoothing / c * smooth
    mode = reductionOptional or "mean"
    if mode == "none":
        store(lossOut, loss)
        return
    with np.errstate(invalid="ignore", divide="ignore"):
        value = loss.sum() / row_w.sum() if mode == "mean" else loss.sum()
    store(lossOut, np.full(lossOut.shape, value))


def cross_entropy_loss_grad(gradLoss: Array, logProb: Array, target: Array, weightOptional: Array | None,  # noqa: N803
                            gradZlossOptional: Array | None, lseForZlossOptional: Array | None,  # noqa: N803
                            reductionOptional: str | None, ignoreIndex: int, labelSmoothing: float,  # noqa: N803
                            lseSquareScaleForZloss: float, out: Array, workspace: Array | None) -> None:  # noqa: N803  # fmt: skip
    """d loss / d x from the forward's logProb: p·Σ_c a_c - a, with a = (1 - ε)·w[t]·onehot(t) + ε/C·w per kept
    row, scaled by gradLoss (mean: over Σ w[t]); p = exp(logProb). The zloss inputs are not used."""
    lp = logProb.astype(np.float64)
    n, c = lp.shape
    w, safe, kept, row_w = _cross_entropy_weights(target, weightOptional, ignoreIndex, c, "CrossEntropyLossGrad")
    mode = reductionOptional or "mean"
    g = gradLoss.astype(np.float64).reshape(-1) if mode == "none" else np.full(n, float(gradLoss.reshape(-1)[0]))
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = g * kept / (row_w.sum() if mode == "mean" else 1.0)
    a = np.zeros((n, c))
    a[np.arange(n), safe] = (1 - labelSmoothing) * row_w
    a = (a + labelSmoothing / c * w[None, :] * kept[:, None]) * scale[:, None]
    store(out, np.exp(lp) * a.sum(axis=1, keepdims=True) - a)


def _nll_rows(self: Array, target: Array, weight: Array, ignoreIndex: int, op: str) -> tuple[Array, Array, Array]:  # noqa: N803
    """self as (M, C) rows (classes last), the targets (M,) and each row's weight (0 where ignored)."""
    classes = self.shape[1] if self.ndim in (2, 4) else self.shape[0]
    rows = np.moveaxis(self, 1, -1).reshape(-1, classes) if self.ndim == 4 else self.reshape(-1, classes)
    picks = target.astype(np.int64).reshape(-1)
    kept = picks != ignoreIndex
    bad = kept & ((picks < 0) | (picks >= classes))
    if bad.any():
        raise invalid(op, "target", f"holds {int(picks[bad][0])}; it must lie in [0, {classes}) or be ignoreIndex")
    safe = np.where(kept, picks, 0)
    w = np.where(kept, wide(weight)[safe], 0)
    return rows, safe, w


def _nll_loss(op: str) -> Callable[..., None]:
    def kernel(self: Array, target: Array, weight: Array, reduction: int, ignoreIndex: int, out: Array,  # noqa: N803
               totalWeightOut: Array, workspace: Array | None) -> None:  # noqa: N803  # fmt: skip
        """l = -weight[t]·self[n, t] (0 where t is ignoreIndex); mean divides Σ l by Σ weight[t]."""
        rows, picks, w = _nll_rows(self, target, weight, ignoreIndex, op)
        loss = -w * wide(rows)[np.arange(len(picks)), picks]
        total = w.astype(np.float64).sum()
        store(totalWeightOut, np.full(totalWeightOut.shape, total))
        if reduction == 0:
            store(out, loss.reshape(out.shape))
            return
        summed = loss.astype(np.float64).sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            store(out, np.full(out.shape, summed / total if reduction == 1 else summed))

    return kernel


def _nll_backward(op: str) -> Callable[..., None]:
    def kernel(gradOutput: Array, self: Array, target: Array, weight: Array, reduction: int,  # noqa: N803
               ignoreIndex: int, totalWeight: Array, out: Array, workspace: Array | None) -> None:  # noqa: N803  # fmt: skip
        """out is 0 but at each row's target: -g·weight[t] (mean: over totalWeight)."""
        rows, picks, w = _nll_rows(self, target, weight, ignoreIndex, op)
        g = wide(gradOutput).reshape(-1) if reduction == 0 and target.ndim else wide(gradOutput).reshape(())
        value = -g * w
        if reduction == 1:
            with np.errstate(invalid="ignore", divide="ignore"):
                value = value / wide(totalWeight).reshape(())
        grads = np.zeros(rows.shape, value.dtype)
        grads[np.arange(len(picks)), picks] = value
        if self.ndim == 4:
            n, c, h, w4 = self.shape
            store(out, np.moveaxis(grads.reshape(n, h, w4, c), -1, 1))
        else:
            store(out, grads.reshape(out.shape))

    return kernel


FUNCTIONS: dict[str, Callable[..., None]] = {
    "L1Loss": l1_loss,
    "L1LossBackward": l1_loss_backward,
    "MseLoss": _elementwise(lambda x, y: (x - y) ** 2, "(x - y)², reduced."),
    "MseLossOut": _elementwise(lambda x, y: (x - y) ** 2, "(x - y)², reduced (MseLoss's other name)."),
    "MseLossBackward": _gradient(lambda g, x, y: 2 * (x - y) * g, "2·(x - y)·gradOutput (over N for a mean)."),
    "SmoothL1Loss": smooth_l1_loss,
    "SoftMarginLoss": _elementwise(lambda x, y: np.logaddexp(0, -y * x), "log(1 + exp(-y·x)), reduced."),
    "SoftMarginLossBackward": _gradient(
        lambda g, x, y: -y * _sigmoid(-y * x) * g, "-y·σ(-y·x)·gradOutput (over N for a mean)."
    ),
    "BinaryCrossEntropyWithLogits": binary_cross_entropy_with_logits,
    "BinaryCrossEntropyWithLogitsBackward": binary_cross_entropy_with_logits_backward,
    "KlDivBackward": kl_div_backward,
    "BinaryCrossEntropyWithLogitsTargetBackward": binary_cross_entropy_with_logits_target_backward,
    "LogitGrad": logit_grad,
    "SoftmaxCrossEntropyWithLogits": softmax_cross_entropy_with_logits,
    "KlDivTargetBackward": kl_div_target_backward,
    "SmoothL1LossBackward": smooth_l1_loss_backward,
    "BinaryCrossEntropy": binary_cross_entropy,
    "BinaryCrossEntropyBackward": binary_cross_entropy_backward,
    "CrossEntropyLoss": cross_entropy_loss,
    "CrossEntropyLossGrad": cross_entropy_loss_grad,
    "NLLLoss": _nll_loss("NLLLoss"),
    "NLLLoss2d": _nll_loss("NLLLoss2d"),
    "NLLLossBackward": _nll_backward("NLLLossBackward"),
    "NLLLoss2dBackward": _nll_backward("NLLLoss2dBackward"),
}
