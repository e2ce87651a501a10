"""The WebSocket path's plain-argument check (`server.api.fastargs`) against pydantic, call by call: whatever it
lets through is exactly what the request model makes of it, and everything else is left to pydantic."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from proto.calltable import CALLS, Call
from server.api import dispatch
from server.api.errors import MalformedCall
from server.api.fastargs import plain_values

CANDIDATES: list[Any] = [
    0, 1, 7, 255, 256, 2**31 - 1, -(2**31), 2**31, 2**32 - 1, 2**32, 2**63 - 1, -(2**63), 2**64 - 1, 2**64, -1,
    None, b"", b"\x00\x01", True, False, "", "x", "0x10", 1.5, [1, 2], {"a": 1},
]  # fmt: skip


def by_pydantic(call: Call, args: dict[str, Any]) -> list[Any] | None:
    """The values the request model makes of `args` (plain, as the device takes them); None if it refuses them."""
    try:
        model = call.request.model_validate(args)
    except ValidationError:
        return None
    values = [getattr(model, n) for n in call.arg_names]
    return [v.model_dump() if isinstance(v, BaseModel) else v for v in values]


def typed(values: list[Any]) -> list[tuple[type, Any]]:
    return [(type(v), v) for v in values]


def base_args(call: Call) -> dict[str, Any]:
    """For each field the first candidate the model takes unchanged (a fast path only needs some to start from)."""
    args: dict[str, Any] = {}
    for name in call.arg_names:
        for value in CANDIDATES:
            trial = {**args, name: value}
            got = {n: v for n, v in zip(call.arg_names, by_pydantic(call, trial) or [], strict=False)}
            if name in got and type(got[name]) is type(value) and got[name] == value:
                args[name] = value
                break
        else:
            args[name] = None
    return args


@pytest.mark.parametrize("api", sorted(CALLS))
def test_what_passes_is_what_pydantic_makes_of_it(api: str) -> None:
    call = CALLS[api]
    args = base_args(call)
    variants = [args, {**args, "unknown": 1}]
    variants += [{k: v for k, v in args.items() if k != name} for name in call.arg_names]
    variants += [{**args, name: value} for name in call.arg_names for value in CANDIDATES]
    rng = random.Random(api)
    variants += [{**args, name: rng.randrange(-(2**65), 2**65)} for name in call.arg_names for _ in range(5)]
    for variant in variants:
        fast = plain_values(call, variant)
        if fast is not None:
            reference = by_pydantic(call, variant)
            assert reference is not None, f"{api}{variant}: let through, but pydantic refuses it"
            assert typed(fast) == typed(reference), f"{api}{variant}"


def test_the_common_calls_skip_pydantic() -> None:
    assert plain_values(CALLS["aclrtSynchronizeStream"], {"stream": 0x10}) == [0x10]
    assert plain_values(CALLS["aclrtSynchronizeStream"], {"stream": None}) == [None]
    launch = {"workspace": None, "workspaceSize": 0, "executor": b"\x80", "stream": 3}
    assert plain_values(CALLS["aclnnAdd"], launch) == [None, 0, b"\x80", 3]
    copy = {"dst": 1 << 40, "destMax": 8, "src": b"12345678", "count": 8, "kind": 1, "stream": None}
    assert plain_values(CALLS["aclrtMemcpyAsync"], copy) == list(copy.values())


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"stream": "0x10"}, None),  # a hex string is pydantic's to convert
        ({"stream": True}, "stream"),
        ({"stream": 2**64}, "stream"),
        ({"stream": 1, "extra": 2}, "extra"),
    ],
)
def test_anything_else_gets_pydantics_answer(args: dict[str, Any], problem: str | None) -> None:
    call = CALLS["aclrtSynchronizeStream"]
    assert plain_values(call, args) is None
    if problem is None:
        assert dispatch.validate(call, args) == [0x10]
    else:
        with pytest.raises(MalformedCall, match=problem):
            dispatch.validate(call, args)
