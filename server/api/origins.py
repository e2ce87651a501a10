"""Browser origins: a web page the user visits must not drive the daemon (issue 39, 1).

WebSockets are not under the browser's same-origin policy, and a cross-origin `text/plain` POST is sent without
asking, so any page could join a program's context on a tokenless loopback daemon and read its device memory.
Browsers say who is asking in the `Origin` header (programs send none), so -- as Jupyter does -- every HTTP
request and WebSocket handshake under `/v1` (and `/metrics`) that carries an `Origin` must come from the daemon's
own origin or from one on `VNPU_ALLOW_ORIGINS` (comma-separated `scheme://host[:port]`, or `*` for any); any
other is answered 403 with the JSON error body before it reaches a route or a context.

The daemon's own origin is the one whose host and port are the request's `Host`: the dashboard it serves. On a
daemon bound to a loopback address that host must also be a loopback name (localhost, 127.0.0.0/8, ::1), so a
page that rebinds its own DNS name to 127.0.0.1 is still foreign; behind a proxy that forwards another name, put
that origin on `VNPU_ALLOW_ORIGINS`.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from proto.errors import ACL_ERROR_INVALID_PARAM, AclError
from server.api.errors import error_response

GUARDED = ("/v1/", "/metrics")  # what a foreign page may not reach (the page itself and /healthz hold nothing)
LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, IPv6 with or without brackets) names this machine's loopback."""
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _netloc(origin: str) -> tuple[str, str] | None:
    """(scheme, host[:port]) of an origin, lower case; None when it is not one ("null", garbage)."""
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        return None
    return parts.scheme, parts.netloc.lower()


class OriginPolicy:
    """Which browser origins may use the daemon: its own, and those of `allowed` (the setting's text)."""

    def __init__(self, allowed: str, loopback_only: bool) -> None:
        names = [a.strip() for a in allowed.split(",") if a.strip()]
        self.any = "*" in names
        self.allowed = {found for found in (_netloc(a) for a in names if a != "*") if found is not None}
        self.loopback_only = loopback_only

    def allows(self, origin: str, host: str) -> bool:
        if self.any:
            return True
        found = _netloc(origin)
        if found is None:
            return False
        if found in self.allowed:
            return True
        own = found[1] == host.lower()
        if own and self.loopback_only:
            return is_loopback(urlsplit(f"//{host}").hostname or "")
        return own


def refusal(origin: str) -> AclError:
    shown = origin[:100]
    return AclError(
        ACL_ERROR_INVALID_PARAM,
        f"a web page of origin {shown!r} may not use this daemon (browsers send Origin; programs do not): only the "
        "daemon's own pages may, and the origins on VNPU_ALLOW_ORIGINS (comma-separated, e.g. "
        "https://lab.example:8888)",
    )


class CheckOrigin:
    """ASGI middleware: a request or WebSocket handshake under GUARDED whose Origin the policy refuses gets 403
    with the JSON error body (a WebSocket: as its HTTP answer, or a close with 4403 where a server cannot send
    one)."""

    def __init__(self, app: ASGIApp, policy: OriginPolicy) -> None:
        self.app, self.policy = app, policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and scope["path"].startswith(GUARDED):
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            if origin is not None and not self.policy.allows(origin, headers.get("host", "")):
                await self._refuse(scope, receive, send, refusal(origin))
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, error: AclError) -> None:
        response = error_response(403, error)
        if scope["type"] == "http":
            await response(scope, receive, send)
            return
        websocket = WebSocket(scope, receive, send)
        if "websocket.http.response" in scope.get("extensions", {}):
            await websocket.send_denial_response(response)
        else:
            await websocket.close(code=4403, reason=error.message[:120])
