"""The toolkit's libraries inside a Python process: PyTorch with torch_npu, which links them.

There vnpu's Python part runs in the host's own interpreter, under the host's GIL. torch_npu's task queue
(TASK_QUEUE_ENABLE=1 or 2, its default) hands ACL calls to a queue thread while the main thread, inside a pybind
call that keeps the GIL, waits for that thread (graph_task_group_end; ordinary stream synchronisation, such as an
Event.record inside wait_stream): the queue thread's ACL call needs the GIL, and the process hangs for ever. So
aclInit in such a process refuses, saying what to set, rather than let the first such wait hang. The native toolkit
(issue 38: no interpreter in the libraries) lifts this.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from client.capi.convert import Bound, C, generic
from proto.errors import ACL_ERROR_FEATURE_UNSUPPORTED, AclError

TASK_QUEUE = "TASK_QUEUE_ENABLE"
QUEUE_REFUSED = (
    "torch_npu's task queue is on ({setting}): vnpu's toolkit runs ACL in this process's Python interpreter, and "
    "the queue deadlocks on it (the main thread waits for the queue thread while holding the GIL, in "
    "graph_task_group_end and in stream synchronisation). Set TASK_QUEUE_ENABLE=0 before importing torch "
    "(until vnpu's native toolkit, issue 38)"
)


def task_queue_setting() -> str | None:
    """How torch_npu's task queue is set in this process when it is on (None: off, or no torch_npu here)."""
    if "torch_npu" not in sys.modules:
        return None
    value = os.environ.get(TASK_QUEUE)
    if value is not None and value.strip() == "0":
        return None
    return f"{TASK_QUEUE}={value}" if value is not None else f"{TASK_QUEUE} unset: torch_npu's default, 1"


def aclInit(c: C) -> Callable[..., Any]:  # noqa: N802
    plain = generic(c, Bound("aclInit", "aclError", [("const char *", "configPath")]))

    def body(config_path: Any) -> Any:
        setting = task_queue_setting()
        if setting is not None:
            raise AclError(ACL_ERROR_FEATURE_UNSUPPORTED, QUEUE_REFUSED.format(setting=setting), "aclInit")
        return plain(config_path)

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {"aclInit": aclInit}
