"""REST reads enum arguments by their C names too: `"policy": "ACL_MEM_MALLOC_HUGE_FIRST"` is `"policy": 0`, and
a combinable enum (a malloc policy) takes names joined by `|`. `proto.callenums` says which argument, or field
of a C struct argument, is which enum.

Only REST does this: the WebSocket and the call table's wire carry integers. So a JSON body whose enum fields
hold strings is rewritten with their values before the call table validates it; a name that is no member is
answered 100000 (422) naming the argument and listing the names.
"""

from __future__ import annotations

import json
import re
import types
from enum import IntEnum
from functools import cache
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from proto.callenums import ENUM_ARGS, FLAGS
from proto.calltable import Call
from proto.enumtext import by_name
from server.api.errors import MalformedCall

Plan = dict[str, "type[IntEnum] | Plan"]
"""Where a model's enum fields are: field -> its enum, or the plan of the C struct (or array of them) it holds."""


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The models a field's type holds: itself, an optional one, the items of a list."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if get_origin(annotation) in (Union, types.UnionType, list) or get_args(annotation):
        return [m for arg in get_args(annotation) for m in _models(arg)]
    return []


@cache
def plan_of(model: type[BaseModel]) -> Plan:
    enums = ENUM_ARGS.get(model.__name__.removesuffix("Request"), {})
    plan: Plan = {}
    for name, field in model.model_fields.items():
        if name in enums:
            plan[name] = enums[name]
            continue
        for sub in _models(field.annotation):
            if inner := plan_of(sub):
                plan[name] = inner
    return plan


@cache
def _mentions(call: Call) -> re.Pattern[bytes] | None:
    """A pattern that finds `"field": "` for the call's enum fields at any depth (None: it has none), so a body
    without a name in one (a bulk copy's base64 included) is passed on untouched, unparsed."""
    names: set[str] = set()

    def collect(plan: Plan) -> None:
        for name, inner in plan.items():
            if isinstance(inner, dict):
                collect(inner)
            else:
                names.add(name)

    collect(plan_of(call.request))
    if not names:
        return None
    fields = "|".join(re.escape(name) for name in sorted(names))
    return re.compile(rb'"(?:' + fields.encode() + rb')"\s*:\s*"')


def resolve(call: Call, body: bytes) -> bytes:
    """`body` with the C names of its enum arguments replaced by their values."""
    mentions = _mentions(call)
    if mentions is None or mentions.search(body) is None:
        return body
    try:
        parsed = json.loads(body)
    except ValueError:
        return body  # the call table's validation says what is wrong with it
    except RecursionError:
        raise MalformedCall(
            "the body nests arrays or objects deeper than any call's arguments do: send plain values", call.name
        ) from None
    try:
        _replace(parsed, plan_of(call.request), "")
    except ValueError as error:
        raise MalformedCall(str(error), call.name) from None
    return json.dumps(parsed).encode()


def _replace(value: Any, plan: Plan, where: str) -> None:
    """Replace, in place, the names in the enum fields of `value` (an object of the plan's model, or a list)."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            _replace(item, plan, f"{where}[{i}]")
        return
    if not isinstance(value, dict):
        return  # not an object: the call table's validation refuses it
    for name, inner in plan.items():
        field = value.get(name)
        path = f"{where}.{name}" if where else name
        if isinstance(inner, dict):
            _replace(field, inner, path)
        elif isinstance(field, str):
            value[name] = by_name(path, field, inner, combine=inner in FLAGS)
