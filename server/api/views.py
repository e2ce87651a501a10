"""Read-only views for people: /healthz, /v1/devices, /v1/devices/{id}, /v1/models/{id}.

A tenant sees the devices' totals and, in detail, only the streams, events and models of its own contexts.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, FastAPI, Request

from proto.calltable import Address
from proto.errors import ACL_ERROR_RT_INVALID_DEVICEID, ACL_ERROR_RT_PARAM_INVALID
from server.api.auth import tenant_of
from server.api.errors import ERROR_RESPONSES, NotFound
from server.api.history import debug_text
from server.api.sessions import ContextEntry, Registry
from server.npu import Machine
from server.npu.device import Device
from server.npu.model.model import ModelRI


def _state(request: Request) -> tuple[Machine, Registry, list[ContextEntry]]:
    registry: Registry = request.app.state.registry
    tenant = tenant_of(request, request.app.state.settings.tokens)
    return request.app.state.machine, registry, registry.contexts_of(tenant)


def _device_summary(device: Device) -> dict[str, Any]:
    arena = device.arena
    return {
        "id": device.index,
        "memory": {"total": arena.capacity, "used": arena.used_bytes, "free": arena.free_bytes},
        "streams": {"used": device.streams.used, "max": device.streams.maximum},
        "events": {"used": device.events.used, "max": device.events.maximum},
        "models": {"used": device.models.used, "max": device.models.maximum},
    }


def install(app: FastAPI) -> None:
    @app.get("/healthz", tags=["views"])
    async def healthz(request: Request) -> dict[str, Any]:
        return {"status": "ok", "devices": len(request.app.state.machine.devices)}

    router = APIRouter(prefix="/v1", tags=["views"], responses=ERROR_RESPONSES)

    @router.get("/devices")
    async def devices(request: Request) -> list[dict[str, Any]]:
        machine, _, _ = _state(request)
        return [_device_summary(d) for d in machine.devices]

    @router.get("/devices/{device_id}")
    async def device(request: Request, device_id: int) -> dict[str, Any]:
        machine, _, contexts = _state(request)
        if not 0 <= device_id < len(machine.devices):
            raise NotFound(ACL_ERROR_RT_INVALID_DEVICEID, f"device {device_id} does not exist")
        dev = machine.devices[device_id]
        view = _device_summary(dev)
        view["contexts"] = [
            {
                "id": c.id,
                "sessions": len(c.sessions),
                "memory": c.runtime.ctx.memory.used,  # device + pinned bytes it holds, all devices together
                "age": round(time.monotonic() - c.opened, 1),  # seconds since it was made
                "streams": [
                    {
                        "handle": s.handle,
                        "default": s.default,
                        "queued": s.queued,
                        "running": s.running.describe() if s.running else None,
                        "capturing": s in c.runtime.ctx.capturing,
                    }
                    for s in [*c.runtime.ctx.default_streams.values(), *c.runtime.ctx.streams.values()]
                    if s.device is dev
                ],
                "events": [
                    {"handle": e.handle, "api": e.api, "flags": e.flags, "flag": e.flag}
                    for e in c.runtime.ctx.events.values()
                    if e.device is dev
                ],
                "models": [
                    {
                        "handle": m.handle,
                        "name": m.name,
                        "id": m.ident,
                        "kind": m.kind.value,
                        "state": m.state,
                        "executions": m.executions,
                    }
                    for m in c.runtime.ctx.models.values()
                    if m.device is dev
                ],
            }
            for c in contexts
        ]
        return view

    @router.get("/models/{model_id}")
    async def model(request: Request, model_id: Address) -> dict[str, Any]:
        """A model of the tenant's contexts, or of one of its recently ended ones (`ended`: when it was reclaimed)."""
        _, registry, contexts = _state(request)
        for c in contexts:
            found = c.runtime.ctx.models.get(model_id)
            if found is not None:
                return _model_view(found, c.id, debug_text(c.runtime, model_id))
        for ended in registry.history.ended_of(tenant_of(request, request.app.state.settings.tokens)):
            kept = ended.models.get(model_id)
            if kept is not None:
                return _model_view(kept.model, ended.name.id, kept.debug, ended.ended)
        raise NotFound(ACL_ERROR_RT_PARAM_INVALID, f"no model {model_id:#x} in your contexts")

    app.include_router(router)


def _model_view(model: ModelRI, context_id: str, debug: str, ended: float | None = None) -> dict[str, Any]:
    return {
        "handle": model.handle,
        "context": context_id,
        "ended": ended,  # when its context was reclaimed (Unix time), None while it lives
        "device": model.device.index,
        "name": model.name,
        "id": model.ident,
        "kind": model.kind.value,
        "state": model.state,
        "executions": model.executions,
        "edits": list(model.edits),
        "groups": [
            {"handle": g.handle, "kernels": [k.describe() for k in g.kernels], "updates": g.updates_applied}
            for g in model.groups.values()
        ],
        "debug": debug.rstrip("\n"),
    }
