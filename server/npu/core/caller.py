"""Who is calling: the identity of the client thread that issued the current ACL call.

In CANN the current device and the capture modes are per thread. A remote client sends its (process, thread)
identity with every call and the daemon sets it here for the duration of the call; a direct caller of the
device gets the identity of its own OS thread. An identity is a pair (process, thread): the thread is what
the client calls it (its pthread id, which is what `aclrtSubscribeReport` names), the process what tells two
clients apart.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

ClientThread = tuple[Hashable, Hashable]  # (process, thread)

_thread: ContextVar[ClientThread | None] = ContextVar("vnpu_caller_thread", default=None)


def caller_thread() -> ClientThread:
    ident = _thread.get()
    return ident if ident is not None else (os.getpid(), threading.get_ident())


def caller_process() -> Hashable:
    return caller_thread()[0]


def thread_of_caller_process(thread: Hashable) -> ClientThread:
    """The identity of thread `thread` of the calling process (a pthread id the program passes)."""
    return (caller_process(), thread)


def caller_pid() -> int | None:
    """The calling client's process id, when it sent one (what its aclrtDeviceGetBareTgid says)."""
    process = caller_process()
    pid = process[1] if isinstance(process, tuple) else process
    return pid if isinstance(pid, int) and not isinstance(pid, bool) else None


@contextmanager
def calling_thread(ident: ClientThread) -> Iterator[None]:
    """Run the enclosed calls as client thread `ident`."""
    token = _thread.set(ident)
    try:
        yield
    finally:
        _thread.reset(token)
