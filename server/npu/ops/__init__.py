"""The aclnn kernels: numpy over views of device memory, one module per operator family.

`run_kernel(kernel, region, workspace)` runs one revalidated `KernelDesc`: its tensors are strided views of
device memory obtained through `region` (or shared ones from a `ViewCache`), results are written through views
of the outputs, and numpy's floating-point warnings are silenced (a division by zero gives inf, as on the
device) -- by run_kernel, or once by a caller that runs many kernels under `np.errstate(all="ignore")`.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from proto.aclnn import KernelDesc
from proto.errors import ACLNN_ERR_INNER_FIND_KERNEL, ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops import activation, copy, elementwise, matmul, reduce
from server.npu.ops.launch import Kernel, Launch
from server.npu.ops.views import Region, ViewCache, Views, tensor_view, uncached

KERNELS: Final[dict[str, Kernel]] = {
    **elementwise.KERNELS,
    **activation.KERNELS,
    **matmul.KERNELS,
    **reduce.KERNELS,
    **copy.KERNELS,
}


def run_kernel(
    kernel: KernelDesc,
    region: Region,
    workspace: np.ndarray | None,
    *,
    views: Views | None = None,
    silence: bool = True,
) -> None:
    """Run `kernel` (already revalidated) over device memory; `workspace` is a uint8 view or None. `views` (by
    default fresh ones from `region`) resolves its tensors; `silence=False` where the caller already ignores
    numpy's floating-point warnings (entering `np.errstate` costs more than a small kernel).

    AclError 561003 for an operator without a kernel, 161002 for a workspace smaller than phase 1 asked.
    """
    run = KERNELS.get(kernel.op)
    if run is None:
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
    launch = Launch(kernel, uncached(region) if views is None else views, workspace)
    if not silence:
        run(launch)
        return
    with np.errstate(all="ignore"):
        run(launch)


__all__ = ["KERNELS", "Kernel", "Launch", "Region", "ViewCache", "Views", "run_kernel", "tensor_view", "uncached"]
