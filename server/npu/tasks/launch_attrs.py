"""A kernel launch's attributes (aclrtLaunchKernelAttr): which a task keeps, how, and the Ascend 910B defaults and
bounds aclmdlRIKernelTaskGetAttribute reads back."""

from __future__ import annotations

from typing import Any

from proto.constants import aclrtLaunchKernelAttrId
from proto.enumtext import not_member
from proto.errors import (
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)

NEVER = 2**64 - 1  # the task's timeout when a launch attribute set it to 0 (never time out)


# Ascend 910B timeouts (the runtime's kernel credits: 254 x 4294967.296 us): default (ms, rounded up), maximum
DEFAULT_TIMEOUT_US = 1_090_922 * 1000


MAX_TIMEOUT_US = 1_090_921_694


A = aclrtLaunchKernelAttrId
BAD = ACL_ERROR_RT_PARAM_INVALID
UNSUPPORTED_ATTRS: tuple[int, ...] = (
    A.ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE,
    A.ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET,
)
UNSUPPORTED_ATTRS += (A.ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH,)


def launch_attrs(cfg: Any) -> dict[int, int]:
    """aclrtLaunchKernelCfg's attributes as the task keeps them; None (NULL) means the defaults."""
    if cfg is None:
        return {}
    attrs = cfg.get("attrs") if isinstance(cfg, dict) else None
    if attrs is None:
        raise AclError(BAD, "kernelTaskParams.cfg->attrs is NULL (pass cfg NULL for the default attributes)")
    kept: dict[int, int] = {}
    for attr in attrs:
        ident, value = attr.get("id"), attr.get("value") or 0
        if ident == A.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE:
            kept[ident] = value & 0xFF
        elif ident == A.ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE:
            kept[ident] = value & 0xFFFFFFFF
        elif ident == A.ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP:
            kept[ident] = 1 if value & 0xFF == 1 else 0
        elif ident in (A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US):
            us = (value & 0xFFFF) * 1_000_000 if ident == A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT else value
            kept[A.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US] = us or NEVER
        elif ident in (*UNSUPPORTED_ATTRS, A.ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING):
            continue  # accepted, not kept: nothing reads them back
        else:
            raise AclError(BAD, f"kernelTaskParams.cfg: {not_member('attribute id', ident, A)}")
    return kept
