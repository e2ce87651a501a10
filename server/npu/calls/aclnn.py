"""aclnn phase 2: `aclnnXxx(workspace, workspaceSize, executor, stream)` launches one kernel.

Phase 1 ran on the host (`proto.aclnn`) and produced an executor holding a KernelDesc. A remote client sends
the KernelDesc; an in-process caller may pass the aclOpExecutor itself, which is then consumed here exactly as
the client would (single use unless repeatable). The device never trusts the description: it runs the
operator's declaration over it again, checks that every tensor and the workspace lie inside live device memory
of the stream's device, and queues a KernelTask. Errors are aclnn statuses (161001/161002), as the real
phase-2 call returns. One method per operator, named `aclnn<Op>`, is generated from the declarations (a
user-declared operator's, `proto.operators`, on first use).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from proto.aclnn import OPS, KernelDesc, aclOpExecutor, consume
from proto.aclnn.extents import resolving
from proto.aclnn.phase1 import get_workspace_size
from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclError
from server.npu.area import Area, acl_call
from server.npu.process import launch


class AclnnCalls(Area):
    def phase2(self, api: str) -> Callable[..., None]:
        """`aclnn<Op>(workspace, workspaceSize, executor, stream)` of any declared operator (`proto.aclnn.OPS`: vnpu's
        and the user-declared ones, `proto.operators`), resolved by name through the registry."""
        return functools.partial(_phase2(api), self)

    @acl_call
    def vnpuWorkspaceSize(self, op: str, args: dict[str, Any]) -> int:  # noqa: N802
        """Phase 1 of `op` over its arguments' wire form, for a client without the rules (the native toolkit): the
        same declaration runs, so the same status and message come back, naming the phase-1 call."""
        decl = OPS.get(op)
        if decl is None:
            raise AclError(ACLNN_ERR_PARAM_INVALID, f"unknown operator {op!r}", "vnpuWorkspaceSize")
        try:
            with resolving(lambda ptr: launch.block_in_context(self.ctx, ptr)):  # a tensor past its block is named
                described = KernelDesc.from_wire({"op": op, "args": args, "workspace_size": 0})
                size, _ = get_workspace_size(decl, described.args)
        except AclError as error:
            error.api = decl.ws_name
            raise
        return size

    @acl_call
    def launch_kernel(
        self,
        api: str,
        workspace: int | None,
        workspace_size: int,
        executor: KernelDesc | aclOpExecutor | None,
        stream: int | None,
    ) -> None:
        """The phase-2 call `api` (e.g. "aclnnAdd") with the kernel its executor describes."""
        try:
            kernel = consume(executor, api) if isinstance(executor, aclOpExecutor) else executor
            self._launch(api, workspace or 0, workspace_size, kernel, stream)
        except AclError as error:
            error.api = api
            raise

    def _launch(
        self, api: str, workspace: int, workspace_size: int, executor: KernelDesc | None, stream: int | None
    ) -> None:
        if executor is None:
            raise AclError(ACLNN_ERR_PARAM_NULLPTR, "executor is NULL")
        target = self.ctx.stream(stream)
        self.ctx.issue(target, launch.kernel_task(self.ctx, api, workspace, workspace_size, executor, target.device))


def _phase2(api: str) -> Callable[..., None]:
    def launch(
        self: AclnnCalls,
        workspace: int | None,
        workspace_size: int,
        executor: KernelDesc | aclOpExecutor | None,
        stream: int | None,
    ) -> None:
        self.launch_kernel(api, workspace, workspace_size, executor, stream)

    launch.__name__ = launch.__qualname__ = api
    launch.__doc__ = f"{api}(workspace, workspaceSize, executor, stream): phase 2, queues the kernel on the stream."
    return launch
