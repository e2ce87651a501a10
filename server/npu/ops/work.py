"""The work of one launch, judged from its description before it runs (the bound: `VNPU_MAX_LAUNCH_ELEMENTS`).

A kernel computes at least one element for each element its tensors view -- a broadcast view counts the elements
it names, not the memory under it -- and a matmul adds the multiply-adds of its product: out's elements × the
inner dimension (numpy also copies a non-dense operand whole before the product).
"""

from __future__ import annotations

import math

from proto.aclnn import KernelDesc


def elements_computed(kernel: KernelDesc) -> tuple[int, str]:
    """(the elements `kernel` computes, how that figure was counted)."""
    viewed = sum(tensor.numel for tensor in kernel.tensors.values() if tensor is not None)
    if kernel.op != "Matmul":
        return viewed, f"the elements its tensors view: {viewed}"
    inner = kernel.tensor("self").view_dims[-1]
    products = math.prod(kernel.tensor("out").view_dims) * inner
    return products + viewed, f"out's elements × the inner dimension {inner}: {products}, plus its tensors' {viewed}"
