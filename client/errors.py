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


def unreachable(endpoint: str, reason: str, status: int | None = None, token: bool = False) -> TransportError:
    """Why a session could not be opened, with what to do: `status` is the daemon's HTTP answer if it gave one,
    `token` whether the client sent a token."""
    if status == 401:
        fix = "check VNPU_TOKEN (it was not accepted)" if token else "set VNPU_TOKEN to one of the daemon's tokens"
        return TransportError(f"the vnpu daemon at {endpoint} requires a token: {fix} (HTTP 401)")
    if status is not None:
        return TransportError(f"the vnpu daemon at {endpoint} refused the session: HTTP {status} {reason[:200]}")
    hint = " (is it running? `vnpu serve` starts one)" if "refused" in reason.lower() else ""
    return TransportError(f"cannot reach the vnpu daemon at {endpoint}: {reason}{hint}")


def refusal(endpoint: str, status: int, body: bytes | bytearray | str, token: bool) -> Exception:
    """Why the daemon answered `status` to a session's opening: the AclError its JSON error body carries (aclInit's:
    a tenant's quota, a context that has ended), else the TransportError saying what to do (a token, for 401)."""
    try:
        error = AclError.from_dict(json.loads(body)["error"])
    except (ValueError, TypeError, KeyError):
        text = body if isinstance(body, str) else bytes(body).decode(errors="replace")
        return unreachable(endpoint, text, status, token)
    if status == 401:
        return unreachable(endpoint, error.message, status, token)
    error.api = error.api or "aclInit"
    return error
