"""The errors a kernel raises at run time: aclnn's 161002 (ACLNN_ERR_PARAM_INVALID), naming the argument.

A kernel cannot check everything phase 1 checks, but a value only known when it runs (a block id past the cache,
a sequence longer than its tensor, an index out of range) or a feature vnpu does not implement is reported
this way: `AclError(161002, "<argument>: <what is wrong>", "aclnn<Op>")`.
"""

from __future__ import annotations

from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError


def invalid(op: str, argument: str, message: str) -> AclError:
    """The 161002 error of `aclnn<op>` about `argument` (its C name); raise it."""
    return AclError(ACLNN_ERR_PARAM_INVALID, f"{argument}: {message}", f"aclnn{op}")


def unsupported(op: str, argument: str, feature: str) -> AclError:
    """A documented feature vnpu's kernel does not implement (161002, naming the argument that asks for it)."""
    return invalid(op, argument, f"vnpu does not implement {feature} in aclnn{op}")
