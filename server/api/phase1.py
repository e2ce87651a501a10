"""Phase 1 of the aclnn two-phase API over REST, for curl users: `POST /v1/aclnn/aclnnAddGetWorkspaceSize`, and what an
operator takes: `GET /v1/aclnn/aclnnAdd`.

One route serves every declared operator (CANN's ~1,200 and the user-declared ones): the operator is the path's
last part, looked up in the registry (`proto.aclnn.OPS`). The body is the operator's arguments by C name in the
kernel description's wire form (tensors as `{"view_dims", "data_type", "strides", "offset", "format",
"storage_dims", "data"}`, scalars as `{"value", "data_type"}`, lists as JSON lists; see `proto.aclnn.kernel`);
the answer is C's two out-parameters: `workspaceSize` and `executor`, the kernel description to pass as `executor`
to the phase-2 call (`POST /v1/call/aclnnAdd`). The checks, codes and messages are the client's local phase 1: the
same declaration runs. Nothing is allocated or remembered. An operator vnpu declares but does not implement
answers 561003 ("vnpu does not implement aclnnXxx yet") once its arguments pass their checks.
"""

from __future__ import annotations

import json
from typing import Any, Final

from fastapi import APIRouter, FastAPI, Request

from proto.aclnn import OPS, KernelDesc, OpDecl
from proto.aclnn.phase1 import get_workspace_size
from proto.aclnn.schema import ARGS_SCHEMA, REF, SIZE, args_schema, example_args
from proto.calldocs import DOCS
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.api.errors import ERROR_RESPONSES, NotFound
from server.api.rest import json_body_of

PHASE1: Final = "GetWorkspaceSize"
EXAMPLE: Final = "Add"  # the operator whose example the document shows


def decl_of(api: str, suffix: str = "") -> OpDecl:
    """The operator `api` names (`aclnn<Op>` + suffix); 404 naming the name for any other."""
    name = api[5 : len(api) - len(suffix)] if api.startswith("aclnn") and api.endswith(suffix) else ""
    decl = OPS.get(name) if name else None
    if decl is None:
        shown = api[:80]
        raise NotFound(
            ACLNN_ERR_PARAM_INVALID,
            f"{shown!r} is not aclnn<Op>{suffix} of an operator vnpu declares (GET /v1/aclnn/<aclnnOp> describes one)",
            shown,
        )
    return decl


def describe(decl: OpDecl) -> dict[str, Any]:
    """What an operator takes: its arguments in C order (name, kind, C type, optional), its tier, its schema."""
    return {
        "name": decl.c_name,
        "doc": DOCS.get(decl.c_name, ""),
        "tier": decl.tier,
        "kernel_kind": decl.kernel_kind,
        "args": [{"name": a.name, "kind": str(a.kind), "c_type": a.ctype, "optional": a.optional} for a in decl.args],
        "schema": args_schema(decl),
    }


_DESCRIPTION: Final = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "doc": {"type": "string"},
        "tier": {"type": "string", "enum": ["declared", "ruled", "implemented"]},
        "kernel_kind": {"type": "string", "enum": ["vector", "cube"]},
        "args": {"type": "array", "items": {"type": "object"}},
        "schema": {"type": "object"},
    },
    "required": ["name", "doc", "tier", "kernel_kind", "args", "schema"],
}


def _parameter(description: str, example: str, suffix: str) -> dict[str, Any]:
    names = [f"aclnn{name}{suffix}" for name in OPS]
    schema = {"type": "string", "enum": names}
    return {"name": "api", "in": "path", "required": True, "description": description, "schema": schema} | {
        "example": example
    }


def _answer() -> dict[str, Any]:
    fields = {"workspaceSize": SIZE, "executor": {"$ref": f"{REF}KernelDesc"}}
    return {"type": "object", "properties": fields, "required": list(fields), "additionalProperties": False}


def install(app: FastAPI) -> None:
    router = APIRouter(prefix="/v1/aclnn", tags=["aclnn"], responses=ERROR_RESPONSES)

    async def phase1(request: Request) -> dict[str, Any]:
        decl = decl_of(request.path_params["api"], PHASE1)
        body = await json_body_of(request)
        try:
            args = json.loads(body) if body else None
        except ValueError as error:
            raise AclError(ACLNN_ERR_PARAM_INVALID, f"the body is not JSON: {error}", decl.ws_name) from None
        # the wire form's decoder builds the host objects (and names a malformed field); phase 1 then checks them
        try:
            described = KernelDesc.from_wire({"op": decl.name, "args": args, "workspace_size": 0})
        except AclError as error:  # named after this call, not the phase-2 one the description is for
            raise AclError(error.code, error.message, decl.ws_name) from None
        size, executor = get_workspace_size(decl, described.args)
        return {"workspaceSize": size, "executor": executor.kernel.to_wire()}

    async def operator(request: Request) -> dict[str, Any]:
        return describe(decl_of(request.path_params["api"]))

    example = OPS[EXAMPLE]
    router.add_api_route(
        "/{api}",
        phase1,
        methods=["POST"],
        name="aclnnXxxGetWorkspaceSize",
        summary="aclnnXxxGetWorkspaceSize: phase 1 of any operator",
        description="Phase 1 of the operator the path names (`aclnnAddGetWorkspaceSize`, ...): the arguments by C "
        "name in the kernel description's wire form; answers the workspace size and the executor (a kernel "
        "description) to pass to `POST /v1/call/aclnnXxx`. Every public CANN operator is declared; one vnpu does "
        "not implement answers 561003 once its arguments pass. `GET /v1/aclnn/aclnnXxx` says what it takes.",
        openapi_extra={
            "parameters": [_parameter("aclnn<Op>GetWorkspaceSize", example.ws_name, PHASE1)],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": ARGS_SCHEMA, "example": example_args(example)}},
            },
            "responses": {"200": {"content": {"application/json": {"schema": _answer()}}}},
        },
    )
    router.add_api_route(
        "/{api}",
        operator,
        methods=["GET"],
        name="aclnnXxx",
        summary="aclnnXxx: what an operator takes",
        description="An operator's arguments in C order (name, kind, C type, whether it may be null), its tier "
        "(declared, ruled by its OpDef's dtypes, implemented) and the JSON schema of its phase-1 body.",
        openapi_extra={
            "parameters": [_parameter("aclnn<Op>", example.c_name, "")],
            "responses": {"200": {"content": {"application/json": {"schema": _DESCRIPTION}}}},
        },
    )
    app.include_router(router)
