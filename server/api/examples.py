"""A request example for every call, generated from its annotated request schema: what `/docs` fills in.

Values are realistic rather than minimal: device 0, a 4 KiB size, pointers and handles in the form vnpu prints
them (device 0's first address, the first handle), the default stream (0) where a call takes it, the enum member
a program would pass, by its C name (one `PREFERRED` names, else the first non-negative one), the flags and
NULLs a call demands (`CALL_VALUES`, `NULLS`), a phase-2 launch with the executor its operator's example phase
1 gives (`launch_example`). A pasted example reaches the device, which answers it: a result, or that this
pointer or handle is not yours yet.
"""

from __future__ import annotations

import base64
from typing import Any, Final

from proto import constants as c
from proto.aclnn import OPS
from proto.aclnn.kernel import KernelDesc
from proto.aclnn.phase1 import get_workspace_size
from proto.aclnn.schema import example_args
from proto.addresses import DEVICE_BASE
from proto.calltable import Call

POINTER: Final = f"{DEVICE_BASE:#x}"
HANDLE: Final = "0x1000"
BYTES: Final = base64.b64encode(bytes(range(64))).decode()  # 64 bytes: the examples' count
# values by C parameter name where the type's own example would not be a realistic one
NAMED: Final[dict[str, Any]] = {
    "size": 4096,
    "count": 64,
    "destMax": 64,
    "maxCount": 64,
    "outputSize": 64,
    "timeout": 1000,
    "len": 64,
    "maxLen": 64,
    "alignment": 0,
    "peerDeviceId": 1,
    "value": 0,
    "configPath": None,
    "name": "my-model",
    "path": "model.json",
    "pid": [1234],
    "key": "vnpu-ipc-1",
    "src": BYTES,  # pageable host memory, where it is not a pointer
    "numBlocks": 8,
    "kernelName": "add_custom",  # the CANN samples' first kernel
    "numStreams": 8,
    "numTasks": 8,
    "streams": True,
    "tasks": True,
}
# streams that must be one's own, not the default stream (0): a handle, as for every other object
_OWN_STREAMS: Final = {
    "aclrtDestroyStream": ("stream",),
    "aclrtDestroyStreamForce": ("stream",),
    "aclmdlRICaptureBegin": ("stream",),
    "aclmdlRICaptureTaskUpdateBegin": ("stream",),
    "aclmdlRICaptureToModelRIBegin": ("stream",),
    "aclmdlRIAddCondTask": ("stream",),
    "aclrtActiveStream": ("activeStream", "stream"),
    "aclrtSwitchStream": ("trueStream", "stream"),
    "aclrtSetLabel": ("stream",),
    "aclrtSwitchLabelByIndex": ("stream",),
}
# values by (call, parameter) where the call allows less than the parameter's type (a flag of its own)
CALL_VALUES: Final[dict[tuple[str, str], Any]] = {
    ("aclrtHostRegisterV2", "flag"): c.ACL_HOST_REG_MAPPED,
    ("aclrtMemAllocManaged", "flag"): c.ACL_RT_MEM_ATTACH_GLOBAL,
    ("aclrtCreateEventWithFlag", "flag"): c.ACL_EVENT_SYNC,
    ("aclrtCreateEventExWithFlag", "flag"): c.ACL_EVENT_SYNC,
    ("acltdtCreateChannelWithCapacity", "capacity"): 2,
    ("acltdtCreateQueue", "depth"): 4,
    ("acltdtDequeueData", "dataSize"): 64,
    ("acltdtCreateChannel", "name"): "legacy-channel",
    ("aclrtMemImportFromShareableHandleV2", "shareableHandle"): base64.b64encode(bytes(range(8))).decode(),
    **{(name, arg): HANDLE for name, args in _OWN_STREAMS.items() for arg in args},
}
NULLS: Final = frozenset({"reserve", "expectPtr"})  # pointers the runtime wants NULL (0: the document drops null)
PREFERRED: Final = frozenset({"ACL_MEMCPY_HOST_TO_DEVICE", "ACL_HBM_MEM_HUGE", "ACL_MEM_LOCATION_TYPE_DEVICE"})
WORKSPACE: Final = f"{DEVICE_BASE + 0x10000:#x}"  # after the example tensors


def value_of(schema: dict[str, Any], name: str = "") -> Any:
    """An example of one schema node (`name`: the C parameter it is, if any)."""
    if name in NULLS:
        return 0
    options = schema.get("anyOf")
    if options is not None and _is_address(options):
        return _address(schema)
    if name in NAMED:
        named = NAMED[name]  # within the field's range (a size of a few bytes is a uint8_t)
        return min(named, schema["maximum"]) if isinstance(named, int) and "maximum" in schema else named
    names = schema.get("x-enum-varnames")
    if names is not None:  # the preferred member, else the first that is not a negative "undefined"
        values = schema.get("enum") or schema.get("x-enum-values") or options[0]["enum"]  # type: ignore[index]
        ranked = sorted(zip(names, values, strict=True), key=lambda m: (m[0] not in PREFERRED, m[1] < 0))
        return ranked[0][0 if options is not None else 1]  # by its name where REST takes one (a request)
    if options is not None:
        return value_of(options[0], name)
    kind = schema.get("type")
    if kind == "object":
        return {field: value_of(sub, field) for field, sub in schema.get("properties", {}).items()}
    if kind == "array":
        item = value_of(schema.get("items", {}))
        return [item] * max(1, schema.get("minItems", 1))
    if kind == "string":
        return BYTES if "format" in schema else "text"
    if kind == "integer":
        return max(0, schema.get("minimum", 0))
    return {"number": 1.0, "boolean": True}.get(str(kind))


def _is_address(options: list[dict[str, Any]]) -> bool:
    return any(option.get("pattern", "").startswith("^0[xX]") for option in options)


def _address(schema: dict[str, Any]) -> str | int:
    """A pointer or handle as vnpu prints it; a stream is the default one (0: the document drops nulls)."""
    said = schema.get("description", "")
    return 0 if said.startswith("a stream") else HANDLE if said.startswith("a handle") else POINTER


def example(call: Call, schema: dict[str, Any]) -> dict[str, Any]:
    """The example body of `call` (its request schema annotated by `server.api.openapi`)."""
    body: dict[str, Any] = value_of(schema) if schema.get("properties") else {}
    body |= {arg: value for (name, arg), value in CALL_VALUES.items() if name == call.name}
    return body


def launch_example(op: str = "Add") -> dict[str, Any]:
    """The example body of an operator's phase 2: the executor its example phase 1 gives."""
    decl = OPS[op]
    kernel = KernelDesc.from_wire({"op": decl.name, "args": example_args(decl), "workspace_size": 0})
    size, executor = get_workspace_size(decl, kernel.args)
    return {"workspace": WORKSPACE if size else 0, "workspaceSize": size, "executor": executor.kernel.to_wire()} | {
        "stream": 0
    }
