"""A row of the rule table (`proto.aclnn.ops`): an operator's rule, the unit its kernel runs on, and the arguments
its documentation lets be NULL beyond those the header marks `Optional`."""

from __future__ import annotations

from dataclasses import dataclass

from proto.aclnn.decl import KernelKind, Rule


@dataclass(frozen=True, eq=False)
class Entry:
    """A row of the rule table: the operator's rule, its unit, and the arguments CANN's documentation lets be NULL
    although the header's names do not say `Optional` (IncreFlashAttentionV4's pseShift, ...)."""

    rule: Rule
    kernel_kind: KernelKind = "vector"
    nullable: tuple[str, ...] = ()


Row = Rule | Entry


def entry_of(row: Row) -> Entry:
    return row if isinstance(row, Entry) else Entry(row)


def cube(rule: Rule, *nullable: str) -> Entry:
    """A row of an operator that runs on the cube unit (matrix products)."""
    return Entry(rule, "cube", nullable)


def nullable(rule: Rule, *names: str, kernel_kind: KernelKind = "vector") -> Entry:
    return Entry(rule, kernel_kind, names)
