"""The OpenAPI document a curl user reads: every call described, enums named, the kernel description's schema,
and examples that validate against their schemas and that the daemon answers with an ACL code, never 422/500."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
import pytest

from client import acl
from proto.aclnn import DECLS, OPS, KernelDesc, OpDecl
from proto.aclnn.phase1 import get_workspace_size
from proto.aclnn.schema import example_args
from proto.calldocs import DOCS
from proto.callenums import ENUM_ARGS, FLAGS
from proto.calltable import CALLS
from proto.errors import ACL_ERROR_INVALID_PARAM, ERROR_NAMES

BODY = ("requestBody", "content", "application/json")


def body_of(operation: dict[str, Any]) -> dict[str, Any]:
    node: dict[str, Any] = operation
    for key in BODY:
        node = node[key]
    return node


@pytest.fixture
async def document(http: httpx.AsyncClient) -> dict[str, Any]:
    response = await http.get("/openapi.json")
    assert response.status_code == 200
    parsed: dict[str, Any] = response.json()
    return parsed


def operations(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The JSON-bodied POST operations: every call and every phase 1, by path."""
    return {
        path: item["post"]
        for path, item in document["paths"].items()
        if path.startswith(("/v1/call/", "/v1/aclnn/")) and "post" in item
    }


def example_args_host(decl: OpDecl) -> Any:
    return KernelDesc.from_wire({"op": decl.name, "args": example_args(decl), "workspace_size": 0}).args


def validator(document: dict[str, Any], schema: dict[str, Any]) -> Any:
    """A validator of `schema` inside the document (its #/components/... references resolve)."""
    return jsonschema_rs.validator_for({**schema, "components": document["components"]})


def test_every_call_has_one_line_of_doc() -> None:
    assert set(CALLS) - set(DOCS) == set(), "calls without a line in proto/calldocs.py"
    # a line for a call outside the table is for one the client answers itself (argument blocks, a binary's file)
    headers = " ".join(p.read_text() for p in (Path(acl.__file__).parent / "capi").glob("include/**/*.h"))
    strays = {name for name in set(DOCS) - set(CALLS) if not hasattr(acl, name) and f" {name}(" not in headers}
    assert strays == set(), "lines in proto/calldocs.py for calls neither the daemon nor the client has"
    for name, doc in DOCS.items():
        assert doc.strip() and "\n" not in doc and doc.endswith("."), name


async def test_every_operation_is_described(document: dict[str, Any]) -> None:
    """Every call has its operation; the ~1,200 operators' two phases are one operation each, by path parameter."""
    found = operations(document)
    assert set(found) == {f"/v1/call/{name}" for name in CALLS} | {"/v1/aclnn/{api}", "/v1/call/{api}"}
    for name, call in CALLS.items():
        description = found[f"/v1/call/{name}"]["description"]
        assert description.startswith(DOCS[name]) and (call.doc in description), name
    for path in ("/v1/aclnn/{api}", "/v1/call/{api}"):
        (parameter,) = found[path]["parameters"]
        assert parameter["name"] == "api" and parameter["in"] == "path" and "Phase" in found[path]["description"]
        assert len(parameter["schema"]["enum"]) == len(OPS) >= 1200
    assert document["paths"]["/v1/aclnn/{api}"]["get"]["summary"].startswith("aclnnXxx")


def enum_fields(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Every schema node of the document that is a model of a call or struct: (its title, field) -> schema."""
    fields: dict[tuple[str, str], dict[str, Any]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            title = node.get("title")
            if isinstance(title, str) and isinstance(node.get("properties"), dict):
                owner = title.removesuffix("Request").removesuffix("Result")
                for field, schema in node["properties"].items():
                    if field in ENUM_ARGS.get(owner, {}):
                        fields[owner, field] = schema
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document)
    return fields


async def test_enum_arguments_carry_their_c_names_and_values(document: dict[str, Any]) -> None:
    fields = enum_fields(document)
    assert set(fields) == {(owner, field) for owner, table in ENUM_ARGS.items() for field in table}
    for (owner, field), schema in fields.items():
        enum = ENUM_ARGS[owner][field]
        names, values = [m.name for m in enum], [int(m) for m in enum]
        assert schema["x-enum-varnames"] == names, (owner, field)
        assert f"{enum.__name__}" in schema["description"] and "=" in schema["description"], (owner, field)
        if "anyOf" not in schema:  # a result: an integer
            assert (schema.get("x-enum-values") if enum in FLAGS else schema.get("enum")) == values, (owner, field)
            continue
        integer, name = schema["anyOf"]  # a request: the value, or (REST) its C name
        assert integer["type"] == "integer" and name["type"] == "string", (owner, field)
        assert "or the name as a string" in schema["description"], (owner, field)
        if enum in FLAGS:  # members combine: the names and values are shown, not enforced
            assert schema["x-enum-values"] == values and "enum" not in integer, (owner, field)
            assert validator(document, name).is_valid(f"{names[1]} | {names[-1]}") and not validator(
                document, name
            ).is_valid(f"{names[1]} | NOPE"), (owner, field)
        else:
            assert integer["enum"] == values and name["enum"] == names, (owner, field)
    kind = fields["aclrtMemcpy", "kind"]
    assert "ACL_MEMCPY_HOST_TO_DEVICE=1" in kind["description"] and kind["anyOf"][0]["enum"][1] == 1
    assert fields["aclrtStreamQuery", "status"]["enum"] == [0, 1, 0xFFFF]  # results stay integers


async def test_the_kernel_description_has_a_schema(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    assert {"aclTensor", "aclScalar", "KernelDesc"} <= set(schemas)
    desc = validator(document, {"$ref": "#/components/schemas/KernelDesc"})
    launch = body_of(document["paths"]["/v1/call/{api}"]["post"])["schema"]
    one = validator(document, launch["properties"]["executor"])
    phase1 = validator(document, body_of(document["paths"]["/v1/aclnn/{api}"]["post"])["schema"])
    for decl in DECLS:
        _, executor = get_workspace_size(decl, example_args_host(decl))
        wire = executor.kernel.to_wire()
        assert desc.is_valid(wire) and one.is_valid(wire) and phase1.is_valid(wire["args"]), decl.name
        assert not desc.is_valid(wire | {"workspace_size": -1}) and not desc.is_valid(wire | {"extra": 1})
        assert not phase1.is_valid(wire["args"] | {"self": {"view_dims": "no"}})
    tensor = validator(document, {"$ref": "#/components/schemas/aclTensor"})
    good = example_args(OPS["Add"])["self"]
    assert tensor.is_valid(good) and tensor.is_valid(good | {"data_type": 0})
    assert not tensor.is_valid(good | {"data_type": "ACL_FLOT"}) and not tensor.is_valid({"view_dims": [2]})


async def test_every_request_has_an_example_that_validates(document: dict[str, Any]) -> None:
    for path, operation in operations(document).items():
        body = body_of(operation)
        assert "example" in body, path
        errors = [e.message for e in validator(document, body["schema"]).iter_errors(body["example"])]
        assert errors == [], (path, errors[:3])


async def session(http: httpx.AsyncClient) -> dict[str, str]:
    """A REST session of its own with ACL initialised and device 0 set."""
    sid = (await http.post("/v1/sessions")).json()["session"]
    headers = {"X-Vnpu-Session": sid}
    for call, args in (("aclInit", {"configPath": None}), ("aclrtSetDevice", {"deviceId": 0})):
        assert (await http.post(f"/v1/call/{call}", json=args, headers=headers)).status_code == 200
    return headers


async def test_each_example_is_answered_with_an_acl_code(http: httpx.AsyncClient, document: dict[str, Any]) -> None:
    """Pasted as it is, every example reaches the device: a result, or an ACL error with its code (the example's
    pointers and handles are not the session's own), never a 422 or a 500 from the example's shape."""
    answered: dict[str, int] = {}
    for path, operation in operations(document).items():
        if path.rsplit("/", 1)[1] in ("vnpuTakeReports", "vnpuTakeHostFuncs"):
            continue  # they wait `timeout` ms for a callback nobody launched: tests/*/test_callbacks*
        headers = await session(http)
        for parameter in operation.get("parameters", ()):
            path = path.replace(f"{{{parameter['name']}}}", parameter["example"])
        response = await http.post(path, json=body_of(operation)["example"], headers=headers)
        answered[path] = response.status_code
        assert response.status_code in (200, 400, 404), (path, response.status_code, response.text[:300])
        if response.status_code == 200:
            schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
            assert validator(document, schema).is_valid(response.json()), (path, response.text[:300])
        else:
            error = response.json()["error"]
            assert error["code"] in ERROR_NAMES and error["message"], (path, error)
            # the example's own values are valid: what it is refused for is a pointer or handle not yet yours
            assert error["code"] != ACL_ERROR_INVALID_PARAM, (path, error)
        await http.delete(f"/v1/sessions/{headers['X-Vnpu-Session']}")
    # a sample of what the examples do: phase 1 runs, and the calls that take no object of yours succeed
    assert answered["/v1/aclnn/aclnnAddGetWorkspaceSize"] == 200
    for decl in DECLS:  # each first operator's example arguments pass its phase 1 over REST
        response = await http.post(f"/v1/aclnn/{decl.ws_name}", json=example_args(decl))
        assert response.status_code == 200, (decl.name, response.text[:300])
    for call in ("aclrtMalloc", "aclrtCreateStream", "aclrtCreateEventWithFlag", "aclrtMemAllocManaged"):
        assert answered[f"/v1/call/{call}"] == 200, call
