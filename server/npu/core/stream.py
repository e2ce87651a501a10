"""aclrtStream: a FIFO of tasks run in order by one worker coroutine; streams run concurrently."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
from collections import deque
from typing import TYPE_CHECKING

import numpy as np

from proto.errors import (
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_STREAM_ABORT,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    AclError,
)
from server.npu.core.lane import Memory, Task, abandon
from server.npu.core.trace import Where, traced

if TYPE_CHECKING:
    from server.npu.device import Device

log = logging.getLogger("vnpu.stream")


class Stream:
    """aclrtStream. Tasks run in issue order; a failed task leaves a sticky error that the next synchronize
    raises (and clears). In ACL_CONTINUE_ON_FAILURE mode (the default) the tasks after it still run, so one bad
    launch loses nothing else; in ACL_STOP_ON_FAILURE mode they are skipped until a synchronize reports it."""

    def __init__(
        self,
        handle: int,
        device: Device,
        machine: Memory,
        flags: int = 0,
        default: bool = False,
        owner: object = None,
        priority: int = 0,
    ):
        self.handle = handle
        self.device = device
        self.machine = machine
        self.flags = flags
        self.default = default
        self.priority = priority
        self.ident = next(device.stream_ids)  # aclrtStreamGetId
        self.stop_on_failure = False  # skip tasks after a failure: STOP was set on a stream of its ACL context
        self.failure_mode = 0  # the failure mode set on this stream itself (aclrtSetStreamFailureMode, bit 0)
        # aclrtSetStreamAttribute (calls.stream.stream_attr): recorded; vnpu detects no overflow and caches no op info
        self.overflow_switch = False  # ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, aclrtSetStreamOverflowSwitch
        self.tag = 0xFFFFFFFF  # ACL_STREAM_ATTR_USER_CUSTOM_TAG: none yet
        self.cache_op_info = 0  # ACL_STREAM_ATTR_CACHE_OP_INFO as set on this stream
        self.sq_priority = priority  # ACL_STREAM_ATTR_PRIORITY: the scheduler's (aclrtStreamGetPriority: creation's)
        self.aborts = 0  # aclrtStreamAbort calls so far: a synchronize waiting through one reports it
        self._closed = False
        self.issued = 0
        self.completed = 0
        self.running: Task | None = None
        self.error: tuple[Task, AclError, dict[str, int]] | None = None  # the first failure, its exception info
        self._tasks: deque[tuple[Task, int]] = deque()  # and the pthread id of the thread that issued it
        self._wake = asyncio.Event()
        self._reached: list[tuple[int, int, asyncio.Future[None]]] = []  # heap of (seq, tiebreak, future)
        loop = asyncio.get_running_loop()
        self.closing: asyncio.Future[None] = loop.create_future()
        self.where = Where(device.index, repr(self), None, owner)
        self._worker = loop.create_task(self._run(), name=f"vnpu-stream-{handle:#x}")

    def __repr__(self) -> str:
        kind = "default stream" if self.default else "stream"
        return f"{kind} {self.handle:#x} of device {self.device.index}"

    @property
    def closed(self) -> bool:
        """Destroyed (or being destroyed): it takes no more work."""
        return self._closed

    @property
    def queued(self) -> int:
        """Tasks issued and not finished (including the running one)."""
        return self.issued - self.completed

    def submit(self, task: Task, thread: int = 0) -> int:
        """Queue `task` (issued by client thread `thread`); returns its sequence number on this stream, which is
        its task id (aclrtGetThreadLastTaskId, the exception info of its failure)."""
        self._tasks.append((task, thread))
        self.issued += 1
        self._wake.set()
        return self.issued

    async def reach(self, seq: int, timeout: float | None = None) -> bool:
        """Wait until the task numbered `seq` has finished; False on timeout."""
        if self.completed >= seq:
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._reached, (seq, id(future), future))
        if timeout is None:
            await future
            return True
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            self._reached = [entry for entry in self._reached if entry[2] is not future]  # a poll keeps nothing
            heapq.heapify(self._reached)
            return False
        return True

    async def synchronize(self, api: str, timeout: float | None = None) -> None:
        """Wait for every task issued so far, then raise the sticky error, if any (clearing it); a wait that
        an aclrtStreamAbort cut short says so."""
        aborts = self.aborts
        if not await self.reach(self.issued, timeout):
            raise AclError(
                ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                f"{self} still has {self.queued} unfinished task(s) after {timeout:g} s"
                + (f"; it is running: {self.running.describe()}" if self.running else ""),
                api,
            )
        self.raise_error(api)
        if self.aborts != aborts:
            raise AclError(ACL_ERROR_RT_STREAM_ABORT, f"{self} was aborted (aclrtStreamAbort) during the wait", api)

    def raise_error(self, api: str) -> None:
        if self.error is not None:
            task, error, info = self.error
            self.error = None
            message = f"a task on {self} failed: task {info['taskId']}, {task.describe()}: {error.message}"
            raise AclError(error.code, message, api, task=info)

    def discard(self) -> int:
        """Drop the queued tasks that have not started (aclrtDestroyStreamForce, aclrtStreamAbort); how many."""
        dropped = len(self._tasks)
        while self._tasks:
            self._skip(self._tasks.popleft()[0])
        return dropped

    def abort(self) -> None:
        """aclrtStreamAbort: drop the queued tasks, and make the running one give up its wait."""
        self.aborts += 1
        self.discard()
        self.interrupt()

    def interrupt(self) -> None:
        """Make the running task give up if it waits (on an event, a notify, a value): aclrtStreamStop."""
        if self.running is not None and not self.closing.done():
            self.closing.set_result(None)

    async def close(self) -> None:
        """Let every queued task finish (event waits give up at once), then stop the worker; whoever still waits
        for a discarded task is released."""
        self._closed = True
        if not self.closing.done():
            self.closing.set_result(None)
        await self.reach(self.issued)
        self._worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._worker
        for _, _, future in self._reached:
            if not future.done():
                future.set_result(None)
        self._reached.clear()

    async def _run(self) -> None:
        np.seterr(all="ignore")  # for this task's context only: kernels run inline here without their own errstate
        while True:
            while not self._tasks:
                self._wake.clear()
                await self._wake.wait()
            task, thread = self._tasks.popleft()
            if self.error is not None and self.stop_on_failure:
                self._skip(task)
                continue
            self.running = task
            try:
                await traced(self.machine.tracer, task, self, self.where)
            except AclError as error:
                self._fail(task, thread, error)
            except Exception as error:  # a vnpu bug must not kill the stream
                log.exception("task %s on %s crashed", task.describe(), self)
                crash = AclError(ACL_ERROR_RT_INTERNAL_ERROR, f"vnpu internal error: {error!r}", task.api)
                self._fail(task, thread, crash)
            self.running = None
            if self.closing.done() and not self._closed:  # an interrupt is over: later waits wait again
                self.closing = asyncio.get_running_loop().create_future()
            self._advance()

    def _skip(self, task: Task) -> None:
        abandon(task)
        self._advance()

    def _advance(self) -> None:
        self.completed += 1
        while self._reached and self._reached[0][0] <= self.completed:
            future = heapq.heappop(self._reached)[2]
            if not future.done():
                future.set_result(None)

    def _fail(self, task: Task, thread: int, error: AclError) -> None:
        log.info("task %s on %s failed: %s", task.describe(), self, error)
        if self.error is None:
            info = {"taskId": self.completed + 1, "streamId": self.ident, "threadId": thread,
                    "deviceId": self.device.index, "errorCode": error.code}  # fmt: skip
            self.error = (task, error, info)
