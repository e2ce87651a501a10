"""The client's exception families. `AclError` (from `proto`) is the runtime's answer to a call; these are not:
`TransportError` when the daemon cannot be reached or the connection breaks, `ServerError` when the daemon
itself failed (a vnpu fault, HTTP 5xx)."""

from __future__ import annotations

import json

from proto.errors import AclError


class VnpuError(Exception):
    """Base of the errors that are not ACL errors."""


class TransportError(VnpuError):
    """The daemon could not be reached, or the connection to it broke."""


class ServerError(VnpuError):
    """The daemon failed while serving a call (a vnpu fault, not the caller's mistake)."""


def refusal(status: int, body: bytes | bytearray | str, endpoint: str) -> Exception:
    """Why the daemon refused to open a session: the AclError its JSON error body carries (a tenant's quota, a
    context that has ended: aclInit's), or a TransportError saying the status (a token may be missing or wrong)."""
    try:
        error = AclError.from_dict(json.loads(body)["error"])
    except (ValueError, TypeError, KeyError):
        return TransportError(f"the daemon at {endpoint} refused the session: HTTP {status}")
    if status == 401:
        return TransportError(f"the daemon at {endpoint} refused the session: HTTP 401, {error.message}")
    error.api = error.api or "aclInit"
    return error
