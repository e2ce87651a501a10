"""Runtime parameters: the system parameters (aclrtSetSysParamOpt for the process, aclrtCtxSetSysParamOpt for
the current ACL context) and the operator execution timeout (aclrtSetOpExecuteTimeOut and its ms / µs forms).

As in the runtime: the settable options are ACL_OPT_DETERMINISTIC, ACL_OPT_ENABLE_DEBUG_KERNEL and
ACL_OPT_STRONG_CONSISTENCY (others 100000); a process parameter reads 0 until set, a context parameter has no
default (ACL_ERROR_RT_SYSPARAMOPT_NOT_SET). vnpu's kernels are deterministic numpy functions whatever the
options say, and none is stopped by the execution timeout (it is kept, and its V2 form answers the timeout it
took, which vnpu does not round)."""

from __future__ import annotations

from proto.constants import aclSysParamOpt
from proto.enumtext import not_member
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, AclError
from server.npu.area import Area, acl_call

SETTABLE = frozenset(
    {
        aclSysParamOpt.ACL_OPT_DETERMINISTIC,
        aclSysParamOpt.ACL_OPT_ENABLE_DEBUG_KERNEL,
        aclSysParamOpt.ACL_OPT_STRONG_CONSISTENCY,
    }
)
US_PER_S = 1_000_000


def _option(opt: int) -> int:
    if opt not in SETTABLE:
        taken = not_member("opt", opt, aclSysParamOpt, {int(o) for o in SETTABLE})
        raise AclError(ACL_ERROR_INVALID_PARAM, taken)
    return opt


class ParamCalls(Area):
    @acl_call
    def aclrtSetSysParamOpt(self, opt: int, value: int) -> None:
        self.ctx.sys_params[_option(opt)] = value

    @acl_call
    def aclrtGetSysParamOpt(self, opt: int) -> int:
        return self.ctx.sys_params.get(_option(opt), 0)

    @acl_call
    def aclrtCtxSetSysParamOpt(self, opt: int, value: int) -> None:
        self.ctx.acl_context().sys_params[_option(opt)] = value

    @acl_call
    def aclrtCtxGetSysParamOpt(self, opt: int) -> int:
        current = self.ctx.acl_context()
        found = current.sys_params.get(_option(opt))
        if found is None:
            name = aclSysParamOpt(opt).name
            raise AclError(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, f"{name} is not set in {current} (it has no default)")
        return found

    @acl_call
    def aclrtSetOpExecuteTimeOut(self, timeout: int) -> None:
        """`timeout` in s (0: the default)."""
        self.ctx.op_execute_timeout_us = timeout * US_PER_S

    @acl_call
    def aclrtSetOpExecuteTimeOutWithMs(self, timeout: int) -> None:
        """`timeout` in ms (0: the default)."""
        self.ctx.op_execute_timeout_us = timeout * 1000

    @acl_call
    def aclrtSetOpExecuteTimeOutV2(self, timeout: int) -> int:
        """`timeout` in µs (0: the default); answers the timeout taken, in µs."""
        self.ctx.op_execute_timeout_us = timeout
        return timeout
