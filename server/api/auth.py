"""Bearer tokens: with tokens configured every route but /healthz and the API's description (/openapi.json,
/docs) needs `Authorization: Bearer <token>` (a browser's WebSocket, which cannot send headers, offers the
subprotocol `vnpu.token.<the token in hex>`; `?token=` works too, but it is a secret in a URL); each token names a
tenant. Compared in constant time. The operator token (VNPU_OPERATOR_TOKEN) opens /metrics only, with every
tenant's series (`viewer_of`).

The routes find their tenant with `tenant_of`; `RequireToken` also refuses, before routing, any /v1 or /metrics request
without a valid token -- so a route that forgets to ask, and even a path that does not exist, answers 401 rather
than telling an anonymous caller anything.
"""

from __future__ import annotations

import hmac
import logging
import re
from typing import TYPE_CHECKING

from fastapi.responses import JSONResponse
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from proto.errors import ACL_ERROR_INVALID_PARAM, AclError

if TYPE_CHECKING:
    from server.api.settings import Settings

DEFAULT_TENANT = "default"
PROTECTED = ("/v1/", "/metrics")  # with tokens, refused before routing without one
SUBPROTOCOL = "vnpu"  # what a WebSocket that offered `vnpu.token.<hex>` is accepted with
TOKEN_SUBPROTOCOL = "vnpu.token."


class Unauthorized(Exception):
    pass


def presented(connection: HTTPConnection) -> str:
    """The token the request carries: its Authorization header, its WebSocket subprotocol, or `?token=`."""
    header = connection.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:]
    for offered in connection.headers.get("sec-websocket-protocol", "").split(","):
        offered = offered.strip()
        if offered.startswith(TOKEN_SUBPROTOCOL):
            try:
                return bytes.fromhex(offered[len(TOKEN_SUBPROTOCOL) :]).decode()
            except ValueError:
                return ""
    return connection.query_params.get("token", "")


def offered_subprotocol(connection: HTTPConnection) -> str | None:
    """The subprotocol to accept a WebSocket with: `vnpu` when it carried its token in one."""
    offered = connection.headers.get("sec-websocket-protocol", "")
    return SUBPROTOCOL if TOKEN_SUBPROTOCOL in offered else None


def _matches(token: str, candidate: str) -> bool:
    return hmac.compare_digest(token.encode(), candidate.encode())


def viewer_of(connection: HTTPConnection, settings: Settings) -> str | None:
    """Whose metrics a /metrics request sees: its tenant's, or (None) every tenant's for the operator token."""
    operator = settings.operator_token
    if operator and settings.tokens and _matches(presented(connection), operator):
        return None
    return tenant_of(connection, settings.tokens)


def tenant_of(connection: HTTPConnection, tokens: dict[str, str]) -> str:
    if not tokens:
        return DEFAULT_TENANT
    presented_token = presented(connection)
    tenant = None
    for token, name in tokens.items():  # every token is compared, so the time does not tell which matched
        if _matches(presented_token, token):
            tenant = name
    if tenant is None:
        raise Unauthorized("a valid token is required: send 'Authorization: Bearer <token>'")
    return tenant


def unauthorized_response(error: Unauthorized) -> JSONResponse:
    body = {"error": AclError(ACL_ERROR_INVALID_PARAM, str(error)).to_dict()}
    return JSONResponse(body, status_code=401, headers={"WWW-Authenticate": "Bearer"})


class RequireToken:
    """ASGI middleware: an HTTP request under /v1 without a valid token gets 401 with the JSON error body before
    it reaches a route (the WebSocket endpoint answers its own handshake the same way, see `ws.refuse`)."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app, self.settings = app, settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tokens = self.settings.tokens
        if tokens and scope["type"] == "http" and scope["path"].startswith(PROTECTED):
            connection = HTTPConnection(scope)
            try:
                if scope["path"] == "/metrics":
                    viewer_of(connection, self.settings)
                else:
                    tenant_of(connection, tokens)
            except Unauthorized as error:
                await unauthorized_response(error)(scope, receive, send)
                return
        await self.app(scope, receive, send)


_SECRET_IN_URL = re.compile(r"(?i)([?&](?:token|access_token)=)[^&\s\"']*")


def redact(text: str) -> str:
    """`text` with the value of every `token=` query parameter replaced by `***`."""
    return _SECRET_IN_URL.sub(r"\1***", text)


class RedactTokens(logging.Filter):
    """Keeps secrets out of the logs: uvicorn logs each request's path with its query string."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        return True


def redact_server_logs() -> None:
    """Install `RedactTokens` on uvicorn's access and error loggers (once)."""
    for name in ("uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactTokens) for f in logger.filters):
            logger.addFilter(RedactTokens())
