"""What the device did and holds, for people and tools: the trace (`GET /v1/trace`, Chrome trace JSON that opens
in Perfetto or chrome://tracing) and model graphs (`GET /v1/models/{id}/graph`, Graphviz DOT or SVG).

A tenant sees the events and models of its own contexts only.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, FastAPI, Request, Response
from starlette.requests import HTTPConnection

from proto.errors import ACL_ERROR_RT_PARAM_INVALID
from server.api.auth import tenant_of
from server.api.errors import ERROR_RESPONSES, NotFound
from server.api.sessions import ContextEntry, Registry
from server.npu import modelgraph
from server.npu.model import ModelRI
from server.npu.trace import chrome


def _contexts(request: HTTPConnection) -> list[ContextEntry]:
    registry: Registry = request.app.state.registry
    return registry.contexts_of(tenant_of(request, request.app.state.settings.tokens))


def trace_payload(request: HTTPConnection, since: float) -> dict[str, Any]:
    """The tenant's trace events that ended after `since` (seconds on the trace clock), and the clock now."""
    tracer = request.app.state.machine.tracer
    owners = {id(c.runtime) for c in _contexts(request)}
    events = tracer.events(since, owners)
    return {
        "now": tracer.clock(),
        "enabled": tracer.enabled,
        "traceEvents": chrome(events, tracer.epoch),
        "displayTimeUnit": "ms",
    }


def install(app: FastAPI) -> None:
    router = APIRouter(prefix="/v1", tags=["views"], responses=ERROR_RESPONSES)

    @router.get("/trace")
    async def trace(request: Request, since: float = 0.0) -> dict[str, Any]:
        """Chrome trace JSON of the tasks that ended after `since` (the `now` of an earlier answer: poll with it)."""
        return trace_payload(request, since)

    @router.get("/models/{model_id}/graph", response_class=Response)
    async def graph(request: Request, model_id: int, format: Literal["dot", "svg"] = "svg") -> Response:
        """The model as Graphviz DOT text or as SVG (drawn by the daemon, no Graphviz needed)."""
        model = _model(request, model_id)
        if format == "dot":
            return Response(modelgraph.dot(model), media_type="text/vnd.graphviz")
        return Response(modelgraph.svg(model), media_type="image/svg+xml")

    app.include_router(router)


def _model(request: Request, model_id: int) -> ModelRI:
    for context in _contexts(request):
        model = context.runtime.models.get(model_id)
        if model is not None:
            return model
    raise NotFound(ACL_ERROR_RT_PARAM_INVALID, f"no model {model_id:#x} in your contexts")
