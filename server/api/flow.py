"""A connection's budgets (reliability 18, 19): bytes held on its behalf, with a wait for room.

One holder is always let in when nothing is held, so a single call or reply larger than the limit still passes;
`open` lifts the limit for good (the connection is gone: nobody waits for room any more).
"""

from __future__ import annotations

import asyncio


class Budget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._waiters: list[asyncio.Future[None]] = []  # done when `used` next drops

    @property
    def full(self) -> bool:
        return self.used >= self.limit

    def fits(self, size: int) -> bool:
        return not self.used or self.used + size <= self.limit

    def take(self, size: int) -> None:
        self.used += size

    def give(self, size: int) -> None:
        self.used -= size
        self._wake()

    async def room(self, size: int) -> None:
        """Wait until `size` more bytes fit."""
        while not self.fits(size):
            await self.dropped()

    def dropped(self) -> asyncio.Future[None]:
        """A future done when `used` next drops (made before anything else runs, so no drop is missed)."""
        future = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        return future

    def open(self) -> None:
        self.limit = 1 << 62
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(None)
