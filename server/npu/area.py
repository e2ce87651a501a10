"""An area: the C-named calls of one part of the runtime (streams, events, models, ...) over one process's context.

An area holds no state of its own and calls no other area: it checks a call's arguments, then works through the
context (`self.ctx`: the process's tables and the operations over them, `server.npu.process`) and the domain objects
(streams, events, models, memory). `Runtime` gathers every area's C-named methods into one table.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from proto.calltable import BEFORE_INIT as CALLS_BEFORE_INIT
from proto.errors import ACL_ERROR_REPEAT_FINALIZE, ACL_ERROR_UNINITIALIZE, AclError, require
from server.npu.machine import Machine
from server.npu.process.context import Context

__all__ = ["Area", "acl_call", "require"]

P = ParamSpec("P")
R = TypeVar("R")


class Area:
    """The calls of one area, over the context of one process."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.machine: Machine = ctx.machine


BEFORE_INIT = CALLS_BEFORE_INIT | {"aclInit"}


def acl_call(fn: Callable[P, R]) -> Callable[P, R]:
    """Mark an ACL entry point: it needs aclInit first (but those of BEFORE_INIT), and errors raised inside it name
    it as their `api`."""
    api = fn.__name__

    def check(args: Any) -> None:
        if api not in BEFORE_INIT and args[0].ctx.init_count == 0:
            if api == "aclFinalize":
                raise AclError(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize without a matching aclInit", api)
            raise AclError(ACL_ERROR_UNINITIALIZE, "call aclInit before any other ACL call", api)

    def named(error: AclError) -> AclError:
        if not error.api:
            error.api = api
        return error

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def run_async(*args: P.args, **kwargs: P.kwargs) -> Any:
            check(args)
            try:
                return await fn(*args, **kwargs)
            except AclError as error:
                raise named(error) from None

        return run_async  # type: ignore[return-value]

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        check(args)
        try:
            return fn(*args, **kwargs)
        except AclError as error:
            raise named(error) from None

    return run
