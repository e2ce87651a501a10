"""aclOpExecutor: what phase 1 returns and phase 2 consumes -- one frozen kernel description (`KernelDesc`), single-use
unless made repeatable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from proto.aclnn.host import check_handle, invalid
from proto.errors import ACLNN_SUCCESS

if TYPE_CHECKING:
    from proto.aclnn.kernel import KernelDesc


@dataclass(eq=False)
class aclOpExecutor:  # noqa: N801
    """aclOpExecutor: what phase 1 returns and phase 2 consumes, holding one frozen kernel description.

    Single-use: phase 2 consumes it, unless `aclSetAclOpExecutorRepeatable` was called right after phase 1;
    a repeatable one lives until `aclDestroyAclOpExecutor`.
    """

    kernel: KernelDesc
    repeatable: bool = False
    consumed: bool = False
    destroyed: bool = False


def _live_executor(api: str, executor: aclOpExecutor | None) -> aclOpExecutor:
    check_handle(api, "executor", executor, aclOpExecutor)
    assert isinstance(executor, aclOpExecutor)
    op = f"aclnn{executor.kernel.op}"
    if executor.destroyed:
        raise invalid(api, f"the executor of {op} was already destroyed by aclDestroyAclOpExecutor")
    if executor.consumed and not executor.repeatable:
        raise invalid(
            api,
            f"the executor of {op} was released by its phase-2 call: executors are single-use unless "
            "aclSetAclOpExecutorRepeatable is called right after phase 1",
        )
    return executor


def aclSetAclOpExecutorRepeatable(executor: aclOpExecutor | None) -> int:  # noqa: N802
    """aclSetAclOpExecutorRepeatable: keep `executor` until aclDestroyAclOpExecutor; call it after phase 1."""
    live = _live_executor("aclSetAclOpExecutorRepeatable", executor)
    live.repeatable = True
    return ACLNN_SUCCESS


def aclDestroyAclOpExecutor(executor: aclOpExecutor | None) -> int:  # noqa: N802
    """aclDestroyAclOpExecutor: free an executor phase 2 has not released (repeatable, or never launched)."""
    live = _live_executor("aclDestroyAclOpExecutor", executor)
    live.destroyed = True
    return ACLNN_SUCCESS


def consume(executor: aclOpExecutor | None, api: str) -> KernelDesc:
    """Phase 2 on the host: the kernel that the phase-2 call `api` (e.g. "aclnnAdd") launches.

    Refuses a destroyed executor, a single-use executor already launched, and an executor of another operator
    (AclError 161002; a None executor is 161001). Marks the executor consumed unless it is repeatable.
    """
    live = _live_executor(api, executor)
    op = f"aclnn{live.kernel.op}"
    if api != op:
        raise invalid(api, f"the executor was created by {op}GetWorkspaceSize, not {api}GetWorkspaceSize")
    live.consumed = True
    return live.kernel
