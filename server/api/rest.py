"""REST: `POST /v1/call/{C name}` for every function of the call table (JSON in, JSON out), raw-body routes for
bulk memory, and sessions.

A call names its session with the `X-Vnpu-Session` header (from `POST /v1/sessions`); without one it runs in
the tenant's default REST session, so plain curl commands share one context. `X-Vnpu-Thread` names the calling
thread (default "main"), which the capture modes and the current device depend on.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import JSONResponse

from proto.calltable import CALLS, LAUNCH, Address, Call
from proto.constants import aclrtMemcpyKind
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_UNINITIALIZE, AclError
from server.api import dispatch, enumargs, examples, openapi
from server.api.auth import tenant_of
from server.api.budget import check_json
from server.api.errors import ERROR_RESPONSES, MalformedCall, TooLarge
from server.api.sessions import Registry, Session, SessionRequest

SESSION_SCHEMA = SessionRequest.model_json_schema()
RAW = {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}


def registry(request: Request) -> Registry:
    reg: Registry = request.app.state.registry
    return reg


def session_of(request: Request) -> Session:
    tenant = tenant_of(request, request.app.state.settings.tokens)
    return registry(request).rest_session(tenant, request.headers.get("x-vnpu-session"))


async def body_of(request: Request) -> bytes:
    limit: int = request.app.state.settings.max_body
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise TooLarge(f"the request body of {declared} bytes is over the limit of {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise TooLarge(f"the request body is over the limit of {limit} bytes")
    return bytes(body)


async def json_body_of(request: Request) -> bytes:
    """The body of a call: JSON, within the element budget."""
    body = await body_of(request)
    check_json(body)
    return body


async def run(request: Request, call: Call, args: dict[str, Any] | bytes) -> dict[str, Any]:
    session = session_of(request)
    limit: int = request.app.state.settings.max_body
    if isinstance(args, bytes):
        try:
            args = enumargs.resolve(call, args)  # C enum names, which only REST reads
        except MalformedCall as error:
            session.metrics.call(session.context.tenant, call.name, error.code, 0.0)
            raise
    with session.calling():  # the session does not expire under the call
        try:
            return await dispatch.call(session, call.name, args, thread_of(request, call.name), limit)
        except AclError as error:
            if error.code != ACL_ERROR_UNINITIALIZE or session.replaces is None:
                raise
            # "call aclInit" in a default session that replaced an expired one: say what happened to the other
            raise AclError(error.code, f"{error.message}: {session.replaces}", error.api) from None


def thread_of(request: Request, api: str = "") -> Hashable:
    """The calling client thread: `x-vnpu-thread: <pid>-<tid>` (what the client sends) names a process and its
    thread, as the WebSocket's [pid, tid] does; any other value is one thread's name; none is "main". Digits that
    do not make two 64-bit numbers (too many, or not ASCII: "²") are the caller's mistake (100000)."""
    named = request.headers.get("x-vnpu-thread", "main")
    pid, dash, tid = named.partition("-")
    if not (dash and pid.isdigit() and tid.isdigit()):
        return named
    if not (_ID.fullmatch(pid) and _ID.fullmatch(tid) and int(pid) < 1 << 64 and int(tid) < 1 << 64):
        raise AclError(
            ACL_ERROR_INVALID_PARAM,
            f"X-Vnpu-Thread {named[:40]!r}{'...' if len(named) > 40 else ''} is not <pid>-<tid>: two numbers of "
            "0 to 2**64-1 in ASCII digits (or give the thread a name that is not two numbers)",
            api,
        )
    return (int(pid), int(tid))


_ID = re.compile(r"[0-9]{1,20}")


def _route(call: Call) -> Any:
    async def handle(request: Request) -> JSONResponse:
        result = await run(request, call, await json_body_of(request) or b"{}")
        return JSONResponse(call.result.model_validate(result).model_dump(mode="json"))

    handle.__name__ = call.name
    return handle


def install(app: FastAPI) -> None:
    router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)
    for call in CALLS.values():
        schema = openapi.request_schema(call)
        router.add_api_route(
            f"/call/{call.name}",
            _route(call),
            methods=["POST"],
            name=call.name,
            summary=call.name,
            description=openapi.describe(call),
            response_model=call.result,
            responses=ERROR_RESPONSES,
            tags=["calls"],
            openapi_extra={
                "requestBody": {
                    "required": bool(call.arg_names),
                    "content": {"application/json": {"schema": schema, "example": examples.example(call, schema)}},
                }
            },
        )

    launch = openapi.launch_schema()

    @router.post(
        "/call/{api}",
        name="aclnnXxx",
        summary="aclnnXxx: phase 2 of any operator",
        description=openapi.LAUNCH_DESCRIPTION,
        tags=["calls"],
        response_model=LAUNCH.result,
        openapi_extra={
            "parameters": [openapi.launch_parameter()],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": launch, "example": examples.launch_example()}},
            },
        },
    )
    async def operator_launch(request: Request) -> JSONResponse:
        """Phase 2 of every declared operator (one launch pattern); any other name not in the table is a 404."""
        found = dispatch.lookup(request.path_params["api"])  # raises: not in the table
        result = await run(request, found, await json_body_of(request) or b"{}")
        return JSONResponse(found.result.model_validate(result).model_dump(mode="json"))

    @router.post(
        "/sessions",
        tags=["sessions"],
        openapi_extra={
            "requestBody": {"content": {"application/json": {"schema": SessionRequest.model_json_schema()}}}
        },
    )
    async def open_session(request: Request) -> dict[str, str]:
        """A new session, in a new context or (body `{"context": id}`) joining one of yours; `{"run": label}` labels
        a new context (`vnpu trace -- cmd` records the contexts of its run)."""
        opening = SessionRequest.parse(await json_body_of(request))
        tenant = tenant_of(request, request.app.state.settings.tokens)
        session = registry(request).open(tenant, "rest", opening.context, opening.run)
        await registry(request).announce(session)  # a join: the context's other clients hear of it first
        return {"session": session.id, "context": session.context.id}

    @router.delete("/sessions/{session_id}", tags=["sessions"])
    async def close_session(request: Request, session_id: str) -> Response:
        tenant = tenant_of(request, request.app.state.settings.tokens)
        registry(request).close(registry(request).rest_session(tenant, session_id))
        return Response(status_code=204)

    @router.put("/memory/{ptr}", tags=["memory"], status_code=204, openapi_extra={"requestBody": {"content": RAW}})
    async def write_memory(request: Request, ptr: Address) -> Response:
        """aclrtMemcpy from the raw body (pageable host memory) to device or pinned memory at `ptr`."""
        data = await body_of(request)
        args = {"dst": ptr, "destMax": len(data), "src": data, "count": len(data), "kind": _H2D}
        await run(request, CALLS["aclrtMemcpy"], args)
        return Response(status_code=204)

    @router.get("/memory/{ptr}", tags=["memory"], responses={200: {"content": RAW}})
    async def read_memory(request: Request, ptr: Address, count: int) -> Response:
        """aclrtMemcpy of `count` bytes at `ptr` into the raw response body."""
        args = {"dst": None, "destMax": count, "src": ptr, "count": count, "kind": _D2H}
        result = await run(request, CALLS["aclrtMemcpy"], args)
        return Response(result["data"], media_type="application/octet-stream")

    @router.put("/host/{ptr}", tags=["memory"], status_code=204, openapi_extra={"requestBody": {"content": RAW}})
    async def write_host(request: Request, ptr: Address) -> Response:
        """vnpuHostWrite: store the raw body into the aclrtMallocHost buffer at `ptr`."""
        await run(request, CALLS["vnpuHostWrite"], {"hostPtr": ptr, "data": await body_of(request)})
        return Response(status_code=204)

    @router.get("/host/{ptr}", tags=["memory"], responses={200: {"content": RAW}})
    async def read_host(request: Request, ptr: Address, count: int) -> Response:
        result = await run(request, CALLS["vnpuHostRead"], {"hostPtr": ptr, "count": count})
        return Response(result["data"], media_type="application/octet-stream")

    app.include_router(router)


_H2D = int(aclrtMemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE)
_D2H = int(aclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST)
