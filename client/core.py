"""The I/O-free heart of the client, shared by the blocking (`client.session`) and asyncio (`client.aio`)
sessions: how a Python call becomes a wire request, and how a reply becomes a return value or an exception.

- `prepare` checks the argument count, turns host objects into wire values (a HostBuffer into its pointer, an
  aclOpExecutor into its kernel description -- consuming it as phase 2 does --, an aclrtRandomNumTaskInfo into
  its fields -- overwriting its dataType as the ACL layer does (`proto.randomnum`) --, a pageable source buffer
  into bytes, a pageable destination into `null`) and decides whether the call may be pipelined: a copy from or
  to pageable memory waits, as the runtime makes it synchronous. A kernel description
  travels as its JSON wire form over HTTP (`Outgoing.json_body`) and msgpack-encoded over the WebSocket
  (`Protocol.envelope`), encoded once per description object: the daemon decodes and checks those bytes once.
- `Outgoing.finish` shapes the result: nothing, one value, or a tuple in C order; copied bytes land in the
  caller's pageable buffer.
- `Protocol` numbers requests, names the calling thread, routes replies, and keeps the first error of a thread's
  pipelined calls and how many more failed until that thread's next waiting call, which raises it (so a loop of
  failing launches holds one error, not one per launch).
- A mistake the client sees first is an AclError with the code the daemon gives for it (a Python value of the
  wrong type for an argument, a pageable buffer smaller than `count`: ACL_ERROR_INVALID_PARAM), never a raw
  TypeError or ValueError of the conversion or of the encoder.
"""

from __future__ import annotations

import itertools
import numbers
import os
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import msgpack
from pydantic import ValidationError

from client import exceptions
from client.errors import ServerError
from proto.aclnn import KernelDesc, aclOpExecutor, consume
from proto.calltable import CALLS, Call, WireModel
from proto.envelope import explain
from proto.errors import ACL_ERROR_INTERNAL_ERROR, ACL_ERROR_INVALID_PARAM, AclError
from proto.randomnum import acl_layer, aclrtRandomNumTaskInfo


@dataclass
class Outgoing:
    call: Call
    args: dict[str, Any]
    wait: bool
    pageable_dst: memoryview | None

    def json_body(self) -> dict[str, Any]:
        """The arguments as the JSON body of `POST /v1/call/{name}`."""
        body: dict[str, Any] = validated(self.call, self.args).model_dump(mode="json")
        return body

    def finish(self, result: dict[str, Any]) -> Any:
        outs = self.call.out_names
        if self.pageable_dst is not None:
            data = result["data"]
            self.pageable_dst[: len(data)] = data
        if copies_host_memory(self.call):
            return None  # aclrtMemcpy[Async] return nothing in C; the data went into the buffer
        values = [result[name] for name in outs]
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)


def copies_host_memory(call: Call) -> bool:
    """aclrtMemcpy and aclrtMemcpyAsync: a copy whose dst or src may be pageable host memory."""
    return call.out_names == ("data",) and "dst" in call.arg_names


def _numpy_int(value: Any) -> bool:
    """A numpy integer: a pointer computed with numpy, a size from an array's shape -- an int, as C sees it."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | int)


def plain_int(value: Any) -> int:
    """msgpack's `default` (called only for what it cannot pack, so a plain call pays nothing): a numpy integer."""
    if _numpy_int(value):
        return int(value)
    raise TypeError(f"cannot send a {type(value).__name__}")


def _wire_value(value: Any) -> Any:
    if isinstance(value, KernelDesc):
        return value.to_wire()
    return int(value) if _numpy_int(value) else value


def validated(call: Call, args: dict[str, Any]) -> WireModel:
    """The arguments as the call's request model; AclError(ACL_ERROR_INVALID_PARAM) names a misfit, as the daemon."""
    wire = {k: _wire_value(v) for k, v in args.items()}
    try:
        return call.request.model_validate(wire)
    except ValidationError as error:
        raise AclError(ACL_ERROR_INVALID_PARAM, explain(error), call.name) from None


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
        args[name] = value
    pageable_dst = _pageable(args, api) if copies_host_memory(call) else None
    pageable = pageable_dst is not None or isinstance(args.get("src"), bytes)
    wait = launch_blocking or not call.asynchronous or pageable
    return Outgoing(call, args, wait, pageable_dst)


def _pageable(args: dict[str, Any], api: str) -> memoryview | None:
    """A copy's pageable sides: the destination's buffer (its arg becomes null), the source's first `count` bytes.
    A buffer smaller than `count` is refused here, before any work; other mistakes in the counts are the daemon's."""
    dst, src, count, dest_max = args["dst"], args["src"], args["count"], args["destMax"]
    limit = count if isinstance(count, int) and count >= 0 else None
    need = limit if limit is not None and isinstance(dest_max, int) and limit <= dest_max else 0
    view = None
    if not isinstance(dst, int | None):
        view = _bytes_view(dst, "dst", api, need, writable=True)
        args["dst"] = None
    if not isinstance(src, int | None):
        args["src"] = _bytes_view(src, "src", api, need)[:limit].tobytes()
    return view


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


def _bytes_view(value: Any, name: str, api: str, count: int, writable: bool = False) -> memoryview:
    try:
        if isinstance(value, numbers.Number):  # a numpy scalar has a buffer, but a pointer was meant
            raise TypeError
        view = memoryview(value).cast("B")
    except TypeError:
        raise AclError(
            ACL_ERROR_INVALID_PARAM,
            f"{name} must be a pointer (int), a HostBuffer or a contiguous buffer, not {type(value).__name__}",
            api,
        ) from None
    if writable and view.readonly:
        raise AclError(
            ACL_ERROR_INVALID_PARAM, f"{name} is a read-only buffer; a copy destination must be writable", api
        )
    if len(view) < count:
        raise AclError(
            ACL_ERROR_INVALID_PARAM, f"{name} is a {len(view)}-byte host buffer, too small for {count} bytes", api
        )
    return view


def thread_identity() -> list[int]:
    return [os.getpid(), threading.get_ident()]


def exception_of(error: dict[str, Any]) -> Exception:
    rebuilt = AclError.from_dict(error)
    if rebuilt.code == ACL_ERROR_INTERNAL_ERROR and rebuilt.message.startswith("vnpu internal error"):
        return ServerError(str(rebuilt))
    return rebuilt


CLIENT_DIR = os.path.dirname(os.path.abspath(__file__))  # frames in here are vnpu's own, not the program's
PLACES = 16384  # pipelined calls whose caller's line is remembered, by request number (newest)
FREES_KEPT = 4096  # aclrtFree calls whose place a later use-after-free message names
FREED = re.compile(
    r"allocation at (0x[0-9a-f]+), which held 0x[0-9a-f]+ when the task was issued, has been freed by aclrtFree"
)
KEPT_FAILURES = 16  # pipelined failures of a thread kept whole until its next wait; the rest are counted
Place = tuple[int, str, int]  # request number, the caller's file and line (a C call's function and ordinal)
_c_calls = threading.local()  # the C toolkit's calls of this thread: how many of each function, and the current one


def c_call(name: str) -> None:
    """Count a C program's call of `name` on this thread (the C toolkit's entry to each function says so): C lines
    are out of Python's sight, so a pipelined error names the function and which of the thread's calls of it."""
    counts = _c_calls.__dict__.setdefault("counts", {})
    counts[name] = number = counts.get(name, 0) + 1
    _c_calls.now = (name, number)


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def c_place() -> str:
    """The current C call as a message names it, or "" outside the C toolkit."""
    now = getattr(_c_calls, "now", None)
    return "" if now is None else f"the {_ordinal(now[1])} {now[0]} call of this thread"


def _c_where() -> tuple[str, int] | None:
    place = c_place()
    return (place, 0) if place else None


def caller_line() -> tuple[str, int] | None:
    """The file and line of the program that made the current call: the first frame outside the client package
    (none for the C toolkit, whose Python frames are all the client's)."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(CLIENT_DIR):
            return name, frame.f_lineno
        frame = frame.f_back
    return None


def _where(place: Place) -> str:
    _, where, line = place
    return f"{_shown(where)}:{line}" if line else where  # line 0: a C call's description


def _shown(path: str) -> str:
    """A caller's file as a person reads it: relative to the working directory when it lies inside it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


@dataclass
class Failed:
    """A thread's pipelined calls that failed since its last wait: the first errors (`KEPT_FAILURES` of them) and
    how many more."""

    first: Exception
    later: list[Exception] = field(default_factory=list)  # the next ones, in order, up to the bound
    more: int = 0  # all that failed after the first, kept or not

    def add(self, error: Exception) -> None:
        self.more += 1
        if len(self.later) < KEPT_FAILURES - 1:
            self.later.append(error)

    def error(self, raised_at: str = "") -> Exception:
        """The error to raise at the thread's next waiting call, `raised_at`: the first one, its text naming every
        later one kept (the errors themselves in its `pipelined`)."""
        calls = "call" if self.more == 1 else "calls"
        more = f"; and {self.more} more pipelined {calls} failed" if self.more else ""
        if self.later:
            kept = "" if len(self.later) == self.more else f" (the first {len(self.later)} shown)"
            more += f"{kept}: " + "; ".join(str(error) for error in self.later)
        if isinstance(self.first, AclError):
            at = f"raised at {raised_at}, the thread's next waiting call; " if raised_at else ""
            hint = f" ({at}VNPU_LAUNCH_BLOCKING=1 raises it at its own call)"
            error = AclError(self.first.code, f"{self.first.message}{more}{hint}", self.first.api, self.first.task)
            error.pipelined = list(self.later)
            return error
        return type(self.first)(f"{self.first}{more}") if more else self.first


class Protocol:
    """Request numbering, per-thread pipelined errors and the last error message of each thread."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.last_id = 0  # the latest request number handed out
        self._lock = threading.Lock()
        self._failed: dict[tuple[int, ...], Failed] = {}  # by client thread: one entry each, whatever the count
        self._recent: dict[int, str] = {}
        self._places: list[Place | None] = [None] * PLACES  # where each recent pipelined call was made
        self._frees: dict[int, Place] = {}  # device pointer -> where the program freed it (newest FREES_KEPT)

    def envelope(self, out: Outgoing) -> dict[str, Any]:
        args = out.args
        kernel = args.get("executor")
        if isinstance(kernel, KernelDesc):
            args = {**args, "executor": packed(kernel)}
        self.last_id = ident = next(self._ids)
        return {
            "id": ident,
            "api": out.call.name,
            "args": args,
            "thread": thread_identity(),
            "reply": out.wait,
        }

    def pack(self, out: Outgoing) -> tuple[int, bytes]:
        """The call's request number and its msgpack envelope. An argument msgpack cannot carry (a numpy array
        or a set for a pointer, an int past 64 bits) is the caller's mistake: AclError, as the daemon answers it."""
        envelope = self.envelope(out)
        if out.call.name == "aclrtFree":  # a task that still pins the block will name this free and its line
            self._freed_here(out.args.get("devPtr"), envelope["id"])
        if not out.wait:  # its error comes later: remember where it was made, to say so then
            where = caller_line() or _c_where()
            if where is not None:
                self._places[envelope["id"] % PLACES] = (envelope["id"], *where)
        try:
            return envelope["id"], msgpack.packb(envelope, use_bin_type=True, default=plain_int)
        except (TypeError, ValueError, OverflowError) as error:
            validated(out.call, out.args)  # raises the daemon's ACL_ERROR_INVALID_PARAM, naming the argument
            raise AclError(ACL_ERROR_INVALID_PARAM, f"an argument cannot be sent: {error}", out.call.name) from None

    def _freed_here(self, ptr: object, ident: int) -> None:
        where = caller_line() or _c_where()
        if isinstance(ptr, int) and where is not None:
            if len(self._frees) >= FREES_KEPT:
                self._frees.pop(next(iter(self._frees)))
            self._frees[ptr] = (ident, *where)

    def located(self, error: Exception) -> Exception:
        """`error`, its "freed by aclrtFree" naming where the program freed that block, when the client saw it."""
        found = FREED.search(error.message) if isinstance(error, AclError) else None
        if found is not None:
            assert isinstance(error, AclError)
            place = self._frees.get(int(found.group(1), 16))
            if place is not None:
                error.message = error.message.replace(found.group(0), f"{found.group(0)} ({_where(place)})", 1)
        return error

    def pipelined_error(self, message: dict[str, Any]) -> None:
        """An error of a call that asked for no reply: kept if it is its thread's first, else counted."""
        thread = tuple(message.get("thread") or ())
        with self._lock:
            failed = self._failed.get(thread)
            if failed is None:
                self._failed[thread] = Failed(self._named(message))
            else:
                failed.add(self._named(message))

    def _named(self, message: dict[str, Any]) -> Exception:
        """A pipelined call's error, its message naming the call, where the program made it, and its number."""
        error = self.located(exception_of(message["error"]))
        if isinstance(error, AclError):
            ident = message.get("id")
            place = self._places[ident % PLACES] if isinstance(ident, int) else None
            where = f" ({_where(place)})" if place is not None and place[0] == ident else ""
            error = AclError(error.code, f"{error.api}{where} #{ident} failed: {error.message}", error.api)
        return error

    def settle(self, reply: dict[str, Any] | None, finish: Callable[[dict[str, Any]], Any], api: str = "") -> Any:
        """The value of a waiting call (`api`) -- unless an earlier pipelined call of this thread failed, or this one
        did."""
        with self._lock:
            earlier = self._failed.pop(tuple(thread_identity()), None)
        if earlier is not None:
            raise self.remember(earlier.error(c_place() or api))
        if reply is None:
            return None
        if "error" in reply:
            raise self.remember(self.located(exception_of(reply["error"])))
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
