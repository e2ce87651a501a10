"""What the OpenAPI document says beyond the routes: each call's one-line doc, the C enums behind integer
arguments, the kernel description's schema, and a request example for every call (`server.api.examples`).

The data lives in `proto` (`calldocs.DOCS`, `callenums.ENUM_ARGS`, `aclnn.schema`); this module only writes it
into the schemas: a schema node whose title is a call's request or result model, or a C struct, gets the enum
names of its integer fields.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Final

from fastapi import FastAPI

from proto.aclnn import OPS
from proto.aclnn.schema import COMPONENTS, REF, kernel_desc_schema
from proto.calldocs import DOCS
from proto.callenums import ENUM_ARGS, FLAGS
from proto.calltable import LAUNCH, Call

KERNEL_REF = {"$ref": f"{REF}KernelDesc"}
MSGPACK = {"type": "string", "description": "the kernel description msgpack-encoded (what the client sends), base64"}


def describe(call: Call) -> str:
    """The operation's description: what the C function does, then what vnpu adds (the call's own doc)."""
    return " ".join(part for part in (DOCS.get(call.name, ""), call.doc) if part)


def enum_field(field: dict[str, Any], enum: type[IntEnum], named: bool = False) -> dict[str, Any]:
    """An integer field of a C enum: its members' values and names (x-enum-varnames), and them in words.
    `named`: a request's field, which REST also takes as the member's C name (`server.api.enumargs`)."""
    members = ", ".join(f"{m.name}={int(m)}" for m in enum)
    combined = enum in FLAGS
    said = f"{enum.__name__}{', a combination of' if combined else ':'} {members}"
    if named:
        said += "; or the name as a string" + (" (names joined by |)" if combined else "")
    said = f"{field['description']} ({said})" if field.get("description") else said
    names, values = [m.name for m in enum], [int(m) for m in enum]
    annotated = field | {"description": said, "x-enum-varnames": names}
    # a combinable enum's values are not only its members: the names and values are shown, not enforced
    if combined:
        annotated["x-enum-values"] = values
    if not named:
        return annotated if combined else annotated | {"enum": values}
    integer = {k: v for k, v in field.items() if k not in ("title", "description")} | (
        {} if combined else {"enum": values}
    )
    one = "|".join(names)
    name = (
        {"type": "string", "pattern": f"^ *({one})( *[|] *({one}))* *$"}
        if combined
        else {"type": "string", "enum": names}
    )
    kept = {k: v for k, v in annotated.items() if k in ("title", "description", "default") or k.startswith("x-")}
    return kept | {"anyOf": [integer, name]}


def annotate(node: Any, named: bool = False) -> Any:
    """`node` with the enums of `ENUM_ARGS` written into every model of a call or struct it holds (in place);
    `named`: a request, whose enum fields take names too."""
    if isinstance(node, dict):
        title = node.get("title")
        owner = title.removesuffix("Request").removesuffix("Result") if isinstance(title, str) else None
        fields = node.get("properties")
        if owner in ENUM_ARGS and isinstance(fields, dict):
            for name, enum in ENUM_ARGS[owner].items():
                if name in fields:
                    fields[name] = enum_field(fields[name], enum, named)
        if title == "aclmdlRIKernelTaskParams" and isinstance(fields, dict):
            fields["kernel"] = {"anyOf": [KERNEL_REF, {"type": "null"}], "description": "the kernel description"}
        for value in node.values():
            annotate(value, named)
    elif isinstance(node, list):
        for value in node:
            annotate(value, named)
    return node


def inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """A request model's JSON schema with its nested models (a C struct argument) written in place: the body
    schema stands inside the OpenAPI document, where pydantic's `#/$defs/...` references would name nothing."""
    defs = schema.get("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                rest = {k: resolve(v) for k, v in node.items() if k != "$ref"}
                return {**resolve(defs[ref.removeprefix("#/$defs/")]), **rest}
            return {k: resolve(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


def request_schema(call: Call) -> dict[str, Any]:
    """A call's request schema, inlined and annotated."""
    schema: dict[str, Any] = annotate(inlined(call.request.model_json_schema()), named=True)
    return schema


LAUNCH_DESCRIPTION: Final = (
    "Phase 2 of the operator the path names (`aclnnAdd`, ...): one launch pattern for every declared operator, "
    "`aclnnXxx(workspace, workspaceSize, executor, stream)`, queueing the kernel its executor describes (what "
    "`POST /v1/aclnn/aclnnXxxGetWorkspaceSize` answered) on the stream. The daemon checks the description again."
)


def launch_schema() -> dict[str, Any]:
    """The request of every operator's phase 2: the executor is a kernel description (or its msgpack bytes)."""
    schema = request_schema(LAUNCH)
    executor = {"anyOf": [KERNEL_REF, MSGPACK], "description": "the executor phase 1 gave (a kernel description)"}
    schema["properties"]["executor"] = executor
    return schema


def launch_parameter() -> dict[str, Any]:
    names = [f"aclnn{name}" for name in OPS]
    schema = {"type": "string", "enum": names}
    return {"name": "api", "in": "path", "required": True, "description": "aclnn<Op>", "schema": schema} | {
        "example": "aclnnAdd"
    }


def install(app: FastAPI) -> None:
    """Post-process the generated document once: the kernel components, and enums in the result models."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = generate()
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            schemas.update(COMPONENTS | {"KernelDesc": kernel_desc_schema()})
            annotate(schemas)
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]
