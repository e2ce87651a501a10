"""mstx markers from C (`mstx/ms_tools_ext.h`): marks, ranges and domains, sent to the daemon's trace
(`vnpuMarkerMark`, `vnpuMarkerRangeStart`, `vnpuMarkerRangeEnd`, pipelined: no call waits for a reply).

As in mstx, the calls return nothing and never stop the program: a NULL message is ignored (a range start then
answers id 0), a domain that was not created or was destroyed marks nothing. Range ids are numbered here, one
sequence per process, from 1; a range may end on another thread than the one that started it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

from client.capi.convert import C, call

_ids = itertools.count(1)
_lock = threading.Lock()


class Domains:
    """mstxDomainHandle_t: an address vnpu hands out for a domain's name (the C string is kept alive here)."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.kept: dict[int, Any] = {}

    def create(self, c: C, name: str) -> Any:
        handle = c.ffi.new("char[]", name.encode())
        address = int(c.ffi.cast("uintptr_t", handle))
        self.names[address], self.kept[address] = name, handle
        return c.ffi.cast("mstxDomainHandle_t", handle)

    def name(self, c: C, domain: Any) -> str | None:
        return self.names.get(int(c.ffi.cast("uintptr_t", domain)))

    def destroy(self, c: C, domain: Any) -> None:
        address = int(c.ffi.cast("uintptr_t", domain))
        self.names.pop(address, None)
        self.kept.pop(address, None)


DOMAINS = Domains()


def _text(c: C, pointer: Any) -> str | None:
    return None if pointer == c.ffi.NULL else c.ffi.string(pointer).decode(errors="replace")


def _stream(c: C, stream: Any) -> int | None:
    return c.address(stream) or None


def mark(c: C, message: Any, stream: Any, domain: str | None) -> None:
    text = _text(c, message)
    if text is not None:
        call("vnpuMarkerMark", text, domain, _stream(c, stream))


def range_start(c: C, message: Any, stream: Any, domain: str | None) -> int:
    text = _text(c, message)
    if text is None:
        return 0
    with _lock:
        range_id = next(_ids)
    call("vnpuMarkerRangeStart", range_id, text, domain, _stream(c, stream))
    return range_id


def range_end(range_id: int) -> None:
    if range_id:
        call("vnpuMarkerRangeEnd", range_id)


def mstxMarkA(c: C) -> Callable[..., None]:  # noqa: N802
    return lambda message, stream: mark(c, message, stream, None)


def mstxRangeStartA(c: C) -> Callable[..., int]:  # noqa: N802
    return lambda message, stream: range_start(c, message, stream, None)


def mstxRangeEnd(c: C) -> Callable[..., None]:  # noqa: N802
    return range_end


def mstxDomainCreateA(c: C) -> Callable[..., Any]:  # noqa: N802
    def function(name: Any) -> Any:
        text = _text(c, name)
        return c.ffi.NULL if text is None else DOMAINS.create(c, text)

    return function


def mstxDomainDestroy(c: C) -> Callable[..., None]:  # noqa: N802
    return lambda domain: DOMAINS.destroy(c, domain)


def mstxDomainMarkA(c: C) -> Callable[..., None]:  # noqa: N802
    def function(domain: Any, message: Any, stream: Any) -> None:
        name = DOMAINS.name(c, domain)
        if name is not None:
            mark(c, message, stream, name)

    return function


def mstxDomainRangeStartA(c: C) -> Callable[..., int]:  # noqa: N802
    def function(domain: Any, message: Any, stream: Any) -> int:
        name = DOMAINS.name(c, domain)
        return 0 if name is None else range_start(c, message, stream, name)

    return function


def mstxDomainRangeEnd(c: C) -> Callable[..., None]:  # noqa: N802
    def function(domain: Any, range_id: int) -> None:
        if DOMAINS.name(c, domain) is not None:
            range_end(range_id)

    return function


SPECIAL = {
    f.__name__: f
    for f in (
        mstxMarkA,
        mstxRangeStartA,
        mstxRangeEnd,
        mstxDomainCreateA,
        mstxDomainDestroy,
        mstxDomainMarkA,
        mstxDomainRangeStartA,
        mstxDomainRangeEnd,
    )
}
