"""Who is calling: the identity of the client thread that issued the current ACL call.

In CANN the current device and the capture modes are per thread. A remote client sends its (process, thread)
identity with every call and the daemon sets it here for the duration of the call; a direct caller of the
device gets the identity of its own OS thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_thread: ContextVar[Hashable | None] = ContextVar("vnpu_caller_thread", default=None)


def caller_thread() -> Hashable:
    ident = _thread.get()
    return ident if ident is not None else (os.getpid(), threading.get_ident())


@contextmanager
def calling_thread(ident: Hashable) -> Iterator[None]:
    """Run the enclosed calls as client thread `ident`."""
    token = _thread.set(ident)
    try:
        yield
    finally:
        _thread.reset(token)
