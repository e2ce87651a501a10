"""Markers: what a program says about its own timeline (mstx marks and ranges, msproftx stamps), recorded in the
device's trace beside the tasks.

A mark is an instant, a range a slice from its start call to its end call; both go on a lane of the calling
host thread (`thread 0x...`), on the device current to that thread, owned by its context, so a viewer shows
them next to the streams the thread fed. A marker's name is its message; its detail names its domain (when not
the default one) and the stream it was tied to. The daemon stamps each call as it arrives: the client pipelines
them, so a marker costs no round trip and lands in the order the thread made it.

What a program says is bounded, since markers never fail: a message or a domain longer than MAX_TEXT characters
is kept cut (saying how long it was), a context keeps at most MAX_OPEN_RANGES ranges started and not ended (the
oldest go), and each open range is charged to its context's memory (RANGE_CHARGE and its text) until it ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from server.npu.core.trace import Tracer, Where

MAX_TEXT = 256  # characters of a marker's message or domain that are kept
MAX_OPEN_RANGES = 1024  # ranges a context has started and not ended; beyond, the oldest are dropped
RANGE_CHARGE = 512  # bytes an open range is charged besides its text (what its record costs the daemon)


class MarkTask:
    """An instant marker (mstxMarkA, mstxDomainMarkA, aclprofMark); the trace kind `mark`."""


class RangeTask:
    """A range marker (mstxRangeStartA ... mstxRangeEnd, aclprofRangeStart ... aclprofRangeStop); kind `range`."""


@dataclass(frozen=True, slots=True)
class OpenRange:
    """A range that has started and not ended: where and when, and how the trace will name it."""

    name: str
    detail: str | None
    where: Where
    start: float
    refund: Callable[[], None]  # gives its charge back when it ends or is dropped


def bounded(text: str) -> str:
    """`text`, cut to MAX_TEXT characters when longer (the cut says how long it was)."""
    if len(text) <= MAX_TEXT:
        return text
    note = f"... ({len(text)} characters)"
    return text[: MAX_TEXT - len(note)] + note


def detail(domain: str | None, stream: str | None) -> str | None:
    parts = [f"domain {bounded(domain)}"] if domain else []
    if stream:
        parts.append(stream)  # "stream 0x... of device N", as the stream names itself
    return ", ".join(parts) or None


def lane(thread: object) -> str:
    return f"thread {thread:#x}" if isinstance(thread, int) else f"thread {thread}"


def note(tracer: Tracer, device: int, owner: object, thread: object, message: str) -> None:
    """A mark vnpu leaves itself on a thread's lane: what the runtime only logs (a copy kind it corrected, ...)."""
    if tracer.enabled:
        now = tracer.clock()
        tracer.ring.append((MarkTask, message, Where(device, lane(thread), None, owner), now, now, None, None, "vnpu"))
