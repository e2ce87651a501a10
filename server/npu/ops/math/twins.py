"""The in-place twins of ops-math's operators (InplaceEqScalar ... InplaceLogicalNot, InplaceLerp, InplaceAddcmul,
InplaceAddcdiv, the in-place clamps and bitwise operators, InplaceXLogY*, InplaceNanToNum, InplaceErfinv) and
ClampMinTensor/ClampMaxTensor.

A twin runs its out-of-place operator's kernel with out = selfRef: every such kernel computes its whole result
before it stores it, so reading and writing selfRef in one launch is safe. The result is cast into selfRef's
dtype (a comparison writes 1/0 into a float selfRef, as torch's `eq_` does). Constraints: the out-of-place
operator's, with out replaced by selfRef (phase 1 requires the broadcast shape to be selfRef's).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from proto.aclnn.twins import TWINS
from server.npu.ops.math import binary, compare, gamma, layout, pointwise, special, unary
from server.npu.ops.nn import activation_params

Array = np.ndarray
Kernel = Callable[..., None]


def twin(name: str, kernel: Kernel, *reads: str, first: str = "selfRef", source: str = "self") -> Kernel:
    """aclnn<name>: `kernel` (whose first tensor is `source` and output `out`) with selfRef read and written."""

    def run(**args: Any) -> None:
        ref = args.pop(first)
        kernel(**{source: ref}, **args, out=ref)

    params = [first, *reads, "workspace"]
    run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
    )
    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"{first} = aclnn{name.removeprefix('Inplace')}({first}, {', '.join(reads)}) in place."
    return run


def clamp_min_tensor(self: Array, clipValueMin: Array, out: Array, workspace: Array | None) -> None:
    """out = max(self, clipValueMin), broadcasting (torch.clamp_min with a tensor; NaN in self stays NaN).

    Constraints (conversion/clip_by_value_v2, aclnnClampMinTensor): self FLOAT16/FLOAT/DOUBLE/BFLOAT16/INT8-64/UINT8,
    clipValueMin those or BOOL; they promote; out the broadcast shape, a dtype the promoted one casts to."""
    layout.clamp_tensor(self, clipValueMin, None, out, workspace)


def clamp_max_tensor(self: Array, max: Array, out: Array, workspace: Array | None) -> None:
    """out = min(self, max), broadcasting (torch.clamp_max with a tensor); as ClampMinTensor."""
    layout.clamp_tensor(self, None, max, out, workspace)


def _same_named(name: str) -> Kernel:
    """The twin of TWINS[name]: its operator's kernel, the other arguments taken by the same names."""
    base, first, source = TWINS[name]
    kernel = OPERATORS[base]
    reads = [p for p in inspect.signature(kernel).parameters if p not in (source, "out", "workspace")]
    return twin(name, kernel, *reads, first=first, source=source)


OPERATORS: dict[str, Kernel] = {
    **unary.FUNCTIONS,
    **binary.FUNCTIONS,
    **pointwise.FUNCTIONS,
    **layout.FUNCTIONS,
    **activation_params.FUNCTIONS,
}
COMPARES = {f"{op}{kind}" for op in ("Eq", "Ne", "Gt", "Ge", "Lt", "Le") for kind in ("Scalar", "Tensor")}
BITWISE = {f"Bitwise{op}{kind}" for op in ("And", "Or", "Xor") for kind in ("Scalar", "Tensor")}
B = binary.FUNCTIONS
FUNCTIONS: dict[str, Kernel] = {
    **{f"Inplace{op}": twin(f"Inplace{op}", compare.FUNCTIONS[op], "other") for op in sorted(COMPARES)},
    "InplaceLogicalAnd": twin("InplaceLogicalAnd", B["LogicalAnd"], "other"),
    "InplaceLogicalOr": twin("InplaceLogicalOr", B["LogicalOr"], "other"),
    "InplaceLogicalNot": twin("InplaceLogicalNot", lambda self, out, workspace: np.copyto(out, self == 0)),
    "InplaceLerp": twin("InplaceLerp", B["Lerp"], "end", "weight"),
    "InplaceAddcmul": twin("InplaceAddcmul", B["Addcmul"], "tensor1", "tensor2", "value"),
    "InplaceAddcdiv": twin("InplaceAddcdiv", B["Addcdiv"], "tensor1", "tensor2", "value"),
    "ClampMinTensor": clamp_min_tensor,
    "ClampMaxTensor": clamp_max_tensor,
    "InplaceClampMinTensor": twin("InplaceClampMinTensor", clamp_min_tensor, "clipValueMin"),
    "InplaceClampMaxTensor": twin("InplaceClampMaxTensor", clamp_max_tensor, "max"),
    "InplaceClampMax": twin("InplaceClampMax", layout.clamp_max, "clipValueMax"),
    **{f"Inplace{op}": twin(f"Inplace{op}", special.FUNCTIONS[op], "other") for op in sorted(BITWISE)},
    "InplaceBitwiseAndTensorOut": twin(
        "InplaceBitwiseAndTensorOut", special.FUNCTIONS["BitwiseAndTensor"], "other", first="self"
    ),
    "InplaceXLogYTensor": twin("InplaceXLogYTensor", special.FUNCTIONS["XLogYTensor"], "other"),
    "InplaceXLogYScalarOther": twin("InplaceXLogYScalarOther", special.FUNCTIONS["XLogYScalarOther"], "other"),
    "InplaceNanToNum": twin("InplaceNanToNum", special.FUNCTIONS["NanToNum"], "nan", "posinf", "neginf"),
    "InplaceErfinv": twin("InplaceErfinv", gamma.FUNCTIONS["Erfinv"]),
    **{name: _same_named(name) for name in TWINS},
}
