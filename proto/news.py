"""The idle news of a WebSocket connection, both ends' vocabulary (the rules: `server.api.idle`; the client's use:
`client.idlenews`).

- The client asks for it in the connection's query (`QUERY`).
- A waiting call's reply may carry `IDLE: [stream, ...]` and `PENDING: [stream, ...]`.
- A pending stream gets one `report(...)` message when its work is done.
- When another session joins the context the daemon says `SHARED`, and the client answers `SHARED_ACK` once it
  has forgotten what it knew.
"""

from __future__ import annotations

from typing import Any, Final

QUERY: Final = {"idle": "1", "printed": "1"}  # the news, and kernel printf on replies (WebSocket query)
IDLE: Final = "idle"  # reply key: streams a synchronize by the same thread would find finished
PENDING: Final = "pending"  # reply key: streams still running, each reported on once done
REPORT_KEY: Final = "stream"  # the key that marks a report
SHARED: Final = {"shared": True}
SHARED_ACK: Final = {"ack": "shared"}


def report(stream: int, finished: bool, upto: int, thread: object) -> dict[str, Any]:
    """Whether a synchronize of `stream` by `thread`, processed after request `upto`, would return at once."""
    return {REPORT_KEY: stream, "finished": finished, "upto": upto, "thread": thread}
