"""A process's handles: one table per kind (streams, events, models, ...) that owns the lookup of a handle, the
runtime's error for one that is not live, and the memory of the handles destroyed lately.

Handles are ints, unique in the daemon, so one handle is live in one table at most: when a lookup fails the tables
together say what the handle is ("0x101e is a model, not a task group"), was ("a stream that was destroyed") or is
not ("not an event of this context": another context's handle reads exactly like a never-made one).
"""

from __future__ import annotations

from typing import Generic, TypeVar

from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_INVALID_HANDLE, AclError, require

T = TypeVar("T")
GONE_KEPT = 4096  # destroyed handles remembered, to say so when one is used again


def article(what: str) -> str:
    return "an" if what[0] in "aeiouAEIOU" else "a"  # an ACL context


class Handles:
    """Every handle table of a context, and the handles it destroyed lately."""

    def __init__(self) -> None:
        self.tables: list[HandleTable[object]] = []
        self.gone: dict[int, str] = {}  # handle -> what it was (bounded)

    def table(self, kind: str) -> HandleTable[T]:
        """A new table of handles of `kind` ("stream", "event", ...)."""
        made: HandleTable[T] = HandleTable(kind, self)
        self.tables.append(made)  # type: ignore[arg-type]
        return made

    def bury(self, handle: int, what: str) -> None:
        """Remember that `handle`, a `what`, was destroyed (to say so when it is used again)."""
        if len(self.gone) >= GONE_KEPT:
            self.gone.pop(next(iter(self.gone)))
        self.gone[handle] = what

    def not_a(self, what: str, handle: int) -> str:
        """Why `handle` is not a live `what` of this context."""
        if self.gone.get(handle) == what:
            return f"{handle:#x} is {article(what)} {what} that was destroyed"
        for table in self.tables:
            if table.kind != what and handle in table:
                return f"{handle:#x} is {article(table.kind)} {table.kind}, not {article(what)} {what}"
        owner = "process" if what == "ACL context" else "context"  # "not an ACL context of this context" reads ill
        return f"{handle:#x} is not {article(what)} {what} of this {owner}"


class HandleTable(dict[int, T], Generic[T]):
    """The live handles of one kind of a context: a dict from handle to object, with the runtime's lookup."""

    def __init__(self, kind: str, handles: Handles) -> None:
        super().__init__()
        self.kind = kind
        self.handles = handles

    def live(self, handle: int | None, null_code: int = ACL_ERROR_INVALID_PARAM) -> T:
        """The object of `handle`: NULL answers `null_code`, a handle that is not live here 107017."""
        require(bool(handle), f"{self.kind} is NULL", null_code)
        assert handle is not None
        found = self.get(handle)
        if found is None:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.handles.not_a(self.kind, handle))
        return found

    def drop(self, handle: int) -> T:
        """Take `handle` out, remembering it was destroyed."""
        found = self.pop(handle)
        self.handles.bury(handle, self.kind)
        return found
