"""A user-declared operator's rule, guarded: a fault of the rule itself is an aclnn status, never a Python error.

The user's `check` raises `OpArgError` for a bad argument (161002, naming it). Anything else it raises, a
`result_dtype` that is not a dtype vnpu computes in, or a `workspace` that is not a byte count, is the operator's
own fault: ACLNN_ERR_INNER (561000) naming the rule, its module and what went wrong, on the client (phase 1) and on
the daemon (revalidation) alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from proto.aclnn.decl import Args, OpArgError, Rule
from proto.aclnn.dtypes import ALL
from proto.aclnn.host import is_int64
from proto.constants import aclDataType
from proto.errors import ACLNN_ERR_INNER

T = TypeVar("T")


@dataclass(frozen=True)
class GuardedRule:
    """`rule` of the module `module`, its faults turned into OpArgError(561000)."""

    rule: Rule
    module: str

    def result_dtype(self, args: Args) -> aclDataType:
        dtype = self._run("result_dtype", lambda: self.rule.result_dtype(args))
        if not isinstance(dtype, aclDataType) or dtype not in ALL:
            raise self._fault("result_dtype", f"returned {dtype!r}, not an aclDataType vnpu computes in")
        return dtype

    def check(self, args: Args) -> None:
        """The rule's check, then its dtype: phase 1 also answers for what the kernel's launch will ask."""
        self._run("check", lambda: self.rule.check(args))
        self.result_dtype(args)

    def workspace(self, args: Args) -> int:
        size = self._run("workspace", lambda: self.rule.workspace(args))
        if not is_int64(size) or size < 0:
            raise self._fault("workspace", f"returned {size!r}, not a byte count (an int >= 0)")
        return size

    def _run(self, method: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except OpArgError:
            raise
        except Exception as error:
            raise self._fault(method, f"failed: {error!r}") from None

    def _fault(self, method: str, what: str) -> OpArgError:
        name = f"{type(self.rule).__name__}.{method}"
        return OpArgError(f"the operator's rule {name} ({self.module}) {what}", ACLNN_ERR_INNER)
