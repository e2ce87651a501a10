"""The I/O-free heart of the client, shared by the blocking (`client.session`) and asyncio (`client.aio`)
sessions: how a Python call becomes a wire request, and how a reply becomes a return value or an exception.

- `prepare` checks the argument count, turns host objects into wire values (a HostBuffer into its pointer, an
  aclOpExecutor into its kernel description -- consuming it as phase 2 does --, an aclrtRandomNumTaskInfo into
  its fields -- overwriting its dataType as the ACL layer does (`proto.randomnum`) --, a pageable source buffer
  into bytes, a pageable destination into `null`) and decides whether the call may be pipelined. A kernel description
  travels as its JSON wire form over HTTP (`Outgoing.json_body`) and msgpack-encoded over the WebSocket
  (`Protocol.envelope`), encoded once per description object: the daemon decodes and checks those bytes once.
- `Outgoing.finish` shapes the result: nothing, one value, or a tuple in C order; copied bytes land in the
  caller's pageable buffer.
- `Protocol` numbers requests, names the calling thread, routes replies, and keeps the errors of pipelined
  calls until the same thread's next waiting call, which raises the first of them.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack

from client import exceptions
from client.errors import ServerError
from proto.aclnn import KernelDesc, aclOpExecutor, consume
from proto.calltable import CALLS, Call, WireModel
from proto.errors import ACL_ERROR_INTERNAL_ERROR, AclError
from proto.randomnum import acl_layer, aclrtRandomNumTaskInfo


@dataclass
class Outgoing:
    call: Call
    args: dict[str, Any]
    wait: bool
    pageable_dst: memoryview | None

    def json_body(self) -> dict[str, Any]:
        """The arguments as the JSON body of `POST /v1/call/{name}`."""
        args = {k: v.to_wire() if isinstance(v, KernelDesc) else v for k, v in self.args.items()}
        body: dict[str, Any] = self.call.request.model_validate(args).model_dump(mode="json")
        return body

    def finish(self, result: dict[str, Any]) -> Any:
        outs = self.call.out_names
        if self.pageable_dst is not None:
            data = result["data"]
            self.pageable_dst[: len(data)] = data
        if outs == ("data",) and "dst" in self.call.arg_names:
            return None  # aclrtMemcpy[Async] return nothing in C; the data went into the buffer
        values = [result[name] for name in outs]
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)


def pointer_of(value: Any) -> Any:
    """HostBuffer (or anything with a `ptr`) -> int; other values unchanged."""
    ptr = getattr(value, "ptr", None)
    return ptr if isinstance(ptr, int) else value


def prepare(api: str, values: tuple[Any, ...], launch_blocking: bool) -> Outgoing:
    call = CALLS[api]
    names = call.arg_names
    if len(values) != len(names):
        raise TypeError(f"{api}() takes {len(names)} argument(s) ({', '.join(names) or 'none'}), got {len(values)}")
    args: dict[str, Any] = {}
    pageable_dst = None
    for name, raw in zip(names, values, strict=True):
        value = pointer_of(raw)
        if isinstance(value, WireModel):
            value = value.model_dump()
        elif isinstance(value, list) and value and isinstance(value[0], WireModel):
            value = [v.model_dump() for v in value]
        if name == "executor" and isinstance(value, aclOpExecutor):
            value = consume(value, api)
        elif isinstance(value, aclrtRandomNumTaskInfo):
            value = acl_layer(value)  # its wire form; the struct's dataType becomes the runtime's, as in C
        elif name == "dst" and not isinstance(value, int | None):
            pageable_dst = _bytes_view(value, "dst", writable=True)
            value = None
        elif name == "src" and not isinstance(value, int | None):
            value = _bytes_view(value, "src").tobytes()
        args[name] = value
    if "src" in args and isinstance(args["src"], bytes):
        args["src"] = args["src"][: args["count"]]
    wait = launch_blocking or not call.asynchronous or pageable_dst is not None
    return Outgoing(call, args, wait, pageable_dst)


_PACKED: dict[int, tuple[KernelDesc, bytes]] = {}  # by id: phase 1 hands out the same description for a repeat
PACKED_SIZE = 1024


def packed(kernel: KernelDesc) -> bytes:
    """The msgpack encoding of a description's wire form, made once per description object."""
    known = _PACKED.get(id(kernel))
    if known is not None and known[0] is kernel:
        return known[1]
    data: bytes = msgpack.packb(kernel.to_wire(), use_bin_type=True)
    if len(_PACKED) >= PACKED_SIZE:
        _PACKED.clear()
    _PACKED[id(kernel)] = (kernel, data)
    return data


def _bytes_view(value: Any, name: str, writable: bool = False) -> memoryview:
    try:
        view = memoryview(value).cast("B")
    except TypeError:
        raise TypeError(
            f"{name} must be a pointer (int), a HostBuffer or a contiguous buffer, not {type(value)}"
        ) from None
    if writable and view.readonly:
        raise TypeError(f"{name} is a read-only buffer; a copy destination must be writable")
    return view


def thread_identity() -> list[int]:
    return [os.getpid(), threading.get_ident()]


def exception_of(error: dict[str, Any]) -> Exception:
    rebuilt = AclError.from_dict(error)
    if rebuilt.code == ACL_ERROR_INTERNAL_ERROR and rebuilt.message.startswith("vnpu internal error"):
        return ServerError(str(rebuilt))
    return rebuilt


class Protocol:
    """Request numbering, per-thread pipelined errors and the last error message of each thread."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pipelined_errors: dict[tuple[int, ...], list[AclError]] = {}
        self._recent: dict[int, str] = {}

    def envelope(self, out: Outgoing) -> dict[str, Any]:
        args = out.args
        kernel = args.get("executor")
        if isinstance(kernel, KernelDesc):
            args = {**args, "executor": packed(kernel)}
        return {
            "id": next(self._ids),
            "api": out.call.name,
            "args": args,
            "thread": thread_identity(),
            "reply": out.wait,
        }

    def pipelined_error(self, message: dict[str, Any]) -> None:
        """An error of a call that asked for no reply: keep it for its thread."""
        thread = tuple(message.get("thread") or ())
        error = exception_of(message["error"])
        if isinstance(error, AclError):
            error = AclError(error.code, f"{error.api} #{message.get('id')} failed: {error.message}", error.api)
        with self._lock:
            self._pipelined_errors.setdefault(thread, []).append(error)  # type: ignore[arg-type]

    def settle(self, reply: dict[str, Any] | None, finish: Callable[[dict[str, Any]], Any]) -> Any:
        """The value of a waiting call -- unless an earlier pipelined call of this thread failed, or this one did."""
        with self._lock:
            earlier = self._pipelined_errors.pop(tuple(thread_identity()), [])
        if earlier:
            raise self.remember(earlier[0])
        if reply is None:
            return None
        if "error" in reply:
            raise self.remember(exception_of(reply["error"]))
        return finish(reply["result"])

    def remember(self, error: Exception) -> Exception:
        """Keep the message of an error about to be raised (and hand a failed task to its callback)."""
        if isinstance(error, AclError):
            exceptions.report(error)
        with self._lock:
            self._recent[threading.get_ident()] = str(error)
        return error

    def recent_message(self) -> str | None:
        with self._lock:
            return self._recent.pop(threading.get_ident(), None)
