"""What the device did and holds, for people and tools: the trace (`GET /v1/trace`, Chrome trace JSON that opens
in Perfetto or chrome://tracing) and model graphs (`GET /v1/models/{id}/graph`, Graphviz DOT or SVG).

A tenant sees the events and models of its own contexts only, the ended ones included (see history).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from fastapi import APIRouter, FastAPI, Request, Response
from starlette.requests import HTTPConnection

from proto.calltable import Address
from proto.errors import ACL_ERROR_RT_PARAM_INVALID
from server.api.auth import tenant_of
from server.api.errors import ERROR_RESPONSES, NotFound
from server.api.sessions import Registry
from server.npu.core.trace import chrome
from server.npu.model import graph as modelgraph
from server.npu.model.model import ModelRI


def _tenant(request: HTTPConnection) -> str:
    return tenant_of(request, request.app.state.settings.tokens)


def trace_payload(
    request: HTTPConnection, since: float, context: str | None = None, run: str | None = None
) -> dict[str, Any]:
    """The tenant's trace events that ended after `since` (seconds on the trace clock) -- of its live contexts and
    of its ended ones whose events the ring still holds, or of `context` only, or of the contexts labelled `run`
    -- and the clock now. `contexts`
    says whose events they are: each context's id, whether it has ended, and its number of events;
    `contextsInScope` how many of the tenant's contexts, live or ended, the question named (0: none is known)."""
    tracer = request.app.state.machine.tracer
    registry: Registry = request.app.state.registry
    tenant = _tenant(request)
    names = registry.history.owners(tenant)
    if context is not None:
        names = {owner: name for owner, name in names.items() if name.id == context}
    if run is not None:
        names = {owner: name for owner, name in names.items() if name.run == run}
    events = tracer.events(since, set(names))
    counts = Counter(names[id(e.where.owner)].id for e in events)
    live = {c.id for c in registry.contexts_of(tenant)}
    return {
        "now": tracer.clock(),
        "enabled": tracer.enabled,
        "traceEvents": chrome(events, tracer.epoch, lambda owner: names[id(owner)].id),
        "displayTimeUnit": "ms",
        "contexts": [{"id": c, "ended": c not in live, "events": n} for c, n in counts.items()],
        "contextsInScope": len(names),
    }


def install(app: FastAPI) -> None:
    router = APIRouter(prefix="/v1", tags=["views"], responses=ERROR_RESPONSES)

    @router.get("/trace")
    async def trace(
        request: Request, since: float = 0.0, context: str | None = None, run: str | None = None
    ) -> dict[str, Any]:
        """Chrome trace JSON of the tasks that ended after `since` (the `now` of an earlier answer: poll with it),
        of the tenant's contexts, live or ended (while the ring holds their events), or of `context` only, or of
        the contexts a run labelled `run` opened (`vnpu trace -- cmd`)."""
        return trace_payload(request, since, context, run)

    @router.get("/models/{model_id}/graph", response_class=Response)
    async def graph(request: Request, model_id: Address, format: Literal["dot", "svg"] = "svg") -> Response:
        """The model as Graphviz DOT text or as SVG (drawn by the daemon, no Graphviz needed)."""
        model = _model(request, model_id)
        if format == "dot":
            return Response(modelgraph.dot(model), media_type="text/vnd.graphviz")
        return Response(modelgraph.svg(model), media_type="image/svg+xml")

    app.include_router(router)


def _model(request: Request, model_id: Address) -> ModelRI:
    """A model of the tenant's live contexts, or one kept of its ended ones."""
    registry: Registry = request.app.state.registry
    tenant = _tenant(request)
    for context in registry.contexts_of(tenant):
        model = context.runtime.ctx.models.get(model_id)
        if model is not None:
            return model
    for ended in registry.history.ended_of(tenant):
        if model_id in ended.models:
            return ended.models[model_id].model
    raise NotFound(ACL_ERROR_RT_PARAM_INVALID, f"no model {model_id:#x} in your contexts")
