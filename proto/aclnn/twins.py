"""The in-place twins whose rule and kernel are their out-of-place operator's (`proto.aclnn.rules.pointwise_more.Twin`,
`server.npu.ops.math.twins`): twin -> (operator, the twin's written tensor, the operator's first tensor). The other
arguments have the same names in both."""

from __future__ import annotations

from typing import Final

_INPUT: Final = ("Acos", "Asinh", "Atan", "Atanh", "Frac")
_SELF: Final = ("Hardsigmoid", "Hardswish", "PowTensorScalar", "PowTensorTensor")
_SELF_REF: Final = (
    "Acosh", "Asin", "Ceil", "Cosh", "Erfc", "Exp2", "Expm1", "Log10", "Log1p", "Log2", "Round", "Sinh", "Tan",
    "Trunc", "Mish", "Selu", "Atan2", "Divs", "FloorDivide", "FloorDivides", "FmodScalar", "FmodTensor",
    "RemainderTensorScalar", "RemainderTensorTensor", "Celu", "Elu", "LeakyRelu", "Hardtanh",
)  # fmt: skip

TWINS: Final[dict[str, tuple[str, str, str]]] = {
    **{f"Inplace{op}": (op, "inputRef", "input") for op in _INPUT},
    **{f"Inplace{op}": (op, "self", "self") for op in _SELF},
    **{f"Inplace{op}": (op, "selfRef", "self") for op in _SELF_REF},
}
