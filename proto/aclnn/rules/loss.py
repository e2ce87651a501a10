"""Losses of ops-nn (loss/*) and their gradients: L1, MSE, smooth L1, soft margin, binary cross entropy (of
probabilities and of logits), KL divergence, negative log likelihood (1-D/2-D and the 4-D "2d" form), cross entropy,
softmax cross entropy with soft labels, logit's gradient.

reduction is 0 (none: the elementwise loss, the inputs' broadcast shape), 1 (mean) or 2 (sum) -- KlDivBackward also
3 (batchmean). A reduced loss is one value: a 0-D out (some operators' documentation says [1]; both are taken where
it does). A gradient has the forward input's shape.
"""

from __future__ import annotations

from collections.abc import Callable
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
    broadcast_all,
    broadcast_shapes,
    check_out,
    int_attr,
    number,
    opt_tensor,
    promote_all,
    require_dtype,
    require_in,
    require_range,
    require_rank,
    require_same_dtype,
    require_shape,
    shape_str,
    tensor,
    text,
)
from proto.constants import aclDataType

HALF_FLOATS: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16})
L1_DTYPES: Final = HALF_FLOATS | {DT.ACL_INT64}
TARGET_INDICES: Final = frozenset({DT.ACL_INT64, DT.ACL_UINT8, DT.ACL_INT32})
REDUCTIONS: Final = (0, 1, 2)
ONE_VALUE: Final = ((), (1,))


def reduction(args: Args, allowed: tuple[int, ...] = REDUCTIONS) -> int:
    value = int_attr(args, "reduction")
    require_in("reduction", value, allowed)
    return value


def check_one_value(args: Args, name: str, dtype: aclDataType, shapes: tuple[tuple[int, ...], ...]) -> None:
    """The written tensor `name` holds one reduced value: a shape among `shapes` (the first named when not)."""
    have = tensor(args, name).view_dims
    check_out(args, name, dtype, have if have in shapes else shapes[0])


@dataclass(frozen=True, eq=False)
class Loss(NoWorkspace):
    """(gradOutput,) self, target → out: an elementwise loss over the inputs' broadcast, or its gradient.

    `grad`: the gradient form (gradOutput first; out the broadcast shape whatever the reduction); `same`: every input
    has self's dtype (else they promote); `reduced`: the out shapes a reduced forward loss takes; `extra`: the
    operator's own checks.
    """

    out: str = "out"
    grad: bool = False
    grad_name: str = "gradOutput"
    allowed: frozenset[aclDataType] = HALF_FLOATS
    same: bool = False
    reduced: tuple[tuple[int, ...], ...] = ((),)
    extra: Callable[[Args], None] | None = None

    def _named(self, args: Args) -> list[tuple[str, aclTensor]]:
        names = (self.grad_name, "self", "target") if self.grad else ("self", "target")
        return [(name, tensor(args, name)) for name in names]

    def result_dtype(self, args: Args) -> aclDataType:
        return promote_all(*self._named(args))

    def check(self, args: Args) -> None:
        mode = reduction(args)
        named = self._named(args)
        first = tensor(args, "self")
        for name, t in named:
            require_dtype(name, t.data_type, self.allowed)
            require_rank(name, t, 0 if name == self.grad_name else 1, 8)
            if self.same:
                require_same_dtype(name, t, "self", first)
        dtype = self.result_dtype(args)
        shape = broadcast_all(*named)
        if self.extra is not None:
            self.extra(args)
        if mode == 0 or self.grad:
            check_out(args, self.out, dtype, shape)
        else:
            check_one_value(args, self.out, dtype, self.reduced)


def _l1(args: Args) -> None:
    mode = int_attr(args, "reduction")
    a, b = tensor(args, "self").data_type, tensor(args, "target").data_type
    if mode == 1 and not (dtypes.is_float(a) or dtypes.is_float(b)):
        raise OpArgError("self and target are both ACL_INT64; a mean needs one of them to be a float")
    if mode == 0 and not dtypes.is_float(a) and dtypes.is_float(b):
        raise OpArgError(f"target has dtype {dtypes.name(b)}; with an integral self and reduction 0 it must be too")


def _beta(args: Args) -> None:
    require_range("beta", number(args, "beta"), 0)


def _kl_div(args: Args) -> None:
    x = tensor(args, "self")
    reduction(args, (0, 1, 2, 3))
    for name in ("gradOutput", "self", "target"):
        require_dtype(name, tensor(args, name).data_type, HALF_FLOATS)
        require_rank(name, tensor(args, name), 0 if name == "gradOutput" else 1, 8)
    shape = broadcast_all(("self", x), ("target", tensor(args, "target")), ("gradOutput", tensor(args, "gradOutput")))
    if shape != x.view_dims:
        raise OpArgError(f"gradOutput and target broadcast with self to {shape_str(shape)}; it must be self's shape")
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


def _kl_div_target(args: Args) -> None:
    target = tensor(args, "target")
    reduction(args, (0, 1, 2, 3))
    for name in ("gradOutput", "self", "target"):
        require_dtype(name, tensor(args, name).data_type, HALF_FLOATS)
        require_rank(name, tensor(args, name), 0 if name == "gradOutput" else 1, 8)
    named = (("target", target), ("self", tensor(args, "self")), ("gradOutput", tensor(args, "gradOutput")))
    shape = broadcast_all(*named)
    if shape != target.view_dims:
        raise OpArgError(f"gradOutput and self broadcast with target to {shape_str(shape)}; it must be target's shape")
    check_out(args, "gradTarget", target.data_type, target.view_dims, exact=True)


def _bce_probabilities(args: Args) -> None:
    x, target = tensor(args, "self"), tensor(args, "target")
    require_dtype("self", x.data_type, HALF_FLOATS)
    require_rank("self", x, 1, 8)
    require_same_dtype("target", target, "self", x)
    require_shape("target", target, x.view_dims, "self's shape")
    _bce_weights(args, x, ("weight",))
    if reduction(args) == 0:
        check_out(args, "out", x.data_type, x.view_dims)
    else:
        check_one_value(args, "out", x.data_type, ONE_VALUE)


def _bce_probabilities_backward(args: Args) -> None:
    x = tensor(args, "self")
    reduction(args)
    for name in ("gradOutput", "self", "target"):
        require_dtype(name, tensor(args, name).data_type, HALF_FLOATS)
        require_rank(name, tensor(args, name), 0, 8)
    for name in ("gradOutput", "target"):
        t = tensor(args, name)
        if broadcast_shapes(t.view_dims, x.view_dims) != x.view_dims:
            raise OpArgError(f"{name} has shape {shape_str(t.view_dims)}; it must broadcast to self's")
    named = [(n, tensor(args, n)) for n in ("gradOutput", "self", "target")]
    w = opt_tensor(args, "weightOptional")
    if w is not None:
        require_dtype("weightOptional", w.data_type, HALF_FLOATS)
        named.append(("weightOptional", w))
        if broadcast_shapes(w.view_dims, x.view_dims) != x.view_dims:
            raise OpArgError(f"weightOptional has shape {shape_str(w.view_dims)}; it must broadcast to self's")
    check_out(args, "out", promote_all(*named), x.view_dims)


def _bce_target_backward(args: Args) -> None:
    grad, x, target = tensor(args, "gradOutput"), tensor(args, "self"), tensor(args, "target")
    reduction(args)
    for name, t in (("gradOutput", grad), ("self", x), ("target", target)):
        require_dtype(name, t.data_type, HALF_FLOATS)
        require_rank(name, t, 1, 8)
    require_shape("target", target, x.view_dims, "self's shape")
    if broadcast_shapes(grad.view_dims, x.view_dims) != x.view_dims:
        raise OpArgError(f"gradOutput has shape {shape_str(grad.view_dims)}; it must broadcast to self's")
    named = [("gradOutput", grad), ("self", x), ("target", target)]
    for name in ("weightOptional", "posWeightOptional"):
        w = opt_tensor(args, name)
        if w is not None:
            require_dtype(name, w.data_type, HALF_FLOATS)
            if broadcast_shapes(w.view_dims, x.view_dims) != x.view_dims:
                raise OpArgError(f"{name} has shape {shape_str(w.view_dims)}; it must broadcast to self's")
            named.append((name, w))
    check_out(args, "gradTarget", promote_all(*named), x.view_dims)


def _softmax_cross_entropy(args: Args) -> None:
    x, labels = tensor(args, "features"), tensor(args, "labels")
    require_dtype("features", x.data_type, HALF_FLOATS)
    require_rank("features", x, 2)
    require_same_dtype("labels", labels, "features", x)
    require_shape("labels", labels, x.view_dims, "features' shape")
    check_out(args, "loss", x.data_type, x.view_dims[:1], exact=True)
    check_out(args, "backprop", x.data_type, x.view_dims, exact=True)


def _logit_grad(args: Args) -> None:
    x, dy = tensor(args, "x"), tensor(args, "dy")
    require_dtype("x", x.data_type, HALF_FLOATS)
    require_rank("x", x, 0, 8)
    require_same_dtype("dy", dy, "x", x)
    require_shape("dy", dy, x.view_dims, "x's shape")
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


def _bce_weights(args: Args, x: aclTensor, names: tuple[str, ...] = ("weightOptional", "posWeightOptional")) -> None:
    for name in names:
        w = opt_tensor(args, name)
        if w is None:
            continue
        require_same_dtype(name, w, "self", x)
        if broadcast_shapes(w.view_dims, x.view_dims) != x.view_dims:
            raise OpArgError(f"{name} has shape {shape_str(w.view_dims)}; it must broadcast to self's")


def _bce(args: Args) -> None:
    x, target = tensor(args, "self"), tensor(args, "target")
    require_dtype("self", x.data_type, HALF_FLOATS)
    require_rank("self", x, 1, 8)
    require_same_dtype("target", target, "self", x)
    require_shape("target", target, x.view_dims, "self's shape")
    _bce_weights(args, x)
    if reduction(args) == 0:
        check_out(args, "out", x.data_type, x.view_dims)
    else:
        check_one_value(args, "out", x.data_type, ONE_VALUE)


def _bce_backward(args: Args) -> None:
    grad, x, target = tensor(args, "gradOutput"), tensor(args, "self"), tensor(args, "target")
    reduction(args)
    require_dtype("self", x.data_type, HALF_FLOATS)
    require_rank("self", x, 1, 8)
    for name, t in (("gradOutput", grad), ("target", target)):
        require_same_dtype(name, t, "self", x)
    require_shape("target", target, x.view_dims, "self's shape")
    if broadcast_shapes(grad.view_dims, x.view_dims) != x.view_dims:
        raise OpArgError(f"gradOutput has shape {shape_str(grad.view_dims)}; it must broadcast to self's")
    _bce_weights(args, x)
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


def _nll_common(args: Args, spatial: bool) -> tuple[aclTensor, aclTensor, int]:
    """self (N, C) or (C) [spatial: (N, C, H, W)], target (N) or () [(N, H, W)], weight (C): self, target, C."""
    x, target, weight = tensor(args, "self"), tensor(args, "target"), tensor(args, "weight")
    require_dtype("self", x.data_type, HALF_FLOATS)
    require_dtype("target", target.data_type, TARGET_INDICES)
    require_same_dtype("weight", weight, "self", x)
    if spatial:
        require_rank("self", x, 4)
        n, c, h, w = x.view_dims
        require_shape("target", target, (n, h, w), "self's dims 0, 2 and 3")
    else:
        require_rank("self", x, 1, 2)
        c = x.view_dims[-1]
        require_shape("target", target, x.view_dims[:1] if len(x.view_dims) == 2 else (), "self's batch")
    require_shape("weight", weight, (c,), "self's classes")
    reduction(args)
    return x, target, c


def _nll_loss(spatial: bool) -> Checked:
    def checks(args: Args) -> None:
        x, target, _ = _nll_common(args, spatial)
        if int_attr(args, "reduction") == 0 and target.view_dims:
            check_out(args, "out", x.data_type, target.view_dims)
        else:
            check_one_value(args, "out", x.data_type, ONE_VALUE)
        check_one_value(args, "totalWeightOut", x.data_type, ((1,), ()))

    return Checked(checks, doc="loss/nll_loss, aclnn_nll_loss.h, aclnn_nll_loss2d.h")


def _nll_backward(spatial: bool) -> Checked:
    def checks(args: Args) -> None:
        x, target, _ = _nll_common(args, spatial)
        grad, total = tensor(args, "gradOutput"), tensor(args, "totalWeight")
        for name, t in (("gradOutput", grad), ("totalWeight", total)):
            require_same_dtype(name, t, "self", x)
        if total.numel != 1:
            raise OpArgError(f"totalWeight has shape {shape_str(total.view_dims)}; it must hold one value")
        if int_attr(args, "reduction") == 0 and target.view_dims:
            require_shape("gradOutput", grad, target.view_dims, "target's shape, reduction 0")
        elif grad.numel != 1 or len(grad.view_dims) > 1:
            raise OpArgError(f"gradOutput has shape {shape_str(grad.view_dims)}; it must hold one value")
        check_out(args, "out", x.data_type, x.view_dims, exact=True)

    return Checked(checks, doc="loss/nll_loss_grad, aclnn_nll_loss_backward.h, aclnn_nll_loss2d_backward.h")


CE_REDUCTIONS: Final = ("mean", "sum", "none")


def _cross_entropy_common(args: Args, logits: str, targets: frozenset[aclDataType]) -> tuple[aclTensor, str]:
    """logits (N, C) with C > 0, target (N), weightOptional (C) FLOAT, reduction and labelSmoothing in range (161002;
    CANN's documentation lists its shape faults as 561002, found when it tiles)."""
    x, target = tensor(args, logits), tensor(args, "target")
    require_dtype(logits, x.data_type, HALF_FLOATS)
    require_dtype("target", target.data_type, targets)
    if len(x.view_dims) != 2 or x.view_dims[1] == 0:
        raise OpArgError(f"{logits} has shape {shape_str(x.view_dims)}; it must be (N, C) with C > 0")
    n, c = x.view_dims
    if target.view_dims != (n,):
        raise OpArgError(f"target has shape {shape_str(target.view_dims)}; it must be [{n}] ({logits}'s N)")
    w = opt_tensor(args, "weightOptional")
    if w is not None:
        require_dtype("weightOptional", w.data_type, frozenset({DT.ACL_FLOAT}))
        if w.view_dims != (c,):
            raise OpArgError(f"weightOptional has shape {shape_str(w.view_dims)}; it must be [{c}] (C)")
    mode = text(args, "reductionOptional") or "mean"
    if mode not in CE_REDUCTIONS:
        raise OpArgError(f"reductionOptional is {mode!r}; it must be one of 'mean', 'sum', 'none'")
    require_range("labelSmoothing", number(args, "labelSmoothing"), 0.0, 1.0)
    return x, mode


def _cross_entropy(args: Args) -> None:
    x, mode = _cross_entropy_common(args, "input", frozenset({DT.ACL_INT32, DT.ACL_INT64}))
    check_out(args, "logProbOut", x.data_type, x.view_dims, exact=True)
    if mode == "none":
        check_out(args, "lossOut", x.data_type, x.view_dims[:1], exact=True)
    else:
        have = tensor(args, "lossOut").view_dims
        check_out(args, "lossOut", x.data_type, have if have in ONE_VALUE else (1,), exact=True)
    for name in ("zlossOut", "lseForZlossOut"):  # taken, not computed (zloss is not supported, as on CANN)
        require_dtype(name, tensor(args, name).data_type, HALF_FLOATS)


def _cross_entropy_grad(args: Args) -> None:
    x, mode = _cross_entropy_common(args, "logProb", frozenset({DT.ACL_INT64}))
    grad = tensor(args, "gradLoss")
    require_same_dtype("gradLoss", grad, "logProb", x)
    if mode == "none":
        require_shape("gradLoss", grad, x.view_dims[:1], "logProb's N, reduction none")
    elif grad.numel != 1:
        raise OpArgError(f"gradLoss has shape {shape_str(grad.view_dims)}; it must hold one value")
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


TABLE: Final[dict[str, Row]] = {
    "L1Loss": Loss(allowed=L1_DTYPES, extra=_l1),
    "L1LossBackward": Loss(out="gradInput", grad=True),
    "MseLoss": Loss(),
    "MseLossOut": Loss(),
    "MseLossBackward": Loss(grad=True, same=True),
    "SmoothL1Loss": Loss(out="result", reduced=ONE_VALUE, extra=_beta),
    "SoftMarginLoss": Loss(reduced=ONE_VALUE),
    "SoftMarginLossBackward": Loss(grad=True),
    "BinaryCrossEntropyWithLogits": nullable(Checked(_bce), "weightOptional", "posWeightOptional"),
    "BinaryCrossEntropyWithLogitsBackward": nullable(Checked(_bce_backward), "weightOptional", "posWeightOptional"),
    "KlDivBackward": Checked(_kl_div, doc="loss/kl_div_loss_grad"),
    "BinaryCrossEntropyWithLogitsTargetBackward": nullable(
        Checked(_bce_target_backward, doc="activation/log_sigmoid"), "weightOptional", "posWeightOptional"
    ),
    "LogitGrad": Checked(_logit_grad, doc="loss/logit_grad"),
    "SoftmaxCrossEntropyWithLogits": Checked(
        _softmax_cross_entropy, doc="activation/softmax_cross_entropy_with_logits"
    ),
    "KlDivTargetBackward": Checked(_kl_div_target, doc="loss/kl_div_target_loss_grad"),
    "SmoothL1LossBackward": Loss(out="gradInput", grad=True, grad_name="gradOut", extra=_beta),
    "BinaryCrossEntropy": nullable(Checked(_bce_probabilities, doc="loss/binary_cross_entropy"), "weight"),
    "BinaryCrossEntropyBackward": nullable(Checked(_bce_probabilities_backward), "weightOptional"),
    "CrossEntropyLoss": Checked(_cross_entropy, doc="loss/cross_entropy_loss"),
    "CrossEntropyLossGrad": Checked(_cross_entropy_grad, doc="loss/cross_entropy_loss_grad"),
    "NLLLoss": _nll_loss(spatial=False),
    "NLLLoss2d": _nll_loss(spatial=True),
    "NLLLossBackward": _nll_backward(spatial=False),
    "NLLLoss2dBackward": _nll_backward(spatial=True),
}
