"""The operator registry: every aclnn operator declared, by name ("Add"; `aclnn` + name is the phase-2 C name).

CANN's operators come from the catalog (`proto.aclnn.catalog`), each declared when first asked for (building all
1,213 at import would cost every client its start-up); the user-declared ones (`proto.operators`) are added as
they are declared. Phase 1, kernel descriptions, the call table and the device look operators up here. A leaf: it
knows declarations only by type, and the source of CANN's declarations is attached by `proto.aclnn.ops`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from proto.aclnn.decl import OpDecl


class Registry(Mapping[str, "OpDecl"]):
    """The declared operators by name: CANN's (built on first use from an attached source) and the user's.

    A Mapping over every declared name (iteration builds every declaration); `get`, `in` and `[]` build only the
    one asked for. Assigning a name declares a user operator; `pop` removes one.
    """

    def __init__(self) -> None:
        self._made: dict[str, OpDecl] = {}
        self._user: dict[str, OpDecl] = {}
        self._names: Callable[[], Iterable[str]] = tuple
        self._build: Callable[[str], OpDecl | None] = lambda name: None
        self._implemented: Callable[[], Iterable[str]] = tuple

    def attach(
        self,
        names: Callable[[], Iterable[str]],
        build: Callable[[str], OpDecl | None],
        implemented: Callable[[], Iterable[str]],
    ) -> None:
        """The source of CANN's declarations: their names, one declaration by name, the names vnpu implements."""
        self._names, self._build, self._implemented = names, build, implemented
        self._made.clear()

    def get(self, name: object, default: OpDecl | None = None) -> OpDecl | None:  # type: ignore[override]
        if not isinstance(name, str):
            return default
        found = self._user.get(name) or self._made.get(name)
        if found is not None:
            return found
        built = self._build(name)
        if built is None:
            return default
        self._made[name] = built
        return built

    def __getitem__(self, name: str) -> OpDecl:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self._names(), *self._user}))

    def __len__(self) -> int:
        return len({*self._names(), *self._user})

    def __setitem__(self, name: str, decl: OpDecl) -> None:
        self._user[name] = decl

    def pop(self, name: str, default: OpDecl | None = None) -> OpDecl | None:
        return self._user.pop(name, default)

    def cann(self, name: str) -> bool:
        """Whether `name` is one of CANN's operators (declared by the catalog)."""
        return name not in self._user and self.get(name) is not None

    def user(self) -> dict[str, OpDecl]:
        """The user-declared operators by name."""
        return dict(self._user)

    def implemented(self) -> list[OpDecl]:
        """The operators with a kernel: vnpu's (sorted by name), then the user-declared ones."""
        return [self[name] for name in sorted(self._implemented())] + list(self._user.values())

    def unknown_hint(self) -> str:
        return "not an aclnn operator vnpu declares (CANN's public operators and the user-declared ones)"


OPS: Final = Registry()
