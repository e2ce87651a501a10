"""C enum members for people: listed in the message of a bad value (`not_member`), read by name (`by_name`).

A bad enum value is answered with what the argument takes, names and values, so the fix is in the message.
REST bodies may give a member by its C name (`server.api.enumargs`); the wire itself carries integers.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum


def _value(value: int) -> str:
    """Small values in decimal, flag bits in hex, as the headers write them."""
    return str(value) if -256 < value < 256 else f"{value:#x}"


def members(enum: type[IntEnum], only: Iterable[int] | None = None) -> str:
    """'ACL_MEMCPY_HOST_TO_HOST=0, ACL_MEMCPY_HOST_TO_DEVICE=1, ...' (`only`: those of these values)."""
    chosen = list(enum) if only is None else [m for m in enum if int(m) in set(only)]
    return ", ".join(f"{m.name}={_value(int(m))}" for m in chosen)


def not_member(arg: str, value: int, enum: type[IntEnum], only: Iterable[int] | None = None, bits: bool = False) -> str:
    """The message of an argument whose value is none of the members (`only`: the members the call takes;
    `bits`: members that combine, whose value is shown in hex too)."""
    shown = f"{value} ({value:#x})" if bits or _value(value) != str(value) else str(value)
    return f"{arg} {shown} is not an {enum.__name__}: use {members(enum, only)}"


def by_name(arg: str, name: str, enum: type[IntEnum], combine: bool = False) -> int:
    """The value of the member named `name`; `combine`: names joined by | (flag bits), ORed. ValueError names
    the argument and lists the names."""
    parts = [part.strip() for part in name.split("|")] if combine else [name]
    value = 0
    for part in parts:
        member = enum.__members__.get(part)
        if member is None:
            joined = " (names may be joined by |)" if combine else ""
            raise ValueError(f"{arg} {name[:80]!r} is not the name of an {enum.__name__}: use {members(enum)}{joined}")
        value |= int(member)
    return value
