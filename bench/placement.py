"""Where the processes of a measurement run: a round trip between two processes costs what their placement costs.

On these machines (KVM guests whose idle vCPUs halt at once: haltpoll with guest_halt_poll_ns=0) a plain-Python
TCP echo takes ~6 µs when the scheduler puts both processes on one core, and ~65 µs when they sit on two cores,
each wake-up of the other core's halted vCPU costing tens of µs. Left to the scheduler, a ping-pong of two
single-threaded processes tends to share a core while vnpu's client (a caller and a reader thread) and daemon
spread over both, so an unpinned raw echo is no floor for an unpinned vnpu call. A `Placement` pins every thread of
the server processes (daemon, echo server) and of this process, so a figure compares like with like.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

CPUS = sorted(os.sched_getaffinity(0))  # what this process may use when the bench starts
T = TypeVar("T")


def pin(pid: int, cpus: Iterable[int]) -> None:
    """Every thread of process `pid` onto `cpus` (affinity is per thread; a new thread inherits its creator's)."""
    wanted = set(cpus)
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError, FileNotFoundError, PermissionError):  # a thread that ended
            os.sched_setaffinity(int(task.name), wanted)


@dataclass(frozen=True)
class Placement:
    name: str  # as a row's label says it
    server: frozenset[int]
    client: frozenset[int]

    @contextlib.contextmanager
    def holding(self, servers: Iterable[int]) -> Iterator[None]:
        """The servers' and this process's threads pinned while the block runs, then free again."""
        servers = list(servers)
        for pid in servers:
            pin(pid, self.server)
        pin(os.getpid(), self.client)
        try:
            yield
        finally:
            for pid in [*servers, os.getpid()]:
                with contextlib.suppress(FileNotFoundError):  # a server that ended
                    pin(pid, CPUS)

    def around(self, servers: Iterable[int], measure: Callable[[], T]) -> Callable[[], T]:
        """`measure`, run under this placement each time it is called."""
        servers = list(servers)

        def placed() -> T:
            with self.holding(servers):
                return measure()

        return placed


TWO_CORES = (
    Placement("on two cores", frozenset(CPUS[:1]), frozenset(CPUS[1:2]))
    if len(CPUS) > 1
    else Placement("on one core (the only one)", frozenset(CPUS), frozenset(CPUS))
)
ONE_CORE = Placement("on one core", frozenset(CPUS[:1]), frozenset(CPUS[:1]))
