"""The call table's plain arguments, checked without pydantic: most calls take only integers (pointers, handles,
sizes, enum values), None and bytes, and a WebSocket call's arguments arrive as exactly those Python types.

`plain_values(call, args)` returns the arguments in C order when every one of them is a value the request model
would accept unchanged -- an `int` (not a bool) within the field's bounds, None where the field is nullable, bytes
or a bool or a str where the field is of that type, a missing field that has a default -- and None otherwise, so
that pydantic sees the call and answers exactly as before (a hex string for a handle, a value out of range, a
wrong type, a missing or unknown argument). The checks are derived once per call from the request model's fields;
a call with a field of any other kind (a C struct, a list) always goes to pydantic, and so does a value of another
kind in a union (a kernel description given as a map rather than as its msgpack bytes).
tests/server/api/test_fastargs.py checks against pydantic, call by call, that both agree.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from annotated_types import Ge, Le
from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema
from pydantic.fields import FieldInfo

from proto.calltable import CALLS, LAUNCH, Call

Check = Callable[[Any], bool]
NO_EFFECT = (BeforeValidator, WithJsonSchema, PlainSerializer)  # change nothing for the values let through here
_MISSING = object()


def _bounds(metadata: list[Any]) -> tuple[int | None, int | None] | None:
    """(ge, le) of a field's metadata; None when it holds anything else that could refuse a value."""
    low = high = None
    for item in metadata:
        if isinstance(item, Ge) and isinstance(item.ge, int):
            low = item.ge
        elif isinstance(item, Le) and isinstance(item.le, int):
            high = item.le
        elif isinstance(item, FieldInfo):  # an Annotated[int, Field(ge=, le=)] inside a union
            inner = _bounds(item.metadata)
            if inner is None:
                return None
            low, high = inner[0] if inner[0] is not None else low, inner[1] if inner[1] is not None else high
        elif not isinstance(item, NO_EFFECT):
            return None
    return low, high


def _kinds(annotation: Any, metadata: list[Any]) -> list[Check] | None:
    """One check per member of a field's type (a value passes if one accepts it); None: not a plain field."""
    bounds = _bounds(metadata)
    if bounds is None:
        return None
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *extra = typing.get_args(annotation)
        return _kinds(base, [*metadata, *extra])
    if origin in (typing.Union, types.UnionType):
        # a member of another kind (a map, a list, a C struct) takes none of the values let through here (the
        # models are strict), so a union's plain members are checked and the rest left to pydantic
        checks = [c for member in typing.get_args(annotation) for c in _kinds(member, metadata) or ()]
        return checks or None
    if annotation is type(None):
        return [lambda v: v is None]
    if annotation is int:
        low, high = bounds
        return [lambda v: type(v) is int and (low is None or v >= low) and (high is None or v <= high)]
    if annotation in (bytes, bool, str) and bounds == (None, None):
        kind: type = annotation
        return [lambda v: type(v) is kind]
    return None


def _either(checks: list[Check]) -> Check:
    """One check for a field: the value passes if any member's check accepts it."""
    if len(checks) == 1:
        return checks[0]
    first, rest = checks[0], _either(checks[1:])
    return lambda v: first(v) or rest(v)


def _checker(call: Call) -> Callable[[Mapping[str, Any]], list[Any] | None] | None:
    fields = call.request.model_fields
    plan: list[tuple[str, Check, Any]] = []
    for name, field in fields.items():
        checks = _kinds(field.annotation, list(field.metadata))
        if checks is None:
            return None
        plan.append((name, _either(checks), _MISSING if field.is_required() else field.get_default()))
    names = frozenset(fields)

    def values(args: Mapping[str, Any]) -> list[Any] | None:
        if not names.issuperset(args):
            return None
        out = []
        for name, check, default in plan:
            value = args.get(name, _MISSING)
            if value is _MISSING:
                if default is _MISSING:
                    return None
                out.append(default)
            elif check(value):
                out.append(value)
            else:
                return None
        return out

    return values


CHECKERS = {name: _checker(call) for name, call in CALLS.items()}
LAUNCH_CHECKER = _checker(LAUNCH)  # every operator's phase 2 has the one launch pattern's request model


def plain_values(call: Call, args: Mapping[str, Any]) -> list[Any] | None:
    """The arguments in C order if the request model would take every one as it is; else None (ask pydantic)."""
    checker = LAUNCH_CHECKER if call.request is LAUNCH.request else CHECKERS.get(call.name)
    return None if checker is None else checker(args)
