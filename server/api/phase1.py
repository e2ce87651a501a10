"""Phase 1 of the aclnn two-phase API over REST, for curl users: `POST /v1/aclnn/aclnnAddGetWorkspaceSize`.

The body is the operator's arguments by C name in the kernel description's wire form (tensors as
`{"view_dims", "data_type", "strides", "offset", "format", "storage_dims", "data"}`, scalars as
`{"value", "data_type"}`); the answer is C's two out-parameters: `workspaceSize` and `executor`, the kernel
description to pass as `executor` to the phase-2 call (`POST /v1/call/aclnnAdd`). The checks, codes and messages
are the client's local phase 1 (`proto.aclnn`): the same declaration runs. Nothing is allocated or remembered.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, FastAPI, Request

from proto.aclnn import OPS, KernelDesc, OpDecl
from proto.aclnn.phase1 import get_workspace_size
from proto.aclnn.schema import SIZE, args_schema, example_args, kernel_schema
from proto.calldocs import DOCS
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.api.errors import ERROR_RESPONSES
from server.api.rest import json_body_of


def _route(decl: OpDecl) -> Any:
    async def handle(request: Request) -> dict[str, Any]:
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

    handle.__name__ = decl.ws_name
    return handle


def _answer(decl: OpDecl) -> dict[str, Any]:
    fields = {"workspaceSize": SIZE, "executor": kernel_schema(decl)}
    return {"type": "object", "properties": fields, "required": list(fields), "additionalProperties": False}


def install(app: FastAPI) -> None:
    router = APIRouter(prefix="/v1/aclnn", tags=["aclnn phase 1"], responses=ERROR_RESPONSES)
    for decl in OPS.values():
        router.add_api_route(
            f"/{decl.ws_name}",
            _route(decl),
            methods=["POST"],
            name=decl.ws_name,
            summary=decl.ws_name,
            description=f"Phase 1 of {decl.c_name}({', '.join(decl.arg_names)}): {DOCS[decl.c_name]} Answers the "
            f"workspace size and the executor (a kernel description) to pass to `POST /v1/call/{decl.c_name}`.",
            openapi_extra={
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": args_schema(decl), "example": example_args(decl)}},
                },
                "responses": {"200": {"content": {"application/json": {"schema": _answer(decl)}}}},
            },
        )
    app.include_router(router)
