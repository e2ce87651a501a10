"""Activation gradients of ops-nn (activation/*_grad: the gradient of an activation at its input, given the
gradient at its output and the forward input or result), the GLU family's and Prelu's gradients, and the small
activations beside them: Softsign, AddRelu, InplaceAddRelu.

Most gradients take the same shape of arguments, (gradOutput, x, attributes..., gradInput): `Gradient` holds what
differs between them -- the dtypes each documentation lists, whether the two inputs may broadcast or must have one
shape, whether they must share a dtype or promote, and whether the written tensor takes the result's dtype exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import DT, FLOATS, NUMERIC
from proto.aclnn.entry import Row, nullable
from proto.aclnn.host import aclScalar
from proto.aclnn.rules.base import (
    Checked,
    NoWorkspace,
    broadcast_all,
    check_out,
    int_attr,
    promote_all,
    require_dtype,
    require_in,
    require_range,
    require_rank,
    require_same_dtype,
    require_shape,
    scalar,
    shape_str,
    tensor,
    text,
    wrap_dim,
)
from proto.aclnn.rules.elementwise import Binary
from proto.constants import aclDataType

HALF_FLOATS: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16})
"""FLOAT, FLOAT16, BFLOAT16: the dtypes most gradients' documentation lists."""
SELU_DTYPES: Final = HALF_FLOATS | {DT.ACL_INT32, DT.ACL_INT8}
THRESHOLD_DTYPES: Final = HALF_FLOATS | {DT.ACL_INT32, DT.ACL_INT8, DT.ACL_UINT8, DT.ACL_INT64}
ADD_RELU_DTYPES: Final = NUMERIC - {DT.ACL_DOUBLE}
GELU_MODES: Final = ("none", "tanh")


@dataclass(frozen=True, eq=False)
class Gradient(NoWorkspace):
    """gradOutput and the forward tensor `x` → the written tensor `out`, elementwise.

    `broadcast`: the inputs broadcast together (else `x` must have gradOutput's shape); `same`: the inputs share one
    dtype (else they promote); `promoted`: only the promoted dtype must be among `allowed` (GeluBackward takes an
    integral gradOutput beside a float self); `exact`: out has the result's dtype (else one it casts to); `extra`:
    the operator's own checks of its attributes.
    """

    x: str = "self"
    out: str = "gradInput"
    grad: str = "gradOutput"
    allowed: frozenset[aclDataType] = HALF_FLOATS
    broadcast: bool = True
    same: bool = False
    promoted: bool = False
    exact: bool = False
    grad_allowed: frozenset[aclDataType] | None = None
    extra: Callable[[Args], None] | None = None
    doc: str = ""

    def result_dtype(self, args: Args) -> aclDataType:
        grad, x = tensor(args, self.grad), tensor(args, self.x)
        return promote_all((self.grad, grad), (self.x, x))

    def check(self, args: Args) -> None:
        grad, x = tensor(args, self.grad), tensor(args, self.x)
        if not self.promoted:
            require_dtype(self.grad, grad.data_type, self.grad_allowed or self.allowed)
            require_dtype(self.x, x.data_type, self.allowed)
        if self.same:
            require_same_dtype(self.x, x, self.grad, grad)
        dtype = self.result_dtype(args)
        if self.promoted and dtype not in self.allowed:
            raise OpArgError(
                f"{self.grad} ({dtypes.name(grad.data_type)}) and {self.x} ({dtypes.name(x.data_type)}) promote to "
                f"{dtypes.name(dtype)}; supported: {dtypes.names(self.allowed)}"
            )
        for name, t in ((self.grad, grad), (self.x, x)):
            require_rank(name, t, 0, 8)
        if self.broadcast:
            shape = broadcast_all((self.grad, grad), (self.x, x))
        else:
            require_shape(self.x, x, grad.view_dims, f"{self.grad}'s shape")
            shape = grad.view_dims
        if self.extra is not None:
            self.extra(args)
        check_out(args, self.out, dtype, shape, self.allowed if not self.promoted else FLOATS, exact=self.exact)


def _number_scalars(*names: str) -> Callable[[Args], None]:
    """Each named scalar (absent optional ones skipped) holds a number, not a bool."""

    def checks(args: Args) -> None:
        for name in names:
            value = args[name]
            if isinstance(value, aclScalar) and value.data_type == DT.ACL_BOOL:
                raise OpArgError(f"{name} is ACL_BOOL; it must be a number")

    return checks


def _elu(args: Args) -> None:
    _number_scalars("alpha", "scale", "inputScale")(args)
    if args["isResult"] is True and not float(scalar(args, "alpha").value) >= 0:
        raise OpArgError(f"alpha is {scalar(args, 'alpha').value}; it must be >= 0 when isResult is true")


def _shrink(args: Args) -> None:
    _number_scalars("lambda")(args)
    require_range("lambda", float(scalar(args, "lambda").value), 0)


def _gelu_mode(args: Args) -> None:
    require_in("approximate", text(args, "approximate"), GELU_MODES)


def _log_softmax(args: Args) -> None:
    grad = tensor(args, "gradOutput")
    require_rank("gradOutput", grad, 1, 8)
    wrap_dim("dim", int_attr(args, "dim"), len(grad.view_dims))


def _leaky_relu(args: Args) -> None:
    _number_scalars("negativeSlope")(args)
    if args["selfIsResult"] is True and not float(scalar(args, "negativeSlope").value) >= 0:
        raise OpArgError(f"negativeSlope is {scalar(args, 'negativeSlope').value}; it must be >= 0 when selfIsResult")


def _buffer(args: Args) -> None:
    require_shape("buffer", tensor(args, "buffer"), tensor(args, "self").view_dims, "self's shape")
    require_same_dtype("buffer", tensor(args, "buffer"), "self", tensor(args, "self"))


def _halved_grad(grad_name: str, x_name: str, allowed: frozenset[aclDataType]) -> Checked:
    """GluBackward, SwiGluGrad: x split in two along dim; the gradient has x's shape with dim halved, out x's."""

    def checks(args: Args) -> None:
        grad, x = tensor(args, grad_name), tensor(args, x_name)
        require_dtype(x_name, x.data_type, allowed)
        require_same_dtype(grad_name, grad, x_name, x)
        require_rank(x_name, x, 1, 8)
        d = wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
        if x.view_dims[d] % 2:
            raise OpArgError(f"{x_name} has {x.view_dims[d]} elements along dim {d}; it must be even")
        half = tuple(n // 2 if i == d else n for i, n in enumerate(x.view_dims))
        require_shape(grad_name, grad, half, f"{x_name}'s shape with dim {d} halved")
        check_out(args, "out", x.data_type, x.view_dims, exact=True)

    return Checked(checks, doc="activation/glu_grad, activation/swi_glu_grad")


def _prelu_backward(args: Args) -> None:
    grad, x, w = tensor(args, "gradOutput"), tensor(args, "self"), tensor(args, "weight")
    require_dtype("self", x.data_type, HALF_FLOATS)
    for name, t in (("gradOutput", grad), ("weight", w)):
        require_same_dtype(name, t, "self", x)
        require_rank(name, t, 0, 8)
    if broadcast_all(("self", x), ("gradOutput", grad)) != x.view_dims:
        raise OpArgError(f"gradOutput has shape {shape_str(grad.view_dims)}; it must broadcast to self's")
    channels = x.view_dims[1] if len(x.view_dims) >= 2 else 1
    if w.numel not in (1, channels):
        raise OpArgError(f"weight has shape {shape_str(w.view_dims)}; it must hold 1 or {channels} (self's channels)")
    check_out(args, "gradInput", x.data_type, x.view_dims, exact=True)
    check_out(args, "gradWeight", x.data_type, w.view_dims, exact=True)


def _ge_glu_backward(args: Args) -> None:
    grad, x, gelu = tensor(args, "gradOutput"), tensor(args, "self"), tensor(args, "gelu")
    require_dtype("self", x.data_type, HALF_FLOATS)
    require_rank("self", x, 1, 8)
    require_in("approximate", int_attr(args, "approximate"), (0, 1))
    d = wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
    if x.view_dims[d] % 2:
        raise OpArgError(f"self has {x.view_dims[d]} elements along dim {d}; it must be even")
    half = tuple(n // 2 if i == d else n for i, n in enumerate(x.view_dims))
    for name, t in (("gradOutput", grad), ("gelu", gelu)):
        require_same_dtype(name, t, "self", x)
        require_shape(name, t, half, f"self's shape with dim {d} halved")
    check_out(args, "gradInput", x.data_type, x.view_dims, exact=True)


def _softsign(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, HALF_FLOATS)
    require_rank("self", x, 0, 8)
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


TABLE: Final[dict[str, Row]] = {
    "TanhBackward": Gradient(x="output", allowed=FLOATS, same=True, exact=True, doc="math/tanh_grad"),
    "SigmoidBackward": Gradient(x="output", allowed=FLOATS, doc="activation/sigmoid_grad"),
    "SiluBackward": Gradient(same=True, exact=True, doc="activation/silu_grad"),
    "GeluBackward": Gradient(promoted=True, doc="activation/gelu_grad"),
    "GeluBackwardV2": Gradient(exact=True, extra=_gelu_mode, doc="activation/gelu_grad_v2"),
    "SoftplusBackward": Gradient(
        allowed=NUMERIC | {DT.ACL_BOOL},
        grad_allowed=FLOATS,
        extra=_number_scalars("beta", "threshold"),
        doc="activation/softplus_v2_grad",
    ),
    "HardswishBackward": Gradient(out="out", broadcast=False, same=True, exact=True, doc="activation/hard_swish_grad"),
    "HardsigmoidBackward": Gradient(out="out", broadcast=False, doc="activation/hard_sigmoid_grad"),
    "HardtanhBackward": Gradient(
        out="out", broadcast=False, same=True, extra=_number_scalars("min", "max"), doc="activation/hardtanh_grad"
    ),
    "EluBackward": Gradient(x="selfOrResult", broadcast=False, same=True, extra=_elu, doc="activation/elu_grad_v2"),
    "SeluBackward": Gradient(
        x="result", allowed=SELU_DTYPES, broadcast=False, same=True, exact=True, doc="activation/selu_grad"
    ),
    "MishBackward": Gradient(doc="activation/mish_grad"),
    "SoftshrinkBackward": Gradient(same=True, exact=True, extra=_shrink, doc="activation/soft_shrink_grad"),
    "ThresholdBackward": Gradient(
        out="out",
        allowed=THRESHOLD_DTYPES,
        same=True,
        exact=True,
        extra=_number_scalars("threshold"),
        doc="activation/threshold_grad_v2_d",
    ),
    "SwishBackward": nullable(
        Gradient(broadcast=False, same=True, exact=True, extra=_number_scalars("betaOptional")), "betaOptional"
    ),
    "LogSoftmaxBackward": Gradient(
        x="output", out="out", broadcast=False, same=True, extra=_log_softmax, doc="activation/log_softmax_grad"
    ),
    "SoftmaxBackward": Gradient(
        x="output", out="out", broadcast=False, same=True, extra=_log_softmax, doc="activation/softmax_grad"
    ),
    "LeakyReluBackward": Gradient(out="out", allowed=FLOATS, extra=_leaky_relu, doc="activation/leaky_relu_grad"),
    "HardshrinkBackward": Gradient(same=True, exact=True, extra=_number_scalars("lambd"), doc="hard_shrink_grad"),
    "HardswishBackwardV2": Gradient(out="out", broadcast=False, same=True, exact=True, doc="hard_swish_grad_v2"),
    "FastGeluBackward": Gradient(broadcast=False, same=True, exact=True, doc="activation/fast_gelu_grad"),
    "LogSigmoidBackward": Gradient(broadcast=False, same=True, exact=True, extra=_buffer, doc="logsigmoid_grad"),
    "GluBackward": _halved_grad("gradOut", "self", FLOATS),
    "SwiGluGrad": _halved_grad("yGrad", "x", HALF_FLOATS),
    "PreluBackward": Checked(_prelu_backward, doc="activation/p_relu_grad_update"),
    "GeGluBackward": Checked(_ge_glu_backward, doc="activation/ge_glu_grad_v2"),
    "GeGluV3Backward": Checked(_ge_glu_backward, doc="activation/ge_glu_grad_v2"),
    "Softsign": Checked(_softsign, doc="experimental/activation/softsign"),
    "AddRelu": Binary(allowed=ADD_RELU_DTYPES),
    "InplaceAddRelu": Binary(first="selfRef", out="selfRef", allowed=ADD_RELU_DTYPES),
}
