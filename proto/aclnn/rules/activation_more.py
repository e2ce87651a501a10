"""More of ops-nn's elementwise activations: FastGelu, Heaviside, LogSigmoid, Threshold (and in place), Shrink, and
the experimental HardsigmoidV2 (and in place), FastGeluV2, FusedBiasLeakyRelu. Each row is checked as its
documentation (`activation/<op>/docs/aclnn<Op>.md`) says."""

from __future__ import annotations

from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import DT, INTS
from proto.aclnn.entry import Row
from proto.aclnn.rules.base import (
    Checked,
    broadcast_all,
    check_out,
    require_dtype,
    require_same_dtype,
    scalar,
    shape_str,
    tensor,
)

HALVES: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16})
THRESHOLD: Final = HALVES | INTS
SHRINK: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16})


def _same(args: Args) -> None:
    """FastGelu, LogSigmoid: self FLOAT/FLOAT16/BFLOAT16, out its dtype and shape."""
    x = tensor(args, "self")
    require_dtype("self", x.data_type, HALVES)
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


def _heaviside(args: Args) -> None:
    x, values = tensor(args, "input"), tensor(args, "values")
    require_dtype("input", x.data_type, HALVES)
    require_same_dtype("values", values, "input", x)
    check_out(args, "out", x.data_type, broadcast_all(("input", x), ("values", values)), exact=True)


def _threshold(args: Args) -> None:
    first = "self" if "self" in args else "selfRef"
    x = tensor(args, first)
    require_dtype(first, x.data_type, THRESHOLD)
    dtype = x.data_type
    for name in ("threshold", "value"):
        value = scalar(args, name)
        joined = dtypes.promote_with_scalar(dtype, value.data_type)
        if joined is None or value.data_type == DT.ACL_BOOL:
            raise OpArgError(f"{name} has dtype {dtypes.name(value.data_type)}, which does not promote with {first}'s "
                             f"{dtypes.name(x.data_type)}")  # fmt: skip
        dtype = joined
    check_out(args, "out" if first == "self" else first, dtype, x.view_dims, THRESHOLD)


def _shrink(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, SHRINK)
    lambd = scalar(args, "lambd")
    if not float(lambd.value) >= 0:
        raise OpArgError(f"lambd is {lambd.value}; it must be >= 0")
    check_out(args, "out", x.data_type, x.view_dims, SHRINK)


def _hardsigmoid_v2(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, HALVES | {DT.ACL_INT32})
    if "out" in args:
        check_out(args, "out", x.data_type, x.view_dims, exact=True)


def _fast_gelu_v2(args: Args) -> None:
    x = tensor(args, "x")
    require_dtype("x", x.data_type, HALVES)
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


def _fused_bias_leaky_relu(args: Args) -> None:
    x, bias = tensor(args, "x"), tensor(args, "bias")
    require_dtype("x", x.data_type, SHRINK)
    require_same_dtype("bias", bias, "x", x)
    if bias.view_dims != x.view_dims:
        raise OpArgError(f"bias has shape {shape_str(bias.view_dims)}; it must be x's {shape_str(x.view_dims)} "
                         "(no broadcast)")  # fmt: skip
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


TABLE: Final[dict[str, Row]] = {
    "FastGelu": Checked(_same, doc="ops-nn activation/fast_gelu, aclnnFastGelu"),
    "LogSigmoid": Checked(_same, doc="ops-nn activation/log_sigmoid, aclnnLogSigmoid"),
    "LogSigmoidForward": Checked(_same, doc="ops-nn activation/log_sigmoid, aclnnLogSigmoidForward (buffer unused)"),
    "Heaviside": Checked(_heaviside, doc="ops-nn activation/heaviside, aclnnHeaviside"),
    "Threshold": Checked(_threshold, doc="ops-nn activation/threshold, aclnnThreshold"),
    "InplaceThreshold": Checked(_threshold, doc="ops-nn activation/threshold, aclnnInplaceThreshold"),
    "Shrink": Checked(_shrink, doc="ops-nn activation/shrink, aclnnShrink"),
    "HardsigmoidV2": Checked(_hardsigmoid_v2, doc="ops-nn experimental/activation/hard_sigmoid_v2"),
    "InplaceHardsigmoidV2": Checked(_hardsigmoid_v2, doc="ops-nn experimental/activation/hard_sigmoid_v2"),
    "FastGeluV2": Checked(_fast_gelu_v2, doc="ops-nn experimental/activation/fast_gelu_v2"),
    "FusedBiasLeakyRelu": Checked(_fused_bias_leaky_relu, doc="ops-nn experimental/activation/fused_bias_leaky_relu"),
}
