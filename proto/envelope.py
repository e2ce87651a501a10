"""The envelopes that carry calls over any transport (msgpack on the WebSocket, JSON over REST).

    request:  {"id": int, "api": "aclrtMalloc", "args": {...}, "thread": [pid, tid], "reply": bool}
    response: {"id": int, "result": {...}}  |  {"id": int, "error": {"code", "name", "message", "api"}, "thread": ...}

`thread` identifies the calling thread of the client (the capture modes and the current device are per thread);
`reply: false` asks for no answer unless the call fails (pipelining). Only `id`, `api` and `args` are required.
An error echoes the request's `thread`, so the client can raise a pipelined call's error in the thread that made
it, at its next call that waits. A WebSocket frame carries one request, or an array of requests taken in order
as if each had come alone (the client batches its pipelined calls so).
"""

from __future__ import annotations

import reprlib
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from proto.errors import ACL_ERROR_INVALID_PARAM, AclError


@dataclass(frozen=True)
class Request:
    id: int
    api: str
    args: Mapping[str, Any]
    thread: Hashable
    reply: bool


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxlist, _SHORT.maxdict = 2, 40, 40, 4, 4


def shown(value: object) -> str:
    """A short repr of a caller's value, safe for values nested arbitrarily deep."""
    return _SHORT.repr(value)


def explain(error: ValidationError) -> str:
    """What was wrong with a call's arguments, for its AclError: the first five problems, each with the value."""
    problems = []
    for item in error.errors()[:5]:
        where = ".".join(str(p) for p in item["loc"]) or "arguments"
        value = "" if item["type"] == "missing" else f" (got {shown(item.get('input'))})"
        problems.append(f"{where}: {item['msg']}{value}")
    more = len(error.errors()) - 5
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")


def parse_request(message: object) -> Request:
    """Check the shape of a request envelope; AclError(ACL_ERROR_INVALID_PARAM) names what is wrong."""
    if not isinstance(message, Mapping):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"an envelope must be a map, got {type(message).__name__}")
    if not _FIELDS.issuperset(message):
        unknown = sorted(map(str, set(message) - _FIELDS))
        raise AclError(ACL_ERROR_INVALID_PARAM, f"unknown envelope field(s): {', '.join(unknown)}")
    get = message.get
    ident, api, args, thread, reply = (
        get("id"),
        get("api"),
        get("args", {}),
        get("thread", "main"),
        get("reply", True),
    )
    if type(ident) is not int and (isinstance(ident, bool) or not isinstance(ident, int)):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"envelope id must be an integer, got {shown(ident)}")
    if type(api) is not str and not isinstance(api, str):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"envelope api must be a string, got {shown(api)}")
    if type(args) is not dict and not isinstance(args, Mapping):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"envelope args must be a map, got {type(args).__name__}")
    if type(thread) is list:
        thread = tuple(thread)
    if not isinstance(thread, str | int | tuple) or (
        isinstance(thread, tuple) and not all(isinstance(t, str | int) for t in thread)
    ):
        raise AclError(ACL_ERROR_INVALID_PARAM, "envelope thread must be a string, an integer or a list of them")
    if reply is not True and reply is not False:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"envelope reply must be a boolean, got {shown(reply)}")
    return Request(ident, api, args, thread, reply)


_FIELDS = frozenset({"id", "api", "args", "thread", "reply"})


def result_envelope(ident: int, result: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": ident, "result": dict(result)}


def error_envelope(ident: int | None, error: AclError, thread: Hashable | None = None) -> dict[str, Any]:
    envelope: dict[str, Any] = {"id": ident, "error": error.to_dict()}
    if thread is not None:
        envelope["thread"] = list(thread) if isinstance(thread, tuple) else thread
    return envelope
