"""The kernel pool: the threads that run big kernels and copies off the event loop, fair between contexts.

Each owner (the context that issued the work) has a FIFO of jobs. A free thread serves the owners round robin,
and one owner runs on at most `share` threads at once, so a context's big kernels cannot hold every thread while
another context's copy waits. The threads are daemons: `close` drops the queued jobs and abandons the running
ones (a numpy call cannot be interrupted), so a shutdown keeps its deadline whatever is running.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter, deque
from collections.abc import Callable

import numpy as np

Job = tuple[Callable[[], object], asyncio.AbstractEventLoop, "asyncio.Future[object]"]


class PoolClosed(RuntimeError):
    """The pool was closed: the job will not run."""


class KernelPool:
    def __init__(self, threads: int, share: int) -> None:
        self.threads, self.share = threads, max(1, min(share, threads))
        self._lock = threading.Condition()
        self._queues: dict[object, deque[Job]] = {}  # owners with queued jobs, in round-robin order
        self._running: Counter[object] = Counter()  # owner -> its jobs running now
        self._closed = False
        for i in range(threads):
            threading.Thread(target=self._serve, name=f"vnpu-kernel-{i}", daemon=True).start()

    @property
    def running(self) -> int:
        with self._lock:
            return self._running.total()

    def submit(self, owner: object, work: Callable[[], object]) -> asyncio.Future[object]:
        """Queue `work` for `owner`; the future (of the running loop) completes when the work has ended."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[object] = loop.create_future()
        with self._lock:
            if self._closed:
                raise PoolClosed("the kernel pool is closed")
            self._queues.setdefault(owner, deque()).append((work, loop, future))
            self._lock.notify()
        return future

    def close(self) -> None:
        """Drop the queued jobs (their futures fail with PoolClosed) and let the running ones end unwaited."""
        with self._lock:
            self._closed = True
            dropped = [job for queue in self._queues.values() for job in queue]
            self._queues.clear()
            self._lock.notify_all()
        for _, loop, future in dropped:
            _settle(loop, future, None, PoolClosed("the kernel pool closed before this job ran"))

    def _next(self) -> tuple[object, Job] | None:
        """Under the lock: the first job of the first owner, in round-robin order, that is under its share."""
        for owner, queue in self._queues.items():
            if self._running[owner] < self.share:
                job = queue.popleft()
                del self._queues[owner]
                if queue:
                    self._queues[owner] = queue  # to the back of the round
                return owner, job
        return None

    def _serve(self) -> None:
        np.seterr(all="ignore")  # a division by zero gives inf, as on the device
        while True:
            with self._lock:
                picked = None
                while not self._closed and (picked := self._next()) is None:
                    self._lock.wait()
                if picked is None:
                    return
                owner, (work, loop, future) = picked
                self._running[owner] += 1
            result: object = None
            error: BaseException | None = None
            try:
                result = work()
            except BaseException as exc:  # handed to the awaiting task, which reports it
                error = exc
            with self._lock:
                self._running[owner] -= 1
                if not self._running[owner]:
                    del self._running[owner]
                self._lock.notify_all()  # the owner may be under its share again
            _settle(loop, future, result, error)


def _settle(loop: asyncio.AbstractEventLoop, future: asyncio.Future[object], result: object, error: object) -> None:
    def settle() -> None:
        if future.done():
            return
        if isinstance(error, BaseException):
            future.set_exception(error)
        else:
            future.set_result(result)

    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
        loop.call_soon_threadsafe(settle)
