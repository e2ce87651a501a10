"""A deadline on every request head (reliability 21, slowloris): uvicorn has none, so a client that opens
connections and sends their heads a byte at a time holds file descriptors forever, before any token is checked.

`guarded(seconds)` is uvicorn's h11 protocol with one timer per connection: a connection that has not sent a
complete request head within `seconds` of connecting, or of its previous response, is closed. A connection that
became a WebSocket is left alone (its head was complete). In front of a public port, a reverse proxy with its own
header timeouts and connection limits is still the right place for this (docs/deployment.md).
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol


class _HeadDeadline(H11Protocol):
    head_timeout = 10.0
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(self.head_timeout, self._deadline, self.cycle)

    def _deadline(self, waited_since: object) -> None:
        """Close the connection if no new request head arrived since the timer was armed."""
        self._head_timer = None
        transport = self.transport
        if transport.is_closing() or transport.get_protocol() is not self:  # closed, or now a WebSocket
            return
        if self.cycle is waited_since and (self.cycle is None or self.cycle.response_complete):
            transport.close()


def guarded(seconds: float) -> type[H11Protocol]:
    """uvicorn's HTTP protocol class with a request-head deadline of `seconds`."""
    return type("HeadDeadlineH11", (_HeadDeadline,), {"head_timeout": seconds})
