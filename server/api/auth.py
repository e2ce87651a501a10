"""Bearer tokens: with tokens configured every route but /healthz needs `Authorization: Bearer <token>` (or, for
a WebSocket or a browser, `?token=`); each token names a tenant. Compared in constant time."""

from __future__ import annotations

import hmac

from starlette.requests import HTTPConnection

DEFAULT_TENANT = "default"


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
