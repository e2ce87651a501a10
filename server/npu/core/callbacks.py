"""Callbacks and host functions, the device's half (spec-breadth 4): which thread runs what, and when.

The C function runs in the client; the device only knows when a stream reaches it. A stream is subscribed
either by the program to one of its threads (`aclrtSubscribeReport`: a *report* subscription) or by the
runtime to the process's host-function thread (`aclrtLaunchHostFunc`: a *runtime* subscription), never both.
Reaching a callback task posts `Due(fn, userData)` to the mailbox of that thread; a blocking one (every host
function, and `ACL_CALLBACK_BLOCK` callbacks) holds its stream until the client says the function returned.
The client takes its due callbacks (`aclrtProcessReport` in the subscribed thread, or its own host-function
thread), runs them and reports each blocking one's return.

A callback captured into a model keeps the subscription of the stream it was captured from (as the runtime
subscribes the model's stream to the same thread) and is posted at every replay.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from proto.errors import (
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_REPORT_TIMEOUT,
    ACL_ERROR_RT_STREAM_ABORT,
    ACL_ERROR_RT_STREAM_NO_CB_REG,
    AclError,
)
from server.npu.core.caller import ClientThread

if TYPE_CHECKING:
    from server.npu.core.lane import Lane
    from server.npu.core.stream import Stream
    from server.npu.device import Device

HOST_FUNC_THREAD = "host functions"  # the thread name of a process's host-function mailbox


@dataclass(eq=False)
class Due:
    """One callback the client is to run: `fn(userData)`, both opaque to the device."""

    ident: int
    fn: int
    user_data: int
    blocking: bool
    captured: bool
    returned: asyncio.Future[None] | None = None  # blocking: done when the client says fn returned

    def wire(self) -> dict[str, int | bool]:
        """As `proto.calltable.DueCallback`."""
        return {"callbackId": self.ident, "fn": self.fn, "userData": self.user_data, "blocking": self.blocking,
                "captured": self.captured}  # fmt: skip


@dataclass(eq=False)
class Mailbox:
    """The callbacks due for one client thread: a subscribed thread, or a process's host-function thread."""

    thread: ClientThread
    runtime: bool  # a host-function thread (runtime subscription) rather than a program's thread
    device: Device | None = None  # report subscriptions: the one device whose streams the thread serves
    due: deque[Due] = field(default_factory=deque)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def __str__(self) -> str:
        return "the host-function thread" if self.runtime else f"thread {self.thread[1]}"

    def post(self, due: Due) -> None:
        self.due.append(due)
        self._arrived.set()

    async def take(self, timeout_ms: int) -> list[Due]:
        """Every callback due, waiting up to `timeout_ms` (-1: forever) for one; 507012 if none came."""
        if not self.due:
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), None if timeout_ms == -1 else timeout_ms / 1000)
            except TimeoutError:
                raise AclError(
                    ACL_ERROR_RT_REPORT_TIMEOUT, f"no callback became due for {self} in {timeout_ms} ms"
                ) from None
        taken = list(self.due)
        self.due.clear()
        return taken


class Callbacks:
    """A context's subscriptions, mailboxes and the blocking callbacks waiting for their function to return."""

    def __init__(self) -> None:
        self.mailboxes: dict[ClientThread, Mailbox] = {}
        self.subscribed: dict[Stream, Mailbox] = {}
        self.waiting: dict[int, Due] = {}
        self.abandoned: set[int] = set()  # blocking callbacks whose stream stopped waiting (destroyed, aborted)
        self._ids = itertools.count(1)

    def mailbox(self, thread: ClientThread, runtime: bool) -> Mailbox:
        box = self.mailboxes.get(thread)
        if box is None:
            box = self.mailboxes[thread] = Mailbox(thread, runtime)
        return box

    def streams_of(self, box: Mailbox) -> list[Stream]:
        """The live streams subscribed to `box`."""
        return [s for s, b in self._live().items() if b is box]

    def report_threads(self) -> set[Mailbox]:
        """The threads serving at least one live stream (aclrtSubscribeReport)."""
        return {box for box in self._live().values() if not box.runtime}

    def _live(self) -> dict[Stream, Mailbox]:
        """The subscriptions, once those of destroyed streams are forgotten."""
        for stream in [s for s in self.subscribed if s.closed]:
            del self.subscribed[stream]
        return self.subscribed

    def due(self, fn: int, user_data: int, blocking: bool, captured: bool) -> Due:
        due = Due(next(self._ids), fn, user_data, blocking, captured)
        if blocking:
            due.returned = asyncio.get_running_loop().create_future()
            self.waiting[due.ident] = due
        return due

    def give_up(self, box: Mailbox, due: Due) -> None:
        """The stream no longer waits for `due`: not run if not yet taken, its return accepted if it was."""
        self.waiting.pop(due.ident, None)
        if due in box.due:
            box.due.remove(due)
        else:
            self.abandoned.add(due.ident)

    def returned(self, ident: int) -> None:
        due = self.waiting.pop(ident, None)
        if due is None and ident in self.abandoned:
            self.abandoned.discard(ident)
            return
        if due is None:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"no callback #{ident} is waiting for its function to return")
        assert due.returned is not None
        if not due.returned.done():
            due.returned.set_result(None)


@dataclass(frozen=True)
class CallbackTask:
    """aclrtLaunchCallback / aclrtLaunchHostFunc: post fn(userData) to the subscribed thread; a blocking one
    waits for it to return. Outside a model the stream must still be subscribed to that thread when it runs."""

    api: str
    callbacks: Callbacks
    stream: Stream  # the stream it was launched on (a captured one: the stream it was captured from)
    mailbox: Mailbox
    fn: int
    user_data: int
    blocking: bool
    captured: bool

    def describe(self) -> str:
        kind = "blocking " if self.blocking else ""
        return f"{self.api} ({kind}fn {self.fn:#x}, userData {self.user_data:#x}) for {self.mailbox}"

    async def run(self, lane: Lane) -> None:
        if not self.captured and self.callbacks.subscribed.get(self.stream) is not self.mailbox:
            raise AclError(
                ACL_ERROR_RT_STREAM_NO_CB_REG,
                f"{self.stream} is no longer subscribed to {self.mailbox} (aclrtUnSubscribeReport), so no thread "
                "runs this callback",
            )
        due = self.callbacks.due(self.fn, self.user_data, self.blocking, self.captured)
        self.mailbox.post(due)
        if due.returned is None:
            return
        await asyncio.wait({due.returned, lane.closing}, return_when=asyncio.FIRST_COMPLETED)
        if not due.returned.done():
            self.callbacks.give_up(self.mailbox, due)
            raise AclError(ACL_ERROR_RT_STREAM_ABORT, f"{lane} gave up waiting for {self.describe()} to return")
