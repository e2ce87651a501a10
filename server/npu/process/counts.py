"""Counts the runtime keeps per process -- aclInit's, a device's aclrtSetDevice references -- kept per client process
of a daemon context, since several processes may share one context (`Session.thread` names each one): a process's
calls move its own count, and what the count guards goes when the counts of every process reach zero."""

from __future__ import annotations

from collections.abc import Hashable


class PerProcess:
    """One count per client process (the process half of `core.caller.caller_thread`)."""

    def __init__(self) -> None:
        self.counts: dict[Hashable, int] = {}

    def of(self, process: Hashable) -> int:
        return self.counts.get(process, 0)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def add(self, process: Hashable) -> None:
        self.counts[process] = self.counts.get(process, 0) + 1

    def drop(self, process: Hashable) -> int:
        """One fewer for `process` (which has one); what it has left."""
        left = self.counts[process] - 1
        if left:
            self.counts[process] = left
        else:
            del self.counts[process]
        return left

    def clear(self, process: Hashable) -> None:
        self.counts.pop(process, None)
