"""How errors leave the daemon over HTTP: one JSON body, `{"error": {code, name, message, api}}`, for all.

Caller errors get 4xx (an ACL error 400, a malformed request 422, an unknown function or resource 404, a missing
token 401, a body too large 413); a vnpu fault gets 500 with ACL_ERROR_INTERNAL_ERROR, a call cut off by a
shutdown 503. The codes inside are the exact ACL codes, so the client rebuilds the same AclError.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from proto.calltable import CALLS
from proto.errors import (
    ACL_ERROR_API_NOT_SUPPORT,
    ACL_ERROR_INTERNAL_ERROR,
    ACL_ERROR_INVALID_PARAM,
    AclError,
)
from server.api.auth import RequireToken, Unauthorized, unauthorized_response

if TYPE_CHECKING:
    from server.api.settings import Settings

log = logging.getLogger("vnpu.api")


class FailedTask(BaseModel):
    """The exception information of a failed task, when a synchronize reports one."""

    taskId: int  # noqa: N815
    streamId: int  # noqa: N815
    threadId: int  # noqa: N815
    deviceId: int  # noqa: N815
    errorCode: int  # noqa: N815


class ErrorDetail(BaseModel):
    code: int
    name: str
    message: str
    api: str
    task: FailedTask | None = None


class ErrorBody(BaseModel):
    """Every error the daemon answers over HTTP."""

    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in (
        (400, "the ACL call failed: its exact ACL error code"),
        (401, "a token is required"),
        (404, "no such function or resource"),
        (413, "the body is over the limit"),
        (422, "the arguments do not fit the call's request model"),
        (500, "a vnpu fault"),
        (503, "the daemon is shutting down"),
    )
}


class TooLarge(Exception):
    pass


class MalformedCall(AclError):
    """Arguments that do not fit the call's request model (wrong type, missing, out of range): 422."""

    def __init__(self, message: str, api: str = "") -> None:
        super().__init__(ACL_ERROR_INVALID_PARAM, message, api)


class NotFound(AclError):
    """A resource view (a device, a model) that does not exist -- or is another tenant's, which looks the same: 404."""


def error_response(status: int, error: AclError, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": error.to_dict()}, status_code=status, headers=headers)


def status_of(error: AclError) -> int:
    if error.code == ACL_ERROR_API_NOT_SUPPORT or isinstance(error, NotFound):
        return 404
    if isinstance(error, MalformedCall):
        return 422
    return 400


class AnswerCutOffCalls:
    """ASGI middleware: a REST call still running when the graceful part of a shutdown ends (a synchronize on a
    stream that waits forever) is cancelled by the server; its client then gets a 503 with the JSON error body
    instead of the server's bare text 500. The cancellation goes on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except asyncio.CancelledError:
            if not started:
                cut = AclError(ACL_ERROR_INTERNAL_ERROR, "the daemon is shutting down: the call was cut off")
                await error_response(503, cut)(scope, receive, send)
            raise


def route_hint(request: Request, error: HTTPException) -> str:
    """What to send instead, for a request no route takes (starlette's bare "Not Found" / "Method Not Allowed")."""
    method, path = request.method, request.url.path[:200]
    if error.status_code == 405:
        allowed = (error.headers or {}).get("Allow", "")
        return f"{method} is not allowed on {path}: use {allowed or 'another method'} (the routes are on /docs)"
    if error.status_code != 404 or error.detail != "Not Found":
        return ""  # a route's own 404 names what is missing
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if name in CALLS:
        return f"no route {method} {path}: an ACL call is POST /v1/call/{name} (the routes are on /docs)"
    return f"no route {method} {path}: the routes are on /docs, the calls at POST /v1/call/{{name}}"


def install(app: FastAPI, settings: Settings) -> None:
    app.add_middleware(AnswerCutOffCalls)
    app.add_middleware(RequireToken, settings=settings)

    @app.exception_handler(AclError)
    async def acl_error(request: Request, error: AclError) -> JSONResponse:
        return error_response(status_of(error), error)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        details = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:5])
        return error_response(422, AclError(ACL_ERROR_INVALID_PARAM, details, request.url.path))

    @app.exception_handler(Unauthorized)
    async def unauthorized(request: Request, error: Unauthorized) -> JSONResponse:
        return unauthorized_response(error)

    @app.exception_handler(TooLarge)
    async def too_large(request: Request, error: TooLarge) -> JSONResponse:
        return error_response(413, AclError(ACL_ERROR_INVALID_PARAM, str(error)))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        code = ACL_ERROR_API_NOT_SUPPORT if error.status_code in (404, 405) else ACL_ERROR_INVALID_PARAM
        message = route_hint(request, error) or str(error.detail)
        return error_response(error.status_code, AclError(code, message), dict(error.headers or {}))

    @app.exception_handler(Exception)
    async def fault(request: Request, error: Exception) -> JSONResponse:
        log.exception("vnpu fault while serving %s", request.url.path)
        return error_response(500, AclError(ACL_ERROR_INTERNAL_ERROR, f"vnpu internal error: {error!r:.200}"))
