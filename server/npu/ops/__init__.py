"""The aclnn kernels: numpy over views of device memory, one module per operator family.

`plan_kernel(kernel, views, workspace)` plans one revalidated `KernelDesc`: its tensors are strided views of
device memory (fresh ones through a region, or shared ones from a `ViewCache`), and the plan it returns writes
the results through views of the outputs; a user-declared operator (`proto.operators`) is planned by `user`.
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
from server.npu.ops import activation, copy, dump, elementwise, matmul, reduce, user
from server.npu.ops.launch import Kernel, Launch, Plan
from server.npu.ops.views import Region, ViewCache, Views, tensor_view, uncached

KERNELS: Final[dict[str, Kernel]] = {
    **elementwise.KERNELS,
    **activation.KERNELS,
    **matmul.KERNELS,
    **reduce.KERNELS,
    **copy.KERNELS,
}


def plan_kernel(kernel: KernelDesc, views: Views, workspace: np.ndarray | None) -> Plan:
    """The plan of `kernel` (already revalidated) over the memory `views` sees; `workspace` is a uint8 view or
    None. The plan is valid while its views are.

    AclError 561003 for an operator without a kernel, 161002 for a workspace smaller than phase 1 asked.
    """
    plan = KERNELS.get(kernel.op)
    declared = user.lookup(kernel.op) if plan is None else None
    if plan is None and declared is None:
        api = f"aclnn{kernel.op}"
        raise AclError(ACLNN_ERR_INNER_FIND_KERNEL, f"vnpu has no kernel for {api}", api=api)
    have = 0 if workspace is None else workspace.nbytes
    if have < kernel.workspace_size:
        api = f"aclnn{kernel.op}"
        raise AclError(
            ACLNN_ERR_PARAM_INVALID,
            f"the workspace holds {have} bytes; {api} needs {kernel.workspace_size}",
            api,
        )
    launch = Launch(kernel, views, workspace)
    if plan is None:
        assert declared is not None
        made = user.plan(declared, launch)
    else:
        made = plan(launch)
    return dump.wrap(made, kernel, views) if dump.active() else made


def run_kernel(kernel: KernelDesc, region: Region, workspace: np.ndarray | None, *, views: Views | None = None) -> None:
    """Plan and run `kernel` over device memory (fresh views from `region`, or those of `views`), with numpy's
    floating-point warnings silenced."""
    plan = plan_kernel(kernel, uncached(region) if views is None else views, workspace)
    with np.errstate(all="ignore"):
        plan()


__all__ = [
    "KERNELS",
    "Kernel",
    "Launch",
    "Plan",
    "Region",
    "ViewCache",
    "Views",
    "plan_kernel",
    "run_kernel",
    "tensor_view",
    "uncached",
]
