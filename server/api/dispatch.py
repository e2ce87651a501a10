"""The one path every call takes, whatever its transport: look the C name up in the call table, validate the
arguments against its request model, call the session's `Runtime` method of that name with the arguments in C
order as the calling client thread, and shape the return value as the result model. A C struct argument
reaches the device as the plain dicts and lists of its fields.

Two wire adaptations, both driven by the table's types: a phase-2 `executor` arrives as a kernel description
(or its msgpack bytes) and becomes a `KernelDesc` (`server.api.kernels`); a `dst` of `null` means pageable host
memory on the caller's side, so the copy lands in a buffer whose bytes come back as the result's `data`.
"""

from __future__ import annotations

import difflib
import inspect
import time
from collections.abc import Hashable, Mapping
from enum import IntEnum
from typing import Any

from pydantic import BaseModel, ValidationError

from proto.calltable import CALLS, Call
from proto.envelope import explain
from proto.errors import ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_INVALID_PARAM, AclError
from proto.operators import SETTING
from server.api.errors import MalformedCall
from server.api.fastargs import plain_values
from server.api.kernels import kernel_of
from server.api.sessions import Session
from server.npu.core.caller import calling_thread


async def call(
    session: Session, api: str, args: Mapping[str, Any] | bytes, thread: Hashable, max_bytes: int
) -> dict[str, Any]:
    """Look up, validate and invoke one call, counting it (by C name and result code) in the metrics."""
    start = time.perf_counter()
    code = 0
    try:
        found = lookup(api)
        return await invoke(session, found, validate(found, args), thread, max_bytes)
    except AclError as error:
        code = error.code
        raise
    finally:
        counted = api if api in CALLS else "unknown"
        session.metrics.call(session.context.tenant, counted, code, time.perf_counter() - start)


def lookup(api: str) -> Call:
    call = CALLS.get(api)
    if call is None:
        near = difflib.get_close_matches(api[:80], CALLS, n=3, cutoff=0.75)
        hint = f": did you mean {' or '.join(near)}?" if near else " (the calls are listed on /docs)"
        if not near and api.startswith("aclnn") and api[5:80].isidentifier():  # an operator the client declared
            hint = (
                f": the daemon does not know the operator {api[:80]}; a user-declared operator must be declared "
                f"on the daemon too: start it with {SETTING}=<the module declaring it> (vnpu serve --operators)"
            )
        raise AclError(
            ACL_ERROR_API_NOT_SUPPORT, f"no function named {api[:80]!r} in vnpu's call table{hint}", api[:80]
        )
    return call


def validate(call: Call, args: Mapping[str, Any] | bytes) -> list[Any]:
    """The arguments in C order, checked against the request model (from a mapping, or from JSON bytes); plain
    values the model would take as they are skip pydantic (`server.api.fastargs`)."""
    if not isinstance(args, bytes | bytearray):
        plain = plain_values(call, args)
        if plain is not None:
            return plain
    try:
        if isinstance(args, bytes | bytearray):
            request = call.request.model_validate_json(args)
        else:
            request = call.request.model_validate(args)
    except ValidationError as error:
        raise MalformedCall(explain(error), call.name) from None
    values = [getattr(request, name) for name in call.arg_names]
    return [_plain(v) for v in values]


def _plain(value: Any) -> Any:
    """A C struct (or an array of them) as plain dicts and lists, as the device takes it."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        return [v.model_dump() for v in value]
    return value


async def invoke(session: Session, call: Call, values: list[Any], thread: Hashable, max_bytes: int) -> dict[str, Any]:
    """Run `call` on the session's runtime as `thread`; the result model's fields, as plain values. `max_bytes`
    bounds the bytes a reply may carry (the transport's message limit)."""
    names = call.arg_names
    host_out: bytearray | None = None
    if "executor" in names:
        i = names.index("executor")
        if values[i] is not None:
            values[i] = kernel_of(values[i])
    if "destMax" in names and values[names.index("dst")] is None:  # a copy into pageable memory
        host_out = _reply_buffer(values[names.index("count")], values[names.index("destMax")], max_bytes)
        values[names.index("dst")] = host_out
    runtime = session.runtime
    with calling_thread(session.thread(thread)):
        returned = getattr(runtime, call.name)(*values)
        if inspect.isawaitable(returned):
            returned = await returned
    return _result(call, returned, host_out)


def _reply_buffer(count: int, dest_max: int, max_bytes: int) -> bytearray:
    """The buffer that stands for the caller's pageable destination, checked before a byte is allocated."""
    if count > dest_max:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"count {count} is larger than destMax {dest_max}")
    if count > max_bytes:
        raise AclError(
            ACL_ERROR_INVALID_PARAM,
            f"count {count} is over the daemon's limit of {max_bytes} bytes per reply: copy in parts, or into "
            "aclrtMallocHost memory",
        )
    return bytearray(count)


def _result(call: Call, returned: Any, host_out: bytearray | None) -> dict[str, Any]:
    outs = call.out_names
    if host_out is not None or outs == ("data",):
        value = bytes(host_out) if host_out is not None else returned
        return {"data": value}
    if not outs:
        return {}
    values = returned if len(outs) > 1 else (returned,)
    return {name: int(v) if isinstance(v, IntEnum) else v for name, v in zip(outs, values, strict=True)}
