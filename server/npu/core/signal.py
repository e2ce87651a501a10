"""A device flag that streams wait on (an event's binary flag, a notify): one waiting loop for both."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from proto.errors import ACL_ERROR_RT_STREAM_ABORT, ACL_ERROR_RT_WAIT_TIMEOUT, AclError

if TYPE_CHECKING:
    from server.npu.core.lane import Lane


class Signal:
    """Wakes the waiting lanes whenever it changes (`changed`); each waiter re-checks its own condition."""

    def __init__(self) -> None:
        self._changed: asyncio.Future[None] | None = None

    def changed(self) -> None:
        if self._changed is not None:
            self._changed.set_result(None)
            self._changed = None

    async def wait_until(
        self, lane: Lane, ready: Callable[[], bool], timeout: float | None, hopeless: Callable[[], None] = lambda: None
    ) -> None:
        """Block `lane` until `ready()`; the lane's teardown or interrupt ends it (107023), a timeout too (107019),
        and `hopeless` may raise when the wait can never end."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while not ready():
            if lane.closing.done():
                raise AclError(ACL_ERROR_RT_STREAM_ABORT, f"{lane} gave up its wait on {self} (destroyed or aborted)")
            hopeless()
            if self._changed is None:
                self._changed = loop.create_future()
            remaining = None if deadline is None else deadline - loop.time()
            done, _ = await asyncio.wait(
                {self._changed, lane.closing}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED
            )
            if not done:
                raise AclError(
                    ACL_ERROR_RT_WAIT_TIMEOUT,
                    f"{lane} waited {timeout:g} s on {self}, which was not recorded in that time",
                )
