"""Bearer tokens: with tokens configured every route but /healthz and the API's description (/openapi.json,
/docs) needs `Authorization: Bearer <token>` (or, for a WebSocket or a browser, `?token=`); each token names a
tenant. Compared in constant time.

The routes find their tenant with `tenant_of`; `RequireToken` also refuses, before routing, any /v1 or /metrics request
without a valid token -- so a route that forgets to ask, and even a path that does not exist, answers 401 rather
than telling an anonymous caller anything.
"""

from __future__ import annotations

import hmac

from fastapi.responses import JSONResponse
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from proto.errors import ACL_ERROR_INVALID_PARAM, AclError

DEFAULT_TENANT = "default"
PROTECTED = ("/v1/", "/metrics")  # with tokens, refused before routing without one


class Unauthorized(Exception):
    pass


def tenant_of(connection: HTTPConnection, tokens: dict[str, str]) -> str:
    if not tokens:
        return DEFAULT_TENANT
    header = connection.headers.get("authorization", "")
    presented = header[7:] if header.lower().startswith("bearer ") else connection.query_params.get("token", "")
    tenant = None
    for token, name in tokens.items():  # every token is compared, so the time does not tell which matched
        if hmac.compare_digest(presented.encode(), token.encode()):
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

    def __init__(self, app: ASGIApp, tokens: dict[str, str]) -> None:
        self.app, self.tokens = app, tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.tokens and scope["type"] == "http" and scope["path"].startswith(PROTECTED):
            try:
                tenant_of(HTTPConnection(scope), self.tokens)
            except Unauthorized as error:
                await unauthorized_response(error)(scope, receive, send)
                return
        await self.app(scope, receive, send)
