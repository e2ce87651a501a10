"""uvicorn's sans-I/O WebSocket protocol, reading on while the application keeps up.

uvicorn pauses reading after every message it queues for the application and resumes when the application takes
it: two changes of the event loop's selector (`epoll_ctl`) per call, on the path of every waiting call (measured
with py-spy: bench/profile_wait.py). `LeanWebSocketProtocol` pauses only when `PAUSE_AT` messages wait for the
application, so a request/response never pauses, while a client that sends faster than the daemon takes its
messages (the WebSocket reader of `server.api.ws` stops taking them when its budget is full) still meets TCP's
push-back, one message later than with uvicorn's own class.
"""

from __future__ import annotations

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

PAUSE_AT = 2  # messages waiting for the application (this one included) at which reading pauses


class LeanWebSocketProtocol(WebSocketsSansIOProtocol):
    def send_receive_event_to_app(self) -> None:
        if self.read_paused or self.queue.qsize() + 1 >= PAUSE_AT:
            super().send_receive_event_to_app()  # pauses reading, as uvicorn does
            return
        self.read_paused = True  # uvicorn pauses only when not paused yet: leave reading on
        try:
            super().send_receive_event_to_app()
        finally:
            self.read_paused = False
