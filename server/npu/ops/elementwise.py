"""Elementwise kernels: Add/Sub/Mul/Div and their scalar and in-place forms, Relu, Abs, Neg, Exp.

Each computes in the promoted dtype (fp16/bf16 in float32, as the NPU vector unit does) and rounds once into
the output through numpy's `out=` (`casting="unsafe"`: phase 1 already checked that the cast is allowed; see
`Launch.into` for an fp16/bf16 result written to an out of another dtype). Integer arithmetic wraps, as
torch's. numpy copies an input that overlaps the output before writing, so an aliased in-place call
(InplaceAdd with selfRef and other sharing memory) gives torch's result. alpha · other is a temporary the
size of other (it cannot go into out, which may be self).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from proto.aclnn import aclScalar
from server.npu.ops.launch import Kernel, Launch, Plan


def binary(ufunc: np.ufunc) -> Kernel:
    """out = self ∘ (alpha · other), other a tensor or a scalar; alpha only where the operator has it."""

    def plan(launch: Launch) -> Plan:
        decl, dtype = launch.kernel.decl, launch.compute
        first, other = launch.read(decl.args[0].name), launch.operand("other", dtype)
        alpha = launch.kernel.args.get("alpha")
        if not isinstance(alpha, aclScalar) or alpha.value == 1:  # other · 1 == other: skip it
            return launch.ufunc(ufunc, (first, other), decl.outputs[0])
        scale = launch.scalar("alpha", dtype)

        def scaled(out: np.ndarray) -> None:
            scaled_other = np.multiply(other, scale, dtype=dtype, casting="unsafe")
            ufunc(first, scaled_other, out=out, dtype=dtype, casting="unsafe")

        return launch.into(decl.outputs[0], scaled)

    return plan


def unary(ufunc: np.ufunc) -> Kernel:
    """out = f(self)."""
    return lambda launch: launch.ufunc(ufunc, (launch.read("self"),), "out")


def relu(launch: Launch) -> Plan:
    """out = max(self, 0); NaN stays NaN."""
    return launch.ufunc(np.maximum, (launch.read("self"), np.zeros((), launch.compute)), "out")


KERNELS: Final[dict[str, Kernel]] = {
    "Add": binary(np.add),
    "Adds": binary(np.add),
    "Sub": binary(np.subtract),
    "Subs": binary(np.subtract),
    "Mul": binary(np.multiply),
    "Muls": binary(np.multiply),
    "Div": binary(np.true_divide),
    "InplaceAdd": binary(np.add),
    "InplaceMul": binary(np.multiply),
    "Relu": relu,
    "Abs": unary(np.absolute),
    "Neg": unary(np.negative),
    "Exp": unary(np.exp),
}
