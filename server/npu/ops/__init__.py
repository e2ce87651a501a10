"""The aclnn kernels: numpy over views of device memory, one module per operator family.

`plan_kernel(kernel, views, workspace)` plans one revalidated `KernelDesc`: its tensors are strided views of
device memory (fresh ones through a region, or shared ones from a `ViewCache`), and the plan it returns writes
the results through views of the outputs. Three kinds of kernel, looked up in this order: vnpu's planners of its
first operators (`KERNELS`: elementwise, activation, matmul, reduce, copy), the function kernels of the per-area
packages (`FUNCTIONS`: math, nn, transformer, mirroring CANN's repositories) and the user-declared operators'
(`proto.operators`); the last two are planned by `function`, which calls them by C argument name.
`run_kernel` plans and runs at once; a `PlanCache` keeps the plans of the descriptions a device runs again and
again. numpy's floating-point warnings are silenced (a division by zero gives inf, as on the device) -- by
run_kernel, or once by a caller that runs many plans under `np.errstate(all="ignore")` (entering it costs more
than a small kernel).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from proto.aclnn import KernelDesc
from proto.errors import ACLNN_ERR_INNER_FIND_KERNEL, ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops import activation, copy, dump, elementwise, function, math, matmul, nn, reduce, transformer, user
from server.npu.ops.launch import Kernel, Launch, Plan
from server.npu.ops.views import Region, ViewCache, Views, tensor_view, uncached

KERNELS: Final[dict[str, Kernel]] = {
    **elementwise.KERNELS,
    **activation.KERNELS,
    **matmul.KERNELS,
    **reduce.KERNELS,
    **copy.KERNELS,
}
"""vnpu's planners (an operator's plan made from a `Launch`), by operator name."""

AREAS: Final = {"math": math, "nn": nn, "transformer": transformer}
FUNCTIONS: Final[dict[str, tuple[function.Function, str]]] = {
    name: (kernel, kernel.__module__) for package in AREAS.values() for name, kernel in package.FUNCTIONS.items()
}
"""The function kernels of the area packages by operator name, with their modules (named when one fails)."""


def implemented() -> frozenset[str]:
    """The operators vnpu has a kernel for (user-declared ones aside)."""
    return frozenset(KERNELS) | frozenset(FUNCTIONS)


def plan_kernel(kernel: KernelDesc, views: Views, workspace: np.ndarray | None) -> Plan:
    """The plan of `kernel` (already revalidated) over the memory `views` sees; `workspace` is a uint8 view or
    None. The plan is valid while its views are.

    AclError 561003 for an operator without a kernel, 161002 for a workspace smaller than phase 1 asked.
    """
    plan = KERNELS.get(kernel.op)
    found = FUNCTIONS.get(kernel.op) if plan is None else None
    declared = user.lookup(kernel.op) if plan is None and found is None else None
    if plan is None and found is None and declared is None:
        api = f"aclnn{kernel.op}"
        raise AclError(ACLNN_ERR_INNER_FIND_KERNEL, f"vnpu does not implement {api} yet", api=api)
    have = 0 if workspace is None else workspace.nbytes
    if have < kernel.workspace_size:
        api = f"aclnn{kernel.op}"
        raise AclError(
            ACLNN_ERR_PARAM_INVALID,
            f"the workspace holds {have} bytes; {api} needs {kernel.workspace_size}",
            api,
        )
    if found is not None:
        made = function.plan(found[0], kernel, views, workspace, found[1])
    elif declared is not None:
        made = function.plan(declared.kernel, kernel, views, workspace, declared.module)
    else:
        assert plan is not None
        made = plan(Launch(kernel, views, workspace))
    return dump.wrap(made, kernel, views) if dump.active() else made


def run_kernel(kernel: KernelDesc, region: Region, workspace: np.ndarray | None, *, views: Views | None = None) -> None:
    """Plan and run `kernel` over device memory (fresh views from `region`, or those of `views`), with numpy's
    floating-point warnings silenced."""
    plan = plan_kernel(kernel, uncached(region) if views is None else views, workspace)
    with np.errstate(all="ignore"):
        plan()


__all__ = [
    "FUNCTIONS",
    "KERNELS",
    "Kernel",
    "Launch",
    "Plan",
    "Region",
    "ViewCache",
    "Views",
    "implemented",
    "plan_kernel",
    "run_kernel",
    "tensor_view",
    "uncached",
]
